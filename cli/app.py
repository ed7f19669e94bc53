"""The ``reach`` command: talk to the agent, or watch a scripted demo."""

from __future__ import annotations

import os
import shutil
import time
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer
from langgraph.types import Command
from rich.console import Console
from rich.table import Table

from cli.bench import bench_app
from cli.eval import eval_command
from cli.metrics import serve_metrics, stats
from cli.model import ModelError, model_app, print_doctor
from cli.model import serve as serve_local_model
from cli.render import show_update
from cli.token import token
from cli.tools_cmd import tools_app
from cli.trace import trace
from config.settings import Settings, get_settings
from graph import time_travel
from graph.builder import build_graph
from graph.checkpoint import make_checkpointer
from graph.run_lock import LockedGraph
from nodes.confirmation import read_decisions
from scenarios.weather.demo_server import start_demo_weather_server
from state import Context
from understanding.chat import parse_choice

app = typer.Typer(help="Agent-Reach: an agent that understands, asks, acts and recovers.")
console = Console()

DEMOS: dict[str, tuple[str, str, list[str]]] = {
    # name: (user, role, script)
    "delivery": (
        "u_10001",
        "customer",
        [
            "你好",
            "我的订单怎么还没到？",
            "OD-20240618-001",
            "帮我催一下单，订单号 OD-20240618-001",
            "where is order 202506001?",
            "订单 OD-20240618-002 送到了但是洒了，我要退款",
            "确认退款",
            "嗯……那个……",
            "订单号是 12345",
            "OD-20240619-003 到哪了？",
            "我要找人工",
        ],
    ),
    "flights": (
        "u_10001",
        "customer",
        [
            "帮我订一张去北京的机票",
            "6月20号从上海出发",
            "乘客张三，身份证110101199001011234",
            "身份证号是110101199001011237",
            "不对，是 6 月 21 号",
            "确认",
        ],
    ),
    "transfer": (
        "u_10001",
        "customer",
        [
            "帮我转500元给ACC-2001",
            "密码123456",
            "确认",
            "转 100 元给 ACC-2001，密码 111111",
            "我要转账 3000 元到 ACC-3001，支付密码 123456",
            "确认",
        ],
    ),
    "handoff": (
        "u_10001",
        "customer",
        ["我要退款 202506001", "确认", "帮我转账 3000 元到 ACC-3001，支付密码 123456", "确认"],
    ),
    "appointment": (
        "u_10001",
        "customer",
        ["我想挂号", "皮肤科，6月20号", "确认", "帮我预约6月20号的皮肤科", "算了不挂了"],
    ),
    "weather": (
        "u_10001",
        "customer",
        [
            "北京今天天气怎么样？",
            "今天天气怎么样",
            "杭州",
            "what's the weather in Shanghai?",
            "阿特兰蒂斯的天气",
        ],
    ),
    "sales": (
        "u_80001",
        "analyst",
        [
            "上月销售额最高的产品",
            "上个月总销售额是多少",
            "2024年5月销量最低的产品",
            "top 3 products by revenue last month",
            "销售部门有几个人",
        ],
    ),
}
DEMO_TODAY = {"sales": "2024-07-15", "flights": "2024-06-18", "appointment": "2024-06-18"}
"""The demo's "today" per scenario: the design's flight is on 2024-06-20, its sales month is
June 2024."""
WORLD_TODAY = date(2024, 6, 18)
"""The seeded world's day: its orders, flights and clinic slots are around it. ``reach chat``
talks on it unless told otherwise; on the real date every flight and slot is in the past."""

DataDir = Annotated[
    Path | None, typer.Option("--data-dir", help="Where the database and checkpoints live.")
]
User = Annotated[str, typer.Option("--user", help="The authenticated user id.")]
Role = Annotated[str, typer.Option("--role", help="The user's role.")]


def _use_data_dir(data_dir: Path | None) -> Settings:
    """Return the settings, pointed at ``--data-dir`` when given.

    The checkpointer factory reads the settings from the environment, so the option is
    also exported there before the settings are read once.
    """
    if data_dir is not None:
        os.environ["REACH_DATA_DIR"] = str(data_dir)
        get_settings.cache_clear()
    return get_settings()


