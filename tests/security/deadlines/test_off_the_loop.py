"""Deadlines keep their margin under load (docs/SECURITY.md, "Deadlines under CPU contention"):
the mechanisms, not the timings (``bench/deadlines.py`` measures those with the CPU loaded).

* The sidecar is built on a thread after ``initialize``: the event loop serves meanwhile, and a
  coroutine handler awaits the build (a ``$/cancelRequest`` sent meanwhile was held as long).
* A first search prepares the search path (httpx and the client, the bandit's writer threads) on a
  worker thread, not on the loop's.
* A search's deadline counts from the request's arrival: the time it waited for the server
  comes off its providers' budget, not on top of the reply.
"""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace

import pytest
from dsh_protocol import SearchParams
from dsh_sidecar.config import parse_config
from dsh_sidecar.lsp.app import SidecarServer
from dsh_sidecar.router import AllProvidersFailed
from dsh_sidecar.sidecar import Sidecar
from support.mockprovider import case_reply
from support.routers import ROUTES, router_block
from support.sidecar import home_env


def _built() -> SimpleNamespace:
    return SimpleNamespace(config=SimpleNamespace(log_messages="all"))


async def test_the_sidecar_is_built_on_a_thread_while_the_loop_serves():
    server = SidecarServer()
    release = threading.Event()
    built = _built()
    ran_on: list[threading.Thread] = []

    def build():
        ran_on.append(threading.current_thread())
        assert release.wait(30), "the test never released the build"
        return built

    server.defer_sidecar(build)
    waiters = [asyncio.ensure_future(server.sidecar_ready()) for _ in range(3)]
    ticks = 0
    for _ in range(20):  # the loop keeps turning while the build is held
        await asyncio.sleep(0)
        ticks += 1
    assert ticks == 20 and not any(w.done() for w in waiters)
    waiters[0].cancel()  # a cancelled waiter (a $/cancelRequest) leaves the build and the others alone
    release.set()
    assert await asyncio.wait_for(asyncio.gather(*waiters[1:]), 30) == [built, built]
    assert ran_on and ran_on[0] is not threading.main_thread() and ran_on[0].name == "dsh-sidecar-build"
    assert server.sidecar is built


async def test_a_plain_handler_reading_the_sidecar_waits_for_the_running_build():
    server = SidecarServer()
    started, release = threading.Event(), threading.Event()
    built = _built()

    def build():
        started.set()
        release.wait(30)
        return built

    server.defer_sidecar(build)
    assert await asyncio.to_thread(started.wait, 30)
    threading.Timer(0.05, release.set).start()
    assert server.sidecar is built  # never None (not initialised) while the build runs


async def test_a_failed_build_wakes_its_waiters_with_the_error_kept():
    server = SidecarServer()

    def build():
        raise OSError("disk full")

    server.defer_sidecar(build)
    assert await asyncio.wait_for(server.sidecar_ready(), 30) is None
    assert isinstance(server.build_error, OSError)


@pytest.fixture
def sidecar(mock_provider, dsh_home):
    mock_provider.route(*ROUTES["searxng"], case_reply("searxng", "ok", check=False)[0])
    config = parse_config({"router": router_block(mock_provider, ["searxng"], cache=False)})
    return Sidecar(config, None, home_env(dsh_home))  # each test closes it on its loop


async def test_a_first_search_prepares_the_search_path_off_the_loop(sidecar):
    assert not sidecar.router.ready  # no dsh-search-prepare thread here: the search must prepare
    loop_thread = threading.current_thread()
    prepared_on: list[threading.Thread] = []
    prepare = sidecar.router.prepare

    def spy():
        prepared_on.append(threading.current_thread())
        prepare()

    sidecar.router.prepare = spy
    try:
        result = await sidecar.search(SearchParams(query="bike chain cleaning", strategy="quick"))
        assert result.sources and sidecar.router.ready and sidecar.bandit.policy.ready
        assert prepared_on and all(t is not loop_thread for t in prepared_on)
        await sidecar.search(SearchParams(query="chain wax", strategy="quick"))
        assert len(prepared_on) == 1  # once: a prepared router searches at once
    finally:
        await sidecar.aclose()


