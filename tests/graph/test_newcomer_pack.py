"""A newcomer's path, as a test: a pack written from scratch, served by ``build_graph``.

The membership desk (``tests/graph/membership_desk.py``: five functions, two writes, a
constraint in a type, two preconditions, a six-rule policy) is served exactly as
``docs/packs.md`` says: ``build_graph(scenarios=[pack.scenario])``, the model from the
settings (``REACH_MODEL``, ``REACH_BASE_URL``), no ``Services`` surgery. Its fifteen
conversations run on the compiled graph:

- with a scripted model (the fake OpenAI server answers what a competent model would, for
  the messages the rules and typed values leave to it): all fifteen pass;
- without a model (``REACH_MODEL=rules``): what typed values and the rules settle passes
  today; a conversation that needs a task picked from words is marked to flip when the
  example recognizer of issue 37 lands.

Each conversation checks the backend at the end (what was booked or frozen, nothing before
a yes), the reply's key facts, its language, and that no JSON, snake_case key, function name
or ``None`` reaches the user. The confirmation question's own wording is issue 38's.
"""

from __future__ import annotations

import time
from datetime import date

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from config.settings import get_settings
from graph.builder import build_graph
from observability.audit import AuditLog
from observability.metrics import Metrics
from tests.conftest import fast_executor
from tests.fakes.openai_server import FakeOpenAIServer, Scripted
from tests.graph.membership_desk import (
    CONVERSATIONS,
    TODAY,
    Desk,
    desk_pack,
    run,
    scripted_answer,
    serve,
    turn,
)
from tests.helpers import set_env

pytestmark = pytest.mark.integration

@pytest.fixture
def desk() -> Desk:
    return Desk()


@pytest.fixture
def scripted(monkeypatch, openai_server: FakeOpenAIServer) -> FakeOpenAIServer:
    set_env(monkeypatch, "REACH_MODEL", "fake-model")
    set_env(monkeypatch, "REACH_BASE_URL", openai_server.base_url)
    set_env(monkeypatch, "REACH_MODEL_MAX_RETRIES", "0")
    set_env(monkeypatch, "REACH_TODAY", TODAY)
    openai_server.match(lambda body: Scripted(content=scripted_answer(body)))
    return openai_server


@pytest.mark.parametrize("conversation", CONVERSATIONS, ids=lambda c: c.name)
def test_the_desk_with_a_scripted_model(conversation, desk, db, scripted):
    app = serve(desk, db)
    assert run(app, desk, conversation) == []


@pytest.mark.parametrize("conversation", CONVERSATIONS, ids=lambda c: c.name)
def test_the_desk_without_a_model(conversation, desk, db, monkeypatch):
    # the recognizer picks the task from the functions' docstrings and examples, typed
    # values fill it: all fifteen conversations pass with no model at all
    set_env(monkeypatch, "REACH_MODEL", "rules")
    set_env(monkeypatch, "REACH_TODAY", TODAY)
    app = serve(desk, db)
    assert run(app, desk, conversation) == []


def test_one_settings_object_moves_every_store(tmp_path, data_dir, monkeypatch):
    """``build_graph(settings=…)``: the business data, idempotency records, audit log, tool
    lifecycle and transcript go to its data directory; none to the environment's, none to
    ``./.reach``."""
    monkeypatch.chdir(tmp_path)
    set_env(monkeypatch, "REACH_MODEL", "rules")
    chosen = tmp_path / "chosen"
    settings = get_settings().model_copy(update={"data_dir": chosen, "today": date(2024, 6, 18)})
    desk = Desk()
    app = build_graph(
        checkpointer=InMemorySaver(), scenarios=[desk_pack(desk).scenario], settings=settings
    )
    for text in ("This is 13800001111", "book me into C-0620-YOGA", "yes"):
        turn(app, text, "stores")
    assert desk.bookings == [("M-1001", "C-0620-YOGA")]
    for _ in range(50):  # the audit log is written by its own thread
        if (chosen / "audit.jsonl").exists():
            break
        time.sleep(0.05)
    stores = {p.name for p in chosen.iterdir()}
    assert {"business.db", "executor.db", "audit.jsonl", "storage.db", "transcript.db"} <= stores
    assert not data_dir.exists() or not any(data_dir.iterdir())
    assert not (tmp_path / ".reach").exists()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # messages the recognizer is unsure of, so the model is asked (and fails)
        ("could you sort out that thing from before", "language service isn't answering"),
        ("帮我弄一下之前那个事", "我这边暂时没能理解，请稍后再试或换个说法"),
    ],
)
def test_a_model_that_fails_is_said_as_such_and_counted(
    text, said, desk, db, openai_server, monkeypatch, tmp_path
):
    set_env(monkeypatch, "REACH_MODEL", "fake-model")
    set_env(monkeypatch, "REACH_BASE_URL", openai_server.base_url)
    set_env(monkeypatch, "REACH_MODEL_MAX_RETRIES", "0")
    openai_server.match(lambda body: Scripted(status=503))
    metrics = Metrics()
    audit = AuditLog(tmp_path / "audit.jsonl", sinks=[metrics.observe])
    app = build_graph(
        checkpointer=InMemorySaver(),
        scenarios=[desk_pack(desk).scenario],
        database_factory=lambda: db,
        executor_factory=lambda registry: fast_executor(registry, audit=audit),
    )
    reply, asking = turn(app, text, "down")
    assert said in reply and "not sure what you need" not in reply and not asking
    audit.flush()
    (intent,) = [r for r in audit.records if r["kind"] == "intent"]
    assert "503" in intent["model_error"]
    assert metrics.tally.model_errors == 1
    audit.close()
