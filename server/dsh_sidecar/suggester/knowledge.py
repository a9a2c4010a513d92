"""The knowledge file (plan, "The learning" / "The dismissal"): what the suggester learned, and
the durable dismissals, at ``persistPath`` (default ``$DSH_HOME/search-suggester/knowledge.json``).

Document (JSON, written through :class:`~dsh_sidecar.state.StateFile`: atomic temp + rename,
mode 0600, ``filelock``; a corrupt or foreign file is moved aside and the suggester starts cold
with a warning, because the static pack alone is enough to emit)::

    {"schema": "dsh-search-suggester/knowledge", "version": 1,
     "workspaces": {"<repository identity>": {
         "rows": {"<Intent>": {"<repo-relative path>":
                   {"followed": 3, "ignored": 1, "seed": 1.0, "lastUsed": 1764480000.0}}},
         "dismissals": {"<Intent>": {"<path>|*": <expiresAt, epoch seconds>}}}}}

Rows are keyed per repository because candidate paths are repo-relative; the key is the
repository identity (``workspace/identity.py``: ``remote:<host>/<path>``, ``root:<sha>`` or
``path:<absolute root>``), so a moved or re-cloned repository keeps what was learned. ``seed`` is the offline
seed's pseudo-count (1.0 for a built-in pack candidate, 2.0 when the graph proves it).

**No lost update between sidecars**: in memory the store keeps the loaded snapshot plus the
*pending deltas* (count increments, seed rows to insert when absent, new dismissals); a flush
applies those deltas to whatever is on disk under the lock (:meth:`StateFile.update`), never
the stale snapshot, then adopts the merged document as its new view.

**Bounded**: past :data:`MAX_ROWS` rows (all workspaces together) the oldest / least-used rows
are evicted: ordered by ``lastUsed``, then ``followed + ignored``, then ``seed``, lowest first.
Expired dismissals are pruned on every read and every flush (no timers).

**Fleet** (docs/fleet.md): with a shared state (:meth:`Knowledge.share`) the file is not used: a
flush sends the pending deltas as increments (``HINCRBY`` counts, seeds only where no row
exists, last use and dismissal expiry kept as maxima) under the **repository identity**
(``workspace/identity.py``) instead of the absolute root, and the view is re-read whenever the
store's version of the repository changed (checked at most every :data:`SHARED_REFRESH_S`, one
round trip). The first read, the checks and the re-reads run on the store's read threads,
never on the request path: a call answers from the view it has (this process's own until the
first read lands, and while the store is away).
A store that is away keeps the local view; its writes are re-sent when it returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel, ConfigDict, Field

from dsh_sidecar.state import StateFile

if TYPE_CHECKING:
    from dsh_sidecar.state.shared import KnowledgeBatch, KnowledgeView, SharedState

log = logging.getLogger(__name__)

#: ``schema`` field of our document; anything else is a foreign file (kept aside).
SCHEMA: Final = "dsh-search-suggester/knowledge"
#: Document version; a different version is treated as foreign.
VERSION: Final = 1
#: Most learned rows kept in one file, all workspaces together (oldest/least used evicted).
MAX_ROWS: Final = 5000
#: Most dismissals kept in one file (the ones expiring first are dropped past it).
MAX_DISMISSALS: Final = 1000
#: Longest path recorded, characters (a longer one is not learned).
MAX_PATH_CHARS: Final = 1024
#: Largest knowledge file accepted, bytes (larger = corrupt, kept aside).
MAX_FILE_BYTES: Final = 4 * 1024 * 1024
#: Least seconds between two background learning flushes (dismissals and ``shutdown`` flush
#: at once).
FLUSH_INTERVAL_S: Final = 2.0
#: Longest wait for a running worker flush before the final one (``shutdown``), seconds.
FLUSH_JOIN_S: Final = 15.0
#: Least seconds between two checks of a shared store's version of the repository: what
#: another sidecar learned or dismissed is seen within this (one round trip per check).
SHARED_REFRESH_S: Final = 0.1
#: Longest a call off the event loop waits for the shared view's first read, seconds (the read's
#: commands are bounded by ``state.timeoutMs``, at most 5 s; its repository identity may run git).
FIRST_READ_WAIT_S: Final = 15.0


class _RowModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)

    followed: int = Field(default=0, ge=0)
    ignored: int = Field(default=0, ge=0)
    seed: float = Field(default=0.0, ge=0, le=100)
    last_used: float = Field(default=0.0, ge=0, alias="lastUsed")


class _WorkspaceModel(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    rows: dict[str, dict[str, _RowModel]] = Field(default_factory=dict)
    dismissals: dict[str, dict[str, float]] = Field(default_factory=dict)


class _DocModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: str = Field(alias="schema")
    version: int
    workspaces: dict[str, _WorkspaceModel] = Field(default_factory=dict)


def validate_document(data: Any) -> dict[str, Any]:
    """Validate a knowledge document; return it normalised (plain JSON types, camelCase).

    Raises ``ValueError`` (pydantic's ``ValidationError`` is one) for a malformed document and
    for a foreign one (other ``schema`` or ``version``).
    """
    doc = _DocModel.model_validate(data)
    if doc.schema_ != SCHEMA or doc.version != VERSION:
        raise ValueError(f"not a {SCHEMA} v{VERSION} document")
    return doc.model_dump(by_alias=True)


def empty_document() -> dict[str, Any]:
    """A document with no workspace."""
    return {"schema": SCHEMA, "version": VERSION, "workspaces": {}}


@dataclass
class Row:
    """What is known of one (intent, path): follow/ignore counts, seed pseudo-count, last use."""

    followed: int = 0
    ignored: int = 0
    seed: float = 0.0
    last_used: float = 0.0


Key = tuple[str, str]


class Knowledge:
    """The knowledge of one workspace, backed by the shared file at ``path`` (``None``: memory only).

    ``workspace`` is the key of this workspace in the file (its repository identity); ``clock`` returns
    epoch seconds. Reading is lazy (first use). Nothing is written until :meth:`flush`.
    """

    def __init__(self, path: Path | None, workspace: str, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.workspace = workspace
        self.clock = clock
        self.file = StateFile(path, validate=validate_document, max_bytes=MAX_FILE_BYTES) if path else None
        self.rows: dict[Key, Row] = {}
        self.dismissals: dict[Key, float] = {}
        self._deltas: dict[Key, Row] = {}
        self._seeded: dict[Key, float] = {}
        self._new_dismissals: dict[Key, float] = {}
        self._loaded = False
        self._seen: tuple[int, int] | None = None
        #: the call's decision in progress (:meth:`begin_call`: its thread and number), and
        #: the call whose read last checked the file: that call's later reads do not ``stat`` it
        self._call: tuple[int, int] | None = None
        self._call_checked: tuple[int, int] | None = None
        self._call_numbers = itertools.count(1)  # (``next`` is atomic: no number given twice)
        self._mutex = threading.RLock()  # the view and the pending deltas (a flush may run in a thread)
        self._flushing = threading.Lock()  # one flush at a time
        #: Set by :meth:`abandon`: the exit counted the pending batch; no flush hands it over after.
        self._abandoned = False
        self.flushes = 0
        self._flusher: threading.Thread | None = None
        self._last_flush = float("-inf")
        self.shared: SharedState | None = None
        self._repo: str | Callable[[], str] = ""
        self._resolving = threading.Lock()
        self._resolver: threading.Thread | None = None
        self.refresh_s = SHARED_REFRESH_S
        self._version: int | None = None
        self._checked = float("-inf")
        self._idle = threading.Event()  # no background read of the shared view running
        self._idle.set()
        self.counted = {"followed": 0, "ignored": 0}  # increments recorded by this process

    def share(self, shared: SharedState | None, repo: str | Callable[[], str]) -> None:
        """Keep this workspace's knowledge in ``shared`` under repository identity ``repo`` (or
        what ``repo()`` returns, asked on first use: it may run git) (``None``: the file, as before)."""
        self.shared, self._repo = shared, repo
        if shared is not None and callable(repo):  # resolved in the background from now on
            self._resolver = threading.Thread(target=lambda: self.repo, name="dsh-repo-identity", daemon=True)
            self._resolver.start()
        if shared is not None:
            self.file, self.path = None, None
            self._loaded = False

    @property
    def repo(self) -> str:
        """The repository identity the shared store keys this workspace by."""
        with self._resolving:
            if callable(self._repo):
                self._repo = self._repo()
            return self._repo

    # ------------------------------------------------------------------ reading

    @property
    def warnings(self) -> list[str]:
        """Warnings of the state file (corrupt/foreign file set aside, unwritable folder…)."""
        return list(self.file.warnings or []) if self.file else []

    def _stamp(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat() if self.path else None
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size) if st else None

    def begin_call(self) -> None:
        """A call's decision begins on this thread (``pipeline.decide``): its reads (the
        dismissals, the learned rows) check the file once, at the first (:meth:`ensure`),
        until :meth:`end_call`."""
        self._call = (threading.get_ident(), next(self._call_numbers))

    def end_call(self) -> None:
        """The call of :meth:`begin_call` ended: every read checks the file again."""
        self._call = None

    def ensure(self) -> None:
        """Read the file on first use, and again whenever another writer changed it (one
        ``stat`` per call: what another sidecar learned or dismissed is seen at once; within a
        call's decision (:meth:`begin_call`) only its first read checks, outside one every
        read). Absent/corrupt/foreign → cold start, with a warning."""
        if self.shared is not None:
            self._ensure_shared()
            return
        if self._loaded and (self.file is None or self._flushing.locked()):
            return
        call = self._call
        if call is not None and call[0] != threading.get_ident():
            call = None  # another thread's read (a flush, a ranking): it checks
        if call is not None and self._call_checked == call and self._loaded:
            return  # this call checked the file already
        if self._loaded and self._stamp() == self._seen:
            self._call_checked = call
            return
        with self._mutex:
            self._loaded = True
            self._seen = self._stamp()  # before the read: a write after it is seen next time
            doc = self.file.read() if self.file else None
            self._adopt(doc)
        self._call_checked = call

    def _ensure_shared(self) -> None:
        """Schedule the shared view's first read, or a check of its version (at most every
        :attr:`refresh_s`), on the store's read threads. A call on an event loop never waits for
        the store: it answers from the view it has (this process's own until the first read
        lands); a call on another thread (a worker, the command line) waits for the first read
        (each of its commands bounded by ``state.timeoutMs``)."""
        assert self.shared is not None
        now = time.monotonic()
        if self._loaded and (self._flushing.locked() or now - self._checked < self.refresh_s):
            return
        first = not self._loaded
        with self._mutex:
            if self._idle.is_set():
                self._checked = now
                self._idle.clear()
                if not self.shared.read_behind(self._refresh if first else self._check):
                    if first:  # the store is away: this process's view (a version check re-reads it)
                        self._adopt(None)
                        self._loaded = True
                    self._idle.set()
        if first and not _on_event_loop():
            self._idle.wait(FIRST_READ_WAIT_S)

    def _check(self) -> None:
        """Re-read the view when the store's version of the repository changed (a read thread)."""
        assert self.shared is not None
        try:
            version = self.shared.knowledge_version(self.repo)
            if version is not None and version != self._version:
                self._read_view()
        finally:
            self._idle.set()

    def _refresh(self) -> None:
        try:
            self._read_view()
        finally:
            self._idle.set()

    def _read_view(self) -> None:
        assert self.shared is not None
        view = self.shared.knowledge_view(self.repo, self.clock())
        with self._mutex:
            if view is not None and view.version >= (self._version or 0):  # never an older view
                self._version = view.version
                self._adopt(_document_of(self.workspace, view))
            elif not self._loaded:
                self._adopt(None)
            self._loaded = True

    def settle(self, timeout_s: float = 10.0) -> None:
        """Wait for a running background read of the shared view (tests, shutdown)."""
        self._idle.wait(timeout_s)

    def _adopt(self, doc: dict[str, Any] | None) -> None:
        """Make ``doc`` (the merged on-disk document) the view, re-applying pending deltas. The
        new view is built aside and swapped in whole: a call reading ``rows`` on another thread
        while a flush adopts never sees a half-built (or empty) view."""
        rows: dict[Key, Row] = {}
        dismissals: dict[Key, float] = {}
        ws = (doc or {}).get("workspaces", {}).get(self.workspace) or {}
        for intent, paths in ws.get("rows", {}).items():
            for p, r in paths.items():
                rows[(intent, p)] = Row(r["followed"], r["ignored"], r["seed"], r["lastUsed"])
        for intent, paths in ws.get("dismissals", {}).items():
            for p, exp in paths.items():
                dismissals[(intent, p)] = float(exp)
        for key, w in self._seeded.items():
            rows.setdefault(key, Row(seed=w))
        for key, d in self._deltas.items():
            row = rows.setdefault(key, Row())
            row.followed += d.followed
            row.ignored += d.ignored
            row.last_used = max(row.last_used, d.last_used)
        for key, exp in self._new_dismissals.items():
            dismissals[key] = max(dismissals.get(key, 0.0), exp)
        self.rows, self.dismissals = rows, dismissals

    def row(self, intent: str, path: str) -> Row | None:
        """The row of (intent, path), or ``None``."""
        self.ensure()
        return self.rows.get((intent, path))

    def active_dismissals(self) -> dict[Key, float]:
        """Unexpired dismissals ``{(intent, path|'*'): expiresAt}``; expired ones are pruned."""
        self.ensure()
        now = self.clock()
        with self._mutex:
            for key in [k for k, exp in self.dismissals.items() if exp <= now]:
                del self.dismissals[key]
                self._new_dismissals.pop(key, None)
            return dict(self.dismissals)

    # ------------------------------------------------------------------ writing (in memory)

    def seed(self, intent: str, path: str, weight: float) -> bool:
        """Insert a seed row unless one exists (never overwrites); ``True`` if inserted.

        Does not save: the next real write (:meth:`flush`) persists it, still only if absent.
        """
        self.ensure()
        key = (intent, path)
        with self._mutex:
            if key in self.rows or len(path) > MAX_PATH_CHARS:
                return False
            self.rows[key] = Row(seed=weight)
            self._seeded[key] = weight
            return True

    def record(self, intent: str, path: str, followed: int = 0, ignored: int = 0) -> None:
        """Count a follow / an ignore of (intent, path) now (pending until :meth:`flush`)."""
        self.ensure()
        if len(path) > MAX_PATH_CHARS:
            return
        key, now = (intent, path), self.clock()
        with self._mutex:
            self.counted["followed"] += followed
            self.counted["ignored"] += ignored
            for target in (self.rows.setdefault(key, Row()), self._deltas.setdefault(key, Row())):
                target.followed += followed
                target.ignored += ignored
                target.last_used = max(target.last_used, now)

    def dismiss(self, intent: str, path: str, expires_at: float) -> None:
        """Record a dismissal of (intent, path or ``*``) until ``expires_at`` (epoch seconds)."""
        self.ensure()
        key = (intent, path[:MAX_PATH_CHARS])
        with self._mutex:
            self.dismissals[key] = max(self.dismissals.get(key, 0.0), expires_at)
            self._new_dismissals[key] = self.dismissals[key]

    def flush_soon(self) -> None:
        """Flush in a worker thread, at most once per :data:`FLUSH_INTERVAL_S` (learning calls
        this after each learned window: a ``dsh/postExecute`` never waits for the write)."""
        now = self.clock()
        busy = self._flusher is not None and self._flusher.is_alive()
        if now - self._last_flush < FLUSH_INTERVAL_S or busy:
            return
        self._last_flush = now
        self._flusher = threading.Thread(target=self.flush, name="dsh-knowledge-flush", daemon=True)
        self._flusher.start()

    def flush_now(self) -> bool:
        """Flush on the caller's thread (``shutdown``, a dismissal), after any worker flush."""
        if self._flusher is not None:
            self._flusher.join(FLUSH_JOIN_S)
        self._last_flush = self.clock()
        return self.flush()

    @property
    def dirty(self) -> bool:
        """Whether learned counts or dismissals await a flush (seed rows alone do not count)."""
        return bool(self._deltas or self._new_dismissals)

    def abandon(self) -> int:
        """The exit stops waiting for the flushes: with a fleet store, the learned counts no flush
        has taken yet are never handed to it (a flush still on its way, descheduled before taking
        them, leaves them); ``1`` when there are some (the exit tells them as not handed), else
        ``0``. A batch a flush has taken is the store's to count (``handing``)."""
        with self._mutex:
            if self.shared is None:
                return 0
            self._abandoned = True
            return int(self.dirty)

    # ------------------------------------------------------------------ flushing

    def flush(self) -> bool:
        """Merge the pending deltas into the file under its lock; ``True`` when nothing is pending
        afterwards. A write failure (read-only/full disk, lock timeout) logs a warning, keeps the
        deltas for the next flush and returns ``False``; it never raises. Thread-safe: a flush may
        run in a worker thread while calls keep recording (their deltas wait for the next one)."""
        with self._flushing, contextlib.ExitStack() as handing:
            self.ensure()
            with self._mutex:
                if not self.dirty or (self.file is None and self.shared is None):
                    return True
                if self._abandoned and self.shared is not None:  # counted by the exit (abandon)
                    return False
                batch = _Batch(self._deltas, self._seeded, self._new_dismissals)
                self._deltas, self._seeded, self._new_dismissals = {}, {}, {}
                if self.shared is not None:  # no longer dirty: the exit's close waits for it from here
                    handing.enter_context(self.shared.handing())
            if self.shared is not None:  # never raises: a store that is away re-sends it later
                self.shared.knowledge_apply(batch.shared(self.repo))
                handing.close()
                view = self.shared.knowledge_view(self.repo, self.clock())
                with self._mutex:
                    self.flushes += 1
                    if view is not None:
                        self._version = view.version
                        self._adopt(_document_of(self.workspace, view))
                return True
            file = self.file
            assert file is not None  # neither file nor shared returned above
            try:
                merged = file.update(batch.merge_into(self.workspace, self.clock()))
            except OSError as exc:  # filelock's Timeout too (a TimeoutError)
                with self._mutex:
                    batch.give_back(self)
                log.warning(
                    "search-suggester: cannot write the knowledge file (%s); keeping it in memory",
                    getattr(exc, "strerror", None) or type(exc).__name__,
                )
                return False
            with self._mutex:
                self.flushes += 1
                # the file is ours as of now (a write by another sidecar in the instant since the
                # lock was released is seen at its next change; its deltas are never lost anyway)
                self._seen = self._stamp()
                self._adopt(merged)
            return True


