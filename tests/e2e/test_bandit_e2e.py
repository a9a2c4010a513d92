"""End to end over real stdio: the bandit learns a different arm per query class from a
loopback SearXNG whose answers depend on the query's shape, and takes answer-usage feedback."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from dsh_sidecar.bandit.context import classify
from pygls.exceptions import JsonRpcException

#: Seconds the provider stalls on an open-ended ("how …") query before answering empty.
SLOW_S = 0.3
#: The bandit's speed calibration for this test, ms: fast answers (a few ms) get the full speed
#: half, the stalled one about half of it.
SPEED_MS = 300

FACTOID = ["bike chain length", "road tyre pressure", "cassette sprocket sizes", "chain wear gauge"]
OPEN = [
    "how do I clean a bike chain",
    "how should I store a bicycle",
    "how to true a wheel",
    "how can I fix a squeaky brake",
]


def searx_answer(query: str) -> tuple[float, list[dict[str, str]]]:
    """(delay s, results): a query containing "how" stalls and is empty; any other gets five
    results keyed by its first two words (so a query and its reframings return the same five)."""
    if "how" in query.lower().split():
        return SLOW_S, []
    key = "-".join(query.lower().split()[:2])
    return 0.0, [{"url": f"https://example.org/{key}/{i}", "title": f"{key} {i}", "content": "text"} for i in range(5)]


@pytest.fixture
def shaped_provider() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            q = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
            seen.append(q)
            delay, results = searx_answer(q)
            time.sleep(delay)
            body = json.dumps({"query": q, "results": results}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def options(url: str) -> dict[str, Any]:
    return {
        # no cache: every search reaches the provider (a cached answer is never credited)
        "router": {"order": ["searxng"], "providers": {"searxng": {"baseUrl": url}}, "timeoutMs": 5000, "cache": False},
        "bandit": {"seed": 11, "speedMs": SPEED_MS},
    }


def test_fixture_queries_have_the_classes_the_test_relies_on():
    assert {classify(q) for q in FACTOID} == {"factoid"}
    assert {classify(q) for q in OPEN} == {"open"}


async def test_bandit_prefers_quick_for_factoids_and_thorough_for_open_queries(spawn, shaped_provider, dsh_home: Path):
    url, _seen = shaped_provider
    client = await spawn(options(url))
    chosen: dict[str, list[str]] = {"factoid": [], "open": []}
    rounds = 20
    for i in range(rounds):
        for cls, queries in (("factoid", FACTOID), ("open", OPEN)):
            try:
                r = await client.protocol.send_request_async("dsh/search", {"query": queries[i % len(queries)]})
                chosen[cls].append(r["strategy"])
            except JsonRpcException as exc:  # an open query run quick: the provider answered empty
                assert exc.code == -32001
                chosen[cls].append("quick")
    # within `rounds` calls per class the choices split by class (seeded, so this is stable)
    last = 8
    assert chosen["factoid"][-last:].count("quick") >= last - 1, chosen
    assert chosen["open"][-last:].count("thorough") >= last - 1, chosen
    status = await client.protocol.send_request_async("dsh/status", {})
    classes = status["bandit"]["classes"]
    assert classes["factoid"]["quick"]["mean"] > classes["factoid"]["thorough"]["mean"]
    assert classes["open"]["thorough"]["mean"] > classes["open"]["quick"]["mean"]
    assert status["bandit"]["updates"] == {
        "quick": chosen_count(chosen, "quick"),
        "thorough": chosen_count(chosen, "thorough"),
    }
    # every decision is in the JSONL log (written behind, landed by shutdown), with its class
    # and a propensity in [0, 1]
    await client.protocol.send_request_async("shutdown", None)
    records = [json.loads(line) for line in (dsh_home / "bandit" / "decisions.jsonl").read_text().splitlines()]
    decisions = [r for r in records if r["event"] == "decision"]
    assert len(decisions) == 2 * rounds
    assert [r["class"] for r in decisions[:4]] == ["factoid", "open", "factoid", "open"]
    assert all(0.0 <= r["propensity"] <= 1.0 and r["forced"] is False for r in decisions)
    assert (dsh_home / "bandit" / "posteriors.json").stat().st_mode & 0o777 == 0o600


def chosen_count(chosen: dict[str, list[str]], arm: str) -> int:
    return sum(arms.count(arm) for arms in chosen.values())


async def test_search_feedback_over_stdio(spawn, shaped_provider, dsh_home: Path):
    url, _seen = shaped_provider
    client = await spawn(options(url))
    r = await client.protocol.send_request_async("dsh/search", {"query": "bike chain length", "strategy": "quick"})
    # matched by normalised URL: scheme/host case, default port, trailing slash, fragment
    used = r["sources"][1]["url"].replace("https://example.org", "HTTPS://Example.ORG:443") + "/#section"
    fb = await client.protocol.send_request_async("dsh/searchFeedback", {"searchId": r["searchId"], "usedUrls": [used]})
    assert fb["reward"] == pytest.approx(0.5 * 1.0 + 0.5 * r["reward"], abs=1e-6)
    # usage only turns on: a later report without its sources leaves the search used
    fb = await client.protocol.send_request_async(
        "dsh/searchFeedback", {"searchId": r["searchId"], "usedUrls": ["https://elsewhere.example/"]}
    )
    assert fb["reward"] == pytest.approx(0.5 * 1.0 + 0.5 * r["reward"], abs=1e-6)
    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async("dsh/searchFeedback", {"searchId": "nope", "usedUrls": []})
    assert info.value.code == -32602
    assert info.value.message.startswith("searchId: unknown or expired search 'nope'")
    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async("dsh/searchFeedback", {"searchId": r["searchId"]})
    assert info.value.code == -32602 and "usedUrls" in info.value.message
    # the re-credit landed in the persisted factoid posterior (written behind, landed by
    # shutdown): one observation, credited 0.5 + 0.5 * h
    await client.protocol.send_request_async("shutdown", None)
    doc = json.loads((dsh_home / "bandit" / "posteriors.json").read_text())
    a, b = doc["rows"]["factoid"]["quick"]
    assert a == pytest.approx(0.5 + 0.5 * r["reward"], abs=1e-6) and a + b == pytest.approx(1.0)
