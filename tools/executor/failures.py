"""One failure vocabulary: every way a tool call can end, what it means, said once.

The executor's envelope says *how* a call ended (``status``, ``error_type``, ``data``);
``classify`` turns that into one ``Outcome`` class, and ``MEANINGS`` gives each class one
user-facing meaning, what it says about side effects, and the words by which a reply can be
recognised as naming it (``cues``; ``said`` reads replies with them: the reply node's check of
a rewritten reply, the failure-matrix test and ``reach eval``). The meaning's sentences are
the languages' data: ``failure.<class>`` (the reply's) and ``failure.<class>.short`` (the
client view's) in ``language/<code>/say.yaml``. The cues stay here, beside the classes: they
are not said to anyone, and a class's sentences hold one of its cues and none of another
class's (``tests/unit/test_failures.py``).

Who words what:

- a scenario's describer words its own successes and the two classes that are about its
  own data: ``not_found`` ("没有找到订单 OD-…") and ``refused`` (a domain refusal: "已送达，
  无法取消"). Someone else's resource is ``not_found`` too, in every byte;
- every other class is generic: the reply, the hand-off and the client view all say the
  sentence of its class, whatever the tool. A describer never sees such a result, and one that
  gets a failure it does not know answers ``None``: the generic sentence is said instead.

Side effects (``Meaning.effect``): ``none`` — the executor knows nothing ran (refused before
the handler, or the handler failed without an effect); ``unknown`` — it may have happened;
``undone`` — it happened and a compensating action reversed it; ``held`` — it was recorded
and waits for a person's review. Only ``none`` may be said as "nothing was done".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from language import catalog
from language import sentence as say

Outcome = Literal[
    "not_found",
    "invalid",
    "not_permitted",
    "refused",
    "disabled",
    "sunset",
    "unavailable",
    "timeout",
    "unknown",
    "rate_limited",
    "conflict",
    "pending_review",
    "compensated",
    "declined",
    "not_requested",
    "awaiting",
]
"""Every class of outcome other than a plain success."""

Effect = Literal["none", "unknown", "undone", "held"]
"""What a class says about the call's side effect."""

PENDING_REVIEW = "pending_review"
"""The ``data.status`` of a success that was recorded but waits for a person's review."""


@dataclass(frozen=True)
class Meaning:
    """What one class means for the user."""

    effect: Effect
    """What happened to the side effect (see the module docstring)."""
    text: Mapping[str, str]
    """The sentence in zh and en (``{task}``, ``{reference}``, ``{reason}``, ``{sunset}``)."""
    short: Mapping[str, str]
    """The same meaning without placeholders, for the client view of a tool message."""
    cues: Mapping[str, tuple[str, ...]]
    """Words that name this class in a reply (the sentence holds one of them)."""
    scenario_words: bool = False
    """A scenario's describer may word it (its own data: not found, a domain refusal)."""


def _meaning(
    outcome: Outcome,
    effect: Effect,
    cues: Mapping[str, tuple[str, ...]],
    *,
    scenario_words: bool = False,
) -> Meaning:
    """The meaning of ``outcome``: its sentences are the catalog's ``failure.<outcome>``."""
    return Meaning(
        effect=effect,
        text=catalog()[f"failure.{outcome}"],
        short=catalog()[f"failure.{outcome}.short"],
        cues=cues,
        scenario_words=scenario_words,
    )


MEANINGS: dict[Outcome, Meaning] = {
    "not_found": _meaning(
        "not_found",
        "none",
        {
            "zh": ("没有找到", "未找到", "没有可订"),
            "en": ("couldn't find", "nothing was found", "no such", "there is no ", "found no "),
        },
        scenario_words=True,
    ),
    "invalid": _meaning("invalid", "none", {"zh": ("不完整或有误",), "en": ("missing or wrong",)}),
    "not_permitted": _meaning("not_permitted", "none", {"zh": ("无权",), "en": ("isn't allowed",)}),
    "refused": _meaning(
        "refused",
        "none",
        {"zh": ("按当前情况无法",), "en": ("as things stand",)},
        scenario_words=True,
    ),
    "disabled": _meaning("disabled", "none", {"zh": ("已停用",), "en": ("switched off",)}),
    "sunset": _meaning("sunset", "none", {"zh": ("停止服务",), "en": ("withdrawn",)}),
    "unavailable": _meaning("unavailable", "none", {"zh": ("暂时不可用",), "en": ("unavailable",)}),
    "timeout": _meaning(
        "timeout", "none", {"zh": ("没有及时响应",), "en": ("did not answer in time",)}
    ),
    "unknown": _meaning("unknown", "unknown", {"zh": ("无法确认",), "en": ("can't tell yet",)}),
    "rate_limited": _meaning(
        "rate_limited", "none", {"zh": ("太频繁",), "en": ("too many requests",)}
    ),
    "conflict": _meaning("conflict", "none", {"zh": ("有了变化",), "en": ("something changed",)}),
    "pending_review": _meaning(
        "pending_review", "held", {"zh": ("人工审核",), "en": ("manual review",)}
    ),
    "compensated": _meaning(
        "compensated", "undone", {"zh": ("已全部撤销",), "en": ("was reversed",)}
    ),
    "not_requested": _meaning(
        "not_requested", "none", {"zh": ("您没有要求",), "en": ("did not ask",)}
    ),
    "declined": _meaning("declined", "none", {"zh": ("好的，已取消",), "en": ("i won't",)}),
    "awaiting": _meaning(
        "awaiting", "none", {"zh": ("等待您的确认",), "en": ("waiting for your confirmation",)}
    ),
}
"""One meaning per class."""

