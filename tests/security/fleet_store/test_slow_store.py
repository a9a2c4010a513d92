"""A fleet store that answers slowly never holds the event loop: a ``redis-server`` behind a proxy
that delays every reply just under ``timeoutMs``. A search waits for the store on the store's read
threads, so a ``dsh/postExecute`` and a ``dsh/status`` sent while it waits are answered first; a
store later than the search's own deadline is a miss served from this process's state; a
write whose reply came too late is counted once when it is re-sent."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from dsh_sidecar.bandit.policy import GLOBAL
from dsh_sidecar.state import keys
from dsh_sidecar.state.config import parse_state_config
from dsh_sidecar.state.redis_store import RedisState
from support.bandit_ops import op
from support.fleetkit import REDIS_SERVER, Providers, Sidecar, make_workspace, options, sidecar_env
from support.storeproxy import StoreProxy

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed (.ci/run installs it)")

#: ``state.timeoutMs`` of these sidecars, and how late the slow store answers (just under it).
TIMEOUT_MS = 2000
SLOW_S = 1.5
POST = {"sessionId": "s", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "__version__"}}}


def replies_in_order(sc: Sidecar, ids: list[int]) -> list[tuple[int, dict[str, Any]]]:
    """The replies to ``ids`` in the order the sidecar sent them."""
    out: list[tuple[int, dict[str, Any]]] = []
    while len(out) < len(ids):
        msg = sc.read()
        if msg.get("id") in ids and "method" not in msg:
            out.append((msg["id"], msg))
    return out


@pytest.fixture
def slow_sidecar(tmp_path: Path, server):
    """A sidecar on ``server`` behind a proxy (no delay yet), warmed up: connections made, the
    search path prepared, the knowledge read."""
    redis.Redis.from_url(server.url).flushall()
    proxy = StoreProxy(server.port)
    providers = Providers(error_every=0)
    sc = Sidecar(sidecar_env(tmp_path / "home"), tmp_path / "stderr.log")
    try:
        opts = options(providers, proxy.url(), seed=1, timeoutMs=TIMEOUT_MS, retryMs=60_000)
        sc.initialize(make_workspace(tmp_path / "demo"), opts)
        for i in range(3):
            assert "result" in sc.request("dsh/search", {"query": f"warm {i}", "strategy": "quick"})
            assert "result" in sc.request("dsh/postExecute", {**POST, "turn": i})
        yield sc, proxy, providers
    finally:
        sc.close()
        proxy.close()
        providers.close()


def test_calls_sent_during_a_search_on_a_slow_store_answer_before_it(slow_sidecar, server, tmp_path: Path) -> None:
    """The search is answered from the fleet's cache (another sidecar's answer): nothing but the
    store's read stands between it and its reply, so a search that held the loop for that read
    answered before the calls sent after it (as it did: cache lookup on the event loop)."""
    sc, proxy, providers = slow_sidecar
    other = Sidecar(sidecar_env(tmp_path / "other-home"), tmp_path / "other.log")
    raw = redis.Redis.from_url(server.url)
    try:  # another sidecar of the fleet, on the store directly, answers the query first
        other.initialize(make_workspace(tmp_path / "other"), options(providers, server.url, seed=2))
        assert "result" in other.request("dsh/search", {"query": "a slow store", "strategy": "quick"})
        # the answer is written from the other's background sender: waited for before the other
        # exits (a cache write still queued at exit is dropped by design; on a loaded machine the
        # sender had not reached it)
        for _ in range(200):
            entries = {k for k in raw.scan_iter(match=f"{keys.CACHE_PREFIX}*") if k != keys.CACHE_INDEX.encode()}
            if len(entries) == 4:  # the three warm-up searches' and this one's
                break
            time.sleep(0.05)
    finally:
        other.close()
        raw.close()
    assert len(entries) == 4
    asked = sum(providers.counts.values())
    proxy.delay_s = SLOW_S  # every reply from now on: 1.5 s late, within timeoutMs 2000
    search = sc.send("dsh/search", {"query": "a slow store", "strategy": "quick"})
    post = sc.send("dsh/postExecute", {**POST, "turn": 9})
    status = sc.send("dsh/status")
    order = replies_in_order(sc, [search, post, status])  # type: ignore[list-item]
    replies = dict(order)
    assert order[-1][0] == search, order  # the loop answered both while the search waited for the store
    assert "result" in replies[post] and "result" in replies[status]
    assert replies[status]["result"]["state"]["available"] is True
    result = replies[search]["result"]
    # the store answered in time: the fleet's answer, no provider asked
    assert [a["outcome"] for a in result["attempts"]] == ["ok (cached)"] and len(result["sources"]) == 5
    assert sum(providers.counts.values()) == asked
    proxy.delay_s = 0.0
    state = sc.call("dsh/status")["state"]
    # one late read, the status's: it reads the fleet's cooldowns for at most 1 s (1.5 s late
    # here) and answered from what this sidecar knew; the search's read came in time
    assert state["available"] is True and state["lateReads"] == 1 and state["outages"] == 0


def test_a_store_later_than_the_search_deadline_is_a_miss(slow_sidecar) -> None:
    sc, proxy, providers = slow_sidecar
    proxy.delay_s = SLOW_S
    search = sc.send("dsh/search", {"query": "past the deadline", "strategy": "quick", "deadlineMs": 600})
    post = sc.send("dsh/postExecute", {**POST, "turn": 9})
    order = replies_in_order(sc, [search, post])  # type: ignore[list-item]
    replies = dict(order)
    assert order[-1][0] == search, replies
    assert "result" in replies[search], replies[search]
    result = replies[search]["result"]
    # the search stopped waiting for the store and asked the provider within its deadline
    assert [a["outcome"] for a in result["attempts"]] == ["ok"] and len(result["sources"]) == 5
    assert "result" in replies[post]
    proxy.delay_s = 0.0
    state = sc.call("dsh/status")["state"]
    assert state["lateReads"] >= 1 and state["outages"] == 0  # late for the search, not for the store


def test_a_write_whose_reply_is_too_late_counts_once(server) -> None:
    """The store applied the update but its reply missed ``timeoutMs``: the store is away, the
    write is queued and re-sent when it answers again, and the op id makes the re-send a no-op."""
    raw = redis.Redis.from_url(server.url)
    raw.flushall()
    proxy = StoreProxy(server.port)
    st = RedisState(parse_state_config({"backend": proxy.url(), "timeoutMs": 300, "retryMs": 50}))
    try:
        assert st.cache_get("warm") is None and st.available  # connected without a delay
        proxy.delay_s = 0.6
        st.bandit_apply(op(1, "quick", 1.0))
        assert not st.available and st.status()["queuedWrites"] == 1
        assert raw.hget(keys.bandit_counts_key(GLOBAL), "quick:updates") == b"1"  # it did land
        proxy.delay_s = 0.0
        assert st.wait_synced(10)
        assert st.status()["resentWrites"] == 1
        assert raw.hget(keys.bandit_counts_key(GLOBAL), "quick:updates") == b"1"  # not twice
    finally:
        st.close()
        proxy.close()
        raw.close()


async def replied(proxy: StoreProxy, replies: int) -> None:
    """Wait (at most 5 s) until ``proxy`` has let ``replies`` reply chunks through."""
    for _ in range(100):
        if proxy.replies >= replies:
            return
        await asyncio.sleep(0.05)


async def test_a_late_window_read_gives_back_the_slot_its_own_window_refused(server) -> None:
    """A fleet rate-window read later than the search's bound leaves this process's window to
    decide; when that refuses the request, the slot the late read still took in the fleet's
    window (its script was already sent) is given back: a request never sent holds no slot."""
    from dsh_sidecar.router.health import ProviderHealth

    raw = redis.Redis.from_url(server.url)
    raw.flushall()
    proxy = StoreProxy(server.port)
    st = RedisState(parse_state_config({"backend": proxy.url(), "timeoutMs": 2000, "retryMs": 60_000}))
    health = ProviderHealth()
    health.share(st, {"brave": "brave:late"}, {"brave": (2, 60.0)})
    key = keys.rate_key("brave:late")
    try:
        assert st.cache_get("warm") is None and st.available  # connected without a delay
        assert st.take_slot("warm:other", 1, 1.0) == 0.0  # the window's script loaded: one round trip a read
        local = health._local_windows  # this process's window: its 2 slots already sent
        assert local is not None and [local.take_slot("brave:late", 2, 60.0) for _ in range(2)] == [0.0, 0.0]
        proxy.delay_s = 0.3
        replies = proxy.replies
        refused = await health.check("brave", lambda: 0.05)  # late: its own window decides, and is full
        assert (refused or "").startswith("skipped: rate_limited window full, next slot in ")
        await replied(proxy, replies + 1)  # the late read took a slot in the fleet's empty window
        for _ in range(100):  # and gives it back (one more round trip, as late)
            if raw.zcard(key) == 0:
                break
            await asyncio.sleep(0.05)
        assert raw.zcard(key) == 0
        assert st.status()["lateReads"] == 1
    finally:
        st.close()
        proxy.close()
        raw.close()
