"""The fleet store's read threads: a fixed number of threads and a bounded queue that run the
store's reads, so an event loop awaits a read (:meth:`~.redis_link.StoreLink.read_within`)
instead of holding every other call while the store answers; no call starts a thread of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, Final

#: Threads that run the store's reads for an event loop (:class:`ReadPool`): a slow read holds one,
#: the other keeps serving; no call ever starts a thread of its own.
READ_THREADS: Final = 2
#: Most reads waiting for a :class:`ReadPool` thread; past it a read is not queued and its
#: caller answers from local state at once (counted as ``skippedReads`` by the link).
MAX_WAITING_READS: Final = 64


class Read:
    """One read queued on a :class:`ReadPool`: ``fn``, and ``done(ok, value or exception)`` called
    on the pool's thread when it ran (or, ``ok`` false with :class:`asyncio.CancelledError`, when
    the pool closed first)."""

    __slots__ = ("done", "fn", "given_up")

    def __init__(self, fn: Callable[[], Any], done: Callable[[bool, Any], None] | None) -> None:
        self.fn = fn
        self.done = done
        self.given_up = False

    def give_up(self) -> None:
        """The caller stopped waiting: if no thread has taken it yet, it is never sent."""
        self.given_up = True


class ReadPool:
    """:data:`READ_THREADS` threads (started on first use) that run the store's reads, so an
    event loop awaits a read instead of holding every other call while the store answers. At
    most :data:`MAX_WAITING_READS` reads wait for a thread: :meth:`submit` refuses more (the
    caller serves locally), so the queue never grows without bound, and a read its caller gave up
    on before a thread took it is never sent. A ``SimpleQueue`` and a callback rather than an
    executor's futures: the hop to the thread and back is what a search pays for it."""

    def __init__(self, name: str, threads: int = READ_THREADS, most: int = MAX_WAITING_READS) -> None:
        self._name = name
        self._threads = threads
        self._most = most
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[Read | None] = queue.SimpleQueue()
        self._waiting = 0
        self._running: list[threading.Thread] = []
        self._closed = False

    def submit(self, fn: Callable[[], Any], done: Callable[[bool, Any], None] | None = None) -> Read | None:
        """``fn()`` on a pool thread, then ``done``; ``None`` when :data:`MAX_WAITING_READS` reads
        already wait (or the pool is closed): not run."""
        read = Read(fn, done)
        with self._lock:
            if self._closed or self._waiting >= self._most:
                return None
            self._waiting += 1
            if not self._running:
                for _ in range(self._threads):
                    thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                    self._running.append(thread)
                    thread.start()
        self._jobs.put(read)
        return read

    def waiting(self) -> int:
        """Reads waiting for a thread now."""
        with self._lock:
            return self._waiting

    def _work(self) -> None:
        while (read := self._jobs.get()) is not None:
            with self._lock:
                self._waiting -= 1
                closed = self._closed
            if read.given_up:
                continue  # its caller stopped waiting before it started: never sent
            value: Any
            if closed:
                ok, value = False, asyncio.CancelledError()
            else:
                try:
                    ok, value = True, read.fn()
                except BaseException as exc:  # the caller's to see (it answers locally)
                    ok, value = False, exc
            if read.done is not None:
                with contextlib.suppress(RuntimeError):  # the caller's event loop closed meanwhile
                    read.done(ok, value)

    def close(self) -> None:
        """Refuse new reads; those still queued end without being sent; a running one ends by
        itself (each command bounded by ``timeoutMs``)."""
        with self._lock:
            self._closed = True
            threads = len(self._running)
        for _ in range(threads):
            self._jobs.put(None)


class Late(Exception):
    """A read that did not answer within its caller's bound."""


def settle(answer: asyncio.Future[Any], ok: bool, value: Any) -> None:
    """Give ``answer`` the read's outcome (on its event loop), unless it has one already."""
    if answer.done():
        return
    if ok:
        answer.set_result(value)
    elif isinstance(value, asyncio.CancelledError):  # the pool closed first: as a late read
        answer.set_exception(Late())
    else:
        answer.set_exception(value)
