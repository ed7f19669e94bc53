"""Model-backed understanding over any OpenAI-compatible endpoint, with the rules as fallback.

``ModelUnderstanding`` implements ``nodes.understanding.Understanding``. It does not know the
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

import math
import re
import unicodedata
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Literal

from langgraph.errors import GraphBubbleUp
from pydantic import SecretStr

from cli.model import LOCAL_MODEL_NAME, local_base_url
from nodes.tasks import ScenarioSet
from nodes.understanding import IntentResult, SlotResult, Understanding, detect_language

UNKNOWN = "UNKNOWN"
P_NO_LOGPROBS = 0.7
FALLBACK_DISCOUNT = 0.8
THRESHOLD = 0.6
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


# ---- evidence ------------------------------------------------------------------------------


def normalize(text: str) -> str:
    """NFKC, case-folded, without spaces, dashes, underscores and common punctuation."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[\s\-_.,:;'\"，。：；、()（）#]", "", folded)


_EN_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_RELATIVE = (
    ("大后天", 3),
    ("后天", 2),
    ("明天", 1),
    ("明日", 1),
    ("今天", 0),
    ("今日", 0),
    ("day after tomorrow", 2),
    ("tomorrow", 1),
    ("today", 0),
)


def resolvable_dates(text: str, today: date) -> set[date]:
    """Every date the text can reasonably mean: absolute dates, month-day, relative words."""
    found: set[date] = set()
    lowered = text.lower()

    def add(year: int, month: int, day: int) -> None:
        try:
            found.add(date(year, month, day))
        except ValueError:
            pass

    for y, m, d in re.findall(r"(20\d{2})\s*[-/年.]\s*(\d{1,2})\s*[-/月.]\s*(\d{1,2})", text):
        add(int(y), int(m), int(d))
    for m, d in re.findall(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号號]?", text):
        add(today.year, int(m), int(d))
    for m, d in re.findall(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?![\d/])", text):
        add(today.year, int(m), int(d))
    months = "|".join(_EN_MONTHS) + "|" + "|".join(name[:3] for name in _EN_MONTHS)
    for name, d in re.findall(rf"\b({months})\.?\s+(\d{{1,2}})", lowered):
        add(today.year, _month_number(name), int(d))
    for d, name in re.findall(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({months})\b", lowered):
        add(today.year, _month_number(name), int(d))
    remaining = lowered
    for word, offset in _RELATIVE:
        if word in remaining:
            found.add(today + timedelta(days=offset))
            remaining = remaining.replace(word, " ")
    return found


def _month_number(name: str) -> int:
    return next(i for i, full in enumerate(_EN_MONTHS, start=1) if full.startswith(name[:3]))


def _numbers(text: str) -> set[float]:
    return {float(n) for n in re.findall(r"\d+(?:\.\d+)?", unicodedata.normalize("NFKC", text))}


def slot_supported(
    name: str, value: Any, text: str, *, today: date, rules_value: Any = None
) -> bool:
    """Whether ``text`` is evidence for ``value``; a value without evidence is invented."""
    if value is None or value == "":
        return False
    if rules_value is not None and str(rules_value) == str(value):
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float) or re.fullmatch(r"\d+(?:\.\d+)?", str(value)):
        number = float(value)
        numbers = _numbers(text)
        return number in numbers or (name.endswith("_cents") and number / 100 in numbers)
    value_text = str(value)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value_text):
        try:
            return date.fromisoformat(value_text) in resolvable_dates(text, today)
        except ValueError:
            return False
    needle = normalize(value_text)
    return bool(needle) and needle in normalize(text)


def label_probability(logprobs: Any, label: str) -> float | None:
    """exp(Σ logprob) of the tokens that spell ``label``, from an OpenAI ``logprobs`` payload.

    The tokens are matched by text: the first run of consecutive tokens whose concatenation
    (leading spaces and quotes stripped) equals the label. ``None`` when the payload has no
    such run (no logprobs returned, or a server that reports a different token stream).
    """
    tokens = logprobs.get("content") if isinstance(logprobs, dict) else logprobs
    if not tokens:
        return None
    for start, first in enumerate(tokens):
        head = str(first.get("token", "")).lstrip(' "')
        if not head or not label.startswith(head):
            continue
        text, total = head, float(first.get("logprob", 0.0))
        for token in tokens[start + 1 :]:
            if text == label:
                break
            piece = str(token.get("token", ""))
            if not label.startswith(text + piece):
                break
            text += piece
            total += float(token.get("logprob", 0.0))
        if text == label:
            return math.exp(total)
    return None


def evidence_confidence(
    p_label: float | None,
    model_intent: str,
    rules: IntentResult,
    *,
    slot_evidence: bool = False,
    refused_slots: int = 0,
) -> float:
    """Combine the label's probability, the rules' view and slot evidence (module docstring)."""
    p = P_NO_LOGPROBS if p_label is None else min(max(p_label, 0.0), 1.0)
    r = rules.confidence
    if rules.intent == model_intent:
        c = 1 - (1 - p) * (1 - r)
    elif rules.intent != UNKNOWN and r >= THRESHOLD:
        c = p * (1 - r / 2)
    else:
        c = p * 0.85
    if slot_evidence and model_intent != UNKNOWN:
        c += (1 - c) * 0.25
    c *= 0.7**refused_slots
    return round(min(max(c, 0.02), 0.99), 3)


