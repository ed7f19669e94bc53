"""Intent recognition: what does the user want, and how sure are we?"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from nodes.acts import EVIDENCE_PREFIX, HANDED_OVER, ReadAct, is_follow_up, read_act
from nodes.common import (
    Node,
    context_of,
    derive_task_id,
    latest_user_message,
    message_text,
    only_changes,
    protocol_message,
    session_id,
)
from nodes.confirmation import read_decisions
from nodes.prompts import Voice
from nodes.services import Services
from nodes.slot_filling import MASKED_SUFFIX
from nodes.tasks import UNKNOWN
from nodes.understanding import IntentResult, detect_language
from state import AgentState, Context, Overwrite, PendingConfirmation, SuspendedTask
from tools.intake import intake_findings, mask_user_codes, revealed, tokenize_text
from tools.limits import too_long, too_long_reply
from tools.vault import IdentityVault

MAX_SUSPENDED = 3
_DECISION_RECORD = ("intent", "confidence", "intent_evidence", "decision")
"""What the trace's intent record and ``reach demo`` read from every intent update."""
_RESUME = re.compile(r"继续|接着|回到刚才|刚才那个|go back|continue|resume", re.IGNORECASE)


def _resumable(
    suspended: list[SuspendedTask], intent: str, confident: bool, text: str
) -> SuspendedTask | None:
    """Return the set-aside task this message returns to, if any (the latest first)."""
    for task in reversed(suspended):
        if confident and task["intent"] == intent:
            return task
    if suspended and _RESUME.search(text) and (not confident or intent == UNKNOWN):
        return suspended[-1]
    return None


