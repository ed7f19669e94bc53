"""Size and shape limits for anything that enters the agent: cut, never crash.

A user message over ``MAX_USER_MESSAGE_CHARS`` is answered with "message too long" in the
user's language (the intent node calls ``too_long``; the sentence is the languages' data,
worded by ``nodes.wording.too_long_reply``) and the thread goes on. Oversized or
odd values elsewhere (a 20 KB tool field, a NaN, a set, a lone surrogate, JSON nested a
thousand deep) are made JSON-safe and cut with a marker that names their size and SHA-256,
so the original can still be identified and nothing downstream has to handle them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, TypedDict

import orjson
from pydantic import JsonValue as PydanticJsonValue

MAX_USER_MESSAGE_CHARS = 2000
"""Longest user message the agent reads; longer ones get "message too long"."""
MAX_STRING_CHARS = 64 * 1024
"""Longest string kept anywhere before a finer limit applies (protects the regexes)."""
MAX_DEPTH = 32
"""Deepest nesting kept in a JSON-like value."""
MAX_ITEMS = 1000
"""Most items kept in one list or dict."""

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object whose shape the code holding it does not fix and does not check: a line or a
blob read back (another version may have written it), an HTTP body before validation, a
model's raw output, a peer's extra fields. Each use says which; typed payloads are TypedDicts.
"""

JsonValue: TypeAlias = PydanticJsonValue
"""Any JSON value, checked: ``str | int | float | bool | None``, lists and ``str``-keyed dicts
of JSON values (pydantic's ``JsonValue``). What is JSON but whose shape belongs to someone else
(a job's parameters, a failure's details) is ``dict[str, JsonValue]``, not ``JsonObject``."""


def too_long(text: str, limit: int = MAX_USER_MESSAGE_CHARS) -> bool:
    """Tell whether a user message is too long to be read."""
    return len(text) > limit


def digest(data: bytes) -> str:
    """Return the SHA-256 of ``data`` as hex."""
    return hashlib.sha256(data).hexdigest()


_ORJSON_OPTIONS = (
    orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
)


def dumps_compact(value: Any, *, default: Callable[[Any], Any] | None = str) -> bytes:
    """Return ``value`` as compact UTF-8 JSON, with ``default`` for what JSON has no type for.

    orjson writes the same text as ``json.dumps(ensure_ascii=False, separators=(",", ":"))``
    but for the exponent of very small or large floats (``1e-5`` for ``1e-05``) and NaN
    (``null``), four to ten times faster: the trace, the audit and the protocol size check
    encode a dozen messages a turn. Dates and dataclasses go through ``default`` as with
    ``json``; what orjson refuses (an int over 64 bits, a lone surrogate) takes ``json``'s
    path, lone surrogates replaced.
    """
    try:
        return orjson.dumps(value, default=default, option=_ORJSON_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=default)
        return text.encode("utf-8", errors="replace")


def json_bytes(value: Any) -> int:
    """Return the size of ``value`` as compact UTF-8 JSON (the protocol's measure)."""
    return len(dumps_compact(value))


CutMarker = TypedDict("CutMarker", {"$cut": bool, "bytes": int, "sha256": str, "preview": str})
"""What stands for a value too large to keep: its size, SHA-256 and a short preview."""


def cut_marker(value: Any, *, preview_chars: int = 200) -> CutMarker:
    """Replace ``value`` by a marker: its size, SHA-256 and a short preview."""
    raw = json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", errors="replace")
    return {
        "$cut": True,
        "bytes": len(raw),
        "sha256": digest(raw),
        "preview": raw[: preview_chars * 3].decode("utf-8", errors="ignore")[:preview_chars],
    }