GENERIC_TASK = catalog()["failure.any_task"]
"""How a sentence names the task when no task is known (the client view)."""

_BY_ERROR_TYPE: dict[str, Outcome] = {
    "not_found": "not_found",
    "validation": "invalid",
    "permission_denied": "not_permitted",
    "user_fixable": "refused",
    "rate_limited": "rate_limited",
    "circuit_open": "unavailable",
    "system": "unavailable",
    "conflict": "conflict",
    "compensated": "compensated",
    "not_requested": "not_requested",
}


def classify(result: Mapping[str, Any]) -> Outcome | None:
    """Return the class of an envelope; ``None`` for a plain success.

    An error type nobody declared is ``unavailable`` (a failure, never "not found").
    """
    status = result.get("status")
    error_type = result.get("error_type")
    data = result.get("data")
    if status == "success":
        if isinstance(data, Mapping) and data.get("status") == PENDING_REVIEW:
            return "pending_review"
        return None
    if status == "pending":
        return "awaiting"
    if status == "unknown":
        return "unknown"
    if status == "rejected" and error_type is None:
        return "declined"
    if status == "timeout":
        return "timeout"
    if error_type == "disabled":
        return "sunset" if isinstance(data, Mapping) and data.get("sunset") else "disabled"
    return _BY_ERROR_TYPE.get(str(error_type), "unavailable")


def effect_of(result: Mapping[str, Any]) -> Effect | Literal["happened"]:
    """Return what happened to the call's side effect: ``happened`` for a success."""
    outcome = classify(result)
    return "happened" if outcome is None else MEANINGS[outcome].effect


def reference(result: Mapping[str, Any], known: Iterable[Any] = ()) -> str:
    """Return the id the user can quote: the record the call created, else the request id.

    The created record is the first ``*_id`` value of the data that is not one the user
    already gave (``known``: the slots), so a refund answers its refund id, not the order's.
    """
    data = result.get("data")
    given = {str(value) for value in known if isinstance(value, str | int)}
    if result.get("status") == "success" and isinstance(data, Mapping):
        for key, value in data.items():
            if str(key).endswith("_id") and isinstance(value, str) and value not in given:
                return value
    return str(result.get("request_id") or "")


def sentence(
    outcome: Outcome,
    result: Mapping[str, Any],
    *,
    language: str,
    task: str | None = None,
    known: Iterable[Any] = (),
) -> str:
    """Say what ``outcome`` means for ``result``, in ``language``, naming ``task``."""
    meaning = MEANINGS[outcome]
    data = result.get("data") if isinstance(result.get("data"), Mapping) else {}
    assert isinstance(data, Mapping)
    fields = [
        str(err.get("field"))
        for err in data.get("errors") or []
        if isinstance(err, Mapping) and err.get("field")
    ]
    template = meaning.text.get(language) or meaning.text["zh"]
    return template.format(
        task=task or say("failure.any_task", language),
        reference=reference(result, known),
        reason=", ".join(fields) or say("failure.any_reason", language, default="en"),
        sunset=data.get("sunset") or "",
    )


def short(outcome: Outcome, language: str) -> str:
    """The client view's sentence for ``outcome``."""
    meaning = MEANINGS[outcome]
    return meaning.short.get(language) or meaning.short["zh"]


def said(text: str, language: str | None = None) -> set[Outcome]:
    """Return the classes a reply names, by their cues (both languages unless given)."""
    lowered = text.casefold()
    languages = (language,) if language else ("zh", "en")
    return {
        outcome
        for outcome, meaning in MEANINGS.items()
        if any(cue in lowered for lang in languages for cue in meaning.cues.get(lang, ()))
    }


__all__ = [
    "MEANINGS",
    "PENDING_REVIEW",
    "Effect",
    "Meaning",
    "Outcome",
    "classify",
    "effect_of",
    "reference",
    "said",
    "sentence",
    "short",
]
