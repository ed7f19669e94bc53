"""One thread of the compiled graph, spoken to as a person would: say, answer, read, check."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from state import Context
from tests.conftest import ALICE, fast_executor


class Talk:
    """One thread: say things, answer pauses, read the replies and the database."""

    def __init__(self, app: Any, db: Any, context: Context = ALICE, thread: str = "t1") -> None:
        self.app, self.db, self.context = app, db, context
        self.config = {"configurable": {"thread_id": thread}}
        self.out: dict[str, Any] = {}

    def __call__(self, *turns: str) -> Talk:
        for text in turns:
            if text.startswith("!resume "):
                value: Any = Command(resume=text.removeprefix("!resume "))
            else:
                value = {"messages": [("user", text)]}
            self.out = self.app.invoke(value, self.config, context=self.context)
        return self

    @property
    def replies(self) -> str:
        """The AI messages of the last turn."""
        texts = []
        for message in reversed(self.out["messages"]):
            if message.type == "human":
                break
            if message.type == "ai" and message.content:
                texts.append(message.content)
        return "\n".join(reversed(texts))

    @property
    def pending(self) -> bool:
        return bool(self.app.get_state(self.config).interrupts)

    def rows(self, sql: str) -> list[dict[str, Any]]:
        return self.db.query(sql)

    def results(self, tool: str) -> list[dict[str, Any]]:
        return [r for r in self.out.get("tool_results") or [] if r.get("tool") == tool]


def build(db: Any) -> Any:
    from graph.builder import build_graph  # noqa: PLC0415 - after the env fixtures

    return build_graph(
        checkpointer=InMemorySaver(), database_factory=lambda: db, executor_factory=fast_executor
    )
