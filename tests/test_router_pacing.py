"""Request spacing for providers with a documented per-second limit (issue 16, item 7), on an
injected clock: no real sleeping, exact slot arithmetic."""

from __future__ import annotations

import asyncio

import pytest
from dsh_sidecar.router.pacing import MAX_INTERVAL_S, MIN_INTERVAL_S, Pacer, interval_from_headers
from dsh_sidecar.router.providers import PROVIDERS
from dsh_sidecar.router.providers.base import ProviderFailure, RateLimit

BRAVE = PROVIDERS["brave"].RATE_LIMIT


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:  # time stands still: every wait is seen from one instant
        self.slept.append(round(seconds, 6))


@pytest.fixture
def fake():
    return FakeTime()


async def test_concurrent_requests_take_consecutive_slots(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    waits = await asyncio.gather(*(pacer.wait("brave", BRAVE, 10_000) for _ in range(3)))
    assert waits == [0.0, 1.0, 2.0]


async def test_the_first_request_and_a_late_one_do_not_wait(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    assert await pacer.wait("brave", BRAVE, 10_000) == 0.0
    fake.now += 5
    assert await pacer.wait("brave", BRAVE, 10_000) == 0.0
    assert fake.slept == []


async def test_a_slot_beyond_the_budget_fails_at_once_and_is_not_taken(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    await pacer.wait("brave", BRAVE, 10_000)
    with pytest.raises(ProviderFailure) as info:
        await pacer.wait("brave", BRAVE, 400)
    assert info.value.failure_class == "paced"
    assert info.value.reason == "skipped: rate limit spacing (next request slot in 1.0s)"
    assert await pacer.wait("brave", BRAVE, 10_000) == 1.0  # the refused one kept no slot


async def test_providers_without_a_limit_never_wait(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    assert PROVIDERS["exa"].RATE_LIMIT is None
    assert [await pacer.wait("exa", None, 1) for _ in range(5)] == [0.0] * 5


async def test_each_provider_has_its_own_slots(fake):
    pacer = Pacer(fake.clock, fake.sleep)
    other = RateLimit(2, 1.0, "x", "doc")
    assert await pacer.wait("brave", BRAVE, 10_000) == 0.0
    assert await pacer.wait("other", other, 10_000) == 0.0
    assert await pacer.wait("other", other, 10_000) == 0.5


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
    waits = await asyncio.gather(*(pacer.wait("brave", BRAVE, 10_000) for _ in range(3)))
    assert waits == pytest.approx([0.0, 0.05, 0.1])
    pacer.observe("exa", None, {"x-ratelimit-limit": "1"})  # no declared limit: nothing adopted
    assert await pacer.wait("exa", None, 1) == 0.0


async def test_a_reconfigured_router_keeps_the_slots(fake):
    old = Pacer(fake.clock, fake.sleep)
    await old.wait("brave", BRAVE, 10_000)
    new = Pacer(fake.clock, fake.sleep)
    new.inherit(old)
    assert await new.wait("brave", BRAVE, 10_000) == 1.0
