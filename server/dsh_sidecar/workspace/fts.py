"""The content database: SQLite FTS5 (standard library), BM25-ranked, over path words and text:
the schema and the writer and reader sides of one database file (the thread that keeps it in
sync is :mod:`dsh_sidecar.workspace.content`).

**What is indexed** (one row per listed file, each file read once, at most
:data:`MAX_READ_BYTES`): ``path`` = the path's words (folders, stem, extension, snake/camel
parts: ``src/HttpClient/retry_policy.py`` → ``src http client retry policy py``); ``body`` =
the distinct words of the text of docs, tests, config, manifests and other text files; for code
files only the words of their message-like string literals (``"could not find %s"``) and their
comments' first words are indexed. Words are ASCII letters/digits, 3–30 characters, lower-cased,
stop words dropped, each once per file (FTS5's ``porter`` tokenizer stems them). The table is
*contentless* (``content=''``) with ``detail=full``: the text itself is never stored, so the
index is a fraction of the text it covers (``bench/content_index.py`` prints the ratio; goal
≤ 25 %). A phrase or an exact literal is checked by reading the few top files again
(:meth:`ContentIndex.files_containing`).

Beside each file's kind and facts (``workspace/facts.py``), a manifest's row keeps the words of
its sections with their intents (``keys``, JSON, read per file by primary key) and the files it
declares hold a value (``points``, JSON, loaded with the facts): ``workspace/manifests/``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.workspace import fsguard
from dsh_sidecar.workspace.cachenames import index_stem
from dsh_sidecar.workspace.facts import RULES_VERSION, STOP_WORDS, WORD, path_words
from dsh_sidecar.workspace.filerows import MAX_FILE_BYTES, MAX_READ_BYTES, Row, read_row  # noqa: F401 (a head's size)
from dsh_sidecar.workspace.sharedreads import SharedReads
from dsh_sidecar.workspace.stats import FileStats, Stat, stat_of
from dsh_sidecar.workspace.stems import TOKENIZE, indexed_term

log = logging.getLogger(__name__)

#: Schema version of the database (a different one is rebuilt): the tables', and the version
#: of the rules that read a file's facts and declarations (``facts.RULES_VERSION``), since a
#: file is read again only when it changes.
SCHEMA_VERSION: Final = f"4.{RULES_VERSION}"
#: Rows per transaction of the builder.
BATCH: Final = 500
#: Rows read per query of a full sync (read beside the listing, never all at once).
PAGE: Final = 2000

#: A row's ``(rid, mtime_ns, size, inode)``.
_Old = tuple[int, int, int, int]

#: The listing's fingerprint stored (``meta.listing``) with a sync's last rows, only when no other
#: writer wrote rows meanwhile (the highest ``rid`` and the dead rows' count are this sync's).
_CLAIM: Final = (
    "INSERT OR REPLACE INTO meta SELECT 'listing', ? "
    "WHERE (SELECT coalesce(max(rid), 0) FROM files) = ? AND (SELECT count(*) FROM dead) = ?"
)


def _i64(n: int) -> int:
    """An unsigned 64-bit value (an inode number) as SQLite's signed INTEGER holds it."""
    return n - (1 << 64) if n >= 1 << 63 else n


#: Column weights of BM25 (path words count more than body words): ``bm25(fts, path, body)``.
BM25_WEIGHTS: Final = (4.0, 1.0)


@lru_cache(maxsize=1)
def fts5_available() -> bool:
    """Whether this Python's SQLite has FTS5 (checked once per process)."""
    try:
        con = sqlite3.connect(":memory:")
        con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        con.close()
        return True
    except sqlite3.Error:
        return False


# ---------------------------------------------------------------------------- the database


def db_path(cache_dir: Path, root: Path) -> Path:
    """``<cache_dir>/<slug>-<hash>.content.sqlite`` (slug and hash as the symbol cache's)."""
    return cache_dir / f"{index_stem(root)}.content.sqlite"


