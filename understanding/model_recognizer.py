"""Model-backed understanding over any OpenAI-compatible endpoint, with the rules as fallback.

``ModelUnderstanding`` implements ``understanding.recognizer.Understanding``. It does not know the
scenarios: it is given ``IntentOption`` descriptions (intent, labels, slots with a one-line
description each) and a fallback ``Understanding`` (the rules). Intent and slots come from
``ChatOpenAI.with_structured_output(schema, method="json_schema", strict=True)``, which local
servers (llama-server) turn into a grammar, so the answer is always schema-shaped JSON;
``method="function_calling"`` can be chosen for endpoints that do it natively.

Every model output is untrusted:

* the intent must be one of the offered labels;
* a slot value must be evidenced by the text: after normalization (NFKC, case, spaces and
  dashes ignored) it occurs in the message, or the rules extracted the same value, or (dates)
  it is one of the dates the message can be resolved to, or (numbers) the number, or the
  number / 100 for amounts in cents, is written in the message. Anything else is refused and
  reported in ``refused``;
* any failure (timeout, connection error, HTTP 5xx, a refusal, output that does not parse or
  names no known intent) falls back to the rules for that step, with ``source="rules"``, the
  ``error`` recorded and the rules' confidence lowered (× ``FALLBACK_DISCOUNT``).

Confidence comes from evidence, not from the model's say-so (``evidence_confidence``)::

    p   = exp(Σ logprob of the label's tokens)   when the endpoint returns logprobs
        = P_NO_LOGPROBS (0.7)                     when it does not
    r   = the rules' confidence in their own label
    agree (same label)            c = 1 − (1 − p)(1 − r)        two sources, noisy-OR
    rules sure (r ≥ 0.6), differ  c = p · (1 − r / 2)            a confident contradiction
    rules unsure or UNKNOWN       c = p · 0.85                   the model alone
    slot evidence for the label   c = c + (1 − c) · 0.25         the rules find one of its slots
    a refused (invented) slot     c = c · 0.7                    the model made something up

clamped to [0.02, 0.99]. ``eval/intent_accuracy.py`` measures its Brier score and ECE.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, TypedDict

from langchain_core.runnables import Runnable
from langgraph.errors import GraphBubbleUp

from config.limits import JsonObject, JsonValue
from contract.scenario import UNKNOWN, ScenarioSet
from understanding.chat import chat_model_for, parse_choice
from understanding.evidence import THRESHOLD, evidence_confidence, label_probability, slot_supported
from understanding.recognizer import (
    IntentResult,
    Language,
    SlotResult,
    Understanding,
    detect_language,
)

FALLBACK_DISCOUNT = 0.8
Source = Literal["model", "rules"]
Method = Literal["json_schema", "function_calling"]


@dataclass(frozen=True)
class IntentOption:
    """One thing the model may recognize: an intent and the slots it needs."""

    intent: str
    label_zh: str
    label_en: str
    slots: Mapping[str, str] = field(default_factory=dict)
    """Slot name → what it is (shown to the model)."""
    flags: Mapping[str, str] = field(default_factory=dict)
    """On-request yes/no slots (e.g. ``notify`` → "the user asks to be told when it arrives");
    set to ``flag_values[name]`` (``True`` by default) when the model says so."""
    flag_values: Mapping[str, Any] = field(default_factory=dict)
    """The slot value a raised flag stands for (the on-request tool's default, e.g. ``sms``)."""


@dataclass(frozen=True)
class ModelIntentResult(IntentResult):
    """An ``IntentResult`` with what the model said (``source``/``error`` are on the base)."""

    model_intent: str | None = None
    """What the model said, even when it was not used."""
    label_probability: float | None = None
    """exp(Σ logprob) of the label's tokens, when the endpoint returned logprobs."""


@dataclass(frozen=True)
class ModelSlotResult(SlotResult):
    """A ``SlotResult`` with the values refused for lack of evidence."""

    refused: dict[str, str] = field(default_factory=dict)
    """Slot name → the value the model gave that the text does not support."""
    source: Source = "model"
    error: str | None = None


# ---- the model -----------------------------------------------------------------------------


def options_from_scenarios(catalog: ScenarioSet) -> list[IntentOption]:
    """Describe every task of the scenarios for the model, from the scenario contract.

    The labels are the scenarios' ``intent.<X>`` wording, the slots the task's required
    slots described by the task tool's pydantic parameter model, and the flags its on-request
    slots (described by the on-request tool, whose ``channel`` default is the flag's value).
    """
    cards = catalog.cards_by_name()
    options: list[IntentOption] = []
    for intent, task in catalog.tasks.items():
        card = cards.get(task.tool)
        slots = {name: _field_description(card, name) for name in task.required_slots}
        flags: dict[str, str] = {}
        values: dict[str, object] = {}  # flag → the value it sets (a channel's default)
        for slot, tool in task.on_request:
            extra = cards.get(tool)
            what = extra.description if extra is not None else tool
            flags[slot] = f"true only if the user explicitly asks for this as well: {what}"
            channel = extra.parameters.model_fields.get("channel") if extra else None
            values[slot] = channel.default if channel and channel.default else True
        options.append(
            IntentOption(
                intent=intent,
                label_zh=catalog.wording(f"intent.{intent}", "zh") or intent,
                label_en=catalog.wording(f"intent.{intent}", "en") or intent,
                slots=slots,
                flags=flags,
                flag_values=values,
            )
        )
    return options


def _field_description(card: Any, name: str) -> str:
    """A parameter's description from the tool's pydantic model, or its name."""
    if card is None:
        return name
    info = card.parameters.model_fields.get(name)
    description = (info.description if info is not None else None) or name
    return " ".join(description.split())[:200]


def build_understanding(
    choice: str | None,
    settings: Any,
    catalog: ScenarioSet,
    rules: Understanding,
    *,
    today: Callable[[], date] = date.today,
    llm: Any = None,
) -> Understanding:
    """The recognizer ``choice`` names: the rules, a model over the rules, or mixed."""
    name, mixed = parse_choice(choice)
    if name is None:
        return rules
    model = llm if llm is not None else chat_model_for(choice, settings)
    return ModelUnderstanding(
        model,
        options_from_scenarios(catalog),
        rules,
        today=today,
        consult_below=THRESHOLD if mixed else None,
    )


class ModelCall(TypedDict):
    """One model call, as ``ModelUnderstanding.calls`` keeps it: the step and how it went."""

    step: str
    ok: bool
    error: str | None


class ModelFailure(Exception):
    """The model's answer cannot be used; the message goes into ``error``."""


def describe_error(error: BaseException) -> str:
    """One line for the protocol: the error's type, HTTP status and first line."""
    name = type(error).__name__
    status = getattr(error, "status_code", None)
    text = str(error).splitlines()[0][:160] if str(error) else ""
    return f"{name}{f' {status}' if status else ''}: {text}".strip(": ")


class ModelUnderstanding:
    """Intent and slots from a chat model; the rules answer whenever the model cannot."""

    def __init__(
        self,
        llm: Any,
        options: Sequence[IntentOption],
        fallback: Understanding,
        *,
        method: Method = "json_schema",
        today: Callable[[], date] = date.today,
        system_prompt: str | None = None,
        consult_below: float | None = None,
    ) -> None:
        """Keep the model, what it may recognize, and the rules to fall back on.

        Args:
            llm: a ``ChatOpenAI`` (or any LangChain chat model with structured output).
            options: the intents the scenarios offer, with their slots.
            fallback: the rules; also a second opinion for confidence and slot evidence.
            method: ``json_schema`` (grammar on local servers) or ``function_calling``.
            today: the clock that resolves relative dates.
            system_prompt: replaces the default instructions.
            consult_below: "mixed" mode: ask the model only when the rules are below this
                confidence or say UNKNOWN (``None``: always ask).
        """
        self.llm = llm
        self.options = {option.intent: option for option in options}
        self.fallback = fallback
        self.method = method
        self.today = today
        self.system_prompt = system_prompt or self._default_prompt()
        self.consult_below = consult_below
        self._intent_runnable = self._structured(self._intent_schema())
        self._slot_runnables: dict[str, Runnable[Any, Any]] = {}  # intent → its slot reader
        self._flags: dict[str, dict[str, bool]] = {}
        """On-request flags the model set, by message text (the last 64 messages)."""
        self.calls: deque[ModelCall] = deque(maxlen=256)
        """The latest model calls: step, outcome, error (for the protocol and the eval)."""

    # ---- schema and prompt ---------------------------------------------------------------
    def _default_prompt(self) -> str:
        lines = [
            "You classify one customer message for a service agent. Choose the intent that "
            "the user asks for now. If it is small talk, a question none of the intents "
            "serves, or unclear, choose UNKNOWN. Do not guess. Answer in JSON.",
            "Intents:",
        ]
        for option in self.options.values():
            lines.append(f"- {option.intent}: {option.label_en} / {option.label_zh}")
        lines.append(f"- {UNKNOWN}: none of these (chit-chat, other topics)")
        return "\n".join(lines)

    def _intent_schema(self) -> dict[str, JsonValue]:
        properties: dict[str, JsonValue] = {
            "intent": {"type": "string", "enum": [*self.options, UNKNOWN]},
        }
        flags = {name: text for o in self.options.values() for name, text in o.flags.items()}
        for name, text in flags.items():
            properties[name] = {"type": "boolean", "description": text}
        return {
            "title": "understanding",
            "description": "The intent of the user's message.",
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }

    def _slot_schema(self, option: IntentOption) -> dict[str, JsonValue]:
        properties: dict[str, JsonValue] = {
            name: {"type": ["string", "null"], "description": text}
            for name, text in option.slots.items()
        }
        return {
            "title": "slots",
            "description": "Values the user stated; null for anything not in the message.",
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }

    def _structured(self, schema: dict[str, JsonValue]) -> Any:
        strict = True if self.method == "json_schema" else None
        return self.llm.with_structured_output(
            schema, method=self.method, strict=strict, include_raw=True
        )

    # ---- calls ---------------------------------------------------------------------------
    def _invoke(
        self, runnable: Any, messages: list[tuple[str, str]], step: str
    ) -> tuple[JsonObject, Any]:  # the model's raw output, unchecked
        """Run one structured call; return (parsed, raw message) or raise ``ModelFailure``."""
        try:
            out = runnable.invoke(messages)
        except GraphBubbleUp:
            raise
        except Exception as error:  # noqa: BLE001 - any model failure falls back to rules
            self.calls.append({"step": step, "ok": False, "error": describe_error(error)})
            raise ModelFailure(describe_error(error)) from error
        raw, parsed = out.get("raw"), out.get("parsed")
        refusal = (getattr(raw, "additional_kwargs", None) or {}).get("refusal")
        if refusal:
            problem = f"refusal: {str(refusal)[:120]}"
        elif out.get("parsing_error") is not None:
            problem = f"invalid output: {describe_error(out['parsing_error'])}"
        elif not isinstance(parsed, dict):
            problem = f"invalid output: {str(getattr(raw, 'content', ''))[:120]!r}"
        else:
            self.calls.append({"step": step, "ok": True, "error": None})
            return parsed, raw
        self.calls.append({"step": step, "ok": False, "error": problem})
        raise ModelFailure(problem)

    def _model_intent(
        self, text: str, rules: IntentResult, *, context: str | None, step: str
    ) -> ModelIntentResult:
        system = self.system_prompt + (f"\n\n{context}" if context else "")
        try:
            parsed, raw = self._invoke(
                self._intent_runnable, [("system", system), ("user", text)], step
            )
            intent = parsed.get("intent")
            if intent not in self.options and intent != UNKNOWN:
                raise ModelFailure(f"invalid output: unknown intent {intent!r}")
        except ModelFailure as failure:
            return self._fallback_result(rules, str(failure))
        metadata = getattr(raw, "response_metadata", None) or {}
        p_label = label_probability(metadata.get("logprobs"), str(intent))
        slot_evidence = False
        if intent != UNKNOWN:
            found = self.fallback.extract_slots(text, str(intent))
            slot_evidence = bool(set(found.slots) & set(self.options[intent].slots))
        confidence = evidence_confidence(p_label, str(intent), rules, slot_evidence=slot_evidence)
        flags = sorted(name for name, value in parsed.items() if name != "intent" and value is True)
        self._flags[text] = {name: True for name in flags}
        while len(self._flags) > 64:
            self._flags.pop(next(iter(self._flags)))
        candidates = tuple(dict.fromkeys([c for c in (intent, *rules.candidates) if c != UNKNOWN]))
        return ModelIntentResult(
            intent=str(intent),
            confidence=confidence,
            language=rules.language or detect_language(text),
            evidence=(f"model:{intent}", *(f"flag:{f}" for f in flags), *rules.evidence),
            candidates=candidates,
            source="model",
            model_intent=str(intent),
            label_probability=None if p_label is None else round(p_label, 4),
        )

    @staticmethod
    def _fallback_result(rules: IntentResult, error: str) -> ModelIntentResult:
        return ModelIntentResult(
            intent=rules.intent,
            confidence=round(rules.confidence * FALLBACK_DISCOUNT, 3),
            language=rules.language,
            evidence=rules.evidence,
            candidates=rules.candidates,
            source="rules",
            error=error,
        )

    # ---- the Understanding protocol ------------------------------------------------------
    def _rules_suffice(self, rules: IntentResult) -> bool:
        return (
            self.consult_below is not None
            and rules.intent != UNKNOWN
            and rules.confidence >= self.consult_below
        )

    def classify(self, text: str) -> ModelIntentResult:
        """Ask the model for the intent; check it; combine its evidence with the rules'."""
        rules = self.fallback.classify(text)
        if not text.strip():
            return self._fallback_result(rules, "empty message")
        if self._rules_suffice(rules):
            return ModelIntentResult(**_fields(rules), source="rules")
        return self._model_intent(text, rules, context=None, step="classify")

    def reconsider(
        self, text: str, *, pending_intent: str | None, missing_slots: list[str]
    ) -> ModelIntentResult:
        """Look again with the pending task in the prompt; a rule-verified answer wins."""
        rules = self.fallback.reconsider(
            text, pending_intent=pending_intent, missing_slots=missing_slots
        )
        if "answers the pending question" in rules.evidence or self._rules_suffice(rules):
            return ModelIntentResult(**_fields(rules), source="rules")
        context = None
        if pending_intent in self.options:
            option = self.options[pending_intent]
            context = (
                f"The agent is in the middle of {pending_intent} ({option.label_en}) and asked "
                f"for: {', '.join(missing_slots) or 'nothing'}. If the message just answers "
                f"that, the intent is {pending_intent}."
            )
        return self._model_intent(text, rules, context=context, step="reconsider")

    def extract_slots(self, text: str, intent: str) -> ModelSlotResult:
        """Rules first; the model fills what they missed, and only with evidenced values."""
        rules = self.fallback.extract_slots(text, intent)
        option = self.options.get(intent)
        flags = {
            k: option.flag_values.get(k, v)
            for k, v in self._flags.get(text, {}).items()
            if option and k in option.flags
        }
        base = {**flags, **rules.slots}
        if option is None:
            return ModelSlotResult(
                slots=base, invalid=dict(rules.invalid), either=rules.either, source="rules"
            )
        missing = [n for n in option.slots if n not in rules.slots and n not in rules.invalid]
        if not missing:
            return ModelSlotResult(
                slots=base, invalid=dict(rules.invalid), either=rules.either, source="rules"
            )
        runnable = self._slot_runnables.get(intent)
        if runnable is None:
            runnable = self._slot_runnables[intent] = self._structured(self._slot_schema(option))
        system = (
            f"Extract the values for {intent} ({option.label_en}) that the user's message "
            "states. Copy them as written. Use null for anything the message does not say; "
            "never invent an id, a number, a name or a date."
        )
        try:
            parsed, _ = self._invoke(runnable, [("system", system), ("user", text)], "slots")
        except ModelFailure as failure:
            return ModelSlotResult(
                slots=base,
                invalid=dict(rules.invalid),
                either=rules.either,
                source="rules",
                error=str(failure),
            )
        slots, refused = dict(base), {}
        for name in missing:
            value = parsed.get(name)
            if value is None or value == "":
                continue
            if slot_supported(name, value, text, today=self.today()):
                slots[name] = value
            else:
                refused[name] = str(value)
        return ModelSlotResult(
            slots=slots, invalid=dict(rules.invalid), either=rules.either, refused=refused
        )


class IntentFields(TypedDict):
    """An intent result's fields, as a protocol note records them."""

    intent: str
    confidence: float
    language: Language | None
    evidence: tuple[str, ...]
    candidates: tuple[str, ...]


def _fields(result: IntentResult) -> IntentFields:
    return {
        "intent": result.intent,
        "confidence": result.confidence,
        "language": result.language,
        "evidence": result.evidence,
        "candidates": result.candidates,
    }


__all__ = [
    "IntentOption",
    "ModelIntentResult",
    "ModelSlotResult",
    "ModelUnderstanding",
    "ModelFailure",
    "build_understanding",
    "describe_error",
    "options_from_scenarios",
]
