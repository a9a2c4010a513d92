"""The shared-state contract of ``test_state_redis.py`` against a real ``redis-server`` (its Lua
scripts, ``ZADD GT``, ``TIME`` and number formatting as Redis has them, not as fakeredis
emulates them), plus a kill and restart under a live :class:`RedisState`. Skipped without
Debian's ``redis-server`` (``.ci/run`` installs it)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from dsh_sidecar.bandit.policy import ARMS, GLOBAL
from dsh_sidecar.state.config import parse_state_config
from dsh_sidecar.state.redis_store import RedisState
from support.fleetkit import REDIS_SERVER, RedisServer
from test_state_redis import (  # noqa: F401 (collected here again, with this module's `state`)
    op,
    test_bandit_ops_count_once_and_rows_stay_bounded,
    test_bandit_statistics_equal_the_discounted_policy_update,
    test_cache_first_writer_wins_and_is_bounded,
    test_cooldowns_keep_the_longer_and_clear,
    test_knowledge_increments_seeds_and_dismissals,
    test_knowledge_rows_are_bounded_least_recent_first,
    test_rate_window_grants_limit_slots,
)

pytestmark = pytest.mark.skipif(
    REDIS_SERVER is None, reason="redis-server not installed (Debian package redis-server; .ci/run installs it)"
)


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"), fsync="everysec")  # the contract, not durability
    server.start()
    yield server
    server.stop()


@pytest.fixture
def state(real_server: RedisServer) -> Iterator[RedisState]:
    redis.Redis.from_url(real_server.url).flushall()
    # a loaded machine may stall a write for > 50 ms: that is an outage, which is not under test here
    st = RedisState(parse_state_config({"backend": real_server.url, "retryMs": 10, "timeoutMs": 5000}))
    yield st
    st.close()


def test_kill_and_restart_under_a_live_state(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    st = RedisState(parse_state_config({"backend": server.url, "retryMs": 10, "timeoutMs": 5000}))
    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    try:
        for i in range(20):
            st.bandit_apply(op(i, "quick", 1.0))
        server.kill()
        for i in range(20, 50):
            st.bandit_apply(op(i, "thorough", 0.0))  # queued: the store is gone
        assert not st.available and st.status()["queuedWrites"] == 30
        server.start()
        assert st.wait_synced(30)
        counts = st.bandit_counts((GLOBAL,), ARMS)[GLOBAL]
        assert (counts["quick"]["updates"], counts["thorough"]["updates"]) == (20.0, 30.0)
        assert len([r for r in caplog.records if "unavailable" in r.getMessage()]) == 1
    finally:
        st.close()
        server.stop()
