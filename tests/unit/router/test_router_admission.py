"""The turns at the providers (``router/admission.py``): at most ``limit`` searches at once, the
next ones wait in arrival order with their own time running, and past the wait list a search is
refused at once. Driven by events (futures set by the test), never by sleeps."""

from __future__ import annotations

import asyncio

import pytest
from dsh_sidecar.router.admission import SearchSlots


class Refused(Exception):
    pass


def refused(outcome: str) -> Exception:
    return Refused(outcome)


async def holder(slots: SearchSlots, order: list[str], name: str, release: asyncio.Event, wait_s: float = 60) -> None:
    async with slots.held(lambda: wait_s, refused):
        order.append(name)
        await release.wait()


def test_past_the_limit_searches_wait_in_arrival_order_and_past_the_wait_list_are_refused() -> None:
    async def run() -> tuple[list[str], str, tuple[int, int]]:
        slots = SearchSlots(limit=2, max_waiting=2)
        order: list[str] = []
        gates = {n: asyncio.Event() for n in "abcd"}
        tasks = [asyncio.create_task(holder(slots, order, n, gates[n])) for n in "abcd"]
        await asyncio.sleep(0)  # each task to its first wait
        assert (order, slots.running, slots.waiting) == (["a", "b"], 2, 2)
        with pytest.raises(Refused) as busy:
            async with slots.held(lambda: 60, refused):
                raise AssertionError("a turn past the wait list")
        gates["b"].set()  # b's turn goes to c, the first waiter, never to a newcomer
        await tasks[1]
        await asyncio.sleep(0)
        assert order == ["a", "b", "c"] and slots.running == 2
        for n in "acd":
            gates[n].set()
        await asyncio.gather(*tasks)
        return order, str(busy.value), (slots.running, slots.waiting)

    order, message, left = asyncio.run(run())
    assert order == ["a", "b", "c", "d"]
    assert message == "skipped: busy (2 searches running, 2 waiting)"
    assert left == (0, 0)


def test_a_waiter_whose_time_passes_is_refused_as_a_deadline_and_a_cancelled_one_leaves_the_list() -> None:
    async def run() -> tuple[str, int, int]:
        slots = SearchSlots(limit=1, max_waiting=5)
        order: list[str] = []
        gate = asyncio.Event()
        first = asyncio.create_task(holder(slots, order, "a", gate))
        await asyncio.sleep(0)
        with pytest.raises(Refused) as expired:
            async with slots.held(lambda: 0, refused):
                raise AssertionError("ran without a turn")
        cancelled = asyncio.create_task(holder(slots, order, "x", asyncio.Event()))
        await asyncio.sleep(0)
        waiting = slots.waiting
        cancelled.cancel()
        await asyncio.gather(cancelled, return_exceptions=True)
        gate.set()
        await first
        return str(expired.value), waiting, slots.waiting + slots.running

    assert asyncio.run(run()) == ("skipped: deadline", 1, 0)


def test_a_turn_handed_to_a_waiter_as_it_is_cancelled_passes_on_to_the_next() -> None:
    async def run() -> list[str]:
        slots = SearchSlots(limit=1, max_waiting=5)
        order: list[str] = []
        gate = asyncio.Event()
        async with slots.held(lambda: 60, refused):
            b = asyncio.create_task(holder(slots, order, "b", asyncio.Event()))
            c = asyncio.create_task(holder(slots, order, "c", gate))
            await asyncio.sleep(0)
            assert slots.waiting == 2
        b.cancel()  # b was handed the turn as the block ended, and is cancelled before it runs
        await asyncio.gather(b, return_exceptions=True)
        await asyncio.sleep(0)
        gate.set()
        await c
        assert (slots.running, slots.waiting) == (0, 0)
        return order

    assert asyncio.run(run()) == ["c"]


def test_an_exception_of_the_body_passes_through_and_frees_the_turn() -> None:
    async def run() -> int:
        slots = SearchSlots(limit=1, max_waiting=0)
        with pytest.raises(KeyError):
            async with slots.held(lambda: 1, refused):
                raise KeyError("x")
        return slots.running

    assert asyncio.run(run()) == 0


def test_a_raised_limit_hands_turns_to_the_waiters_first_and_a_lowered_one_ends_turns_until_under_it() -> None:
    async def run() -> list[tuple[list[str], int, int]]:
        slots = SearchSlots(limit=1, max_waiting=10)
        order: list[str] = []
        gates = {n: asyncio.Event() for n in "abcde"}
        tasks = [asyncio.create_task(holder(slots, order, n, gates[n])) for n in "abcd"]
        await asyncio.sleep(0)
        seen = [(list(order), slots.running, slots.waiting)]
        slots.limit = 3  # a reconfiguration (SearchSlots.kept)
        tasks.append(asyncio.create_task(holder(slots, order, "e", gates["e"])))
        for _ in range(3):  # e, then the waiters it woke
            await asyncio.sleep(0)
        seen.append((list(order), slots.running, slots.waiting))
        slots.limit = 1
        for n in "ab":
            gates[n].set()
        await asyncio.gather(*tasks[:2])
        seen.append((list(order), slots.running, slots.waiting))
        for n in "cde":
            gates[n].set()
        await asyncio.gather(*tasks)
        seen.append((list(order), slots.running, slots.waiting))
        return seen

    assert asyncio.run(run()) == [
        (["a"], 1, 3),
        (["a", "b", "c"], 3, 2),  # b and c, the first waiters, before the newcomer e
        (["a", "b", "c"], 1, 2),  # two turns ended, none handed on: c alone, at the lowered limit
        (["a", "b", "c", "d", "e"], 0, 0),
    ]
