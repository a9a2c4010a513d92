"""The shared-state interface: what a fleet of sidecars shares, as atomic operations only.

One :class:`SharedState` holds, for every sidecar pointed at it:

* **provider health**: cooldowns and ``Retry-After`` windows (:meth:`~SharedState.cooldown`,
  :meth:`~SharedState.start_cooldown`, :meth:`~SharedState.clear_cooldown`) and per-key
  request spacing for providers with a documented rate limit (:meth:`~SharedState.take_slot`,
  a sliding window);
* **the search cache** (:meth:`~SharedState.cache_get` / :meth:`~SharedState.cache_put`,
  first writer wins, TTL, bounded entries);
* **the bandit's sufficient statistics** per query class (:meth:`~SharedState.bandit_apply`,
  :meth:`~SharedState.bandit_evidence`, :meth:`~SharedState.bandit_counts`);
* **the suggester's knowledge counters and dismissals** keyed by repository identity
  (:meth:`~SharedState.knowledge_apply`, :meth:`~SharedState.knowledge_view`,
  :meth:`~SharedState.knowledge_version`).

Every write is an increment, a conditional set or an append, never a read-modify-write, so N
sidecars writing at once lose nothing; every write carries an ``op_id`` so a replay after an
outage counts once. Implementations: :class:`~.local.LocalState` (one process, in memory) and
:class:`~.redis_store.RedisState` (Redis/Valkey). Key layout: :mod:`.keys`.

**The discounted statistics as increments.** The bandit discounts a row's evidence by γ per
update of that row (``policy.apply_update``): after ``N`` updates an arm holds
``a = Σ_t γ^(N−t)·r_t`` (over the updates ``t`` that chose it), a multiplication of the whole
row per update that no increment can express. Written relative to a bucket instead, it can:
updates are numbered ``t = 1, 2, …`` per row (an atomic counter), bucket ``k = ⌊t/W⌋`` of width
:func:`bucket_width` holds ``S_k = Σ_{t∈k} r_t·γ^(E_k−t)`` with ``E_k = (k+1)·W`` (an
``HINCRBYFLOAT`` of ``r·γ^(E_k−t)``), and ``a = Σ_k γ^(N−E_k)·S_k`` — the same sum (equal up to
floating-point rounding). Buckets older than :data:`BUCKETS` widths weigh below γ^(W·(BUCKETS−1)) ≤
:data:`NEGLIGIBLE` and are deleted, so a row is bounded. γ = 1 (the seed's stationary rule) is
one bucket forever.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, TypeVar

#: Weight below which an old bucket of discounted evidence is dropped (relative to a fresh
#: observation's weight 1): far below the 6-decimal rounding of every figure we show.
NEGLIGIBLE: Final = 1e-12
#: Buckets of discounted evidence kept per row (older ones weigh ≤ :data:`NEGLIGIBLE`).
BUCKETS: Final = 32
#: Smallest bucket width, updates.
MIN_BUCKET_WIDTH: Final = 16
#: Bucket width used for γ = 1 (never discounted): every update lands in bucket 0.
STATIONARY_WIDTH: Final = 2**52

#: Pause of a background writer before it works, seconds: the reply whose call queued the
#: write is serialised and written first instead of competing with it for the interpreter lock.
YIELD_S: Final = 0.002

#: Longest :meth:`SharedState.close` waits for the store by default, seconds: the queued writes are
#: sent for this long on a thread of their own (a command of a slow store may take ``timeoutMs``,
#: up to 5 s), and what is not acknowledged by then is counted and told. The exit is on the
#: harness's clock: DeepSeek Harness waits 2 s for the ``shutdown`` reply and 3 s for the exit, the
#: MCP SDK's stdio client 2 s before its SIGTERM (docs/fleet.md, "The start and the exit"). Not
#: less: a healthy store's one round trip took over 0.2 s at exit on this loaded machine (the
#: process's own build threads hold the interpreter), one write lost per exit in the fleet test.
EXIT_FLUSH_S: Final = 1.0
#: The same for an MCP server, for its whole exit (the flushes' hand-over within it: counted from
#: the exit's start, ``sidecar/fleetexit.py``): Claude Code sends one SIGINT, SIGTERM 100 ms later
#: and SIGKILL 400 ms after that; a write cut by the SIGKILL would be lost uncounted. The process's
#: own end after the state is written took up to 0.1 s more with two busy loops on 2 cores
#: (``bench/mcp_exit.py``), so 0.25 s leaves the SIGKILL 0.15 s; a healthy store's writes at exit
#: took under 0.07 s there.
EXIT_FLUSH_MCP_S: Final = 0.25

T = TypeVar("T")

#: The arms' evidence of one row, ``{arm: [a, b]}`` above the prior (see ``bandit/policy.py``).
RowEvidence = dict[str, list[float]]


def bucket_width(discount: float) -> int:
    """Updates per bucket for discount γ: the smallest width ≥ :data:`MIN_BUCKET_WIDTH` such
    that :data:`BUCKETS` buckets span the horizon where γ^t falls below :data:`NEGLIGIBLE`
    (γ = 0.99: 89 updates); :data:`STATIONARY_WIDTH` for γ ≥ 1. Raises ``ValueError`` for γ ≤ 0."""
    if discount <= 0:
        raise ValueError("discount must be > 0")
    if discount >= 1:
        return STATIONARY_WIDTH
    horizon = math.log(NEGLIGIBLE) / math.log(discount)
    return max(MIN_BUCKET_WIDTH, math.ceil(horizon / (BUCKETS - 1)))


def bucket_weight(discount: float, width: int, t: int) -> tuple[int, float]:
    """``(bucket k, weight γ^(E_k − t))`` of update number ``t`` (``E_k = (k+1)·width``)."""
    k = t // width
    return k, 1.0 if discount >= 1 else discount ** ((k + 1) * width - t)


def fold_buckets(discount: float, width: int, n: int, sums: Mapping[int, float]) -> float:
    """``Σ_k γ^(n − E_k)·S_k``: the discounted total after ``n`` updates from per-bucket sums."""
    if discount >= 1:
        return sum(sums.values())
    return sum(s * discount ** (n - (k + 1) * width) for k, s in sums.items())


@dataclass(frozen=True)
class BanditOp:
    """One bandit write, as the shared store replays it.

    ``kind`` ``update``: a new observation with reward ``value`` in [0, 1] of ``arm`` in each of
    ``rows`` (the row's update counter +1, the row discounted by ``discount``); ``adjust``: an
    earlier observation re-credited by ``value`` (``a += value``, ``b −= value`` at the row's
    current time, no new update). ``arms`` are all the arms of a row (old buckets of each are
    pruned). ``op_id`` makes a replay idempotent."""

    op_id: str
    kind: Literal["update", "adjust"]
    rows: tuple[str, ...]
    arm: str
    value: float
    discount: float
    arms: tuple[str, ...]


@dataclass(frozen=True)
class KnowledgeRow:
    """Deltas of one (intent, path) row: follow/ignore increments, a seed pseudo-count set only
    where the row has none (0: no seed), and a last-use time (epoch seconds) kept as a maximum."""

    followed: int = 0
    ignored: int = 0
    seed: float = 0.0
    last_used: float = 0.0


@dataclass(frozen=True)
class KnowledgeBatch:
    """One flush of a sidecar's pending knowledge: ``rows`` ``{(intent, path): KnowledgeRow}``
    and ``dismissals`` ``{(intent, path|'*'): expiresAt epoch seconds}`` (kept as a maximum) of
    the repository ``repo`` (its identity, :func:`~dsh_sidecar.workspace.identity.repository_identity`)."""

    op_id: str
    repo: str
    rows: Mapping[tuple[str, str], KnowledgeRow] = field(default_factory=dict)
    dismissals: Mapping[tuple[str, str], float] = field(default_factory=dict)


@dataclass
class KnowledgeView:
    """What the store holds of one repository: ``rows`` ``{(intent, path): (followed, ignored,
    seed, lastUsed)}`` and the unexpired ``dismissals`` ``{(intent, path): expiresAt}``."""

    rows: dict[tuple[str, str], tuple[int, int, float, float]]
    dismissals: dict[tuple[str, str], float]
    version: int = 0


class SharedState(Protocol):
    """The shared state of a fleet (see the module docstring). Implementations never raise for a
    store that is away: reads then answer from what this process knows, writes are kept and
    re-sent when the store returns (:attr:`available` says which mode is on)."""

    #: ``local`` or ``redis``.
    kind: str

    @property
    def available(self) -> bool:
        """Whether the shared store answers (``False``: serving from this process's state)."""
        ...

    # -- off the event loop: every operation below may wait for the store (``timeoutMs``); an
    # event loop runs them through these, never directly
    async def read_within(self, fetch: Callable[[], T], fallback: Callable[[], T], within_s: float) -> T:
        """``fetch()`` (reads of this interface) on a bounded pool of threads, awaited at most
        ``within_s`` and ``timeoutMs``; ``fallback()`` (what this process knows) when the store is
        away, late, or the pool's queue is full."""
        ...

    def read_behind(self, fetch: Callable[[], object]) -> bool:
        """``fetch()`` on the same pool, not waited for; ``False`` when it was not queued."""
        ...

    def write_behind(self, send: Callable[[], object]) -> None:
        """``send()`` (writes of this interface) on one background thread, in order; not waited for."""
        ...

    # -- provider health
    def cooldown(self, provider: str) -> tuple[str, float] | None:
        """``(failure class, seconds left)`` of ``provider``'s cooldown, ``None`` when usable."""
        ...

    def start_cooldown(self, provider: str, failure_class: str, seconds: float) -> None:
        """Cool ``provider`` down for ``seconds`` (a longer running cooldown is kept)."""
        ...

    def clear_cooldown(self, provider: str) -> None:
        """End ``provider``'s cooldown (it answered)."""
        ...

    def take_slot(self, provider: str, limit: int, window_s: float, member: str | None = None) -> float:
        """Take one of ``limit`` request slots per sliding ``window_s`` seconds of ``provider``
        (all sidecars together): ``0.0`` when taken, else the seconds until one frees (nothing
        taken). ``member`` names the slot for :meth:`release_slot` (default: a fresh id)."""
        ...

    def release_slot(self, provider: str, member: str) -> None:
        """Give back the slot ``member`` of ``provider`` (taken for a request never sent)."""
        ...

    # -- search cache
    def cache_get(self, key: str) -> bytes | None:
        """The cached answer under ``key``, or ``None``."""
        ...

    def prefetch(
        self, key: str | None, providers: tuple[str, ...]
    ) -> tuple[bytes | None, dict[str, tuple[str, float] | None]]:
        """What a search reads before its first attempt, in one round trip: the cached answer
        under ``key`` (``None``: no cache) and each of ``providers``' cooldown (as
        :meth:`cooldown`)."""
        ...

    def cache_put(self, key: str, value: bytes, ttl_s: float, max_entries: int) -> None:
        """Store ``value`` under ``key`` for ``ttl_s`` seconds unless present (first writer
        wins); past ``max_entries`` the oldest entries are evicted."""
        ...

    # -- bandit
    def bandit_apply(self, op: BanditOp) -> None:
        """Apply one bandit write (idempotent per ``op.op_id``)."""
        ...

    def bandit_apply_many(self, ops: list[BanditOp]) -> None:
        """Apply ``ops`` in order, in one round trip (each as :meth:`bandit_apply`)."""
        ...

    def bandit_evidence(
        self, rows: tuple[str, ...], arms: tuple[str, ...], discount: float
    ) -> dict[str, RowEvidence] | None:
        """The discounted evidence ``{row: {arm: [a, b]}}`` (each ≥ 0) of ``rows``, ``None``
        when the store is away (keep the local view)."""
        ...

    def bandit_counts(
        self, rows: tuple[str, ...], arms: tuple[str, ...]
    ) -> dict[str, dict[str, dict[str, float]]] | None:
        """Undiscounted totals ``{row: {arm: {"updates": n, "reward": Σr}}}`` (exact counts)."""
        ...

    def bandit_view(
        self, rows: tuple[str, ...], arms: tuple[str, ...], discount: float, counted: tuple[str, ...]
    ) -> tuple[dict[str, RowEvidence] | None, dict[str, dict[str, dict[str, float]]] | None]:
        """:meth:`bandit_evidence` of ``rows`` and :meth:`bandit_counts` of ``counted``, in one
        round trip."""
        ...

    def reset_bandit(self) -> int:
        """Delete every bandit statistic (all rows, all discounts) for ``dsh-search bandit
        reset``; the number of stored entries deleted. Raises when the store does not answer
        (an administrative call: never degraded to local state, never queued)."""
        ...

    # -- suggester knowledge
    def knowledge_apply(self, batch: KnowledgeBatch) -> None:
        """Apply one knowledge flush (idempotent per ``batch.op_id``)."""
        ...

    def knowledge_view(self, repo: str, now: float) -> KnowledgeView | None:
        """Everything known of ``repo`` at epoch ``now``; ``None`` when the store is away."""
        ...

    def knowledge_version(self, repo: str) -> int | None:
        """A number that changes whenever ``repo``'s knowledge does; ``None`` when away."""
        ...

    # -- lifecycle
    def status(self) -> dict[str, Any]:
        """``{backend, available, …}`` for ``dsh/status`` (no secret)."""
        ...

    def handing(self, writes: int = 1) -> AbstractContextManager[None]:
        """``writes`` writes on their way from a writer thread that took them off its own queue:
        the exit's :meth:`close` waits for them (within its bound) to reach the store's queue, or
        counts them as not handed. They are made on the same thread, inside the block, in one
        call (:meth:`bandit_apply`, :meth:`bandit_apply_many`, :meth:`knowledge_apply`)."""
        ...

    def begin_exit(self) -> None:
        """The process is exiting: no call waits for the store from now on (reads answer
        locally, writes are queued for :meth:`close`)."""
        ...

    def close(self, not_handed: int = 0, within_s: float = EXIT_FLUSH_S, since: float | None = None) -> None:
        """Release connections and threads: queued writes are sent once, within a bound, and
        those not sent (and ``not_handed``, writes the exit's flushes kept) counted and told.
        The bound ``within_s`` counts from ``since`` (a :func:`time.monotonic` time: the exit's
        start) when given, else from the call."""
        ...
