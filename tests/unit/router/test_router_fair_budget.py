"""A fair budget (``router/budget.py``, ``MIN_ATTEMPT_MS``): a provider is asked only with at
least that much of the search's deadline left; with less the attempt is not made (``skipped:
deadline``, an outage the bandit learns nothing from), whether our own queueing ate the time (a
wait for a turn at the providers under ``maxConcurrentSearches``) or the providers before it.
A timeout is blamed on a provider (class ``timeout``, the arm scores 0) only when it had a fair
budget. Real loopback provider, real cap; the turn is held and handed on by events, and the
deadline's clock (``chain._now``) is moved by hand, so every budget is exact."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any

import pytest
from dsh_sidecar.bandit import StrategyBandit, parse_bandit_config
from dsh_sidecar.router import AllProvidersFailed
from dsh_sidecar.router import chain as chain_module
from dsh_sidecar.router.budget import MIN_ATTEMPT_MS, deadline_reserve_ms
from support.mockprovider import Reply
from support.routers import ROUTES, FakeClock, make_router
from support.waiting import until

HANG = Reply(200, {"content-type": "application/json"}, b'{"results": []}', hang_s=20.0)
DEADLINE_MS = 5000
#: The last attempt's end on the deadline's clock (FakeClock starts at 1000 s).
LAST_END = 1000.0 + (DEADLINE_MS - deadline_reserve_ms(DEADLINE_MS)) / 1000


def capped(mock, order, **extra):
    """A router with one turn at the providers, prepared as the server prepares it."""
    router = make_router(mock, order, cache=False, maxConcurrentSearches=1, **extra)
    worker = threading.Thread(target=router.prepare)
    worker.start()
    worker.join()
    return router


def attempts_of(router) -> list[tuple[str, float]]:
    """The provider and budget (ms) of each attempt ``router``'s chain makes from now on."""
    asked: list[tuple[str, float]] = []
    attempt = router._attempt

    async def recorded(spec, query, max_results, budget_ms):
        asked.append((spec.id, budget_ms))
        return await attempt(spec, query, max_results, budget_ms)

    router._attempt = recorded
    return asked


async def handed_a_turn(router, clock, left_s: float, search: Coroutine[Any, Any, Any], waiting: int = 1):
    """``search``'s failure when it waits for the only turn at the providers, held by the test
    until ``waiting`` searches wait, and is handed it with ``left_s`` of its deadline left."""
    release, taken = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with router.slots.held(lambda: 60.0, router.deadline_passed):
            taken.set()
            await release.wait()

    holder = asyncio.create_task(hold())
    await taken.wait()
    task = asyncio.create_task(search)
    await until(lambda: router.slots.waiting == waiting, f"{waiting} searches waiting for a turn")
    clock.now = LAST_END - left_s
    release.set()  # the turn goes to the first waiter
    await holder
    with pytest.raises(AllProvidersFailed) as info:
        await task
    return info.value


