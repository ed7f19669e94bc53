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

``python -m tests.crash.child --serve`` does the imports once and forks one such life per
request line (``serve``); the harness drives its lives that way.

Nothing here is in a production code path: the hooks are installed by this script only.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import signal
import sqlite3
import sys
import traceback
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
RESUME_TIMEOUT_S = 2.0
"""The side-effecting tool's timeout in a resumed life: how long it waits for a dead claim."""


def die() -> None:
    """Crash like a killed container: no cleanup, no flush."""
    os.kill(os.getpid(), signal.SIGKILL)


def main(data_dir: str, scenario: str, phase: str, point: str) -> None:
    """Run one life of the process."""
    os.environ["REACH_DATA_DIR"] = data_dir
    os.environ["REACH_TODAY"] = "2024-06-18"
    from config.settings import get_settings  # noqa: PLC0415

    get_settings.cache_clear()  # a forked life (``serve``) reads this life's environment
    from graph.builder import build_graph  # noqa: PLC0415 - after the environment is set
    from nodes.services import default_executor  # noqa: PLC0415
    from state import Context  # noqa: PLC0415
    from tests.helpers import open_database  # noqa: PLC0415
    from tools.executor.pipeline import ActionExecutor  # noqa: PLC0415
    from tools.registry.cards import ToolRegistry  # noqa: PLC0415

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
        if card is not None and phase == "resume":
            # a claim the killed life left pending never settles: the resumed call waits the
            # card's timeout for it (5 s) before it takes over and looks the outcome up
            registry.register(
                dataclasses.replace(card, timeout_s=RESUME_TIMEOUT_S), replace_existing=True
            )
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


PRELOAD = (
    "graph.builder",
    "nodes.services",
    "state",
    "tests.helpers",
    "tools.executor.pipeline",
    "tools.registry.cards",
    "config.settings",
)
"""What ``main`` imports: imported once by ``serve``, so a forked life starts with it done."""


def serve() -> None:
    """Fork one life per request line, from a process that has done the imports once.

    A life is otherwise a new interpreter that spends seconds importing LangGraph before
    its first node. Each request (``data_dir scenario phase point`` on stdin) forks this
    single-threaded process, which has opened no file of any life; the child runs ``main``
    and is killed with SIGKILL as a separate interpreter would be. One JSON line answers
    each request: the exit code (``-9`` when killed) and the child's stdout and stderr.
    """
    for module in PRELOAD:
        importlib.import_module(module)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        data_dir, scenario, phase, point = line.split()
        out = Path(data_dir) / f".life-{phase}.out"
        err = Path(data_dir) / f".life-{phase}.err"
        pid = os.fork()
        if pid == 0:  # the life: stdout and stderr to files, no cleanup on the way out
            code = 0
            try:
                with out.open("w") as stdout, err.open("w") as stderr:
                    os.dup2(stdout.fileno(), 1)
                    os.dup2(stderr.fileno(), 2)
                    sys.stdout = os.fdopen(1, "w", closefd=False)
                    sys.stderr = os.fdopen(2, "w", closefd=False)
                    try:
                        main(data_dir, scenario, phase, point)
                    except BaseException:  # noqa: BLE001 - reported to the harness
                        traceback.print_exc()
                        code = 1
                    sys.stdout.flush()
                    sys.stderr.flush()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        answer = {"code": code, "stdout": out.read_text(), "stderr": err.read_text()}
        out.unlink()
        err.unlink()
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        main(*sys.argv[1:5])
