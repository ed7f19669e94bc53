"""Intent: read the latest message as commands and apply them to the task stack.

Understanding (``understanding``: the rules, a model, or both) says what the message does;
the engine (``understanding.engine``) decides what that means for the tasks; this node writes
the result into the state and the protocol. The turn then goes on as the routers say: a
clear task to slot filling, an unsure one (confidence below 0.6) to reflect-refine, an
answer to a pending confirmation to the node that asked, a courtesy answered here, a request
for a person to the hand-off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from config.limits import too_long
from contract.scenario import UNKNOWN, TaskSpec
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
from nodes.pending import closed_calls, set_aside_messages
from nodes.reply import describe_result
from nodes.services import Services
from nodes.slot_filling import vault_sensitive
from nodes.wording import Voice, too_long_reply
from security.intake import intake_findings, mask_user_codes, revealed, tokenize_text
from security.vault import IdentityVault
from state import (
    AgentState,
    Context,
    Overwrite,
    SlotValues,
    StateUpdate,
    TaskFrame,
    ValidatedProtocol,
)
from understanding.acts import EVIDENCE_PREFIX
from understanding.commands import Reading, records
from understanding.engine import IDLE_YES, Active, Plan, plan
from understanding.model_base import model_unavailable
from understanding.recognizer import detect_language
from understanding.view import view_of

_DECISION_RECORD = ("intent", "confidence", "intent_evidence", "decision")
"""What the trace's intent record and ``reach demo`` read from every intent update."""
MODEL_UNAVAILABLE = "model_unavailable"
"""The wording key and evidence of a turn whose model call failed, the rules reading no task."""
_ACT_OF_REASON = {"user_request": "human", "complaint": "complaint", "not_served": "beyond"}


