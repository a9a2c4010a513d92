""":class:`RedisState`: the shared-state interface on Redis or Valkey, through redis-py.

**Atomic primitives only.** Cooldowns are ``SET … PX`` (kept when a longer one runs: a Lua
check of ``PTTL`` first); request spacing is a sliding-window log in a Lua script on the
server's clock (``TIME``), so machines with skewed clocks agree; the cache is ``SET NX EX``
with an insertion-ordered index trimmed to ``maxEntries``; the bandit's statistics are
``HINCRBY``/``HINCRBYFLOAT`` (the discounted form bucketed as :mod:`.shared` explains); the
knowledge is ``HINCRBY``/``HSET`` of absent seeds/``ZADD GT``. Every multi-key write is one
Lua script (atomic on the server) guarded by ``SET dsh:v1:op:<id> NX``: a write re-sent after a
lost reply counts once. Scripts touch only keys of one sidecar-visible family; the layout
(:mod:`.keys`) is for a single Redis/Valkey server or a primary with replicas, not Cluster.

**Degrades, never fails.** Every command waits at most ``state.timeoutMs`` (socket connect and
read timeouts, no client-side retries). The first command that fails marks the store away: one
warning, then reads answer from this process (its own cooldowns, cache, posteriors and
knowledge), rate windows from a :class:`~.local.LocalState`, cache writes are dropped (they
go out from a background sender anyway, never on the reply path), and other writes queue (at most
:data:`MAX_PENDING`, oldest dropped and counted) while a background thread probes with
``PING`` (``state.retryMs``, doubling to :data:`MAX_RETRY_S`). When the store answers, the
queue is re-sent in order, then the store is used again (one more log line). A call never
touches the socket while the store is away, so its added wait is bounded by ``timeoutMs`` once
per outage and zero afterwards.
"""

from __future__ import annotations

import contextlib
import logging
import math
import queue
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any, Final

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from dsh_sidecar.errors import ConfigError
from dsh_sidecar.state import keys
from dsh_sidecar.state.config import StateConfig, public_url
from dsh_sidecar.state.local import MAX_DISMISSALS, MAX_ROWS, LocalState, counts_from_fields, evidence_from_fields
from dsh_sidecar.state.shared import (
    BUCKETS,
    YIELD_S,
    BanditOp,
    KnowledgeBatch,
    KnowledgeView,
    RowEvidence,
    bucket_width,
)

log = logging.getLogger(__name__)

#: Most writes queued while the store is away (oldest dropped past it, counted in the status).
MAX_PENDING: Final = 100_000
#: Most cache writes waiting for the background sender (more are dropped: it is a cache).
MAX_BACKGROUND: Final = 256
#: How long the cooldowns read with a cache lookup answer :meth:`RedisState.cooldown`, seconds:
#: the provider attempts of the search that missed the cache follow within this, so a search
#: costs one round trip before its first provider call instead of two.
SNAPSHOT_S: Final = 0.02
#: Most provider identities whose cooldowns ride along with a cache lookup.
MAX_WATCHED: Final = 16
#: Longest wait between two probes of a store that is away, seconds.
MAX_RETRY_S: Final = 30.0
#: A store back for less than this long that goes away again keeps its back-off, seconds.
STABLE_S: Final = 60.0
#: What a store that is away (or too slow) raises.
STORE_ERRORS: Final = (redis.ConnectionError, redis.TimeoutError, OSError)
#: What a store that answers but refuses every write raises: full (``maxmemory`` with
#: ``noeviction``), a read-only replica (a failover), no permission, persistence failing
#: (``MISCONF``). Treated as the store being away: writes queue and are re-sent once it takes them.
REFUSING_ERRORS: Final = (
    redis.exceptions.ReadOnlyError,
    redis.exceptions.OutOfMemoryError,
    redis.exceptions.NoPermissionError,
)
#: Keys per ``SCAN`` step and per ``UNLINK`` of :meth:`RedisState.reset_bandit`.
RESET_BATCH: Final = 500
#: Longest cooldown value read (a failure class), bytes: a bigger value is read only this far.
MAX_CLASS_BYTES: Final = 64
#: Most fields of a bandit hash read (ours: ``t`` and ≤ 2 × (BUCKETS + 1) per arm); a bigger
#: hash is not ours and is not read (the next write replaces it).
MAX_BANDIT_FIELDS: Final = 1024
#: Most fields of a repository's knowledge rows hash read (ours: ≤ 3 per row).
MAX_KNOWLEDGE_FIELDS: Final = 4 * MAX_ROWS
#: Longest field name or member read from the store, bytes (a path ≤ 1024 characters, UTF-8).
MAX_NAME_BYTES: Final = 4200
#: Longest number read from a hash field or the version key, bytes.
MAX_NUMBER_BYTES: Final = 64
#: Distinct unusable keys logged by name (one warning each); later ones are only counted.
MAX_LOGGED_KEYS: Final = 32