@dataclass
class _Batch:
    """The pending deltas one flush takes out of a :class:`Knowledge`."""

    deltas: dict[Key, Row]
    seeded: dict[Key, float]
    dismissals: dict[Key, float]

    def merge_into(self, workspace: str, now: float) -> Callable[[dict[str, Any] | None], dict[str, Any]]:
        """The ``StateFile.update`` merge: apply this batch to the on-disk document."""

        def merge(current: dict[str, Any] | None) -> dict[str, Any]:
            doc = current if current is not None else empty_document()
            wss: dict[str, Any] = doc.setdefault("workspaces", {})
            ws = wss.setdefault(workspace, {"rows": {}, "dismissals": {}})
            rows, dis = ws.setdefault("rows", {}), ws.setdefault("dismissals", {})
            for (intent, p), w in self.seeded.items():
                rows.setdefault(intent, {}).setdefault(p, {"followed": 0, "ignored": 0, "seed": w, "lastUsed": 0.0})
            for (intent, p), d in self.deltas.items():
                r = rows.setdefault(intent, {}).setdefault(
                    p, {"followed": 0, "ignored": 0, "seed": 0.0, "lastUsed": 0.0}
                )
                r["followed"] += d.followed
                r["ignored"] += d.ignored
                r["lastUsed"] = max(r["lastUsed"], d.last_used)
            for (intent, p), exp in self.dismissals.items():
                slot = dis.setdefault(intent, {})
                slot[p] = max(slot.get(p, 0.0), exp)
            _prune(doc, now)
            return doc

        return merge

    def shared(self, repo: str) -> KnowledgeBatch:
        """This batch as a shared store's increments for repository ``repo``."""
        from dsh_sidecar.state.shared import KnowledgeBatch, KnowledgeRow

        rows: dict[Key, KnowledgeRow] = {key: KnowledgeRow(seed=w) for key, w in self.seeded.items()}
        for key, d in self.deltas.items():
            seed = rows[key].seed if key in rows else 0.0
            rows[key] = KnowledgeRow(d.followed, d.ignored, seed, d.last_used)
        return KnowledgeBatch(uuid.uuid4().hex, repo, rows, dict(self.dismissals))

    def give_back(self, k: Knowledge) -> None:
        """A failed flush: return the batch to ``k``'s pending deltas (caller holds the mutex)."""
        for key, d in self.deltas.items():
            row = k._deltas.setdefault(key, Row())
            row.followed += d.followed
            row.ignored += d.ignored
            row.last_used = max(row.last_used, d.last_used)
        for key, w in self.seeded.items():
            k._seeded.setdefault(key, w)
        for key, exp in self.dismissals.items():
            k._new_dismissals[key] = max(k._new_dismissals.get(key, 0.0), exp)


