"""The ``reach`` command: talk to the agent, or watch a scripted demo."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from cli.render import show_update
from graph.builder import build_graph
from graph.checkpoint import make_checkpointer
from state import Context
from tools.db import DATA_DIR_ENV

app = typer.Typer(help="Agent-Reach: an agent that understands, asks, acts and recovers.")
console = Console()

DEMO_SCRIPT = [
    "我的订单怎么还没到？",
    "OD-20240618-001",
    "帮我催一下单，订单号 OD-20240618-001",
    "where is order 202506001?",
    "订单 OD-20240618-002 送到了但是洒了，我要退款",
    "嗯……那个……",
    "订单号是 12345",
    "OD-20240619-003 到哪了？",
]

DataDir = Annotated[
    Path | None, typer.Option("--data-dir", help="Where the database and checkpoints live.")
]
User = Annotated[str, typer.Option("--user", help="The authenticated user id.")]
Role = Annotated[str, typer.Option("--role", help="The user's role.")]


def _use_data_dir(data_dir: Path | None) -> None:
    if data_dir is not None:
        os.environ[DATA_DIR_ENV] = str(data_dir)


def _run_turn(app_graph, text: str, thread: str, context: Context, trace: bool) -> None:  # type: ignore[no-untyped-def]
    config = {"configurable": {"thread_id": thread}}
    for chunk in app_graph.stream(
        {"messages": [("user", text)]}, config, context=context, stream_mode="updates"
    ):
        for node, update in chunk.items():
            if trace or node in ("reply", "clarify", "handoff"):
                show_update(console, node, update)


@app.command()
def demo(
    data_dir: DataDir = None,
    user: User = "u_10001",
    role: Role = "customer",
) -> None:
    """Run a scripted food-delivery conversation, printing what each node decided."""
    _use_data_dir(data_dir)
    agent = build_graph(checkpointer=make_checkpointer())
    thread = f"demo-{int(time.time() * 1000)}"
    context = Context(user_id=user, user_role=role)
    console.rule(f"Agent-Reach demo · thread {thread} · user {user}")
    for text in DEMO_SCRIPT:
        console.print(f"[bold]user:[/bold] {text}")
        _run_turn(agent, text, thread, context, trace=True)
    console.rule("done")


@app.command()
def chat(
    thread: Annotated[
        str, typer.Option("--thread", help="Conversation id; reuse to resume.")
    ] = "chat",
    data_dir: DataDir = None,
    user: User = "u_10001",
    role: Role = "customer",
    trace: Annotated[bool, typer.Option("--trace/--no-trace", help="Show each node.")] = False,
) -> None:
    """Talk to the agent. The thread is saved, so it continues after a restart."""
    _use_data_dir(data_dir)
    agent = build_graph(checkpointer=make_checkpointer())
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


def main() -> None:
    """Entry point of the ``reach`` console script."""
    app()
