"""The offline docs index behind the ``local`` provider: one SQLite FTS5 database in the cache
directory (``<cache>/docs/docs.sqlite``, WAL, 0600), rebuildable at any time (``dsh-search
cache clean`` deletes it).

* **What is in it**: the documents of :mod:`.sources` (the project's docs, the installed
  distributions' descriptions and module docstrings, the Python reference topics, man pages),
  and the sources earlier web searches returned (``fetched``: at most
  :data:`MAX_FETCHED`, the oldest dropped; only while the local provider is in the chain).
* **When it is built**: on a first search that reaches it, by one background thread
  (:meth:`LocalDocs.ensure_built`), source by source, each in one transaction, a source
  rebuilt only when its stamp changed (checked at most every :data:`STAMP_CHECK_S`); one
  builder per machine (a lock file; another process's search reads what is there). The
  thread stops after :data:`BUILD_BUDGET_S` of work; a source it did not finish is done again
  next time. A search waits for the quick sources (the project's, the packages', Python's:
  :data:`QUICK_SOURCES`) within its own time budget, never for the man pages.
* **Bounded**: every document cut to ``MAX_BODY_CHARS``, every source to its count
  (:mod:`.sources`), the fetched results to :data:`MAX_FETCHED`; a lookup is stopped after
  :data:`QUERY_STEPS` SQLite steps. All of it runs in threads: the event loop only awaits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.cachedir import SQLITE_SIDES, database_files_regular, make_way_for_database
from dsh_sidecar.router.localdocs.sources import (
    MAX_BODY_CHARS,
    Source,
    environment_source_name,
    project_source_name,
    sources,
)
from dsh_sidecar.router.providers.base import HttpRequest, HttpResponse

log = logging.getLogger(__name__)

#: The database file in the docs cache folder.
DB_NAME: Final = "docs.sqlite"
#: Schema version (a database of another version is rebuilt). 2: the installed distributions'
#: sources are named by their environment (``packages:<digest>``), as the project's by its root.
SCHEMA_VERSION: Final = "2"
#: Wall seconds a build thread works before it stops (the rest next time).
BUILD_BUDGET_S: Final = 60.0
#: Sources a search waits for (quick to read), when the index is new.
QUICK_SOURCES: Final = ("project:", "packages", "python")
#: Seconds between two checks of the sources' stamps (a check lists the distributions).
STAMP_CHECK_S: Final = 3600.0
#: Most remembered web results (the oldest dropped first).
MAX_FETCHED: Final = 2000
#: SQLite virtual-machine steps a lookup may take (then it answers what it has: nothing).
QUERY_STEPS: Final = 2_000_000
#: Longest snippet returned, in FTS5 tokens.
SNIPPET_TOKENS: Final = 40
#: Seconds a closing index lets its build go on before stopping it.
CLOSE_GRACE_S: Final = 1.0
#: The sources every workspace and environment shares (Python's reference, man pages, fetched web results).
SHARED_SOURCES: Final = ("python", "man", "fetched")
#: Documents written per transaction of a build (a build cut short keeps what it committed).
CHUNK: Final = 100
#: Prefix of a source's stamp while its build is unfinished.
PARTIAL: Final = "partial:"
#: Remembered results queued before the writer thread takes them (more are dropped).
REMEMBER_QUEUE: Final = 64

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)",
    "CREATE TABLE IF NOT EXISTS sources(name TEXT PRIMARY KEY, stamp TEXT, checked REAL, done INTEGER)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(title, body, url UNINDEXED, source UNINDEXED,"
    " at UNINDEXED, tokenize='porter unicode61')",
)


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=False)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    return con


class LocalDocs:
    """The index of one process: ``folder`` is the docs cache folder, ``project`` the workspace
    whose docs are indexed (``None``: none)."""

    def __init__(self, folder: Path, project: Path | None = None) -> None:
        self.folder = folder
        self.project = project.resolve() if project is not None else None
        #: The only project source a lookup answers from (the index holds every workspace's
        #: docs; another project's files are not this one's to show).
        self.project_source = project_source_name(self.project) if self.project is not None else ""
        #: The scoped sources (``<kind>:<digest>``) a lookup answers from: this workspace's docs
        #: and this environment's distributions (another virtual environment's are not
        #: installed here); :data:`SHARED_SOURCES` are every process's.
        self.scoped = (self.project_source, environment_source_name("packages"), environment_source_name("modules"))
        #: The sources a lookup or a count reads (a name of no source of this version, as an
        #: older index's, answers nothing), and the ``WHERE`` term that binds them.
        self.answered = (*SHARED_SOURCES, *self.scoped)
        self._answered_sql = f"source IN ({', '.join('?' * len(self.answered))})"
        self.path = folder / DB_NAME
        self._lock = threading.Lock()
        self._builder: threading.Thread | None = None
        self._quick = threading.Event()
        self._stop = threading.Event()
        self._checked = False
        self._force = False
        self._remember: queue.Queue[tuple[str, list[dict[str, Any]]] | None] = queue.Queue(REMEMBER_QUEUE)
        self._writer: threading.Thread | None = None
        self._said_unreadable = False

    # ------------------------------------------------------------------ opening

    def _open(self) -> sqlite3.Connection:
        """The build's connection (under the build lock). What is not our database is a cold
        start: a FIFO, a link or a folder in its place is removed or set aside first
        (:func:`~dsh_sidecar.cachedir.make_way_for_database`), and a file SQLite cannot read
        (random bytes, a truncated index) is removed and made anew."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        made = make_way_for_database(self.path)
        if made:
            log.warning("offline docs index: %s; it is built again", ", ".join(made))
        if not database_files_regular(self.path):
            raise sqlite3.OperationalError("the index's place holds something that is not a regular file")
        try:
            return self._open_schema()
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise  # in use, not broken
            log.warning("offline docs index unreadable (%s); it is built again", exc)
            for file in (self.path, *(Path(f"{self.path}{side}") for side in SQLITE_SIDES)):
                file.unlink(missing_ok=True)
            return self._open_schema()

    def _open_schema(self) -> sqlite3.Connection:
        fresh = not self.path.exists()
        con = _connect(self.path)
        if fresh:
            with contextlib.suppress(OSError):
                os.chmod(self.path, 0o600)
        try:
            for statement in _SCHEMA:
                con.execute(statement)
            return self._schema_version(con)
        except BaseException:
            con.close()
            raise

    def _schema_version(self, con: sqlite3.Connection) -> sqlite3.Connection:
        row = con.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row is None:
            con.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
        elif row[0] != SCHEMA_VERSION:  # another version's index: start over
            con.execute("DELETE FROM docs")
            con.execute("DELETE FROM sources")
            con.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
        return con

    # ------------------------------------------------------------------ building

    def build_now(self, budget_s: float = BUILD_BUDGET_S) -> dict[str, int]:
        """Build (or bring up to date) every source now, on this thread, within ``budget_s``;
        ``{source: documents}`` of the index afterwards (``dsh-search cache index``)."""
        with self._lock:
            self._checked = True
        self._build(budget_s, force=True)
        return self.counts()

    def counts(self) -> dict[str, int]:
        """``{source: documents}`` in the index that this workspace's searches answer from
        (another workspace's project docs left out; empty when there is no index)."""
        if not self.path.exists() or not database_files_regular(self.path):
            return {}
        try:
            con = self._open_for_reading()
            try:
                rows = con.execute(
                    f"SELECT source, count(*) FROM docs WHERE {self._answered_sql} GROUP BY source",
                    self.answered,
                ).fetchall()
            finally:
                con.close()
        except sqlite3.Error as exc:
            self._unreadable(exc)
            return {}
        return {str(name).split(":")[0]: int(n) for name, n in rows}

    def ensure_built(self) -> None:
        """Start the build thread unless one runs or this process checked already."""
        with self._lock:
            if self._checked or (self._builder is not None and self._builder.is_alive()):
                return
            self._checked = True
            self._builder = threading.Thread(target=self._build, name="dsh-docs-index", daemon=True)
            self._builder.start()

    def _build(self, budget_s: float = BUILD_BUDGET_S, force: bool = False) -> None:
        deadline = time.monotonic() + budget_s
        self._force = force
        try:
            from filelock import FileLock, Timeout

            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            try:
                with FileLock(str(self.path) + ".lock", timeout=budget_s if force else 0, mode=0o600):
                    con = self._open()
                    try:
                        for source in sources(self.project):
                            if not source.name.startswith(QUICK_SOURCES):
                                self._quick.set()  # the quick ones are in: searches need not wait
                            if self._stop.is_set() or time.monotonic() > deadline:
                                break
                            self._build_source(con, source, deadline)
                    finally:
                        con.close()
            except Timeout:  # another process builds: search what is there
                pass
        except Exception:  # a build failure leaves the index as it was; searches go on
            log.warning("offline docs index: build failed", exc_info=True)
        finally:
            self._quick.set()

    def _build_source(self, con: sqlite3.Connection, source: Source, deadline: float) -> None:
        """(Re)build one source when its stamp changed, :data:`CHUNK` documents a transaction;
        a build cut short (the budget, the process's end) is recorded as ``partial:<stamp>``
        with the number of items done, and the next build goes on from there."""
        now = time.time()
        row = con.execute("SELECT stamp, checked, done FROM sources WHERE name=?", (source.name,)).fetchone()
        recent = row is not None and now - (row[1] or 0) < STAMP_CHECK_S
        if recent and not self._force and not str(row[0]).startswith(PARTIAL):
            return
        stamp = source.stamp()
        if row is not None and row[0] == stamp:
            con.execute("UPDATE sources SET checked=? WHERE name=?", (now, source.name))
            return
        items = source.items()
        start = int(row[2] or 0) if row is not None and row[0] == PARTIAL + stamp else 0
        fresh, done, committed = start == 0, start, start
        batch: list[tuple[str, str, str, str, float]] = []
        for item in items[start:]:
            if self._stop.is_set() or time.monotonic() > deadline:
                break
            doc = source.read(item)
            done += 1
            if doc is not None:
                batch.append((doc.title[:500], doc.body[:MAX_BODY_CHARS], doc.url, source.name, now))
            if done - committed >= CHUNK:
                self._commit(con, source.name, batch, stamp, done, len(items), fresh)
                fresh, committed, batch = False, done, []
        if batch or (done == len(items) and (fresh or committed != done)):
            self._commit(con, source.name, batch, stamp, done, len(items), fresh)

    def _commit(
        self, con: sqlite3.Connection, name: str, batch: list[Any], stamp: str, done: int, total: int, fresh: bool
    ) -> None:
        """One chunk of a source in one transaction (a fresh build first drops the old documents)."""
        con.execute("BEGIN IMMEDIATE")
        try:
            if fresh:
                con.execute("DELETE FROM docs WHERE source=?", (name,))
            con.executemany("INSERT INTO docs(title, body, url, source, at) VALUES (?, ?, ?, ?, ?)", batch)
            state = stamp if done >= total else PARTIAL + stamp
            con.execute(
                "INSERT OR REPLACE INTO sources(name, stamp, checked, done) VALUES (?, ?, ?, ?)",
                (name, state, time.time(), done),
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------------ searching

    async def exchange(self, request: HttpRequest, budget_ms: float) -> HttpResponse:
        """Answer a ``local`` provider request within ``budget_ms`` (in a thread): a JSON body
        ``{"results": [...], "docs": n, "building": bool}``, status 200."""
        deadline = time.monotonic() + max(budget_ms, 0) / 1000
        return await asyncio.to_thread(self.answer, request, deadline)

    def answer(self, request: HttpRequest, deadline: float) -> HttpResponse:
        """:meth:`exchange`'s work, on the caller's thread (blocking)."""
        self.ensure_built()
        self._quick.wait(min(max(0.0, deadline - time.monotonic() - 0.05), BUILD_BUDGET_S))
        params = request.params or {}
        match, limit = params.get("match", ""), int(params.get("limit", "5") or 5)
        results: list[dict[str, str]] = []
        docs = 0
        if self.path.exists() and database_files_regular(self.path):  # a FIFO there: no open that waits
            try:
                con = self._open_for_reading()
                try:
                    docs = con.execute("SELECT count(*) FROM docs").fetchone()[0]
                    if match:
                        results = self._lookup(con, match, limit)
                finally:
                    con.close()
            except sqlite3.Error as exc:  # unreadable: no answer from it (the next build makes it anew)
                self._unreadable(exc)
        building = self._builder is not None and self._builder.is_alive()
        body = json.dumps({"results": results, "docs": docs, "building": building}).encode()
        return HttpResponse(200, {"content-type": "application/json"}, body)

    def _unreadable(self, exc: sqlite3.Error) -> None:
        """A lookup found the index unreadable: said once per process; the next build (another
        process's start, ``dsh-search cache index``) removes it and makes it anew."""
        with self._lock:
            said, self._said_unreadable = self._said_unreadable, True
        if not said:
            log.warning("offline docs index unreadable (%s); it answers nothing until it is built again", exc)
            with self._lock:
                self._checked = False  # the next ensure_built tries a build again

    def _open_for_reading(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=2.0, isolation_level=None, check_same_thread=False)
        con.execute("PRAGMA query_only=1")
        return con

    def _lookup(self, con: sqlite3.Connection, match: str, limit: int) -> list[dict[str, str]]:
        steps = [0]
        every = max(1, min(1000, QUERY_STEPS))

        def progress() -> int:
            steps[0] += 1
            return 1 if steps[0] * every >= QUERY_STEPS else 0

        con.set_progress_handler(progress, every)
        try:
            rows = con.execute(
                "SELECT url, title, snippet(docs, 1, '', '', '…', ?), source FROM docs WHERE docs MATCH ?"
                f" AND {self._answered_sql} ORDER BY bm25(docs, 4.0, 1.0) LIMIT ?",
                (SNIPPET_TOKENS, match, *self.answered, max(1, min(limit, 50)) * 2),
            ).fetchall()
        except sqlite3.OperationalError as exc:  # interrupted (the step bound) or a bad expression
            log.info("offline docs index: lookup stopped: %s", exc)
            return []
        finally:
            con.set_progress_handler(None, 0)
        out: list[dict[str, str]] = []
        seen: set[str] = set()
        for url, title, snippet, source in rows:
            if url in seen:
                continue
            seen.add(url)
            out.append({"url": url, "title": title, "snippet": snippet, "source": str(source).split(":")[0]})
        return out[:limit]

    # ------------------------------------------------------------------ remembering

    def remember(self, query: str, sources: Iterable[Any]) -> None:
        """Keep a web search's sources for later offline searches (queued for the writer
        thread; dropped when the queue is full). Never blocks."""
        rows = [
            {"url": s.url, "title": s.title or "", "snippet": s.snippet or ""}
            for s in sources
            if str(getattr(s, "url", "")).startswith(("https://", "http://"))
        ]
        if not rows:
            return
        try:
            self._remember.put_nowait((query, rows))
        except queue.Full:
            return
        with self._lock:
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(target=self._write_fetched, name="dsh-docs-remember", daemon=True)
                self._writer.start()

    def _write_fetched(self) -> None:
        try:
            con = self._open()
        except (OSError, sqlite3.Error):
            log.info("offline docs index: cannot keep fetched results", exc_info=True)
            return
        try:
            while True:
                try:
                    item = self._remember.get(timeout=1.0)
                except queue.Empty:
                    return
                if item is None:
                    return
                query, rows = item
                now = time.time()
                try:
                    con.execute("BEGIN IMMEDIATE")
                    for r in rows:
                        con.execute("DELETE FROM docs WHERE source='fetched' AND url=?", (r["url"],))
                        con.execute(
                            "INSERT INTO docs(title, body, url, source, at) VALUES (?, ?, ?, 'fetched', ?)",
                            (r["title"][:500], f"{r['snippet']}\n{query}"[:MAX_BODY_CHARS], r["url"], now),
                        )
                    con.execute(
                        "DELETE FROM docs WHERE rowid IN (SELECT rowid FROM docs WHERE source='fetched'"
                        " ORDER BY at DESC LIMIT -1 OFFSET ?)",
                        (MAX_FETCHED,),
                    )
                    con.execute("COMMIT")
                except sqlite3.Error:
                    log.info("offline docs index: fetched results not kept", exc_info=True)
                    with contextlib.suppress(sqlite3.Error):
                        con.execute("ROLLBACK")
        finally:
            con.close()

    def close(self, grace_s: float = CLOSE_GRACE_S, timeout_s: float = 2.0) -> None:
        """Let a running build work ``grace_s`` more, then stop it (it commits what it read:
        the next build goes on from there, so a one-shot ``dsh-search query`` adds a little
        each time), and let the writer finish its queue; each waited for at most ``timeout_s``."""
        builder = self._builder
        if builder is not None and builder.is_alive():
            builder.join(grace_s)
        self._stop.set()
        if builder is not None and builder.is_alive():
            builder.join(timeout_s)
        writer = self._writer
        if writer is not None and writer.is_alive():
            with contextlib.suppress(queue.Full):
                self._remember.put_nowait(None)
            writer.join(timeout_s)
