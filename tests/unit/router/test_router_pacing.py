"""Request spacing for providers with a documented per-second limit, on an
injected clock: no real sleeping, exact slot arithmetic."""

from __future__ import annotations

import asyncio

import pytest
from dsh_sidecar.router.budget import MIN_ATTEMPT_MS
from dsh_sidecar.router.pacing import MAX_INTERVAL_S, MIN_INTERVAL_S, Pacer, interval_from_headers
from dsh_sidecar.router.providers import PROVIDERS
from dsh_sidecar.router.providers.base import ProviderFailure, RateLimit

BRAVE = PROVIDERS["brave"].RATE_LIMIT


class FakeTime:
    """A clock that only moves when the pacer sleeps."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


@pytest.fixture
def fake():
    return FakeTime()


async def request(pacer: Pacer, fake: FakeTime, limit=BRAVE, budget_ms: float = 10_000, latency_s: float = 0.0):
    """One paced request taking ``latency_s`` (fake time) from send to response."""
    async with pacer.slot("brave", limit, budget_ms) as waited:
        fake.now += latency_s
        return waited


async def test_one_request_in_flight_and_a_second_after_the_response(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    waits = await asyncio.gather(*(request(pacer, fake, latency_s=0.3) for _ in range(3)))
    # each starts 1 s after the previous response (0.3 s latency): 0, 1.3, 2.6 s after the burst
    assert waits == pytest.approx([0.0, 1.3, 2.6])
    assert fake.slept == [1.0, 1.0]


async def test_the_first_request_and_a_late_one_do_not_wait(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    assert await request(pacer, fake) == 0.0
    fake.now += 5
    assert await request(pacer, fake) == 0.0
    assert fake.slept == []


async def test_a_slot_beyond_the_budget_fails_at_once_and_is_not_taken(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    await request(pacer, fake)
    with pytest.raises(ProviderFailure) as info:
        await request(pacer, fake, budget_ms=400)
    assert info.value.failure_class == "paced"
    assert info.value.reason == "skipped: rate limit spacing (next request slot in 1.0s)"
    assert await request(pacer, fake) == 1.0  # the refused one sent nothing


async def test_a_slot_that_leaves_less_than_a_fair_budget_fails_as_paced(fake):
    """A spacing wait that would leave the request under MIN_ATTEMPT_MS is not waited: the
    request would end in a timeout blamed on the provider for our own spacing."""
    pacer = Pacer(fake.clock, fake.sleep)
    await request(pacer, fake)
    with pytest.raises(ProviderFailure) as info:
        await request(pacer, fake, budget_ms=1000 + MIN_ATTEMPT_MS - 1)  # the slot in 1 s: 49 ms left after it
    assert (info.value.failure_class, info.value.reason) == (
        "paced",
        "skipped: rate limit spacing (next request slot in 1.0s)",
    )
    assert await request(pacer, fake, budget_ms=1000 + MIN_ATTEMPT_MS) == 1.0  # 50 ms left: fair, waited
    assert fake.slept == [1.0]


async def test_a_slot_held_past_the_budget_fails_as_paced(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    holder = pacer.slot("brave", BRAVE, 10_000)
    await holder.__aenter__()
    try:
        with pytest.raises(ProviderFailure) as info:
            await request(pacer, fake, budget_ms=20)
        assert info.value.reason == "skipped: rate limit spacing (another request holds the slot)"
    finally:
        await holder.__aexit__(None, None, None)


async def test_a_failed_request_still_spaces_the_next(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    with pytest.raises(RuntimeError):
        async with pacer.slot("brave", BRAVE, 10_000):
            raise RuntimeError("connection reset")
    assert await request(pacer, fake) == 1.0


async def test_providers_without_a_limit_never_wait(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    assert PROVIDERS["exa"].RATE_LIMIT is None
    assert await asyncio.gather(*(request(pacer, fake, limit=None) for _ in range(5))) == [0.0] * 5


async def test_each_provider_has_its_own_slots(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    other = RateLimit(2, 1.0, "x", "doc")
    await request(pacer, fake)
    async with pacer.slot("other", other, 10_000) as waited:
        assert waited == 0.0
    async with pacer.slot("other", other, 10_000) as waited:
        assert waited == 0.5


@pytest.mark.parametrize(
    ("headers", "interval"),
    [
        ({"x-ratelimit-limit": "20, 20000000"}, 0.05),  # a paid Brave plan: 20/s
        ({"x-ratelimit-limit": "1, 15000"}, 1.0),  # the free plan, as documented
        ({"x-ratelimit-policy": "50;w=1, 20000000;w=2592000"}, 0.02),
        ({"ratelimit-policy": "10;w=60, 2;w=1"}, 0.5),  # the shortest window wins
        ({"x-ratelimit-limit": "100000"}, MIN_INTERVAL_S),
        ({"x-ratelimit-policy": "1;w=3600"}, MAX_INTERVAL_S),
        ({"x-ratelimit-limit": "0, 5"}, None),
        ({"x-ratelimit-limit": "many"}, None),
        ({"x-ratelimit-policy": ";w=1, junk"}, None),
        ({}, None),
    ],
)
def test_interval_announced_by_the_provider(headers, interval):
    assert interval_from_headers(headers, 1.0) == (pytest.approx(interval) if interval is not None else None)


async def test_an_announced_rate_replaces_the_documented_one(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    pacer.observe("brave", BRAVE, {"x-ratelimit-limit": "20, 20000000"})
    await request(pacer, fake)
    assert await request(pacer, fake) == pytest.approx(0.05)
    pacer.observe("exa", None, {"x-ratelimit-limit": "1"})  # no declared limit: nothing adopted
    assert await request(pacer, fake, limit=None) == 0.0


async def test_a_reconfigured_router_keeps_the_spacing(fake):
    old = Pacer(fake.clock, fake.sleep)
    await request(old, fake)
    new = Pacer(fake.clock, fake.sleep)
    new.inherit(old)
    assert await request(new, fake) == 1.0
