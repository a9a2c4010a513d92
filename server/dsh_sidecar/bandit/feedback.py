"""The answer-usage reward of ``dsh/searchFeedback`` (the bandit seed's "stronger version":
"score reward against whether the model's final answer actually used the returned sources").

The harness reports, after the answer, which URLs it used (or the answer's text, from which
the cited URLs are taken: :mod:`.usage`). For that search::

    used   = the search's earlier usage OR (any reported URL is one of its returned sources)
    reward = w * used + (1 - w) * heuristic

``w`` is ``feedbackWeight`` (default :data:`DEFAULT_FEEDBACK_WEIGHT` = 0.5: relevance and
the seed's cost/coverage heuristic weighted equally, as the seed weights its two halves; 1.0
replaces the heuristic). ``used`` only ever goes from "no report" or "not used" to "used": a
later answer that cites a source counts, a later answer about something else does not undo
it, so reports of the same search in any order and any number end in the same reward. The
search was already credited with the heuristic when it ran; each report *re-credits* it by
``reward − credited`` (:func:`~.policy.apply_adjust`), so a search counts once.

Searches wait for feedback in a bounded map (:class:`PendingSearches`): the newest
``max_pending`` for at most ``ttl_s`` seconds; older ones are dropped (then feedback is
refused with an error naming ``searchId``). With a state folder the map is also kept in
``$DSH_HOME/bandit/pending.json`` (:class:`PendingFile`, like the posteriors: atomic, 0600,
locked, written behind), so a search can be reported after a restart, and a report is applied
under the file's lock: two sidecars sharing the folder re-credit a search once.
"""

from __future__ import annotations

import atexit
import json
import logging
import math
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.errors import RequestError
from dsh_sidecar.recent import remember

log = logging.getLogger(__name__)

#: Default weight of the usage half of the feedback reward (see module docstring).
DEFAULT_FEEDBACK_WEIGHT: Final = 0.5
#: Default searches kept waiting for feedback.
DEFAULT_MAX_PENDING: Final = 1000
#: Default seconds a search waits for its feedback (an agent turn rarely lasts an hour).
DEFAULT_TTL_S: Final = 3600.0
#: File name under ``$DSH_HOME/bandit/``.
PENDING_FILE: Final = "pending.json"
#: Format version of the pending document.
PENDING_VERSION: Final = 1
#: Most searches the file keeps (the newest), whatever ``max_pending`` says: the file stays
#: under a few MiB (an entry is ~0.3 KiB).
MAX_PERSISTED: Final = 10_000
#: Largest pending document accepted, bytes.
MAX_PENDING_BYTES: Final = 8 * 1024 * 1024
#: Most source keys kept per search (the arms return at most 50).
MAX_KEYS: Final = 100
#: Longest a queued search waits before it lands in the file, seconds.
WRITE_DELAY_S: Final = 1.0


def usage_reward(used: bool, heuristic: float, weight: float = DEFAULT_FEEDBACK_WEIGHT) -> float:
    """``weight * used + (1 - weight) * heuristic``, in [0, 1]."""
    return weight * (1.0 if used else 0.0) + (1.0 - weight) * min(max(heuristic, 0.0), 1.0)


class UnknownSearch(RequestError):
    """Feedback for a ``searchId`` that was never returned, or was dropped (too old): the
    client's error, answered -32602 naming ``searchId``."""


@dataclass
class PendingSearch:
    """One search awaiting feedback: its class, arm, heuristic reward, the reward it is
    currently credited with, the keys of its returned sources (:func:`~.usage.url_key`), when
    it ran (epoch seconds), and its usage so far (``None``: no report yet)."""

    query_class: str
    arm: str
    heuristic: float
    credited: float
    keys: frozenset[str]
    at: float
    used: bool | None = None

    def document(self) -> dict[str, Any]:
        """The entry as stored in ``pending.json``."""
        return {
            "class": self.query_class,
            "arm": self.arm,
            "heuristic": self.heuristic,
            "credited": self.credited,
            "keys": sorted(self.keys),
            "at": self.at,
            "used": self.used,
        }


@dataclass(frozen=True)
class Recredit:
    """What one report did to a search: its usage and reward now, the reward before, and the
    re-credit applied to the posterior (``reward − previous``; 0 when nothing changed)."""

    search_id: str
    query_class: str
    arm: str
    used: bool
    reward: float
    previous: float

    @property
    def delta(self) -> float:
        return self.reward - self.previous


