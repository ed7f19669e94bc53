"""One life of the agent process, for the crash-point harness (``tests/crash/harness.py``).

``python -m tests.crash.child <data_dir> <scenario> <phase> <crash_point>`` runs the
scenario's turn (phase ``run``) or picks the thread up again after a crash (phase
``resume``), on a SQLite checkpointer and the default executor (SQLite idempotency store) in
``data_dir``. The crash hook kills this process with SIGKILL:

- ``node:<k>``: right after the k-th node update of this life (a node boundary);
- ``after_handler``: inside the executor, after the side-effecting handler returned and
  before the idempotency record is written (a wrapped handler, installed through
  ``executor_factory``);
- ``after_record``: after the idempotency record is written, before the node returns and
  its checkpoint is saved (a wrapped admission ``settle``);
- ``none``: no crash.

Nothing here is in a production code path: the hooks are installed by this script only.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

SCENARIOS_UNDER_TEST: dict[str, tuple[str, str]] = {
    "urge": ("帮我催一下 OD-20240618-001", "urge_delivery"),
    "refund": ("订单 OD-20240618-002 送到了但是洒了，我要退款", "request_refund"),
    "cancel_order": ("帮我取消订单 OD-20240618-001", "cancel_order"),
    "transfer": ("帮我转500元给ACC-2001，密码123456", "execute_transfer"),
    "appointment": ("帮我预约6月20号的皮肤科", "book_appointment"),
}
CONFIG: dict[str, Any] = {"configurable": {"thread_id": "crash"}}


def die() -> None:
    """Crash like a killed container: no cleanup, no flush."""
    os.kill(os.getpid(), signal.SIGKILL)


def main(data_dir: str, scenario: str, phase: str, point: str) -> None:
    """Run one life of the process."""
    os.environ["REACH_DATA_DIR"] = data_dir
    os.environ["REACH_TODAY"] = "2024-06-18"
    from graph.builder import build_graph  # noqa: PLC0415 - after the environment is set
    from nodes.services import default_executor  # noqa: PLC0415
    from state import Context  # noqa: PLC0415
    from tests.helpers import open_database  # noqa: PLC0415
    from tools.executor import ActionExecutor  # noqa: PLC0415
    from tools.registry import ToolRegistry  # noqa: PLC0415

    text, tool = SCENARIOS_UNDER_TEST[scenario]
    db = open_database(Path(data_dir) / "business.db")

    def executor_factory(registry: ToolRegistry) -> ActionExecutor:
        card = registry.get(tool)
        if card is not None and point == "after_handler":
            real = card.handler

            def handler(args: Any, ctx: Any) -> Any:
                result = real(args, ctx)
                die()
                return result

            registry.register(dataclasses.replace(card, handler=handler), replace_existing=True)
        executor = default_executor(registry)
        if point == "after_record":
            settle = executor.admission.settle

            def settled(**kwargs: Any) -> None:
                settle(**kwargs)
                if kwargs["result"].get("tool") == tool and kwargs["outcome"] == "succeeded":
                    die()

            executor.admission.settle = settled  # type: ignore[method-assign]
        return executor

    conn = sqlite3.connect(Path(data_dir) / "checkpoints.db", check_same_thread=False)
    app = build_graph(
        checkpointer=SqliteSaver(conn),
        database_factory=lambda: db,
        executor_factory=executor_factory,
    )
    alice = Context(user_id="u_10001", user_role="customer")
    updates = 0
    crash_at = int(point.split(":")[1]) if point.startswith("node:") else -1

    def drive(source: Any, config: dict[str, Any]) -> None:
        nonlocal updates
        for _ in app.stream(source, config, context=alice, stream_mode="updates"):
            updates += 1
            if updates == crash_at:
                die()

    if phase == "run":
        drive({"messages": [("user", text)]}, CONFIG)
    else:
        state = app.get_state(CONFIG)
        if not state.values.get("messages"):
            drive({"messages": [("user", text)]}, CONFIG)  # nothing was saved: say it again
        elif state.tasks and not any(t.interrupts for t in state.tasks):
            # the run was cut short: pick it up where it stopped. ``state.next`` is empty
            # when the killed step's writes were saved but the next checkpoint was not, yet
            # the run is unfinished: its tasks are still listed, with their writes
            drive(None, CONFIG)
        if app.get_state(CONFIG).values.get("missing_slots"):
            # asked again for what the killed life had (a PIN is stored masked until the
            # intent node's checkpoint, which may not have been written): the user says it
            drive({"messages": [("user", text)]}, CONFIG)
    for _ in range(3):  # the user confirms whatever is waiting for a confirmation
        state = app.get_state(CONFIG)
        if not any(t.interrupts for t in state.tasks):
            break
        drive(Command(resume="确认"), CONFIG)
    print(f"updates={updates}")


if __name__ == "__main__":
    main(*sys.argv[1:5])
