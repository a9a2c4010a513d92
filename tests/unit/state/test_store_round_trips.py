"""The fleet store's round trips (docs/fleet.md), counted exactly by a wrapper of the connection:
each ``send_packed_command`` is one (redis-py packs a pipeline into one). A flush of the bandit's
queued updates is one round trip however many it holds, each update keeping its own fate."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import fakeredis
import pytest
from dsh_sidecar.bandit.policy import ARMS, GLOBAL, ContextualPolicy
from dsh_sidecar.bandit.store import PosteriorStore
from dsh_sidecar.state.config import parse_state_config
from dsh_sidecar.state.redis_store import RedisState
from fakeredis._clients._sync import FakeRedisConnection
from support.bandit_ops import op

URL = "redis://127.0.0.1:6399/0"


class Trips:
    """The round trips every connection of this process sent, by thread name."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by: list[str] = []

    def count(self) -> int:
        with self.lock:
            return len(self.by)


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[Trips]:
    counted = Trips()
    real = FakeRedisConnection.send_packed_command

    def counting(self: FakeRedisConnection, command: object, check_health: bool = True) -> None:
        with counted.lock:
            counted.by.append(threading.current_thread().name)
        real(self, command, check_health)

    monkeypatch.setattr(FakeRedisConnection, "send_packed_command", counting)
    yield counted


@pytest.fixture
def server() -> fakeredis.FakeServer:
    return fakeredis.FakeServer()


def redis_state(server: fakeredis.FakeServer) -> RedisState:
    return RedisState(parse_state_config({"backend": URL, "retryMs": 10}), client=fakeredis.FakeRedis(server=server))


def stored(server: fakeredis.FakeServer) -> dict[str, float]:
    st = redis_state(server)
    counts = st.bandit_counts((GLOBAL,), ARMS)
    st.close()
    assert counts is not None
    return {arm: counts[GLOBAL][arm]["updates"] for arm in ARMS}


def test_a_batch_of_bandit_updates_is_one_round_trip(server, trips) -> None:
    st = redis_state(server)
    st.client.ping()
    before = trips.count()
    st.bandit_apply_many([op(i, "quick", 1.0) for i in range(5)])
    # the server has not the script yet: the pipeline, the script's load, the pipeline again
    assert trips.count() - before == 3
    before = trips.count()
    st.bandit_apply_many([op(i, "thorough", 0.0) for i in range(5, 12)])
    assert trips.count() - before == 1
    st.bandit_apply_many([op(i, "quick", 1.0) for i in range(5)])  # a re-send after a lost reply: counted once
    assert stored(server) == {"quick": 5.0, "thorough": 7.0}
    st.close()


def test_a_batch_sent_while_the_store_is_away_is_queued_update_by_update_and_counts_once(server) -> None:
    st = redis_state(server)
    st.bandit_apply_many([op(0, "quick", 1.0)])
    server.connected = False
    st.bandit_apply_many([op(i, "quick", 1.0) for i in range(1, 4)])  # the round trip fails: all three queued
    st.bandit_apply_many([op(i, "quick", 1.0) for i in range(4, 6)])  # away: queued without a round trip
    status = st.status()
    assert (status["available"], status["outages"], status["queuedWrites"], status["droppedWrites"]) == (False, 1, 5, 0)
    server.connected = True
    assert st.wait_synced(10)
    assert st.status()["resentWrites"] == 5
    assert stored(server) == {"quick": 6.0, "thorough": 0.0}
    st.close()


def test_a_bandit_flush_is_one_round_trip_and_its_read_back_one_more(server, trips) -> None:
    """The bandit's writer sends what it collected in one round trip (before, one per update),
    then reads the fleet's posteriors back in one more."""
    st = redis_state(server)
    policy = ContextualPolicy(("factoid",), discount=0.99)
    store = PosteriorStore(None)
    store.share(st, policy)
    assert store.settle(5)
    store.apply(policy, policy.update_op("factoid", "quick", 1.0), counts_for="quick")  # the script loaded
    store.refresh_s = 0.0  # read the fleet back after every flush
    before = trips.count()
    for _ in range(6):
        store.submit(policy, policy.update_op("factoid", "quick", 1.0), counts_for="quick")
    assert store.flush(10)
    assert trips.by[before:] == ["dsh-bandit-state"] * 2
    assert stored(server) == {"quick": 7.0, "thorough": 0.0} and store.updates == {"quick": 7, "thorough": 0}
    store.close()
    st.close()


async def test_a_quick_search_awaits_one_read_and_writes_after(server, trips, mock_provider, monkeypatch) -> None:
    """A search that misses the cache awaits one round trip (the fleet's entry and the chain's
    cooldowns, on a read thread) when its attempt follows that read within ``FLEET_READ_S`` (held
    here: a loaded machine may take longer and read the cooldowns again); its cache write goes
    from the background sender. Another sidecar's search of the same query is answered from that
    entry with the same one read and nothing written."""
    from dsh_sidecar.router import fleet
    from dsh_sidecar.router.sharing import share_router
    from support.mockprovider import case_reply
    from support.routers import ROUTES, make_router

    monkeypatch.setattr(fleet, "FLEET_READ_S", 60.0)
    mock_provider.route(*ROUTES["searxng"], case_reply("searxng", "ok", check=False)[0])
    routers, states = [], []
    for name in ("a", "b"):
        router = make_router(mock_provider, "searxng", env={})
        st = redis_state(server)
        share_router(router, st)
        await router.search(f"warm {name}", 5)  # the client made, the cache script loaded
        assert st.wait_synced(10)
        routers.append(router)
        states.append(st)
    try:
        before = trips.count()
        await routers[0].search("bike chain cleaning", 5)
        assert states[0].wait_synced(10)  # the cache write has landed
        assert trips.by[before:] == ["dsh-state-read", "dsh-state-send"]
        before = trips.count()
        second = await routers[1].search("bike chain cleaning", 5)
        assert [a.outcome for a in second.attempts] == ["ok (cached)"]
        assert states[1].wait_synced(10)
        assert trips.by[before:] == ["dsh-state-read"]
        assert mock_provider.count(*ROUTES["searxng"]) == 3
    finally:
        for router in routers:
            await router.aclose()
        for st in states:
            st.close()