#: Most SQLite virtual-machine steps a content lookup on the request path may take (then it
#: answers no match), in units of :data:`PROGRESS_STEPS`: a bound counted in work, not time, so
#: the same workspace gives the same answers on a loaded machine. 60 000 steps ≈ 2 ms on this
#: (loaded, 2-core) machine; lookups take 0.02–0.4 ms on sympy's 1.5k files once common words
#: are left out (p99 0.6 ms on 100k files, bench/content_index.py).
SEARCH_STEP_BUDGET: Final = 60
#: SQLite virtual-machine steps between two progress-handler calls.
PROGRESS_STEPS: Final = 1000
#: A word in more than this share of the files (and in more than :data:`MIN_DF_CAP`) is left
#: out of a lookup: it matches nearly everything and only slows the ranking down.
MAX_DF_SHARE: Final = 0.05
MIN_DF_CAP: Final = 50

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)",
    "CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, rid INTEGER UNIQUE, mtime_ns INTEGER, size INTEGER,"
    " ino INTEGER, kind TEXT, facts TEXT, words INTEGER, keys TEXT, points TEXT)",
    "CREATE TABLE IF NOT EXISTS dead(rid INTEGER PRIMARY KEY)",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(path, body, content='', detail=full, tokenize='{TOKENIZE}')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS fts_vocab USING fts5vocab(fts, 'row')",
)


def parse_points(raw: str) -> tuple[tuple[str, str], ...]:
    """The ``points`` column of a row: ``((fact, target), …)``; ``()`` when unreadable."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return ()
    if not isinstance(data, list):
        return ()
    return tuple(
        (p[0], p[1]) for p in data if isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
    )


class _Batch:
    """The rows a sync writes, sent in one transaction a batch (:meth:`flush`)."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        self.fts_rows: list[tuple[int, str, str]] = []
        self.file_rows: list[tuple[str, int, int, int, int, str, str, int, str, str]] = []
        self.dead_rows: list[tuple[int]] = []
        self.gone: list[tuple[str]] = []

    def remove(self, rel: str, rid: int) -> None:
        """Forget the file ``rel`` (its FTS row ``rid`` is dead)."""
        self.gone.append((rel,))
        self.dead_rows.append((rid,))

    def add(self, rid: int, rel: str, st: Stat | None, row: Row) -> None:
        """Index the file ``rel`` as FTS row ``rid`` (``st``: its stat, ``None``: unknown)."""
        self.fts_rows.append((rid, path_words(rel), row.body))
        self.file_rows.append(
            (
                rel,
                rid,
                st[0] if st else 0,
                st[1] if st else 0,
                _i64(st[2]) if st else 0,
                row.kind,
                ",".join(sorted(row.facts)),
                row.body.count(" ") + 1 if row.body else 0,
                row.keys,
                json.dumps(row.points, separators=(",", ":")) if row.points else "",
            )
        )

    def flush(self, claim: tuple[str, int, int] | None = None) -> bool:
        """One transaction: the dead rids, the removed paths, the new fts and files rows, and the
        ``claim`` (:data:`_CLAIM`: fingerprint, highest rid, dead rows); whether it was stored."""
        con = self.con
        with con:
            con.executemany("INSERT OR IGNORE INTO dead VALUES(?)", self.dead_rows)
            con.executemany("DELETE FROM files WHERE path=?", self.gone)
            con.executemany("INSERT INTO fts(rowid, path, body) VALUES(?,?,?)", self.fts_rows)
            con.executemany("INSERT OR REPLACE INTO files VALUES(?,?,?,?,?,?,?,?,?,?)", self.file_rows)
            stored = claim is not None and con.execute(_CLAIM, claim).rowcount == 1
        for rows in (self.dead_rows, self.gone, self.fts_rows, self.file_rows):
            rows.clear()
        return stored