def recredit(search_id: str, item: PendingSearch, hit: bool, weight: float) -> Recredit:
    """Apply one report to ``item`` in place (usage OR ``hit``, reward re-computed) and say
    what changed."""
    used = bool(item.used) or hit
    reward = usage_reward(used, item.heuristic, weight)
    previous = item.credited
    item.used, item.credited = used, reward
    return Recredit(search_id, item.query_class, item.arm, used, reward, previous)


class PendingSearches:
    """The bounded map ``searchId → PendingSearch`` (oldest dropped first, and past ``ttl_s``).
    Thread-safe: a report is applied off the event loop while searches are added on it."""

    def __init__(
        self,
        max_pending: int = DEFAULT_MAX_PENDING,
        ttl_s: float = DEFAULT_TTL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.max_pending = max_pending
        self.ttl_s = ttl_s
        self.clock = clock
        self._items: OrderedDict[str, PendingSearch] = OrderedDict()
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, search_id: object) -> bool:
        return search_id in self._items

    def add(self, search_id: str, query_class: str, arm: str, heuristic: float, keys: Iterable[str]) -> PendingSearch:
        """Remember a search (its reward so far is the heuristic); returns a copy of its entry."""
        item = PendingSearch(query_class, arm, heuristic, heuristic, frozenset(keys), self.clock())
        self.put(search_id, item)
        return replace(item)

    def put(self, search_id: str, item: PendingSearch) -> None:
        """Insert or replace an entry (loaded from the file, or merged back from it)."""
        with self._lock:
            remember(self._items, search_id, item, self.max_pending)

    def _expire(self) -> None:
        now = self.clock()
        while self._items:
            oldest_id, oldest = next(iter(self._items.items()))
            if now - oldest.at <= self.ttl_s:
                break
            del self._items[oldest_id]

    def snapshot(self, search_id: str) -> PendingSearch | None:
        """A copy of the live entry, or ``None`` (unknown or expired)."""
        with self._lock:
            self._expire()
            item = self._items.get(search_id)
            return replace(item) if item is not None else None

    def get(self, search_id: str) -> PendingSearch:
        """A copy of the pending search. Raises :class:`UnknownSearch` (message names ``searchId``)."""
        item = self.snapshot(search_id)
        if item is None:
            raise self.unknown(search_id)
        return item

    def ids(self) -> list[str]:
        """The live search ids, oldest first."""
        with self._lock:
            self._expire()
            return list(self._items)

    def recredit(self, reports: list[tuple[str, frozenset[str]]], weight: float) -> list[Recredit | None]:
        """Apply ``reports`` (search id, keys of the URLs reported used) to the entries here;
        ``None`` for an unknown or expired search."""
        out: list[Recredit | None] = []
        with self._lock:
            self._expire()
            for sid, keys in reports:
                item = self._items.get(sid)
                out.append(None if item is None else recredit(sid, item, bool(item.keys & keys), weight))
        return out

    def unknown(self, search_id: str) -> UnknownSearch:
        return UnknownSearch(
            f"searchId: unknown or expired search {search_id[:64]!r} (feedback is accepted for the "
            f"last {self.max_pending} searches within {self.ttl_s:g} s)"
        )


# --------------------------------------------------------------------------- the file


def _entry(data: Any) -> PendingSearch:
    if not isinstance(data, dict):
        raise ValueError("bad entry")
    cls, arm, keys, used = data.get("class"), data.get("arm"), data.get("keys"), data.get("used")
    if not isinstance(cls, str) or not 0 < len(cls) <= 64 or arm not in ("quick", "thorough"):
        raise ValueError("bad class or arm")
    numbers = []
    for name in ("heuristic", "credited", "at"):
        v = data.get(name)
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise ValueError("bad number")
        numbers.append(float(v))
    heuristic, credited, at = numbers
    if not (0 <= heuristic <= 1 and 0 <= credited <= 1 and at >= 0):
        raise ValueError("number out of range")
    if not isinstance(keys, list) or len(keys) > MAX_KEYS or not all(isinstance(k, str) and len(k) == 16 for k in keys):
        raise ValueError("bad keys")
    if used is not None and not isinstance(used, bool):
        raise ValueError("bad usage")
    return PendingSearch(cls, arm, heuristic, credited, frozenset(keys), at, used)


def validate_pending(data: Any) -> dict[str, PendingSearch]:
    """The searches of a pending document. Raises ``ValueError`` for anything else."""
    if not isinstance(data, dict) or data.get("version") != PENDING_VERSION:
        raise ValueError("not a pending-feedback document")
    searches = data.get("searches")
    if not isinstance(searches, dict) or len(searches) > MAX_PERSISTED:
        raise ValueError("bad searches")
    out: dict[str, PendingSearch] = {}
    for sid, entry in searches.items():
        if not isinstance(sid, str) or not 0 < len(sid) <= 200:
            raise ValueError("bad search id")
        out[sid] = _entry(entry)
    return out


