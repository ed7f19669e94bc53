"""What a confirmation says about a call: its name, its sentence and its fields, for people.

A confirmation used to say "即将执行：request_refund（order_id=…, reason=…）": the tool's
internals. Now each high-risk call is said in its scenario's own words (``Scenario.confirm``:
what will happen, to what, for how much), and the HITL card shows the task's name as its
title and each argument a person may see under its label, in the user's language. A call no
scenario words (a pack made from a team's functions) gets a sentence built from its card:
the function's description and each argument by its ``Args:`` description, never the
function's name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from contract.scenario import ScenarioSet
from nodes.wording import Voice
from tools.executor.pipeline import PreparedCall
from tools.registry.context import ToolContext
from tools.registry.types import ValidatedArguments


@dataclass(frozen=True)
class Field:
    """One argument as the card shows it."""

    argument: str
    """The tool's parameter."""
    label: str
    """Its name for a person ("订单号", "the order id")."""
    shown: Any
    """Its value as a person reads it ("80.00 元", a masked ID number)."""
    as_stored: bool
    """The value is shown as stored (perhaps masked), not in other units, so a changed value
    can be taken as typed."""


@dataclass(frozen=True)
class CallView:
    """A call as a person reviews it."""

    title: str
    """What the action is called (the task's name): the card's title."""
    sentence: str
    """What will happen, in the scenario's own words: the question and the description."""
    fields: tuple[Field, ...]
    """The arguments a person may see (internal ones, such as a risk ticket, left out)."""


CallWords = Callable[[PreparedCall, ValidatedArguments], CallView]
"""Given a prepared call and its arguments as a person may see them, its ``CallView``."""


def call_words(catalog: ScenarioSet, language: str, ctx: ToolContext) -> CallWords:
    """Return the function that words each call for ``language``, reading with ``ctx``."""
    voice = Voice(catalog, language)

    def words(call: PreparedCall, shown: ValidatedArguments) -> CallView:
        card = call.card
        scenario = catalog.tool_scenario.get(card.name)
        own = replace(voice, prefer=scenario)
        fields = tuple(_fields(call, shown, own, scenario))
        named = _title(catalog, card.name, own)
        title = named or _first_sentence(card.description)
        confirmer = catalog.confirmers.get(card.name)
        if confirmer is not None:
            sentence = confirmer({k: v for k, v in shown.items() if v is not None}, ctx, own)
        else:
            # the task's name in the user's language (a pack's: its description's first
            # sentence, in the language it was written for); else the description itself
            sentence = generic_sentence(named or card.description, fields, own)
        return CallView(title=title, sentence=sentence, fields=fields)

    return words


def _title(catalog: ScenarioSet, tool: str, voice: Voice) -> str | None:
    """The task the tool fulfils, by its name; else its step's name; else ``None``."""
    for intent, task in catalog.tasks.items():
        if task.tool == tool:
            named = voice.text(f"intent.{intent}")
            if named:
                return named
    return voice.text(f"step.{tool}")


def _fields(
    call: PreparedCall, shown: ValidatedArguments, voice: Voice, scenario: Any
) -> list[Field]:
    out: list[Field] = []
    hidden = set(call.card.evidence_fields)
    for name, value in shown.items():
        if value is None or value == "" or name in hidden:
            continue  # nothing given, or evidence a person never types (a risk ticket)
        label = field_label(call, name, voice)
        if label is None:
            continue  # an internal reference (a slot id): the sentence says what it is
        show = scenario.shown.get(name) if scenario is not None else None
        raw = call.arguments.get(name)
        value_shown = show(raw, voice.language) if show is not None else value
        # masked (a phone number in a reason) still edits as typed; a value said in other
        # units (cents as yuan) does not
        out.append(Field(name, label, value_shown, as_stored=show is None))
    return out


_EXAMPLE = re.compile(
    r",?\s*(?:each\s+)?(?:such as|e\.g\.|for example)\s*'?[^,.;]*'?(?=[.;]|$)", re.IGNORECASE
)


def field_label(
    call: PreparedCall, name: str, voice: Voice, *, described: bool = False
) -> str | None:
    """An argument's name for a person, or ``None``: not shown (an internal reference).

    ``field.<name>`` (a pack's ``Args:`` description), ``slot.<name>``; with ``described``
    (a card no scenario words) the parameter's own description.
    """
    for key in (f"field.{name}", f"slot.{name}"):
        text = voice.text(key)
        if text:
            return re.sub(r"\s*[（(][^）)]*[）)]", "", text).strip()
    if not described:
        return None
    info = call.card.parameters.model_fields.get(name)
    own = " ".join(((info.description if info else None) or "").split())
    own = _EXAMPLE.sub("", own).strip()
    own = re.split(r"[.:;。：；]\s", f"{own} ")[0].strip().rstrip(".")
    return own or None


def generic_sentence(description: str, fields: tuple[Field, ...], voice: Voice) -> str:
    """The sentence for a call no scenario words: what it does, then each field.

    ``description`` is the task's name in the user's language (a pack's: its function's
    description's first sentence) or, with no name, the card's description.
    """
    what = _first_sentence(description).rstrip(".。")
    what = what[:1].upper() + what[1:]  # a task's name opens the sentence
    between = voice.text("confirm_fields_between") or ", "
    details = between.join(voice.say("confirm_field", label=f.label, value=f.shown) for f in fields)
    key = "confirm_generic" if details else "confirm_generic_bare"
    return voice.say(key, what=what, details=details)


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.!?。])(?:\s|$)", text.strip())
    return (match.group(1) if match else text).strip()


def edited_arguments(
    fields: list[Mapping[str, Any]] | None, edited: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Map an edit of the card (label → value) back to the tool's arguments.

    ``fields`` is what the card showed of one action (``{label, argument, editable}`` each,
    ``ConfirmationRequest.fields``); ``None``: a request without it, taken as it is. A label
    that was not shown, or one whose shown value is not the value itself (an amount shown in
    yuan), makes the edit unreadable (``None``): ask again, change nothing.
    """
    if fields is None:
        return dict(edited)
    by_label = {str(f["label"]): f for f in fields}
    by_argument = {str(f["argument"]): f for f in fields}
    out: dict[str, Any] = {}
    for key, value in edited.items():
        field = by_label.get(key) or by_argument.get(key)
        if field is None or not field.get("editable"):
            return None
        out[str(field["argument"])] = value
    return out


__all__ = [
    "CallView",
    "CallWords",
    "Field",
    "call_words",
    "edited_arguments",
    "field_label",
    "generic_sentence",
]
