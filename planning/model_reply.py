"""An optional model reply, phrased from the templated answer and the results' summaries.

Templates stay the default (``REACH_REPLY_MODEL`` unset). With a model configured the model
gets a bounded prompt (``planning.prompt_budget``): the task summary, each result envelope cut
to its one-line summary (never its data), the recent turns, and the templated answer as the
draft to rephrase. The model's text is used only if it is plain prose of reasonable length
and every number in it (order ids, amounts, dates) already appears in the draft or the
summaries; otherwise, or when the call fails, the template is the reply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp

from planning.prompt_budget import TaskSummary, bounded_messages, cut_summary
from understanding.model_recognizer import describe_error

REPLY_PROMPT = (
    "You are a customer-service agent. Rewrite the draft answer for the customer in a "
    "friendly, concise way, in {language}. Keep every fact of the draft; add no fact, number, "
    "id, date or promise that is not in the draft or the tool results. Plain text only."
)
LANGUAGES = {"zh": "Chinese", "en": "English"}
_NUMBER = re.compile(r"\d+(?:[.:]\d+)?")


def unsupported_numbers(text: str, sources: Sequence[str]) -> list[str]:
    """Numbers in ``text`` that none of ``sources`` contains (a made-up id or amount)."""
    known = set(_NUMBER.findall("\n".join(sources)))
    return [n for n in _NUMBER.findall(text) if n not in known]


def phrase_reply(
    llm: Any,
    *,
    draft: str,
    results: Sequence[Mapping[str, Any]],
    goal: str,
    language: str,
    turns: Sequence[tuple[str, str]],
    budget: int = 1200,
) -> tuple[str, str | None]:
    """Return (reply, error): the model's phrasing when it is safe, else the draft and why."""
    summaries = [cut_summary(r) for r in results]
    summary = TaskSummary(goal=goal, done=tuple(summaries))
    system = REPLY_PROMPT.format(language=LANGUAGES.get(language, language))
    prompt = bounded_messages(
        system, [*turns, ("user", f"Draft: {draft}")], summary=summary, budget=budget
    )
    roles = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    try:
        answer = llm.invoke([roles[role](content) for role, content in prompt])
    except GraphBubbleUp:
        raise
    except Exception as error:  # noqa: BLE001 - the template answers instead
        return draft, describe_error(error)
    text = answer.content if isinstance(answer.content, str) else ""
    text = text.strip()
    if not text:
        return draft, "invalid output: empty"
    if text.startswith(("{", "[", "```")) or len(text) > 4 * len(draft) + 200:
        return draft, "invalid output: not a short plain reply"
    extra = unsupported_numbers(text, [draft, *summaries])
    if extra:
        return draft, f"refused: numbers not in the results: {', '.join(extra[:5])}"
    return text, None


__all__ = ["REPLY_PROMPT", "phrase_reply", "unsupported_numbers"]
