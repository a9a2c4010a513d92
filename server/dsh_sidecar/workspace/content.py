"""The workspace content index, built in a background thread: :class:`ContentIndexer` keeps the
SQLite FTS5 database (:mod:`~dsh_sidecar.workspace.fts`) in sync with the workspace listing, and
the file facts (:mod:`~dsh_sidecar.workspace.facts`) in memory.

**Building**: :class:`ContentIndexer` syncs the database on its own worker thread from the
listing the workspace graph already made (the workspace is listed once; no process is started:
only ``gitcmd`` does that): no request ever waits for it; each file's stat and read release the
GIL, and SQLite runs without it. The database (WAL mode) lives under ``$DSH_HOME/workspace/``; a
file whose mtime and size match its row is not read again, so a restart only re-reads what
changed. A ``didChangeWatchedFiles`` batch of k paths reads k rows and k files and updates the
facts in memory in O(k) (no full-table load, no re-read of every fact). A changed file gets a new
row and its old row is marked dead; past :data:`DEAD_RATIO` dead rows the database is rebuilt
at the next full sync.

**Declarations followed**: a manifest that declares a value lives in another file
(``workspace/manifests/``: a dynamic version's module, a Gradle property, towncrier's
changelog) *points* to it; the pointed-to file gets that fact beside its own (derived in memory
from the stored points after each sync, O(points)). The words of a manifest's sections are
looked up per file (:meth:`ContentIndexer.keys`, one primary-key read) when a call searches
inside it.

Without FTS5 in the Python build (:func:`fts5_available`), nothing is built, the facts are
computed from names only, and ``status()`` says so.
"""

from __future__ import annotations

import bisect
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.cachedir import database_files_regular, make_way_for_database
from dsh_sidecar.workspace.filerows import read_head
from dsh_sidecar.workspace.fts import ContentDB, db_path, fts5_available
from dsh_sidecar.workspace.sharedreads import SharedReads
from dsh_sidecar.workspace.stats import FileStats

#: ``{path: ((fact, target), …)}``: the files manifests point to.
Points = dict[str, tuple[tuple[str, str], ...]]

log = logging.getLogger(__name__)

#: Share of dead rows past which the database is rebuilt from scratch.
DEAD_RATIO: Final = 0.3

#: ``{path: its facts now, or None when it left the index}`` of one partial sync.
FactChanges = Mapping[str, frozenset[str] | None]


# ---------------------------------------------------------------------------- the indexer