ModelChoice = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="rules (offline default), local (the fetched local model, started if needed), "
        "mixed (rules first, the model when unsure), or a model name at REACH_BASE_URL.",
    ),
]


def _with_model(settings: Settings, model: str | None) -> Settings:
    """Return the settings with ``--model`` applied; start the local server when it is used.

    A local server that cannot start is reported, and the run goes on: every model step
    falls back to the rules.
    """
    if model is None:
        return settings
    settings = settings.model_copy(update={"model": model})
    name, _ = parse_choice(model)
    if name == "local" and not settings.base_url:
        try:
            info = serve_local_model(settings)
        except ModelError as error:
            console.print(f"[yellow]local model unavailable, rules answer: {error}[/yellow]")
        else:
            console.print(f"[dim]local model at {info.base_url}[/dim]")
    return settings


def _waiting_for_confirmation(app_graph, config: dict) -> bool:  # type: ignore[no-untyped-def]
    snapshot = app_graph.get_state(config)
    return any(task.interrupts for task in snapshot.tasks)


def _run_turn(app_graph, text: str, thread: str, context: Context, trace: bool) -> None:  # type: ignore[no-untyped-def]
    """Send one user message; if an action awaits confirmation and it is a yes or a no, resume.

    Anything else goes in as a message, as a chat front-end sends it: the intent node reads
    it against the pending action (a correction, a new request that sets it aside, a request
    for a person), where a resume could only ask again.
    """
    config = {"configurable": {"thread_id": thread}}
    if _waiting_for_confirmation(app_graph, config) and read_decisions(text, 1) is not None:
        payload: Any = Command(resume=text)
    else:
        payload = {"messages": [("user", text)]}
    for chunk in app_graph.stream(payload, config, context=context, stream_mode="updates"):
        if "busy" in chunk:  # another worker is running this thread's previous turn
            show_update(console, "reply", {"messages": chunk["messages"]})
            continue
        for node, update in chunk.items():
            show_update(console, node, update, answers_only=not trace)


@app.command()
def demo(
    scenario: Annotated[
        str, typer.Option("--scenario", help=f"One of {', '.join(DEMOS)}, or all.")
    ] = "all",
    data_dir: DataDir = None,
    model: ModelChoice = None,
) -> None:
    """Run scripted conversations, printing what each node decided.

    Without ``--data-dir`` they run in a fresh ``demo/`` under the data directory, so every
    run starts from the seeded world (a run that books the clinic's last slot or refunds an
    order would otherwise show the next run a full day or an existing refund).
    """
    if data_dir is None:
        data_dir = _use_data_dir(None).data_dir / "demo"
        shutil.rmtree(data_dir, ignore_errors=True)
    settings = _with_model(_use_data_dir(data_dir), model)
    names = list(DEMOS) if scenario == "all" else [scenario]
    unknown = [name for name in names if name not in DEMOS]
    if unknown:
        console.print(f"[red]unknown scenario {unknown[0]!r}; choose {', '.join(DEMOS)}[/red]")
        raise typer.Exit(2)
    server = None
    if "weather" in names and "weather_url" not in settings.model_fields_set:
        server, url = start_demo_weather_server()
        settings = settings.model_copy(update={"weather_url": url})
    try:
        checkpointer = make_checkpointer()
        for name in names:
            user, role, script = DEMOS[name]
            today = settings.today
            if today is None and name in DEMO_TODAY:
                today = date.fromisoformat(DEMO_TODAY[name])
            agent = _locked(
                build_graph(
                    checkpointer=checkpointer,
                    settings=settings.model_copy(update={"today": today}),
                ),
                settings,
            )
            thread = f"demo-{name}-{int(time.time() * 1000)}"
            context = Context(user_id=user, user_role=role)
            console.rule(f"{name} · thread {thread} · {user} ({role})")
            for text in script:
                console.print(f"[bold]user:[/bold] {text}")
                _run_turn(agent, text, thread, context, trace=True)
    finally:
        if server is not None:
            server.shutdown()
    console.rule("done")
    console.print(f"demo data: {settings.data_dir} (reach history THREAD --data-dir ...)")


