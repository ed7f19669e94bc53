"""Script calls on Redis connections kept aside, without redis-py's per-command layers.

The checkpoint saver sends two script calls a superstep and the transcript one a turn; each
went through the pool, a health poll, the retry wrapper and the response callbacks.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from redis import Redis


class Direct:
    """Send ``EVALSHA`` on connections kept aside, without redis-py's per-command layers.

    A checkpoint costs two script calls per superstep; through the client each call went
    through the pool, a health poll of the socket, the retry wrapper and response callbacks,
    about 0.19 ms of CPU against 0.08 ms for packing, sending and reading the reply.
    LangGraph writes a step's checkpoint and its tasks' writes from different threads at
    once, so up to ``size`` connections are kept (one was busy for 38 % of the calls, which
    then took the long path). Every call is safe to send again (the scripts only set fields
    to values the call carries), so anything unusual (all kept connections busy, an error
    reply such as ``NOSCRIPT``, a dropped socket) takes the client's own path, which loads
    scripts and reconnects.
    """

    def __init__(self, client: Redis, size: int = 4) -> None:
        """Keep up to ``size`` connections of ``client``'s pool for the short path."""
        self.client = client
        self.size = size
        self._idle: list[Any] = []
        self._opened = 0
        self._lock = threading.Lock()
        self._pid = os.getpid()

    @property
    def connections(self) -> int:
        """Tell how many connections the short path holds now."""
        return self._opened

    def bind(self, script: Any) -> Callable[..., Any]:
        """Return ``script``'s call, taking the short path when it can."""

        def call(keys: list[Any], args: list[Any]) -> Any:
            connection = self._take()
            if connection is not None:
                try:
                    reply = self._send(connection, script.sha, keys, args)
                except Exception:  # noqa: BLE001 - the client's path below handles it
                    self._drop(connection)
                else:
                    self._idle.append(connection)
                    return reply
            return script(keys=keys, args=args)

        return call

    def _take(self) -> Any:
        if self._pid != os.getpid():  # a forked child: the parent's sockets are not ours
            with self._lock:
                self._idle, self._opened, self._pid = [], 0, os.getpid()
        try:
            return self._idle.pop()  # atomic: no two threads get one connection
        except IndexError:
            pass
        with self._lock:
            if self._opened >= self.size:
                return None
            self._opened += 1
        try:  # from the pool, so it counts against the pool's limit, and goes back to it
            return self.client.connection_pool.get_connection()
        except Exception:  # noqa: BLE001 - the client's path reports what is wrong
            with self._lock:
                self._opened -= 1
            return None

    @staticmethod
    def _send(connection: Any, sha: str, keys: list[Any], args: list[Any]) -> Any:
        connection.send_packed_command(
            connection.pack_command("EVALSHA", sha, len(keys), *keys, *args), check_health=False
        )
        reply = connection.read_response()
        if isinstance(reply, Exception):
            raise reply
        return reply

    def _drop(self, connection: Any) -> None:
        connection.disconnect()
        self.client.connection_pool.release(connection)
        with self._lock:
            self._opened -= 1


__all__ = ["Direct"]