class ContentIndexer:
    """Keeps the content database of one workspace up to date from a worker thread, and
    answers lookups from a read-only connection (the hot path never waits for the worker).

    :meth:`start` (a full sync from a listing) and :meth:`refresh` (changed paths) queue work;
    one sync runs at a time, later requests coalesce. Lookups before the first sync finishes
    answer from the previous database (a restart) or nothing. ``facts`` is kept in memory
    (replaced, never mutated in place: a reader on another thread iterates a consistent map).
    ``on_ready(indexer, changes)`` follows each sync on the worker thread: ``changes`` is
    ``None`` after a full sync that changed rows, else the :data:`FactChanges` of the paths
    whose row changed (``{}`` after a full sync that found every file unchanged).
    """

    def __init__(
        self,
        root: Path | None,
        cache_dir: Path | None,
        on_ready: Callable[[ContentIndexer, FactChanges | None], None] | None = None,
    ) -> None:
        self.root = root.resolve() if root is not None else None
        self.on_ready = on_ready
        self.db_path = db_path(cache_dir, self.root) if cache_dir is not None and self.root is not None else None
        self.available = fts5_available()
        self.facts: dict[str, list[str]] = {}
        self.fact_of: dict[str, frozenset[str]] = {}
        #: what manifests point to, and the facts that gives the pointed-to files
        self.points: Points = {}
        self._derived: dict[str, frozenset[str]] = {}
        #: the stored (own) facts of the files that also have derived ones
        self._own: dict[str, frozenset[str]] = {}
        self.stats: dict[str, Any] = {}
        self.error: str | None = None
        self.builds = 0
        #: partial syncs (changed paths) done, and their CPU seconds (this worker thread's)
        self.change_syncs = 0
        self.change_cpu_s = 0.0
        self._reader: ContentDB | None = None
        self._lock = threading.Lock()
        self._listing: list[str] | None = None
        self._stats: Callable[[], FileStats | None] | None = None
        self._kinds: Sequence[str] | None = None
        self._after: Callable[[], object] | None = None
        self._shared: SharedReads | None = None
        #: the stats the rows hold, as the stored fingerprint says (the worker thread's own):
        #: kept from a full sync that stored it, changed by each sync of changed paths that kept
        #: it current (``ContentDB.sync``); any other outcome of a sync forgets them
        self._basis: FileStats | None = None
        #: queued partial work: path -> whether it is listed now (the newest word wins)
        self._changed: dict[str, bool] = {}
        self._full = False
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()
        self._idle.set()
        self._closed = False
        if self.available and self.db_path is not None and self.db_path.exists():
            self._reopen()  # yesterday's index answers while today's sync runs

    @property
    def building(self) -> bool:
        """Whether a sync runs (or queued work waits for one)."""
        return not self._idle.is_set()

    @property
    def ready(self) -> bool:
        """Whether a database answers lookups."""
        return self._reader is not None

    @property
    def pending(self) -> bool:
        """Whether the first database is still to come: none was opened at start and no sync
        has finished yet, while one is being (or will be) built (FTS5 present, a workspace, no
        failure, not closed). A later rebuild (dead rows) keeps the facts it had meanwhile."""
        return (
            self._reader is None
            and self.builds == 0
            and self.available
            and self.db_path is not None
            and self.error is None
            and not self._closed
        )

    def start(
        self,
        listing: list[str],
        stats: Callable[[], FileStats | None] | None = None,
        kinds: Sequence[str] | None = None,
        after: Callable[[], object] | None = None,
        shared: SharedReads | None = None,
    ) -> None:
        """Queue a full sync against ``listing`` (repo-relative paths); ``stats()`` (called on
        the sync's thread) gives the listing's stats when they were taken (the graph's:
        ``workspace/stats.py``), so that no file is stat'ed twice and an unchanged listing is
        recognised by its fingerprint; ``kinds``: ``classify`` of each file of ``listing`` when
        the caller made them (the graph's first listing), so no file is classified twice;
        ``after()`` (called on the sync's thread, bounded by the caller) is waited for before
        the sync starts (the graph's symbol pass: one pass over the files at a time);
        ``shared``: the files that pass read, taken instead of reading them again (closed once
        the sync is done, or when another full sync replaces this one before it starts)."""
        if self.root is None or self.db_path is None:
            return
        with self._lock:
            self._listing = list(listing)
            self._stats = stats
            self._kinds = kinds
            self._after = after
            replaced, self._shared = self._shared, shared
            self._full = True
        if replaced is not None:
            replaced.close()
        self._kick()

    def refresh(self, changed: Iterable[str], present: Iterable[str]) -> None:
        """Queue a sync of ``changed`` (repo-relative paths), of which ``present`` are in the
        listing now (the others are dropped from the index): O(len(changed)), the listing
        itself is not needed."""
        if self.root is None or self.db_path is None:
            return
        listed = set(present)
        with self._lock:
            for p in changed:
                self._changed[p] = p in listed
        self._kick()

    def _kick(self) -> None:
        if not self.available or self._closed:
            return
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._idle.clear()
            self._thread = threading.Thread(target=self._run, name="dsh-content-index", daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no sync runs or waits; ``True`` if so."""
        return self._idle.wait(timeout)

    def close(self) -> None:
        """Stop syncing (after the running batch) and close the reader."""
        self._closed = True
        if self._shared is not None:
            self._shared.close()
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _run(self) -> None:
        try:
            while not self._closed:
                with self._lock:
                    listing, full, stats, kinds, after, shared = (
                        self._listing,
                        self._full,
                        self._stats,
                        self._kinds,
                        self._after,
                        self._shared,
                    )
                    if full:
                        self._full, self._listing, self._stats, self._kinds, self._after = False, None, None, None, None
                        self._shared = None
                        changed: dict[str, bool] = {}
                    else:
                        changed, self._changed = self._changed, {}
                if full and listing is not None:
                    self._full_sync(listing, stats, kinds, after, shared)
                    if self._closed:  # closed during the wait (a shutdown in the cold start)
                        break
                elif changed:
                    only = sorted(changed)
                    self._sync([], only, [p for p in only if changed[p]])
                else:
                    break
        finally:
            self._idle.set()
            with self._lock:
                pending = self._full or bool(self._changed)
            if pending and not self._closed:
                self._kick()

    def _full_sync(
        self,
        listing: list[str],
        stats: Callable[[], FileStats | None] | None,
        kinds: Sequence[str] | None,
        after: Callable[[], object] | None,
        shared: SharedReads | None,
    ) -> None:
        """A full sync of ``listing`` once ``after()`` returns (not when closed meanwhile),
        taking the files ``shared`` holds; ``shared`` is closed either way."""
        try:
            if after is not None:
                after()
            if not self._closed:
                self._sync(listing, None, stats=stats() if stats is not None else None, kinds=kinds, shared=shared)
        finally:
            if shared is not None:
                shared.close()

    def _sync(
        self,
        listing: list[str],
        only: list[str] | None,
        present: list[str] | None = None,
        stats: FileStats | None = None,
        kinds: Sequence[str] | None = None,
        shared: SharedReads | None = None,
    ) -> None:
        """One sync on this worker thread (its own writer connection); a database past
        :data:`DEAD_RATIO` dead rows, or of another schema, is rebuilt from scratch; ``shared``:
        files already read (a full sync: ``sharedreads.py``); :attr:`_basis` as ``ContentDB.sync`` leaves it."""
        assert self.root is not None and self.db_path is not None
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            db = self._writer(full=only is None)
            basis, self._basis = self._basis, None  # (taken: changed in place by the sync)
            try:
                counts = db.sync(self.root, listing, only, present, stats, kinds, shared, basis)
                if not counts.get("fingerprint"):
                    db.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                if only is not None:  # which files the points name exist now (a full sync: _reopen)
                    merged = {**self.points, **counts["points"]}
                    counts["targets"] = db.existing({t for pts in merged.values() for _, t in pts})
            finally:
                db.close()
        except (sqlite3.Error, OSError) as exc:
            self.error = f"content index build failed ({type(exc).__name__}: {exc})"[:300]
            log.warning("workspace content index: %s", self.error)
            return
        self._basis = counts.pop("basis", None) if only is None else basis if counts["listingKept"] else None
        changes: dict[str, frozenset[str] | None] = counts.pop("changed")
        point_changes: Points = counts.pop("points")
        targets: set[str] = counts.pop("targets", set())
        counts["wallS"] = round(time.perf_counter() - t0, 3)
        counts["cpuS"] = round(time.thread_time() - c0, 3)
        try:
            counts["dbBytes"] = self.db_path.stat().st_size
        except OSError:
            counts["dbBytes"] = 0
        self.error = None
        self.builds += 1
        if only is None and self._reader is not None and not counts["read"] and not counts["removed"]:
            self.stats = counts  # a restart on an unchanged tree: the facts loaded at start hold
            delta: FactChanges | None = {}
        elif only is None or self._reader is None:
            self.stats = counts
            self._reopen()
            delta = None
        else:  # a partial sync: the facts follow in O(changes); the reader sees the new rows
            self.stats = {**self.stats, "lastChange": counts}
            self.change_syncs += 1
            self.change_cpu_s += counts["cpuS"]
            self._reader.rows_changed()
            delta = self._follow(changes, point_changes, targets)
        if self.on_ready is not None:
            try:
                self.on_ready(self, delta)
            except Exception as exc:  # a listener failure must not stop the indexer
                log.warning("workspace content index listener failed: %s", exc)

    def _writer(self, full: bool) -> ContentDB:
        """The writer connection of a sync; a database of another schema, or past
        :data:`DEAD_RATIO` dead rows at a ``full`` sync, is dropped and made anew."""
        assert self.db_path is not None
        made = make_way_for_database(self.db_path)  # a FIFO, a link, a folder: not our database
        if made:
            log.warning("workspace content index: %s; it is built again", ", ".join(made))
        if not database_files_regular(self.db_path):
            raise sqlite3.OperationalError("the content index's place holds something that is not a regular file")
        try:
            db = ContentDB(self.db_path)
        except sqlite3.DatabaseError:
            self._drop_files()
            return ContentDB(self.db_path)
        if full and db.live_rows() and db.dead_rows() > DEAD_RATIO * db.live_rows():
            db.close()
            self._drop_files()
            db = ContentDB(self.db_path)
        return db

    def _follow(self, changes: FactChanges, point_changes: Points, present: set[str]) -> FactChanges:
        """A partial sync's stored facts and points: the files whose facts now differ (the
        changed rows, and the files a changed manifest points or pointed to), with their
        facts (own ∪ derived), applied to :attr:`facts` and :attr:`fact_of`."""
        points = dict(self.points)
        for path, pts in point_changes.items():
            if pts:
                points[path] = pts
            else:
                points.pop(path, None)
        derived = _derive(points, present)
        old = self._derived
        moved = {t for t in set(old) | set(derived) if old.get(t) != derived.get(t)}
        own = dict(self._own)
        out: dict[str, frozenset[str] | None] = {}
        for path in set(changes) | moved:
            if path in changes:
                mine = changes[path] or frozenset()
                alive = changes[path] is not None
            else:
                mine = (
                    own.get(path, self.fact_of.get(path, frozenset()))
                    if path in old
                    else self.fact_of.get(path, frozenset())
                )
                alive = True
            extra = derived.get(path, frozenset())
            if extra:
                own[path] = mine
            else:
                own.pop(path, None)
            both = mine | extra if alive or extra else frozenset()
            out[path] = both if both or alive else None
        self.points, self._derived, self._own = points, derived, own
        self._apply(out)
        return out

    def _apply(self, changes: FactChanges) -> None:
        """Follow a partial sync's fact changes in :attr:`facts` (copy on write: the touched
        lists are copied, the map replaced) and :attr:`fact_of`."""
        facts = dict(self.facts)
        copied: set[str] = set()

        def paths_of(fact: str) -> list[str]:
            if fact not in copied:
                copied.add(fact)
                facts[fact] = list(facts.get(fact, ()))
            return facts[fact]

        for path, now in changes.items():
            new = now or frozenset()
            old = self.fact_of.get(path, frozenset())
            for fact in old - new:
                paths = paths_of(fact)
                i = bisect.bisect_left(paths, path)
                if i < len(paths) and paths[i] == path:
                    del paths[i]
            for fact in new - old:
                paths = paths_of(fact)
                i = bisect.bisect_left(paths, path)
                if i == len(paths) or paths[i] != path:
                    paths.insert(i, path)
            if new:
                self.fact_of[path] = new
            else:
                self.fact_of.pop(path, None)
        self.facts = {f: v for f, v in facts.items() if v}

    def _drop_files(self) -> None:
        assert self.db_path is not None
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        for suffix in ("", "-wal", "-shm"):
            Path(str(self.db_path) + suffix).unlink(missing_ok=True)

    def _reopen(self) -> None:
        assert self.db_path is not None
        if not database_files_regular(self.db_path):  # a FIFO would hold a read-only open for good
            log.warning("workspace content index is not a regular file; it is built again")
            return
        try:
            reader = ContentDB(self.db_path, readonly=True)
            facts = reader.facts()
            points = reader.points()
            present = reader.existing({t for pts in points.values() for _, t in pts})
        except sqlite3.Error as exc:
            log.warning("workspace content index unreadable (%s); it is rebuilt", exc)
            return
        fact_of: dict[str, set[str]] = {}
        for f, paths in facts.items():
            for p in paths:
                fact_of.setdefault(p, set()).add(f)
        derived = _derive(points, present)
        own = {p: frozenset(fact_of.get(p, ())) for p in derived}
        for p, extra in derived.items():
            mine = fact_of.setdefault(p, set())
            for f in extra - mine:
                mine.add(f)
                facts.setdefault(f, []).append(p)
        for paths in facts.values():
            paths.sort()
        old, self._reader = self._reader, reader
        self.facts = facts
        self.fact_of = {p: frozenset(v) for p, v in fact_of.items()}
        self.points, self._derived, self._own = points, derived, own
        if old is not None:
            old.close()

    # ------------------------------------------------------------------ lookups (hot path)

    def search(self, words: Iterable[str], limit: int = 20) -> list[tuple[str, float]]:
        """BM25 matches of any of ``words`` (see :meth:`ContentDB.search`); ``[]`` while no
        database exists."""
        reader = self._reader
        return reader.search(words, limit) if reader is not None else []

    def keys(self, path: str) -> dict[str, dict[str, float]] | None:
        """The section words of the manifest at ``path`` (``workspace/manifests/``):
        ``{word: {intent: weight}}``; ``None`` when it has none or no database exists."""
        reader = self._reader
        return reader.keys(path) if reader is not None else None

    def points_of(self, path: str) -> tuple[tuple[str, str], ...]:
        """``(fact, file)`` pairs the manifest at ``path`` points to (the stored points of the
        last sync; empty for a file that is no manifest, or before the first sync)."""
        return self.points.get(path, ())

    def with_fact(self, fact: str) -> list[str]:
        """Paths with ``fact`` (sorted)."""
        return self.facts.get(fact, [])

    def files_containing(self, paths: Iterable[str], literal: str, limit: int = 5) -> list[str]:
        """Of ``paths`` (tried in order, at most ``limit`` × 4 read), those whose text contains
        ``literal`` (case-insensitive)."""
        if self.root is None or not literal:
            return []
        needle = literal.lower().encode("utf-8", "replace")
        out: list[str] = []
        for i, rel in enumerate(paths):
            if i >= limit * 4 or len(out) >= limit:
                break
            data = read_head(self.root, rel)
            if data is not None and needle in data.lower():
                out.append(rel)
        return out

    def status(self) -> dict[str, Any]:
        """State and figures for ``dsh/status``."""
        if not self.available:
            state = "unavailable (this Python's SQLite has no FTS5)"
        elif self.root is None or self.db_path is None:
            state = "off"
        elif self.building:
            state = "building"
        elif self.error is not None:
            state = "failed"
        else:
            state = "ready" if self.ready else "pending"
        return {
            "state": state,
            "fts5": self.available,
            "path": str(self.db_path) if self.db_path else None,
            "builds": self.builds,
            "facts": {f: len(v) for f, v in sorted(self.facts.items())},
            **({"error": self.error} if self.error else {}),
            **self.stats,
        }


def _derive(points: Points, present: set[str]) -> dict[str, frozenset[str]]:
    """``{target: facts}`` the points give to the indexed files of ``present`` (a file several
    manifests point to gets each fact; a file a manifest names that does not exist, nothing)."""
    out: dict[str, set[str]] = {}
    for pts in points.values():
        for fact, target in pts:
            if target in present:
                out.setdefault(target, set()).add(fact)
    return {t: frozenset(f) for t, f in out.items()}
