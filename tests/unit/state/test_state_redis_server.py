"""A kill and restart of a real ``redis-server`` under a live :class:`RedisState` (the
shared-state contract against a real server is ``test_state_redis.py``'s ``redis-server``
backend). Skipped without Debian's ``redis-server`` (``.ci/run`` installs it)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from dsh_sidecar.bandit.policy import ARMS, GLOBAL
from dsh_sidecar.state.config import parse_state_config
from dsh_sidecar.state.redis_store import RedisState
from support.bandit_ops import op
from support.fleetkit import REDIS_SERVER, RedisServer

pytestmark = [
    pytest.mark.skipif(
        REDIS_SERVER is None, reason="redis-server not installed (Debian package redis-server; .ci/run installs it)"
    ),
    pytest.mark.slow,  # each test starts redis-server processes
]


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


def test_a_chosen_port_taken_before_redis_binds_it_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race of ``free_port`` under two xdist workers: the port it returned is bound by
    someone else before ``redis-server`` starts. The start moves to a new port; a restart of a
    server already served on (its URL handed out) does not move."""
    import socket

    import support.fleetkit as fleetkit

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        ports = iter([taken])
        real = fleetkit.free_port
        monkeypatch.setattr(fleetkit, "free_port", lambda: next(ports, None) or real())
        server = RedisServer(tmp_path / "redis")
        assert server.port == taken
        server.start()
        try:
            assert server.port != taken and server.pinned
            pinned = RedisServer(tmp_path / "other", port=taken)
            with pytest.raises(RuntimeError, match="Address already in use"):
                pinned.start(timeout_s=10)
        finally:
            server.stop()


def test_a_chosen_port_served_by_another_redis_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two RedisServers given the same ``free_port`` (two xdist workers): the second one's
    redis-server cannot bind it, but the other's answers its ``PING`` first; it took that PONG
    for its own and served the tests from the other's store while its own process had exited.
    A PONG counts only from its own process (``INFO server``'s ``process_id``)."""
    import support.fleetkit as fleetkit

    first = RedisServer(tmp_path / "first")
    first.start()
    try:
        ports = iter([first.port])
        real = fleetkit.free_port
        monkeypatch.setattr(fleetkit, "free_port", lambda: next(ports, None) or real())
        second = RedisServer(tmp_path / "second")
        assert second.port == first.port
        second.start()
        try:
            assert second.port != first.port
            assert second.proc is not None and second.proc.poll() is None
        finally:
            second.stop()
        with pytest.raises(
            RuntimeError, match=f"Address already in use|port {first.port} is served by another redis-server"
        ):
            RedisServer(tmp_path / "pinned", port=first.port).start(timeout_s=10)
    finally:
        first.stop()
