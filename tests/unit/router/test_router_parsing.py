"""The parsing worker (``dsh_sidecar.router.parsing``): large bodies go to one worker process
over a socket the event loop drives. The worker is started in the background by the first large
answer, which is parsed in a thread (no search waits for the worker's start); concurrent jobs
each get their own answer, a search cancelled while its body is parsed leaves the next ones
intact, a worker that dies fails only the jobs it held (the router parses those in a thread) and
is started again, and the worker runs niced and ends when its server's end of the socket closes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from dsh_sidecar.router import AllProvidersFailed, Router, parsing
from dsh_sidecar.router.parsing import OFF_PROCESS_BYTES, WORKER, WORKER_NICE, ParseWorker, WorkerGone
from support.mockprovider import MockProvider, Reply, Seen
from support.routers import make_router
from support.waiting import HANG_S, until

#: Bound of a parse worker's start (spawn and imports), seconds: the worker runs WORKER_NICE
#: below the server, so at load 40-45 its start outlasted HANG_S (60 s) while the test passed
#: alone in 11 s; a hang's bound still, not a latency.
WORKER_START_S = 3 * HANG_S

KEY = "tvly-PARSE-0123456789abcdef"


def body_for(query: str, n: int = 1500) -> bytes:
    body = body_of(query, n)
    assert len(body) > OFF_PROCESS_BYTES
    return body


def body_of(query: str, n: int) -> bytes:
    """A tavily answer of ``n`` results naming ``query``."""
    rows = [
        {"url": f"https://{query}.example/{i}", "title": f"{query} #{i}", "content": "words " * 40} for i in range(n)
    ]
    return json.dumps({"query": query, "results": rows}).encode()


def echoing(mock: MockProvider, delay_s: float = 0.0) -> None:
    """Each search answered with a large body naming its query (tavily's wire format)."""

    def reply(seen: Seen) -> Reply:
        return Reply(200, {"content-type": "application/json"}, body_for(seen.json()["query"]), delay_s=delay_s)

    mock.route("POST", "/search", reply)


def router(mock: MockProvider) -> Router:
    """A router whose attempts' budget is the hang bound (:func:`patient_chain`)."""
    return make_router(mock.url, "tavily", env={"TAVILY_API_KEY": KEY}, cache=False, timeoutMs=int(HANG_S * 1000))


@pytest.fixture(autouse=True)
def fresh_worker() -> Iterator[None]:
    """Each test meets the server's one worker as a new server does (not running, not behind):
    one a test before left behind (on a loaded machine, parsing still) is not its to meet."""
    WORKER.close()
    yield
    WORKER.close()


@pytest.fixture(autouse=True)
def patient_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chain waits for the worker's digest as long as a hang takes: on a loaded machine the
    niced worker's first parse or fetch (its imports) runs seconds past the chain's grace, which
    sends the work elsewhere. These tests are about where the work goes and what comes back, not
    how soon the worker answers; those about the chain's patience with a stopped or silent worker
    set the grace themselves."""
    from dsh_sidecar.router import chain

    monkeypatch.setattr(chain, "WORKER_GRACE_MS", HANG_S * 1000)


def nice_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


async def started(r: Router, query: str = "warm") -> None:
    """A large answer (read and parsed here), then the worker it started in the background, ready:
    the provider's next exchanges are the worker's."""
    res = await r.search(query, 3)
    assert res.sources[0].url == f"https://{query}.example/0"
    await until(WORKER.ready, "the worker started in the background", timeout_s=WORKER_START_S)


def digests_here(r: Router) -> list[str]:
    """The queries of the bodies ``r`` digests in this process (in a thread or on the loop)."""
    queries: list[str] = []
    digest = r._digest

    def counted(*args):  # type: ignore[no-untyped-def]
        queries.append(json.loads(args[1].body)["query"])
        return digest(*args)

    r._digest = counted  # type: ignore[method-assign]
    return queries


def held_starts(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], threading.Event]:
    """Each start of a worker (its thread's name listed) waits for the event before it spawns: a
    start that takes as long as the test says, as a loaded machine's does."""
    starts: list[str] = []
    release = threading.Event()
    start = ParseWorker.start

    def held(self: ParseWorker) -> None:
        starts.append(threading.current_thread().name)
        assert release.wait(HANG_S), "the start was never released"
        start(self)

    monkeypatch.setattr(ParseWorker, "start", held)
    return starts, release


@pytest.mark.slow
async def test_the_first_large_answer_is_parsed_here_while_the_worker_starts_in_the_background(
    mock_provider, monkeypatch
):
    """No search waits for the worker's spawn and imports (seconds on a loaded machine, outside
    any deadline): the answers that come while it starts are read and parsed here, one start is
    under way however many come, and the answers after it is ready are the worker's."""
    echoing(mock_provider)
    starts, release = held_starts(monkeypatch)
    on_loop = counting_loop_exchanges(monkeypatch)
    r = router(mock_provider)
    here = digests_here(r)
    try:
        first = await r.search("first", 3)  # answered while the start is held
        second = await r.search("second", 3)
        starting = not WORKER.ready()
        release.set()
        await until(WORKER.ready, "the worker started in the background", timeout_s=WORKER_START_S)
        third = await r.search("third", 3)
        fourth = await r.search("fourth", 3)
    finally:
        release.set()
        await r.aclose()
    assert starting and starts == ["dsh-router-parse-start"]
    assert on_loop == here == ["first", "second"]  # "third", "fourth": fetched and parsed by the worker
    for q, res in zip(("first", "second", "third", "fourth"), (first, second, third, fourth), strict=True):
        assert [s.url for s in res.sources] == [f"https://{q}.example/{i}" for i in range(3)] and res.truncated
        assert [(a.provider, a.outcome) for a in res.attempts] == [("tavily", "ok")]


@pytest.mark.slow
async def test_a_worker_that_cannot_start_is_tried_again_only_after_a_while(mock_provider, monkeypatch, caplog):
    echoing(mock_provider)
    starts: list[int] = []

    def failing(self: ParseWorker) -> None:
        starts.append(1)
        raise WorkerGone("cannot start the parsing worker: OSError")

    monkeypatch.setattr(ParseWorker, "start", failing)
    r = router(mock_provider)
    here = digests_here(r)
    try:
        first = await r.search("first", 3)
        await until(lambda: "cannot start the parsing worker" in caplog.text, "the failed start logged")
        second = await r.search("second", 3)  # within RETRY_START_S: no new start
        tried = list(starts)
        monkeypatch.setattr(parsing, "RETRY_START_S", 0.0)
        third = await r.search("third", 3)
        await until(lambda: len(starts) == 2, "the start tried again")
    finally:
        await r.aclose()
    assert tried == [1] and here == ["first", "second", "third"]
    assert [res.sources[0].url for res in (first, second, third)] == [
        f"https://{q}.example/0" for q in ("first", "second", "third")
    ]


@pytest.mark.slow
async def test_a_worker_closed_while_it_starts_is_discarded(monkeypatch):
    """:meth:`ParseWorker.close` during a start (the worker spawned, its ready byte awaited): the
    start fails and reaps the process it spawned, so no worker outlives its owner's close."""
    waiting, release = threading.Event(), threading.Event()
    pair = socket.socketpair

    class HeldSocket(socket.socket):
        def recv(self, n: int, *flags: int) -> bytes:  # type: ignore[override]
            waiting.set()
            assert release.wait(HANG_S)
            return super().recv(n, *flags)

    def held_pair(*args: int) -> tuple[socket.socket, socket.socket]:
        ours, theirs = pair(*args)
        return HeldSocket(ours.family, ours.type, fileno=ours.detach()), theirs

    monkeypatch.setattr(parsing.socket, "socketpair", held_pair)
    worker = ParseWorker()
    failed: list[str] = []

    def start() -> None:
        try:
            worker.start()
        except WorkerGone as exc:
            failed.append(str(exc))

    thread = threading.Thread(target=start)
    thread.start()
    try:
        await until(waiting.is_set, "the worker spawned, its ready byte awaited")
        monkeypatch.setattr(parsing.socket, "socketpair", pair)
        worker.close()
    finally:
        release.set()
        await asyncio.to_thread(thread.join, HANG_S)
    assert failed == ["the parsing worker was closed while it started"]
    assert not worker.ready() and worker._process is None


@pytest.mark.slow
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
        await started(r)  # the worker is up
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


@pytest.mark.slow
async def test_a_dead_worker_fails_its_jobs_to_a_thread_and_is_started_again(mock_provider, caplog):
    def reply(seen: Seen) -> Reply:  # ~5 MB: long enough a parse to kill the worker in the middle of it
        query = seen.json()["query"]
        return Reply(200, {"content-type": "application/json"}, body_of(query, 3 if query == "warm" else 18000))

    mock_provider.route("POST", "/search", reply)
    r = router(mock_provider)
    try:
        await r.search("warm", 3)  # a small answer: the exchanges stay on the loop, only the parse moves
        await asyncio.to_thread(WORKER.start)
        in_thread = digests_here(r)
        held = asyncio.create_task(r.search("held", 3))
        await until(lambda: WORKER._pending and WORKER._process, "the job at the worker", poll_s=0.001)
        first = WORKER._process
        os.kill(first.pid, signal.SIGKILL)
        res = await held  # the worker's job failed over to a thread: the same answer
        assert res.sources[0].url == "https://held.example/0"
        assert in_thread == ["held"]
        assert "the parsing worker exited" in caplog.text or "socket failed" in caplog.text
        again = await r.search("restarted", 3)  # parsed here, a new worker started in the background
        assert again.sources[0].url == "https://restarted.example/0" and in_thread == ["held", "restarted"]
        await until(WORKER.ready, "the new worker", timeout_s=WORKER_START_S)
        assert WORKER._process is not None and WORKER._process.pid != first.pid and WORKER._process.is_alive()
    finally:
        await r.aclose()


def counting_loop_exchanges(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs this process's own exchange is called with (the worker's are not seen)."""
    from dsh_sidecar.router import http

    calls: list[str] = []
    real = http.exchange

    async def exchange(client, request, budget_ms, basic_auth=None):  # type: ignore[no-untyped-def]
        calls.append(request.json["query"])
        return await real(client, request, budget_ms, basic_auth)

    monkeypatch.setattr(http, "exchange", exchange)
    return calls


@pytest.mark.slow
async def test_after_a_large_answer_the_worker_fetches_until_an_answer_is_small(mock_provider, monkeypatch):
    sizes = {"small": 3, "small again": 3}

    def reply(seen: Seen) -> Reply:
        query = seen.json()["query"]
        return Reply(200, {"content-type": "application/json"}, body_of(query, sizes.get(query, 1500)))

    mock_provider.route("POST", "/search", reply)
    on_loop = counting_loop_exchanges(monkeypatch)
    r = router(mock_provider)
    try:
        await started(r, "first")
        results = [await r.search(q, 3) for q in ("second", "third", "small", "small again", "large")]
    finally:
        await r.aclose()
    # the first large answer is read here; the next three are the worker's, the third of them small
    assert on_loop == ["first", "small again", "large"]
    assert mock_provider.count("POST", "/search") == 6  # each exchanged once, by one process
    for q, res in zip(("second", "third", "small", "small again", "large"), results, strict=True):
        assert [s.url for s in res.sources] == [f"https://{q}.example/{i}" for i in range(3)]
        assert res.truncated is (q not in sizes)
        assert [(a.provider, a.outcome) for a in res.attempts] == [("tavily", "ok")]


@pytest.mark.slow
async def test_a_fetch_keeps_the_exchange_rules(mock_provider, monkeypatch):
    """In the worker as on the loop: the body cap, the attempt's timeout, a status failure. Only
    the timeout case has a short budget: on a loaded machine the niced worker takes seconds to
    read 9 MiB, or to answer at all (the chain waits for it: :func:`patient_chain`)."""
    huge = b'{"results": [' + b'{"url": "https://x.example/", "title": "t", "content": "' + b"x" * (9 << 20) + b'"}]}'
    replies = {
        "big": Reply(200, {"content-type": "application/json"}, huge),
        "slow": Reply(200, {"content-type": "application/json"}, body_for("slow"), hang_s=HANG_S),
        "error": Reply(500, {"content-type": "text/plain"}, b"oops"),
    }
    mock_provider.route("POST", "/search", lambda seen: replies.get(seen.json()["query"]) or echo(seen))
    on_loop = counting_loop_exchanges(monkeypatch)
    patient = make_router(mock_provider.url, "tavily", env={"TAVILY_API_KEY": KEY}, cache=False, timeoutMs=60_000)
    try:
        await started(patient)  # a large answer read here: the next exchanges are the worker's
        big = await failure_of(patient, "big")
        error = await failure_of(patient, "error")
        after = await patient.search("after", 3)
    finally:
        await patient.aclose()
    short = make_router(mock_provider.url, "tavily", env={"TAVILY_API_KEY": KEY}, cache=False, timeoutMs=800)
    try:
        await started(short, "warm again")
        slow = await failure_of(short, "slow")
    finally:
        await short.aclose()
    # the small answer of the 500 handed the provider back to the loop
    assert on_loop == ["warm", "after", "warm again"]
    assert (big, slow, error) == ("response body larger than 8 MiB", "timeout after 800ms", "HTTP 500")
    assert after.sources[0].url == "https://after.example/0"


async def failure_of(r: Router, query: str) -> str:
    """The outcome of the one attempt of a search that fails; the provider's health reset after
    it (no cooldown before the next case)."""
    with pytest.raises(AllProvidersFailed) as info:
        await r.search(query, 3)
    r.health = type(r.health)()
    return info.value.attempts[0].outcome


def echo(seen: Seen) -> Reply:
    return Reply(200, {"content-type": "application/json"}, body_for(seen.json()["query"]))


@pytest.mark.slow
async def test_a_cancelled_fetch_closes_its_connection_and_a_dead_worker_fails_over_to_the_loop(mock_provider):
    hanging = {"hung"}

    def reply(seen: Seen) -> Reply:
        query = seen.json()["query"]
        if query in hanging:
            return Reply(200, {"content-type": "application/json"}, body_for(query), hang_s=5.0)
        return echo(seen)

    mock_provider.route("POST", "/search", reply)
    r = router(mock_provider)
    try:
        await started(r)  # large: the next ones are fetched by the worker
        hung = asyncio.create_task(r.search("hung", 3))
        await until(lambda: mock_provider.count("POST", "/search") == 2, "the worker's request", poll_s=0.005)
        hung.cancel()
        await until(lambda: len(mock_provider.closed_early) == 1, "the worker closing the connection", timeout_s=3)
        assert mock_provider.closed_early[0].json()["query"] == "hung"
        # a worker killed in the middle of a fetch: the search exchanges again, on the loop
        hanging.add("held")
        held = asyncio.create_task(r.search("held", 3))
        await until(lambda: mock_provider.count("POST", "/search") == 3, "the worker's request", poll_s=0.005)
        hanging.discard("held")
        os.kill(WORKER._process.pid, signal.SIGKILL)
        res = await held
    finally:
        await r.aclose()
    assert res.sources[0].url == "https://held.example/0"
    assert mock_provider.count("POST", "/search") == 4


@pytest.mark.slow
async def test_the_worker_is_niced_and_ends_with_its_socket(mock_provider, monkeypatch):
    # its close waits for the exit as long as a hang takes (the server's waits 5 s, then kills
    # it: a niced worker on a loaded machine may take longer to return)
    monkeypatch.setattr(parsing, "_reap", lambda process: process.join(HANG_S))
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


@pytest.mark.slow
async def test_a_stopped_worker_is_given_up_not_waited_for_by_every_search(mock_provider, monkeypatch):
    """A worker that stops answering (SIGSTOP here; a parse that never ends alike): the body
    read here is parsed in a thread after the grace, the fetch in flight times out once, and
    the worker is killed, so the next search exchanges on the loop instead of waiting for it."""
    from dsh_sidecar.router import chain

    monkeypatch.setattr(chain, "WORKER_GRACE_MS", 300)
    sizes = {"warm": 3}

    def reply(seen: Seen) -> Reply:
        query = seen.json()["query"]
        return Reply(200, {"content-type": "application/json"}, body_of(query, sizes.get(query, 1500)))

    mock_provider.route("POST", "/search", reply)
    on_loop = counting_loop_exchanges(monkeypatch)
    r = make_router(mock_provider.url, "tavily", env={"TAVILY_API_KEY": KEY}, cache=False, timeoutMs=1000)
    stopped: list[int] = []
    try:
        await r.search("warm", 3)
        await asyncio.to_thread(WORKER.start)
        stopped.append(WORKER._process.pid)
        os.kill(stopped[0], signal.SIGSTOP)
        parsed_here = await asyncio.wait_for(r.search("read here", 3), 10)  # was: waited for ever
        assert WORKER._process is None  # given up (killed)
        again = await r.search("large again", 3)  # on the loop (no worker), parsed here: a new one starts
        await until(WORKER.ready, "the new worker started in the background", timeout_s=WORKER_START_S)
        first = WORKER._process.pid
        os.kill(first, signal.SIGSTOP)
        stopped.append(first)
        with pytest.raises(AllProvidersFailed) as info:
            await asyncio.wait_for(r.search("fetched", 3), 10)
        after = await r.search("after", 3)  # was: every later search timed out at the same worker
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        await r.aclose()
    assert parsed_here.sources[0].url == "https://read here.example/0"
    assert again.sources[0].url == "https://large again.example/0"
    assert [a.outcome for a in info.value.attempts] == ["timeout after 1000ms"]
    assert after.sources[0].url == "https://after.example/0"
    assert on_loop == ["warm", "read here", "large again", "after"]  # "fetched": the new worker's


@pytest.mark.slow
async def test_a_fetch_the_running_worker_never_answered_sends_the_next_exchanges_to_the_loop(
    mock_provider, monkeypatch
):
    """A worker that runs but never answers (a parse that never ends; stopped here and read as
    ``R``) is kept up to :data:`~dsh_sidecar.router.parsing.BUSY_LIMIT_S`, but the provider
    whose exchange it held is not sent to it again meanwhile: the fetch in flight times out
    once, the next search exchanges on the loop and answers (large bodies: parsed in a thread
    after the grace), where every search of that provider timed out at the worker for 30 s."""
    from dsh_sidecar.router import chain

    echoing(mock_provider)
    on_loop = counting_loop_exchanges(monkeypatch)
    r = make_router(mock_provider.url, "tavily", env={"TAVILY_API_KEY": KEY}, cache=False, timeoutMs=1000)
    pid = 0
    try:
        await started(r, "first")  # read and parsed here, the worker started: the next fetched there
        monkeypatch.setattr(chain, "WORKER_GRACE_MS", 300)
        pid = WORKER._process.pid
        os.kill(pid, signal.SIGSTOP)
        monkeypatch.setattr(parsing, "_running", lambda _pid: True)  # busy: kept
        with pytest.raises(AllProvidersFailed) as info:
            await asyncio.wait_for(r.search("held", 3), 10)
        after = await asyncio.wait_for(r.search("after", 3), 10)
        later = await asyncio.wait_for(r.search("later", 3), 10)
        kept = WORKER._process is not None and WORKER._process.pid == pid
    finally:
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        await r.aclose()
    assert [a.outcome for a in info.value.attempts] == ["timeout after 1000ms"]
    assert [s.url for s in after.sources] == [f"https://after.example/{i}" for i in range(3)]
    assert [s.url for s in later.sources] == [f"https://later.example/{i}" for i in range(3)]
    assert kept  # slow, not stuck: still the same worker
    assert on_loop == ["first", "after", "later"]  # "held": the worker's


@contextlib.asynccontextmanager
async def stopped_worker() -> AsyncIterator[tuple[ParseWorker, int]]:
    """A started worker, then SIGSTOPped (its pid beside it); continued and closed after."""
    worker = ParseWorker()
    try:
        await asyncio.to_thread(worker.start)
        pid = worker._process.pid
        os.kill(pid, signal.SIGSTOP)
        try:
            yield worker, pid
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    finally:
        worker.close()


@pytest.mark.slow
async def test_a_silent_worker_that_is_running_is_slow_not_stuck(monkeypatch):
    """A niced worker on a loaded machine waits for a CPU: silent past a job's grace but running
    (``R``), it is kept (the job fell back already); stopped, or silent past
    :data:`~dsh_sidecar.router.parsing.BUSY_LIMIT_S` though running, it is given up."""
    async with stopped_worker() as (worker, pid):
        assert await until(lambda: not parsing._running(pid), "the worker to stop")  # "T"
        monkeypatch.setattr(parsing, "_running", lambda _pid: True)  # as a starved worker reads
        since = time.monotonic()
        assert worker.abandon_if_silent(since) is False and worker.ready()
        monkeypatch.setattr(parsing, "BUSY_LIMIT_S", 0.0)
        assert worker.abandon_if_silent(since) is True and not worker.ready()


@pytest.mark.slow
async def test_a_worker_behind_is_given_up_past_the_busy_limit_and_a_new_one_started(monkeypatch):
    """Kept silent past a job's grace, the worker is behind (no job sent to it) until it
    answers; past :data:`~dsh_sidecar.router.parsing.BUSY_LIMIT_S` the next look gives it up,
    and it is no longer behind, so the next job starts another."""
    async with stopped_worker() as (worker, pid):
        monkeypatch.setattr(parsing, "_running", lambda _pid: True)
        assert worker.behind() is False
        assert worker.abandon_if_silent(time.monotonic()) is False
        assert worker.behind() is True and worker.ready()
        monkeypatch.setattr(parsing, "BUSY_LIMIT_S", 0.0)
        assert worker.behind() is False and not worker.ready()
        await asyncio.to_thread(worker.start)
        assert worker.ready() and worker._process.pid != pid and worker.behind() is False


def test_running_reads_the_state_of_a_process():
    assert parsing._running(os.getpid()) is True  # reading its own state, it runs
    assert parsing._running(2**22 + 12_345) is False  # no such process


@pytest.mark.slow
def test_the_worker_never_writes_to_the_servers_stdout():
    """The server's stdout is its JSON-RPC (or MCP) channel: the worker it spawns inherits it,
    and gets its stderr there instead."""
    channel_r, channel_w = os.pipe()
    saved = os.dup(1)
    worker = ParseWorker()
    try:
        os.dup2(channel_w, 1)  # stands for the channel while the worker starts
        try:
            worker.start()
        finally:
            os.dup2(saved, 1)
        pid = worker._process.pid
        channel = os.readlink(f"/proc/{os.getpid()}/fd/{channel_w}")
        assert os.readlink(f"/proc/{pid}/fd/1") == os.readlink(f"/proc/{pid}/fd/2") != channel
    finally:
        worker.close()
        for fd in (saved, channel_r, channel_w):
            os.close(fd)
