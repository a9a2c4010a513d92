"""Large provider bodies are parsed and normalised in a worker process (in a thread while it
starts): the answer is the same as in-process (cut to maxResults, redacted, markup rules kept), a
parse failure is the same provider failure, and the chain falls back as usual."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest
from dsh_sidecar.redact import MARKER
from dsh_sidecar.router import AllProvidersFailed, Router
from dsh_sidecar.router.chain import OFF_PROCESS_BYTES
from dsh_sidecar.router.parsing import WORKER, WORKER_NICE
from support.mockprovider import Reply
from support.routers import make_router
from support.waiting import wait_until

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


@pytest.fixture
def worker_up():
    """The worker running before the search (a large body that finds it not running is parsed in a
    thread, and starts it in the background), so the parse below is the worker's."""
    WORKER.start()
    yield
    WORKER.close()


async def test_a_large_body_gives_the_same_answer_from_the_worker(mock_provider, worker_up):
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
async def test_a_large_unreadable_body_is_that_providers_failure(mock_provider, worker_up, body):
    mock_provider.route("POST", "/search", Reply(200, {"content-type": "application/json"}, body))
    router = tavily_router(mock_provider.url)
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("q", 5)
    finally:
        await router.aclose()
    assert info.value.attempts[0].outcome.startswith(("unparseable JSON response", "unexpected JSON shape"))


def worker_of(pid: int) -> int | None:
    """The pid of ``pid``'s parsing worker once it serves (a spawned child, niced — past the spawn's
    preparation, where a re-run of the server's main would have been — and waiting in its event
    loop, which it enters after its ready byte), else ``None``."""
    nice = min(19, os.getpriority(os.PRIO_PROCESS, pid) + WORKER_NICE)
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids = (task / "children").read_text().split()
        except OSError:  # a thread that ended since the folder was listed (the server's pool threads come and go)
            continue
        for kid in kids:
            with contextlib.suppress(OSError):
                proc = Path(f"/proc/{kid}")
                if b"spawn_main" not in (proc / "cmdline").read_bytes():
                    continue
                niced = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[16]) == nice
                return int(kid) if niced and "epoll" in (proc / "wchan").read_text() else None
    return None


def test_the_worker_process_runs_under_the_real_server(dsh_home, mock_provider):
    """``python -m dsh_sidecar serve``: the spawned worker must not re-run the server's main. The
    first large answer starts it in the background; it runs its own code, and the searches after
    it answer as before."""
    from support.rawrpc import RawServer

    mock_provider.route("POST", "/search", Reply(200, {"content-type": "application/json"}, big_body(1500)))
    srv = RawServer(dsh_home, env={"TAVILY_API_KEY": KEY})
    try:
        srv.initialize({"router": {"provider": "tavily", "providers": {"tavily": {"baseURL": mock_provider.url}}}})
        for i in range(4):
            reply = srv.request("dsh/search", {"query": f"big {i}", "strategy": "quick"}, timeout=60)
            assert [a["outcome"] for a in reply["result"]["attempts"]] == ["ok"]
            assert reply["result"]["sources"][0]["title"] == f"Vec<T> #0 {MARKER}"
            if i == 0:
                worker = wait_until(lambda: worker_of(srv.proc.pid), "the parsing worker running")
        wait_until(lambda: worker_of(srv.proc.pid) == worker, "the same worker, idle again")
        assert srv.shutdown() == 0
    finally:
        srv.close()
    assert b"worker process died" not in srv.stderr_bytes
    assert b"parsing worker" not in srv.stderr_bytes  # neither failed to start, nor exited, nor failed
