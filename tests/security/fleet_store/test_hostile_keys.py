"""The fleet store's contents are untrusted: another tenant, an old version, an operator or a
failover may leave anything under our keys. Against a real ``redis-server`` seeded with
hostile keys, every family (bandit counts and discounted sums, knowledge rows, last uses,
dismissals and version, cache entries and their index, cooldowns, rate windows) is checked
for: reads never raise and never bring more than their bound across the wire (an unusable
key reads as "serve from local state", logged once); writes repair the key they touch and
land with exact totals."""

from __future__ import annotations

import logging
import math
import resource
import time
from collections.abc import Iterator

import pytest
import redis
from dsh_sidecar.bandit.policy import ARMS, GLOBAL
from dsh_sidecar.state import keys
from dsh_sidecar.state.config import parse_state_config
from dsh_sidecar.state.redis_store import MAX_BANDIT_FIELDS, RedisState
from dsh_sidecar.state.shared import KnowledgeBatch, KnowledgeRow
from support.bandit_ops import op
from support.fleetkit import REDIS_SERVER, RedisServer
from support.waiting import HANG_S

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed (.ci/run installs it)")

REPO = "remote:example.org/team/app"
BASE = keys.repo_key(REPO)
WRONG_TYPES = ["string", "list", "set", "zset", "hash"]


@pytest.fixture
def raw(server: RedisServer) -> Iterator[redis.Redis]:
    # redis-py's default 5 s read timeout is shorter than a RESTORE of the planted big hash on
    # a loaded machine (load 24: "Timeout reading from" the test's own RESTORE)
    client = redis.Redis.from_url(server.url, socket_timeout=HANG_S)
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def state(server: RedisServer, raw: redis.Redis) -> Iterator[RedisState]:
    st = RedisState(parse_state_config({"backend": server.url, "retryMs": 10, "timeoutMs": 5000}))
    yield st
    st.close()


def plant(client: redis.Redis, key: str, kind: str) -> None:
    """``key`` made a value of type ``kind`` that is not what we write there."""
    client.delete(key)
    if kind == "string":
        client.set(key, "planted")
    elif kind == "list":
        client.rpush(key, "a", "b")
    elif kind == "set":
        client.sadd(key, "a")
    elif kind == "zset":
        client.zadd(key, {"a": 1.0})
    else:
        client.hset(key, "planted", "x")


def kind_of(client: redis.Redis, key: str) -> str:
    return client.type(key).decode()


# ------------------------------------------------------------------------------ wrong types


@pytest.mark.parametrize("kind", ["string", "list", "set", "zset"])
def test_bandit_keys_of_another_type_read_as_local_and_are_repaired_by_the_next_write(raw, state, kind, caplog):
    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    names = [keys.bandit_counts_key("factoid"), keys.bandit_discounted_key("factoid", 0.99)]
    names += [keys.bandit_counts_key(GLOBAL), keys.bandit_discounted_key(GLOBAL, 0.99)]
    for name in names:
        plant(raw, name, kind)
    assert state.bandit_evidence(("factoid", GLOBAL), ARMS, 0.99) is None  # keep the local view
    assert state.bandit_counts((GLOBAL,), ARMS) is None
    for i in range(5):
        state.bandit_apply(op(i, "quick", 1.0))
    assert state.available and state.status()["droppedWrites"] == 0
    assert {kind_of(raw, n) for n in names} == {"hash"}
    counts = state.bandit_counts((GLOBAL,), ARMS)
    assert counts is not None and counts[GLOBAL]["quick"] == {"updates": 5.0, "reward": 5.0}
    warned = [r.getMessage() for r in caplog.records if "unusable" in r.getMessage()]
    assert 1 <= len(warned) <= len(names) and all(" is unusable (" in m for m in warned)


