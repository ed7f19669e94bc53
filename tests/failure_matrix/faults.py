"""What each row injects, through which of the executor's seams, and what it must be told."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, model_validator

from tests.failure_matrix.catalog import CARDS, DEADLINE_S, FINAL_TOOLS, routes
from tools.executor.errors import (
    CompensatedError,
    ConflictError,
    PermanentToolError,
    ResourceNotFoundError,
    ToolError,
    TransientToolError,
    UserFixableError,
)
from tools.executor.failures import Outcome
from tools.registry.cards import ToolCard

# ---- faults: what each row injects, through which seam --------------------------------------


class _Blocked:
    """A handler that never answers within its deadline, and never writes afterwards."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, args: Any, ctx: Any) -> Any:
        self.release.wait(30)
        msg = "matrix: the call was abandoned at its deadline"
        raise TransientToolError(msg)


def _raising(error: type[ToolError], **details: Any) -> Callable[[Any, Any], Any]:
    def handler(args: Any, ctx: Any) -> Any:
        raise error(f"matrix: {error.__name__}", details=details)

    return handler


def _held(args: Any, ctx: Any) -> dict[str, Any]:
    return {"status": "pending_review", "review_id": "RV-MATRIX-0001"}


def _refusing(model: type[BaseModel]) -> type[BaseModel]:
    """The card's own schema, refusing every value (the executor's validation seam)."""

    class Refusing(model):  # type: ignore[valid-type, misc]
        @model_validator(mode="after")
        def _refuse(self) -> Any:
            msg = "matrix: this value is refused"
            raise ValueError(msg)

    Refusing.__name__ = model.__name__
    return Refusing


@dataclass(frozen=True)
class Fault:
    """One way a call fails, and the class the user must be told."""

    name: str
    card: Callable[[ToolCard], dict[str, Any]] = lambda card: {}
    """Card fields to replace (handler, permission, schema, deadline ...)."""
    applies: Callable[[ToolCard], bool] = lambda card: True
    expect: Callable[[ToolCard], Outcome] | None = None
    lifecycle: str | None = None
    """``disabled``, ``retired`` or ``sunset``."""
    breaker_open: bool = False
    rate_limited: bool = False
    declines: bool = False
    """The user answers no to the tool's confirmation."""

    def expected(self, card: ToolCard) -> Outcome:
        """The class the reply must name."""
        assert self.expect is not None
        return self.expect(card)


def _is(outcome: Outcome) -> Callable[[ToolCard], Outcome]:
    return lambda card: outcome


def _final_write(card: ToolCard) -> bool:
    return not card.idempotent and card.name in FINAL_TOOLS


FAULTS: tuple[Fault, ...] = (
    Fault(
        "not_found", lambda c: {"handler": _raising(ResourceNotFoundError)}, expect=_is("not_found")
    ),
    Fault(
        "not_yours",
        lambda c: {"owner_of": lambda args, ctx: "u_someone_else"},
        applies=lambda c: c.owner_of is not None,
        expect=_is("not_found"),
    ),
    Fault("invalid", lambda c: {"parameters": _refusing(c.parameters)}, expect=_is("invalid")),
    Fault("not_permitted", lambda c: {"permission": "matrix:nobody"}, expect=_is("not_permitted")),
    Fault(
        "refused",
        lambda c: {"handler": _raising(UserFixableError, reason="matrix")},
        expect=_is("refused"),
    ),
    Fault("conflict", lambda c: {"handler": _raising(ConflictError)}, expect=_is("conflict")),
    Fault("disabled", lifecycle="disabled", expect=_is("disabled")),
    Fault("retired", lifecycle="retired", expect=_is("disabled")),
    Fault("sunset", lifecycle="sunset", expect=_is("sunset")),
    Fault(
        "unavailable",
        lambda c: {"handler": _raising(PermanentToolError)},
        expect=_is("unavailable"),
    ),
    Fault(
        "transient", lambda c: {"handler": _raising(TransientToolError)}, expect=_is("unavailable")
    ),
    Fault("breaker_open", breaker_open=True, expect=_is("unavailable")),
    Fault(
        "timeout",
        lambda c: {"handler": _Blocked(), "timeout_s": DEADLINE_S},
        expect=lambda c: "timeout" if c.idempotent else "unknown",
    ),
    Fault("rate_limited", rate_limited=True, expect=_is("rate_limited")),
    Fault(
        "compensated",
        lambda c: {"handler": _raising(CompensatedError)},
        applies=_final_write,
        expect=_is("compensated"),
    ),
    Fault(
        "pending_review",
        lambda c: {"handler": _held, "result_model": None},
        applies=_final_write,
        expect=_is("pending_review"),
    ),
    Fault("declined", declines=True, applies=lambda c: c.risk == "high", expect=_is("declined")),
)


def rows() -> list[tuple[str, str, str]]:
    """Every (tool, fault, language) of the catalog: each fault that applies to each tool.

    Every other fault of a tool an English case reaches is tried in English, so both
    languages are proven on every class without running every row twice.
    """
    english = routes("en")
    found = []
    for tool, card in CARDS.items():
        faults = [fault for fault in FAULTS if fault.applies(card)]
        for index, fault in enumerate(faults):
            found.append((tool, fault.name, "en" if tool in english and index % 2 else "zh"))
    return found


def checked_rows(every: int = 3) -> list[tuple[str, str, str]]:
    """The rows ``make check`` runs: every tool, every (class, language), and a third of the rest.

    ``make test`` and ``.ci/run`` run every row (``rows``); ``make check`` is the minute's
    answer, so it keeps what proves the matrix's claims (each tool reached and told truthfully,
    each failure class said in both languages) and every ``every``-th of the other rows.
    """
    kept, tools, classes = [], set(), set()
    for index, (tool, name, language) in enumerate(rows()):
        outcome = (FAULT_BY_NAME[name].expected(CARDS[tool]), language)
        if tool not in tools or outcome not in classes or index % every == 0:
            kept.append((tool, name, language))
            tools.add(tool)
            classes.add(outcome)
    return kept


FAULT_BY_NAME = {fault.name: fault for fault in FAULTS}
