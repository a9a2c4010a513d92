"""The parsing worker (``dsh_sidecar.router.parsing``): large bodies go to one worker process
over a socket the event loop drives. Concurrent jobs each get their own answer, a search
cancelled while its body is parsed leaves the next ones intact, a worker that dies fails only
the jobs it held (the router parses those in a thread) and is started again, and the worker
runs niced and ends when its server's end of the socket closes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

from dsh_sidecar.router import Router
from dsh_sidecar.router.parsing import OFF_PROCESS_BYTES, WORKER, WORKER_NICE, ParseWorker
from support.mockprovider import MockProvider, Reply, Seen
from support.routers import make_router
from support.waiting import until

KEY = "tvly-PARSE-0123456789abcdef"


def body_for(query: str, n: int = 1500) -> bytes:
    rows = [
        {"url": f"https://{query}.example/{i}", "title": f"{query} #{i}", "content": "words " * 40} for i in range(n)
    ]
    body = json.dumps({"query": query, "results": rows}).encode()
    assert len(body) > OFF_PROCESS_BYTES
    return body


def echoing(mock: MockProvider, delay_s: float = 0.0) -> None:
    """Each search answered with a large body naming its query (tavily's wire format)."""

    def reply(seen: Seen) -> Reply:
        return Reply(200, {"content-type": "application/json"}, body_for(seen.json()["query"]), delay_s=delay_s)

    mock.route("POST", "/search", reply)


def router(mock: MockProvider) -> Router:
    return make_router(mock.url, "tavily", env={"TAVILY_API_KEY": KEY}, cache=False)


def nice_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


async def test_concurrent_large_bodies_each_get_their_own_answer(mock_provider):
    echoing(mock_provider)
    r = router(mock_provider)
    try:
        queries = [f"q{i}" for i in range(8)]
        results = await asyncio.gather(*(r.search(q, 3) for q in queries))
    finally:
        await r.aclose()
    for q, res in zip(queries, results, strict=True):
        assert [s.url for s in res.sources] == [f"https://{q}.example/{i}" for i in range(3)] and res.truncated


async def test_a_search_cancelled_during_its_parse_leaves_the_others_intact(mock_provider):
    echoing(mock_provider)
    r = router(mock_provider)
    try:
        await r.search("warm", 3)  # the worker is up
        doomed = asyncio.create_task(r.search("doomed", 3))
        await asyncio.sleep(0)
        kept = asyncio.create_task(r.search("kept", 3))
        await until(lambda: WORKER._pending, "a job at the worker", poll_s=0.001)
        doomed.cancel()
        res = await kept
        after = await r.search("after", 3)
    finally:
        await r.aclose()
    assert res.sources[0].url == "https://kept.example/0"
    assert after.sources[0].url == "https://after.example/0"


async def test_a_dead_worker_fails_its_jobs_to_a_thread_and_is_started_again(mock_provider, caplog):
    def reply(seen: Seen) -> Reply:  # ~5 MB: long enough a parse to kill the worker in the middle of it
        return Reply(200, {"content-type": "application/json"}, body_for(seen.json()["query"], 18000))

    mock_provider.route("POST", "/search", reply)
    r = router(mock_provider)
    try:
        await r.search("warm", 3)
        first = WORKER._process
        assert first is not None and first.is_alive()
        in_thread: list[str] = []
        digest = r._digest
        r._digest = lambda *a: (in_thread.append(a[1].body[:40]), digest(*a))[1]  # type: ignore[method-assign]
        held = asyncio.create_task(r.search("held", 3))
        await until(lambda: WORKER._pending, "the job at the worker", poll_s=0.001)
        os.kill(first.pid, signal.SIGKILL)
        res = await held  # the worker's job failed over to a thread: the same answer
        assert res.sources[0].url == "https://held.example/0"
        assert in_thread == [b'{"query": "held", "results": [{"url": "h']
        assert "the parsing worker exited" in caplog.text or "socket failed" in caplog.text
        again = await r.search("restarted", 3)
        assert again.sources[0].url == "https://restarted.example/0"
        assert WORKER._process is not None and WORKER._process.pid != first.pid and WORKER._process.is_alive()
    finally:
        await r.aclose()


async def test_the_worker_is_niced_and_ends_with_its_socket(mock_provider):
    worker = ParseWorker()
    try:
        await asyncio.to_thread(worker.start)
        process = worker._process
        assert process is not None
        assert nice_of(process.pid) == min(19, nice_of(os.getpid()) + WORKER_NICE)
        ok = await worker.digest("tavily", 200, {"content-type": "application/json"}, body_for("x"), 2, (KEY,))
        assert [s.url for s in ok[1]] == ["https://x.example/0", "https://x.example/1"]
    finally:
        worker.close()
    assert process.exitcode == 0  # it saw its socket close and returned