# Every write script repairs what it touches before it writes, so a hostile or stale value
# (another tenant, an old layout, an operator) never makes the write fail: a key of another
# type, or bigger than any we write, is deleted; a hash field that is not a number we could
# have written (``nan``, ``inf``, ``1e400``, 20 digits, text) is deleted, i.e. counts from 0.
# Nothing is written before the op marker is taken, and nothing after it can raise.
_REPAIR = """
local function fix(key, want, most)
  local t = redis.call('TYPE', key)['ok']
  if t == 'none' then return end
  if t ~= want then redis.call('DEL', key) return end
  local n = 0
  if want == 'hash' then n = redis.call('HLEN', key)
  elseif want == 'zset' then n = redis.call('ZCARD', key)
  else n = redis.call('STRLEN', key) end
  if n > most then redis.call('DEL', key) end
end
local function is_int(v)
  return v ~= false and #v <= 15 and string.match(v, '^%-?%d+$') ~= nil
end
local function is_num(v)
  if v == false or #v > 40 or not string.match(v, '^%-?%d*%.?%d*[eE]?[%-+]?%d*$') then return false end
  local x = tonumber(v)
  return x ~= nil and x == x and x < 1e300 and x > -1e300
end
local function int_field(h, f)
  local v = redis.call('HGET', h, f)
  if v and not is_int(v) then redis.call('HDEL', h, f) end
end
local function num_field(h, f)
  local v = redis.call('HGET', h, f)
  if v and not is_num(v) then redis.call('HDEL', h, f) end
end
local function int_key(k)
  fix(k, 'string', 15)
  local v = redis.call('GET', k)
  if v and not is_int(v) then redis.call('DEL', k) end
end
"""

# KEYS[1] cooldown key. ARGV: failure class, milliseconds. Keeps a longer running cooldown
# (SET replaces a value of any type).
_COOLDOWN = """
local left = redis.call('PTTL', KEYS[1])
if left < tonumber(ARGV[2]) then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1
"""

# KEYS[1] window zset. ARGV: limit, window µs, member. Returns 0 (slot taken) or µs to wait.
# Entries stamped later than the window's end (a skewed or hostile writer) are dropped too:
# they would hold the provider's slots for the whole fleet forever.
_SLOT = (
    _REPAIR
    + """
fix(KEYS[1], 'zset', 100000)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '(' .. string.format('%d', now + window), '+inf')
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, math.min(window, tonumber(oldest[2]) + window - now))
"""
)

# KEYS[1] entry, KEYS[2] index. ARGV: value, ttl s, max entries, max value bytes, entry prefix.
# First writer wins. An entry of another type or over the bound is replaced; the index only
# ever deletes keys of the cache's own family (a planted member naming another key is dropped).
_CACHE_PUT = (
    _REPAIR
    + """
fix(KEYS[1], 'string', tonumber(ARGV[4]))
fix(KEYS[2], 'zset', tonumber(ARGV[3]) * 2 + 16)
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZADD', KEYS[2], now, KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[2]))
redis.call('ZREMRANGEBYSCORE', KEYS[2], '(' .. (now + 86400), '+inf')
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if over > 0 then
  local old = redis.call('ZPOPMIN', KEYS[2], over)
  local prefix = ARGV[5]
  for i = 1, #old, 2 do
    if string.sub(old[i], 1, #prefix) == prefix and old[i] ~= KEYS[2] then redis.call('DEL', old[i]) end
  end
end
redis.call('EXPIRE', KEYS[2], ARGV[2])
return 1
"""
)

# KEYS[1] op marker, then (counts hash, discounted hash) per row.
# ARGV: op ttl, kind, arm, value, discount, width, buckets, learned ttl, max fields, arms...
_BANDIT = (
    _REPAIR
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local kind, arm, x = ARGV[2], ARGV[3], tonumber(ARGV[4])
local g, width, buckets, ttl = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8]
local most = tonumber(ARGV[9])
for i = 2, #KEYS, 2 do
  local n, d = KEYS[i], KEYS[i + 1]
  fix(n, 'hash', most)
  fix(d, 'hash', most)
  int_field(n, arm .. ':updates')
  num_field(n, arm .. ':reward')
  int_field(d, 't')
