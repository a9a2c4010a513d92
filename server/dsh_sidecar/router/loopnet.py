"""httpcore's network backend on asyncio's own transports and protocols.

httpx's async client reaches the network through httpcore, whose only asyncio backend is
anyio's. On this path (a loopback search: one request, one answer of a few KB) that backend
costs about as much CPU as the rest of the exchange (bench/router.py, docs/benchmarks.md):
each read and write opens an ``anyio.fail_after`` scope and a ``map_exceptions`` context
manager; each write yields a checkpoint; each receive resumes the transport's reading and
pauses it again (one ``epoll_ctl`` pair per chunk: 1 MB answers arrive in dozens); and the
pool's idle-connection check polls the socket (a syscall per request). httpcore takes a
custom backend (:class:`httpcore.AsyncNetworkBackend`, its documented extension point); this
is one, and only what httpcore's HTTP/1.1 connection calls:

* the protocol keeps reading into a buffer while it holds less than :data:`HIGH_WATER`
  bytes (and stops until a read brings it under :data:`LOW_WATER`), so a read returns what
  is buffered at once (small chunks joined, a large one sliced, up to ``max_bytes``) and
  waits on one future otherwise;
* a write hands the bytes to the transport and waits only while the transport asks the
  protocol to pause writing;
* ``is_readable`` (the pool's "did the server close this idle connection" check) is the
  buffer's state: an end of stream or a byte sent while idle is already known;
* TLS is :meth:`asyncio.loop.start_tls` with the caller's context (the router's
  verifying one, :func:`dsh_sidecar.router.http.tls_context`) and server name;
* timeouts are :func:`asyncio.timeout` and failures are httpcore's own exception types,
  which httpx maps to its own as for any backend.

The router bounds every exchange as a whole (:func:`dsh_sidecar.router.http.exchange`), so
the per-operation timeouts are ``None`` there; they are honoured for any other caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any, Final

import httpcore

#: Bytes buffered ahead of the reader before the transport's reading is paused. The reader is
#: the same event loop, draining the buffer as fast as it fills, so pausing is for a reader
#: that stopped: at 256 KiB (what asyncio's selector transport reads in one call) a 1 MB
#: answer paused and resumed the reading (two ``epoll_ctl``) four times.
HIGH_WATER: Final = 2 * 1024 * 1024
#: Bytes under which a paused transport's reading is resumed.
LOW_WATER: Final = 256 * 1024


@contextlib.contextmanager
def _mapped(timeout_class: type[Exception], error_class: type[Exception]) -> Iterator[None]:
    try:
        yield
    except TimeoutError as exc:
        raise timeout_class(str(exc) or "timed out") from exc
    except (OSError, ssl.SSLError, EOFError) as exc:
        raise error_class(str(exc) or type(exc).__name__) from exc


class _Buffering(asyncio.Protocol):
    """Collects what the transport reads (bounded by the water marks) and wakes one reader."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[bytes] = deque()
        self.offset = 0  # of the first chunk: what was handed out of it already
        self.size = 0
        self.eof = False
        self.error: BaseException | None = None
        self.reading_paused = False
        self.reader: asyncio.Future[None] | None = None
        self.drained: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        if self.size >= HIGH_WATER and not self.reading_paused and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close the transport: HTTP/1.1 has no use for a half-open connection

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        self.resume_writing()

    def pause_writing(self) -> None:
        if self.drained is None:
            self.drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        drained, self.drained = self.drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def _wake(self) -> None:
        reader = self.reader
        if reader is not None and not reader.done():
            reader.set_result(None)

    def take(self, max_bytes: int) -> bytes:
        """Up to ``max_bytes`` of what is buffered: a chunk as it came when it fits alone,
        consecutive small chunks joined, a large chunk handed out in ``max_bytes`` slices from
        an offset (its remainder is never copied again)."""
        first = self.chunks[0]
        start = self.offset
        left = len(first) - start
        if left > max_bytes:
            data = first[start : start + max_bytes]
            self.offset = start + max_bytes
        else:
            self.chunks.popleft()
            self.offset = 0
            data = first[start:] if start else first
            if self.chunks and len(data) + len(self.chunks[0]) <= max_bytes:
                parts, n = [data], len(data)
                while self.chunks and n + len(self.chunks[0]) <= max_bytes:
                    part = self.chunks.popleft()
                    parts.append(part)
                    n += len(part)
                data = b"".join(parts)
        self.size -= len(data)
        if self.reading_paused and self.size < LOW_WATER and self.transport is not None:
            self.reading_paused = False
            self.transport.resume_reading()
        return data


class LoopStream(httpcore.AsyncNetworkStream):
    """One connection: an asyncio transport and its :class:`_Buffering` protocol."""

    def __init__(self, transport: asyncio.Transport, protocol: _Buffering) -> None:
        self._transport = transport
        self._protocol = protocol

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        p = self._protocol
        while not p.chunks:
            if p.eof:
                if p.error is not None:
                    raise httpcore.ReadError(str(p.error) or type(p.error).__name__)
                return b""
            p.reader = asyncio.get_running_loop().create_future()
            try:
                if timeout is None:
                    await p.reader
                else:
                    with _mapped(httpcore.ReadTimeout, httpcore.ReadError):
                        async with asyncio.timeout(timeout):
                            await p.reader
            finally:
                p.reader = None
        return p.take(max_bytes)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        p = self._protocol
        if self._transport.is_closing() or p.eof and p.error is not None:
            raise httpcore.WriteError("connection closed")
        self._transport.write(buffer)
        drained = p.drained
        if drained is not None:
            with _mapped(httpcore.WriteTimeout, httpcore.WriteError):
                async with asyncio.timeout(timeout):
                    await asyncio.shield(drained)
            if p.error is not None:
                raise httpcore.WriteError(str(p.error) or type(p.error).__name__)

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> LoopStream:
        loop = asyncio.get_running_loop()
        try:
            with _mapped(httpcore.ConnectTimeout, httpcore.ConnectError):
                async with asyncio.timeout(timeout):
                    tls = await loop.start_tls(
                        self._transport, self._protocol, ssl_context, server_hostname=server_hostname
                    )
        except BaseException:
            self._transport.close()
            raise
        if tls is None:  # the connection closed during the handshake
            self._transport.close()
            raise httpcore.ConnectError("connection closed during the TLS handshake")
        assert isinstance(tls, asyncio.Transport)
        self._protocol.transport = tls
        return LoopStream(tls, self._protocol)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # an idle connection the server closed, or wrote to
            return bool(self._protocol.chunks) or self._protocol.eof
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        return None


class LoopBackend(httpcore.AsyncNetworkBackend):
    """Connections made by the running loop (``create_connection``: TCP_NODELAY is set)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> LoopStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        with _mapped(httpcore.ConnectTimeout, httpcore.ConnectError):
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_connection(_Buffering, host, port, local_addr=local)
        return _opened(transport, protocol, socket_options)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> LoopStream:
        loop = asyncio.get_running_loop()
        with _mapped(httpcore.ConnectTimeout, httpcore.ConnectError):
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_unix_connection(_Buffering, path)
        return _opened(transport, protocol, socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def _opened(transport: asyncio.BaseTransport, protocol: _Buffering, socket_options: Iterable[Any] | None) -> LoopStream:
    assert isinstance(transport, asyncio.Transport)
    sock = transport.get_extra_info("socket")
    for option in socket_options or ():
        sock.setsockopt(*option)
    return LoopStream(transport, protocol)
