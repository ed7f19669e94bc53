"""Script calls on Redis connections kept aside, without redis-py's per-command layers.

The checkpoint saver sends two script calls a superstep and the transcript one a turn; each
went through the pool, a health poll, the retry wrapper and the response callbacks.
``Direct`` is the sync client's short path, ``AsyncDirect`` the async client's.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from redis import Redis
from redis.asyncio import Redis as AsyncRedis
from redis.exceptions import ResponseError


@dataclass(frozen=True)
class _Owed:
    """A call sent on a kept connection whose reply has not been read yet."""

    seq: int
    script: Any
    keys: list[Any]
    args: list[Any]


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
    it began, so a read after ``flush`` sees every write that returned before it.
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

    def flush(self) -> None:
        """Read every reply owed when the call began; raise what a failed write raised."""
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
            while any(seq < target for seq in self._unread):
                self._settled.wait()
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
            owed = _Owed(self._seq, script, keys, args)
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
    otherwise sit idle for each reply of the four checkpoints a turn waits on. A call
    cancelled while it reads an earlier write's reply closes the connection and leaves that
    write to be sent again, through the client's path, by the next call or ``flush`` on the
    loop; a write whose own send is cancelled is not sent again (its caller was cancelled).
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
        self._owed: dict[int, list[_Owed]] = {}  # id(connection) -> its unread replies
        self._lost: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[_Owed]] = (
            weakref.WeakKeyDictionary()
        )  # writes whose connection closed before their reply was read: sent again
        self._unread: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, set[int]] = (
            weakref.WeakKeyDictionary()
        )
        self._settled: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Event] = (
            weakref.WeakKeyDictionary()
        )
        self._seq = 0
        self.sent_later = 0
        """Calls sent without waiting for their reply, since the start (for benchmarks)."""
        self._pid = os.getpid()

    def connections(self) -> int:
        """Tell how many connections the short path holds on the running loop."""
        return self._opened.get(asyncio.get_running_loop(), 0)

    def unread(self) -> int:
        """Tell how many replies of writes that already returned are unread on this loop."""
        return len(self._unread.get(asyncio.get_running_loop(), ()))

    def bind(
        self, script: Any, *, reply: Literal["now", "later"] = "now"
    ) -> Callable[..., Awaitable[Any]]:
        """Return ``script``'s call, taking the short path when it can.

        ``reply="later"`` is for writes only: the call returns ``None`` once sent.
        """
        later = reply == "later"

        async def call(keys: list[Any], args: list[Any]) -> Any:
            loop = asyncio.get_running_loop()
            connection = await self._take(loop)
            if connection is not None:
                usable, error = await self._settle(loop, connection)
                if error is not None:
                    if usable:
                        self._idle.setdefault(loop, []).append(connection)
                    raise error
                if usable:
                    try:
                        await connection.send_packed_command(
                            connection.pack_command("EVALSHA", script.sha, len(keys), *keys, *args),
                            check_health=False,
                        )
                        if later:
                            self._owe(loop, connection, _Owed(self._next(), script, keys, args))
                            answer = None
                        else:
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
        """Read every reply owed on this loop when the call began; raise a failed write's."""
        loop = asyncio.get_running_loop()
        if not self._unread.get(loop):
            return
        target = self._seq
        error = await self._send_lost(loop)
        idle = self._idle.get(loop) or []
        taken, idle[:] = list(idle), []
        for connection in taken:
            usable, failed = await self._settle(loop, connection)
            error = error or failed
            if usable:
                self._idle.setdefault(loop, []).append(connection)
        unread = self._unread.get(loop, set())
        while any(seq < target for seq in unread):  # on connections other tasks hold
            settled = self._settled.setdefault(loop, asyncio.Event())
            settled.clear()
            await settled.wait()
        if error is not None:
            raise error

    def _next(self) -> int:
        self._seq += 1
        return self._seq - 1

    def _owe(self, loop: asyncio.AbstractEventLoop, connection: Any, item: _Owed) -> None:
        self.sent_later += 1
        self._unread.setdefault(loop, set()).add(item.seq)
        self._owed.setdefault(id(connection), []).append(item)

    def _done(self, loop: asyncio.AbstractEventLoop, items: list[_Owed]) -> None:
        unread = self._unread.get(loop)
        if unread is not None:
            unread.difference_update(item.seq for item in items)
        settled = self._settled.get(loop)
        if settled is not None:
            settled.set()

    async def _send_lost(self, loop: asyncio.AbstractEventLoop) -> Exception | None:
        """Send again, through the client's path, the writes whose reply was never read."""
        lost = self._lost.pop(loop, None)
        error: Exception | None = None
        while lost:
            item = lost[0]
            try:
                await item.script(keys=item.keys, args=item.args)
            except Exception as exc:  # noqa: BLE001 - raised by the call that sent it again
                error = error or exc
            except BaseException:  # cancelled: the rest wait for the next call
                self._lost.setdefault(loop, []).extend(lost)
                raise
            lost.pop(0)
            self._done(loop, [item])
        return error

    async def _settle(
        self, loop: asyncio.AbstractEventLoop, connection: Any
    ) -> tuple[bool, Exception | None]:
        """Read ``connection``'s owed replies and send the refused or lost writes again.

        Return whether the connection is still usable, and the error of a write that
        failed again through the client's path.
        """
        owed = self._owed.pop(id(connection), None) or []
        usable = True
        read = 0
        try:
            for item in owed:
                try:
                    await connection.read_response()
                except ResponseError:  # an error reply: the connection is still in step
                    self._lost.setdefault(loop, []).append(item)
                except Exception:  # noqa: BLE001 - the socket is gone: send the rest again
                    usable = False
                    break
                else:
                    self._done(loop, [item])
                read += 1
        except BaseException:  # cancelled mid-read: the connection is out of step
            self._lost.setdefault(loop, []).extend(owed[read:])
            await self._drop(loop, connection)
            raise
        if not usable:
            self._lost.setdefault(loop, []).extend(owed[read:])
            await self._drop(loop, connection)
        return usable, await self._send_lost(loop)

    async def _take(self, loop: asyncio.AbstractEventLoop) -> Any:
        if self._pid != os.getpid():  # a forked child: the parent's sockets are not ours
            self._idle, self._opened = weakref.WeakKeyDictionary(), weakref.WeakKeyDictionary()
            self._owed, self._lost = {}, weakref.WeakKeyDictionary()
            self._unread = weakref.WeakKeyDictionary()
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


__all__ = ["AsyncDirect", "Direct"]