@pytest.mark.parametrize("kind", WRONG_TYPES)
def test_knowledge_keys_of_another_type_never_fail_a_dismissal(raw, state, kind):
    wrong = {"rows": "hash", "used": "zset", "dis": "zset", "ver": "string"}
    for part, ours in wrong.items():
        plant(raw, f"{BASE}:{part}", kind if kind != ours else ("list" if ours != "list" else "set"))
    now = time.time()
    assert state.knowledge_view(REPO, now) is None
    assert state.knowledge_version(REPO) is None
    batch = KnowledgeBatch(
        "k1",
        REPO,
        {("Version", "pyproject.toml"): KnowledgeRow(followed=2, ignored=1, seed=1.0, last_used=now)},
        {("Doc", "*"): now + 3600},
    )
    state.knowledge_apply(batch)
    assert state.status()["droppedWrites"] == 0 and state.available
    view = state.knowledge_view(REPO, now)
    assert view is not None
    assert view.rows == {("Version", "pyproject.toml"): (2, 1, 1.0, pytest.approx(now))}
    assert view.dismissals == {("Doc", "*"): pytest.approx(now + 3600)}
    assert view.version == 1 and state.knowledge_version(REPO) == 1


@pytest.mark.parametrize("kind", ["list", "hash", "set", "zset"])
def test_cache_and_health_keys_of_another_type(raw, state, kind):
    entry = keys.cache_key("q")
    for name in (entry, keys.CACHE_INDEX, keys.cooldown_key("brave:x"), keys.rate_key("brave:x")):
        plant(raw, name, kind)
    assert state.cache_get("q") is None
    assert state.cooldown("brave:x") is None
    assert state.take_slot("brave:x", 1, 60.0) == 0.0  # the window was repaired, the slot taken
    assert state.take_slot("brave:x", 1, 60.0) > 0.0
    state.cache_put("q", b'{"answer": 1}', 60, 10)
    assert state.wait_synced(10)
    assert state.cache_get("q") == b'{"answer": 1}'
    state.start_cooldown("brave:x", "rate_limited", 30)
    cls, left = state.cooldown("brave:x")
    assert cls == "rate_limited" and 0 < left <= 30


# ------------------------------------------------------------------------------ hostile numbers


HOSTILE_NUMBERS = ["nan", "inf", "-inf", "1e400", "99999999999999999999", "0x10", " 7", "seven", "1" * 60]


@pytest.mark.parametrize("value", HOSTILE_NUMBERS)
def test_hostile_numbers_in_bandit_fields_never_fail_the_write(raw, state, value):
    n, d = keys.bandit_counts_key(GLOBAL), keys.bandit_discounted_key(GLOBAL, 0.99)
    raw.hset(n, mapping={"quick:updates": value, "quick:reward": value})
    raw.hset(d, mapping={"t": value, "0:quick:a": value, "0:quick:b": value})
    state.bandit_evidence((GLOBAL,), ARMS, 0.99)  # no raise, whatever it reads
    for i in range(3):
        state.bandit_apply(op(i, "quick", 1.0))
    assert state.available and state.status()["droppedWrites"] == 0
    counts = state.bandit_counts((GLOBAL,), ARMS)
    assert counts is not None and counts[GLOBAL]["quick"]["updates"] == 3.0
    ev = state.bandit_evidence((GLOBAL,), ARMS, 0.99)
    assert ev is not None and all(math.isfinite(x) and x >= 0 for arm in ev[GLOBAL].values() for x in arm)


