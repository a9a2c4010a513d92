"""A store that answers but refuses writes: full (``maxmemory`` with ``noeviction``) or a
read-only replica (``REPLICAOF``: a failover left us on one). Each is one outage (one warning),
writes queue instead of being lost, reads are served locally meanwhile, and once the store
takes writes again the queue is re-sent in order with exact totals. A second ``redis-server``
of our own is made full or read-only; the first serves as the primary."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from dsh_sidecar.bandit.policy import ARMS, GLOBAL
from dsh_sidecar.state.config import parse_state_config
from dsh_sidecar.state.redis_store import RedisState
from dsh_sidecar.state.shared import KnowledgeBatch, KnowledgeRow
from support.bandit_ops import op
from support.fleetkit import REDIS_SERVER, RedisServer

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed (.ci/run installs it)")

REPO = "remote:example.org/team/app"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    srv = RedisServer(tmp_path / "redis", fsync="everysec")
    srv.start()
    yield srv
    srv.stop()


def _state(server: RedisServer) -> RedisState:
    return RedisState(parse_state_config({"backend": server.url, "retryMs": 20, "timeoutMs": 5000}))


def _full(client: redis.Redis, on: bool) -> None:
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", "1" if on else "0")


def _unavailable(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "unavailable" in r.getMessage()]


@pytest.mark.parametrize("writes", ["bandit", "knowledge", "both"])
def test_a_full_store_queues_every_write_and_resends_it_exactly(server, caplog, writes):
    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    client = redis.Redis.from_url(server.url)
    st = _state(server)
    try:
        st.bandit_apply(op(0, "quick", 1.0))  # lands: the store has room
        _full(client, True)
        now = time.time()
        for i in range(1, 21):
            if writes in ("bandit", "both"):
                st.bandit_apply(op(i, "quick" if i % 2 else "thorough", 1.0))
            if writes in ("knowledge", "both"):
                row = {("Version", "pyproject.toml"): KnowledgeRow(followed=1, last_used=now)}
                st.knowledge_apply(KnowledgeBatch(f"k{i}", REPO, row, {("Doc", "*"): now + 600}))
        per = 2 if writes == "both" else 1
        assert not st.available and st.status()["queuedWrites"] == 20 * per
        assert st.status()["lastError"] == "OutOfMemoryError"
        assert st.bandit_counts((GLOBAL,), ARMS) is None  # served locally meanwhile, no socket
        assert len(_unavailable(caplog)) == 1
        _full(client, False)
        assert st.wait_synced(30)
        assert st.status()["droppedWrites"] == 0 and st.status()["resentWrites"] == 20 * per
        if writes in ("bandit", "both"):
            counts = st.bandit_counts((GLOBAL,), ARMS)[GLOBAL]
            assert (counts["quick"]["updates"], counts["thorough"]["updates"]) == (11.0, 10.0)
        if writes in ("knowledge", "both"):
            view = st.knowledge_view(REPO, now)
            assert view.rows[("Version", "pyproject.toml")][0] == 20 and ("Doc", "*") in view.dismissals
        assert len(_unavailable(caplog)) == 1 and any("is back; re-sent" in r.getMessage() for r in caplog.records)
    finally:
        _full(client, False)
        client.close()
        st.close()


def test_a_full_store_that_stays_full_keeps_one_warning_and_bounded_probes(server, caplog):
    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    client = redis.Redis.from_url(server.url)
    _full(client, True)
    st = _state(server)
    try:
        for i in range(200):
            st.bandit_apply(op(i, "quick", 1.0))
        time.sleep(0.5)  # several probe rounds: each re-sends the head, is refused, backs off
        assert st.status()["queuedWrites"] == 200 and st.status()["droppedWrites"] == 0
        assert len(_unavailable(caplog)) == 1 and st.status()["outages"] == 1
    finally:
        _full(client, False)
        assert st.wait_synced(60)
        assert st.bandit_counts((GLOBAL,), ARMS)[GLOBAL]["quick"]["updates"] == 200.0
        client.close()
        st.close()


@pytest.mark.parametrize("during", ["bandit", "knowledge", "cache"])
def test_a_read_only_replica_queues_writes_until_it_is_promoted(tmp_path, caplog, during):
    """A failover left the URL on a replica (``REPLICAOF`` the other server): writes queue, reads
    still answer from the replica, and after ``REPLICAOF NO ONE`` the queue lands."""
    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    primary, replica = RedisServer(tmp_path / "primary", fsync="everysec"), RedisServer(tmp_path / "replica")
    primary.start()
    replica.start()
    client = redis.Redis.from_url(replica.url)
    client.replicaof("127.0.0.1", primary.port)
    st = _state(replica)
    try:
        now = time.time()
        for i in range(10):
            if during == "bandit":
                st.bandit_apply(op(i, "quick", 1.0))
            elif during == "knowledge":
                st.knowledge_apply(KnowledgeBatch(f"k{i}", REPO, {}, {("Doc", f"f{i}.md"): now + 600}))
            else:
                st.cache_put(f"q{i}", b'{"x": 1}', 60, 100)
        if during == "cache":  # cache writes are a cache: dropped, never queued, never an error
            deadline = time.monotonic() + 10
            while st.available and time.monotonic() < deadline:  # the background sender meets it
                time.sleep(0.01)
            assert not st.available and st.status()["lastError"] == "ReadOnlyError"
            assert st.status()["queuedWrites"] == 0 and st.cache_get("q1") is None
            return
        assert not st.available and st.status()["queuedWrites"] == 10
        assert st.status()["lastError"] == "ReadOnlyError" and len(_unavailable(caplog)) == 1
        client.replicaof("NO", "ONE")
        assert st.wait_synced(30)
        if during == "bandit":
            assert st.bandit_counts((GLOBAL,), ARMS)[GLOBAL]["quick"]["updates"] == 10.0
        else:
            assert len(st.knowledge_view(REPO, now).dismissals) == 10
        assert st.status()["droppedWrites"] == 0
    finally:
        client.close()
        st.close()
        replica.stop()
        primary.stop()
