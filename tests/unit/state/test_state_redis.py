"""The shared-state backends (docs/fleet.md), on fakeredis: one contract for :class:`LocalState` and
:class:`RedisState`, degradation and re-sync, the bound on waiting, and the cores' hooks
(health, cache, bandit store, knowledge) with two "sidecars" on one store."""

from __future__ import annotations

import logging
import os
import random
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import fakeredis
import pytest
import redis
from dsh_protocol import Source
from dsh_sidecar.bandit.policy import ARMS, GLOBAL, ContextualPolicy, apply_adjust, apply_update
from dsh_sidecar.bandit.store import PosteriorStore
from dsh_sidecar.config import parse_config
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.router import AllProvidersFailed
from dsh_sidecar.router.cache import CachedAnswer, ResultCache
from dsh_sidecar.router.health import ProviderHealth
from dsh_sidecar.state import keys, redis_link, redis_store
from dsh_sidecar.state.config import parse_state_config, public_url
from dsh_sidecar.state.local import LocalState
from dsh_sidecar.state.redis_store import RedisState
from dsh_sidecar.state.shared import BUCKETS, KnowledgeBatch, KnowledgeRow, bucket_width
from dsh_sidecar.suggester.knowledge import Knowledge
from dsh_sidecar.workspace.identity import repository_identity
from support.bandit_ops import op
from support.fleetkit import REDIS_SERVER, RedisServer
from support.sidecar import home_env

URL = "redis://:hunter2@127.0.0.1:6399/0"


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def server() -> fakeredis.FakeServer:
    return fakeredis.FakeServer()


def redis_state(server: fakeredis.FakeServer, **cfg: object) -> RedisState:
    config = parse_state_config({"backend": URL, "retryMs": 10, **cfg})
    return RedisState(config, client=fakeredis.FakeRedis(server=server))


@pytest.fixture(scope="module")
def real_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real ``redis-server`` of our own (its Lua scripts, ``ZADD GT``, ``TIME`` and number
    formatting as Redis has them, not as fakeredis emulates them); skips without one."""
    if REDIS_SERVER is None:
        pytest.skip("redis-server not installed (Debian package redis-server; .ci/run installs it)")
    real = RedisServer(tmp_path_factory.mktemp("redis"), fsync="everysec")  # the contract, not durability
    real.start()
    yield real
    real.stop()


@pytest.fixture(params=["local", "redis", pytest.param("redis-server", marks=pytest.mark.slow)])
def state(request: pytest.FixtureRequest, server: fakeredis.FakeServer):
    """The shared-state contract's backends: local files, RedisState on fakeredis, RedisState on
    a real redis-server (flushed before each test)."""
    if request.param == "local":
        st = LocalState()
    elif request.param == "redis":
        st = redis_state(server)
    else:
        real = request.getfixturevalue("real_redis")
        redis.Redis.from_url(real.url).flushall()
        # a loaded machine may stall a write for > 50 ms: that is an outage, not under test here
        st = RedisState(parse_state_config({"backend": real.url, "retryMs": 10, "timeoutMs": 5000}))
    yield st
    st.close()


def settle(state: object) -> None:
    """Wait for a RedisState's background sends (cache writes) to land."""
    if isinstance(state, RedisState):
        assert state.wait_synced(10)


# --------------------------------------------------------------------------- the contract


@pytest.mark.slow
@pytest.mark.parametrize("discount", [0.99, 0.9, 1.0])
def test_bandit_statistics_equal_the_discounted_policy_update(state, discount: float) -> None:
    rng = random.Random(7)
    ref: dict = {}
    n = 600  # γ = 0.9: 37 buckets of 16, so old buckets are pruned on the way
    for i in range(n):
        arm, reward = rng.choice(ARMS), rng.random()
        state.bandit_apply(op(i, arm, reward, discount))
        apply_update(ref, "factoid", arm, reward, discount)
    state.bandit_apply(op(n, "quick", 0.25, discount, kind="adjust"))
    apply_adjust(ref, "factoid", "quick", 0.25)
    ev = state.bandit_evidence(("factoid", GLOBAL), ARMS, discount)
    for row in ("factoid", GLOBAL):
        for arm in ARMS:
            assert ev[row][arm] == pytest.approx(ref["factoid"][arm], rel=1e-9, abs=1e-9)
    counts = state.bandit_counts(("factoid",), ARMS)["factoid"]
    assert counts["quick"]["updates"] + counts["thorough"]["updates"] == n
    # what the bandit adopts, in one round trip: the same evidence and counts
    assert state.bandit_view(("factoid", GLOBAL), ARMS, discount, ("factoid",)) == (ev, {"factoid": counts})