@pytest.mark.parametrize(
    ("deadline_ms", "waited_s", "most"),
    [
        (5000, 2.0, 3000),  # two of its five seconds went waiting for the server
        (None, 2.0, 58000),  # the config's deadline (60 s) likewise
        (5000, 9.0, 1),  # already past: the providers get nothing (each is "skipped: deadline")
    ],
)
async def test_the_deadline_counts_from_the_requests_arrival(sidecar, deadline_ms, waited_s, most):
    await asyncio.to_thread(sidecar._prepare_search)
    seen: list[int | None] = []

    async def search(query, strategy, max_results, deadline):
        seen.append(deadline)
        raise AllProvidersFailed("search-router: all configured search providers failed:", [])

    sidecar.bandit.search = search
    try:
        params = SearchParams(query="q", strategy="quick", deadline_ms=deadline_ms)
        with pytest.raises(AllProvidersFailed):
            await sidecar.search(params, received_at=time.monotonic() - waited_s)
        assert len(seen) == 1 and seen[0] is not None
        assert 1 <= seen[0] <= most
        with pytest.raises(AllProvidersFailed):
            await sidecar.search(params)  # no arrival time (the CLI): the deadline as given
        assert seen[1] == deadline_ms
    finally:
        await sidecar.aclose()


async def test_a_search_whose_deadline_passes_during_the_preparation_answers_at_its_deadline(sidecar):
    """The preparation (imports) outlasts the deadline: the search does not wait for it past
    the deadline's reserve; every provider is ``skipped: deadline`` and nothing is learned (the
    search never ran). The preparation goes on, once, and the next search uses it."""
    release = threading.Event()
    calls: list[int] = []
    prepare = sidecar._prepare_search

    def slow():
        calls.append(1)
        assert release.wait(60), "never released"
        prepare()

    sidecar._prepare_search = slow
    before = sidecar.bandit.status()
    try:
        params = SearchParams(query="bike chain cleaning", strategy="quick", deadline_ms=300)
        with pytest.raises(AllProvidersFailed) as info:
            await asyncio.wait_for(sidecar.search(params, received_at=time.monotonic()), 30)  # bounded: no hang
        assert [(a.provider, a.outcome, a.ms) for a in info.value.attempts] == [("searxng", "skipped: deadline", 0)]
        assert (
            info.value.message == "search-router: all configured search providers failed:\n- searxng: skipped: deadline"
        )
        assert info.value.outage and sidecar.bandit.status() == before  # nothing learned
        with pytest.raises(AllProvidersFailed):  # a second one waits for the same preparation
            await asyncio.wait_for(sidecar.search(params, received_at=time.monotonic()), 30)
        release.set()
        result = await asyncio.wait_for(sidecar.search(SearchParams(query="chain wax", strategy="quick")), 60)
        assert result.sources and calls == [1]
    finally:
        release.set()
        await sidecar.aclose()


async def test_a_router_not_ready_by_the_deadline_skips_its_providers(mock_provider):
    from support.routers import make_router

    mock_provider.route(*ROUTES["searxng"], case_reply("searxng", "ok", check=False)[0])
    router = make_router(mock_provider, ["searxng", "duckduckgo"], cache=False)
    release = threading.Event()
    prepare = router.prepare

    def slow():
        release.wait(60)
        prepare()

    router.prepare = slow
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await asyncio.wait_for(router.search("x", 5, deadline_ms=200), 30)
        assert [a.outcome for a in info.value.attempts] == ["skipped: deadline", "skipped: deadline"]
        assert mock_provider.count(*ROUTES["searxng"]) == 0
        release.set()
        assert await router.until_ready(60)
        result = await router.search("y", 5, deadline_ms=60000)
        assert result.provider == "searxng"
    finally:
        release.set()
        await router.aclose()


