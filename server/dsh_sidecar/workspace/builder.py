"""Building the workspace graph off the request path: :class:`GraphBuilder` runs a
:class:`~dsh_sidecar.workspace.graph.WorkspaceGraph` build in a daemon worker thread, keeps
answering from the previous full graph while a rebuild runs, applies file changes, and reports
progress (``$/progress``) for large workspaces."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Container
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.workspace import gitguard
from dsh_sidecar.workspace.cache import SymbolCache
from dsh_sidecar.workspace.graph import (
    LARGE_REPO_FILES,
    FileNode,
    GraphDelta,
    Progress,
    WorkspaceGraph,
)
from dsh_sidecar.workspace.kindcache import KindCache
from dsh_sidecar.workspace.listingcache import (
    SOURCES,
    Listing,
    ListingCache,
    git_listing,
    listing_differences,
    walk_differences,
)
from dsh_sidecar.workspace.sharedreads import SharedReads

log = logging.getLogger(__name__)

#: Most changed paths a refresh re-reads on the caller's thread; more start a background rebuild.
MAX_INLINE_REFRESH: Final = 200
#: Seconds the refresh thread waits before taking the queued paths: a burst of
#: ``didChangeWatchedFiles`` notifications (an editor saving several files, a formatter, a
#: checkout in pieces) is applied as one batch, one refresh of the content index and the targets.
COALESCE_S: Final = 0.05
#: Seconds without a new batch before what the batches changed is written to the caches (the
#: symbol cache's journal, the listing, the kinds: :meth:`GraphBuilder._keep`), and the longest
#: a change waits for that under a steady stream of batches.
KEEP_S: Final = 1.0
KEEP_MAX_S: Final = 10.0


class GraphBuilder:
    """Builds a :class:`WorkspaceGraph` in a daemon worker thread so no request waits for it.

    :attr:`graph` is ``None`` until the file-level graph is ready (usually well under a
    second), then the file-level graph (``graph.symbols is None`` while the symbol pass runs),
    then the full graph. A rebuild keeps answering from the previous full graph until the new
    one is complete. ``progress(done, total)`` (symbol files indexed of the total) is called
    from the worker thread (the server marshals it to its loop) for builds of at least
    ``progress_min_files`` files (default :data:`LARGE_REPO_FILES`); ``on_ready(graph)`` when
    a build finishes; ``on_start()`` whenever a build is started (by :meth:`start`, or by a
    :meth:`refresh` too large to apply in place), on the caller's thread. ``cache_dir`` (the
    server passes ``$DSH_HOME/workspace``) keeps the symbol index on disk (``cache.py``) and the
    last verified listing (``listingcache.py``): a session's first build is made from it, ready
    without walking; the tree is walked after ready and the differences applied (:meth:`_verify`).
    :meth:`rebuild` restarts; :meth:`refresh` applies file changes now (and again after a
    running build finishes).
    """

    def __init__(
        self,
        root: Path | None,
        *,
        symbols: bool = True,
        progress: Progress | None = None,
        on_ready: Callable[[WorkspaceGraph], None] | None = None,
        progress_min_files: int = LARGE_REPO_FILES,
        cache_dir: Path | None = None,
        on_files: Callable[[WorkspaceGraph], None] | None = None,
        on_change: Callable[[WorkspaceGraph, GraphDelta], None] | None = None,
        on_start: Callable[[], None] | None = None,
    ) -> None:
        self.root = root
        self.on_start = on_start
        self.on_files = on_files
        self.on_change = on_change
        self._refresher: threading.Thread | None = None
        self._refresh_idle = threading.Event()
        self._refresh_idle.set()
        kept = cache_dir is not None and root is not None
        self.cache = SymbolCache(cache_dir, root) if kept else None  # type: ignore[arg-type]
        self.kind_cache = KindCache(cache_dir, root) if kept else None  # type: ignore[arg-type]
        #: the last verified walk (``listingcache.py``): a session's first build is made from it
        self.listing_cache = ListingCache(cache_dir, root) if kept else None  # type: ignore[arg-type]
        self._listing_taken = False
        self.progress_min_files = progress_min_files
        self.symbols = symbols
        self.progress = progress
        self.on_ready = on_ready
        self.graph: WorkspaceGraph | None = None
        #: Files listed by the running (or last) build; set before its symbol pass starts.
        self.file_count = 0
        self.error: str | None = None
        self._lock = threading.Lock()
        #: Wakes the refresh thread when changes are queued (see :meth:`refresh`).
        self._wake_refresher = threading.Condition(self._lock)
        self._closed = False
        self._thread: threading.Thread | None = None
        self._worker = False
        self._cancel = threading.Event()
        self._pending: dict[str, None] = {}  # the paths queued for the next batch, each once
        self._rebuild_due = False  # a full build asked for while one ran: started once it publishes
        self._done = threading.Event()
        #: set when no symbol pass runs (cleared while a build lists and indexes symbols)
        self._symbols_idle = threading.Event()
        self._symbols_idle.set()
        self._generation = 0
        #: the generation whose graph the build published (and whose queued changes it took):
        #: changes queued after that go to the refresh thread, even while the worker winds down
        self._published = -1
        self._last: tuple[int, int] | None = None
        #: the generation whose symbol cache is written after its graph was published: not part
        #: of the build (:attr:`building` is ``False`` meanwhile; :meth:`wait` waits for it)
        self._saving = -1
        #: set once what the applied changes did is written to the caches (:meth:`wait_kept`)
        self._kept = threading.Event()
        self._kept.set()

    #: where the next symbol pass keeps the files it reads (``sharedreads.py``), set by
    #: ``on_files``' listener (the projection hands it to the content index's sync); taken once
    next_reads: SharedReads | None = None
    #: why the kept listing was not taken (``dsh/status`` ``listingRefused``), else ``None``
    listing_refused: str | None = None
    #: the walk after ready (:meth:`_verify`): CPU seconds (its thread's), paths found changed
    verified_walk: tuple[float, int] | None = None
    #: batches of changed paths applied, and the CPU seconds they took (the applying thread's)
    refreshes = 0
    refresh_cpu_s = 0.0
    #: writes of the caches after changes, and the CPU seconds they took (the refresh thread's)
    keeps = 0
    keep_cpu_s = 0.0
    #: the graph whose applied changes the caches lack (:meth:`_keep`), and since when
    _unkept: WorkspaceGraph | None = None
    _unkept_since = 0.0

    @property
    def building(self) -> bool:
        """Whether a build is running (or a coalesced restart is due). The symbol cache's write
        after a build published its graph is not building: the graph is whole, and the write
        (O(postings), seconds on a large changed tree) must not hold back readiness."""
        return self._worker and self._saving != self._generation

    def start(self) -> None:
        """Start a build (no-op without a root). Requests coalesce: while a build runs, it is
        cancelled and the same worker thread starts the newest request once it stops, so a
        burst of N requests runs at most one build at a time and ends with one up-to-date
        build (never N threads)."""
        if self.root is None:
            return
        with self._lock:
            self._rebuild_due = False  # this build reads every file
            self._cancel.set()
            self._cancel = threading.Event()
            self._generation += 1
            self._done.clear()
            self._last = None
            if self._worker:
                return  # the running worker picks the new generation up
            self._worker = True
            self._thread = threading.Thread(target=self._work, name="dsh-workspace-graph", daemon=True)
            self._thread.start()
        if self.on_start is not None:
            self.on_start()

    def _work(self) -> None:
        """The worker: build the newest generation until no newer one is requested."""
        try:
            while True:
                with self._lock:
                    gen, cancel = self._generation, self._cancel
                self._run(gen, cancel)
                with self._lock:
                    if gen == self._generation:
                        self._worker = False
                        return
        except BaseException:
            with self._lock:
                self._worker = False
            raise

    rebuild = start

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the current build and any queued refresh are done; ``True`` if they are."""
        if self.root is None:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._done.wait(timeout):
            return False
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        return self._refresh_idle.wait(left)

    def wait_symbols(self, timeout: float | None = None) -> bool:
        """Block until no build is listing files or indexing symbols (the symbol cache's write
        after it is not waited for); ``True`` if so. The content index's full sync waits for it
        (``projection.py``): the two passes each read and parse every file, and run side by side
        they handed the GIL to each other at every system call (~1 s of CPU more on 100k files
        for the same work, and no sooner done: the work holds the GIL)."""
        return self._symbols_idle.wait(timeout)

    def cancel(self) -> None:
        """Stop a running build (the current graph stays)."""
        self._cancel.set()

    def refresh(self, changed: list[str] | None) -> None:
        """Apply file changes in a worker thread, never on the caller's (``None``, or more
        than :data:`MAX_INLINE_REFRESH` paths such as a branch switch: a background rebuild).
        Changes arriving while a build runs are applied when it finishes (each path queued once;
        more than :data:`MAX_INLINE_REFRESH` queued make a full build instead; a full build asked
        for while one runs starts once that one has published its graph); notifications that
        arrive within :data:`COALESCE_S` of each other (or while a batch is applied) make one
        batch; ``on_change(graph, delta)`` is called (worker thread) after each applied batch.

        The batches are applied by one ``dsh-workspace-refresh`` thread, started by the build
        (off the caller's thread) and kept waiting for the next change: the caller (the
        server's event loop, on ``didChangeWatchedFiles``) only queues the paths and wakes it.
        Starting a thread per batch there held the loop until the new thread got the GIL and a
        CPU, tens of ms a batch on a loaded machine."""
        with self._lock:
            if changed is not None and len(changed) <= MAX_INLINE_REFRESH:
                self._pending.update(dict.fromkeys(changed))
            whole = changed is None or len(changed) > MAX_INLINE_REFRESH or len(self._pending) > MAX_INLINE_REFRESH
            if whole:  # a full build, which reads every file
                self._pending.clear()
                if self._worker and self._published != self._generation:
                    # one more build once the running one has published, not a restart of it: a
                    # restart each time let a client sending such a batch every 0.5 s keep a
                    # serve on pallets/flask from ever being ready
                    self._rebuild_due = True
                    return
        if whole:
            self.start()
            return
        with self._lock:
            if self.graph is None or (self._worker and self._published != self._generation):
                return  # the build applies them when it finishes
            self._wake()

    def _wake(self) -> None:
        """Have the refresh thread apply the queued changes (call with :attr:`_lock` held); it
        is started only if it never started (or died), on the caller's thread."""
        self._refresh_idle.clear()
        if self._refresher is not None and self._refresher.is_alive():
            self._wake_refresher.notify()
        else:
            self._start_refresher()

    def _start_refresher(self) -> None:
        """Start the refresh thread (call with :attr:`_lock` held)."""
        if self._closed:
            return
        self._refresher = threading.Thread(target=self._apply_pending, name="dsh-workspace-refresh", daemon=True)
        self._refresher.start()

    def _apply_pending(self) -> None:
        try:
            while True:
                with self._lock:
                    keep = self._next_keep()
                    closed = self._closed
                if keep is not None:
                    self._keep(keep)
                if closed:
                    return
                if keep is not None:
                    continue
                time.sleep(COALESCE_S)  # the rest of a burst joins this batch
                with self._lock:
                    pending, self._pending = self._pending, {}
                    graph = self.graph
                if pending and graph is not None:
                    self._apply(graph, list(pending))
        finally:
            self._refresh_idle.set()
            self._kept.set()

    def _next_keep(self) -> WorkspaceGraph | None:
        """Wait (with :attr:`_lock` held) for queued changes, or for the moment to write what the
        applied ones changed to the caches: :data:`KEEP_S` without a batch, :data:`KEEP_MAX_S`
        after the first unwritten one whatever, or the thread's end. The graph to keep, or
        ``None`` (changes are queued)."""
        while not self._closed:
            late = self._unkept is not None and time.monotonic() - self._unkept_since >= KEEP_MAX_S
            if self._pending and not late:
                return None
            if late:
                break
            self._refresh_idle.set()
            if self._unkept is None:
                self._wake_refresher.wait()
            elif not self._wake_refresher.wait(KEEP_S) and not self._pending:
                break
        keep, self._unkept = self._unkept, None
        return keep

    def _keep(self, graph: WorkspaceGraph) -> None:
        """Write what the applied batches changed to the caches the next session starts from,
        on the refresh thread: the symbol entries of the changed files to the symbol cache's
        journal (O(the journal): ``journal.py``), the changed files' listing rows to the kept
        listing's journal (``listingjournal.py``; the listing whole when it cannot take them), and,
        when a path came or went, the kinds (``kindcache.py``, O(files)). The next session then
        takes every file from them as after an unchanged one."""
        t0 = time.thread_time()
        try:
            listing = self.listing_cache is not None and graph.time_source in SOURCES and graph.verified
            unkept = graph.unkept(listing)
            if self.cache is not None and unkept.entries:
                self.cache.note(unkept.entries)
                self.cache.keep()
            rows, kept = unkept.rows, self.listing_cache
            if rows is not None and kept is not None and not kept.note(rows, graph.time_source):
                self._keep_listing_whole(graph)  # the journal could not take them
            if unkept.kinds is not None and self.kind_cache is not None:
                self.kind_cache.save(*unkept.kinds)
        except Exception as exc:  # a cache not written is only a slower next session
            log.warning("workspace caches not kept after changes: %s", exc)
        finally:
            self.keeps += 1
            self.keep_cpu_s += time.thread_time() - t0
            with self._lock:
                if self._unkept is None:
                    self._kept.set()

    def wait_kept(self, timeout: float | None = None) -> bool:
        """Block until what the applied changes did is written to the caches; ``True`` if so."""
        return self._kept.wait(timeout)

    def close(self) -> None:
        """Cancel a running build and end the refresh thread (queued changes are dropped)."""
        self.cancel()
        with self._lock:
            self._closed = True
            self._wake_refresher.notify_all()

    def _apply(self, graph: WorkspaceGraph, pending: list[str], listed: Container[str] | None = None) -> None:
        t0 = time.thread_time()
        try:
            delta = graph.apply(pending, listed)
        except Exception as exc:  # a refresh failure keeps the previous graph
            log.warning("workspace graph refresh failed: %s", exc)
            return
        self.refreshes += 1
        self.refresh_cpu_s += time.thread_time() - t0
        if delta.paths:
            with self._lock:
                if self._unkept is None:
                    self._unkept_since = time.monotonic()
                self._unkept = graph
                self._kept.clear()
                self._wake_refresher.notify()
        if self.on_change is not None and delta.paths:
            try:
                self.on_change(graph, delta)
            except Exception as exc:  # a listener failure must not stop the refreshes
                log.warning("workspace graph listener failed: %s", exc)

    # -------------------------------------------------------------- live lookups (hot path)
    # The suggester may hold the builder itself: each lookup reads the graph current at the
    # call, so a graph published later (or rebuilt) is used without re-wiring.

    @property
    def ready(self) -> bool:
        """Whether the symbol index of the current graph is built."""
        graph = self.graph
        return graph is not None and graph.symbols is not None

    def definitions(self, name: str) -> list[str]:
        """:meth:`WorkspaceGraph.definitions` of the current graph; ``[]`` without one."""
        graph = self.graph
        return graph.definitions(name) if graph is not None else []

    def usages(self, name: str, limit: int = 5) -> list[str]:
        """:meth:`WorkspaceGraph.usages` of the current graph; ``[]`` without one."""
        graph = self.graph
        return graph.usages(name, limit) if graph is not None else []

    def exists(self, path: str) -> bool | None:
        """Whether ``path`` is a node; ``None`` while no graph is built (ask the file list)."""
        graph = self.graph
        return graph.exists(path) if graph is not None and graph.files else None

    def node(self, path: str) -> FileNode | None:
        """:meth:`WorkspaceGraph.node` of the current graph; ``None`` without one."""
        graph = self.graph
        return graph.node(path) if graph is not None else None

    def status(self) -> dict[str, Any]:
        """``{state, ...graph status}`` for ``dsh/status``: state is ``off`` (no workspace),
        ``pending``, ``building``, ``files`` (file level ready, symbols building), ``ready`` or
        ``failed``."""
        graph = self.graph
        if self.root is None:
            state = "off"
        elif self.error is not None and graph is None:
            state = "failed"
        elif graph is None:
            state = "building" if self.building else "pending"
        elif graph.symbols is None and self.symbols:
            state = "files"
        else:
            state = "ready"
        out: dict[str, Any] = {"state": state}
        if graph is not None:
            out.update(graph.status())
        if self.error is not None:
            out["error"] = self.error
        if self.listing_refused is not None:
            out["listingRefused"] = self.listing_refused
        return out

    def set_progress(self, progress: Progress | None) -> None:
        """Attach (or detach) the progress callback. A build already in its symbol pass is
        replayed to the new callback as ``(0, total)`` then its latest ``(done, total)``."""
        with self._lock:
            self.progress = progress
            last = self._last if self.building and self.file_count >= self.progress_min_files else None
        if progress is not None and last is not None:
            progress(0, last[1])
            if last[0] > 0:
                progress(*last)

    def _report(self, done: int, total: int) -> None:
        if self.file_count < self.progress_min_files:
            return
        with self._lock:
            self._last = (done, total)
            progress = self.progress
        if progress is not None:
            try:
                progress(done, total)
            except Exception as exc:  # a reporter failure must not stop the build
                log.debug("graph progress callback failed: %s", exc)

    def _take_listing(self) -> Listing | None:
        """The kept listing for the session's first build, once: a walk's outside git, git's in a
        checkout, no longer than its index's head allows (:func:`.gitguard.listing_refusal`: in
        :attr:`listing_refused`); ``None`` otherwise (the build lists the tree)."""
        if self._listing_taken or self.listing_cache is None or self.root is None:
            return None
        self._listing_taken = True
        if not self.root.is_dir():
            return None
        source = "git" if gitguard.is_checkout(self.root) else "mtime"
        listed = self.listing_cache.load()
        if listed is None or listed.source != source:
            return None
        if source == "git" and (refusal := gitguard.listing_refusal(self.root, len(listed.stats.files))):
            self.listing_refused = refusal
            log.info("kept workspace listing not taken (%s); listing the checkout", refusal)
            return None
        return listed

    def _keep_listing(self, graph: WorkspaceGraph) -> None:
        """Keep the listing a build made: the walk's, or git's with the symbol pass's stats."""
        walked, graph.walk = graph.walk, None
        if self.listing_cache is None:
            return
        if walked is not None:
            self.listing_cache.save(walked.stats, walked.stamps)
        elif graph.time_source == "git":
            self._keep_listing_whole(graph)  # its source: "git"

    def _failed(self, gen: int, listed: Listing | None) -> None:
        """The build ``gen`` failed and published nothing: what was asked for while it ran still
        happens (a full build due: one more build, as :meth:`_publish` starts it; else the
        changes queued, on the graph answered from); a build from a past listing walks instead."""
        with self._lock:
            if gen != self._generation:
                return  # a newer build runs next, and reads them
            due = self._rebuild_due
            if not due and listed is None and self._pending and self.graph is not None:
                self._wake()
        if listed is not None:
            self._walk_instead()  # (a full build: covers a due one)
        elif due:
            self.start()

    def _walk_instead(self) -> None:
        """A build from a past listing failed (a forged one this module does not foresee): the
        listing is forgotten and the tree walked, as a session without one is built."""
        if self.listing_cache is not None:
            self.listing_cache.clear()
        self.start()  # the listing was taken: this build walks

    def _verify(self, graph: WorkspaceGraph, listed: Listing, gen: int, cancel: threading.Event) -> None:
        """List the tree of a graph made from a past session's listing (``listed``) again — a
        walk, or git's listing of a checkout with a ``stat`` a file — and apply what differs
        (files added, deleted or edited since) through the same path as a batch of watched-file
        changes (:meth:`_apply`; more than :data:`MAX_INLINE_REFRESH`, or git unable to list it
        now, start a full build instead), and git's change times where its history moved; then
        the graph is verified and the listing kept for the next session. Runs on the build's
        thread after the graph is published, the GIL handed over at every system call, as a
        cold build's listing does."""
        t0 = time.thread_time()
        retimed: dict[str, float] = {}
        if listed.source == "git":
            fresh = git_listing(self.root)  # type: ignore[arg-type]
            changed, retimed = listing_differences(listed, fresh) if fresh is not None else ([], {})
        else:
            changed, fresh = walk_differences(listed.stats, self.root)  # type: ignore[arg-type]
        if cancel.is_set() or gen != self._generation:
            return
        if len(changed) > MAX_INLINE_REFRESH or (fresh is None and listed.source == "git"):
            self.verified_walk = (time.thread_time() - t0, len(changed))
            self.start()  # as a branch switch: a full build (it lists the tree: the listing was taken)
            return
        if changed:
            self._apply(
                graph, changed, set(fresh.stats.files) if fresh is not None and listed.source == "git" else None
            )
        if retimed:
            graph.retime(retimed)
        graph.verified = True
        self.verified_walk = (time.thread_time() - t0, len(changed))
        if fresh is not None and self.listing_cache is not None and (changed or retimed or listed.source != "git"):
            self.listing_cache.save(fresh.stats, fresh.stamps, fresh.source)
        elif self.listing_cache is not None and self.listing_cache.compact_due():
            self._keep_listing_whole(graph)

    def _keep_listing_whole(self, graph: WorkspaceGraph) -> None:
        """Write the listing as the graph holds it now, whole (O(files)), its journal emptied: when
        the journal cannot take a batch's rows, or held more than ``COMPACT_AT`` files when read."""
        if self.listing_cache is not None and (listed := graph.listing()) is not None:
            self.listing_cache.save(listed.stats, listed.stamps, listed.source)

    def _publish(self, graph: WorkspaceGraph, gen: int) -> bool:
        """Make ``graph``, of the build ``gen``, the one answered from (``False``: a newer build
        was asked for, nothing published); then apply the changes queued while it was built
        (each path once: a client repeating a batch queued every copy, 338 MiB for 20,000
        batches of 100 paths), or start the full build asked for meanwhile."""
        with self._lock:
            if gen != self._generation:
                return False
            pending, self._pending = self._pending, {}
            due, self._rebuild_due = self._rebuild_due, False
            self.graph = graph
            self._published = gen
            if self._refresher is None or not self._refresher.is_alive():
                self._start_refresher()  # here, off the request path: it waits for changes
        if due:
            self.start()  # changes that need a full build came while this one ran
        elif pending:
            self._apply(graph, list(pending))
        return True

    def _run(self, gen: int, cancel: threading.Event) -> None:
        self._symbols_idle.clear()
        listed: Listing | None = None
        try:
            listed = self._take_listing()
            graph = WorkspaceGraph.build_files(self.root, self.kind_cache, listed)  # type: ignore[arg-type]
            if gen != self._generation:
                return
            self.file_count = len(graph)
            previous = self.graph
            if previous is None or (self.symbols and previous.symbols is None):
                self.graph = graph  # nothing better to answer from meanwhile
            if self.on_files is not None:
                try:
                    self.on_files(graph)
                except Exception as exc:  # a listener failure must not stop the build
                    log.warning("workspace graph listener failed: %s", exc)
            reads, self.next_reads = self.next_reads, None
            if self.symbols:
                graph.index_symbols(
                    progress=self._report, cancel=cancel, cache=self.cache, defer_save=True, shared=reads
                )
            else:
                self._report(0, 0)
            self._symbols_idle.set()
            if graph.classified is not None and self.kind_cache is not None:  # the next build takes them back
                self.kind_cache.save(graph.files, graph.classified)
                graph.classified = None
            if not self._publish(graph, gen):
                return
            self.error = None
            if self.on_ready is not None:
                self.on_ready(graph)
            self._saving = gen
            graph.save_symbols()  # after the index is answered from: the write is O(postings)
            if listed is not None:
                self._verify(graph, listed, gen, cancel)
            else:
                self._keep_listing(graph)
        except Exception as exc:  # a failed build leaves the previous graph (or none)
            log.warning("workspace graph build failed: %s", exc)
            self.error = str(exc)
            self._failed(gen, listed)
        finally:
            self._symbols_idle.set()
            if gen == self._generation:
                self._done.set()
