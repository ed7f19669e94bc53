"""Mask at intake: swap ID numbers and PINs in what a client sends for vault tokens.

A server that brings its own checkpointer (``langgraph dev``'s, Aegra's PostgreSQL saver)
stores the run's input (its runs table, the ``__start__`` writes, the first checkpoint's
messages) before any node of ours runs, and our masking serializer is not in its path. So
the sensitive values must already be gone from the request: ``graph/http_app.py`` (ASGI
middleware, on every engine that runs our ``http.app`` around its routes) and the
``create_run`` handler of ``graph/auth.py`` (on LangGraph servers) pass run and state
payloads through ``tokenize_payload`` with the authenticated user as owner.

A token is the vault's: ``pii:`` and 24 hex digits, HMAC-keyed by owner and value
(``security.vault``). It is deterministic, so the token intake writes into the message is the
very token slot filling would store the value under: the slot and the message agree, and a
replayed turn gives the same request id. Nodes that must read the value (slot extraction)
call ``reveal_text`` and keep the result in memory only; only the owner's tokens reveal,
so a token copied from someone else's thread stays a token.

Masked: resident ID numbers (any separators, any digit width) and keyword-announced secrets
(PINs, passwords, verification codes), the kinds ``security.pii`` finds, and a message that is
nothing but six digits (a PIN typed as the answer to the question for it). Phone and bank-card
numbers are left as typed: no task of ours keeps them secret, and the checkpoint serializer
masks them where we own the storage.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Protocol

from langchain_core.messages import HumanMessage

from security.pii import Finding, Kind, bare_code, find_pii
from security.vault import TOKEN_PREFIX, IdentityVault, mask_id_card
from storage.db import Database

INTAKE_KINDS: frozenset[Kind] = frozenset(("id_card", "secret"))
"""What intake swaps for tokens: what a task needs but no storage may hold."""

TOKEN = re.compile(rf"{re.escape(TOKEN_PREFIX)}[0-9a-f]{{24}}")
"""A vault token as ``IdentityVault.token_for`` writes it."""

CONTENT_KEYS = frozenset(("input", "command", "values", "supersteps"))
"""Top-level payload fields that carry what a user typed: a run's input, a resume or an
update (``command``), a state update (``values``), a thread created with history
(``supersteps``). Metadata, config and context are left alone: they name, they do not say."""


class Vault(Protocol):
    """What intake needs of ``security.vault.IdentityVault``."""

    def store(self, owner_id: str, number: str, masked: str | None = None) -> str:
        """Keep a value for ``owner_id``; return its (deterministic) token."""
        ...

    def reveal(self, owner_id: str, token: str) -> str | None:
        """Return the value behind ``token`` if ``owner_id`` stored it."""
        ...


def _masked(finding: Finding) -> str:
    """Return what a person may be shown of a vaulted finding (as slot filling masks it)."""
    if finding.kind == "id_card":
        return mask_id_card(finding.digits)
    return "*" * len(finding.digits)


def _outside_tokens(findings: Iterable[Finding], text: str) -> list[Finding]:
    """Drop findings inside a token already there, so tokenizing twice changes nothing."""
    tokens = [match.span() for match in TOKEN.finditer(text)]
    return [
        finding
        for finding in findings
        if not any(finding.start < end and start < finding.end for start, end in tokens)
    ]


def intake_findings(text: str) -> list[Finding]:
    """Return what intake vaults in one string: ``security.pii``'s kinds, or a bare code."""
    findings = find_pii(text, INTAKE_KINDS)
    if findings:
        return findings
    code = bare_code(text)  # a PIN typed alone, as the answer to the question for it
    return [] if code is None else [Finding("secret", 0, len(text), code)]


