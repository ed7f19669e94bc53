"""The attack corpus: payload lists by category, and one check per category.

Each check returns ``None`` when the attack was stopped, or a short description of the
breach. The payload lists live in ``payloads/`` (one per line, or JSON lines) so the corpus
grows without code; generated payloads (non-JSON values, huge inputs) are built here.
Used by ``test_corpus.py`` (a fast slice by default, everything with ``-m attack``) and by
``python -m tests.attack.report``, which prints attempts and breaches per category.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

from graph.checkpoint.masking import MaskingSerializer
from scenarios.sales.tools import SALES_POLICY
from security.permissions import Permissions
from security.pii import find_pin, mask_text, normalize
from security.readonly_sql import QueryFailed, QueryRefused, QueryTimeout, run
from security.untrusted import looks_like_instruction
from state import MAX_PROTOCOL_BYTES, ProtocolMessage, append_protocol
from storage.db import Database
from tests.helpers import default_registry
from tools.executor.pipeline import ActionExecutor, ExecutorSettings
from tools.registry.cards import ToolCard, ToolRegistry
from tools.registry.context import ToolContext

PAYLOADS = Path(__file__).parent / "payloads"
FAST_SLICE = 12
"""Payloads per category in the default (fast) run."""


def lines(name: str) -> list[str]:
    """Return the payloads of a ``.txt`` list (comments and blank lines skipped)."""
    text = (PAYLOADS / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def json_lines(name: str) -> list[dict[str, Any]]:
    """Return the payloads of a ``.jsonl`` list."""
    text = (PAYLOADS / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


# ---- the checks --------------------------------------------------------------------------


def check_sql(sql: str, db: Database) -> str | None:
    """An attack query must be refused or stopped by the time limit, and fast."""
    started = time.monotonic()
    try:
        result = run(db, sql, policy=SALES_POLICY, timeout_s=0.5)
    except (QueryRefused, QueryTimeout, QueryFailed):
        elapsed = time.monotonic() - started
        return None if elapsed < 5 else f"took {elapsed:.1f}s"
    except Exception as exc:  # noqa: BLE001 - any other exception is itself a finding
        return f"crashed: {type(exc).__name__}: {exc}"
    return f"ran and returned {len(result.rows)} row(s)"


_SERDE = MaskingSerializer(JsonPlusSerializer())


def check_pii(row: dict[str, Any]) -> str | None:
    """The secret must not survive masking, a protocol message or a checkpoint blob."""
    text, secret = row["text"], row["secret"]

    def leaks(rendered: str) -> bool:
        return secret in normalize(rendered).replace(" ", "").replace("-", "")

    if leaks(mask_text(text)):
        return "mask_text kept it"
    message = ProtocolMessage(role="user", content=text)
    if leaks(message.to_json()):
        return "protocol message kept it"
    if row["kind"] != "phone":  # contact numbers stay in checkpoints by design
        kind, blob = _SERDE.dumps_typed({"messages": [HumanMessage(content=text)]})
        restored = _SERDE.loads_typed((kind, blob))
        if leaks(blob.decode("utf-8", errors="ignore")) or leaks(str(restored)):
            return "checkpoint blob kept it"
    if row.get("pin") and find_pin(text) != secret:
        return f"find_pin did not find it (got {find_pin(text)!r})"
    return None


class _Note(BaseModel):
    text: str


def _tool_executor(output: Any) -> tuple[ActionExecutor, ToolContext]:
    registry = ToolRegistry(permissions=Permissions.merged({"customer": {"order:read"}}))
    registry.register(
        ToolCard(
            name="read_review_text",
            description="Return a review text for the attack corpus.",
            when_to_use="In tests.",
            when_not_to_use="Anywhere else.",
            parameters=_Note,
            returns="the review",
            handler=lambda _args, _ctx: output,
            idempotent=True,
            permission="order:read",
            domain="order",
        )
    )
    settings = ExecutorSettings(max_attempts=1)
    return ActionExecutor(registry, settings=settings), ToolContext(
        user_id="u_10001", user_role="customer", session_id="s", task_id="t"
    )


def check_tool_injection(text: str) -> str | None:
    """Instruction-like tool output is flagged, and comes back without links or HTML."""
    executor, ctx = _tool_executor({"review": text, "link": f"[click]({'https://evil.example/x'})"})
    result = executor.execute({"name": "read_review_text", "parameters": {"text": "x"}}, ctx)
    if not any(flag.startswith("untrusted_instruction:review") for flag in result["flags"]):
        return "not flagged"
    shown = json.dumps(result["data"], ensure_ascii=False)
    if "https://" in shown or "](" in shown or "<" in shown:
        return "a link or tag survived"
    return None


def check_user_injection(text: str) -> str | None:
    """Instruction-like user text is flagged (the audit shows the attempt)."""
    return None if looks_like_instruction(text) else "not flagged"


def check_benign(text: str) -> str | None:
    """Ordinary text is not flagged."""
    return "flagged (false positive)" if looks_like_instruction(text) else None


def _deep(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


def malformed_calls() -> list[tuple[str, Any]]:
    """Calls of every wrong shape: the executor must answer each with an envelope."""
    deep_text = "[" * 100_000 + "]" * 100_000
    return [
        ("None", None),
        ("list", [{"name": "query_order_status"}]),
        ("int", 7),
        ("float nan", math.nan),
        ("garbage string", "}{not json"),
        ("json list string", "[1, 2, 3]"),
        ("bytes", b"\xff\xfe"),
        ("set", {"name"}),
        ("name None", {"name": None}),
        ("name dict", {"name": {"x": 1}}),
        ("name huge", {"name": "q" * 1_000_000}),
        ("unknown tool", {"name": "drop_all_tables", "parameters": {}}),
        ("parameters list", {"name": "query_order_status", "parameters": [1, 2]}),
        ("parameters int", {"name": "query_order_status", "parameters": 5}),
        ("parameters set", {"name": "query_order_status", "parameters": {"order_id": {1}}}),
        ("parameters bytes", {"name": "query_order_status", "parameters": {"order_id": b"x"}}),
        ("parameters nan", {"name": "query_order_status", "parameters": {"order_id": math.nan}}),
        ("parameters inf", {"name": "query_order_status", "parameters": {"order_id": math.inf}}),
        ("parameters object", {"name": "query_order_status", "parameters": {"o": object()}}),
        ("parameters deep", {"name": "query_order_status", "parameters": {"o": _deep(5000)}}),
        ("parameters deep text", {"name": "query_order_status", "parameters": deep_text}),
        ("parameters huge int", {"name": "query_order_status", "parameters": {"o": 10**5000}}),
        ("parameters huge text", {"name": "query_order_status", "parameters": "x" * 2_000_000}),
        (
            "parameters huge value",
            {"name": "query_order_status", "parameters": {"order_id": "9" * 2_000_000}},
        ),
        ("python literal set", {"name": "query_order_status", "parameters": "{'a': {1, 2}}"}),
        ("non-str keys", {"name": "query_order_status", "parameters": {1: "x"}}),
        ("bool amount", {"name": "transfer_money", "parameters": {"amount_cents": True}}),
        ("idempotency key dict", {"name": "query_order_status", "idempotency_key": {"a": 1}}),
        ("lone surrogate", {"name": "query_order_status", "parameters": {"order_id": "\ud800"}}),
    ]


def check_malformed_call(call: Any) -> str | None:
    """The executor answers with a structured failure and writes an audit record."""
    executor = ActionExecutor(default_registry(), settings=ExecutorSettings(max_attempts=1))
    ctx = ToolContext(user_id="u_10001", user_role="customer", session_id="s", task_id="t")
    try:
        result = executor.execute(call, ctx)
    except Exception as exc:  # noqa: BLE001
        return f"raised {type(exc).__name__}: {str(exc)[:100]}"
    executor.audit.flush()
    if result.get("status") == "success":
        return "accepted"
    if not executor.audit.records:
        return "no audit record"
    try:
        json.dumps(result, allow_nan=False)
        json.dumps(executor.audit.records, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return f"envelope or audit record is not JSON: {exc}"
    return None


def oversized_messages() -> list[tuple[str, dict[str, Any]]]:
    """Protocol messages over the size limit in every field."""
    big = "长" * 30_000
    return [
        ("6 KB user text", {"role": "user", "content": "a" * 6 * 1024}),
        ("100 KB zh text", {"role": "user", "content": big}),
        ("20 KB tool field", {"role": "tool", "content": {"status": "ok", "field": "x" * 20_000}}),
        ("many rows", {"role": "tool", "content": {"rows": [{"i": i} for i in range(5000)]}}),
        ("huge error", {"role": "tool", "content": "", "error": "e" * 50_000}),
        ("huge session id", {"role": "agent", "session_id": "s" * 10_000}),
        ("huge extra field", {"role": "agent", "peer_note": "n" * 10_000}),
        ("many extra fields", {"role": "agent", **{f"k{i}": "v" * 50 for i in range(500)}}),
        (
            "huge call arguments",
            {"role": "assistant", "tool_calls": [{"name": "a_b", "parameters": {"q": "w" * 9000}}]},
        ),
        (
            "many calls",
            {
                "role": "assistant",
                "tool_calls": [{"name": "a_b", "id": str(i)} for i in range(900)],
            },
        ),
        ("escapes", {"role": "user", "content": "\u0001" * 6000}),
        ("non-json content", {"role": "tool", "content": {"s": {1, 2}, "n": math.nan, "b": b"x"}}),
        ("deep content", {"role": "tool", "content": {"d": _deep(3000)}}),
        ("lone surrogates", {"role": "user", "content": "\ud800" * 7000}),
    ]


def check_oversized(message: dict[str, Any]) -> str | None:
    """The reducer never raises on size, and what it keeps is at most 5 KB of valid JSON."""
    try:
        stored = append_protocol([], message)
    except Exception as exc:  # noqa: BLE001
        return f"raised {type(exc).__name__}: {str(exc)[:100]}"
    size = len(json.dumps(stored[0], ensure_ascii=False, separators=(",", ":")).encode())
    if size > MAX_PROTOCOL_BYTES:
        return f"kept {size} bytes"
    try:
        json.dumps(stored[0], allow_nan=False)
    except (TypeError, ValueError) as exc:
        return f"not JSON: {exc}"
    return None


@dataclass(frozen=True)
class Category:
    """One kind of attack: its payloads and the check that decides if one got through."""

    name: str
    payloads: Callable[[], list[tuple[str, Any]]]
    check: Callable[..., str | None]
    needs_db: bool = False
    fast: int = FAST_SLICE
    """Payloads in the default run (graph-level categories keep it small)."""


CATEGORIES = [
    Category("sql", lambda: [(sql[:60], sql) for sql in lines("sql.txt")], check_sql, True),
    Category("pii", lambda: [(r["text"], r) for r in json_lines("pii.jsonl")], check_pii),
    Category(
        "injection_tool",
        lambda: [(t[:60], t) for t in lines("injection_tool.txt")],
        check_tool_injection,
    ),
    Category(
        "injection_user",
        lambda: [(t[:60], t) for t in lines("injection_user.txt")],
        check_user_injection,
    ),
    Category("benign_text", lambda: [(t[:60], t) for t in lines("benign.txt")], check_benign),
    Category("malformed_call", malformed_calls, check_malformed_call),
    Category("oversized", oversized_messages, check_oversized),
]


def _broad_categories() -> list[Category]:
    from tests.attack import breadth  # noqa: PLC0415 - graph imports only when needed

    return [
        Category("cross_user", breadth.cross_user_payloads, breadth.check_cross_user, True),
        Category("role_escalation", breadth.role_payloads, breadth.check_role, True),
        Category(
            "graph_input", breadth.graph_input_payloads, breadth.check_graph_input, True, fast=2
        ),
        Category("replay", breadth.replay_payloads, breadth.check_replay, True, fast=2),
        Category("secrets_at_rest", breadth.secret_payloads, breadth.check_secrets, True, fast=2),
    ]


CATEGORIES += _broad_categories()


def _truth_categories() -> list[Category]:
    from tests.attack import truth  # noqa: PLC0415 - graph imports only when needed

    return [
        Category(
            "injection_family",
            lambda: [(t[:60], t) for t in lines("injection_family.txt")],
            truth.check_family,
        ),
        Category("benign_seeded", truth.seeded_texts, truth.check_not_flagged),
        Category("benign_eval", truth.eval_texts, truth.check_not_flagged),
        Category("failure_matrix", truth.matrix_payloads, truth.check_matrix_row, fast=3),
    ]


CATEGORIES += _truth_categories()


def attempts(category: Category, db: Database | None) -> Iterator[tuple[str, str | None]]:
    """Run every payload of ``category``; yield (payload id, breach or ``None``)."""
    for label, payload in category.payloads():
        if category.needs_db:
            yield label, category.check(payload, db)
        else:
            yield label, category.check(payload)
