"""Script calls on Redis connections kept aside, without redis-py's per-command layers.

The checkpoint saver sends two script calls a superstep and the transcript one a turn; each
went through the pool, a health poll, the retry wrapper and the response callbacks.
``Direct`` is the sync client's short path, ``AsyncDirect`` the async client's.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from redis import Redis
from redis.asyncio import Redis as AsyncRedis
from redis.exceptions import ResponseError

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Owed:
    """A call sent on a kept connection whose reply has not been read yet."""

    script: Any
    keys: list[Any]
    args: list[Any]
    seq: int = 0
    """Its place among the sync client's unread replies (``Direct.flush`` waits by it)."""


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

    A write bound with ``reply="later"`` returns once its request is on the socket, and its
    reply is read by the next call on that connection or by ``flush``. LangGraph waits for
    each step's checkpoint before the next step (``durability="sync"``); waiting for the
    reply as well put a loopback round trip and two thread wake-ups on the turn's critical
    path four times a turn. A reply that is an error, or a socket that drops before its
    reply, sends that write again through the client's path, and what that raises is
    raised by the call (or ``flush``) that read it. ``flush`` reads every reply owed before
    it began, so a read after ``flush`` sees every write that returned before it, and runs
    at the interpreter's exit. A call reads its connection's owed reply before it sends, so
    a connection carries at most one: a socket closed by a dying process either has that
    reply waiting (the server ran the write) or nothing unread, and closes cleanly.
    """

    def __init__(self, client: Redis, size: int = 4) -> None:
        """Keep up to ``size`` connections of ``client``'s pool for the short path."""
        self.client = client
        self.size = size
        self._idle: list[Any] = []
        self._opened = 0
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self._owed: dict[int, list[_Owed]] = {}  # id(connection) -> its unread replies
        self._unread: set[int] = set()  # the sequence numbers of every unread reply
        self._seq = 0
        self.sent_later = 0
        """Calls sent without waiting for their reply, since the start (for benchmarks)."""
        self._pid = os.getpid()
        _LIVE.add(self)

    @property
    def connections(self) -> int:
        """Tell how many connections the short path holds now."""
        return self._opened

    @property
    def unread(self) -> int:
        """Tell how many replies of writes that already returned are still unread."""
        return len(self._unread)

    def bind(self, script: Any, *, reply: Literal["now", "later"] = "now") -> Callable[..., Any]:
        """Return ``script``'s call, taking the short path when it can.

        ``reply="later"`` is for writes only: the call returns ``None`` once sent.
        """
        later = reply == "later"

        def call(keys: list[Any], args: list[Any]) -> Any:
            connection = self._take()
            if connection is not None:
                usable, error = self._settle(connection)
                if error is not None:
                    if usable:
                        self._idle.append(connection)
                    raise error
                if usable:
                    try:
                        if later:
                            self._send_only(connection, script, keys, args)
                            answer = None
                        else:
                            answer = self._send(connection, script.sha, keys, args)
                    except Exception:  # noqa: BLE001 - the client's path below handles it
                        self._drop(connection)
                    else:
                        self._idle.append(connection)
                        return answer
            return script(keys=keys, args=args)

        return call

    def flush(self, timeout: float | None = None) -> None:
        """Read every reply owed when the call began; raise what a failed write raised.

        ``timeout`` bounds the wait for replies owed on connections other threads hold.
        """
        if not self._unread:
            return
        with self._lock:
            target = self._seq
        taken: list[Any] = []
        while True:
            try:
                taken.append(self._idle.pop())
            except IndexError:
                break
        error: Exception | None = None
        for connection in taken:
            usable, failed = self._settle(connection)
            error = error or failed
            if usable:
                self._idle.append(connection)
        with self._settled:  # the rest are on connections other threads hold: they read first
            self._settled.wait_for(
                lambda: not any(seq < target for seq in self._unread), timeout=timeout
            )
        if error is not None:
            raise error

    def _take(self) -> Any:
        if self._pid != os.getpid():  # a forked child: the parent's sockets are not ours
            with self._lock:
                self._idle, self._opened, self._pid = [], 0, os.getpid()
                self._owed, self._unread = {}, set()
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

    def _send_only(self, connection: Any, script: Any, keys: list[Any], args: list[Any]) -> None:
        connection.send_packed_command(
            connection.pack_command("EVALSHA", script.sha, len(keys), *keys, *args),
            check_health=False,
        )
        with self._lock:
            owed = _Owed(script, keys, args, self._seq)
            self._seq += 1
            self.sent_later += 1
            self._unread.add(owed.seq)
            self._owed.setdefault(id(connection), []).append(owed)

    def _settle(self, connection: Any) -> tuple[bool, Exception | None]:
        """Read ``connection``'s owed replies, sending refused writes again.

        Return whether the connection is still usable, and the error of a write that
        failed again through the client's path.
        """
        owed = self._owed.pop(id(connection), None)
        if not owed:
            return True, None
        usable = True
        again: list[_Owed] = []
        for item in owed:
            if usable:
                try:
                    reply = connection.read_response()
                except ResponseError:  # an error reply: the connection is still in step
                    pass
                except Exception:  # noqa: BLE001 - the socket is gone: send the rest again
                    usable = False
                else:
                    if not isinstance(reply, Exception):
                        continue
            again.append(item)
        if not usable:
            self._drop(connection)
        error: Exception | None = None
        try:
            for item in again:
                try:
                    item.script(keys=item.keys, args=item.args)
                except Exception as exc:  # noqa: BLE001 - raised by the call that read it
                    error = error or exc
        finally:
            with self._settled:
                self._unread.difference_update(item.seq for item in owed)
                self._settled.notify_all()
        return usable, error

    def _drop(self, connection: Any) -> None:
        connection.disconnect()
        self.client.connection_pool.release(connection)
        with self._lock:
            self._opened -= 1


