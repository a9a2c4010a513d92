""":class:`LocalState`: the shared-state interface for one process, in memory.

The reference implementation of :class:`~.shared.SharedState` (the Redis one must agree with
it, ``tests/unit/state/test_state_redis.py`` runs one contract over both) and what
:class:`~.redis_store.RedisState` serves from while its store is away: a sidecar alone keeps
spacing its own requests, caching and counting. Thread-safe (one lock). Same bounds as the
store: ``maxEntries`` cache entries, :data:`~.shared.BUCKETS` buckets per bandit row,
:data:`MAX_ROWS` knowledge rows and :data:`MAX_DISMISSALS` dismissals per repository.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any, Final, TypeVar

from dsh_sidecar.recent import remember
from dsh_sidecar.state.shared import (
    BUCKETS,
    BanditOp,
    KnowledgeBatch,
    KnowledgeView,
    RowEvidence,
    bucket_weight,
    bucket_width,
    fold_buckets,
)

#: Most knowledge rows kept per repository (as ``suggester/knowledge.py``'s ``MAX_ROWS``).
MAX_ROWS: Final = 5000
#: Most dismissals kept per repository (as ``suggester/knowledge.py``'s ``MAX_DISMISSALS``).
MAX_DISMISSALS: Final = 1000
#: Largest evidence value adopted from a store (as ``bandit/store.py``'s ``MAX_EVIDENCE``).
MAX_EVIDENCE: Final = 1e9
#: Largest update count or reward total read from a shared store (a float counts exactly to it).
MAX_UPDATES: Final = 2**53
#: Most applied-op ids remembered (replays older than this many writes are not expected).
MAX_OP_IDS: Final = 100_000


class _Repo:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], list[float]] = {}  # [followed, ignored, seed, lastUsed]
        self.dismissals: dict[tuple[str, str], float] = {}
        self.version = 0


T = TypeVar("T")


class LocalState:
    """In-memory :class:`~.shared.SharedState`; ``clock`` returns monotonic seconds."""

    kind = "local"

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._cooldowns: dict[str, tuple[str, float]] = {}
        self._windows: dict[str, deque[float]] = {}
        self._cache: OrderedDict[str, tuple[bytes, float]] = OrderedDict()
        self._counts: dict[str, dict[str, float]] = {}
        self._discounted: dict[tuple[str, float], dict[str, float]] = {}
        self._repos: dict[str, _Repo] = {}
        self._ops: OrderedDict[str, None] = OrderedDict()

    @property
    def available(self) -> bool:
        return True

    # ------------------------------------------------------------------ off the event loop
    async def read_within(self, fetch: Callable[[], T], fallback: Callable[[], T], within_s: float) -> T:
        return fetch()  # memory: nothing to wait for

    def read_behind(self, fetch: Callable[[], object]) -> bool:
        fetch()
        return True

    def write_behind(self, send: Callable[[], object]) -> None:
        send()

    # ------------------------------------------------------------------ health
    def cooldown(self, provider: str) -> tuple[str, float] | None:
        with self._lock:
            entry = self._cooldowns.get(provider)
            if entry is None:
                return None
            left = entry[1] - self.clock()
            if left <= 0:
                del self._cooldowns[provider]
                return None
            return entry[0], left

    def start_cooldown(self, provider: str, failure_class: str, seconds: float) -> None:
        if seconds <= 0:
            return
        with self._lock:
            until = self.clock() + seconds
            entry = self._cooldowns.get(provider)
            if entry is None or entry[1] < until:
                self._cooldowns[provider] = (failure_class, until)

    def clear_cooldown(self, provider: str) -> None:
        with self._lock:
            self._cooldowns.pop(provider, None)

    def take_slot(self, provider: str, limit: int, window_s: float, member: str | None = None) -> float:
        with self._lock:
            now = self.clock()
            sent = self._windows.setdefault(provider, deque())
            while sent and sent[0] <= now - window_s:
                sent.popleft()
            if len(sent) < limit:
                sent.append(now)
                return 0.0
            return max(sent[0] + window_s - now, 1e-6)

    def release_slot(self, provider: str, member: str) -> None:
        pass  # this process's windows decide on the spot: nothing is taken for a request not sent

    # ------------------------------------------------------------------ cache
    def cache_get(self, key: str) -> bytes | None:
        with self._lock:
            entry = self._cache.get(key)
            if entry is None:
                return None
            if entry[1] <= self.clock():
                del self._cache[key]
                return None
            return entry[0]

    def prefetch(
        self, key: str | None, providers: tuple[str, ...]
    ) -> tuple[bytes | None, dict[str, tuple[str, float] | None]]:
        return (None if key is None else self.cache_get(key)), {p: self.cooldown(p) for p in providers}

    def cache_put(self, key: str, value: bytes, ttl_s: float, max_entries: int) -> None:
        with self._lock:
            now = self.clock()
            entry = self._cache.get(key)
            if entry is not None and entry[1] > now:
                return  # first writer wins (SET NX)
            remember(self._cache, key, (value, now + ttl_s), max_entries)

    # ------------------------------------------------------------------ bandit
    def _first(self, op_id: str) -> bool:
        """Whether ``op_id`` is new (and remember it). Caller holds the lock."""
        if op_id in self._ops:
            return False
        remember(self._ops, op_id, None, MAX_OP_IDS)
        return True

    def bandit_apply_many(self, ops: list[BanditOp]) -> None:
        for op in ops:
            self.bandit_apply(op)

    def bandit_apply(self, op: BanditOp) -> None:
        width = bucket_width(op.discount)
        with self._lock:
            if not self._first(op.op_id):
                return
            for row in op.rows:
                counts = self._counts.setdefault(row, {})
                disc = self._discounted.setdefault((row, op.discount), {})
                if op.kind == "update":
                    counts[f"{op.arm}:updates"] = counts.get(f"{op.arm}:updates", 0.0) + 1
                    t = int(disc.get("t", 0)) + 1
                    disc["t"] = t
                    if t % width == 0:  # a new bucket: the one BUCKETS widths back is negligible
                        old = t // width - BUCKETS
                        for f in [f for f in disc if f.split(":", 1)[0] == str(old)]:
                            del disc[f]
                    a_inc, b_inc = op.value, 1.0 - op.value
                else:
                    t = int(disc.get("t", 0))
                    a_inc, b_inc = op.value, -op.value
                counts[f"{op.arm}:reward"] = counts.get(f"{op.arm}:reward", 0.0) + op.value
                k, w = bucket_weight(op.discount, width, t)
                for part, inc in (("a", a_inc), ("b", b_inc)):
                    f = f"{k}:{op.arm}:{part}"
                    disc[f] = disc.get(f, 0.0) + inc * w

    def reset_bandit(self) -> int:
        """Forget every bandit statistic of this store; the number of (row) and (row, discount)
        entries dropped (as the Redis store counts its keys)."""
        with self._lock:
            n = len(self._counts) + len(self._discounted)
            self._counts.clear()
            self._discounted.clear()
            return n

    def bandit_evidence(
        self, rows: tuple[str, ...], arms: tuple[str, ...], discount: float
    ) -> dict[str, RowEvidence] | None:
        with self._lock:
            return {
                row: evidence_from_fields(self._discounted.get((row, discount), {}), arms, discount) for row in rows
            }

    def bandit_counts(
        self, rows: tuple[str, ...], arms: tuple[str, ...]
    ) -> dict[str, dict[str, dict[str, float]]] | None:
        with self._lock:
            return {row: counts_from_fields(self._counts.get(row, {}), arms) for row in rows}

    def bandit_view(
        self, rows: tuple[str, ...], arms: tuple[str, ...], discount: float, counted: tuple[str, ...]
    ) -> tuple[dict[str, RowEvidence] | None, dict[str, dict[str, dict[str, float]]] | None]:
        return self.bandit_evidence(rows, arms, discount), self.bandit_counts(counted, arms)

    # ------------------------------------------------------------------ knowledge
    def knowledge_apply(self, batch: KnowledgeBatch) -> None:
        with self._lock:
            if not self._first(batch.op_id):
                return
            repo = self._repos.setdefault(batch.repo, _Repo())
            for key, d in batch.rows.items():
                row = repo.rows.get(key)
                if row is None:  # a seed only ever lands on a row that does not exist yet
                    row = repo.rows[key] = [0, 0, d.seed if d.seed > 0 else 0.0, 0.0]
                row[0] += d.followed
                row[1] += d.ignored
                row[3] = max(row[3], d.last_used)
            if len(repo.rows) > MAX_ROWS:  # least recently used first (as the store's zset)
                order = sorted(repo.rows, key=lambda k: (repo.rows[k][3], member(k)))
                for key in order[: len(repo.rows) - MAX_ROWS]:
                    del repo.rows[key]
            for key, exp in batch.dismissals.items():
                repo.dismissals[key] = max(repo.dismissals.get(key, 0.0), exp)
            if len(repo.dismissals) > MAX_DISMISSALS:
                order = sorted(repo.dismissals, key=lambda k: (repo.dismissals[k], member(k)))
                for key in order[: len(repo.dismissals) - MAX_DISMISSALS]:
                    del repo.dismissals[key]
            repo.version += 1

    def knowledge_view(self, repo: str, now: float) -> KnowledgeView | None:
        with self._lock:
            r = self._repos.get(repo)
            if r is None:
                return KnowledgeView({}, {}, 0)
            for key in [k for k, exp in r.dismissals.items() if exp <= now]:
                del r.dismissals[key]
            rows = {k: (int(v[0]), int(v[1]), float(v[2]), float(v[3])) for k, v in r.rows.items()}
            return KnowledgeView(rows, dict(r.dismissals), r.version)

    def knowledge_version(self, repo: str) -> int | None:
        with self._lock:
            r = self._repos.get(repo)
            return r.version if r else 0

    # ------------------------------------------------------------------ lifecycle
    def status(self) -> dict[str, Any]:
        return {"backend": "file", "shared": False, "available": True}

    def handing(self, writes: int = 1) -> contextlib.AbstractContextManager[None]:
        """Nothing waits for a write on its way here: each lands in memory at once."""
        return contextlib.nullcontext()

    def begin_exit(self) -> None:
        pass

    def close(self, not_handed: int = 0, within_s: float = 0.0, since: float | None = None) -> None:
        pass


def member(key: tuple[str, str]) -> str:
    """``<intent>:<path>``: a knowledge row or dismissal as the store names it (intents hold no ``:``)."""
    return f"{key[0]}:{key[1]}"


def evidence_from_fields(fields: dict[str, float], arms: tuple[str, ...], discount: float) -> RowEvidence:
    """``{arm: [a, b]}`` from a discounted row's fields (``t`` and ``<k>:<arm>:a|b``), each
    floored at 0 (the prior), as ``bandit/policy.py``'s ``apply_adjust`` floors, and capped at
    :data:`MAX_EVIDENCE`; malformed or non-finite fields are ignored."""
    width = bucket_width(discount)
    n = int(min(max(fields.get("t", 0), 0), MAX_UPDATES))  # a store's t is not trusted either
    newest = n // width
    sums: dict[tuple[str, str], dict[int, float]] = {}
    for name, value in fields.items():
        parts = name.split(":")
        if len(parts) != 3 or len(parts[0]) > 20:
            continue
        try:
            k, v = int(parts[0]), float(value)
        except ValueError:
            continue
        # a store is shared, not trusted: nothing non-finite, and no bucket outside the ones a
        # row of t updates can hold (γ^(n − E_k) of a far bucket overflows), reaches the policy
        if math.isfinite(v) and newest - BUCKETS - 1 <= k <= newest:
            sums.setdefault((parts[1], parts[2]), {})[k] = v
    out: RowEvidence = {}
    for arm in arms:
        folded = (fold_buckets(discount, width, n, sums.get((arm, part), {})) for part in ("a", "b"))
        out[arm] = [min(max(x, 0.0), MAX_EVIDENCE) if math.isfinite(x) else 0.0 for x in folded]
    return out


def counts_from_fields(fields: dict[str, float], arms: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """``{arm: {"updates": n, "reward": Σr}}`` from a counts row's fields."""

    def bounded(value: float) -> float:
        return min(max(float(value), 0.0), float(MAX_UPDATES)) if math.isfinite(value) else 0.0

    return {
        arm: {
            "updates": bounded(fields.get(f"{arm}:updates", 0.0)),
            "reward": bounded(fields.get(f"{arm}:reward", 0.0)),
        }
        for arm in arms
    }