def _has_findings(value: Any) -> bool:
    """Tell whether ``value`` or any string nested in it holds what intake vaults."""
    if isinstance(value, str):
        return bool(intake_findings(value))
    if isinstance(value, dict):
        return any(_has_findings(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_has_findings(item) for item in value)
    return False


CODE_SHOWN = "******"
"""What a checkpoint keeps of a user's message that was only a code (a PIN typed alone)."""
_USER_ROLES = frozenset(("user", "human"))


def _user_code_masked(message: Any) -> Any:
    """Return a user's message with its content starred when it is only a code, else itself.

    A message in any of LangGraph's input shapes: ``HumanMessage``, ``("user", text)``,
    ``{"role": "user", "content": text}`` (also the protocol's user entries).
    """
    if isinstance(message, HumanMessage):
        if isinstance(message.content, str) and bare_code(message.content):
            return message.model_copy(update={"content": CODE_SHOWN})
        return message
    kind = type(message)
    if kind is tuple and len(message) == 2 and _said_by_user(message[0]):
        if isinstance(message[1], str) and bare_code(message[1]):
            return (message[0], CODE_SHOWN)
    elif isinstance(message, dict) and _said_by_user(message.get("role", message.get("type"))):
        content = message.get("content")
        if isinstance(content, str) and bare_code(content):
            return {**message, "content": CODE_SHOWN}
    return message


def _said_by_user(role: Any) -> bool:
    return type(role) is str and role in _USER_ROLES


def mask_user_codes(value: Any) -> Any:
    """Star the user's messages in ``value`` that are only a code; ``value`` itself if none.

    ``security.pii`` keeps a bare "123456" (a count, a key), but typed alone as the answer to
    "6 位支付密码" it is the PIN, and the turn's input reaches the checkpoint before any node
    can vault it. Looked for where a user's messages are: a channel's list, a single
    message, and an input's ``messages``.
    """
    kind = type(value)
    if kind is list:
        out: list[Any] | None = None
        for index, item in enumerate(value):
            masked = _user_code_masked(item)
            if masked is not item:
                if out is None:
                    out = list(value)
                out[index] = masked
        return value if out is None else out
    if isinstance(value, dict) and "messages" in value and "role" not in value:
        messages = mask_user_codes(value["messages"])
        return value if messages is value["messages"] else {**value, "messages": messages}
    return _user_code_masked(value)


def tokenize_text(text: str, owner: str, vault: Vault) -> str:
    """Return ``text`` with each ID number and secret replaced by ``owner``'s vault token.

    The value is vaulted in its normalized form (ASCII digits, no separators, upper-case
    check character), which is what ``reveal_text`` gives back and what the extractors take.
    """
    findings = _outside_tokens(intake_findings(text), text)
    if not findings:
        return text
    out: list[str] = []
    cursor = 0
    for finding in findings:
        out.append(text[cursor : finding.start])
        out.append(vault.store(owner, finding.digits, masked=_masked(finding)))
        cursor = finding.end
    out.append(text[cursor:])
    return "".join(out)


def tokenize_value(value: Any, owner: str, vault: Vault) -> Any:
    """Return ``value`` with every string nested in it tokenized (dict keys left alone)."""
    if isinstance(value, str):
        return tokenize_text(value, owner, vault)
    if isinstance(value, dict):
        return {key: tokenize_value(item, owner, vault) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [tokenize_value(item, owner, vault) for item in value]
    return value


def tokenize_payload(payload: Any, owner: str, vault: Vault) -> bool:
    """Tokenize a run or state payload's content fields in place; tell whether any changed.

    In place, because a server hands its auth handler the very dict it goes on to store. A
    list (``/runs/batch``) is a list of payloads.
    """
    if isinstance(payload, list):
        return any([tokenize_payload(item, owner, vault) for item in payload])  # noqa: C419
    if not isinstance(payload, dict):
        return False
    changed = False
    for key in CONTENT_KEYS & payload.keys():
        new = tokenize_value(payload[key], owner, vault)
        if new != payload[key]:
            payload[key] = new
            changed = True
    return changed


def payload_has_secrets(payload: Any) -> bool:
    """Tell whether a payload's content fields hold anything ``tokenize_payload`` would swap.

    Cheap and vault-free: lets a caller skip opening the vault for the usual message.
    """
    if isinstance(payload, list):
        return any(payload_has_secrets(item) for item in payload)
    if not isinstance(payload, dict):
        return False
    return any(_has_findings(payload[key]) for key in CONTENT_KEYS & payload.keys())


def has_token(text: str) -> bool:
    """Tell whether ``text`` holds a vault token (cheap: a substring test first)."""
    return TOKEN_PREFIX in text and TOKEN.search(text) is not None


def reveal_text(text: str, owner: str, vault: Vault) -> str:
    """Return ``text`` with ``owner``'s tokens replaced by their values, for extraction only.

    The result must stay in memory (an extractor's argument): written into state it would
    undo the intake. Tokens of other owners, and unknown ones, stay as they are.
    """
    if not has_token(text):
        return text

    def value(match: re.Match[str]) -> str:
        return vault.reveal(owner, match.group(0)) or match.group(0)

    return TOKEN.sub(value, text)


def revealed(text: str, owner: str, database: Database) -> str:
    """Return ``reveal_text`` over the business database's vault; no vault opened without a token.

    The call a node makes before extracting slots from a user's message.
    """
    if not has_token(text):
        return text
    return reveal_text(text, owner, IdentityVault(database))


__all__ = [
    "CONTENT_KEYS",
    "CODE_SHOWN",
    "INTAKE_KINDS",
    "intake_findings",
    "mask_user_codes",
    "TOKEN",
    "Vault",
    "has_token",
    "payload_has_secrets",
    "reveal_text",
    "revealed",
    "tokenize_payload",
    "tokenize_text",
    "tokenize_value",
]