def make_intent_node(services: Services) -> Node:
    """Build the node that classifies the latest user message."""

    def intent(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Classify the message and decide whether it starts a task or continues one.

        A message continues the pending task when that task is waiting for slots and the
        message does not clearly ask for something else; the task id then stays, so the
        slots gathered so far are kept. Otherwise a new task starts with empty slots, and an
        unfinished task is set aside; asking for that kind of task again (or "继续") later
        picks it up with its slots, while the slots of one task never leak into another.
        """
        update = _understood(state, runtime)
        tokenized = _tokenized(latest_user_message(state), context_of(runtime).user_id, services)
        if tokenized is not None:  # the next checkpoint keeps tokens, not the masked digits
            update["messages"] = [*update.get("messages", []), tokenized]
            # a PIN typed alone is no secret to the protocol's detector: starred here
            if "protocol" in update:
                update["protocol"] = mask_user_codes(update["protocol"])
        return update

    def _understood(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        message = latest_user_message(state)
        text = message_text(message)
        # what is answered without understanding is answered before a model is asked
        if too_long(text):  # answered, not understood: the thread goes on
            return _too_long(state, runtime, text, detect_language(text))
        act = read_act(text)
        if act is not None and act.kind in HANDED_OVER:  # a person takes it from here
            return _handed_over(services, state, runtime, text, act)
        awaiting = state.get("awaiting")
        beyond = None if awaiting else services.catalog.beyond(text)
        if beyond is not None:  # known, not served here ("退票"): a person, not a near task
            return _handed_over(services, state, runtime, text, ReadAct("beyond", beyond.name))
        pending_intent = state.get("intent")
        waiting = bool(state.get("missing_slots")) and pending_intent not in (None, UNKNOWN)
        if act is not None and not awaiting:  # with an action pending, a "thanks" is no yes
            courtesy = _courtesy(services, state, runtime, text, act, waiting=waiting)
            if courtesy is not None:
                return courtesy
        result = services.understand_for(context_of(runtime).model).classify(text)
        if awaiting:
            answered = _answer_to_pending(services, state, runtime, awaiting, text, result)
            if answered is not None:
                return answered
        # a model may be sure a bare answer ("OD-…") is no task: that is no new request either
        confident = result.confidence >= services.confidence_threshold and result.intent != UNKNOWN
        continues = waiting and (result.intent == pending_intent or not confident)
        language = result.language or state.get("language") or "zh"

        update: dict[str, Any] = {
            "language": language,
            "confidence": result.confidence,
            "intent_evidence": list(result.evidence),
            "decision": "continue",
            "retry_count": 0,
            "error": None,
            "pending_tool_calls": [],
            "awaiting": None,
            "answer": None,
        }
        if awaiting:  # a new request: the pending action is set aside, unrun, and said so
            update["messages"] = set_aside_messages(state, services)
        suspended = list(state.get("suspended_tasks") or [])
        resumed = None if continues else _resumable(suspended, result.intent, confident, text)
        if continues:
            task_id = state.get("task_id") or _new_task_id(state, runtime, message)
            update["step_count"] = 1
        else:
            if waiting:  # set the unfinished task aside, to come back to
                suspended.append(
                    {
                        "intent": str(pending_intent),
                        "task_id": state.get("task_id", ""),
                        "slots": dict(state.get("slots") or {}),
                        "missing_slots": list(state.get("missing_slots") or []),
                    }
                )
            if resumed is not None:
                suspended.remove(resumed)
                task_id = str(resumed["task_id"])
                update.update(
                    intent=resumed["intent"],
                    confidence=max(result.confidence, services.confidence_threshold),
                    slots=Overwrite(dict(resumed["slots"])),
                    missing_slots=list(resumed["missing_slots"]),
                )
            elif follow := None if confident else _follow_up(services, state, runtime, text):
                task_id = _new_task_id(state, runtime, message)  # the same request, anew
                intent, carried = follow
                update.update(
                    intent=intent,
                    confidence=services.confidence_threshold,
                    intent_evidence=[*result.evidence, f"follows up on {intent}"],
                    slots=Overwrite(carried),
                    missing_slots=[],
                )
            else:
                task_id = _new_task_id(state, runtime, message)
                update.update(intent=result.intent, slots=Overwrite({}), missing_slots=[])
            update.update(
                invalid_slots={},
                tool_results=Overwrite([]),
                step_count=Overwrite(1),
                suspended_tasks=suspended[-MAX_SUSPENDED:],
            )
        update["task_id"] = task_id
        shown = {**state, "task_id": task_id}
        user = protocol_message(shown, runtime, role="user", content=text, confidence=1.0)
        note = protocol_message(
            shown,
            runtime,
            role="agent",
            content={
                "stage": "intent",
                "intent": result.intent,
                "confidence": result.confidence,
                "evidence": list(result.evidence),
                "continues_task": continues,
                "source": result.source,
            },
            confidence=result.confidence,
            error=result.error,
        )
        update["protocol"] = [user, note]
        return only_changes(state, update, keep=_DECISION_RECORD)

    return intent


def _follow_up(
    services: Services, state: AgentState, runtime: Runtime[Context], text: str
) -> tuple[str, dict[str, Any]] | None:
    """Return the finished task's intent and the slots a follow-up on it starts with.

    "那上海呢" after the weather in Beijing is the weather in Shanghai: the last task's
    slots, those this message names replaced. Sensitive slots (a PIN, an ID number) are not
    carried into a new request; it asks for them again.
    """
    task = services.catalog.task(state.get("intent"))
    if task is None or not is_follow_up(text):
        return None
    context = context_of(runtime)
    found = services.understand_for(context.model).extract_slots(
        revealed(text, context.user_id, services.database), task.intent
    )
    if not found.slots:
        return None
    kept = {
        name: value
        for name, value in (state.get("slots") or {}).items()
        if name.removesuffix(MASKED_SUFFIX) not in task.sensitive_slots
    }
    return task.intent, {**kept, **found.slots}


def _new_task_id(state: AgentState, runtime: Runtime[Context], message: HumanMessage | None) -> str:
    """Return the id of a task this message starts (stable across replays of the turn)."""
    summary = state.get("summary")
    return derive_task_id(
        session_id(runtime),
        message,
        state.get("messages") or [],
        earlier_turns=summary["turns"] if summary else 0,
    )


def _tokenized(
    message: HumanMessage | None, user_id: str, services: Services
) -> HumanMessage | None:
    """Return the user's message with ID numbers and PINs swapped for vault tokens, if any.

    Embedded use has no intake middleware: the turn's input reaches the checkpointer with
    the masking serializer's stars, so a run resumed after a crash could not read the PIN and
    would ask for it again. Replacing the message (same id) here makes every later
    checkpoint hold the owner's tokens, which the nodes reveal in memory.
    """
    if message is None or not isinstance(message.content, str):
        return None
    text = message.content
    if not intake_findings(text):
        return None
    tokenized = tokenize_text(text, user_id, IdentityVault(services.database))
    if tokenized == text:
        return None
    return HumanMessage(content=tokenized, id=message.id)


def _too_long(
    state: AgentState, runtime: Runtime[Context], text: str, language: str | None
) -> dict[str, Any]:
    """Say the message is too long, in the user's language; nothing else changes."""
    language = language or state.get("language") or "zh"
    reply = too_long_reply(language)
    user = protocol_message(state, runtime, role="user", content=text, confidence=1.0)
    answer = protocol_message(state, runtime, role="assistant", content=reply)
    return {
        "messages": [AIMessage(content=reply)],
        "protocol": [user, answer],
        "decision": "answered",
        "step_count": 1,
    }


def _act_notes(
    state: AgentState, runtime: Runtime[Context], text: str, act: ReadAct
) -> list[dict[str, Any]]:
    """Return the protocol messages of a message read as ``act``: the user's, and the reading."""
    user = protocol_message(state, runtime, role="user", content=text, confidence=1.0)
    note = protocol_message(
        state,
        runtime,
        role="agent",
        content={"stage": "intent", "act": act.kind, "evidence": [act.cue]},
        confidence=1.0,
    )
    return [user, note]


def _handed_over(
    services: Services,
    state: AgentState,
    runtime: Runtime[Context],
    text: str,
    act: ReadAct,
) -> dict[str, Any]:
    """Send a request for a person, a complaint, or a request beyond us to the hand-off node.

    The open task and its slots stay for whoever takes over; a pending confirmation is
    closed unrun, since nobody is left to answer it.
    """
    update: dict[str, Any] = {
        "language": detect_language(text) or state.get("language") or "zh",
        "intent_evidence": [f"{EVIDENCE_PREFIX}{act.kind}", act.cue],
        "decision": "handoff",
        "intent": state.get("intent") or UNKNOWN,  # the task a person takes over, if any
        "error": None,
        "pending_tool_calls": [],
        "awaiting": None,
        "answer": None,
        "step_count": 1,
        "protocol": _act_notes(state, runtime, text, act),
    }
    if state.get("awaiting"):
        update["messages"] = set_aside_messages(state, services)
    return update


def _courtesy(
    services: Services,
    state: AgentState,
    runtime: Runtime[Context],
    text: str,
    act: ReadAct,
    *,
    waiting: bool,
) -> dict[str, Any] | None:
    """Answer hello, thanks, goodbye or "never mind"; ``None`` when the open question stands.

    "Never mind" while a task waits for its slots drops that task; a hello or a thanks then
    leaves it waiting, and slot filling asks its question again.
    """
    if waiting and act.kind in ("greet", "thanks"):
        return None
    language = detect_language(text) or state.get("language") or "zh"
    voice = Voice(services.catalog, language)
    label = voice.label(state.get("intent", ""))
    update: dict[str, Any] = {
        "language": language,
        "intent_evidence": [f"{EVIDENCE_PREFIX}{act.kind}", act.cue],
        "decision": "answered",
        "step_count": 1,
    }
    if not (act.kind == "bye" and waiting):  # no task is open after it
        update.update(intent=UNKNOWN, confidence=1.0)
    if act.kind == "never_mind" and waiting:
        reply = voice.say("act.dropped", task=label)
        update.update(
            slots=Overwrite({}),
            missing_slots=[],
            invalid_slots={},
            slot_offers={},
            pending_tool_calls=[],
            tool_results=Overwrite([]),
        )
    elif act.kind == "bye" and waiting:
        reply = voice.say("act.bye_pending", task=label)
    elif act.kind == "greet":
        offered = services.offered_intents(context_of(runtime).user_role)
        reply = (
            voice.say("act.greet", tasks=voice.join([voice.label(i) for i in offered]))
            if offered
            else voice.say("act.greet_open")
        )
    else:
        reply = voice.say(f"act.{act.kind}")
    answer = protocol_message(state, runtime, role="assistant", content=reply)
    update["messages"] = [AIMessage(content=reply)]
    update["protocol"] = [*_act_notes(state, runtime, text, act), answer]
    return update


def _answer_to_pending(
    services: Services,
    state: AgentState,
    runtime: Runtime[Context],
    awaiting: PendingConfirmation,
    text: str,
    result: IntentResult,
) -> dict[str, Any] | None:
    """Read a typed message on a thread waiting for a confirmation.

    A yes, a no or a correction of a detail answers the pending action (the acting node
    uses it instead of pausing again); an unclear message asks again. A new request sets the
    pending action aside, unrun, and says so (``None``: the caller starts the new task).
    """
    language = state.get("language", "zh")
    task = services.catalog.task(awaiting["intent"])
    decisions = read_decisions(text, 1)
    # A confident, different request wins over slot values it happens to contain
    # ("OD-… 到哪了" while a refund waits is a new question, not a corrected order id).
    new_request = (
        decisions is None
        and result.intent not in (UNKNOWN, awaiting["intent"])
        and result.confidence >= services.confidence_threshold
    )
    correction = (
        task is not None
        and decisions is None
        and not new_request
        and bool(
            services.understand.extract_slots(
                revealed(text, context_of(runtime).user_id, services.database), task.intent
            ).slots
        )
    )
    voice = Voice(services.catalog, language)
    if new_request:
        return None
    note = protocol_message(state, runtime, role="user", content=text, confidence=1.0)
    update: dict[str, Any] = {"decision": "confirm", "step_count": 1, "protocol": [note]}
    if decisions is not None or correction:
        update["answer"] = text
        return update
    again = f"{voice.say('confirm_again')}\n{awaiting['question']}"
    update["messages"] = [AIMessage(content=again)]
    update["answer"] = None
    return update


def set_aside_messages(state: AgentState, services: Services) -> list[Any]:
    """Close a pending action the user moved on from: its calls answered as not run."""
    awaiting = state.get("awaiting")
    if not awaiting:
        return []
    voice = Voice(services.catalog, state.get("language", "zh"))
    out: list[Any] = []
    answered = {m.tool_call_id for m in state.get("messages") or [] if isinstance(m, ToolMessage)}
    for message in reversed(state.get("messages") or []):
        if isinstance(message, AIMessage) and message.tool_calls:
            for call in message.tool_calls:
                if call["id"] not in answered:
                    out.append(
                        ToolMessage(
                            content=json.dumps({"status": "rejected", "message": "not run"}),
                            tool_call_id=call["id"],
                            name=call["name"],
                            status="error",
                        )
                    )
            break
    out.append(AIMessage(content=voice.say("set_aside", task=voice.label(awaiting["intent"]))))
    return out