def make_intent_node(services: Services) -> Node:
    """Build the node that reads the latest user message."""

    def intent(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        """Read the message as commands, apply them to the tasks, record what was understood."""
        update = _understood(state, runtime)
        if state.get("offered"):
            update["offered"] = None  # the question that offered a value is answered now
        tokenized = _tokenized(latest_user_message(state), context_of(runtime).user_id, services)
        if tokenized is not None:  # the next checkpoint keeps tokens, not the masked digits
            update["messages"] = [*update.get("messages", []), tokenized]
            # a PIN typed alone is no secret to the protocol's detector: starred here
            if "protocol" in update:
                update["protocol"] = mask_user_codes(update["protocol"])
        return update

    def _understood(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        message = latest_user_message(state)
        text = message_text(message)
        if too_long(text):  # answered, not understood: the thread goes on
            return _too_long(state, runtime, text)
        context = context_of(runtime)
        revealed_text = revealed(text, context.user_id, services.database)  # in memory only
        view = view_of(state, required=services.required_slots)
        reading = services.commands_for(context.model).generate(revealed_text, view)
        task_ids = _TaskIds(state, runtime, message)
        planned = plan(
            reading,
            view,
            state.get("task_stack") or [],
            services.task_rules,
            task_ids,
            threshold=services.confidence_threshold,
        )
        render = _Render(services, state, runtime, text, reading, planned)
        return render.update()

    return intent


class _TaskIds:
    """The ids of the tasks one message starts: the first as before, the others numbered."""

    def __init__(
        self, state: AgentState, runtime: Runtime[Context], message: HumanMessage | None
    ) -> None:
        summary = state.get("summary")
        self.base = derive_task_id(
            session_id(runtime),
            message,
            state.get("messages") or [],
            earlier_turns=summary["turns"] if summary else 0,
        )

    def __call__(self, n: int) -> str:
        return self.base if n == 0 else f"{self.base}.{n}"


class _Render:
    """Turns the engine's plan into the intent node's state update."""

    def __init__(
        self,
        services: Services,
        state: AgentState,
        runtime: Runtime[Context],
        text: str,
        reading: Reading,
        planned: Plan,
    ) -> None:
        self.services, self.state, self.runtime = services, state, runtime
        self.text, self.reading, self.plan = text, reading, planned
        self.language = reading.language or state.get("language") or "zh"
        self.voice = Voice(services.catalog, self.language)
        self.user_id = context_of(runtime).user_id

    def update(self) -> StateUpdate:
        kind = self.plan.kind
        if kind == "handoff":
            return self._handoff()
        if kind == "chitchat":
            return self._chitchat()
        if kind == "cancel":
            return self._cancel()
        if kind == "answer_pending":
            return self._answer_pending()
        if kind == "ask_pending_again":
            return self._ask_again()
        return self._tasks()

    # ---- pieces every update shares ----------------------------------------------------
    def _notes(
        self, content: Mapping[str, object], confidence: float = 1.0
    ) -> list[ValidatedProtocol]:
        user = protocol_message(
            self.state, self.runtime, role="user", content=self.text, confidence=1.0
        )
        note = protocol_message(
            self.state,
            self.runtime,
            role="agent",
            content={"stage": "intent", **content, "commands": self._records()},
            confidence=confidence,
            error=self.reading.error,
        )
        return [user, note]

    def _records(self) -> list[Any]:
        shown = {name: "******" for name in self.services.sensitive_slot_names}
        return list(records(self.reading.commands, shown=shown))

    def _common(self) -> StateUpdate:
        return {
            "language": self.language,
            "commands": self._records(),
            "corrected": [],
            "task_stack": self._vaulted_frames(self.plan.frames),
        }

    def _vaulted_frames(self, frames: tuple[TaskFrame, ...]) -> list[TaskFrame]:
        out: list[TaskFrame] = []
        for frame in frames:
            task = self.services.catalog.task(frame["intent"])
            slots = frame["slots"]
            if task is not None and task.sensitive_slots:
                slots = vault_sensitive(task, dict(slots), self.services, self.user_id)
            out.append({**frame, "slots": dict(slots)})
        return out

    # ---- a person takes over -----------------------------------------------------------
    def _handoff(self) -> StateUpdate:
        handoff = self.plan.handoff
        assert handoff is not None
        act = _ACT_OF_REASON[handoff.reason]
        cue = handoff.request if act == "beyond" else (handoff.evidence or ("",))[0]
        update: StateUpdate = {
            **self._common(),
            "intent_evidence": [f"{EVIDENCE_PREFIX}{act}", str(cue or "")],
            "decision": "handoff",
            "intent": self.state.get("intent") or UNKNOWN,  # the task a person takes over
            "error": None,
            "pending_tool_calls": [],
            "awaiting": None,
            "answer": None,
            "step_count": 1,
            "protocol": self._act_notes(act, str(cue or "")),
        }
        if self.state.get("awaiting"):
            update["messages"] = set_aside_messages(self.state, self.services)
        return update

    def _act_notes(self, act: str, cue: str) -> list[ValidatedProtocol]:
        return self._notes({"act": act, "evidence": [cue]})

    # ---- courtesies and "never mind" -----------------------------------------------------
    def _chitchat(self) -> StateUpdate:
        act = str(self.plan.act)
        waiting = bool(self.state.get("missing_slots")) and self.state.get("intent") not in (
            None,
            UNKNOWN,
        )
        label = self.voice.label(self.state.get("intent", ""))
        update: StateUpdate = {
            **self._common(),
            "intent_evidence": [f"{EVIDENCE_PREFIX}{act}", *self._evidence()],
            "decision": "answered",
            "step_count": 1,
        }
        if act == "bye" and waiting:
            reply = self.voice.say("act.bye_pending", task=label)
        elif act == IDLE_YES:
            reply = self._idle_yes()
        else:
            update.update(intent=UNKNOWN, confidence=1.0)  # no task is open after it
            if act == "greet":
                offered = self.services.offered_intents(context_of(self.runtime).user_role)
                labels = self.voice.join([self.voice.label(i) for i in offered])
                reply = (
                    self.voice.say("act.greet", tasks=labels)
                    if offered
                    else self.voice.say("act.greet_open")
                )
            else:
                reply = self.voice.say(f"act.{act}")
        return self._answered(update, act, reply)

    def _idle_yes(self) -> str:
        """Nothing waits for a yes: say so, and what was done last, if this task did it."""
        done = next(
            (
                r
                for r in reversed(self.state.get("tool_results") or [])
                if r.get("status") == "success"
                and (card := self.services.tools.get(str(r.get("tool", "")))) is not None
                and card.writes
            ),
            None,
        )
        if done is None:
            return self.voice.say("act.idle_yes")
        said = describe_result(
            {**done, "duplicated": False}, self.state, self.voice, self.services.catalog
        )
        return self.voice.say("act.idle_yes_done", done=said)

    def _cancel(self) -> StateUpdate:
        act = str(self.plan.act)
        update: StateUpdate = {
            **self._common(),
            "intent_evidence": [f"{EVIDENCE_PREFIX}never_mind", *self._evidence()],
            "decision": "answered",
            "step_count": 1,
            "intent": UNKNOWN,
            "confidence": 1.0,
        }
        if act == "dropped":
            waiting = self.state.get("intent")
            labels = self.voice.join([self.voice.label(i) for i in self.plan.dropped])
            reply = self.voice.say("act.dropped", task=labels)
            if waiting not in self.plan.dropped:  # a queued task went; the waiting one stays
                update.pop("intent")
                update.pop("confidence")
            else:
                update.update(
                    slots=Overwrite({}),
                    missing_slots=[],
                    invalid_slots={},
                    slot_offers={},
                    pending_tool_calls=[],
                    tool_results=Overwrite([]),
                )
        else:
            reply = self.voice.say("act.never_mind")
        return self._answered(update, "never_mind", reply)

    def _answered(self, update: StateUpdate, act: str, reply: str) -> StateUpdate:
        answer = protocol_message(self.state, self.runtime, role="assistant", content=reply)
        update["messages"] = [AIMessage(content=reply)]
        update["protocol"] = [*self._act_notes(act, (self._evidence() or [""])[0]), answer]
        return update

    def _evidence(self) -> list[str]:
        return [e for c in self.reading.commands for e in c.evidence][:4]

    def _model_unavailable(self) -> StateUpdate:
        """The model could not answer and the rules read no task: said as what it is."""
        update: StateUpdate = {
            **self._common(),
            "intent": UNKNOWN,
            "confidence": 0.0,
            "intent_evidence": [MODEL_UNAVAILABLE],
            "decision": "answered",
            "step_count": 1,
        }
        return self._answered(update, MODEL_UNAVAILABLE, self.voice.say(MODEL_UNAVAILABLE))

    # ---- a pending confirmation ----------------------------------------------------------
    def _answer_pending(self) -> StateUpdate:
        return {
            **self._common(),
            "decision": "confirm",
            "step_count": 1,
            "answer": {"decision": self.plan.decision},
            "protocol": self._notes({"answers": "pending"}),
        }

    def _ask_again(self) -> StateUpdate:
        awaiting = self.state.get("awaiting")
        question = awaiting["question"] if awaiting else ""
        voice = Voice(self.services.catalog, self.state.get("language", "zh"))
        again = f"{voice.say('confirm_again')}\n{question}"
        return {
            **self._common(),
            "decision": "confirm",
            "step_count": 1,
            "answer": None,
            "messages": [AIMessage(content=again)],
            "protocol": self._notes({"answers": "pending", "understood": False}),
        }

    # ---- tasks ---------------------------------------------------------------------------
    def _tasks(self) -> StateUpdate:
        active = self.plan.active
        assert active is not None
        if active.intent == UNKNOWN and model_unavailable(self.reading):
            return self._model_unavailable()
        task = self.services.catalog.task(active.intent)
        slots = dict(active.slots)
        if active.fresh and task is not None:
            slots = {**self._taken(task), **slots}
        if task is not None and task.sensitive_slots:
            slots = vault_sensitive(task, slots, self.services, self.user_id)
        update: StateUpdate = {
            **self._common(),
            "confidence": active.confidence,
            "intent_evidence": list(active.evidence),
            "decision": "continue",
            "retry_count": 0,
            "error": None,
            "pending_tool_calls": [],
            "awaiting": None,
            "answer": None,
            "task_id": active.task_id,
            "intent": active.intent,
        }
        if self.plan.kind == "correct_pending":
            update["messages"] = closed_calls(self.state)
            update["corrected"] = [
                {"slot": c["slot"], "value": self._shown(slots, c["slot"], c["value"])}
                for c in self.plan.corrected
            ]
        elif self.plan.keeps_pending:
            update["messages"] = set_aside_messages(self.state, self.services, kept=True)
        elif self.plan.corrected:
            update["corrected"] = [
                {"slot": c["slot"], "value": self._shown(slots, c["slot"], c["value"])}
                for c in self.plan.corrected
            ]
        if active.fresh:
            update.update(
                slots=Overwrite(slots),
                missing_slots=[],
                invalid_slots=dict(active.invalid),
                tool_results=Overwrite([]),
                step_count=Overwrite(1),
                intent_candidates=list(active.candidates),
            )
        else:
            invalid = {
                k: v for k, v in (self.state.get("invalid_slots") or {}).items() if k not in slots
            }
            update.update(slots=slots, invalid_slots={**invalid, **active.invalid}, step_count=1)
        shown = {**self.state, "task_id": active.task_id}
        content = {
            "intent": active.intent,
            "confidence": active.confidence,
            "evidence": list(active.evidence),
            "continues_task": not active.fresh,
            "source": self.reading.source,
            "tasks": 1 + sum(1 for f in self.plan.frames if f["status"] != "suspended"),
        }
        if self.reading.refused:
            content["refused"] = dict(self.reading.refused)
        user = protocol_message(shown, self.runtime, role="user", content=self.text, confidence=1.0)
        note = protocol_message(
            shown,
            self.runtime,
            role="agent",
            content={"stage": "intent", **content, "commands": self._records()},
            confidence=active.confidence,
            error=self.reading.error,
        )
        update["protocol"] = [user, note]
        return only_changes(self.state, update, keep=_DECISION_RECORD)

    def _taken(self, task: TaskSpec) -> SlotValues:
        """The slots the request answered last gives a task that takes from it (``takes_from``).

        The route and day searched for a booking ("订CA1858"); a search's filters ("下午的")
        only for a message that says none of the task's required slots.
        """
        state = self.state
        if (
            state.get("intent") not in task.takes_from
            or state.get("missing_slots")
            or state.get("awaiting")
        ):
            return {}
        known = state.get("slots") or {}
        names = set(task.required_slots)
        if not names & set(self.plan.active.slots if self.plan.active else ()):
            names |= set(task.optional_slots)  # a short follow-up keeps the filters too
        return {
            name: value
            for name, value in known.items()
            if name in names and name not in task.sensitive_slots and value is not None
        }

    def _shown(self, slots: SlotValues, name: str, value: Any) -> Any:
        masked = slots.get(f"{name}_masked")
        return masked if masked is not None else value


def active_of(planned: Plan) -> Active | None:
    """The task a plan goes on with (for callers that inspect plans)."""
    return planned.active


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


def _too_long(state: AgentState, runtime: Runtime[Context], text: str) -> StateUpdate:
    """Say the message is too long, in the user's language; nothing else changes."""
    language = detect_language(text) or state.get("language") or "zh"
    reply = too_long_reply(language)
    user = protocol_message(state, runtime, role="user", content=text, confidence=1.0)
    answer = protocol_message(state, runtime, role="assistant", content=reply)
    return {
        "messages": [AIMessage(content=reply)],
        "protocol": [user, answer],
        "decision": "answered",
        "step_count": 1,
    }


__all__ = ["make_intent_node", "set_aside_messages"]