@app.command()
def chat(
    thread: Annotated[
        str, typer.Option("--thread", help="Conversation id; reuse to resume.")
    ] = "chat",
    data_dir: DataDir = None,
    user: User = "u_10001",
    role: Role = "customer",
    trace: Annotated[bool, typer.Option("--trace/--no-trace", help="Show each node.")] = False,
    model: ModelChoice = None,
    today: Annotated[
        str | None,
        typer.Option(
            "--today",
            help="The day the chat happens on: YYYY-MM-DD, or 'real'. Default: REACH_TODAY,"
            f" else the seeded world's {WORLD_TODAY.isoformat()}.",
        ),
    ] = None,
) -> None:
    """Talk to the agent. The thread is saved, so it continues after a restart."""
    settings = _with_model(_use_data_dir(data_dir), model)
    day = _chat_today(today, settings)
    settings = settings.model_copy(update={"today": day})
    shown = "the real date" if day is None else day.isoformat()
    console.print(f"[dim]today: {shown} (--today YYYY-MM-DD, or --today real)[/dim]")
    if "weather_url" not in settings.model_fields_set:  # as the demo: a local weather API
        _weather, url = start_demo_weather_server()
        settings = settings.model_copy(update={"weather_url": url})
        console.print(f"[dim]weather: the demo weather API at {url} (REACH_WEATHER_URL)[/dim]")
    agent = _locked(build_graph(checkpointer=make_checkpointer(), settings=settings), settings)
    config = {"configurable": {"thread_id": thread}}
    previous = agent.get_state(config).values.get("messages", [])
    if previous:
        console.print(f"[dim]resuming thread {thread} ({len(previous)} messages)[/dim]")
        last = previous[-1]
        console.print(f"[dim]last: {last.content}[/dim]")
    console.print("[dim]type your message; /quit to leave[/dim]")
    context = Context(user_id=user, user_role=role)
    while True:
        try:
            text = console.input("[bold]you:[/bold] ").strip()
        except (EOFError, KeyboardInterrupt):
            break
        if text in ("/quit", "/exit", "quit", "exit"):
            break
        if text:
            _run_turn(agent, text, thread, context, trace)


def _chat_today(option: str | None, settings: Settings) -> date | None:
    """Return the day ``reach chat`` talks on (``None``: the real date)."""
    if option == "real":
        return None
    if option is not None:
        try:
            return date.fromisoformat(option)
        except ValueError:
            console.print(f"[red]--today wants YYYY-MM-DD or 'real', not {option!r}[/red]")
            raise typer.Exit(2) from None
    return settings.today or WORLD_TODAY


Thread = Annotated[str, typer.Argument(help="The conversation (thread) id.")]
CheckpointId = Annotated[str, typer.Option("--checkpoint", help="A checkpoint id from history.")]


def _locked(agent: Any, settings: Settings) -> Any:
    """Run each turn under the thread's Redis lease when Redis is configured.

    Workers sharing Redis may all continue one thread; the lease keeps two of them (or two
    ``reach chat`` windows) from running it at once. Without Redis there is one process.
    """
    return LockedGraph.from_settings(agent, settings) if settings.redis_url else agent


def _agent(data_dir: Path | None):  # type: ignore[no-untyped-def]
    _use_data_dir(data_dir)
    return build_graph(checkpointer=make_checkpointer())


