"""Keep full ID-card numbers out of every checkpoint, whatever the saver.

A user's message enters the checkpoint as the turn's input before any node runs, so masking
in nodes comes too late. This serializer masks 18-digit resident ID numbers in the
serialized bytes. The mask keeps the length (``110101********1234``), so msgpack and JSON
framing stay valid. Only numbers shaped like an ID (6-digit region, a real-looking birth
date, 3 digits, check character) are touched; checkpoint ids, timestamps and order numbers
never have that shape. Slot filling has already moved the number into the identity vault.
"""

from __future__ import annotations

import re
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

_ID_BYTES = re.compile(
    rb"(?<![0-9A-Za-z])(\d{6})((?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))"
    rb"(\d{3}[0-9Xx])(?![0-9A-Za-z])"
)


_SECRET_BYTES = re.compile(
    "((?:密码|支付密码|验证码|PIN|pin|password)\\s*(?:是|为|:|：|is)?\\s*)(\\d{4,8})".encode()
)


def mask_id_bytes(data: bytes) -> bytes:
    """Mask ID-card numbers and keyword-marked secrets (PINs) without changing the length."""
    data = _ID_BYTES.sub(lambda m: m.group(1) + b"*" * 8 + m.group(3)[-4:], data)
    return _SECRET_BYTES.sub(lambda m: m.group(1) + b"*" * len(m.group(2)), data)


class MaskingSerializer(SerializerProtocol):
    """Wrap a serializer so that what it writes carries no full ID-card number."""

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