@dataclass
class _Sync:
    """One sync's progress: the rows it writes (``batch``), the next FTS row id and its counts;
    ``report_changes``: the changed files' facts and pointers are reported (a batch of paths)."""

    root: Path
    base: str
    batch: _Batch
    next_rid: int
    dead: int
    report_changes: bool
    reader: fsguard.FolderReader | None = None
    shared: SharedReads | None = None
    read: int = 0
    skipped: int = 0
    removed: int = 0
    text_bytes: int = 0
    changed: dict[str, frozenset[str] | None] = field(default_factory=dict)
    points: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    #: ``{path: (whether it has a row now, its row's stat)}`` of the files looked at (a basis followed)
    seen: dict[str, tuple[bool, Stat | None]] | None = None

    def file(
        self,
        rel: str,
        old: _Old | None,
        wanted: bool,
        st: Stat | None = None,
        known: bool = False,
        kind: str | None = None,
    ) -> None:
        """Sync the file ``rel`` (``old``: its row's ``(rid, mtime_ns, size, inode)``; ``wanted``:
        whether it should have a row; ``st``: its stat when ``known``, ``None`` when it could not
        be stat'ed; not ``known``: it is stat'ed now; ``kind``: its kind when the listing has
        it): removed, unchanged (the same mtime, size and inode: not read), or read again."""
        if self.seen is not None:
            self.seen[rel] = (False, None)
        if not wanted:
            if old is not None:
                self.batch.remove(rel, old[0])
                if self.report_changes:
                    self.changed[rel] = None
                    self.points[rel] = ()
                self.removed += 1
                self.dead += 1
            return
        if not known:
            found = stat_of(self.base + rel)
            st = None if found is None else (found.st_mtime_ns, found.st_size, found.st_ino)
        if self.seen is not None:
            self.seen[rel] = (True, st)
        if st is not None and old is not None and old[1:] == (st[0], st[1], _i64(st[2])):
            self.skipped += 1
            return
        row = read_row(self.root, rel, st, self.reader, kind, self.shared)
        self.text_bytes += row.text_bytes
        if old is not None:
            self.batch.dead_rows.append((old[0],))
            self.dead += 1
        self.batch.add(self.next_rid, rel, st, row)
        self.next_rid += 1
        if self.report_changes:
            self.changed[rel] = frozenset(row.facts)
            self.points[rel] = row.points
        self.read += 1
        if len(self.batch.file_rows) >= BATCH:
            self.batch.flush()

    def counts(self, files: int, t0: float) -> dict[str, Any]:
        """What :meth:`ContentDB.sync` returns of this sync (``t0``: its start, process time)."""
        return {
            "files": files,
            "read": self.read,
            "unchanged": self.skipped,
            "removed": self.removed,
            "dead": self.dead,
            "textBytes": self.text_bytes,
            "cpuS": round(time.process_time() - t0, 3),
            "changed": self.changed,
            "points": self.points,
        } | ({"sharedReads": self.shared.taken} if self.shared is not None else {})


def _claim(run: _Sync, basis: FileStats | None, only: list[str]) -> tuple[str, int, int] | None:
    """:data:`_CLAIM`'s values after a sync of ``only``: ``basis`` (the rows' stats before it) with
    each path's new row laid over it (its stat, or taken out); ``None``: the rows were not its."""
    if basis is None or run.seen is None:
        return None
    for rel in dict.fromkeys(only):
        listed, st = run.seen.get(rel, (False, None))
        if listed:
            basis.set(rel, st)
        else:
            basis.remove(rel)
    return basis.fingerprint(), run.next_rid - 1, run.dead


