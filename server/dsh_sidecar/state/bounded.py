"""The fleet store's connections with each command bounded as a whole (the "Degrades, never
fails" paragraph of :mod:`.redis_store`): in time, from its first byte sent to the last of its
reply, and in the size of that reply. :class:`~.redis_link.StoreLink` builds its client on them.
"""

from __future__ import annotations

import errno
import socket
import time
from typing import Any, Final

import redis

#: Most bytes one command's reply may bring (:class:`~.redis_link.StoreLink` subclasses set what
#: their largest bounded read can return): a server that sends more is not the store we asked
#: (a 2 GB bulk string from a listener that is not Redis was read whole).
MAX_REPLY_BYTES: Final = 4 * 1024 * 1024


class BoundedSocket:
    """A connection's socket whose every command is bounded as a whole: from the first byte
    sent, its reply must arrive within ``timeout_s`` and hold at most ``max_bytes``.

    redis-py's ``socket_timeout`` bounds each ``recv`` alone, so a store that sends its replies a
    few bytes at a time, each within the timeout, held every call for seconds (replies dripped
    at 20 ms a byte with ``timeoutMs`` 50: ``initialize`` 9.9 s, a search 1.3 to 7.7 s, all on
    the event loop), and a reply was read whole however long it said it was. Past the deadline a read raises ``socket.timeout`` (``TimeoutError``) (redis-py's ``TimeoutError``),
    past the size an ``OSError`` (its ``ConnectionError``): the store is away either way."""

    def __init__(self, sock: socket.socket, timeout_s: float, max_bytes: int) -> None:
        self._sock = sock
        self._timeout_s = timeout_s
        self._max_bytes = max_bytes
        self._base = sock.gettimeout()
        self._deadline = float("inf")
        self._left = max_bytes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)

    def settimeout(self, value: float | None) -> None:
        self._base = value
        self._sock.settimeout(value)

    def gettimeout(self) -> float | None:
        return self._base

    def sendall(self, data: Any, *args: Any) -> None:
        self._deadline = time.monotonic() + self._timeout_s  # a command (or a pipeline) starts
        self._left = self._max_bytes
        self._sock.settimeout(self._base)  # not what was left of the last command's deadline
        self._sock.sendall(data, *args)

    def _wait(self) -> None:
        """Set the socket's timeout to what is left of the command's deadline."""
        if self._base == 0:  # a poll (is anything left unread?) waits for nothing
            return
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")  # socket.timeout, as a recv past its timeout
        self._sock.settimeout(left if self._base is None else min(left, self._base))

    def _count(self, n: int) -> None:
        self._left -= n
        if self._left < 0:
            raise OSError(errno.EMSGSIZE, f"a reply over {self._max_bytes} bytes")

    def recv(self, size: int, *args: Any) -> bytes:
        self._wait()
        data = self._sock.recv(size, *args)
        self._count(len(data))
        return data

    def recv_into(self, buffer: Any, *args: Any) -> int:
        self._wait()
        n = self._sock.recv_into(buffer, *args)
        self._count(n)
        return n


class _Bounded:
    """A redis-py connection on a :class:`BoundedSocket` (mixed into its TCP and TLS classes):
    ``max_reply_bytes`` rides in the pool's connection arguments."""

    def __init__(self, *args: Any, max_reply_bytes: int = MAX_REPLY_BYTES, **kwargs: Any) -> None:
        self.max_reply_bytes = max_reply_bytes
        super().__init__(*args, **kwargs)

    def _connect(self) -> Any:
        sock = super()._connect()  # type: ignore[misc]
        return BoundedSocket(sock, self.socket_timeout, self.max_reply_bytes)  # type: ignore[attr-defined]


class BoundedConnection(_Bounded, redis.connection.Connection):
    """``redis://``: TCP, each command bounded in time and size (:class:`BoundedSocket`)."""


class BoundedSSLConnection(_Bounded, redis.connection.SSLConnection):
    """``rediss://``: TLS, each command bounded in time and size (:class:`BoundedSocket`)."""
