"""Keep full ID-card numbers, card numbers and secrets out of every checkpoint, whatever the saver.

A user's message enters the checkpoint as the turn's input before any node runs, so masking
in nodes comes too late. This serializer masks the serialized bytes with the project's one
detector (``tools.pii.find_pii``), so every spelling the transfer extractor understands
("Passcode is 123456", "Pin: 123456", full-width digits, an ID with spaces) is masked here too.

Masking keeps the byte length: each masked character is replaced by as many ``*`` as its
UTF-8 encoding has bytes, so msgpack and JSON framing stay valid. The bytes are decoded with
``surrogateescape``, so binary framing bytes survive the round trip unchanged and can never
join two strings into one match. Phone numbers are left alone here (a contact number may be a
slot a tool needs); protocol messages mask them. Slot filling has already moved ID numbers and
PINs into the identity vault, so nothing a node needs is lost.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from tools.pii import Kind, could_hold, find_pii, kept_positions

CHECKPOINT_KINDS: frozenset[Kind] = frozenset(("id_card", "bank_card", "secret"))
"""What is masked in checkpoints."""


def _digit_like(char: str) -> bool:
    folded = unicodedata.normalize("NFKC", char) if not char.isascii() else char
    return len(folded) == 1 and (folded.isdigit() and folded.isascii() or folded in "Xx")


_CHANNEL_VERSION = re.compile(
    r"\d{32}\.\d+\.\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)
"""LangGraph's channel versions (``00…01.0.2129…``) and checkpoint ids (UUIDs): in every
checkpoint, never a number of anyone's. Their digits can never be part of a finding (an ID
or card needs no digit, letter or dash-joined word right before or after it), so the
pre-check ignores them."""


_SHORTEST_SECRET = len("pin1234")
"""Half the blobs of a turn are shorter (a flag, a number, an empty list): nothing to find."""


def mask_id_bytes(data: bytes) -> bytes:
    """Mask ID-card numbers, card numbers and keyword-marked secrets, keeping the length."""
    if len(data) < _SHORTEST_SECRET:
        return data
    text = data.decode("utf-8", errors="surrogateescape")
    if not could_hold(text, CHECKPOINT_KINDS) or not could_hold(
        _CHANNEL_VERSION.sub("v", text), CHECKPOINT_KINDS
    ):
        return data
    findings = find_pii(text, CHECKPOINT_KINDS)
    if not findings:
        return data
    chars = list(text)
    for finding in findings:
        lead, trail = kept_positions(finding)
        positions = [
            index
            for index in range(finding.start, finding.end)
            if _digit_like(chars[index]) and (chars[index] not in "Xx" or finding.kind != "secret")
        ]
        count = len(positions)
        for order, index in enumerate(positions):
            if order < lead or order >= count - trail:
                continue
            chars[index] = "*" * len(chars[index].encode("utf-8", errors="surrogateescape"))
    return "".join(chars).encode("utf-8", errors="surrogateescape")


class MaskingSerializer(SerializerProtocol):
    """Wrap a serializer so that what it writes carries no full ID-card number or secret."""

    def __init__(self, inner: SerializerProtocol) -> None:
        """Mask what ``inner`` produces."""
        self.inner = inner

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize with the inner serializer, then mask."""
        kind, data = self.inner.dumps_typed(obj)
        return kind, mask_id_bytes(data)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Deserialize with the inner serializer."""
        return self.inner.loads_typed(data)

    def __getattr__(self, name: str) -> Any:
        """Pass everything else (allowlists, typed methods) to the inner serializer."""
        return getattr(self.inner, name)