@pytest.fixture
def clock(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(chain_module, "_now", clock)
    return clock


async def test_a_waiter_handed_its_turn_without_a_fair_budget_asks_no_provider_and_is_an_outage(mock_provider, clock):
    mock_provider.route(*ROUTES["searxng"], HANG)
    router = capped(mock_provider, ["searxng"])
    try:
        search = router.search("how to fix a leaky faucet", 5, deadline_ms=DEADLINE_MS)
        failed = await handed_a_turn(router, clock, 0.001, search)  # the turn comes with 1 ms left
        # before: the provider was asked with 1 ms and the search ended
        # "timeout after 1ms (deadline)", class timeout, counted against the arm
        assert [(a.provider, a.outcome, a.ms) for a in failed.attempts] == [("searxng", "skipped: deadline", 0)]
        assert failed.message.splitlines()[1:] == ["- searxng: skipped: deadline"]
        assert failed.outage is True
        assert mock_provider.count(*ROUTES["searxng"]) == 0
        assert router.health.last_class("searxng") is None
        assert (router.slots.running, router.slots.waiting) == (0, 0)
    finally:
        await router.aclose()


async def test_a_waiter_handed_its_turn_with_a_fair_budget_asks_and_a_timeout_is_the_providers(mock_provider, clock):
    mock_provider.route(*ROUTES["searxng"], HANG)
    router = capped(mock_provider, ["searxng"])
    try:
        assert MIN_ATTEMPT_MS <= 62.5
        asked = attempts_of(router)
        search = router.search("how to fix a leaky faucet", 5, deadline_ms=DEADLINE_MS)
        failed = await handed_a_turn(router, clock, 0.0625, search)  # 62.5 ms left (exact in binary)
        assert [a.outcome for a in failed.attempts] == ["timeout after 62ms (deadline)"]
        assert failed.outage is False
        # asked, with its fair budget: the chain's attempt, not the request's arrival at the
        # loopback provider within those 62.5 ms of real time (a loaded machine missed it)
        assert asked == [("searxng", 62.5)]
        assert router.health.last_class("searxng") == "timeout"
    finally:
        await router.aclose()


@pytest.mark.parametrize("left_ms", [0, -1, MIN_ATTEMPT_MS - 1])
async def test_the_chains_own_skip_past_a_fair_budget_is_an_outage_as_a_deadline_passed(mock_provider, clock, left_ms):
    """The first provider refuses (429: an outage) as the time runs out; the second is not asked.
    Before, the chain classed its own skip ``timeout`` (a real outcome: the search was learned
    from as reward 0) while ``deadline_passed()`` classed the same skip an outage."""

    def refuse(_seen):
        clock.now = LAST_END - left_ms / 1000
        return Reply(429, {"content-type": "application/json"}, b'{"error": "rate limited"}')

    mock_provider.route(*ROUTES["searxng"], refuse)
    mock_provider.route(*ROUTES["duckduckgo"], HANG)
    router = capped(mock_provider, ["searxng", "duckduckgo"])
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("how to fix a leaky faucet", 5, deadline_ms=DEADLINE_MS)
        outcomes = [(a.provider, a.outcome) for a in info.value.attempts]
        assert outcomes[0][0] == "searxng" and outcomes[0][1].startswith("HTTP 429")
        assert outcomes[1] == ("duckduckgo", "skipped: deadline")
        assert info.value.outage is True
        assert mock_provider.count(*ROUTES["duckduckgo"]) == 0
        assert router.deadline_passed().outage is True  # the same skip, the same class
    finally:
        await router.aclose()


@pytest.mark.parametrize(("strategy", "searches"), [("quick", 1), ("thorough", 3)])
async def test_the_bandit_learns_nothing_from_searches_our_queue_left_no_fair_budget(
    mock_provider, clock, dsh_home, strategy, searches
):
    """The thorough arm takes three turns (its reformulations): each handed with 1 ms left
    used to end ``timeout after 1ms (deadline)`` and score the arm 0."""
    mock_provider.route(*ROUTES["searxng"], HANG)
    router = capped(mock_provider, ["searxng"])
    lines: list[str] = []
    bandit = StrategyBandit(router, parse_bandit_config({"seed": 3}), log=lines.append, home=dsh_home)
    try:
        search = bandit.search("how do I clean a bike chain", strategy, deadline_ms=DEADLINE_MS)
        failed = await handed_a_turn(router, clock, 0.001, search, waiting=searches)
        bandit.flush()
        assert failed.outage is True
        assert {a.outcome for a in failed.attempts} == {"skipped: deadline"}
        assert bandit.store.updates == {"quick": 0, "thorough": 0}
        assert len(lines) == 1 and lines[0].startswith(f"[bandit-search] arm={strategy} reward=none ")
        assert mock_provider.count(*ROUTES["searxng"]) == 0
    finally:
        bandit.close()
        await router.aclose()
