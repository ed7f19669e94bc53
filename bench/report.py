"""Print ``make bench``'s tables and draw its chart from the results."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def fmt(row: dict[str, float], digits: int = 2) -> str:
    """``median (min–max)``."""
    return f"{row['median']:.{digits}f} ({row['min']:.{digits}f}–{row['max']:.{digits}f})"


def print_table(results: dict[str, Any]) -> None:
    """Print the tables a reader of the README wants."""
    print("\n== turn: bare LangGraph vs ours (median of rounds, (min–max)) ==")
    print(
        f"{'variant':<30} {'turn ms':>22} {'× bare':>18} {'CPU × bare':>18} "
        f"{'× ours in-mem thrpt':>20} {'steps':>6} {'req/step':>8} {'RT/step':>8} "
        f"{'sys ms':>7} {'sleeps':>7}"
    )
    for name, row in results["turn"].items():
        rt = row.get("redis_round_trips_per_superstep")
        req = row.get("redis_requests_per_superstep")
        print(
            f"{name:<30} {fmt(row['turn_ms']):>22} {fmt(row['vs_bare']):>18} "
            f"{fmt(row['cpu_vs_bare']):>18} "
            f"{fmt(row['throughput_vs_ours_in_memory']):>20} {row['supersteps_per_turn']:>6.1f} "
            f"{(f'{req:.2f}' if req is not None else '-'):>8} "
            f"{(f'{rt:.2f}' if rt is not None else '-'):>8} "
            f"{row['kernel_cpu_ms_per_turn']:>7.2f} {row['voluntary_switches_per_turn']:>7.1f}"
        )
    print(
        "(req/step: Redis requests per superstep; RT/step: those the caller waited for, the"
        " writes' replies being read later;\n sys ms: the kernel's CPU per turn; sleeps: the"
        " threads' voluntary context switches)"
    )
    print("\n== async turn (ainvoke), same message: ms, × ours in-memory async ==")
    for name, row in results["async"].items():
        ratio = fmt(row["throughput_vs_ours_in_memory"])
        print(f"{name:<34} {fmt(row['turn_ms']):>22} {ratio:>20}")
    ex = results["executor"]
    print("\n== executor per call (µs) ==")
    print(
        f"direct handler {fmt(ex['direct_us'], 1)}; executor {fmt(ex['executor_us'], 1)}; "
        f"overhead {fmt(ex['overhead_us'], 1)}"
    )
    print("\n== history read, 50 checkpoints (ms) ==")
    for name, row in results["history"].items():
        print(f"{name:<30} {fmt(row['history_50_ms'])}")
    growth = results["growth"]
    print(f"\n== growth: one thread of {growth['turns']} turns on SQLite ==")
    print(f"{'turn':>5} {'ckpt bytes':>11} {'uncompressed':>13} {'turn ms':>9}")
    for turn, row in growth["points"].items():
        print(
            f"{turn:>5} {row['checkpoint_bytes']:>11} {row['uncompressed_bytes']:>13} "
            f"{row['turn_ms_median']:>9.1f}"
        )
    print(
        f"thread storage {growth['storage_bytes'] / 1e6:.2f} MB; turn ms late/early "
        f"{growth['late_vs_early']:.2f}×"
    )
    par = results["parallel"]
    print(
        f"\n== parallel tools: {par['calls']} × {par['call_ms']:.0f} ms → wall "
        f"{fmt(par['wall_ms'], 0)} ms (serial {par['serial_ms']:.0f} ms) =="
    )
    conc = results["concurrent"]
    print(
        f"\n== concurrent: {conc['threads']} threads × {conc['turns_each']} turns, async, "
        f"Redis: {conc['turns_per_s']:.1f} turns/s, p50 {conc['p50_ms']:.0f} ms, "
        f"p99 {conc['p99_ms']:.0f} ms =="
    )


def _bar_colour(name: str) -> str:
    """One colour per kind of variant: bare, skeletons, ours by saver."""
    for part, colour in (
        ("bare", "#888"),
        ("skeleton", "#7c7"),
        ("unix", "#e88"),
        ("Redis", "#c33"),
        ("SQLite", "#e92"),
        ("no trace", "#8bd"),
    ):
        if part in name:
            return colour
    return "#27a"


def draw(results: dict[str, Any], path: Path) -> None:
    """Two panels: turn time per variant with spread, and the growth of one thread."""
    import matplotlib  # noqa: PLC0415 - only the chart needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    names = list(results["turn"])
    medians = [results["turn"][n]["turn_ms"]["median"] for n in names]
    lows = [m - results["turn"][n]["turn_ms"]["min"] for n, m in zip(names, medians, strict=True)]
    highs = [results["turn"][n]["turn_ms"]["max"] - m for n, m in zip(names, medians, strict=True)]
    bars = left.bar(
        names,
        medians,
        yerr=[lows, highs],
        capsize=4,
        color=[_bar_colour(name) for name in names],
    )
    for bar, name in zip(bars, names, strict=True):
        ratio = results["turn"][name]["vs_bare"]["median"]
        left.annotate(
            f"{ratio:.2f}×",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=9,
            xytext=(0, 8),
            textcoords="offset points",
        )
    left.set_ylabel("median turn (ms), bars: min–max of rounds")
    left.set_title("one turn, same message; × bare LangGraph")
    left.tick_params(axis="x", labelsize=8)
    left.set_xticks(range(len(names)), names, rotation=25, ha="right")  # long names overlap
    growth = results["growth"]["points"]
    turns = [int(t) for t in growth]
    right.plot(
        turns,
        [growth[str(t)]["checkpoint_bytes"] / 1024 for t in turns],
        "o-",
        label="checkpoint KB (stored)",
    )
    right.plot(
        turns,
        [growth[str(t)]["uncompressed_bytes"] / 1024 for t in turns],
        "s--",
        label="checkpoint KB (uncompressed)",
    )
    right.set_xlabel("turn of one thread (SQLite)")
    right.set_ylabel("KB")
    twin = right.twinx()
    twin.plot(
        turns,
        [growth[str(t)]["turn_ms_median"] for t in turns],
        "^-",
        color="#a42",
        label="turn ms",
    )
    twin.set_ylabel("turn ms (median of 12 turns around)")
    twin.set_ylim(bottom=0)
    right.set_ylim(bottom=0)
    right.legend(loc="upper left", fontsize=8)
    twin.legend(loc="lower right", fontsize=8)
    right.set_title("bounded state along one thread")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
