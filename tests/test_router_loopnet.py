"""The router's connections on asyncio's own transports (``dsh_sidecar.router.loopnet``, the
network backend under httpx's pool): TLS verified against the router's context, bodies larger
than the read-ahead bound arrive whole and in order, a keep-alive connection the server closed
while idle is not reused, and every transport failure is the provider's ``network`` failure."""

from __future__ import annotations

import hashlib
import socket
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import trustme
from dsh_sidecar.router import http
from dsh_sidecar.router.loopnet import HIGH_WATER, LOW_WATER, LoopBackend, _Buffering
from dsh_sidecar.router.providers.base import NETWORK, HttpRequest, ProviderFailure

BODY = bytes(range(256)) * (3 * HIGH_WATER // 2 // 256 + 7)  # past the read-ahead bound, not a multiple of 64 KiB


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class Origin:
    """A loopback HTTP/1.1 server (TLS with ``cert``): ``GET /body`` answers :data:`BODY`
    (keep-alive); ``GET /close`` answers and closes the connection after a short pause;
    ``GET /reset`` sends half of :data:`BODY` and resets the connection. ``connections``
    counts the TCP connections accepted."""

    def __init__(self, cert: trustme.LeafCert | None = None) -> None:
        self.connections = 0
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                origin.connections += 1
                super().setup()

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path == "/reset":
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(BODY)))
                    self.end_headers()
                    self.wfile.write(BODY[: len(BODY) // 2])
                    self.wfile.flush()
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    self.connection.close()
                    self.close_connection = True
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(BODY)))
                self.end_headers()
                self.wfile.write(BODY)
                if self.path == "/close":
                    self.wfile.flush()
                    self.close_connection = True

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.scheme = "http"
        if cert is not None:
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            cert.configure_cert(ctx)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def ca() -> Iterator[trustme.CA]:
    """A throwaway CA the router's TLS context trusts for the test (its context is one per
    process: rebuilt before and after)."""
    authority = trustme.CA()
    http.tls_context.cache_clear()
    authority.configure_trust(http.tls_context())
    yield authority
    http.tls_context.cache_clear()


async def fetch(client: http.ProviderClient, url: str) -> bytes:
    response = await http.exchange(client, HttpRequest("GET", url), 10_000)
    assert response.status == 200
    return response.body


async def test_the_client_connects_through_the_loop_backend():
    client = http.make_client()
    try:
        assert isinstance(client.transport._pool._network_backend, LoopBackend)  # httpx 0.29 / httpcore 1.0
        assert client._transport is client.transport
    finally:
        await client.aclose()


async def test_tls_is_verified_and_a_large_body_arrives_whole(ca):
    origin = Origin(ca.issue_cert("127.0.0.1"))
    client = http.make_client()
    try:
        for _ in range(3):  # one connection, kept alive and reused
            assert hashlib.sha256(await fetch(client, origin.url("/body"))).digest() == hashlib.sha256(BODY).digest()
        assert origin.connections == 1
    finally:
        await client.aclose()
        origin.close()


async def test_a_certificate_for_another_name_is_refused(ca):
    origin = Origin(ca.issue_cert("other.example"))
    client = http.make_client()
    try:
        with pytest.raises(ProviderFailure) as failure:
            await fetch(client, origin.url("/body"))
        assert (failure.value.reason, failure.value.failure_class) == ("network error: connection failed", NETWORK)
    finally:
        await client.aclose()
        origin.close()


async def test_an_untrusted_certificate_is_refused():
    origin = Origin(trustme.CA().issue_cert("127.0.0.1"))  # a CA nobody trusts
    client = http.make_client()
    try:
        with pytest.raises(ProviderFailure) as failure:
            await fetch(client, origin.url("/body"))
        assert failure.value.reason == "network error: connection failed"
    finally:
        await client.aclose()
        origin.close()


async def test_a_connection_the_server_closed_while_idle_is_not_reused():
    import asyncio

    origin = Origin()
    client = http.make_client()
    try:
        assert await fetch(client, origin.url("/close")) == BODY
        for _ in range(200):  # the server's FIN reaches the idle connection's protocol
            if origin.connections == 1 and _idle_closed(client):
                break
            await asyncio.sleep(0.01)
        assert await fetch(client, origin.url("/body")) == BODY
        assert origin.connections == 2  # a new connection, not a failed reuse of the closed one
    finally:
        await client.aclose()
        origin.close()


def _idle_closed(client: http.ProviderClient) -> bool:
    pool = client.transport._pool
    return all(c.has_expired() or c.is_closed() for c in pool.connections)


async def test_a_reset_in_the_middle_of_the_body_is_a_network_failure():
    origin = Origin()
    client = http.make_client()
    try:
        with pytest.raises(ProviderFailure) as failure:
            await fetch(client, origin.url("/reset"))
        assert failure.value.failure_class == NETWORK
        assert failure.value.reason in ("network error: read failed", "network error: connection closed by the server")
    finally:
        await client.aclose()
        origin.close()


async def test_a_refused_connection_is_a_network_failure():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = http.make_client()
    try:
        with pytest.raises(ProviderFailure) as failure:
            await fetch(client, f"http://127.0.0.1:{port}/body")
        assert (failure.value.reason, failure.value.failure_class) == ("network error: connection failed", NETWORK)
    finally:
        await client.aclose()


class _Reading:
    """A transport stand-in that records pause/resume_reading."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def pause_reading(self) -> None:
        self.calls.append("pause")

    def resume_reading(self) -> None:
        self.calls.append("resume")


def test_the_buffer_hands_out_slices_and_joins_and_bounds_its_read_ahead():
    proto = _Buffering()
    transport = _Reading()
    proto.transport = transport  # type: ignore[assignment]
    proto.data_received(b"a" * 100)
    proto.data_received(b"b" * 50)
    assert proto.take(1000) == b"a" * 100 + b"b" * 50  # small chunks joined
    proto.data_received(b"0123456789")
    assert [proto.take(4), proto.take(4), proto.take(4)] == [b"0123", b"4567", b"89"]  # sliced, in order
    assert proto.size == 0 and not proto.chunks and transport.calls == []
    big = bytes(range(256)) * (HIGH_WATER // 256)
    proto.data_received(big)  # the bound reached: reading paused once
    assert transport.calls == ["pause"]
    proto.data_received(b"tail")  # more may still come in: kept, never dropped
    out = b""
    while proto.size - 64 * 1024 >= LOW_WATER:
        out += proto.take(64 * 1024)
        assert transport.calls == ["pause"]
    out += proto.take(64 * 1024)  # under the low mark: reading resumed once
    assert transport.calls == ["pause", "resume"]
    while proto.chunks:
        out += proto.take(64 * 1024)
    assert out == big + b"tail" and proto.size == 0
