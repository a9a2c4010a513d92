"""Large provider bodies are parsed and normalised in a worker process: the
answer is the same as in-process (cut to maxResults, redacted, markup rules kept), a parse
failure is the same provider failure, and the chain falls back as usual."""

from __future__ import annotations

import json

import pytest
from dsh_sidecar.redact import MARKER
from dsh_sidecar.router import AllProvidersFailed, Router
from dsh_sidecar.router.chain import OFF_PROCESS_BYTES
from support.mockprovider import Reply
from support.routers import make_router

KEY = "tvly-LARGE-0123456789abcdef"


def big_body(n: int) -> bytes:
    rows = [
        {"url": f"https://big.example/{i}", "title": f"Vec<T> #{i} {KEY}", "content": "n < 10 and m > 2 " * 20}
        for i in range(n)
    ]
    body = json.dumps({"query": "q", "results": rows}).encode()
    assert len(body) > OFF_PROCESS_BYTES
    return body


def tavily_router(url: str, **extra) -> Router:
    return make_router(url, "tavily", env={"TAVILY_API_KEY": KEY}, cache=False, **extra)


async def test_a_large_body_gives_the_same_answer_from_the_worker(mock_provider):
    mock_provider.route("POST", "/search", Reply(200, {"content-type": "application/json"}, big_body(1500)))
    router = tavily_router(mock_provider.url)
    try:
        res = await router.search("q", 5)
    finally:
        await router.aclose()
    assert [s.url for s in res.sources] == [f"https://big.example/{i}" for i in range(5)] and res.truncated
    assert res.sources[0].title == f"Vec<T> #0 {MARKER}"
    assert res.sources[0].snippet.startswith("n < 10 and m > 2 n < 10")


@pytest.mark.parametrize(
    "body", [b'{"results": [' + b'{"url": "x"},' * 40000 + b" broken", b'{"results": "' + b"x" * 400_000 + b'"}']
)
async def test_a_large_unreadable_body_is_that_providers_failure(mock_provider, body):
    mock_provider.route("POST", "/search", Reply(200, {"content-type": "application/json"}, body))
    router = tavily_router(mock_provider.url)
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("q", 5)
    finally:
        await router.aclose()
    assert info.value.attempts[0].outcome.startswith(("unparseable JSON response", "unexpected JSON shape"))


def test_the_worker_process_runs_under_the_real_server(dsh_home, mock_provider):
    """``python -m dsh_sidecar serve``: the spawned worker must not re-run the server's main."""
    from support.rawrpc import RawServer

    mock_provider.route("POST", "/search", Reply(200, {"content-type": "application/json"}, big_body(1500)))
    srv = RawServer(dsh_home, env={"TAVILY_API_KEY": KEY})
    try:
        srv.initialize({"router": {"provider": "tavily", "providers": {"tavily": {"baseURL": mock_provider.url}}}})
        for i in range(3):
            reply = srv.request("dsh/search", {"query": f"big {i}", "strategy": "quick"}, timeout=60)
            assert [a["outcome"] for a in reply["result"]["attempts"]] == ["ok"]
            assert reply["result"]["sources"][0]["title"] == f"Vec<T> #0 {MARKER}"
        assert srv.shutdown() == 0
    finally:
        srv.close()
    assert b"worker process died" not in srv.stderr_bytes
