"""The fleet store's read threads (``state/reads.py``, :class:`ReadPool`): a fixed number of
threads, a bounded queue, a read its caller gave up on before it started never sent; and
:meth:`StoreLink.read_within`, which an event loop awaits instead of waiting for the store."""

from __future__ import annotations

import asyncio
import threading

import fakeredis
import pytest
from dsh_sidecar.state.config import parse_state_config
from dsh_sidecar.state.reads import MAX_WAITING_READS, READ_THREADS, ReadPool
from dsh_sidecar.state.redis_store import RedisState


def test_the_pool_never_grows_past_its_threads_nor_its_queue() -> None:
    pool = ReadPool("test-read")
    gate = threading.Event()
    started = threading.Semaphore(0)
    ended: list[tuple[bool, object]] = []

    def blocked() -> int:
        started.release()
        gate.wait(10)
        return 1

    reads = []
    for _ in range(READ_THREADS):  # each thread takes one
        reads.append(pool.submit(blocked, lambda ok, value: ended.append((ok, value))))
        assert started.acquire(timeout=10)
    reads += [pool.submit(blocked, lambda ok, value: ended.append((ok, value))) for _ in range(MAX_WAITING_READS + 500)]
    try:
        # the threads took one read each; the queue holds its bound; the rest were refused
        taken = [r for r in reads if r is not None]
        assert len(taken) == READ_THREADS + MAX_WAITING_READS
        assert reads[len(taken) :] == [None] * 500
        assert pool.waiting() == MAX_WAITING_READS
        assert sum(t.name == "test-read" for t in threading.enumerate()) == READ_THREADS
    finally:
        gate.set()
    for _ in range(len(taken) - READ_THREADS):
        assert started.acquire(timeout=10)
    pool.close()
    for thread in [t for t in threading.enumerate() if t.name == "test-read"]:
        thread.join(10)
    assert ended == [(True, 1)] * len(taken)
    assert pool.submit(lambda: 1) is None  # closed


def test_a_read_given_up_before_it_started_is_never_run() -> None:
    pool = ReadPool("test-read", threads=1)
    gate = threading.Event()
    ran: list[str] = []
    started = threading.Event()
    first = pool.submit(lambda: (started.set(), gate.wait(10)))
    assert started.wait(10)  # the thread is busy with it
    second = pool.submit(lambda: ran.append("second"))
    assert first is not None and second is not None
    second.give_up()  # its caller stopped waiting while it queued
    gate.set()
    third_ran = threading.Event()
    third = pool.submit(lambda: ran.append("third"), lambda ok, value: third_ran.set())
    assert third is not None and third_ran.wait(10)
    pool.close()
    for thread in [t for t in threading.enumerate() if t.name == "test-read"]:
        thread.join(10)
    assert ran == ["third"]


def _store() -> RedisState:
    cfg = parse_state_config({"backend": "redis://127.0.0.1:6399/0", "timeoutMs": 2000})
    return RedisState(cfg, client=fakeredis.FakeRedis(server=fakeredis.FakeServer()))


async def test_read_within_answers_locally_when_the_store_is_late() -> None:
    st = _store()
    gate = threading.Event()
    try:
        # a read later than the caller's bound: the fallback, counted; the loop was free meanwhile
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        tick = asyncio.create_task(ticker())
        got = await st.read_within(lambda: gate.wait(10) and "store", lambda: "local", 0.2)
        tick.cancel()
        assert got == "local" and ticks >= 5
        assert st.status()["lateReads"] == 1 and st.available  # late for the caller, not away
        gate.set()
        assert await st.read_within(lambda: "store", lambda: "local", 1.0) == "store"
        assert await st.read_within(lambda: "store", lambda: "local", 0.0) == "local"  # no time left
    finally:
        gate.set()
        st.close()


async def test_read_within_answers_locally_when_the_queue_is_full() -> None:
    st = _store()
    gate = threading.Event()
    try:
        started = threading.Semaphore(0)
        for _ in range(READ_THREADS):  # each thread takes one
            assert st.read_behind(lambda: (started.release(), gate.wait(10)))
            assert started.acquire(timeout=10)
        for _ in range(MAX_WAITING_READS):
            assert st.read_behind(lambda: gate.wait(10))
        assert not st.read_behind(lambda: None)
        assert await st.read_within(lambda: "store", lambda: "local", 1.0) == "local"
        assert st.status()["skippedReads"] == 2
    finally:
        gate.set()
        st.close()


async def test_a_cancelled_search_stops_waiting_for_the_store() -> None:
    """``$/cancelRequest`` cancels the search's task: the cancellation goes through (it is not
    taken for a late store)."""
    st = _store()
    gate = threading.Event()
    try:
        task = asyncio.create_task(st.read_within(lambda: gate.wait(10), lambda: "local", 5.0))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert st.status()["lateReads"] == 0
    finally:
        gate.set()
        st.close()