def pending_document(items: dict[str, PendingSearch]) -> dict[str, Any]:
    return {"version": PENDING_VERSION, "searches": {sid: item.document() for sid, item in items.items()}}


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


class PendingEncoder:
    """The bytes of ``pending.json`` for a map of searches: what ``json.dumps`` of
    :func:`pending_document` writes (compact, keys sorted), with each entry's JSON kept from
    the last call while the entry's values are the same (the file is written whole once a
    second, and an entry changes once at most, when a report re-credits it: 1,000 entries were
    ~15 ms of CPU a write to dump again). Holds the entries of its last call only."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple[Any, ...], str]] = {}

    def __call__(self, items: dict[str, PendingSearch]) -> bytes:
        kept, parts = {}, []
        for sid in sorted(items):
            item = items[sid]
            values = (item.query_class, item.arm, item.heuristic, item.credited, item.keys, item.at, item.used)
            last = self._entries.get(sid)
            entry = last[1] if last is not None and last[0] == values else _dumps(item.document())
            kept[sid] = (values, entry)
            parts.append(f"{_dumps(sid)}:{entry}")
        self._entries = kept
        return f'{{"searches":{{{",".join(parts)}}},"version":{PENDING_VERSION}}}'.encode()


def _adding(batch: dict[str, PendingSearch]) -> Callable[[dict[str, PendingSearch]], None]:
    """The change that adds ``batch``'s new searches to the file's (an entry already there,
    re-credited by a report, stays)."""

    def change(items: dict[str, PendingSearch]) -> None:
        for sid, item in batch.items():
            items.setdefault(sid, item)

    return change


class PendingFile:
    """Keeps :class:`PendingSearches` in ``home/bandit/pending.json`` (``home`` ``None``:
    memory only). New searches are written behind (one locked write for those queued within
    :data:`WRITE_DELAY_S`); a report is applied under the lock (:meth:`recredit`). A file that
    cannot be written turns persistence off for the process (warned once), as the posteriors'."""

    def __init__(self, home: Path | None, write_delay_s: float = WRITE_DELAY_S) -> None:
        from dsh_sidecar.state import StateFile  # filelock: not needed to parse the config

        self.path = home / "bandit" / PENDING_FILE if home is not None else None
        self.warnings: list[str] = []
        self.file = (
            StateFile(self.path, validate_pending, max_bytes=MAX_PENDING_BYTES, warnings=self.warnings)
            if self.path is not None
            else None
        )
        self.persisting = self.file is not None
        self.write_delay_s = write_delay_s
        self._cond = threading.Condition()
        self._queue: dict[str, PendingSearch] = {}
        self._writing = False
        self._urgent = False
        self._writer: threading.Thread | None = None
        self._limits: tuple[int, float, Callable[[], float]] = (DEFAULT_MAX_PENDING, DEFAULT_TTL_S, time.time)
        #: The searches the last update wrote (set under the file's lock, :meth:`_update`): the
        #: next update takes them instead of reading the file back while the file is the one
        #: written (:meth:`~dsh_sidecar.state.StateFile.update`'s ``reuse``). Never changed in
        #: place: a change copies an entry before changing it (:meth:`recredit`).
        self._written: dict[str, PendingSearch] = {}
        self._encode = PendingEncoder()

    def load(self, pending: PendingSearches) -> None:
        """Adopt the file's searches that are still within ``pending``'s bounds."""
        self._limits = (pending.max_pending, pending.ttl_s, pending.clock)
        if self.file is None:
            return
        doc = self.file.read()
        if doc is None:
            return
        now = pending.clock()
        for sid, item in sorted(doc.items(), key=lambda kv: kv[1].at):
            if now - item.at <= pending.ttl_s:
                pending.put(sid, item)

    def _prune(self, items: dict[str, PendingSearch]) -> dict[str, PendingSearch]:
        max_pending, ttl_s, clock = self._limits
        now = clock()
        live = sorted(((sid, it) for sid, it in items.items() if now - it.at <= ttl_s), key=lambda kv: kv[1].at)
        return dict(live[-min(max_pending, MAX_PERSISTED) :])

    def start_writer(self) -> None:
        """Start the writer thread now, when the file persists (idempotent; see
        :meth:`~dsh_sidecar.bandit.store.PosteriorStore.start_writer`)."""
        if not self.persisting:
            return
        with self._cond:
            if self._writer is None:
                self._writer = threading.Thread(target=self._run, name="dsh-bandit-pending", daemon=True)
                self._writer.start()
                _LIVE.add(self)

    def submit(self, search_id: str, item: PendingSearch, pending: PendingSearches) -> None:
        """Queue a new search for the file (landed within :data:`WRITE_DELAY_S`)."""
        if not self.persisting:
            return
        with self._cond:
            self._limits = (pending.max_pending, pending.ttl_s, pending.clock)
            self._queue[search_id] = replace(item)
            if self._writer is None:
                self._writer = threading.Thread(target=self._run, name="dsh-bandit-pending", daemon=True)
                self._writer.start()
                _LIVE.add(self)
            if len(self._queue) == 1:
                # only a writer waiting for an empty queue needs waking: one collecting a batch
                # takes this search with it (waking it on every search took the GIL from the
                # event loop each time, for nothing: bandit/store.py does the same)
                self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    if self._writer is not threading.current_thread():
                        return
                    self._cond.wait()
                if not self._urgent:
                    self._cond.wait_for(lambda: self._urgent, timeout=self.write_delay_s)
                batch, self._queue = self._queue, {}
                self._urgent, self._writing = False, True
            try:
                self._update(_adding(batch))
            finally:
                with self._cond:
                    self._writing = False
                    self._cond.notify_all()

    def _update(self, change: Callable[[dict[str, PendingSearch]], Any]) -> dict[str, PendingSearch] | None:
        """``change`` the file's current searches under its lock and write them back (pruned);
        ``None`` when persistence is (or turns) off."""
        if self.file is None or not self.persisting:
            return None
        merged: dict[str, PendingSearch] = {}

        def merge(current: dict[str, PendingSearch] | None) -> dict[str, PendingSearch]:
            items = dict(current or {})
            change(items)
            merged.update(self._prune(items))
            self._written = merged  # under the lock: taken only if the write lands (StateFile.update)
            return merged

        from filelock import Timeout  # not imported to parse the config (the serve path's initialize)

        try:
            self.file.update(merge, reuse=lambda: self._written, encode=self._encode)
        except (OSError, Timeout) as exc:
            self.persisting = False
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            message = f"bandit feedback state {self.path} cannot be written ({reason}); keeping pending searches in memory only"
            self.warnings.append(message)
            log.warning("%s", message)
            return None
        return merged

    def recredit(
        self, pending: PendingSearches, reports: list[tuple[str, frozenset[str]]], weight: float
    ) -> list[Recredit | None]:
        """Apply ``reports`` (search id, keys of the URLs reported used), each to the file's
        entry under the lock (the memory entry when the file has none), and bring the memory
        entries up to date. ``None`` for a search neither knows. Falls back to memory alone
        when the file cannot be written."""
        if self.file is None or not self.persisting:
            return pending.recredit(reports, weight)
        self.flush()  # a search queued for the file lands before its report
        known = {sid: pending.snapshot(sid) for sid, _keys in reports}
        out: list[Recredit | None] = []
        now = pending.clock()

        def change(items: dict[str, PendingSearch]) -> None:
            out.clear()
            for sid, keys in reports:
                item = items.get(sid) or known.get(sid)
                if item is None or now - item.at > pending.ttl_s:
                    out.append(None)
                    continue
                item = replace(item)  # changed in a copy: the written searches stay as written
                out.append(recredit(sid, item, bool(item.keys & keys), weight))
                items[sid] = item

        merged = self._update(change)
        if merged is None:
            return pending.recredit(reports, weight)
        for sid, _keys in reports:
            if sid in merged:
                pending.put(sid, merged[sid])
        return out

    def flush(self, timeout_s: float | None = None) -> bool:
        """Land the queued searches now; ``True`` when they landed within ``timeout_s``."""
        with self._cond:
            if not self._queue and not self._writing:
                return True
            self._urgent = True
            self._cond.notify_all()
            return self._cond.wait_for(lambda: not self._queue and not self._writing, timeout=timeout_s)

    def close(self) -> None:
        """Flush and stop the writer thread."""
        self.flush()
        with self._cond:
            self._writer = None
            self._cond.notify_all()
        _LIVE.discard(self)

    def reset(self) -> None:
        """Forget every pending search in the file too."""
        self.flush()
        self._update(lambda items: items.clear())


#: Files with a running writer: flushed at interpreter exit.
_LIVE: weakref.WeakSet[PendingFile] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for pending_file in list(_LIVE):
        try:
            pending_file.flush(timeout_s=5.0)
        except Exception:  # exit must go on
            log.warning("bandit: pending-feedback flush at exit failed", exc_info=True)