# ---- the model -----------------------------------------------------------------------------


def make_chat_model(
    *,
    model: str,
    base_url: str | None,
    api_key: str | None,
    temperature: float = 0.0,
    timeout_s: float = 20.0,
    max_tokens: int = 512,
    max_retries: int = 1,
    logprobs: bool = True,
) -> Any:
    """A ``ChatOpenAI`` with every limit set (``max_tokens`` always: small models run on)."""
    # imported here: the OpenAI client's import is a second of every process's start-up (each
    # test worker, ``langgraph dev``, each ``reach`` command), with or without a model
    from langchain_openai import ChatOpenAI  # noqa: PLC0415

    options: dict[str, Any] = {}
    if logprobs:
        options.update(logprobs=True, top_logprobs=3)
    return ChatOpenAI(
        model=model,
        base_url=base_url,
        api_key=SecretStr(api_key or "not-needed"),  # local servers want a header, not a key
        temperature=temperature,
        timeout=timeout_s,
        max_completion_tokens=max_tokens,
        max_retries=max_retries,
        **options,
    )


MIXED = "mixed"
"""``mixed`` or ``mixed:<model>``: the rules first, the model only below ``THRESHOLD``."""


def parse_choice(choice: str | None) -> tuple[str | None, bool]:
    """Split a model choice into (model name or ``None`` for rules, mixed?)."""
    if not choice or choice in ("rules", "template"):
        return None, False
    if choice == MIXED or choice.startswith(MIXED + ":"):
        return choice.partition(":")[2] or "local", True
    return choice, False


def chat_model_for(choice: str | None, settings: Any) -> Any | None:
    """Build the chat model ``choice`` names (``local`` is the fetched local server)."""
    name, _ = parse_choice(choice)
    if name is None:
        return None
    base_url = settings.base_url
    if name == "local":
        name, base_url = LOCAL_MODEL_NAME, base_url or local_base_url(settings)
    key = settings.api_key.get_secret_value() if settings.api_key else None
    return make_chat_model(
        model=name,
        base_url=base_url,
        api_key=key,
        temperature=settings.temperature,
        timeout_s=settings.model_timeout_s,
        max_tokens=settings.max_tokens,
        max_retries=settings.model_max_retries,
    )


OPT_IN_NODES = frozenset({"tool", "reflect", "reply"})
"""Steps that use a model only when their own setting names one (``REACH_TOOL_MODEL``, ...).

Understanding makes the one model call a turn (a structured list of commands, slots
included); planning the calls again, critiquing a failure or phrasing the reply would each
cost the user seconds more on a CPU model, so ``REACH_MODEL`` and a run's ``Context.model``
do not turn them on."""


def node_choice(settings: Any, node: str, run_model: str | None = None) -> str:
    """The choice for one node: the run's ``Context.model``, else ``REACH_<NODE>_MODEL``.

    ``tool``, ``reflect`` and ``reply`` follow only their own setting (``OPT_IN_NODES``):
    ``template`` for the reply, ``rules`` for the others, unless it names a model.
    Understanding (``intent``) follows the run's choice, then ``REACH_INTENT_MODEL``, then
    ``REACH_MODEL``.
    """
    if node in OPT_IN_NODES:
        default = "template" if node == "reply" else "rules"
        return getattr(settings, f"{node}_model", None) or default
    if run_model:
        return run_model
    return getattr(settings, f"{node}_model", None) or settings.model


def chat_model_from_settings(settings: Any, node: str = "intent") -> Any | None:
    """The chat model a node should use, or ``None`` for rules (``REACH_<NODE>_MODEL``)."""
    return chat_model_for(node_choice(settings, node), settings)


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
        values: dict[str, Any] = {}
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
        self._slot_runnables: dict[str, Any] = {}
        self._flags: dict[str, dict[str, bool]] = {}
        """On-request flags the model set, by message text (the last 64 messages)."""
        self.calls: deque[dict[str, Any]] = deque(maxlen=256)
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

    def _intent_schema(self) -> dict[str, Any]:
        properties: dict[str, Any] = {
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

    def _slot_schema(self, option: IntentOption) -> dict[str, Any]:
        properties = {
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

    def _structured(self, schema: dict[str, Any]) -> Any:
        strict = True if self.method == "json_schema" else None
        return self.llm.with_structured_output(
            schema, method=self.method, strict=strict, include_raw=True
        )

    # ---- calls ---------------------------------------------------------------------------
    def _invoke(
        self, runnable: Any, messages: list[tuple[str, str]], step: str
    ) -> tuple[dict[str, Any], Any]:
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


def _fields(result: IntentResult) -> dict[str, Any]:
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
    "chat_model_for",
    "chat_model_from_settings",
    "node_choice",
    "options_from_scenarios",
    "parse_choice",
    "evidence_confidence",
    "label_probability",
    "make_chat_model",
    "resolvable_dates",
    "slot_supported",
]
