"""A store whose server runs no scripts: ``EVAL``, ``EVALSHA`` and ``SCRIPT`` renamed away with
``rename-command`` (some hardened and managed servers do; an ACL that denies them is a
``NoPermissionError``, already an outage). Every write of ours is a script, so the server refuses
every key alike, and the error says so (``unknown command 'EVALSHA'``). Before, each refusal was
read as one key's fault: a warning per key ("key … is unusable"), every write dropped and counted
against its key (200 bandit updates and 200 cooldowns: ``badKeys`` 600, ``droppedWrites`` 400)
while ``available`` stayed true. Now it is the store refusing, as a full or read-only store is:
one warning, the store away, reads local, writes queued (bounded) and told at the exit."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dsh_sidecar.bandit.policy import ARMS, GLOBAL
from dsh_sidecar.state.config import parse_state_config
from dsh_sidecar.state.redis_store import RedisState
from dsh_sidecar.state.shared import KnowledgeBatch, KnowledgeRow
from support.bandit_ops import op
from support.fleetkit import REDIS_SERVER, RedisServer

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed (.ci/run installs it)")

NO_SCRIPTS = ("--rename-command", "EVAL", "", "--rename-command", "EVALSHA", "", "--rename-command", "SCRIPT", "")
REPO = "remote:example.org/team/app"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    srv = RedisServer(tmp_path / "redis", fsync="everysec", options=NO_SCRIPTS)
    srv.start()
    yield srv
    srv.stop()


def test_a_store_that_runs_no_scripts_is_one_outage_with_its_writes_queued(server, caplog):
    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    st = RedisState(parse_state_config({"backend": server.url, "retryMs": 20, "timeoutMs": 2000}))
    try:
        now = time.time()
        for i in range(50):
            st.bandit_apply(op(i, "quick" if i % 2 else "thorough", 1.0))
            st.start_cooldown("tavily", "rate_limited", 30)
        row = {("Version", "pyproject.toml"): KnowledgeRow(followed=1, last_used=now)}
        st.knowledge_apply(KnowledgeBatch("k1", REPO, row, {}))
        deadline = time.monotonic() + 10
        while st.status()["queuedWrites"] < 101 and time.monotonic() < deadline:
            time.sleep(0.02)  # the cooldowns go by the background sender
        status = st.status()
        assert (status["available"], status["outages"], status["lastError"]) == (False, 1, "ResponseError")
        assert (status["queuedWrites"], status["droppedWrites"], status["badKeys"]) == (101, 0, 0)
        assert st.bandit_counts((GLOBAL,), ARMS) is None  # served locally, no socket
        messages = [r.getMessage() for r in caplog.records]
        assert [m for m in messages if "unusable" in m] == []
        assert [m.split(" (")[0] for m in messages if "unavailable" in m] == [f"state store {server.url} unavailable"]
    finally:
        st.close()
    told = [r.getMessage() for r in caplog.records if "not sent at exit" in r.getMessage()]
    assert told == [
        f"state store {server.url} unavailable: 101 writes not sent at exit (101 queued; the exit waits at most 1 s"
        " for the store)"
    ]
