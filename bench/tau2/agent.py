"""Agent-Reach as a τ² agent: the compiled graph behind τ²'s ``generate_next_message``.

τ²'s orchestrator alternates: the agent says something to the user or sends tool calls to
the environment, and gets back the user's next message or the tools' answers. The graph runs
one user turn at a time in a worker thread. When the executor has let a call through
(validated, permitted, confirmed when it writes, not a duplicate), the pack's handler hands
it to the ``Bridge`` and waits: ``generate_next_message`` returns it to the orchestrator as a
tool call, and the orchestrator's answer, at the next ``generate_next_message``, is what the
handler returns. So every call that reaches τ²'s database is in τ²'s trajectory, and τ²'s
evaluator replays exactly what the graph did. When the graph's turn ends, its reply (or the
confirmation question it paused on) goes to the user; the user's next message resumes a
paused graph (``Command(resume=text)``: a yes, a no, or words read again as a correction).
"""

from __future__ import annotations

import json
import queue
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel
from tau2.agent.llm_agent import LLMAgent
from tau2.data_model.message import (
    AssistantMessage,
    Message,
    MultiToolMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

from bench.tau2.packs import tau2_pack
from config.settings import get_settings
from graph.builder import build_graph
from nodes.services import Services
from observability.audit import AuditLog
from packs.understanding import BUDGET_TOKENS
from state import Context
from storage.db import Database
from tools.executor.errors import UserFixableError
from tools.executor.pipeline import ActionExecutor
from tools.executor.stores import MemoryIdempotencyStore, MemoryResultCache
from tools.registry.cards import ToolRegistry

AGENT_NAME = "agent_reach"
TURN_TIMEOUT_S = 900.0
"""Longest a graph turn may take between two things to say (a model call is seconds)."""
KEEP_TURNS = 8
"""Turns of messages the graph's state keeps (what the command generator can read)."""
USER_ROLE = "customer"


class GraphStopped(RuntimeError):
    """The graph's worker ended while a call waited for its answer."""


@dataclass
class Usage(BaseCallbackHandler):
    """Model calls and tokens of one agent, counted as LangChain reports them."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    largest_prompt: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        """Add one call's usage."""
        usage: dict[str, Any] = {}
        for generations in response.generations:
            for generation in generations:
                message = getattr(generation, "message", None)
                usage = dict(getattr(message, "usage_metadata", None) or {}) or usage
        with self.lock:
            self.calls += 1
            prompt = int(usage.get("input_tokens") or 0)
            self.prompt_tokens += prompt
            self.completion_tokens += int(usage.get("output_tokens") or 0)
            self.largest_prompt = max(self.largest_prompt, prompt)


class Bridge:
    """Carries the graph's calls out to τ² and the answers back, between two threads."""

    def __init__(self) -> None:
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._answers: dict[str, queue.Queue[ToolMessage | None]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def invoke(self, name: str, arguments: BaseModel) -> Any:
        """Send one call out and wait for τ²'s answer (called in the executor's thread)."""
        call_id = f"call_{uuid.uuid4().hex[:12]}"
        answer: queue.Queue[ToolMessage | None] = queue.Queue(maxsize=1)
        with self._lock:
            if self._closed:
                raise GraphStopped("the conversation has ended; the call was not sent")
            self._answers[call_id] = answer
        self.events.put(("call", ToolCall(id=call_id, name=name, arguments=_json(arguments))))
        message = answer.get(timeout=TURN_TIMEOUT_S)
        if message is None:
            raise GraphStopped("the conversation ended before the call was answered")
        content = message.content or ""
        if message.error:
            raise UserFixableError(content.removeprefix("Error: ").strip() or "failed")
        try:
            return json.loads(content)
        except ValueError:
            return content

    def answer(self, message: ToolMessage) -> None:
        """Hand τ²'s answer to the call waiting for it."""
        with self._lock:
            waiting = self._answers.pop(message.id, None)
        if waiting is None:
            msg = f"no call {message.id} is waiting for an answer"
            raise GraphStopped(msg)
        waiting.put(message)

    def close(self) -> None:
        """The conversation has ended: release every call still waiting, refuse new ones.

        τ²'s orchestrator may stop (its step limit, the user's stop) while a call it was sent
        waits for an answer that will never come. Left waiting, the executor's worker thread
        would hold the interpreter's exit for ``TURN_TIMEOUT_S`` (15 min of idle CI).
        """
        with self._lock:
            self._closed = True
            waiting, self._answers = list(self._answers.values()), {}
        for answer in waiting:
            answer.put(None)


@dataclass
class ReachState:
    """The τ² agent state: which graph thread this conversation is."""

    thread_id: str
    messages: list[Message] = field(default_factory=list)


class ReachAgent(LLMAgent):
    """The compiled graph with a pack of the domain's tools, as a τ² ``LLMAgent``.

    τ² builds it like its own ``llm_agent`` (``tools``, ``domain_policy``, ``llm``,
    ``llm_args``), so both run on the same endpoint and seed.
    """

    instances: list[ReachAgent] = []
    """Every agent built in this process, latest last (the runner reads their counts)."""

    def __init__(
        self,
        tools: list[Any],
        domain_policy: str,
        llm: str | None = None,
        llm_args: dict[str, Any] | None = None,
    ) -> None:
        """Build the pack, the graph and its model client for one conversation."""
        super().__init__(tools=tools, domain_policy=domain_policy, llm=llm, llm_args=llm_args)
        self.bridge = Bridge()
        self.usage = Usage()
        self.audit = AuditLog(None)
        self.turns: list[dict[str, Any]] = []
        self._said_ids: set[str] = set()
        self._dir = tempfile.TemporaryDirectory(prefix="reach-tau2-")
        pack = tau2_pack(tools, domain_policy, domain="tau2", invoke=self.bridge.invoke)
        settings = get_settings().model_copy(
            update={"data_dir": Path(self._dir.name), "state_keep_turns": KEEP_TURNS}
        )
        services = Services(
            scenarios=[pack.scenario],
            settings=settings,
            database_factory=lambda: Database(Path(self._dir.name) / "business.db"),
            executor_factory=self._executor,
        )
        self.chat = self._chat_model()
        services.commands = pack.generator(
            self.chat, services.rule_commands, budget_tokens=BUDGET_TOKENS
        )
        self.app = build_graph(checkpointer=InMemorySaver(), services=services)
        self._worker: threading.Thread | None = None
        ReachAgent.instances.append(self)

    def _executor(self, registry: ToolRegistry) -> ActionExecutor:
        return ActionExecutor(
            registry,
            idempotency=MemoryIdempotencyStore(),
            cache=MemoryResultCache(),
            audit=self.audit,
        )

    def _chat_model(self) -> ChatOpenAI:
        args = dict(self.llm_args)
        name = (self.llm or "local").split("/", 1)[-1]
        return ChatOpenAI(
            model=name,
            base_url=args.get("base_url"),
            api_key=args.get("api_key") or "local",
            temperature=float(args.get("temperature", 0.0)),
            seed=args.get("seed"),
            timeout=float(args.get("timeout", 600)),
            max_retries=int(args.get("num_retries", 1)),
            callbacks=[self.usage],
        )

    # ---- τ²'s agent interface -------------------------------------------------------------
    def get_init_state(self, message_history: list[Message] | None = None) -> ReachState:  # type: ignore[override]
        """A new graph thread; τ²'s tasks here start with no history."""
        return ReachState(thread_id=f"tau2-{uuid.uuid4().hex[:10]}")

    def generate_next_message(  # type: ignore[override]
        self, message: UserMessage | ToolMessage | MultiToolMessage, state: ReachState
    ) -> tuple[AssistantMessage, ReachState]:
        """Run the graph until it has a call to send out or something to say."""
        if isinstance(message, MultiToolMessage):
            for answer in message.tool_messages:
                self.bridge.answer(answer)
        elif isinstance(message, ToolMessage):
            self.bridge.answer(message)
        else:
            self._start_turn(message.content or "", state)
        kind, value = self.bridge.events.get(timeout=TURN_TIMEOUT_S)
        if kind == "call":
            reply = AssistantMessage(role="assistant", tool_calls=[value])
        elif kind == "error":
            raise value
        else:
            reply = AssistantMessage(role="assistant", content=value)
        state.messages.extend([message, reply])
        return reply, state

    def stop(self, message: Any = None, state: Any = None) -> None:
        """Release a call still waiting for τ², let the worker go; the audit writer drains."""
        self.bridge.close()
        if self._worker is not None:
            self._worker.join(timeout=5)
        self.audit.close()
        self._dir.cleanup()

    def set_seed(self, seed: int) -> None:
        """Use τ²'s per-trial seed for the model, as its ``llm_agent`` does."""
        self.llm_args["seed"] = seed
        self.chat.seed = seed  # the structured runnable holds this same client

    # ---- a graph turn in a worker thread ------------------------------------------------------
    def _start_turn(self, text: str, state: ReachState) -> None:
        config = {"configurable": {"thread_id": state.thread_id}}
        paused = bool(self.app.get_state(config).interrupts)
        payload: Any = Command(resume=text) if paused else {"messages": [("user", text)]}
        context = Context(user_id=f"tau2_{state.thread_id}", user_role=USER_ROLE)

        def run() -> None:
            try:
                out = self.app.invoke(payload, config, context=context)
                self.bridge.events.put(("say", self._said(out, config)))
            except Exception as error:  # noqa: BLE001 - handed to the orchestrator's thread
                self.bridge.events.put(("error", error))

        self._worker = threading.Thread(target=run, name="reach-turn", daemon=True)
        self._worker.start()

    def _said(self, out: dict[str, Any], config: dict[str, Any]) -> str:
        texts: list[str] = []
        for item in reversed(out.get("messages") or []):
            if item.type == "human" or (item.id and item.id in self._said_ids):
                break  # said in an earlier turn (a resumed turn has no new human message)
            if item.type == "ai" and isinstance(item.content, str) and item.content.strip():
                texts.append(item.content)
            if item.id:
                self._said_ids.add(item.id)
        snapshot = self.app.get_state(config)
        if not texts and snapshot.interrupts:
            question = getattr(snapshot.interrupts[0], "value", {}) or {}
            texts.append(str(question.get("question") or "Shall I go ahead? (yes/no)"))
        self.turns.append(
            {
                "commands": list(out.get("commands") or []),
                "paused": bool(snapshot.interrupts),
            }
        )
        return "\n".join(reversed(texts)) or "Could you tell me more about what you need?"


def _json(arguments: BaseModel) -> dict[str, Any]:
    dumped: dict[str, Any] = arguments.model_dump(mode="json", exclude_unset=True)
    return dumped


__all__ = ["AGENT_NAME", "Bridge", "ReachAgent", "Usage"]
