"""Stores that misbehave on the wire, for the fleet store's link: a loopback TCP proxy in front of
a real ``redis-server`` that delays or drips its replies, or cuts them off, and listeners that
are not Redis (one that never answers, one that answers garbage, one that floods).

* :class:`StoreProxy` forwards each client connection to the ``redis-server`` on ``upstream``;
  ``delay_s`` holds every chunk of a reply that long, ``drip_s`` sends a reply one byte at a
  time that far apart (every byte within a per-read timeout, the whole reply far beyond it),
  ``cut_after`` closes the client's connection after that many reply bytes (mid-reply);
  ``held`` keeps every reply until :meth:`StoreProxy.release` (a store slower than whatever the
  test does meanwhile, however loaded the machine); ``replies`` counts the reply chunks it has
  let through.
* :class:`FakeListener` speaks just enough RESP to get through redis-py's handshake (``+OK`` to
  ``CLIENT``/``SELECT``/``AUTH``, ``+PONG`` to ``PING``) and then answers every other command
  with ``answer``: ``"silent"`` (nothing, ever), ``"garbage"`` (a bulk string to everything,
  the handshake too: not Redis at all), ``"http"`` (a web server's ``400 Bad Request``: a URL
  with the wrong port) or ``"flood"`` (a bulk string announcing 2 GB, sent until
  the client goes away; ``sent`` counts the bytes that left).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Literal


class _Listener:
    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._open: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, password: str | None = None) -> str:
        auth = f":{password}@" if password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            self._open.append(conn)
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self._closed = True
        self.sock.close()
        for conn in self._open:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()


class StoreProxy(_Listener):
    """A proxy to the ``redis-server`` on 127.0.0.1:``upstream`` whose replies are late, dripped or cut."""

    def __init__(
        self,
        upstream: int,
        delay_s: float = 0.0,
        drip_s: float = 0.0,
        cut_after: int | None = None,
        held: bool = False,
    ) -> None:
        self.upstream = upstream
        self.delay_s = delay_s
        self.drip_s = drip_s
        self.cut_after = cut_after
        #: Reply chunks forwarded to clients so far (a call answered before it saw the store's reply).
        self.replies = 0
        self._released = threading.Event()
        if not held:
            self._released.set()
        super().__init__()

    def release(self) -> None:
        """Let the held replies (and every later one) through."""
        self._released.set()

    def close(self) -> None:
        self._released.set()
        super().close()

    def serve(self, conn: socket.socket) -> None:
        try:
            up = socket.create_connection(("127.0.0.1", self.upstream))
        except OSError:
            conn.close()
            return
        self._open.append(up)
        threading.Thread(target=self._forward, args=(conn, up), daemon=True).start()
        self._reply(up, conn)

    @staticmethod
    def _forward(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_RDWR)

    def _reply(self, up: socket.socket, conn: socket.socket) -> None:
        sent = 0
        with contextlib.suppress(OSError):
            while data := up.recv(65536):
                self._released.wait()
                if self.delay_s:
                    time.sleep(self.delay_s)
                self.replies += 1
                if self.cut_after is not None and sent + len(data) > self.cut_after:
                    conn.sendall(data[: self.cut_after - sent])
                    break
                if self.drip_s:
                    for i in range(len(data)):
                        conn.sendall(data[i : i + 1])
                        time.sleep(self.drip_s)
                else:
                    conn.sendall(data)
                sent += len(data)
        for s in (conn, up):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


class FakeListener(_Listener):
    """A TCP listener that is not Redis (module docstring)."""

    def __init__(self, answer: Literal["silent", "garbage", "http", "flood"]) -> None:
        self.answer = answer
        self.sent = 0
        super().__init__()

    def serve(self, conn: socket.socket) -> None:
        buf = b""
        with contextlib.suppress(OSError):
            while self.answer != "silent" and not self._closed:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
                if self.answer == "http":
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    conn.close()
                    return
                while (command := _one_command(buf)) is not None:
                    words, buf = command
                    name = words[0].upper() if words else b""
                    if self.answer == "garbage":
                        conn.sendall(b"$5\r\nhello\r\n")
                    elif name == b"PING":
                        conn.sendall(b"+PONG\r\n")
                    elif name in (b"CLIENT", b"SELECT", b"AUTH"):
                        conn.sendall(b"+OK\r\n")
                    else:
                        self._flood(conn)
                        return
        # silent: the connection stays open, unanswered, until close()

    def _flood(self, conn: socket.socket) -> None:
        conn.sendall(b"$2000000000\r\n")
        chunk = b"x" * 65536
        while not self._closed:
            conn.sendall(chunk)
            self.sent += len(chunk)


def _one_command(buf: bytes) -> tuple[list[bytes], bytes] | None:
    """The first RESP command (an array of bulk strings) of ``buf`` and the rest, or ``None``
    when it has not all arrived."""
    if not buf.startswith(b"*"):
        return None
    head, sep, rest = buf.partition(b"\r\n")
    if not sep:
        return None
    words = []
    for _ in range(int(head[1:])):
        size, sep, rest = rest.partition(b"\r\n")
        if not sep or len(rest) < int(size[1:]) + 2:
            return None
        n = int(size[1:])
        words.append(rest[:n])
        rest = rest[n + 2 :]
    return words, rest