@pytest.mark.slow
def test_bandit_ops_count_once_and_rows_stay_bounded(state) -> None:
    for i in range(700):
        state.bandit_apply(op(i, "quick", 1.0, 0.9))
        state.bandit_apply(op(i, "quick", 1.0, 0.9))  # a re-send after a lost reply
    counts = state.bandit_counts((GLOBAL,), ARMS)[GLOBAL]
    assert counts == {"quick": {"updates": 700.0, "reward": 700.0}, "thorough": {"updates": 0.0, "reward": 0.0}}
    # γ = 0.9: a = Σ 0.9^k → 1/(1-0.9) = 10
    assert state.bandit_evidence((GLOBAL,), ARMS, 0.9)[GLOBAL]["quick"][0] == pytest.approx(10.0, rel=1e-9)
    if isinstance(state, RedisState):
        fields = state.client.hkeys(keys.bandit_discounted_key(GLOBAL, 0.9))
        assert len(fields) <= 1 + (BUCKETS + 1) * 2  # t + live buckets of the quick arm
        assert 0 < state.client.ttl(keys.bandit_discounted_key(GLOBAL, 0.9)) <= keys.LEARNED_TTL_S


def test_bandit_reset_forgets_every_row_and_discount_only(state) -> None:
    for i, discount in enumerate((0.99, 0.9)):
        state.bandit_apply(op(i, "quick", 1.0, discount))
    state.start_cooldown("brave", "rate-limit", 600)
    settle(state)
    # per row ('factoid', 'global'): the exact totals, and the sums under γ = 0.99 and γ = 0.9
    assert state.reset_bandit() == 6
    assert state.bandit_counts((GLOBAL,), ARMS)[GLOBAL]["quick"] == {"updates": 0.0, "reward": 0.0}
    assert state.bandit_evidence((GLOBAL,), ARMS, 0.9)[GLOBAL]["quick"] == [0.0, 0.0]
    assert state.cooldown("brave") is not None
    assert state.reset_bandit() == 0
    state.bandit_apply(op(9, "thorough", 1.0))  # the next update starts from the prior
    assert state.bandit_counts((GLOBAL,), ARMS)[GLOBAL]["thorough"]["updates"] == 1.0


def test_bucket_width() -> None:
    assert bucket_width(0.99) == 89
    assert bucket_width(1.0) == 2**52
    with pytest.raises(ValueError):
        bucket_width(0.0)


def test_cooldowns_keep_the_longer_and_clear(state) -> None:
    assert state.cooldown("brave:x") is None
    state.start_cooldown("brave:x", "rate_limited", 30)
    state.start_cooldown("brave:x", "auth", 5)  # shorter: the running one stays
    cls, left = state.cooldown("brave:x")
    assert cls == "rate_limited" and 29 < left <= 30
    state.start_cooldown("brave:x", "quota_exhausted", 120)
    assert state.cooldown("brave:x")[0] == "quota_exhausted"
    state.clear_cooldown("brave:x")
    assert state.cooldown("brave:x") is None


def test_rate_window_grants_limit_slots(state) -> None:
    assert [state.take_slot("brave:k", 2, 10.0) for _ in range(2)] == [0.0, 0.0]
    wait = state.take_slot("brave:k", 2, 10.0)
    assert 9.0 < wait <= 10.0
    assert state.take_slot("brave:other", 2, 10.0) == 0.0  # another key has its own window


def test_local_rate_window_slides() -> None:
    clock = Clock()
    st = LocalState(clock)
    assert st.take_slot("p", 1, 1.0) == 0.0
    clock.t += 0.4
    assert st.take_slot("p", 1, 1.0) == pytest.approx(0.6)
    clock.t += 0.6
    assert st.take_slot("p", 1, 1.0) == 0.0


def test_cache_first_writer_wins_and_is_bounded(state) -> None:
    state.cache_put("q1", b"first", 60, 3)
    settle(state)
    state.cache_put("q1", b"second", 60, 3)
    settle(state)
    assert state.cache_get("q1") == b"first"
    for i in range(2, 7):
        state.cache_put(f"q{i}", b"x", 60, 3)
    settle(state)
    assert [state.cache_get(f"q{i}") is not None for i in range(1, 7)] == [False, False, False, True, True, True]


def test_cache_value_too_big_stays_out(server) -> None:
    st = redis_state(server)
    st.cache_put("big", b"x" * (keys.MAX_CACHE_VALUE_BYTES + 1), 60, 10)
    settle(st)
    assert st.cache_get("big") is None


def test_knowledge_increments_seeds_and_dismissals(state) -> None:
    now = time.time()
    repo = "remote:example.org/team/app"
    state.knowledge_apply(
        KnowledgeBatch(
            "b1",
            repo,
            {("Test", "tests/a.py"): KnowledgeRow(1, 2, 1.0, now - 5), ("Doc", "README.md"): KnowledgeRow(seed=2.0)},
            {("Doc", "*"): now + 100, ("Test", "old.py"): now - 1},
        )
    )
    state.knowledge_apply(KnowledgeBatch("b1", repo, {("Test", "tests/a.py"): KnowledgeRow(9)}))  # replayed id
    state.knowledge_apply(
        KnowledgeBatch(
            "b2",
            repo,
            {("Test", "tests/a.py"): KnowledgeRow(2, 0, 2.0, now - 50), ("Doc", "README.md"): KnowledgeRow(ignored=1)},
            {("Doc", "*"): now + 10},
        )
    )
    view = state.knowledge_view(repo, now)
    assert view.rows == {
        ("Test", "tests/a.py"): (3, 2, 1.0, pytest.approx(now - 5)),  # seed kept, lastUsed the max
        ("Doc", "README.md"): (0, 1, 2.0, 0.0),
    }
    assert view.dismissals == {("Doc", "*"): pytest.approx(now + 100)}  # the later expiry; expired gone
    assert state.knowledge_view("remote:other/repo", now).rows == {}
    v1 = state.knowledge_version(repo)
    state.knowledge_apply(KnowledgeBatch("b3", repo, {("Doc", "a:b.md"): KnowledgeRow(1)}))
    assert state.knowledge_version(repo) != v1
    assert state.knowledge_view(repo, now).rows[("Doc", "a:b.md")][0] == 1  # a ':' in a path survives