@pytest.mark.parametrize("value", HOSTILE_NUMBERS)
def test_hostile_numbers_in_knowledge_never_fail_a_dismissal(raw, state, value):
    member = "Version:pyproject.toml"
    raw.hset(f"{BASE}:rows", mapping={f"f:{member}": value, f"i:{member}": value, f"s:{member}": value})
    raw.set(f"{BASE}:ver", value)
    raw.zadd(f"{BASE}:used", {member: float("inf")})
    raw.zadd(f"{BASE}:dis", {"Doc:*": float("inf"), "Test:*": float("-inf")})
    now = time.time()
    state.knowledge_view(REPO, now)
    state.knowledge_version(REPO)
    rows = {("Version", "pyproject.toml"): KnowledgeRow(followed=1, last_used=now)}
    state.knowledge_apply(KnowledgeBatch("k2", REPO, rows, {("Config", "*"): now + 60}))
    assert state.available and state.status()["droppedWrites"] == 0
    view = state.knowledge_view(REPO, now)
    assert view is not None and ("Config", "*") in view.dismissals
    assert ("Doc", "*") not in view.dismissals  # a planted +inf expiry does not outlive everything
    assert view.rows[("Version", "pyproject.toml")][0] == 1  # the hostile count was reset, then +1


def test_a_planted_window_entry_in_the_future_does_not_hold_the_provider_forever(raw, state):
    key = keys.rate_key("brave:x")
    raw.zadd(key, {"planted": float("inf"), "later": time.time() * 1e6 + 3600e6})
    assert state.take_slot("brave:x", 1, 1.0) == 0.0


# ------------------------------------------------------------------------------ sizes


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_a_100_mb_cache_value_is_never_read_whole(raw, state, caplog):
    caplog.set_level(logging.WARNING, logger="dsh_sidecar.state.redis_store")
    entry = keys.cache_key("big")
    raw.setrange(entry, 100 * 1024 * 1024 - 1, b"x")  # 100 MB, made on the server
    before = _rss_mib()
    for _ in range(3):
        assert state.cache_get("big") is None
    assert _rss_mib() - before < 30  # one bounded reply at most (1 MiB), never 100 MB
    assert state.status()["badKeys"] == 3
    assert len([r for r in caplog.records if "unusable" in r.getMessage()]) == 1  # logged once
    state.cache_put("big", b'{"fresh": true}', 60, 10)
    assert state.wait_synced(10)
    assert state.cache_get("big") == b'{"fresh": true}'  # the write replaced it


def test_a_huge_cooldown_value_reads_as_a_bounded_class(raw, state):
    key = keys.cooldown_key("brave:x")
    raw.set(key, "x" * (20 * 1024 * 1024), px=30_000)
    before = _rss_mib()
    cls, left = state.cooldown("brave:x")
    assert (cls, 0 < left <= 30) == ("cooldown", True)
    assert _rss_mib() - before < 15


@pytest.mark.parametrize("family", ["bandit", "rows", "used", "dis"])
def test_collections_over_their_bound_are_not_read_and_are_replaced_by_a_write(raw, state, family):
    big = {f"f{i}": "1" for i in range(max(MAX_BANDIT_FIELDS, 4 * 5000) + 10)}
    if family == "bandit":
        name = keys.bandit_discounted_key(GLOBAL, 0.99)
        raw.hset(name, mapping=big)
        assert state.bandit_evidence((GLOBAL,), ARMS, 0.99) is None
        state.bandit_apply(op(1, "quick", 1.0))
        assert raw.hlen(name) < 10
    elif family == "rows":
        name = f"{BASE}:rows"
        raw.hset(name, mapping=big)
    else:
        name = f"{BASE}:{family}"
        raw.zadd(name, {f"Doc:{i}": time.time() + 3600 for i in range(12_000)})
    if family != "bandit":
        now = time.time()
        assert state.knowledge_view(REPO, now) is None
        state.knowledge_apply(KnowledgeBatch("k3", REPO, {}, {("Doc", "*"): now + 60}))
        view = state.knowledge_view(REPO, now)
        assert view is not None and ("Doc", "*") in view.dismissals
    assert state.status()["droppedWrites"] == 0


