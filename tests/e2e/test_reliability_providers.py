"""Provider faults through the sidecar over real stdio: each broken provider costs one attempt
(named in ``attempts``), the chain falls back to a healthy loopback searxng, and the server
keeps serving. Faults: connection refused, reset mid-body, slow-loris body, 5xx storm, 429
flood, invalid JSON, a 50 MB body, a redirect to another host."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from pathlib import Path

import pytest
from support.mockprovider import MockProvider, Reply, case_reply

BRAVE_PATH = "/res/v1/web/search"
BRAVE_KEY = "BSA-FAULTKEY-7f3a9c"


class ResetServer:
    """A loopback HTTP server that sends a 200 header and half a body, then resets the
    connection (SO_LINGER 0 → RST)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.hits = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return "http://127.0.0.1:%d" % self.sock.getsockname()[1]

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            try:
                conn.recv(65536)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
                    + b'{"web": {"results": [{"url": "https://half'
                )
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            finally:
                conn.close()

    def close(self) -> None:
        self.sock.close()


def closed_port_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def config(brave_url: str, searxng_url: str, timeout_ms: int = 1500) -> dict:
    return {
        "router": {
            "order": ["brave", "searxng"],
            "timeoutMs": timeout_ms,
            "cache": False,
            "providers": {"brave": {"apiKey": BRAVE_KEY, "baseUrl": brave_url}, "searxng": {"baseUrl": searxng_url}},
        }
    }


@pytest.fixture
def healthy():
    mock = MockProvider()
    mock.route("GET", "/search", case_reply("searxng", "ok", check=False)[0])
    yield mock
    mock.close()


async def search(client, query: str) -> dict:
    return await asyncio.wait_for(
        client.protocol.send_request_async("dsh/search", {"query": query, "strategy": "quick"}), 30
    )


async def assert_fell_back(client, query: str) -> str:
    """One search falls back to searxng; returns brave's attempt outcome."""
    result = await search(client, query)
    attempts = result["attempts"]
    assert [a["provider"] for a in attempts] == ["brave", "searxng"], attempts
    assert attempts[1]["outcome"] == "ok"
    assert len(result["sources"]) == 5
    outcome = attempts[0]["outcome"]
    assert BRAVE_KEY not in outcome
    return outcome


async def assert_serving(client) -> None:
    status = await client.protocol.send_request_async("dsh/status", {})
    assert [c["provider"] for c in status["router"]["chain"]] == ["brave", "searxng"]


async def test_connection_refused(spawn, healthy):
    client = await spawn(config(closed_port_url(), healthy.url))
    outcome = await assert_fell_back(client, "refused provider")
    assert outcome.startswith("network error"), outcome
    await assert_serving(client)


async def test_reset_mid_body(spawn, healthy):
    reset = ResetServer()
    try:
        client = await spawn(config(reset.url, healthy.url))
        outcome = await assert_fell_back(client, "reset provider")
        assert outcome.startswith("network error"), outcome
        assert reset.hits == 1
        await assert_serving(client)
    finally:
        reset.close()


async def test_slow_loris_body_times_out_within_the_provider_budget(spawn, healthy):
    slow = MockProvider()
    try:
        slow.route(
            "GET",
            BRAVE_PATH,
            Reply(200, {"content-type": "application/json"}, b'{"web":{"results":[]}}' * 50, trickle_s=0.05),
        )
        client = await spawn(config(slow.url, healthy.url, timeout_ms=800))
        result = await search(client, "slow loris provider")
        assert result["attempts"][0]["outcome"] == "timeout after 800ms"
        # the timeout covers the body, not just headers: far less than the ~55 s the body trickles
        # (a bound for a loaded machine, not a latency figure)
        assert result["attempts"][0]["ms"] < 25_000
        assert result["attempts"][1]["outcome"] == "ok"
    finally:
        slow.close()


async def test_5xx_storm_every_search_still_answered(spawn, healthy):
    storm = MockProvider()
    try:
        storm.route("GET", BRAVE_PATH, Reply(503, {"content-type": "text/html"}, b"<html>Service Unavailable</html>"))
        client = await spawn(config(storm.url, healthy.url))
        results = await asyncio.gather(*(search(client, f"storm {i}") for i in range(20)))
        for result in results:
            assert result["attempts"][-1] == {**result["attempts"][-1], "provider": "searxng", "outcome": "ok"}
            assert "<html" not in result["attempts"][0]["outcome"].lower()
        outcomes = {r["attempts"][0]["outcome"] for r in results}
        assert any(o.startswith("HTTP 503") for o in outcomes), outcomes
        await assert_serving(client)
    finally:
        storm.close()


async def test_429_flood_puts_the_provider_in_cooldown(spawn, healthy):
    flood = MockProvider()
    try:
        reply, _ = case_reply("brave", "rate-limited", check=False)
        flood.route("GET", BRAVE_PATH, reply)
        client = await spawn(config(flood.url, healthy.url))
        first = await assert_fell_back(client, "flood 0")
        assert first.startswith("HTTP 429"), first
        for i in range(1, 15):
            await assert_fell_back(client, f"flood {i}")
        # the provider's Retry-After/cooldown keeps the sidecar from hammering it
        assert flood.count("GET", BRAVE_PATH) < 15
    finally:
        flood.close()


async def test_invalid_json_body(spawn, healthy):
    bad = MockProvider()
    try:
        bad.route("GET", BRAVE_PATH, Reply(200, {"content-type": "application/json"}, b'{"web": {"results": [ nope'))
        client = await spawn(config(bad.url, healthy.url))
        outcome = await assert_fell_back(client, "invalid json provider")
        assert "json" in outcome.lower(), outcome
    finally:
        bad.close()


async def test_50mb_body_is_refused_by_a_bounded_read(spawn, healthy):
    huge = MockProvider()
    try:
        huge.route("GET", BRAVE_PATH, Reply(200, {"content-type": "application/json"}, b" " * (50 * 1024 * 1024)))
        # spawned, not forked: the RSS read below is of this pid
        client = await spawn(config(huge.url, healthy.url, timeout_ms=10000), forked=False)
        outcome = await assert_fell_back(client, "huge body provider")
        assert outcome == "response body larger than 8 MiB", outcome
        server_pid = client._server.pid
        rss = int(
            next(
                line.split()[1]
                for line in Path(f"/proc/{server_pid}/status").read_text().splitlines()
                if line.startswith("VmRSS:")
            )
        )
        assert rss < 200 * 1024, f"RSS {rss} KiB after a 50 MB body"  # never held the whole body
    finally:
        huge.close()


async def test_redirect_to_another_host_is_not_followed(spawn, healthy):
    elsewhere = MockProvider()
    redirector = MockProvider()
    try:
        elsewhere.route("GET", BRAVE_PATH, case_reply("brave", "ok", check=False)[0])
        redirector.route("GET", BRAVE_PATH, Reply(302, {"location": elsewhere.url + BRAVE_PATH + "?q=x"}))
        client = await spawn(config(redirector.url, healthy.url))
        outcome = await assert_fell_back(client, "redirecting provider")
        assert outcome.startswith("HTTP 302"), outcome
        assert redirector.count("GET", BRAVE_PATH) == 1
        assert elsewhere.requests == []  # the key never reached the other host
    finally:
        elsewhere.close()
        redirector.close()
