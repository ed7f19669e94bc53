"""Cut a message into the clauses that may each be a request of their own.

"查一下 OD-… 到哪了，再帮我看看北京天气" is two requests; "帮我转500元给ACC-2001，密码123456"
is one request said in two clauses. Cutting is generous (every comma, "和", "and", "另外",
"then"); the rule generator joins clauses back unless one names a task of its own
(``understanding.rules``). Nothing here names an intent, a slot or a tool.
"""

from __future__ import annotations

import re

_CUT = re.compile(
    r"\s*(?:"
    r"[，,;；。!！?？\n]+\s*(?:另外|还有|顺便|同时|以及|然后|接着|并且|而且|之后|再|也)?"
    r"|另外|还有就是|还有|顺便|同时|以及|然后|接着|并且|之后再|"
    r"再(?=帮|查|看|给|问|订|催|转|约|挂|退|取消|来|说)|"
    r"和(?=[^，,。]{0,3}(?:帮|查|看|问|订|催|转|约|挂|退|取消))|"
    r"(?<=[\w)）])\s+(?:and also|and then|and|also|then|plus|as well as)\s+"
    r")\s*",
    re.IGNORECASE,
)
_ENTITY_JOIN = re.compile(r"\s*(?:和|与|跟|还有|以及|、|/|\band\b|&)\s*", re.IGNORECASE)
MAX_CLAUSES = 6
"""A message cut into more is read whole: a list, a paste, not several requests."""


def clauses(text: str) -> list[str]:
    """Return the clauses of ``text`` in order, without the words that joined them."""
    parts = [part.strip() for part in _CUT.split(text) if part and part.strip()]
    parts = [part for part in parts if re.search(r"\w", part)]
    if len(parts) > MAX_CLAUSES:
        return [text.strip()]
    return parts or [text.strip()]


def entity_pieces(text: str) -> list[str]:
    """Cut ``text`` where two names are joined ("北京和上海", "OD-1 and OD-2")."""
    return [piece for piece in _ENTITY_JOIN.split(text) if piece.strip()]


__all__ = ["MAX_CLAUSES", "clauses", "entity_pieces"]
