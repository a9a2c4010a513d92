"""The router through the real sidecar over stdio (pytest-lsp): ``$/cancelRequest`` aborts the
in-flight HTTP call, the per-request deadline bounds the reply, keys never reach the error,
stderr or ``dsh/status``, and provider health shows in ``dsh/status``."""

from __future__ import annotations

import asyncio
import re
from types import SimpleNamespace

import pytest
from dsh_sidecar.router.budget import deadline_reserve_ms
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from support.mockprovider import MockProvider, Reply, case_reply
from support.routers import ROUTES, router_block
from support.waiting import until

HANG = Reply(200, {"content-type": "application/json"}, b'{"results": []}', hang_s=20.0)


def config(mock, order, **router):
    return {"router": router_block(mock, order, **router)}


async def wait_for(predicate, what="the condition"):
    await until(predicate, what)


async def test_cancel_request_aborts_the_in_flight_http_call(spawn, mock_provider):
    mock_provider.route(*ROUTES["searxng"], HANG)
    client = await spawn(config(mock_provider, ["searxng"], timeoutMs=30000))
    pending = asyncio.ensure_future(
        client.protocol.send_request_async(
            "dsh/search", {"query": "bike chain cleaning", "strategy": "quick"}, msg_id=4242
        )
    )
    await wait_for(lambda: mock_provider.count(*ROUTES["searxng"]) == 1)
    client.protocol.notify("$/cancelRequest", lsp.CancelParams(id=4242))
    with pytest.raises(JsonRpcException) as info:
        await asyncio.wait_for(pending, 60)  # a hang, not a slow machine, fails here
    assert info.value.code == -32800
    # the provider saw its connection closed long before it would have answered (20 s)
    await wait_for(lambda: len(mock_provider.closed_early) == 1)
    # and the server keeps serving
    status = await client.protocol.send_request_async("dsh/status", {})
    assert status["router"]["chain"][0]["provider"] == "searxng"


async def test_deadline_bounds_the_reply_with_a_hanging_provider(spawn, mock_provider):
    mock_provider.route(*ROUTES["searxng"], HANG)
    mock_provider.route(*ROUTES["duckduckgo"], HANG)
    client = await spawn(config(mock_provider, ["searxng", "duckduckgo"]))  # timeoutMs 10000 (seed default)
    # a first search waits (inside its deadline) for the search path's preparation after
    # initialize, which a loaded machine may take longer than 600 ms for: this one, with a
    # deadline shorter than that, returns once it is done, before any provider is tried
    with pytest.raises(JsonRpcException) as first:
        await client.protocol.send_request_async(
            "dsh/search", {"query": "warm", "strategy": "quick", "deadlineMs": 100}
        )
    assert first.value.code == -32001
    calls = mock_provider.count(*ROUTES["searxng"])
    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async(
            "dsh/search", {"query": "bike chain cleaning", "strategy": "quick", "deadlineMs": 600}
        )
    err = info.value
    assert err.code == -32001
    # the attempt got what was left of the 600 ms minus the reserve for the answer (540 at most)
    lines = err.message.split("\n")
    budget = re.fullmatch(r"- searxng: timeout after (\d+)ms \(deadline\)", lines[1])
    assert budget and 0 < int(budget.group(1)) <= 600 - deadline_reserve_ms(600), lines[1]  # not timeoutMs
    assert lines[0] == "search-router: all configured search providers failed:"
    assert lines[2:] == ["- duckduckgo: skipped: deadline"]
    attempts = err.data["attempts"]
    assert [(a["provider"], a["outcome"]) for a in attempts] == [
        ("searxng", lines[1][len("- searxng: ") :]),
        ("duckduckgo", "skipped: deadline"),
    ]
    assert attempts[1]["ms"] == 0
    await wait_for(lambda: len(mock_provider.closed_early) == calls + 1)
    assert mock_provider.count(*ROUTES["duckduckgo"]) == 0