end
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
for i = 2, #KEYS, 2 do
  local n, d = KEYS[i], KEYS[i + 1]
  local t, ai, bi
  if kind == 'update' then
    redis.call('HINCRBY', n, arm .. ':updates', 1)
    t = redis.call('HINCRBY', d, 't', 1)
    if t % width == 0 then
      local old = string.format('%d', math.floor(t / width) - buckets)
      for j = 10, #ARGV do redis.call('HDEL', d, old .. ':' .. ARGV[j] .. ':a', old .. ':' .. ARGV[j] .. ':b') end
    end
    ai, bi = x, 1 - x
  else
    t = tonumber(redis.call('HGET', d, 't') or '0')
    ai, bi = x, -x
  end
  redis.call('HINCRBYFLOAT', n, arm .. ':reward', x)
  local k = math.floor(t / width)
  local w = 1
  if g < 1 then w = g ^ ((k + 1) * width - t) end
  local prefix = string.format('%d', k) .. ':' .. arm .. ':'
  num_field(d, prefix .. 'a')
  num_field(d, prefix .. 'b')
  redis.call('HINCRBYFLOAT', d, prefix .. 'a', ai * w)
  redis.call('HINCRBYFLOAT', d, prefix .. 'b', bi * w)
  redis.call('EXPIRE', n, ttl)
  redis.call('EXPIRE', d, ttl)
end
return 1
"""
)

# KEYS: op marker, rows hash, used zset, dismissals zset, version.
# ARGV: op ttl, learned ttl, max rows, max dismissals, now, row count, max row fields,
#       then 5 per row (member, followed, ignored, seed, lastUsed), then 2 per dismissal (member, expiresAt).
# Last uses stamped more than a day ahead and expiries past the longest dismissal are dropped
# (a planted +inf would otherwise outlive every real entry).
_KNOWLEDGE = (
    _REPAIR
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local rows, used, dis, ver = KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local ttl, now = tonumber(ARGV[2]), tonumber(ARGV[5])
fix(rows, 'hash', tonumber(ARGV[7]))
fix(used, 'zset', tonumber(ARGV[3]) * 2)
fix(dis, 'zset', tonumber(ARGV[4]) * 2)
int_key(ver)
local i = 8
for r = 1, tonumber(ARGV[6]) do
  local m = ARGV[i]
  int_field(rows, 'f:' .. m)
  int_field(rows, 'i:' .. m)
  num_field(rows, 's:' .. m)
  i = i + 5
end
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
redis.call('ZREMRANGEBYSCORE', used, '(' .. (now + 86400), '+inf')
redis.call('ZREMRANGEBYSCORE', dis, '(' .. (now + ttl), '+inf')
i = 8
for r = 1, tonumber(ARGV[6]) do
  local m, f, ig, s, u = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), ARGV[i + 4]
  if s > 0 and not redis.call('ZSCORE', used, m) then redis.call('HSET', rows, 's:' .. m, ARGV[i + 3]) end
  if f ~= 0 then redis.call('HINCRBY', rows, 'f:' .. m, f) end
  if ig ~= 0 then redis.call('HINCRBY', rows, 'i:' .. m, ig) end
  redis.call('ZADD', used, 'GT', u, m)
  i = i + 5
end
local over = redis.call('ZCARD', used) - tonumber(ARGV[3])
if over > 0 then
  local old = redis.call('ZPOPMIN', used, over)
  for j = 1, #old, 2 do redis.call('HDEL', rows, 'f:' .. old[j], 'i:' .. old[j], 's:' .. old[j]) end
end
while i < #ARGV do
  redis.call('ZADD', dis, 'GT', ARGV[i + 1], ARGV[i])
  i = i + 2
end
redis.call('ZREMRANGEBYSCORE', dis, '-inf', now)
over = redis.call('ZCARD', dis) - tonumber(ARGV[4])
if over > 0 then redis.call('ZPOPMIN', dis, over) end
redis.call('INCR', ver)
for _, key in ipairs({rows, used, ver}) do redis.call('EXPIRE', key, ttl) end
local last = redis.call('ZRANGE', dis, -1, -1, 'WITHSCORES')
if #last > 0 then redis.call('EXPIRE', dis, math.max(ttl, math.ceil(tonumber(last[2]) - now))) end
return 1
"""
)

# A bounded read of several keys in one round trip. ARGV: 4 per key: kind (h: hash, z: zset
# members scoring above the 4th value, s: string), most entries (or bytes, for a string),
# longest field name/member, longest value. Per key {status, flat data}: 0 read (absent: no
# data), 1 another type, 2 over the bound; entries with a name or value over the bound are
# left out. What crosses the wire is bounded whatever the key holds.
_READ = """
local out = {}
local want = {h = 'hash', z = 'zset', s = 'string'}
for i, key in ipairs(KEYS) do
  local j = (i - 1) * 4
  local kind, most, name, width = ARGV[j + 1], tonumber(ARGV[j + 2]), tonumber(ARGV[j + 3]), tonumber(ARGV[j + 4])
  local t = redis.call('TYPE', key)['ok']
  if t == 'none' then out[i] = {0, {}}
  elseif t ~= want[kind] then out[i] = {1, {}}
  elseif kind == 's' then
    if redis.call('STRLEN', key) > most then out[i] = {2, {}} else out[i] = {0, {redis.call('GET', key)}} end
  elseif kind == 'h' then
    if redis.call('HLEN', key) > most then out[i] = {2, {}} else
      local raw, kept = redis.call('HGETALL', key), {}
      for n = 1, #raw, 2 do
        if #raw[n] <= name and #raw[n + 1] <= width then kept[#kept + 1] = raw[n]; kept[#kept + 1] = raw[n + 1] end
      end
      out[i] = {0, kept}
    end
  else
    if redis.call('ZCARD', key) > most then out[i] = {2, {}} else
      local raw, kept = redis.call('ZRANGEBYSCORE', key, ARGV[j + 4], '+inf', 'WITHSCORES'), {}
      for n = 1, #raw, 2 do
        if #raw[n] <= name then kept[#kept + 1] = raw[n]; kept[#kept + 1] = raw[n + 1] end
      end
      out[i] = {0, kept}
    end
  end
end
return out
"""


