"""Count Redis requests from the client side (every packed send is one) and the waited ones."""

from __future__ import annotations

from typing import Any

from redis.connection import AbstractConnection


class RoundTripCounter:
    """Patch redis-py once; ``count`` grows with every request any client sends."""

    def __init__(self) -> None:
        self.count = 0
        original = AbstractConnection.send_packed_command

        def counting(conn, command, check_health=True):  # type: ignore[no-untyped-def]
            self.count += 1
            return original(conn, command, check_health)

        AbstractConnection.send_packed_command = counting  # type: ignore[method-assign]


SENDS = RoundTripCounter()


def replies_read_later(app: Any) -> int:
    """Count the writes ``app``'s saver sent without waiting for their reply, so far.

    A round trip is a request its caller waits for; ``PlainRedisSaver``'s writes return once
    sent and their replies are read by the next call, so they are requests, not waits.
    """
    return int(getattr(getattr(app, "checkpointer", None), "replies_read_later", 0) or 0)
