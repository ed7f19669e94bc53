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

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Scripted
from tests.graph.membership_desk import (
    CONVERSATIONS,
    TODAY,
    Desk,
    run,
    scripted_answer,
    serve,
)
from tests.helpers import set_env

pytestmark = pytest.mark.integration

NEEDS_RECOGNIZER = pytest.mark.xfail(strict=True, reason="needs the example recognizer of issue 37")


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


WITHOUT_A_MODEL: dict[str, bool] = {
    "find-member-en": True,
    "membership-zh": False,
    "classes-en": False,
    "book-en": True,
    "book-zh": True,
    "full-class-refused-en": True,
    "freeze-en": False,
    "freeze-over-limit-zh": False,
    "freeze-once-a-year-en": False,
    "correct-at-confirmation-en": True,
    "no-at-confirmation-zh": False,
    "two-requests-en": False,
    "classes-zh": False,
    "unknown-phone-en": True,
    "phone-and-booking-zh": True,
}
"""Which conversations typed values and the rules carry today with no model (``False``: a
task must be picked from words, the recognizer's job)."""


@pytest.mark.parametrize(
    "conversation",
    [
        pytest.param(c, marks=() if WITHOUT_A_MODEL[c.name] else NEEDS_RECOGNIZER, id=c.name)
        for c in CONVERSATIONS
    ],
)
def test_the_desk_without_a_model(conversation, desk, db, monkeypatch):
    set_env(monkeypatch, "REACH_MODEL", "rules")
    set_env(monkeypatch, "REACH_TODAY", TODAY)
    app = serve(desk, db)
    assert run(app, desk, conversation) == []