class AsyncDirect:
    """``Direct`` for the async client: ``EVALSHA`` on kept connections of the running loop.

    Through ``redis.asyncio`` a script call cost 121 µs of CPU against 81 µs for packing,
    sending and reading the reply on a connection (the pool's lock, the retry wrapper, the
    script's own ``EVALSHA``-then-``EVAL`` path, the response callbacks). An asyncio
    connection belongs to the event loop that opened it, so connections are kept per loop.
    Anything unusual (none free, an error reply such as ``NOSCRIPT``, a dropped socket)
    takes the client's own path; a call cancelled or failed half-way closes its connection,
    so no reply is ever read by the wrong call.

    Writes bound with ``reply="later"`` return once sent, as with ``Direct``; the loop would
    otherwise sit idle for each reply of the four checkpoints a turn waits on. A task of the
    loop reads the reply as soon as it comes and only then gives the connection back; a
    refused write, or one whose socket dropped, is sent again through the client's path,
    and what that raises is raised by the loop's next call or ``flush``. A reader cancelled
    before its reply (the loop shutting down) closes the connection: the write was sent, and
    with no reply left unread the socket closes cleanly, so the server still runs it.
    """

    def __init__(self, client: AsyncRedis, size: int = 8) -> None:
        """Keep up to ``size`` connections of ``client``'s pool per event loop."""
        self.client = client
        self.size = size
        self._idle: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Any]] = (
            weakref.WeakKeyDictionary()
        )
        self._opened: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, int] = (
            weakref.WeakKeyDictionary()
        )
        self._readers: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, set[asyncio.Task[None]]
        ] = weakref.WeakKeyDictionary()
        self._errors: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Exception]] = (
            weakref.WeakKeyDictionary()
        )
        self.sent_later = 0
        """Calls sent without waiting for their reply, since the start (for benchmarks)."""
        self._pid = os.getpid()

    def connections(self) -> int:
        """Tell how many connections the short path holds on the running loop."""
        return self._opened.get(asyncio.get_running_loop(), 0)

    def unread(self) -> int:
        """Tell how many writes that already returned are still unconfirmed on this loop."""
        loop = asyncio.get_running_loop()
        return sum(1 for task in self._readers.get(loop, ()) if not task.done())

    def bind(
        self, script: Any, *, reply: Literal["now", "later"] = "now"
    ) -> Callable[..., Awaitable[Any]]:
        """Return ``script``'s call, taking the short path when it can.

        ``reply="later"`` is for writes only: the call returns ``None`` once sent.
        """
        later = reply == "later"

        async def call(keys: list[Any], args: list[Any]) -> Any:
            loop = asyncio.get_running_loop()
            if loop in self._errors:
                self._raise_failed(loop)
            connection = await self._take(loop)
            if connection is not None:
                try:
                    await connection.send_packed_command(
                        connection.pack_command("EVALSHA", script.sha, len(keys), *keys, *args),
                        check_health=False,
                    )
                    if later:
                        self._read_later(loop, connection, _Owed(script, keys, args))
                        return None
                    answer = await connection.read_response()
                    if isinstance(answer, Exception):
                        raise answer
                except Exception:  # noqa: BLE001 - the client's path below handles it
                    await self._drop(loop, connection)
                except BaseException:  # cancelled half-way: the reply must not be left
                    await self._drop(loop, connection)
                    raise
                else:
                    self._idle.setdefault(loop, []).append(connection)
                    return answer
            return await script(keys=keys, args=args)

        return call

    async def flush(self) -> None:
        """Wait for every write of this loop that returned to be confirmed; raise a failure."""
        loop = asyncio.get_running_loop()
        readers = self._readers.get(loop)
        if readers:
            await asyncio.gather(*list(readers))
        if loop in self._errors:
            self._raise_failed(loop)

    def _read_later(self, loop: asyncio.AbstractEventLoop, connection: Any, item: _Owed) -> None:
        self.sent_later += 1
        readers = self._readers.setdefault(loop, set())
        task = loop.create_task(self._reader(loop, connection, item))
        readers.add(task)
        task.add_done_callback(readers.discard)

    async def _reader(self, loop: asyncio.AbstractEventLoop, connection: Any, item: _Owed) -> None:
        """Read one write's reply, then give the connection back (or send the write again)."""
        try:
            await connection.read_response()
        except ResponseError:  # an error reply: the connection is still in step
            self._idle.setdefault(loop, []).append(connection)
        except Exception:  # noqa: BLE001 - the socket is gone
            await self._drop(loop, connection)
        except BaseException:  # cancelled before the reply: the connection is out of step
            await self._drop(loop, connection)
            raise
        else:
            self._idle.setdefault(loop, []).append(connection)
            return
        try:
            await item.script(keys=item.keys, args=item.args)
        except Exception as exc:  # noqa: BLE001 - raised by the loop's next call or flush
            self._errors.setdefault(loop, []).append(exc)

    def _raise_failed(self, loop: asyncio.AbstractEventLoop) -> None:
        """Raise the first write of this loop that failed through the client's path too."""
        errors = self._errors.pop(loop, None)
        if errors:
            raise errors[0]

    async def _take(self, loop: asyncio.AbstractEventLoop) -> Any:
        if self._pid != os.getpid():  # a forked child: the parent's sockets are not ours
            self._idle, self._opened = weakref.WeakKeyDictionary(), weakref.WeakKeyDictionary()
            self._readers, self._errors = weakref.WeakKeyDictionary(), weakref.WeakKeyDictionary()
            self._pid = os.getpid()
        idle = self._idle.get(loop)
        if idle:
            return idle.pop()  # one loop, one task at a time here: no two get one connection
        if self._opened.get(loop, 0) >= self.size:
            return None
        self._opened[loop] = self._opened.get(loop, 0) + 1
        try:  # from the pool, so it counts against the pool's limit, and goes back to it
            return await self.client.connection_pool.get_connection()
        except Exception:  # noqa: BLE001 - the client's path reports what is wrong
            self._opened[loop] -= 1
            return None

    async def _drop(self, loop: asyncio.AbstractEventLoop, connection: Any) -> None:
        self._opened[loop] = max(0, self._opened.get(loop, 1) - 1)
        try:
            await connection.disconnect()
        finally:
            await self.client.connection_pool.release(connection)


_LIVE: weakref.WeakSet[Direct] = weakref.WeakSet()
"""Every ``Direct`` alive, so an exiting interpreter reads their owed replies."""


@atexit.register
def _flush_at_exit() -> None:
    """Read the replies still owed before the process ends.

    A run's last checkpoint is otherwise confirmed by the saver's next call, which a script
    that runs one turn and exits never makes: a write the server refused (its scripts
    flushed by a restart, say) is sent again here, and one that still fails is logged.
    """
    for direct in list(_LIVE):
        try:
            direct.flush(timeout=2.0)
        except Exception as exc:  # noqa: BLE001 - exiting: say so, do not mask the exit
            _log.warning("a Redis write could not be confirmed at exit: %s", exc)


__all__ = ["AsyncDirect", "Direct"]