def _print_history(agent, thread: str) -> None:  # type: ignore[no-untyped-def]
    entries = time_travel.history(agent, thread)
    if not entries:
        console.print(f"[red]thread {thread!r} has no checkpoints[/red]")
        raise typer.Exit(1)
    table = Table(title=f"thread {thread}", show_lines=False)
    for column in ("", "checkpoint", "step", "node", "next", "intent", "slots", "last protocol"):
        table.add_column(column, no_wrap=True, overflow="ellipsis")
    for entry in entries:
        table.add_row(
            "*" if entry.on_head_branch else "",
            entry.checkpoint_id,
            str(entry.step),
            entry.node,
            ",".join(entry.next),
            f"{entry.intent or ''}"
            + (f" ({entry.confidence:.2f})" if entry.confidence is not None else ""),
            ", ".join(f"{k}={v}" for k, v in entry.slots.items()),
            entry.last_protocol.replace("\n", " ")[:60],
        )
    console.print(table)
    console.print("[dim]* = on the current branch[/dim]")


@app.command()
def history(thread: Thread, data_dir: DataDir = None) -> None:
    """Show every checkpoint of a thread: step, node, intent, slots, last protocol message."""
    _print_history(_agent(data_dir), thread)


@app.command()
def replay(
    thread: Thread,
    checkpoint: CheckpointId,
    data_dir: DataDir = None,
    user: User = "u_10001",
    role: Role = "customer",
) -> None:
    """Re-run a thread from a checkpoint."""
    agent = _agent(data_dir)
    try:
        out = time_travel.replay(agent, thread, checkpoint, Context(user_id=user, user_role=role))
    except time_travel.CheckpointNotFoundError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from exc
    messages = out.get("messages") or []
    if messages:
        console.print(f"[bold green]agent:[/bold green] {messages[-1].content}")


@app.command()
def rollback(
    thread: Thread,
    steps: Annotated[int, typer.Option("--steps", min=1, help="How many steps back.")] = 1,
    run: Annotated[bool, typer.Option("--run", help="Carry on from there at once.")] = False,
    data_dir: DataDir = None,
    user: User = "u_10001",
    role: Role = "customer",
) -> None:
    """Continue the thread from N steps back; the abandoned steps stay in history."""
    agent = _agent(data_dir)
    context = Context(user_id=user, user_role=role)
    try:
        config = time_travel.rollback(agent, thread, steps, context=context, run=run)
    except time_travel.CheckpointNotFoundError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from exc
    checkpoint = config["configurable"]["checkpoint_id"]
    console.print(f"rolled back {steps} step(s) to a copy of that checkpoint: {checkpoint}")
    head = agent.get_state({"configurable": {"thread_id": thread}})
    if head.next:
        head_id = head.config["configurable"]["checkpoint_id"]
        console.print(
            f"next: {', '.join(head.next)}; carry on with "
            f"`reach replay {thread} --checkpoint {head_id}` or send a message"
        )
    elif head.values.get("messages"):
        console.print(f"[bold green]agent:[/bold green] {head.values['messages'][-1].content}")


@app.command()
def fork(
    thread: Thread,
    checkpoint: CheckpointId,
    set_: Annotated[
        list[str], typer.Option("--set", help="key=value or key.sub=value; repeatable.")
    ],
    data_dir: DataDir = None,
    user: User = "u_10001",
    role: Role = "customer",
) -> None:
    """Edit state at a checkpoint and run on from there, on a new branch."""
    agent = _agent(data_dir)
    try:
        values = time_travel.parse_assignments(set_)
        out = time_travel.fork(
            agent, thread, checkpoint, values, Context(user_id=user, user_role=role)
        )
    except (time_travel.CheckpointNotFoundError, ValueError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from exc
    messages = out.get("messages") or []
    if messages:
        console.print(f"[bold green]agent:[/bold green] {messages[-1].content}")


app.command()(token)
app.command()(trace)
app.command()(stats)
app.command("serve-metrics")(serve_metrics)
app.command("eval")(eval_command)
app.add_typer(model_app, name="model")
app.add_typer(tools_app, name="tools")
app.add_typer(bench_app, name="bench")


@app.command()
def doctor() -> None:
    """Say what model is configured and whether its endpoint answers (never the key)."""
    raise typer.Exit(print_doctor())


def main() -> None:
    """Entry point of the ``reach`` console script."""
    app()