def test_knowledge_rows_are_bounded_least_recent_first(state, monkeypatch) -> None:
    monkeypatch.setattr(redis_store, "MAX_ROWS", 3)
    monkeypatch.setattr("dsh_sidecar.state.local.MAX_ROWS", 3)
    rows = {("Doc", f"d{i}.md"): KnowledgeRow(1, 0, 0.0, 100.0 + i) for i in range(5)}
    state.knowledge_apply(KnowledgeBatch("b", "r", rows))
    assert sorted(state.knowledge_view("r", 0).rows) == [("Doc", "d2.md"), ("Doc", "d3.md"), ("Doc", "d4.md")]


# --------------------------------------------------------------------------- degrade, re-sync, bound


def test_store_away_serves_locally_warns_once_and_resyncs(server, caplog) -> None:
    st = redis_state(server)
    st.bandit_apply(op(0, "quick", 1.0))
    server.connected = False
    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    for i in range(1, 51):
        st.bandit_apply(op(i, "quick", 0.5))
        assert st.cooldown("p") is None and st.cache_get("k") is None
        assert st.bandit_evidence((GLOBAL,), ARMS, 0.99) is None  # keep the local posterior
    st.start_cooldown("p", "rate_limited", 60)
    st.knowledge_apply(KnowledgeBatch("k1", "r", {("Doc", "a.md"): KnowledgeRow(1)}))
    assert st.take_slot("p", 1, 60) == 0.0 and st.take_slot("p", 1, 60) > 0  # spacing goes on locally
    assert not st.available and st.status()["queuedWrites"] == 52
    away = [r for r in caplog.records if "unavailable" in r.getMessage()]
    assert len(away) == 1 and "hunter2" not in away[0].getMessage()
    server.connected = True
    assert st.wait_synced(10)
    assert st.bandit_counts((GLOBAL,), ARMS)[GLOBAL]["quick"]["updates"] == 51
    assert st.cooldown("p")[0] == "rate_limited"
    assert st.knowledge_view("r", 0).rows[("Doc", "a.md")][0] == 1
    assert st.status()["resentWrites"] == 52 and st.status()["outages"] == 1
    assert len([r for r in caplog.records if "is back" in r.getMessage()]) == 1
    st.close()


def test_queue_is_bounded(server, monkeypatch) -> None:
    monkeypatch.setattr(redis_link, "MAX_PENDING", 5)
    st = redis_state(server, retryMs=60_000)
    server.connected = False
    for i in range(8):
        st.bandit_apply(op(i, "quick", 1.0))
    assert st.status()["queuedWrites"] == 5 and st.status()["droppedWrites"] == 3
    st.close()


