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
:data:`~.redis_link.MAX_PENDING`, oldest dropped and counted) while a background thread probes with
``PING`` (``state.retryMs``, doubling to :data:`MAX_RETRY_S`). When the store answers, the
queue is re-sent in order, then the store is used again (one more log line). A call never
touches the socket while the store is away, so its added wait is bounded by ``timeoutMs`` once
per outage and zero afterwards.
"""

from __future__ import annotations

import functools
import logging
import math
import time
import uuid
from collections.abc import Callable
from typing import Any, Final

import redis

from dsh_sidecar.state import keys
from dsh_sidecar.state.config import StateConfig
from dsh_sidecar.state.local import MAX_DISMISSALS, MAX_ROWS, LocalState, counts_from_fields, evidence_from_fields
from dsh_sidecar.state.redis_link import StoreLink
from dsh_sidecar.state.redis_wire import (
    BANDIT,
    BOUNDED_READ,
    CACHE_PUT,
    COOLDOWN,
    KNOWLEDGE,
    SLOT,
    as_count,
    as_finite,
    as_member,
    as_score,
    as_text,
    cooldown_of,
)
from dsh_sidecar.state.shared import (
    BUCKETS,
    BanditOp,
    KnowledgeBatch,
    KnowledgeView,
    RowEvidence,
    bucket_width,
)

log = logging.getLogger(__name__)

#: How long the cooldowns read with a cache lookup answer :meth:`RedisState.cooldown`, seconds:
#: the provider attempts of the search that missed the cache follow within this, so a search
#: costs one round trip before its first provider call instead of two.
SNAPSHOT_S: Final = 0.02
#: Most provider identities whose cooldowns ride along with a cache lookup.
MAX_WATCHED: Final = 16
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
#: Most bytes of one reply: the knowledge view's bounded read (rows, last uses and dismissals
#: at their bounds, each entry's name, number and framing), the largest there is; a server
#: that sends more is not the store (:class:`~.bounded.BoundedSocket`).
MAX_REPLY_BYTES: Final = (MAX_KNOWLEDGE_FIELDS + 2 * MAX_ROWS + 2 * MAX_DISMISSALS) * (
    MAX_NAME_BYTES + 2 * MAX_NUMBER_BYTES
) + 2 * keys.MAX_CACHE_VALUE_BYTES


class RedisState(StoreLink):
    """:class:`~.shared.SharedState` on the Redis/Valkey server of ``config.backend``.

    ``client`` replaces the redis-py client (tests pass a fakeredis one); ``clock`` returns
    monotonic seconds (the local rate windows). Nothing connects until the first operation."""

    kind = "redis"
    max_reply_bytes = MAX_REPLY_BYTES

    def __init__(
        self,
        config: StateConfig,
        client: redis.Redis | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(config, client)
        self.local = LocalState(clock)
        self._cooldown = self.client.register_script(COOLDOWN)
        self._slot = self.client.register_script(SLOT)
        self._cache_put = self.client.register_script(CACHE_PUT)
        self._bandit = self.client.register_script(BANDIT)
        self._knowledge = self.client.register_script(KNOWLEDGE)
        self._bounded = self.client.register_script(BOUNDED_READ)
        self._watched: dict[str, None] = {}
        self._snapshot: tuple[float, dict[str, tuple[str, float] | None]] = (float("-inf"), {})

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
            return cooldown_of(value, left)

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
        self._write(lambda: self.client.unlink(key), key)  # a planted big value is freed off the main thread

    def take_slot(self, provider: str, limit: int, window_s: float, member: str | None = None) -> float:
        key = keys.rate_key(provider)
        name = member or uuid.uuid4().hex

        def fetch() -> float:
            wait_us = self._slot(keys=[key], args=[limit, max(1, int(window_s * 1e6)), name])
            return int(wait_us) / 1e6

        return self._read(fetch, lambda: self.local.take_slot(provider, limit, window_s), key)

    def release_slot(self, provider: str, member: str) -> None:
        key = keys.rate_key(provider)
        self._write(lambda: self.client.zrem(key, member), key)

    # ------------------------------------------------------------------ cache
    def cache_get(self, key: str) -> bytes | None:
        """The entry under ``key``; the same round trip reads the cooldowns of the providers
        this process checks, for the search that follows a miss (see :data:`SNAPSHOT_S`)."""
        return self._read(lambda: self._prefetch(key, ())[0], lambda: None, keys.CACHE_INDEX)

    def prefetch(
        self, key: str | None, providers: tuple[str, ...]
    ) -> tuple[bytes | None, dict[str, tuple[str, float] | None]]:
        """The entry under ``key`` (``None``: none read) and the cooldowns of ``providers`` and
        of every provider this process checks, in one round trip; they also answer
        :meth:`cooldown` for :data:`SNAPSHOT_S`. Away: no entry, this process's cooldowns."""

        def local() -> tuple[bytes | None, dict[str, tuple[str, float] | None]]:
            return None, {p: self.local.cooldown(p) for p in providers}

        return self._read(lambda: self._prefetch(key, providers), local, keys.CACHE_INDEX)

    def _prefetch(
        self, key: str | None, providers: tuple[str, ...]
    ) -> tuple[bytes | None, dict[str, tuple[str, float] | None]]:
        with self._lock:
            for provider in providers:
                if provider not in self._watched and len(self._watched) < MAX_WATCHED:
                    self._watched[provider] = None
            watched = list(dict.fromkeys([*providers, *self._watched]))
        pipe = self.client.pipeline(transaction=False)
        names: list[str] = []
        entry = keys.cache_key(key) if key is not None else ""
        if key is not None:
            pipe.strlen(entry)
            pipe.getrange(entry, 0, keys.MAX_CACHE_VALUE_BYTES - 1)  # never more than the bound crosses
            names += [entry, entry]
        first = len(names)
        for provider in watched:
            pipe.getrange(keys.cooldown_key(provider), 0, MAX_CLASS_BYTES - 1)
            pipe.pttl(keys.cooldown_key(provider))
            names += [keys.cooldown_key(provider)] * 2
        replies = self._replies(pipe, names)
        snap = {p: cooldown_of(replies[first + 2 * i], replies[first + 1 + 2 * i]) for i, p in enumerate(watched)}
        with self._lock:
            self._snapshot = (time.monotonic(), snap)
        cooldowns = {p: snap[p] for p in providers}
        if key is None:
            return None, cooldowns
        size, value = replies[0], replies[1]
        if not isinstance(size, int) or size == 0:
            return None, cooldowns  # absent (or unusable: already counted)
        if size > keys.MAX_CACHE_VALUE_BYTES:
            self._bad_key(entry, f"a value of {size} bytes, over {keys.MAX_CACHE_VALUE_BYTES}")
            return None, cooldowns
        return value, cooldowns

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
        call = self._bandit_call(op)
        if call is not None:
            ks, args = call
            self._write(lambda: self._bandit(keys=ks, args=args), ks[1] if len(ks) > 1 else ks[0])

    def bandit_apply_many(self, ops: list[BanditOp]) -> None:
        """The writes of ``ops`` in one round trip (a pipeline of the script, in order); each
        write's fate is its own (queued, dropped, counted) as :meth:`bandit_apply` would give it."""
        calls = [call for call in map(self._bandit_call, ops) if call is not None]
        sends = [functools.partial(self._bandit, keys=ks, args=args) for ks, args in calls]
        self._write_all(sends, lambda: self._scripts_at_once(self._bandit, calls), calls[0][0][1] if calls else "")

    def _bandit_call(self, op: BanditOp) -> tuple[list[str], list[Any]] | None:
        """The keys and arguments of ``op``'s script; ``None`` for values the bandit never makes."""
        if not (math.isfinite(op.value) and math.isfinite(op.discount)):
            return None  # never produced by the bandit; a store must not be asked to add NaN
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
        return ks, args

    def _scripts_at_once(self, script: Any, calls: list[tuple[list[str], list[Any]]]) -> list[BaseException | None]:
        """``script`` run once per ``(keys, args)`` of ``calls`` in one pipeline; each run's error
        (``None``: it ran). A server that has not the script yet (restarted, flushed) is given it
        and asked again for those runs: one more round trip, as redis-py's own call does."""
        replies = self._evalsha(script, calls)
        missing = [i for i, reply in enumerate(replies) if isinstance(reply, redis.exceptions.NoScriptError)]
        if missing:
            script.sha = self.client.script_load(script.script)
            for i, reply in zip(missing, self._evalsha(script, [calls[i] for i in missing])):
                replies[i] = reply
        return [reply if isinstance(reply, BaseException) else None for reply in replies]

    def _evalsha(self, script: Any, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        pipe = self.client.pipeline(transaction=False)
        for ks, args in calls:
            pipe.evalsha(script.sha, len(ks), *ks, *args)
        return list(pipe.execute(raise_on_error=False))

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
        """Several keys read in one round trip, each bounded (:data:`BOUNDED_READ`): ``specs`` are
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
        return [{as_text(d[i]): as_finite(d[i + 1]) for i in range(0, len(d), 2)} for d in found if d is not None]

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

    def bandit_view(
        self, rows: tuple[str, ...], arms: tuple[str, ...], discount: float, counted: tuple[str, ...]
    ) -> tuple[dict[str, RowEvidence] | None, dict[str, dict[str, dict[str, float]]] | None]:
        def fetch() -> tuple[dict[str, RowEvidence] | None, dict[str, dict[str, dict[str, float]]] | None]:
            names = [keys.bandit_discounted_key(row, discount) for row in rows]
            names += [keys.bandit_counts_key(row) for row in counted]
            found = self._read_bounded([(n, "h", MAX_BANDIT_FIELDS, 256, str(MAX_NUMBER_BYTES)) for n in names])
            fields = [
                None if d is None else {as_text(d[i]): as_finite(d[i + 1]) for i in range(0, len(d), 2)} for d in found
            ]
            ev_fields, count_fields = fields[: len(rows)], fields[len(rows) :]
            evidence = None  # a row unusable: the caller keeps its local view rather than read it as no evidence
            if all(f is not None for f in ev_fields):
                evidence = {row: evidence_from_fields(f or {}, arms, discount) for row, f in zip(rows, ev_fields)}
            counts = None
            if all(f is not None for f in count_fields):
                counts = {row: counts_from_fields(f or {}, arms) for row, f in zip(counted, count_fields)}
            return evidence, counts

        return self._read(fetch, lambda: (None, None), keys.bandit_discounted_key(rows[0] if rows else "", discount))

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
            counts: dict[str, float] = {as_text(raw[i]): as_finite(raw[i + 1]) for i in range(0, len(raw), 2)}
            used = [(used_raw[i], as_finite(used_raw[i + 1])) for i in range(0, len(used_raw), 2)]
            dis = [(dis_raw[i], as_score(dis_raw[i + 1])) for i in range(0, len(dis_raw), 2)]
            ver = ver_raw[0] if ver_raw else 0
            rows: dict[tuple[str, str], tuple[int, int, float, float]] = {}
            for member, last in used:
                key = as_member(member)
                if key is None or not math.isfinite(last):
                    continue
                m = f"{key[0]}:{key[1]}"
                rows[key] = (  # counts ≥ 0 and a seed in [0, 100], as the knowledge file's model
                    as_count(counts.get(f"f:{m}", 0)),
                    as_count(counts.get(f"i:{m}", 0)),
                    min(max(as_finite(counts.get(f"s:{m}", 0.0)), 0.0), 100.0),
                    float(last),
                )
            dismissals = {}
            for member, exp in dis:
                key = as_member(member)
                if key is not None and math.isfinite(exp):
                    dismissals[key] = float(exp)
            return KnowledgeView(rows, dismissals, as_count(as_finite(ver or 0)))

        return self._read(fetch, lambda: None, base)

    def knowledge_version(self, repo: str) -> int | None:
        key = f"{keys.repo_key(repo)}:ver"

        def fetch() -> int | None:
            pipe = self.client.pipeline(transaction=False)
            pipe.getrange(key, 0, MAX_NUMBER_BYTES - 1)
            (value,) = self._replies(pipe, [key])
            return None if value is None else as_count(as_finite(value or 0))  # None: another type

        return self._read(fetch, lambda: None, key)

    def reset_bandit(self) -> int:
        """Delete the fleet's bandit statistics (every :data:`~.keys.BANDIT_PATTERN` key: the exact
        totals and the discounted sums of every row and discount), for ``dsh-search bandit reset``;
        the number of keys deleted. Sidecars still running keep the evidence they adopted and add
        their next updates to the emptied statistics. Unlike the serving calls this never degrades
        nor queues: raises one of :data:`~.redis_link.STORE_ERRORS` (or another ``redis.RedisError``) when the
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