def test_a_search_whose_deadline_passes_during_the_build_answers_at_its_deadline():
    """The sidecar's build (its imports: seconds on a loaded machine) outlasts a search's
    ``deadlineMs`` (``dsh/search`` or ``dsh/routeSearch``): the search is answered -32001 at its deadline, every provider of the chain
    ``initialize`` resolved ``skipped: deadline`` (an outage), not after the build (a real
    ``dsh-search serve`` under load 34 answered a 300 ms search 5.9 s after it came); a search
    without ``deadlineMs`` still waits for the build, and so does the next one after it."""
    from support.inprocess_lsp import replies, writing_server

    server, written = writing_server()
    server.search_chain = ("searxng", "duckduckgo")
    release = threading.Event()

    def build():
        assert release.wait(60), "never released"
        raise RuntimeError("the test's build ends here")

    async def run() -> list[dict]:
        server.defer_sidecar(build)
        server.protocol._handle_request(1, "dsh/search", {"query": "bike chain", "deadlineMs": 300})
        server.protocol._handle_request(2, "dsh/search", {"query": "bike chain"})
        server.protocol._handle_request(3, "dsh/routeSearch", {"query": "bike chain", "deadlineMs": 400})
        for _ in range(2000):  # the first and the third are answered while the build is held
            await asyncio.sleep(0.01)
            if len(written) == 2:
                break
        first = list(written)
        release.set()
        for _ in range(2000):
            await asyncio.sleep(0.01)
            if len(written) == 3:
                break
        return replies(first + written[len(first) :])

    try:
        answers = asyncio.run(run())
    finally:
        release.set()
    assert answers[0] == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32001,
            "message": "search-router: all configured search providers failed:\n"
            "- searxng: skipped: deadline\n- duckduckgo: skipped: deadline",
            "data": {
                "attempts": [
                    {"provider": "searxng", "outcome": "skipped: deadline", "ms": 0},
                    {"provider": "duckduckgo", "outcome": "skipped: deadline", "ms": 0},
                ],
                "outage": True,
            },
        },
    }
    assert answers[1] == {**answers[0], "id": 3}  # dsh/routeSearch: the same
    assert [a["id"] for a in answers] == [1, 3, 2] and answers[2]["error"]["code"] == -32603  # after the (failed) build


def test_a_post_execute_during_the_build_waits_off_the_loop_within_its_wait_ms():
    """A ``dsh/postExecute`` that comes while the sidecar is still being built read the sidecar
    on the event loop, which waited for the build's end there: every other request waited too,
    and the call's ``waitMs`` did not count it (a real ``dsh-search serve`` at load 34 answered a
    call with ``waitMs: 300`` sent right after ``initialize`` 6.3-6.7 s later). Now the build is
    awaited off the loop, within what is left of ``waitMs``: past it the call is silence; a call
    without ``waitMs`` waits for the build (off the loop) and is answered after it."""
    from support.inprocess_lsp import replies, writing_server

    server, written = writing_server()
    release = threading.Event()

    def build():
        assert release.wait(60), "never released"
        raise RuntimeError("the test's build ends here")

    call = {"sessionId": "s", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "x"}}}

    async def run() -> tuple[list[dict], int]:
        server.defer_sidecar(build)
        server.protocol._handle_request(1, "dsh/postExecute", {**call, "waitMs": 300})
        server.protocol._handle_request(2, "dsh/postExecute", call)
        ticks = 0
        for _ in range(2000):  # the loop turns while both wait; the first is answered at its waitMs
            await asyncio.sleep(0.01)
            ticks += 1
            if written:
                break
        first = list(written)
        release.set()
        for _ in range(2000):
            await asyncio.sleep(0.01)
            if len(written) == 2:
                break
        return replies(first + written[len(first) :]), ticks

    try:
        answers, ticks = asyncio.run(run())
    finally:
        release.set()
    assert ticks > 1
    assert answers[0] == {"jsonrpc": "2.0", "id": 1, "result": {"additionalContexts": []}}
    assert answers[1]["id"] == 2 and answers[1]["error"]["code"] == -32603  # after the (failed) build
