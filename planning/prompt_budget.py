"""Bounded prompts: estimate tokens offline and fit a conversation into a budget.

No tokenizer is downloaded (tiktoken fetches its encodings, which fails offline). The estimate
is a CJK-aware heuristic: one token per CJK character (Qwen's and GPT's BPE vocabularies
encode most common Hanzi as one token, rarer ones as two or three), and one token per four
other characters (English BPE averages about four characters per token), plus a few tokens of
framing per chat message. Measured against Qwen2.5's tokenizer (llama-server ``/tokenize``)
on the 309 texts of ``eval/intents.jsonl``: estimate / real = 1.25 for Chinese (Qwen merges
common words, about 0.8 tokens per Hanzi), 1.04 for English, 1.06 for mixed text, summed over
each set; per text between 0.4 (short texts with ids) and 3.0. It errs high, which is the safe
side for a budget. ``tests/services/test_local_model.py`` repeats the comparison.

A prompt is built from, in order: the system text, a short task summary (goal, done, pending),
tool results cut to their one-line summaries, and as many of the most recent turns as fit;
older turns are replaced by one line that says how many were left out. However long the
conversation, the prompt stays under the budget.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
MESSAGE_OVERHEAD = 4
"""Tokens of chat framing per message (role markers, separators)."""
DEFAULT_BUDGET = 1500
"""Prompt tokens for understanding calls: well inside a 4,096-token context with room for
``max_tokens`` of output."""
SUMMARY_CHARS = 160
"""A tool result's summary is cut to this many characters."""

Role = Literal["system", "user", "assistant"]


def estimate_tokens(text: str) -> int:
    """Estimate the tokens of ``text``: CJK characters one each, other characters four per token."""
    if not text:
        return 0
    cjk = len(_CJK.findall(text))
    other = len(text) - cjk
    return cjk + math.ceil(other / 4)


def estimate_messages(messages: Sequence[tuple[str, str]]) -> int:
    """Estimate the tokens of a chat prompt given as ``(role, content)`` pairs."""
    return sum(estimate_tokens(content) + MESSAGE_OVERHEAD for _, content in messages)


@dataclass(frozen=True)
class TaskSummary:
    """What the model needs to know about the task in progress, in a few lines."""

    goal: str
    """The intent or request being served, e.g. ``REQUEST_REFUND``."""
    done: tuple[str, ...] = ()
    """Steps finished, with their outcome (``query_order_status: delivered``)."""
    pending: tuple[str, ...] = ()
    """What is still missing or to do (``order_id``, ``confirmation``)."""
    slots: Mapping[str, Any] = field(default_factory=dict)
    """Values known so far (secrets must already be masked by the caller)."""

    def render(self) -> str:
        """Return the summary as compact text."""
        lines = [f"Task: {self.goal}"]
        if self.slots:
            lines.append("Known: " + ", ".join(f"{k}={v}" for k, v in self.slots.items()))
        if self.done:
            lines.append("Done: " + "; ".join(self.done))
        if self.pending:
            lines.append("Pending: " + ", ".join(self.pending))
        return "\n".join(lines)


def cut_summary(result: Mapping[str, Any] | str, limit: int = SUMMARY_CHARS) -> str:
    """Reduce a tool result envelope to its summary line, at most ``limit`` characters.

    Envelopes carry ``summary`` (and ``tool``, ``status``); their ``data`` never goes into a
    prompt. A bare string is cut as it is.
    """
    if isinstance(result, str):
        text = result
    else:
        head = " ".join(str(result[k]) for k in ("tool", "status") if result.get(k))
        text = f"{head}: {result.get('summary') or ''}".strip(": ")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bounded_messages(
    system: str,
    turns: Sequence[tuple[str, str]],
    *,
    summary: TaskSummary | None = None,
    tool_results: Sequence[Mapping[str, Any] | str] = (),
    budget: int = DEFAULT_BUDGET,
    max_turn_chars: int = 600,
) -> list[tuple[str, str]]:
    """Return ``(role, content)`` messages that fit ``budget`` estimated tokens.

    The system text, the task summary and the tool summaries always go first (the summaries
    are cut); then the newest turns, each cut to ``max_turn_chars``, are added backwards until
    the budget is spent. The latest turn is always kept, cut further if it alone is too long.
    """
    context = system
    if summary is not None:
        context += "\n\n" + summary.render()
    if tool_results:
        context += "\n\nTool results:\n" + "\n".join(f"- {cut_summary(r)}" for r in tool_results)
    head: list[tuple[str, str]] = [("system", context)]
    spent = estimate_messages(head)
    omitted_note = MESSAGE_OVERHEAD + 12
    kept: list[tuple[str, str]] = []
    for index, (role, content) in enumerate(reversed(turns)):
        text = content if len(content) <= max_turn_chars else content[:max_turn_chars] + "…"
        cost = estimate_tokens(text) + MESSAGE_OVERHEAD
        older = len(turns) - index - 1
        reserve = omitted_note if older else 0
        if spent + cost + reserve > budget:
            if not kept:  # the latest turn: cut it to what is left
                room = max(budget - spent - reserve - MESSAGE_OVERHEAD, 8)
                kept.append((role, _cut_to_tokens(text, room)))
            break
        kept.append((role, text))
        spent += cost
    dropped = len(turns) - len(kept)
    if dropped:
        head.append(("system", f"({dropped} earlier turns omitted)"))
    return head + list(reversed(kept))


def _cut_to_tokens(text: str, tokens: int) -> str:
    out: list[str] = []
    for char in text:
        if estimate_tokens("".join(out) + char + "…") > tokens:
            return "".join(out) + "…"
        out.append(char)
    return text


__all__ = [
    "DEFAULT_BUDGET",
    "TaskSummary",
    "bounded_messages",
    "cut_summary",
    "estimate_messages",
    "estimate_tokens",
]
