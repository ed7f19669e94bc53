"""Where our rules-mode turn goes above bare LangGraph: the same turn with parts switched off.

Not part of ``make bench``: the switches patch the nodes for the variant's own turns only,
which no user can do, so the figures say what each part costs and nothing more. Rows, all
interleaved turn by turn in one process (``bench.sections.turn_section``):

- bare LangGraph and the skeleton (our state and steps, nodes doing nothing), as in the turn
  section of ``make bench``;
- ours on InMemorySaver, as shipped;
- ours without the trace callbacks;
- ours without the trace callbacks, without protocol messages in the state and without
  compaction: what is left is understanding, slot filling, the executor's checks, the reply
  and LangGraph's work on our state.

    uv run python bench/ablation.py [rounds]
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

import graph.builder as builder  # noqa: E402
import nodes.compact as compact  # noqa: E402
from bench.graphs import bare_graph, skeleton_graph, untraced  # noqa: E402
from bench.sections import turn_section  # noqa: E402
from config.settings import Settings  # noqa: E402
from storage.transcript import SQLiteTranscriptStore  # noqa: E402
from tests.helpers import open_database  # noqa: E402

LEAN = {"on": False}
"""Set only while a ``Lean`` variant's own turn runs."""


def _patch() -> None:
    step_call: Callable[..., Any] = builder._Step.__call__  # noqa: SLF001 - a bench switch
    compact_update = compact.compact_update

    def call(self: Any, state: Any, runtime: Any) -> Any:
        out = step_call(self, state, runtime)
        if LEAN["on"] and isinstance(out, dict):
            out.pop("protocol", None)
        return out

    def compacted(state: Any, update: Any, **options: Any) -> Any:
        return update if LEAN["on"] else compact_update(state, update, **options)

    builder._Step.__call__ = call  # type: ignore[method-assign]  # noqa: SLF001
    compact.compact_update = compacted


class Lean:
    """A graph whose turns run with protocol messages and compaction switched off."""

    def __init__(self, app: Any) -> None:
        """Wrap ``app``."""
        self.app = app

    def invoke(self, *args: Any, **kwargs: Any) -> Any:
        """Run one turn with the switches on."""
        LEAN["on"] = True
        try:
            return self.app.invoke(*args, **kwargs)
        finally:
            LEAN["on"] = False

    def get_state_history(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped graph's history (the turn section counts supersteps with it)."""
        return self.app.get_state_history(*args, **kwargs)


def main(rounds: int) -> None:
    """Print each row's wall time, its ratio to bare (median, min–max) and its CPU ratio."""
    _patch()
    work = Path(tempfile.mkdtemp())
    settings = Settings(data_dir=work)
    db = open_database(work / "business.db")
    transcript = SQLiteTranscriptStore(work / "transcript.db")
    apps = {
        "bare langgraph": bare_graph(db),
        "skeleton": skeleton_graph(masking=True),
        "ours, in-memory": builder.build_graph(
            checkpointer=InMemorySaver(),
            settings=settings,
            database_factory=lambda: db,
            transcript=transcript,
        ),
        "ours, no trace": untraced(settings, db, transcript),
        "ours, no trace, no protocol, no compaction": Lean(untraced(settings, db, transcript)),
    }
    out = turn_section(apps, rounds, 20, 10)
    for name, row in out.items():
        ratio = row["vs_bare"]
        print(
            f"{name:44s} {row['turn_ms']['median']:6.2f} ms  ×{ratio['median']:.2f}"
            f" ({ratio['min']:.2f}–{ratio['max']:.2f})  CPU ×{row['cpu_vs_bare']['median']:.2f}"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
