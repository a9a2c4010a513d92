"""The whole-chain deadline (router config ``deadlineMs`` and per search), cancellation of a
running search at the core level, and concurrent searches over one router (the thorough arm)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from dsh_sidecar.router import AllProvidersFailed
from dsh_sidecar.router import chain as chain_module
from dsh_sidecar.router.budget import DEADLINE_RESERVE_MS, deadline_reserve_ms
from dsh_sidecar.router.providers.base import ProviderFailure
from support.mockprovider import Reply, case_reply
from support.routers import ROUTES, FakeClock, make_router
from support.waiting import until

HANG = Reply(200, {"content-type": "application/json"}, b'{"results": []}', hang_s=20.0)


def budget_ms(outcome: str) -> int:
    """The attempt's budget from ``timeout after <ms>ms (deadline)``."""
    return int(outcome.removeprefix("timeout after ").split("ms")[0])


def chain(mock, order, **extra):
    """A router prepared as the server prepares it after ``initialize`` (httpx and the client:
    a first search that finds them missing makes them inside its deadline)."""
    router = make_router(mock, order, clock=FakeClock(), cache=False, **extra)
    worker = threading.Thread(target=router.prepare)  # off the test's event loop, as the server does
    worker.start()
    worker.join()
    return router


async def test_config_deadline_splits_what_is_left_and_skips_the_rest(mock_provider):
    mock_provider.route(*ROUTES["searxng"], HANG)
    mock_provider.route(*ROUTES["duckduckgo"], case_reply("duckduckgo", "ok", check=False)[0])
    router = chain(mock_provider, ["searxng", "duckduckgo"], deadlineMs=300)  # timeoutMs stays 10000
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("how to fix a leaky faucet", 8)
        outcomes = [(a.provider, a.outcome) for a in info.value.attempts]
        assert outcomes[0][0] == "searxng" and outcomes[0][1].endswith("ms (deadline)")
        # what was left of the 300 ms minus the reserve (not timeoutMs); how much of it the set-up
        # before the first attempt used depends on the machine's load, so no lower bound here
        assert 0 < budget_ms(outcomes[0][1]) <= 300 - deadline_reserve_ms(300)
        assert outcomes[1] == ("duckduckgo", "skipped: deadline")
        assert info.value.message.endswith("\n- duckduckgo: skipped: deadline")
        assert mock_provider.count(*ROUTES["duckduckgo"]) == 0
    finally:
        await router.aclose()


async def test_per_search_deadline_overrides_the_config(mock_provider):
    mock_provider.route(*ROUTES["searxng"], HANG)
    router = chain(mock_provider, ["searxng"], deadlineMs=60000, timeoutMs=5000)
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("x", 5, deadline_ms=200)
        assert info.value.attempts[0].outcome.endswith("ms (deadline)")
        assert 0 < budget_ms(info.value.attempts[0].outcome) <= 200 - deadline_reserve_ms(200)  # not 5000 or 60000
    finally:
        await router.aclose()


@pytest.mark.parametrize(
    ("deadline_ms", "budgets"),
    [
        # the reserve (the time to compose and send the answer) comes off the deadline, once
        (5000, [5000 - DEADLINE_RESERVE_MS, 5000 - DEADLINE_RESERVE_MS]),
        (60000, [10000, 10000]),  # far from the deadline each attempt gets its timeoutMs
        # a short deadline keeps most of itself: at most a tenth is reserved
        (300, [270, 270]),
        (100, [90, 90]),
    ],
)
async def test_each_attempt_gets_the_deadline_minus_the_reserve(monkeypatch, mock_provider, deadline_ms, budgets):
    router = chain(mock_provider, ["searxng", "duckduckgo"], timeoutMs=10000)
    seen: list[float] = []

    async def attempt(spec, query, max_results, budget_ms):
        seen.append(budget_ms)
        raise ProviderFailure("HTTP 500", "upstream_error")

    monkeypatch.setattr(chain_module, "_now", lambda: 1000.0)  # no time passes: the budgets are exact
    monkeypatch.setattr(router, "_attempt", attempt)
    try:
        with pytest.raises(AllProvidersFailed):
            await router.search("x", 5, deadline_ms=deadline_ms)
        assert seen == pytest.approx(budgets)
    finally:
        await router.aclose()


async def test_no_attempt_starts_in_the_reserve(monkeypatch, mock_provider):
    router = chain(mock_provider, ["searxng", "duckduckgo"])
    clock = iter([1000.0, 1000.0, 1000.0 + 4.8])  # the start, attempt 1, attempt 2 (after its whole budget)
    seen: list[float] = []

    async def attempt(spec, query, max_results, budget_ms):
        seen.append(budget_ms)
        raise ProviderFailure("timeout after 4750ms", "timeout")

    monkeypatch.setattr(chain_module, "_now", lambda: next(clock))
    monkeypatch.setattr(router, "_attempt", attempt)
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("x", 5, deadline_ms=5000)
        assert seen == pytest.approx([5000 - DEADLINE_RESERVE_MS])
        assert info.value.attempts[1].outcome == "skipped: deadline"  # 200 ms left: inside the reserve
    finally:
        await router.aclose()


async def test_timeout_without_deadline_pressure_names_the_timeout(mock_provider):
    mock_provider.route(*ROUTES["searxng"], HANG)
    router = chain(mock_provider, ["searxng"], timeoutMs=200)
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("x", 5)
        assert info.value.message.split("\n")[1] == "- searxng: timeout after 200ms"
        assert router.health.last_class("searxng") == "timeout"
        assert router.health.skip_reason("searxng") is None  # timeouts do not cool down
    finally:
        await router.aclose()


async def test_cancelling_the_search_closes_the_provider_connection(mock_provider):
    mock_provider.route(*ROUTES["searxng"], HANG)
    router = chain(mock_provider, ["searxng"])
    try:
        task = asyncio.create_task(router.search("x", 5))
        await until(lambda: mock_provider.count(*ROUTES["searxng"]), "the request at the provider")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await until(lambda: mock_provider.closed_early, "the provider seeing the connection closed")
        assert len(mock_provider.closed_early) == 1
        assert router.health_status()[0]["state"] == "unknown"  # a cancel is not a provider failure
    finally:
        await router.aclose()


async def test_concurrent_searches_share_client_and_health(mock_provider):
    mock_provider.route(*ROUTES["tavily"], case_reply("tavily", "rate-limited", check=False)[0])
    mock_provider.route(*ROUTES["duckduckgo"], case_reply("duckduckgo", "ok", check=False)[0])
    router = chain(mock_provider, ["tavily", "duckduckgo"])
    try:
        results = await asyncio.gather(*(router.search(f"q {i}", 5) for i in range(3)))
        assert all(r.attempts[-1].outcome == "ok" and r.provider == "duckduckgo" for r in results)
        assert all(r.attempts[0].outcome.startswith("HTTP 429") for r in results)
        tavily = router.health_status()[0]
        assert (tavily["state"], tavily["failures"], tavily["cooldownSecondsLeft"]) == ("cooling_down", 3, 30)
        res = await router.search("q 4", 5)
        assert res.attempts[0].outcome == "skipped: rate_limited cooldown 30s left"
        assert mock_provider.count(*ROUTES["tavily"]) == 3
    finally:
        await router.aclose()
