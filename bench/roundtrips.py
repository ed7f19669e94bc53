"""Count Redis round trips from the client side: every packed send is one request."""

from __future__ import annotations

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