async def test_all_fail_keys_never_leak_to_error_status_or_stderr(spawn, dsh_home, capfd):
    mocks = {pid: MockProvider() for pid in ("exa", "tavily", "searxng")}
    try:
        for pid, case_id in (("exa", "auth-key-echo"), ("tavily", "auth")):
            reply, case = case_reply(pid, case_id)
            reply.expect = {"headers": case["request"]["headers"]}  # the key, trimmed; quick sends maxResults 5
            mocks[pid].route(*ROUTES[pid], reply)
        mocks["searxng"].route(*ROUTES["searxng"], case_reply("searxng", "json-disabled", check=False)[0])
        env = {
            "EXA_API_KEY": " exa-TESTKEY-123 ",
            "TAVILY_API_KEY": "tvly-TESTKEY-123",
            "SEARXNG_BASE_URL": mocks["searxng"].url,
            "DSH_LOG_LEVEL": "INFO",  # the [bandit-search] line is logged at INFO (docs/bandit.md)
        }
        router = {
            "order": ["exa", "tavily", "searxng"],
            "providers": {"exa": {"baseURL": mocks["exa"].url}, "tavily": {"baseURL": mocks["tavily"].url}},
        }
        client = await spawn({"router": router}, env=env)
        with pytest.raises(JsonRpcException) as info:
            await client.protocol.send_request_async(
                "dsh/search", {"query": "how to remove rust from cast iron skillet", "strategy": "quick"}
            )
        lines = info.value.message.split("\n")
        assert lines == [
            "search-router: all configured search providers failed:",
            "- exa: HTTP 401: Invalid API key: [redacted]",
            "- tavily: HTTP 401: Unauthorized: missing or invalid API key.",
            "- searxng: HTTP 403 (is `json` enabled in search.formats of the instance's settings.yml?)",
        ]
        status = await client.protocol.send_request_async("dsh/status", {})
        health = {h["provider"]: h for h in status["router"]["health"]}
        assert health["exa"]["state"] == "cooling_down" and health["exa"]["failureClass"] == "auth"
        assert health["exa"]["lastOutcome"] == "HTTP 401: Invalid API key: [redacted]"
        assert health["searxng"]["state"] == "failing" and health["searxng"]["failureClass"] == "config"
        assert health["searxng"]["cooldownSecondsLeft"] == 0
        # stderr of the server (pytest-lsp forwards it to ours) and every log file under DSH_HOME
        # the server's stderr really is captured (pytest-lsp forwards it as it comes)
        err: list[str] = []
        out: list[str] = []

        def read_stderr() -> bool:
            captured = capfd.readouterr()
            err.append(captured.err)
            out.append(captured.out)
            return "[bandit-search] arm=quick" in "".join(err)

        await until(read_stderr, "the [bandit-search] line on the server's stderr")
        captured = SimpleNamespace(err="".join(err), out="".join(out))
        logs = " ".join(p.read_text(errors="replace") for p in dsh_home.rglob("*") if p.is_file())
        everything = " ".join([info.value.message, str(info.value.data), str(status), captured.err, captured.out, logs])
        for needle in ("exa-TESTKEY-123", "tvly-TESTKEY-123", "TESTKEY-123", "<html", "<!doctype", "read-protected"):
            assert needle.lower() not in everything.lower(), needle
    finally:
        for mock in mocks.values():
            mock.close()


async def test_repeated_search_is_a_cache_hit_through_the_sidecar(spawn, mock_provider):
    mock_provider.route(*ROUTES["searxng"], case_reply("searxng", "ok", check=False)[0])
    client = await spawn(config(mock_provider, ["searxng"]))
    first = await client.protocol.send_request_async(
        "dsh/search", {"query": "bike chain cleaning", "strategy": "quick"}
    )
    second = await client.protocol.send_request_async(
        "dsh/search", {"query": "Bike chain cleaning", "strategy": "quick"}
    )
    assert second["attempts"] == [{"provider": "searxng", "outcome": "ok (cached)", "ms": 0}]
    assert second["sources"] == first["sources"]
    assert mock_provider.count(*ROUTES["searxng"]) == 1
    status = await client.protocol.send_request_async("dsh/status", {})
    assert status["router"]["cache"] == {"entries": 1, "hits": 1, "misses": 1}