def cut_string(text: str, max_bytes: int) -> str:
    """Return ``text`` if its JSON form fits in ``max_bytes``, else a prefix plus a marker.

    The marker (``…[cut: N bytes, sha256 …]``) names the original's UTF-8 size and digest.
    """
    if json_bytes(text) <= max_bytes:
        return text
    raw = text.encode("utf-8", errors="replace")
    marker = f"…[cut: {len(raw)} bytes, sha256 {digest(raw)}]"
    budget = max_bytes - json_bytes(marker)
    if budget <= 2:
        return marker[: max(0, max_bytes // 4)]
    low, high = 0, min(len(text), budget)
    while low < high:  # longest prefix that, joined with the marker, fits ``max_bytes``
        middle = (low + high + 1) // 2
        if json_bytes(text[:middle]) <= budget + 2:
            low = middle
        else:
            high = middle - 1
    return text[:low] + marker


def clean_string(text: str, max_chars: int = MAX_STRING_CHARS) -> str:
    """Return ``text`` encodable as UTF-8 (lone surrogates replaced) and at most ``max_chars``."""
    if len(text) > max_chars:
        # No digest here: the text is not masked yet, and a hash of it could be brute-forced.
        text = text[:max_chars] + f"…[cut: {len(text)} characters]"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-8", errors="replace").decode("utf-8")
    return text


def pairs_before(mapping: Mapping[Any, Any], key: Any) -> dict[Any, Any]:
    """Return a copy of ``mapping``'s pairs that come before ``key``.

    The walks that copy a container only when one of its values changes (masking, making a
    record plain) start their copy here, at the first pair that changed.
    """
    out: dict[Any, Any] = {}
    for old_key, old_item in mapping.items():
        if old_key is key:
            break
        out[old_key] = old_item
    return out


def json_safe(value: Any, depth: int = 0) -> Any:
    """Return ``value`` as plain JSON data that every serializer accepts, without raising.

    NaN and infinities become ``None``; sets become lists; bytes are decoded; huge integers,
    unknown objects and anything nested deeper than ``MAX_DEPTH`` become short strings.
    """
    kind = type(value)  # the common exact types first: each call of the executor walks four
    if kind is str:  # values with this; the isinstance chain cost ~40 µs of a ~1 ms call
        if len(value) <= MAX_STRING_CHARS and value.isascii():
            return value
        return clean_string(value)
    if kind is dict and depth < MAX_DEPTH and len(value) <= MAX_ITEMS:
        return {
            (
                key
                if type(key) is str and len(key) <= 256 and key.isascii()
                else clean_string(key if isinstance(key, str) else _short_repr(key), 256)
            ): json_safe(item, depth + 1)
            for key, item in value.items()
        }
    if kind is float:
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= 63 else f"[int of {value.bit_length()} bits]"
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return clean_string(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return clean_string(bytes(value)[:MAX_STRING_CHARS].decode("utf-8", errors="replace"))
    if depth >= MAX_DEPTH:
        return f"[cut: nested deeper than {MAX_DEPTH}]"
    if isinstance(value, dict):
        out: JsonObject = {}  # a JSON-safe copy of any object: its keys are the caller's
        for index, (key, item) in enumerate(value.items()):
            if index >= MAX_ITEMS:
                out["$cut_items"] = len(value) - MAX_ITEMS
                break
            name = clean_string(key if isinstance(key, str) else _short_repr(key), 256)
            out[name] = json_safe(item, depth + 1)
        return out
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)
        if isinstance(value, set | frozenset):
            items.sort(key=_short_repr)
        kept = [json_safe(item, depth + 1) for item in items[:MAX_ITEMS]]
        if len(items) > MAX_ITEMS:
            kept.append(f"[cut: {len(items) - MAX_ITEMS} more items]")
        return kept
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return json_safe(dump(mode="json"), depth + 1)
        except Exception:  # a broken model is still only data here  # noqa: BLE001
            return _short_repr(value)
    return _short_repr(value)


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that raises is still only data
        text = f"<{type(value).__name__}>"
    return clean_string(text, 200)


__all__ = [
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_STRING_CHARS",
    "MAX_USER_MESSAGE_CHARS",
    "clean_string",
    "cut_marker",
    "cut_string",
    "digest",
    "dumps_compact",
    "json_bytes",
    "json_safe",
    "too_long",
]