def test_a_cache_index_member_naming_another_key_never_deletes_it(raw, state):
    raw.set("victim:not-ours", "keep")
    raw.set("dsh:v1:bandit:n:global", "keep-too")
    raw.zadd(keys.CACHE_INDEX, {"victim:not-ours": 0.5, "dsh:v1:bandit:n:global": 0.6})
    for i in range(3):
        state.cache_put(f"q{i}", b'{"x": 1}', 60, 1)
    assert state.wait_synced(10)
    assert raw.get("victim:not-ours") == b"keep" and raw.get("dsh:v1:bandit:n:global") == b"keep-too"
    assert raw.zcard(keys.CACHE_INDEX) == 1


#: Fields of the planted hash: freeing it on the server's main thread takes 0.3-0.5 s here.
BIG_HASH_FIELDS = 500_000
#: The server's options that would free a deleted or overwritten value off its main thread by
#: themselves (all off by default): off, only an ``UNLINK`` frees one lazily.
LAZY_FREE_OPTIONS = [
    "lazyfree-lazy-eviction",
    "lazyfree-lazy-expire",
    "lazyfree-lazy-server-del",
    "lazyfree-lazy-user-del",
    "lazyfree-lazy-user-flush",
]


def lazily_freed(client: redis.Redis) -> int:
    """The objects the server has handed to its lazy-free thread: freed, or still to free."""
    memory = client.info("memory")
    return int(memory["lazyfreed_objects"]) + int(memory["lazyfree_pending_objects"])


@pytest.fixture(scope="module")
def big_hash(server: RedisServer) -> bytes:
    """A hash of :data:`BIG_HASH_FIELDS` fields as ``DUMP`` gives it, built once by the server (Lua)."""
    # the test's own client, not the store's: redis-py's default 5 s read timeout was shorter
    # than one 100 000-field step on a loaded machine (load 25-36), which the server finishes
    client = redis.Redis.from_url(server.url, socket_timeout=HANG_S)
    fill = "for i = ARGV[1], ARGV[1] + 99999 do redis.call('HSET', KEYS[1], 'f' .. i, 1) end"
    for start in range(0, BIG_HASH_FIELDS, 100_000):
        client.eval(fill, 1, "template", start)
    dump = client.dump("template")
    client.unlink("template")
    client.close()
    assert dump is not None
    return dump


@pytest.mark.parametrize("where", ["bandit", "cooldown-start", "cooldown-clear", "cache-eviction"])
def test_replacing_a_planted_big_hash_never_blocks_the_store(raw, state, big_hash, where):
    """A write that replaces a key of half a million fields frees it off the server's main thread
    (``UNLINK``): with ``DEL`` (or ``SET`` over it) the server was blocked 0.3-0.5 s (0.6-1.0 s
    for a million), every sidecar of the fleet timing out at once. Counted by the server itself:
    the write frees exactly one object off the main thread (``lazyfreed_objects``, with the
    server's own lazy-free options off, so a ``DEL`` or an overwrite would free it in line)."""
    if where == "bandit":
        name = keys.bandit_counts_key(GLOBAL)
    elif where.startswith("cooldown"):
        name = keys.cooldown_key("brave:x")
    else:
        name = keys.cache_key("old")
        raw.zadd(keys.CACHE_INDEX, {name: time.time() - 1})  # the oldest entry: evicted next
    raw.restore(name, 0, big_hash, replace=True)
    assert raw.config_get("lazyfree-lazy-*") == dict.fromkeys(LAZY_FREE_OPTIONS, "no")
    freed = lazily_freed(raw)
    if where == "bandit":
        state.bandit_apply(op(1, "quick", 1.0))
    elif where == "cooldown-start":
        state.start_cooldown("brave:x", "rate_limited", 30)
    elif where == "cooldown-clear":
        state.clear_cooldown("brave:x")
    else:
        state.cache_put("new", b'{"x": 1}', 60, 1)
    assert state.wait_synced(10)
    assert lazily_freed(raw) - freed == 1
    assert (raw.hlen(name) < 10 if where == "bandit" else raw.type(name) != b"hash") and state.status()["outages"] == 0