#: A failure class as the router names them (a store value that is not one is not shown).
_CLASS = re.compile(r"[a-z_]{1,32}")
#: An intent name; a path holds no control character and at most 1024 characters (as the
#: knowledge file accepts): what a hostile store returns cannot forge a ledger line.
_INTENT = re.compile(r"[A-Za-z]{1,32}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _member(value: bytes | str) -> tuple[str, str] | None:
    intent, _, path = _text(value).partition(":")
    if not _INTENT.fullmatch(intent) or not path or len(path) > 1024 or _CONTROL.search(path):
        return None
    return intent, path


def _cooldown_of(value: bytes | None, left_ms: int | None) -> tuple[str, float] | None:
    """``(failure class, seconds left)`` from a cooldown key's value and ``PTTL``."""
    if value is None or left_ms is None or left_ms <= 0:
        return None
    cls = _text(value)
    return (cls if _CLASS.fullmatch(cls) else "cooldown"), min(left_ms / 1000, 86_400.0)


def _finite(value: bytes | str | float) -> float:
    """A number from the store; anything unparsable or non-finite is 0."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return 0.0
    return x if math.isfinite(x) else 0.0


def _score(value: bytes | str | float) -> float:
    """A zset score from the store (``inf`` allowed by Redis): non-finite reads as not finite."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _count(value: float) -> int:
    return int(min(max(value, 0.0), 1e12))


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


class RedisState:
    """:class:`~.shared.SharedState` on the Redis/Valkey server of ``config.backend``.

    ``client`` replaces the redis-py client (tests pass a fakeredis one); ``clock`` returns
    monotonic seconds (the local rate windows). Nothing connects until the first operation."""

    kind = "redis"

    def __init__(
        self,
        config: StateConfig,
        client: redis.Redis | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = public_url(config.backend)
        self.timeout_s = config.timeout_ms / 1000
        self.retry_s = config.retry_ms / 1000
        try:
            self.client = client or redis.Redis.from_url(
                config.redis_url(),
                socket_timeout=self.timeout_s,
                socket_connect_timeout=self.timeout_s,
                retry=Retry(NoBackoff(), 0),  # a call waits once, at most timeoutMs
                health_check_interval=0,
                client_name="dsh-sidecar",
            )
        except ValueError:  # an option of the URL's query redis-py cannot read (its message would name it only)
            raise ConfigError("state.backend", "an option of the URL's query has an invalid value") from None
        self.local = LocalState(clock)
        self._cooldown = self.client.register_script(_COOLDOWN)
        self._slot = self.client.register_script(_SLOT)
        self._cache_put = self.client.register_script(_CACHE_PUT)
        self._bandit = self.client.register_script(_BANDIT)
        self._knowledge = self.client.register_script(_KNOWLEDGE)
        self._bounded = self.client.register_script(_READ)
        self._lock = threading.Lock()
        self._up = True
        self._pending: deque[Callable[[], object]] = deque()
        self._stop = threading.Event()
        self._resync: threading.Thread | None = None
        self._background: queue.Queue[Callable[[], object]] = queue.Queue(MAX_BACKGROUND)
        self._sender: threading.Thread | None = None
        self._watched: dict[str, None] = {}
        self._snapshot: tuple[float, dict[str, tuple[str, float] | None]] = (float("-inf"), {})
        self._delay = self.retry_s
        self._back_at = float("-inf")
        self.outages = 0
        self.resent = 0
        self.dropped = 0
        self.last_error: str | None = None
        #: Keys found unusable (another type, over a bound, a write the store refused for its
        #: content): each logged once (the first :data:`MAX_LOGGED_KEYS`), all counted.
        self.bad_keys: set[str] = set()
        self.bad_key_count = 0

    @property
    def available(self) -> bool:
        return self._up

    # ------------------------------------------------------------------ degrade / re-sync
    @staticmethod
    def _store_wide(exc: BaseException) -> bool:
        """Whether ``exc`` says the whole store is unusable (away, or refusing writes), not one key."""
        return isinstance(exc, STORE_ERRORS + REFUSING_ERRORS) or (
            isinstance(exc, redis.ResponseError) and str(exc).startswith(("MISCONF", "LOADING", "BUSY", "MASTERDOWN"))
        )

    def _bad_key(self, key: str, exc: BaseException | str) -> None:
        """``key`` is unusable (another type, too big, content the store refused): warn once
        for it, count it; the caller serves from local state for this key."""
        why = exc if isinstance(exc, str) else type(exc).__name__
        with self._lock:
            self.bad_key_count += 1
            if key in self.bad_keys or len(self.bad_keys) >= MAX_LOGGED_KEYS:
                return
            self.bad_keys.add(key)
        log.warning(
            "state store %s: key %s is unusable (%s); serving it from local state (a write replaces it)",
            self.url,
            key[:200],
            why,
        )

    def _away(self, exc: BaseException) -> None:
        """The store failed: serve locally, warn once per outage, start the re-sync thread."""
        with self._lock:
            self.last_error = type(exc).__name__
            if self._stop.is_set():
                return  # closing: a write that races close() is no outage (close() tried the queue once)
            if self._up:
                self._up = False
                self.outages += 1
                log.warning(
                    "state store %s unavailable (%s); serving from local state, re-syncing when it returns",
                    self.url,
                    self.last_error,
                )
            if (self._resync is None or not self._resync.is_alive()) and not self._stop.is_set():
                self._resync = threading.Thread(target=self._resync_loop, name="dsh-state-resync", daemon=True)
                self._resync.start()

    def _queue(self, send: Callable[[], object]) -> None:
        """Keep a write for the re-sync (caller holds the lock)."""
        if len(self._pending) >= MAX_PENDING:
            self._pending.popleft()
            if self.dropped == 0:
                log.warning("state store %s away too long: dropping the oldest queued writes", self.url)
            self.dropped += 1
        self._pending.append(send)

    def _read(self, fetch: Callable[[], Any], fallback: Callable[[], Any], key: str = "") -> Any:
        """``fetch()``, or ``fallback()`` when the store is away, refuses, or the key is unusable."""
        if not self._up:
            return fallback()
        try:
            return fetch()
        except redis.RedisError as exc:
            if self._store_wide(exc):
                self._away(exc)
            else:
                self._bad_key(key or "(read)", exc)
            return fallback()
        except OSError as exc:
            self._away(exc)
            return fallback()

    def _write(self, send: Callable[[], object], key: str = "") -> None:
        with self._lock:
            if not self._up:
                self._queue(send)
                return
        try:
            send()
        except (redis.RedisError, OSError) as exc:
            if not self._store_wide(exc):
                # the scripts repair what they touch, so this is a store that refuses this write
                # for its content: re-sending it would fail the same way and hold the queue
                self._bad_key(key or "(write)", exc)
                with self._lock:
                    self.dropped += 1
                return
            with self._lock:
                self._queue(send)
            self._away(exc)

    def _later(self, send: Callable[[], object]) -> None:
        """Send ``send`` from the background sender (the caller does not wait; dropped when the
        store is away or the sender is behind)."""
        if not self._up or self._stop.is_set():
            return
        try:
            self._background.put_nowait(send)
        except queue.Full:
            return
        if self._sender is None or not self._sender.is_alive():
            with self._lock:
                if self._sender is None or not self._sender.is_alive():
                    self._sender = threading.Thread(target=self._send_loop, name="dsh-state-send", daemon=True)
                    self._sender.start()

    def _send_loop(self) -> None:
        while not self._stop.is_set():
            try:
                send = self._background.get(timeout=1.0)
            except queue.Empty:
                continue
            time.sleep(YIELD_S)
            try:
                if self._up:
                    send()
            except (redis.RedisError, OSError) as exc:  # a cache write: dropped either way
                if self._store_wide(exc):
                    self._away(exc)
                else:
                    self._bad_key(keys.CACHE_INDEX, exc)
            finally:
                self._background.task_done()

    def _resync_loop(self) -> None:
        # a store that flaps (back, then away again within a minute) keeps its back-off, so a
        # slow-but-alive store costs one bounded wait and one warning per back-off, not per call
        recent = time.monotonic() - self._back_at < STABLE_S
        delay = min(self._delay * 2, MAX_RETRY_S) if recent else self.retry_s
        while not self._stop.wait(delay):
            self._delay = delay
            delay = min(delay * 2, MAX_RETRY_S)
            try:
                self.client.ping()
            except (redis.RedisError, OSError):
                continue
            sent = 0
            while True:
                with self._lock:
                    if not self._pending:
                        self._up = True
                        break
                    send = self._pending.popleft()
                try:
                    send()
                    sent += 1
                except (redis.RedisError, OSError) as exc:
                    if not self._store_wide(exc):  # refused for its content: never sendable, dropped
                        self._bad_key("(queued write)", exc)
                        with self._lock:
                            self.dropped += 1
                        continue
                    with self._lock:  # still away, full or read-only: keep it, back off
                        self._pending.appendleft(send)
                    break
            with self._lock:
                self.resent += sent
                back = self._up
                if back:
                    self._back_at = time.monotonic()
            if back:
                log.warning("state store %s is back; re-sent %d queued writes", self.url, sent)
                return

    def wait_synced(self, timeout_s: float) -> bool:
        """Block until the store is in use again, the re-sync thread has finished (its
        "is back" warning written) and nothing is queued or waiting for the background
        sender; ``True`` if so (tests, benchmarks)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                resyncing = self._resync is not None and self._resync.is_alive()
                if self._up and not resyncing and not self._pending and not self._background.unfinished_tasks:
                    return True
            time.sleep(0.01)
        return False

    # ------------------------------------------------------------------ health
    def cooldown(self, provider: str) -> tuple[str, float] | None:
        with self._lock:
            if provider not in self._watched and len(self._watched) < MAX_WATCHED:
                self._watched[provider] = None
            taken, snap = self._snapshot
            if provider in snap and time.monotonic() - taken < SNAPSHOT_S:
                entry = snap[provider]
                if entry is None:
                    return None
                left = entry[1] - (time.monotonic() - taken)
                return (entry[0], left) if left > 0 else None
        key = keys.cooldown_key(provider)

        def fetch() -> tuple[str, float] | None:
            pipe = self.client.pipeline(transaction=False)
            pipe.getrange(key, 0, MAX_CLASS_BYTES - 1)
            pipe.pttl(key)
            value, left = self._replies(pipe, [key, key])
            return _cooldown_of(value, left)

        return self._read(fetch, lambda: None, key)

    def start_cooldown(self, provider: str, failure_class: str, seconds: float) -> None:
        if seconds <= 0:
            return
        self._forget(provider)
        key, until = keys.cooldown_key(provider), time.monotonic() + seconds

        def send() -> None:
            left_ms = math.ceil((until - time.monotonic()) * 1000)
            if left_ms > 0:  # a re-send carries what is left of it
                self._cooldown(keys=[key], args=[failure_class, left_ms])

        self._write(send, key)

    def _forget(self, provider: str) -> None:
        with self._lock:
            self._snapshot[1].pop(provider, None)

    def clear_cooldown(self, provider: str) -> None:
        self._forget(provider)
        key = keys.cooldown_key(provider)
        self._write(lambda: self.client.delete(key), key)

    def take_slot(self, provider: str, limit: int, window_s: float) -> float:
        key = keys.rate_key(provider)

        def fetch() -> float:
            wait_us = self._slot(keys=[key], args=[limit, max(1, int(window_s * 1e6)), uuid.uuid4().hex])
            return int(wait_us) / 1e6

        return self._read(fetch, lambda: self.local.take_slot(provider, limit, window_s), key)

    # ------------------------------------------------------------------ cache
    def cache_get(self, key: str) -> bytes | None:
        """The entry under ``key``; the same round trip reads the cooldowns of the providers
        this process checks, for the search that follows a miss (see :data:`SNAPSHOT_S`)."""

        def fetch() -> bytes | None:
            with self._lock:
                watched = list(self._watched)
            entry = keys.cache_key(key)
            pipe = self.client.pipeline(transaction=False)
            pipe.strlen(entry)
            pipe.getrange(entry, 0, keys.MAX_CACHE_VALUE_BYTES - 1)  # never more than the bound crosses
            names = [entry, entry]
            for provider in watched:
                pipe.getrange(keys.cooldown_key(provider), 0, MAX_CLASS_BYTES - 1)
                pipe.pttl(keys.cooldown_key(provider))
                names += [keys.cooldown_key(provider)] * 2
            replies = self._replies(pipe, names)
            snap = {p: _cooldown_of(replies[2 + 2 * i], replies[3 + 2 * i]) for i, p in enumerate(watched)}
            with self._lock:
                self._snapshot = (time.monotonic(), snap)
            size, value = replies[0], replies[1]
            if not isinstance(size, int) or size == 0:
                return None  # absent (or unusable: already counted)
            if size > keys.MAX_CACHE_VALUE_BYTES:
                self._bad_key(entry, f"a value of {size} bytes, over {keys.MAX_CACHE_VALUE_BYTES}")
                return None
            return value

        return self._read(fetch, lambda: None, keys.CACHE_INDEX)

    def cache_put(self, key: str, value: bytes, ttl_s: float, max_entries: int) -> None:
        if len(value) > keys.MAX_CACHE_VALUE_BYTES:
            return
        names = [keys.cache_key(key), keys.CACHE_INDEX]
        args: list[bytes | int | str] = [
            value,
            max(1, int(ttl_s)),
            max_entries,
            keys.MAX_CACHE_VALUE_BYTES,
            keys.CACHE_PREFIX,
        ]
        self._later(lambda: self._cache_put(keys=names, args=args))  # off the reply path, never re-sent

    # ------------------------------------------------------------------ bandit
    def bandit_apply(self, op: BanditOp) -> None:
        if not (math.isfinite(op.value) and math.isfinite(op.discount)):
            return  # never produced by the bandit; a store must not be asked to add NaN
        ks = [keys.op_key(op.op_id)]
        for row in op.rows:
            ks += [keys.bandit_counts_key(row), keys.bandit_discounted_key(row, op.discount)]
        args = [
            keys.OP_TTL_S,
            op.kind,
            op.arm,
            repr(float(op.value)),
            repr(float(op.discount)),
            bucket_width(op.discount),
            BUCKETS,
            keys.LEARNED_TTL_S,
            MAX_BANDIT_FIELDS,
            *op.arms,
        ]
        self._write(lambda: self._bandit(keys=ks, args=args), ks[1] if len(ks) > 1 else ks[0])

    def _replies(self, pipe: Any, names: list[str]) -> list[Any]:
        """The replies of ``pipe`` with each command's own error (another type…) as ``None``,
        that command's key (``names``, in order) counted unusable; a store-wide error raises."""
        replies = pipe.execute(raise_on_error=False)
        for i, reply in enumerate(replies):
            if isinstance(reply, Exception):
                if self._store_wide(reply):
                    raise reply
                self._bad_key(names[i], reply)
                replies[i] = None
        return replies

    def _read_bounded(self, specs: list[tuple[str, str, int, int, str]]) -> list[list[bytes] | None]:
        """Several keys read in one round trip, each bounded (:data:`_READ`): ``specs`` are
        ``(key, kind h|z|s, most entries or bytes, longest name, longest value or the zset's
        lowest score)``; per key its flat data, or ``None`` when the key is unusable (another
        type, over the bound: counted and logged once; the next write replaces it)."""
        argv: list[Any] = []
        for _key, kind, most, name, last in specs:
            argv += [kind, most, name, last]
        replies = self._bounded(keys=[spec[0] for spec in specs], args=argv)
        out: list[list[bytes] | None] = []
        for (key, *_), reply in zip(specs, replies):
            status, data = int(reply[0]), list(reply[1])
            if status != 0:
                self._bad_key(key, "another type" if status == 1 else "over the bound of what is written there")
                out.append(None)
            else:
                out.append(data)
        return out

    def _hgetall(self, names: list[str]) -> list[dict[str, float]] | None:
        """The bandit hashes ``names``, bounded; ``None`` when one is unusable (the caller
        keeps its local view rather than read that row as no evidence)."""
        found = self._read_bounded([(n, "h", MAX_BANDIT_FIELDS, 256, str(MAX_NUMBER_BYTES)) for n in names])
        if any(d is None for d in found):
            return None
        return [{_text(d[i]): _finite(d[i + 1]) for i in range(0, len(d), 2)} for d in found if d is not None]

    def bandit_evidence(
        self, rows: tuple[str, ...], arms: tuple[str, ...], discount: float
    ) -> dict[str, RowEvidence] | None:
        def fetch() -> dict[str, RowEvidence] | None:
            found = self._hgetall([keys.bandit_discounted_key(row, discount) for row in rows])
            if found is None:
                return None
            return {row: evidence_from_fields(f, arms, discount) for row, f in zip(rows, found)}

        return self._read(fetch, lambda: None, keys.bandit_discounted_key(rows[0] if rows else "", discount))

    def bandit_counts(
        self, rows: tuple[str, ...], arms: tuple[str, ...]
    ) -> dict[str, dict[str, dict[str, float]]] | None:
        def fetch() -> dict[str, dict[str, dict[str, float]]] | None:
            found = self._hgetall([keys.bandit_counts_key(row) for row in rows])
            if found is None:
                return None
            return {row: counts_from_fields(f, arms) for row, f in zip(rows, found)}

        return self._read(fetch, lambda: None, keys.bandit_counts_key(rows[0] if rows else ""))

    # ------------------------------------------------------------------ knowledge
    def knowledge_apply(self, batch: KnowledgeBatch) -> None:
        base = keys.repo_key(batch.repo)
        ks = [keys.op_key(batch.op_id), f"{base}:rows", f"{base}:used", f"{base}:dis", f"{base}:ver"]
        args: list[Any] = [keys.OP_TTL_S, keys.LEARNED_TTL_S, MAX_ROWS, MAX_DISMISSALS, repr(time.time())]
        args += [len(batch.rows), MAX_KNOWLEDGE_FIELDS]
        for (intent, path), d in batch.rows.items():
            args += [f"{intent}:{path}", d.followed, d.ignored, repr(float(d.seed)), repr(float(d.last_used))]
        for (intent, path), exp in batch.dismissals.items():
            args += [f"{intent}:{path}", repr(float(exp))]
        self._write(lambda: self._knowledge(keys=ks, args=args), base)

    def knowledge_view(self, repo: str, now: float) -> KnowledgeView | None:
        base = keys.repo_key(repo)

        def fetch() -> KnowledgeView | None:
            found = self._read_bounded(
                [
                    (f"{base}:rows", "h", MAX_KNOWLEDGE_FIELDS, MAX_NAME_BYTES, str(MAX_NUMBER_BYTES)),
                    (f"{base}:used", "z", 2 * MAX_ROWS, MAX_NAME_BYTES, "-inf"),
                    (f"{base}:dis", "z", 2 * MAX_DISMISSALS, MAX_NAME_BYTES, f"({now!r}"),
                    (f"{base}:ver", "s", MAX_NUMBER_BYTES, 0, "0"),
                ]
            )
            if any(part is None for part in found):
                return None  # unusable for this repository: keep the local view (the next flush repairs it)
            raw, used_raw, dis_raw, ver_raw = (part or [] for part in found)
            counts: dict[str, float] = {_text(raw[i]): _finite(raw[i + 1]) for i in range(0, len(raw), 2)}
            used = [(used_raw[i], _finite(used_raw[i + 1])) for i in range(0, len(used_raw), 2)]
            dis = [(dis_raw[i], _score(dis_raw[i + 1])) for i in range(0, len(dis_raw), 2)]
            ver = ver_raw[0] if ver_raw else 0
            rows: dict[tuple[str, str], tuple[int, int, float, float]] = {}
            for member, last in used:
                key = _member(member)
                if key is None or not math.isfinite(last):
                    continue
                m = f"{key[0]}:{key[1]}"
                rows[key] = (  # counts ≥ 0 and a seed in [0, 100], as the knowledge file's model
                    _count(counts.get(f"f:{m}", 0)),
                    _count(counts.get(f"i:{m}", 0)),
                    min(max(_finite(counts.get(f"s:{m}", 0.0)), 0.0), 100.0),
                    float(last),
                )
            dismissals = {}
            for member, exp in dis:
                key = _member(member)
                if key is not None and math.isfinite(exp):
                    dismissals[key] = float(exp)
            return KnowledgeView(rows, dismissals, _count(_finite(ver or 0)))

        return self._read(fetch, lambda: None, base)

    def knowledge_version(self, repo: str) -> int | None:
        key = f"{keys.repo_key(repo)}:ver"

        def fetch() -> int | None:
            pipe = self.client.pipeline(transaction=False)
            pipe.getrange(key, 0, MAX_NUMBER_BYTES - 1)
            (value,) = self._replies(pipe, [key])
            return None if value is None else _count(_finite(value or 0))  # None: another type

        return self._read(fetch, lambda: None, key)

    def reset_bandit(self) -> int:
        """Delete the fleet's bandit statistics (every :data:`~.keys.BANDIT_PATTERN` key: the exact
        totals and the discounted sums of every row and discount), for ``dsh-search bandit reset``;
        the number of keys deleted. Sidecars still running keep the evidence they adopted and add
        their next updates to the emptied statistics. Unlike the serving calls this never degrades
        nor queues: raises one of :data:`STORE_ERRORS` (or another ``redis.RedisError``) when the
        store does not answer within ``timeoutMs``."""
        deleted = 0
        batch: list[Any] = []
        for key in self.client.scan_iter(match=keys.BANDIT_PATTERN, count=RESET_BATCH):
            batch.append(key)
            if len(batch) >= RESET_BATCH:
                deleted += int(self.client.unlink(*batch))
                batch.clear()
        if batch:
            deleted += int(self.client.unlink(*batch))
        return deleted

    # ------------------------------------------------------------------ lifecycle
    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "backend": self.url,
                "shared": True,
                "available": self._up,
                "timeoutMs": round(self.timeout_s * 1000),
                "outages": self.outages,
                "queuedWrites": len(self._pending),
                "resentWrites": self.resent,
                "droppedWrites": self.dropped,
                "badKeys": self.bad_key_count,
                "lastError": self.last_error,
            }

    def close(self) -> None:
        self._stop.set()
        for thread in (self._resync, self._sender):
            if thread is not None:
                thread.join(self.timeout_s * 4 + 0.1)
        with self._lock:
            pending, self._pending = list(self._pending), deque()
        for i, send in enumerate(pending):  # one last try, bounded by timeoutMs each (a down store fails fast)
            try:
                send()
            except (redis.RedisError, OSError):
                self.dropped += len(pending) - i
                log.warning(
                    "state store %s still unavailable at exit: %d queued writes not sent", self.url, len(pending) - i
                )
                break
        with contextlib.suppress(Exception):  # closing a broken connection must not fail a shutdown
            self.client.close()
