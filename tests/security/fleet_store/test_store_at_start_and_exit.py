"""A slow fleet store holds neither the start nor the exit: ``initialize`` answers before the
store's first reply (the store's replies are held until the test has its answers: a fixed 2 s
delay was shorter than ``initialize`` and ``dsh/status`` at load 34; the bandit adopts the
fleet's posteriors when their read lands, and samples from them from then on), and a sidecar that exits while its writes wait for the store ends within
its bound, saying how many writes it did not send; every bandit update missing from the store is
among them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import redis
from dsh_sidecar.bandit.policy import GLOBAL
from dsh_sidecar.state import keys
from dsh_sidecar.state.config import parse_state_config
from dsh_sidecar.state.redis_store import RedisState
from support.bandit_ops import op
from support.fleetkit import REDIS_SERVER, Providers, Sidecar, make_workspace, options, sidecar_env
from support.storeproxy import StoreProxy
from support.waiting import HANG_S, wait_until

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed (.ci/run installs it)")

#: ``state.timeoutMs`` (its largest): the start's store commands wait for it while the test holds
#: their replies (``initialize`` and one ``dsh/status``).
TIMEOUT_MS = 5000
#: How late the store answers at the exit: past every bound of the test (it never answers in time).
STALL_S = 60.0
#: Fleet evidence planted before the sidecar starts: ``thorough`` always rewarded, ``quick`` never.
PLANTED = 60
POST = {"sessionId": "s", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "__version__"}}}
UNSENT = re.compile(
    r"state store redis://127\.0\.0\.1:\d+/0(?: unavailable)?: (\d+) writes not sent at exit \(([^)]*); "
    r"the exit waits at most [0-9.]+ s for the store\)"
)


@pytest.fixture
def providers():
    p = Providers(error_every=0)
    yield p
    p.close()


def test_initialize_answers_before_a_slow_store_and_the_fleets_posteriors_are_adopted_when_read(
    tmp_path: Path, server, providers
) -> None:
    raw = redis.Redis.from_url(server.url)
    raw.flushall()
    raw.close()
    planter = RedisState(parse_state_config({"backend": server.url}))
    for i in range(PLANTED):
        planter.bandit_apply(op(2 * i, "thorough", 1.0))
        planter.bandit_apply(op(2 * i + 1, "quick", 0.0))
    assert planter.wait_synced(HANG_S)  # all sent (its exit flushes for a bounded time)
    planter.close()
    proxy = StoreProxy(server.port, held=True)
    sc = Sidecar(sidecar_env(tmp_path / "home"), tmp_path / "stderr.log")
    try:
        opts = options(providers, proxy.url(), seed=3, timeoutMs=TIMEOUT_MS, retryMs=60_000)
        sc.initialize(make_workspace(tmp_path / "demo"), opts)
        assert proxy.replies == 0  # answered before the store's first reply
        status = sc.request("dsh/status")["result"]
        assert proxy.replies == 0
        assert status["bandit"]["updates"] == {"quick": 0, "thorough": 0}  # this process's own, for now
        assert status["state"]["available"] is True
        proxy.release()
        status = wait_until(  # the first read lands (a handshake and a script's load)
            lambda: (s := sc.request("dsh/status")["result"])["bandit"]["updates"] != {"quick": 0, "thorough": 0} and s,
            "the fleet's posteriors read",
        )
        assert status["bandit"]["updates"] == {"quick": PLANTED, "thorough": PLANTED}
        # Thompson sampling on the fleet's posteriors: thorough Beta(≥11, 1) against quick Beta(1, ≥11);
        # on the prior alone (seed 3, the file backend) these searches chose quick 7 times of 8
        chosen = [sc.request("dsh/search", {"query": f"fleet prior {i}"})["result"]["strategy"] for i in range(8)]
        assert chosen == ["thorough"] * 8
    finally:
        sc.close()
        proxy.close()


def test_an_exit_on_a_slow_store_ends_before_it_answers_and_counts_what_it_did_not_send(
    tmp_path: Path, server, providers
) -> None:
    raw = redis.Redis.from_url(server.url)
    raw.flushall()
    proxy = StoreProxy(server.port)
    sc = Sidecar(sidecar_env(tmp_path / "home"), tmp_path / "stderr.log")
    try:
        opts = options(providers, proxy.url(), seed=1, timeoutMs=TIMEOUT_MS, retryMs=60_000)
        sc.initialize(make_workspace(tmp_path / "demo"), opts)
        for i in range(3):  # warm: connections made, the search path prepared
            assert "result" in sc.request("dsh/search", {"query": f"warm {i}", "strategy": "quick"})
        proxy.delay_s = STALL_S
        for i in range(6):  # learned while the store does not answer: the writes wait for it
            assert "result" in sc.request("dsh/search", {"query": f"slow {i}", "strategy": "quick"})
            assert "result" in sc.request("dsh/postExecute", {**POST, "turn": i})
        learned = sc.request("dsh/status")["result"]["state"]["banditUpdates"]
        replies = proxy.replies
        assert sc.request("shutdown")["result"] is None
        sc.send("exit", None, notify=True)
        assert sc.proc.wait(30) == 0
        assert proxy.replies == replies  # the exit ended without any of the store's replies
        found = UNSENT.findall(sc.stderr())
        assert len(found) == 1, sc.stderr()
        unsent = int(found[0][0])
        parts = dict(reversed(part.split(" ", 1)) for part in found[0][1].split(", "))
        assert unsent == sum(int(n) for n in parts.values()) and unsent >= 1
        assert set(parts) <= {"queued", "sent without a reply", "not handed to the store"}
        stored = int(raw.hget(keys.bandit_counts_key(GLOBAL), "quick:updates") or 0)
        assert stored <= learned and learned - stored <= unsent  # every update missing is counted
    finally:
        raw.close()
        sc.close()
        proxy.close()