@pytest.fixture
def blackhole() -> tuple[int, list[socket.socket]]:
    """A TCP listener that accepts and never answers (a hung or partitioned store)."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(16)
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = lsock.accept()
            except OSError:
                return
            accepted.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    yield lsock.getsockname()[1], accepted
    lsock.close()
    for conn in accepted:
        conn.close()


def test_a_hung_store_costs_one_bounded_wait_then_none(blackhole) -> None:
    port, accepted = blackhole
    st = RedisState(parse_state_config({"backend": f"redis://127.0.0.1:{port}/0", "timeoutMs": 50, "retryMs": 60_000}))
    t0 = time.monotonic()
    assert st.cache_get("k") is None  # waits at most timeoutMs (then the store is away)
    first = time.monotonic() - t0
    for _ in range(200):
        assert st.cooldown("p") is None
        st.bandit_apply(op(1, "quick", 1.0))
    # the bound holds (a hang would never return) and no later call touched the socket
    # (10 s: 200 times timeoutMs, still far from the forever of a socket without a timeout)
    assert first < 10.0 and len(accepted) == 1 and not st.available
    st.close()


# --------------------------------------------------------------------------- config


def test_state_config() -> None:
    assert parse_config(None).state.shared is False
    cfg = parse_state_config({"backend": "valkeys://:pw@cache.internal:6380/2", "timeoutMs": 20})
    assert cfg.redis_url() == "rediss://:pw@cache.internal:6380/2" and cfg.timeout_ms == 20
    assert public_url(cfg.backend) == "valkeys://cache.internal:6380/2"
    assert "pw" not in repr(cfg)
    for bad in ({"backend": "memcached://x"}, {"backend": "redis://:pw@h:notaport"}, {"timeoutMs": 0}, {"x": 1}):
        with pytest.raises(ConfigError) as err:
            parse_state_config(bad)
        assert str(err.value).startswith("state.") and "pw" not in str(err.value)


URL_ERROR = "must be 'file' or a redis://, rediss://, valkey:// or valkeys:// URL"


@pytest.mark.parametrize(
    ("backend", "reason"),
    [
        # a password with a '/': the rest of it was the URL's path, which the public URL shows
        ("redis://:12345/hunter2@cache.internal:6379/0", f"{URL_ERROR} (its path, if any, a database number: /0)"),
        ("redis://cache.internal:6379/notadb", f"{URL_ERROR} (its path, if any, a database number: /0)"),
        # redis-py lets the URL's options override the client's: timeoutMs would not bound a wait
        (
            "redis://:pw@cache.internal:6379/0?socket_timeout=30",
            f"{URL_ERROR} whose query sets only db, password, protocol, username"
            " (timeouts and retries are state.timeoutMs and state.retryMs)",
        ),
        (
            "redis://cache.internal/0?ssl_ca_certs=/x",
            f"{URL_ERROR} whose query sets only db, password, protocol, username"
            " (timeouts and retries are state.timeoutMs and state.retryMs)",
        ),
        ("redis://cache.internal/0?db=zz", f"{URL_ERROR} (db, a database number)"),
        ("redis://cache.internal/0?pw", f"{URL_ERROR} (a malformed query)"),
    ],
)
def test_a_url_that_would_show_a_secret_or_undo_the_bounds_is_refused(backend: str, reason: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_state_config({"backend": backend})
    assert (err.value.key, err.value.reason) == ("state.backend", f"Value error, {reason}")


def test_url_options_the_store_takes() -> None:
    cfg = parse_state_config({"backend": "rediss://cache.internal:6380/?db=3&password=pw&ssl_cert_reqs=none"})
    assert public_url(cfg.backend) == "rediss://cache.internal:6380/"
    assert parse_state_config({"backend": "redis://h"}).redis_url() == "redis://h"
    # a value redis-py cannot read is a config error naming the key, not a traceback
    with pytest.raises(ConfigError) as err:
        RedisState(parse_state_config({"backend": "redis://h/0?protocol=x"}))
    assert str(err.value) == "state.backend: an option of the URL's query has an invalid value"


def test_state_backend_is_not_hot_reloaded(tmp_path: Path) -> None:
    from dsh_sidecar.sidecar import Sidecar

    sidecar = Sidecar(parse_config(None), None, home_env(tmp_path))
    assert sidecar.shared is None and sidecar.status().wire()["state"] == {"dshHome": str(tmp_path)}
    with pytest.raises(ConfigError, match="^state: "):
        sidecar.reconfigure({"state": {"backend": "redis://127.0.0.1:1/0"}})
    sidecar.reconfigure({"state": {"backend": "file"}})  # the same backend is fine


# --------------------------------------------------------------------------- the cores' hooks


def test_a_cooldown_in_one_sidecar_skips_the_provider_in_another(server) -> None:
    a, b = ProviderHealth(), ProviderHealth()
    ids = {"brave": keys.provider_identity("brave", "https://api.search.brave.com", "k1")}
    a.share(redis_state(server), ids)
    b.share(redis_state(server), ids)
    assert b.skip_reason("brave") is None
    a.record_failure("brave", "rate_limited", "HTTP 429", cooldown_s=30)
    settle(a.shared)  # written from the store's background sender: the caller never waits for it
    assert b.skip_reason("brave") == "skipped: rate_limited cooldown 30s left"
    other = ProviderHealth()  # another key: its own cooldowns
    other.share(redis_state(server), {"brave": keys.provider_identity("brave", "https://api.search.brave.com", "k2")})
    assert other.skip_reason("brave") is None
    a.record_success("brave")  # a success clears it for everyone
    settle(a.shared)
    assert b.skip_reason("brave") is None or b.cooldown_left("brave") <= 30


def test_rate_limited_provider_is_spaced_across_sidecars(server) -> None:
    ids = {"brave": "brave:k"}
    sidecars = []
    for _ in range(3):
        h = ProviderHealth()
        h.share(redis_state(server), ids, {"brave": (1, 60.0)})
        sidecars.append(h)
    reasons = [h.skip_reason("brave") for h in sidecars]
    assert reasons[0] is None
    assert all(r.startswith("skipped: rate_limited window full, next slot in ") for r in reasons[1:])


async def test_a_search_checks_the_fleet_window_off_the_loop_and_its_own_when_the_store_is_late(server) -> None:
    """:meth:`ProviderHealth.check` (what a search awaits): the fleet's window spaces two
    sidecars; a store that does not answer within the search's bound leaves the process's own
    window to decide (it takes its own slot: nothing is skipped for a store that is slow)."""
    ids = {"brave": "brave:k"}
    a, b = ProviderHealth(), ProviderHealth()
    a.share(redis_state(server), ids, {"brave": (1, 60.0)})
    b.share(redis_state(server), ids, {"brave": (1, 60.0)})
    assert await a.check("brave", lambda: 1.0) is None
    assert (await b.check("brave", lambda: 1.0) or "").startswith("skipped: rate_limited window full, next slot in ")
    late = ProviderHealth()
    late.share(redis_state(server), ids, {"brave": (1, 60.0)})
    assert await late.check("brave", lambda: 0.0) is None  # no time for the store: the local window's first slot
    assert (await late.check("brave", lambda: 0.0) or "").startswith("skipped: rate_limited window full")
    assert late.shared is not None and late.shared.status()["lateReads"] == 0  # not sent at all


def test_cache_answer_is_shared(server) -> None:
    a, b = ResultCache(), ResultCache()
    a.share(redis_state(server))
    b.share(redis_state(server))
    key = ResultCache.key("Rust Vec<T>", 5, (("searxng", "http://127.0.0.1:1"),))
    answer = CachedAnswer((Source(url="https://doc.rust-lang.org/std/vec/", title="Vec<T>"),), False, "searxng", None)
    a.put(key, answer)
    settle(a.shared)
    assert b.get(key) == answer and b.hits == 1
    server_client = fakeredis.FakeRedis(server=server)
    name = keys.cache_key(__import__("json").dumps(ResultCache.key("x", 5, ())))
    server_client.set(name, b'{"sources": "not a list"}')
    assert b.get(ResultCache.key("x", 5, ())) is None  # a malformed entry is a miss


def test_bandit_posteriors_are_shared(server) -> None:
    stores, policies = [], []
    for _ in range(2):
        policy = ContextualPolicy(("factoid",), discount=0.99)
        store = PosteriorStore(None)
        store.share(redis_state(server), policy)
        store.refresh_s = 0.0  # read the fleet's evidence after every write
        stores.append(store)
        policies.append(policy)
    for i in range(10):
        s = i % 2
        stores[s].apply(policies[s], policies[s].update_op("factoid", "quick", 1.0), counts_for="quick")
    stores[0].apply(policies[0], policies[0].update_op("factoid", "thorough", 0.0), counts_for="thorough")
    ref: dict = {}
    for _ in range(10):
        apply_update(ref, "factoid", "quick", 1.0, 0.99)
    apply_update(ref, "factoid", "thorough", 0.0, 0.99)
    assert policies[0].evidence["factoid"]["quick"] == pytest.approx(ref["factoid"]["quick"])
    assert policies[0].evidence["factoid"]["thorough"] == pytest.approx(ref["factoid"]["thorough"])
    assert stores[0].fleet_updates + stores[1].fleet_updates == 11
    assert stores[0].updates == {"quick": 10, "thorough": 1}  # the fleet's counts, for dsh/status
    assert stores[0].describe()["shared"] == "redis://127.0.0.1:6399/0"
    for store in stores:
        store.close()


def test_knowledge_and_dismissals_are_shared_by_repository_identity(server, tmp_path: Path) -> None:
    clock = Clock()
    clock.t = time.time()
    a = Knowledge(tmp_path / "a.json", "/home/a/app", clock)
    b = Knowledge(tmp_path / "b.json", "/srv/b/app-clone", clock)
    for k in (a, b):
        k.share(redis_state(server), "remote:example.org/team/app")
        k.refresh_s = 0.0
    a.seed("Version", "pyproject.toml", 1.0)
    a.record("Version", "pyproject.toml", followed=1)
    b.record("Version", "pyproject.toml", ignored=1)
    a.flush()
    b.flush()
    for k in (a, b):  # each re-reads the changed view in a worker: wait for both
        k.ensure()
        k.settle()
    assert b.row("Version", "pyproject.toml") == a.row("Version", "pyproject.toml")
    row = b.row("Version", "pyproject.toml")
    assert (row.followed, row.ignored, row.seed) == (1, 1, 1.0)
    a.dismiss("Doc", "*", clock.t + 60)
    a.flush()
    b.ensure()
    b.settle()
    assert b.active_dismissals() == {("Doc", "*"): pytest.approx(clock.t + 60)}
    assert not (tmp_path / "a.json").exists() and a.counted == {"followed": 1, "ignored": 0}


# --------------------------------------------------------------------------- repository identity


def _checkout(folder: Path, config: str) -> Path:
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "config").write_text(config)
    return folder


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("git@github.com:owner/repo.git", "remote:github.com/owner/repo"),
        ("https://user:token@GitHub.com/owner/repo/", "remote:github.com/owner/repo"),
        ("ssh://git@gitlab.example.org:2222/group/sub/proj.git", "remote:gitlab.example.org/group/sub/proj"),
    ],
)
def test_remote_identity(tmp_path: Path, url: str, expected: str) -> None:
    repo = _checkout(tmp_path / "r", f'[remote "origin"]\n\turl = {url}\n')
    assert repository_identity(repo) == expected
    assert "token" not in repository_identity(repo)


def test_repository_identity(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert repository_identity(tmp_path / "plain") == f"path:{(tmp_path / 'plain').resolve()}"
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(
        '[core]\n\tbare = false\n[remote "upstream"]\n\turl = https://example.org/up/app.git\n'
        '[remote "origin"]\n\turl = git@example.org:me/app.git\n[branch "main"]\n\turl = nope\n'
    )
    assert repository_identity(repo) == "remote:example.org/me/app"
    moved = tmp_path / "moved"
    repo.rename(moved)
    assert repository_identity(moved) == "remote:example.org/me/app"  # a move keeps the identity
    outside = tmp_path / "outside-config"
    outside.write_text('[remote "origin"]\n\turl = https://evil.example/x/y\n')
    linked = tmp_path / "linked"
    (linked / ".git").mkdir(parents=True)
    (linked / ".git" / "config").symlink_to(outside)
    assert repository_identity(linked).startswith("path:")  # a symlink out of the workspace is not read
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {tmp_path}/elsewhere\n")
    assert repository_identity(worktree).startswith("path:")


async def test_the_router_spaces_a_rate_limited_provider_fleet_wide(server) -> None:
    import types

    from dsh_sidecar.router import Router, parse_router_config
    from dsh_sidecar.router.providers import PROVIDERS
    from dsh_sidecar.router.providers.base import RateLimit
    from dsh_sidecar.sidecar import share_router

    cfg = parse_router_config(
        {"provider": "searxng", "cache": False, "providers": {"searxng": {"baseUrl": "http://127.0.0.1:9"}}}
    )
    routers = []
    for _ in range(2):
        router = Router.from_config(cfg, {})
        limited = types.ModuleType("searxng_limited")
        limited.__dict__.update(vars(PROVIDERS["searxng"]))
        limited.RATE_LIMIT = RateLimit(1, 60.0, "test", "a documented limit: one request a minute per key")
        router.modules = {"searxng": limited}
        share_router(router, redis_state(server))
        routers.append(router)
    assert routers[0].health.identities["searxng"].startswith("searxng:")
    assert routers[0].health.rate_limits["searxng"]() == (1, 60.0)
    outcomes = []
    for router in routers:
        with pytest.raises(AllProvidersFailed) as failed:  # nothing listens on port 9
            await router.search("q", 5)
        outcomes.append(failed.value.attempts[0].outcome)
        await router.aclose()
    assert not outcomes[0].startswith("skipped")  # the first request was sent
    assert outcomes[1].startswith("skipped: rate_limited window full, next slot in ")


def test_what_a_hostile_store_returns_is_checked(server) -> None:
    st = redis_state(server)
    raw = fakeredis.FakeRedis(server=server)
    raw.set(keys.cooldown_key("p"), "rate_limited\n- forged: line", px=5000)
    assert st.cooldown("p")[0] == "cooldown"
    base = keys.repo_key("r")
    raw.zadd(f"{base}:used", {"Doc:ok.md": 1.0, "Doc:bad\nline.md": 1.0, "Not an intent:x": 1.0})
    raw.hset(f"{base}:rows", mapping={"f:Doc:ok.md": "nan", "i:Doc:ok.md": "-5", "s:Doc:ok.md": "1e300"})
    raw.zadd(f"{base}:dis", {"Doc:\x1b[2J": time.time() + 60})
    view = st.knowledge_view("r", time.time())
    assert view.rows == {("Doc", "ok.md"): (0, 0, 100.0, 1.0)} and view.dismissals == {}
    raw.hset(keys.bandit_discounted_key(GLOBAL, 0.99), mapping={"t": "3", "0:quick:a": "inf", "0:quick:b": "junk"})
    assert st.bandit_evidence((GLOBAL,), ARMS, 0.99)[GLOBAL] == {"quick": [0.0, 0.0], "thorough": [0.0, 0.0]}


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_repository_identity_is_the_root_commit_without_a_remote(tmp_path: Path) -> None:
    env = {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(tmp_path),
        "PATH": os.environ["PATH"],
    }
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str, cwd: Path = repo) -> str:
        done = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
        return done.stdout.decode().strip()

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "root")
    root = git("rev-parse", "HEAD")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "next")
    assert repository_identity(repo) == f"root:{root}"
    clone = tmp_path / "clone"
    git("clone", "-q", str(repo), str(clone), cwd=tmp_path)  # its origin is a local path: not an identity
    assert repository_identity(clone) == f"root:{root}"  # a re-clone keeps the identity
    (tmp_path / "empty").mkdir()
    git("init", "-q", cwd=tmp_path / "empty")
    assert repository_identity(tmp_path / "empty").startswith("path:")  # no commit, no remote


def test_exit_while_away_says_what_was_not_sent(server, caplog) -> None:
    st = redis_state(server, retryMs=60_000)
    server.connected = False
    st.bandit_apply(op(1, "quick", 1.0))
    st.bandit_apply(op(2, "quick", 1.0))
    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    st.close()
    assert st.status()["droppedWrites"] == 2
    assert caplog.messages[-1] == (
        "state store redis://127.0.0.1:6399/0 unavailable: 2 writes not sent at exit"
        " (2 queued; the exit waits at most 1 s for the store)"
    )


def shared_bandit(server: fakeredis.FakeServer, monkeypatch: pytest.MonkeyPatch):
    """A bandit store sharing a RedisState on ``server`` whose writer thread stops between taking
    an update off its queue and giving it to the store (a thread descheduled there on a loaded
    machine) until ``resume`` is set; ``inside`` is set when it got there."""
    st = redis_state(server)
    policy = ContextualPolicy(("factoid",), discount=0.99)
    store = PosteriorStore(None)
    store.share(st, policy)
    assert store.settle(5)
    inside, resume = threading.Event(), threading.Event()
    real = st.bandit_apply_many

    def descheduled(bandit_ops) -> None:
        inside.set()
        resume.wait(10)
        real(bandit_ops)

    monkeypatch.setattr(st, "bandit_apply_many", descheduled)
    store.submit(policy, policy.update_op("factoid", "quick", 1.0), counts_for="quick")
    assert inside.wait(5)
    st.begin_exit()
    assert not store.flush(0.05)  # the exit's hand-over time passes with the update in the writer's hands
    return st, store, resume


def stored_updates(server: fakeredis.FakeServer) -> int:
    counts = fakeredis.FakeRedis(server=server).hgetall(keys.bandit_counts_key(GLOBAL))
    return int(float(counts.get(b"quick:updates", 0)))


def test_an_update_on_its_way_to_the_store_as_the_exit_closes_it_lands(server, monkeypatch, caplog) -> None:
    """docs/fleet.md, "The start and the exit": an update the bandit's writer has taken but not
    yet given to the store when the exit closes it is waited for (within the exit's bound) and
    sent, not dropped after the exit counted what it did not send, without a word (as a loaded
    machine may deschedule the writer there: a fleet run read 434 updates in the store for 435 made)."""
    st, store, resume = shared_bandit(server, monkeypatch)
    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    threading.Timer(0.2, resume.set).start()  # the writer runs again while the exit waits
    st.close(store.abandon(), within_s=5)
    assert store.flush(5)
    assert stored_updates(server) == 1 == store.fleet_updates
    assert st.status()["droppedWrites"] == 0
    assert not [m for m in caplog.messages if "not sent at exit" in m]


def test_an_update_still_on_its_way_when_the_exit_bound_ends_is_told(server, monkeypatch, caplog) -> None:
    """The same update, its writer not back within the exit's bound: counted and told as not
    handed to the store, once (its late arrival is not sent, nor counted again)."""
    st, store, resume = shared_bandit(server, monkeypatch)
    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    st.close(store.abandon(), within_s=0.2)
    resume.set()
    assert store.flush(5)
    assert stored_updates(server) == 0
    assert st.status()["droppedWrites"] == 1
    assert [m for m in caplog.messages if "not sent at exit" in m] == [
        "state store redis://127.0.0.1:6399/0: 1 writes not sent at exit"
        " (0 queued, 1 not handed to the store; the exit waits at most 0.2 s for the store)"
    ]


def test_a_knowledge_batch_on_its_way_to_the_store_as_the_exit_closes_it_lands(
    server, tmp_path: Path, monkeypatch
) -> None:
    """The knowledge flush's batch, taken (the knowledge no longer dirty) but not yet given to the
    store when the exit counts: waited for and sent, not dropped without a word."""
    st = redis_state(server)
    k = Knowledge(tmp_path / "k.json", "/home/a/app", time.time)
    k.share(st, "remote:example.org/team/app")
    k.record("Version", "pyproject.toml", followed=1)
    inside, resume = threading.Event(), threading.Event()
    real = st.knowledge_apply

    def descheduled(batch) -> None:
        inside.set()
        resume.wait(10)
        real(batch)

    monkeypatch.setattr(st, "knowledge_apply", descheduled)
    flushing = threading.Thread(target=k.flush)
    flushing.start()
    assert inside.wait(5)
    st.begin_exit()
    assert not k.dirty  # what the exit counts as not handed: nothing
    threading.Timer(0.2, resume.set).start()
    st.close(int(k.dirty), within_s=5)
    flushing.join(5)
    rows = fakeredis.FakeRedis(server=server).hgetall(f"{keys.repo_key('remote:example.org/team/app')}:rows")
    assert sum(int(v) for f, v in rows.items() if f.startswith(b"f:")) == 1
    assert st.status()["droppedWrites"] == 0


def test_a_store_away_again_while_the_resync_tells_it_is_back_is_resynced_again(server, monkeypatch) -> None:
    """The store fails again in the instant the re-sync thread tells it is back (the thread still
    running, about to end): the outage gets a re-sync too, and its queued write is sent, instead
    of the store staying away for the rest of the process with every write queued."""
    st = redis_state(server)
    telling, told = threading.Event(), threading.Event()
    warning = redis_link.log.warning

    def slow_to_tell(msg: str, *args: object) -> None:
        warning(msg, *args)
        if "is back" in msg and not telling.is_set():
            telling.set()
            told.wait(10)

    monkeypatch.setattr(redis_link.log, "warning", slow_to_tell)
    server.connected = False
    st.bandit_apply(op(1, "quick", 1.0))
    server.connected = True  # back: the re-sync sends op 1 and tells it
    assert telling.wait(10)
    server.connected = False
    st.bandit_apply(op(2, "quick", 1.0))  # fails: away again, while the thread still tells
    server.connected = True
    told.set()
    assert st.wait_synced(10), st.status()
    counts = fakeredis.FakeRedis(server=server).hgetall(keys.bandit_counts_key(GLOBAL))
    assert float(counts[b"quick:updates"]) == 2
    assert st.status()["outages"] == 2
    st.close()


def test_a_knowledge_batch_not_yet_taken_when_the_exit_counts_it_is_counted_once(
    server, tmp_path: Path, monkeypatch, caplog
) -> None:
    """The knowledge flush still before taking its batch (descheduled in its load) when the exit
    counts the batch as not handed: the flush, run after, must not hand it over as well. Before,
    it did: the batch landed in the store and the exit told it as a write not sent (counted
    once as not handed, and sent)."""
    st = redis_state(server)
    k = Knowledge(tmp_path / "k.json", "/home/a/app", time.time)
    k.share(st, "remote:example.org/team/app")
    k.record("Version", "pyproject.toml", followed=1)
    inside, resume = threading.Event(), threading.Event()
    real = k.ensure

    def descheduled() -> None:
        inside.set()
        resume.wait(10)
        real()

    monkeypatch.setattr(k, "ensure", descheduled)
    flushing = threading.Thread(target=k.flush)
    flushing.start()
    assert inside.wait(5)
    st.begin_exit()
    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    not_handed = k.abandon()  # what the sidecar's exit counts: the batch, not taken yet
    assert not_handed == 1
    resume.set()
    flushing.join(5)
    st.close(not_handed, within_s=5)
    rows = fakeredis.FakeRedis(server=server).hgetall(f"{keys.repo_key('remote:example.org/team/app')}:rows")
    assert sum(int(v) for f, v in rows.items() if f.startswith(b"f:")) == 0
    assert st.status()["droppedWrites"] == 1
    assert [m for m in caplog.messages if "not sent at exit" in m] == [
        "state store redis://127.0.0.1:6399/0: 1 writes not sent at exit"
        " (0 queued, 1 not handed to the store; the exit waits at most 5 s for the store)"
    ]


@pytest.mark.parametrize("failure", [redis.ConnectionError("gone"), redis.ResponseError("WRONGTYPE refused")])
def test_a_resync_send_that_fails_after_the_exit_counted_it_is_not_queued_again(server, caplog, failure) -> None:
    """docs/fleet.md, "The start and the exit": the re-sync thread's send of a queued write is still
    on its way when the exit's bound ends (counted there: 1 sent without a reply) and fails after.
    Before, the thread put it back on the queue (a store-wide failure: queuedWrites 1 after the
    exit's final count, never sent) or dropped and counted it again with a second warning (a write
    the store refused for its content). It is now given up: the exit's one warning told it."""
    st = redis_state(server)
    inside, resume = threading.Event(), threading.Event()

    def on_its_way() -> None:
        inside.set()
        resume.wait(10)
        raise failure

    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    with st._lock:
        st._pending.append(on_its_way)
    st._away(redis.ConnectionError("away"))  # the re-sync: PING answers, the queued write is sent
    assert inside.wait(10)
    resync = st._resync
    st.close(within_s=0.2)
    resume.set()
    assert resync is not None
    resync.join(10)
    assert not resync.is_alive()
    status = st.status()
    assert (status["queuedWrites"], status["droppedWrites"]) == (0, 1)
    told = [m for m in caplog.messages if "away" not in m and "unavailable (" not in m]
    assert told == [
        "state store redis://127.0.0.1:6399/0 unavailable: 1 writes not sent at exit"
        " (0 queued, 1 sent without a reply; the exit waits at most 0.2 s for the store)"
    ]


def test_a_write_refused_after_the_exit_counted_it_is_counted_and_told_once(server, caplog) -> None:
    """A write on the socket when the exit's bound ends (counted: 1 sent without a reply) that the
    store then refuses for its content: before, it was dropped and counted again (droppedWrites 2)
    with a second warning after the exit's."""
    st = redis_state(server)
    inside, resume = threading.Event(), threading.Event()

    def on_its_way() -> None:
        inside.set()
        resume.wait(10)
        raise redis.ResponseError("WRONGTYPE refused")

    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    writing = threading.Thread(target=st._write, args=(on_its_way, "k"))
    writing.start()
    assert inside.wait(10)
    st.close(within_s=0.2)
    resume.set()
    writing.join(10)
    assert (st.status()["queuedWrites"], st.status()["droppedWrites"]) == (0, 1)
    assert caplog.messages == [
        "state store redis://127.0.0.1:6399/0: 1 writes not sent at exit"
        " (0 queued, 1 sent without a reply; the exit waits at most 0.2 s for the store)"
    ]