def _document_of(workspace: str, view: KnowledgeView) -> dict[str, Any]:
    """A shared store's view of one repository as the file's document shape (for ``_adopt``)."""
    rows: dict[str, dict[str, Any]] = {}
    for (intent, p), (followed, ignored, seed_w, last) in view.rows.items():
        rows.setdefault(intent, {})[p] = {"followed": followed, "ignored": ignored, "seed": seed_w, "lastUsed": last}
    dismissals: dict[str, dict[str, float]] = {}
    for (intent, p), exp in view.dismissals.items():
        dismissals.setdefault(intent, {})[p] = exp
    return {"workspaces": {workspace: {"rows": rows, "dismissals": dismissals}}}


def _prune(doc: dict[str, Any], now: float) -> None:
    """Drop expired dismissals, evict rows past :data:`MAX_ROWS` and dismissals past
    :data:`MAX_DISMISSALS`, and remove empty workspaces (in place)."""
    rows: list[tuple[tuple[float, int, float], str, str, str]] = []
    dismissals: list[tuple[float, str, str, str]] = []
    for root, ws in doc["workspaces"].items():
        for intent, paths in ws["dismissals"].items():
            for p, exp in list(paths.items()):
                if exp <= now:
                    del paths[p]
                else:
                    dismissals.append((exp, root, intent, p))
        for intent, paths in ws["rows"].items():
            for p, r in paths.items():
                rows.append(((r["lastUsed"], r["followed"] + r["ignored"], r["seed"]), root, intent, p))
    if len(rows) > MAX_ROWS:
        rows.sort()
        for _, root, intent, p in rows[: len(rows) - MAX_ROWS]:
            del doc["workspaces"][root]["rows"][intent][p]
    if len(dismissals) > MAX_DISMISSALS:
        dismissals.sort()
        for _, root, intent, p in dismissals[: len(dismissals) - MAX_DISMISSALS]:
            del doc["workspaces"][root]["dismissals"][intent][p]
    for root in list(doc["workspaces"]):
        ws = doc["workspaces"][root]
        for part in ("rows", "dismissals"):
            ws[part] = {i: ps for i, ps in ws[part].items() if ps}
        if not ws["rows"] and not ws["dismissals"]:
            del doc["workspaces"][root]


def _on_event_loop() -> bool:
    """Whether the calling thread runs an event loop (a call there must not wait for the store)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