class ContentDB:
    """One content database (module docstring): the writer (indexing thread) and reader sides."""

    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = path
        self._live: int | None = None
        #: One reader connection serves every thread, one at a time: ``set_progress_handler`` and
        #: ``close`` wait for the connection's mutex holding the GIL, which a query's progress
        #: handler on another thread needs (both threads then waited for ever: the process hung).
        self._lock = threading.Lock()
        if readonly:
            uri = f"file:{path}?mode=ro"
            self.con = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=0.05)
        else:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.con = sqlite3.connect(str(path), timeout=10)
            self.con.execute("PRAGMA journal_mode=WAL")
            self.con.execute("PRAGMA synchronous=NORMAL")
            for stmt in _SCHEMA:
                self.con.execute(stmt)
            row = self.con.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self.con.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (str(SCHEMA_VERSION),))
                self.con.commit()
            elif row[0] != str(SCHEMA_VERSION):
                raise sqlite3.DatabaseError("schema version mismatch")
            with contextlib.suppress(OSError):
                os.chmod(path, 0o600)

    def close(self) -> None:
        """Close the connection (after a lookup another thread is running on it)."""
        with self._lock:
            self.con.close()

    # ------------------------------------------------------------------ writer

    def sync(
        self,
        root: Path,
        listing: list[str],
        only: list[str] | None = None,
        present: Iterable[str] | None = None,
        stats: FileStats | None = None,
        kinds: Sequence[str] | None = None,
        shared: SharedReads | None = None,
        basis: FileStats | None = None,
    ) -> dict[str, Any]:
        """Bring the database in line with ``listing`` (repo-relative paths). ``only``: just
        those paths (a ``didChangeWatchedFiles`` batch), of which ``present`` are listed (the
        rest are removed; ``None``: look them up in ``listing``); such a sync reads only the
        rows of those paths, so it costs what it changes. A full sync with ``stats`` (the
        listing's stats: ``workspace/stats.py``) whose fingerprint is the one the last full sync
        stored has nothing to do and reads no row; otherwise the rows are read in path order
        beside the sorted listing (never loaded whole), each file's stat compared with its row.
        Rows are inserted in bulk (``executemany``), :data:`BATCH` files a transaction; the files
        are read folder by folder (:class:`~dsh_sidecar.workspace.fsguard.FolderReader`), and
        ``kinds`` (``classify`` of each file of ``listing``, when the caller made them) spares
        classifying them again; a file ``shared`` holds at its stat is taken, not read again
        (``sharedreads.py``). Returns
        counts, and under ``"changed"`` ``{path: facts, or None when removed}`` of the paths
        whose row changed, and under ``"points"`` ``{path: the files it points to}`` of those
        rows (a manifest's declarations, ``workspace/manifests/``; ``()`` for none or removed).
        The stored fingerprint and ``basis``: :meth:`_files`."""
        t0 = time.process_time()
        con = self.con
        # a copy over the caller's listing: the stats' own list may change meanwhile (the graph's)
        stats = stats.copy(listing) if stats is not None and stats.files == listing else None
        if kinds is not None and (stats is None or len(kinds) != len(listing)):
            kinds = None  # kinds are taken in the listing's order only
        if only is None and stats is not None and self._meta("listing") == stats.fingerprint():
            return self._unchanged(listing, t0) | {"basis": stats}
        run = _Sync(
            root,
            str(root) + os.sep,
            _Batch(con),
            next_rid=(con.execute("SELECT max(rid) FROM files").fetchone()[0] or 0) + 1,
            dead=con.execute("SELECT count(*) FROM dead").fetchone()[0],
            report_changes=only is not None,
            reader=fsguard.FolderReader(root, MAX_FILE_BYTES),
            shared=shared,
        )
        kept = self._files(run, listing, only, present, stats, kinds, basis)
        return (
            run.counts(len(listing), t0) | {"listingKept": kept} | ({"basis": stats} if kept and only is None else {})
        )

    def _files(
        self,
        run: _Sync,
        listing: list[str],
        only: list[str] | None,
        present: Iterable[str] | None,
        stats: FileStats | None,
        kinds: Sequence[str] | None,
        basis: FileStats | None,
    ) -> bool:
        """The files of :meth:`sync` looked at, their rows written; whether the fingerprint was
        stored. **The stored fingerprint** (the rows hold exactly the listing's files at their
        stats) is taken out before any row is written and stored only with the last rows
        (:data:`_CLAIM`). A full sync that stores it returns its stats under ``"basis"``; a sync
        of changed paths given them (changed in place) lays its rows' stats over them and, when
        the fingerprint it took out was theirs, stores their new one (O(changed): run digests,
        ``stats.py``): the next session's full sync on that tree reads no row."""
        with self.con:  # the stored fingerprint no longer says what the rows hold (any sync)
            taken = self.con.execute("DELETE FROM meta WHERE key='listing' RETURNING value").fetchall()
        if only is not None and basis is not None and taken and taken[0][0] == basis.fingerprint():
            run.seen = {}  # the rows were the basis's: they are followed path by path
        # no time.sleep(0) hand-over: each file's stat, open and read, and each page of rows read
        # (SQLite steps without the GIL), release the GIL, and a waiting request thread takes it
        assert run.reader is not None
        with run.reader:
            if only is None:
                for rel, old, wanted, st, known, kind in self._full_work(listing, stats, kinds):
                    run.file(rel, old, wanted, st, known, kind)
            else:
                rows, wanted_set, todo = self._rows_of(listing, only, present)
                for rel in todo:
                    run.file(rel, rows.get(rel), rel in wanted_set)
        if only is not None:
            return run.batch.flush(_claim(run, basis, only))
        run.batch.flush()
        return self._finish_full(run, stats)

    def _finish_full(self, run: _Sync, stats: FileStats | None) -> bool:
        """After a full sync: the b-tree segments merged when rows changed (FTS5's automerge
        keeps a few changed rows cheap, and 'optimize' rewrites the whole index), the listing's
        fingerprint stored (the rows now hold what it says); whether it was."""
        con = self.con
        if run.read or run.removed:
            con.execute("INSERT INTO fts(fts) VALUES('optimize')")
            con.commit()
        if stats is None:
            return False
        with con:
            return con.execute(_CLAIM, (stats.fingerprint(), run.next_rid - 1, run.dead)).rowcount == 1

    def _meta(self, key: str) -> str | None:
        row = self.con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row is not None else None

    def _unchanged(self, listing: list[str], t0: float) -> dict[str, Any]:
        """The counts of a full sync that found the listing's fingerprint stored: nothing read."""
        return {
            "files": len(listing),
            "read": 0,
            "unchanged": len(listing),
            "removed": 0,
            "dead": self.dead_rows(),
            "textBytes": 0,
            "cpuS": round(time.process_time() - t0, 3),
            "changed": {},
            "points": {},
            "fingerprint": True,
        }

    def _full_work(
        self, listing: list[str], stats: FileStats | None, kinds: Sequence[str] | None = None
    ) -> Iterator[tuple[str, _Old | None, bool, Stat | None, bool, str | None]]:
        """What a full sync looks at, in path order: each listed file with its row (or ``None``)
        and its stat (with whether it is known: else it is taken then) and its kind (``kinds``,
        in the listing's order, given only with ``stats``), then each row no listed file has (to
        remove). The
        rows are read beside the sorted listing, in pages (:data:`PAGE` rows), and every page
        is read whole before any write: the pages are keyed by path, so a row this sync writes
        is never met again as an old one (its ``rid`` is new: skipped)."""
        order = listing if stats is not None else sorted(listing)
        first_new = (self.con.execute("SELECT max(rid) FROM files").fetchone()[0] or 0) + 1
        rows = self._pages(first_new)
        row = next(rows, None)
        for i, rel in enumerate(order):
            while row is not None and row[0] < rel:
                yield row[0], row[1:], False, None, True, None  # a file no longer listed
                row = next(rows, None)
            old = None
            if row is not None and row[0] == rel:
                old, row = row[1:], next(rows, None)
            yield (
                rel,
                old,
                True,
                stats.at(i) if stats is not None else None,
                stats is not None,
                kinds[i] if kinds is not None else None,
            )
        while row is not None:
            yield row[0], row[1:], False, None, True, None
            row = next(rows, None)

    def _pages(self, first_new: int) -> Iterator[tuple[str, int, int, int, int]]:
        """The rows older than ``first_new`` (``(path, rid, mtime_ns, size, inode)``), in path
        order, fetched :data:`PAGE` at a time."""
        after = ""
        sql = "SELECT path, rid, mtime_ns, size, ino FROM files WHERE path > ? AND rid < ? ORDER BY path LIMIT ?"
        while True:
            page = self.con.execute(sql, (after, first_new, PAGE)).fetchall()
            yield from page
            if len(page) < PAGE:
                return
            after = page[-1][0]

    def _rows_of(
        self, listing: list[str], only: list[str], present: Iterable[str] | None
    ) -> tuple[dict[str, _Old], set[str] | frozenset[str], list[str]]:
        """``{path: (rid, mtime_ns, size, inode)}`` of the rows of ``only``, the paths that
        should have a row, and the paths to look at, in order."""
        con = self.con
        wanted = frozenset(present) if present is not None else frozenset(p for p in only if p in set(listing))
        known = {}
        for p in dict.fromkeys(only):
            row = con.execute("SELECT rid, mtime_ns, size, ino FROM files WHERE path=?", (p,)).fetchone()
            if row is not None:
                known[p] = row
        return known, wanted, [p for p in dict.fromkeys(only) if p in wanted or p in known]

    def live_rows(self) -> int:
        """Rows of live files."""
        return self.con.execute("SELECT count(*) FROM files").fetchone()[0]

    def dead_rows(self) -> int:
        """Rows of files changed or removed since they were indexed."""
        return self.con.execute("SELECT count(*) FROM dead").fetchone()[0]

    # ------------------------------------------------------------------ reader

    def facts(self) -> dict[str, list[str]]:
        """``{fact: [paths, sorted]}`` of every file with a fact."""
        out: dict[str, list[str]] = {}
        for path, facts in self.con.execute("SELECT path, facts FROM files WHERE facts != ''"):
            for f in facts.split(","):
                out.setdefault(f, []).append(path)
        for paths in out.values():
            paths.sort()
        return out

    def points(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """``{path: ((fact, target), …)}`` of every manifest that points to other files."""
        out: dict[str, tuple[tuple[str, str], ...]] = {}
        for path, raw in self.con.execute("SELECT path, points FROM files WHERE points != ''"):
            pts = parse_points(raw)
            if pts:
                out[path] = pts
        return out

    def existing(self, paths: Iterable[str]) -> set[str]:
        """Those of ``paths`` that have a row (looked up in chunks)."""
        wanted = sorted(set(paths))
        out: set[str] = set()
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            out.update(r[0] for r in self.con.execute(f"SELECT path FROM files WHERE path IN ({marks})", chunk))
        return out

    def keys(self, path: str) -> dict[str, dict[str, float]] | None:
        """The section words of the manifest at ``path`` (``workspace/manifests/``), ``None``
        when it has none or is not indexed. One primary-key lookup."""
        try:
            with self._lock:
                row = self.con.execute("SELECT keys FROM files WHERE path = ?", (path,)).fetchone()
        except sqlite3.Error:
            return None
        if row is None or not row[0]:
            return None
        try:
            data = json.loads(row[0])
        except (ValueError, RecursionError):
            return None
        return data if isinstance(data, dict) else None

    def search(
        self, words: Iterable[str], limit: int = 20, budget: int = SEARCH_STEP_BUDGET
    ) -> list[tuple[str, float]]:
        """Files matching any of ``words`` (OR), BM25 best first: ``[(path, score > 0)]``.

        Words are quoted (FTS5 syntax in them is literal); a word in more than
        :data:`MAX_DF_SHARE` of the files tells nothing and is left out (document frequencies
        from ``fts5vocab``); the query is interrupted after ``budget`` × :data:`PROGRESS_STEPS`
        virtual-machine steps (SQLite's
        progress handler), which answers ``[]``: a lookup on the request path stays bounded
        on any workspace, deterministically. An empty list of words gives ``[]``."""
        terms = [w for w in dict.fromkeys(x.lower() for x in words if WORD.fullmatch(x or "")) if w not in STOP_WORDS]
        if not terms:
            return []
        spent = [0]

        def over() -> int:
            spent[0] += 1
            return 1 if spent[0] > budget else 0

        with self._lock:
            try:  # (a reader closed by a reopen meanwhile raises ProgrammingError: no match)
                self.con.set_progress_handler(over, PROGRESS_STEPS)
                live = self._live_rows()
                rare = []
                for t in terms[:16]:  # the vocabulary holds stems: "retry" is stored as "retri"
                    vocab = "SELECT doc FROM fts_vocab WHERE term = ?"
                    row = self.con.execute(vocab, (indexed_term(t),)).fetchone()
                    if row is not None and row[0] <= max(MIN_DF_CAP, MAX_DF_SHARE * live):
                        rare.append(t)
                if not rare:
                    return []
                match = " OR ".join(f'"{t}"' for t in rare)
                sql = (
                    "SELECT f.path, -bm25(fts, ?, ?) AS s FROM fts JOIN files f ON f.rid = fts.rowid "
                    "WHERE fts MATCH ? ORDER BY bm25(fts, ?, ?) LIMIT ?"
                )
                w1, w2 = BM25_WEIGHTS
                return [(p, float(s)) for p, s in self.con.execute(sql, (w1, w2, match, w1, w2, limit))]
            except sqlite3.Error as exc:  # interrupted (over budget) or a query problem: no match
                log.debug("content index query failed: %s", exc)
                return []
            finally:
                with contextlib.suppress(sqlite3.Error):
                    self.con.set_progress_handler(None, 0)

    def rows_changed(self) -> None:
        """Rows were written by another connection: the cached live-row count is read again."""
        self._live = None

    def _live_rows(self) -> int:
        cached = self._live
        if cached is None:
            cached = self._live = self.live_rows()
        return cached
