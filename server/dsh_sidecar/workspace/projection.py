"""The background index and its readiness: :class:`WorkspaceProjection` owns the workspace
graph's builder (:mod:`.builder`), the content indexer (:mod:`.content`) and the heap freezer
(:mod:`.heap`), chains them (the graph's listing starts the content index; a change the graph
applied is followed by the content index), tells the targets' owner (the suggester, through
:class:`TargetsOwner`) when to prepare again, and answers whether the whole projection is built.

The composition root (``sidecar/``) builds one per workspace and keeps the config, the cores and
the method mapping; this module never imports a core above it (the suggester is reached through
the callable given at construction).

**Changes** (``didChangeWatchedFiles``) flow in batches: the graph applies a batch in O(k)
(:meth:`WorkspaceGraph.apply`), the content index syncs those k paths only, and then one
:class:`WorkspaceChange` — the paths added, removed and modified, the kinds and content facts
that changed, the names whose definitions moved — goes to the subscribers
(:meth:`WorkspaceProjection.subscribe`) and to the targets' owner, on the projection's own
``dsh-workspace-targets`` thread. Batches that arrive while the owner prepares are merged into
the next event, so a burst costs one preparation, not one per notification. An owner with a
``workspace_changed(change)`` method that returns ``True`` has applied the delta itself (O(k):
the suggester does, ``suggester/prepared.apply_change``); otherwise its ``files_changed(paths)``
is called (the suggester then prepares everything again: a change that may move the docs
roots). Each delivery is spaced so that the owner's work takes at most :data:`TARGETS_DUTY` of
the time (measured on the thread's own CPU clock), and a file changed every 200 ms on a
100k-file tree never keeps a core busy.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from dsh_sidecar.workspace.builder import GraphBuilder
from dsh_sidecar.workspace.content import ContentIndexer, FactChanges
from dsh_sidecar.workspace.facts import MAX_READ_BYTES
from dsh_sidecar.workspace.graph import GraphDelta, Progress, WorkspaceGraph
from dsh_sidecar.workspace.heap import HeapFreezer, freeze_heap
from dsh_sidecar.workspace.kinds import Kind
from dsh_sidecar.workspace.sharedreads import SharedReads
from dsh_sidecar.workspace.symbolpass import SYMBOL_WALL_S

log = logging.getLogger(__name__)

#: Largest share of the time the owner's full re-preparation may take after file changes: after
#: one that took T seconds of its thread's CPU, the next waits T × (1 / TARGETS_DUTY − 1).
TARGETS_DUTY: Final = 0.25
#: Longest wait (s) of a batch's event for the content sync of the same paths (their facts).
CONTENT_WAIT_S: Final = 2.0


@dataclass(frozen=True)
class WorkspaceChange:
    """One batch of file changes as the projection applied it (the delta a prepared view needs
    to follow in O(k)). ``full``: a rebuild or a full content sync — everything may have
    changed and the other fields are empty. Otherwise ``added`` / ``removed`` / ``modified``
    are repo-relative paths (disjoint); ``kinds`` the kind now of each path whose kind is new or
    changed; ``facts`` the content facts now (``workspace/facts.py``; an empty set: none left)
    of each path whose facts changed, removed paths included; ``names`` the identifiers whose
    definition files changed (a cached symbol lookup of them is stale)."""

    full: bool = False
    added: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    modified: frozenset[str] = frozenset()
    kinds: Mapping[str, Kind] = field(default_factory=dict)
    facts: Mapping[str, frozenset[str]] = field(default_factory=dict)
    names: frozenset[str] = frozenset()

    @property
    def paths(self) -> list[str]:
        """Every path of the batch, sorted."""
        return sorted(self.added | self.removed | self.modified)

    @property
    def listing_changed(self) -> bool:
        """Whether the set of files changed (a path added or removed)."""
        return bool(self.added or self.removed)


class _Batch:
    """Graph deltas and content fact changes accumulated between two events (merged in order:
    a path added then removed within one batch is just removed, etc.)."""

    def __init__(self) -> None:
        self.full = False
        self.added: set[str] = set()
        self.removed: set[str] = set()
        self.modified: set[str] = set()
        self.kinds: dict[str, Kind] = {}
        self.facts: dict[str, frozenset[str]] = {}
        self.names: set[str] = set()

    def __bool__(self) -> bool:
        return self.full or bool(self.added or self.removed or self.modified or self.facts)

    def graph(self, delta: GraphDelta) -> None:
        for p in delta.added:
            if p in self.removed:  # removed then back: it is a modification of what the view has
                self.removed.discard(p)
                self.modified.add(p)
            else:
                self.added.add(p)
        for p in delta.removed:
            if p in self.added:  # added then removed within the batch: the view never saw it
                self.added.discard(p)
                self.kinds.pop(p, None)
            else:
                self.modified.discard(p)
                self.removed.add(p)
        for p in delta.modified:
            if p not in self.added:
                self.modified.add(p)
        self.kinds.update(delta.kinds)
        self.names.update(delta.names)

    def content(self, changes: FactChanges) -> None:
        for p, facts in changes.items():
            self.facts[p] = facts or frozenset()

    def event(self) -> WorkspaceChange:
        if self.full:
            return WorkspaceChange(full=True)
        return WorkspaceChange(
            added=frozenset(self.added),
            removed=frozenset(self.removed),
            modified=frozenset(self.modified),
            kinds=dict(self.kinds),
            facts=dict(self.facts),
            names=frozenset(self.names),
        )


class TargetsOwner(Protocol):
    """What the projection asks of the suggester: prepare the targets over a graph (or the
    current one), follow changed paths, and say whether its targets are prepared."""

    def prepare(self, graph: Any = None) -> bool: ...

    def files_changed(self, changed: list[str] | None) -> None: ...

    @property
    def ready(self) -> bool: ...


class WorkspaceProjection:
    """The workspace graph, the content index and the heap freezer of one workspace, built in
    the background (``root`` ``None``: nothing is built). ``owner()`` returns the current
    targets' owner (the composition root may replace its suggester)."""

    def __init__(self, root: Path | None, cache_dir: Path, owner: Callable[[], TargetsOwner]) -> None:
        self.owner = owner
        self._listeners: list[Callable[[WorkspaceChange], None]] = []
        self._batch = _Batch()
        self._batch_lock = threading.Lock()
        self._targets: threading.Thread | None = None
        self._targets_idle = threading.Event()
        self._targets_idle.set()
        self._next_prepare = 0.0
        self._closed = False
        self._wake = threading.Event()  # set by close(): a spaced wait ends at once
        #: events delivered, and the owner's time on them (full re-preparations), for dsh/status
        self.changes = 0
        self.owner_cpu_s = 0.0
        # the workspace graph (symbol index) and the content index are built in the background
        # once the suggester runs; the suggester prepares its targets on the graph's thread as
        # soon as the listing exists (initialize never waits for any of it).
        # freeze the heap when the graph is ready (heap.freeze_heap: young garbage collected
        # first): the long-lived graph and pack indexes leave the cyclic GC's generations, so a
        # full collection never pauses a dsh/postExecute call for tens of ms on a big tree
        self.content = ContentIndexer(root, cache_dir, on_ready=self._content_ready)
        # freezes the heap in steps while the projection is built, from every build start
        # (workspace/heap.py: a full collection over a big build's heap stops the event loop
        # for hundreds of ms)
        self.heap = HeapFreezer(self.building)
        self.graph_builder = GraphBuilder(
            root,
            on_ready=self._graph_ready,
            cache_dir=cache_dir,
            on_files=self._graph_listed,
            on_change=self._graph_changed,
            on_start=self.heap.start,
        )

    @property
    def graph(self) -> WorkspaceGraph | None:
        """The current workspace graph (``None`` until the listing exists)."""
        return self.graph_builder.graph

    def building(self) -> bool:
        """Whether the graph or the content index is being built, or a change is on its way to
        the targets."""
        # the targets are prepared on these threads (on_files, the content's, the targets')
        return self.graph_builder.building or self.content.building or not self._targets_idle.is_set()

    def subscribe(self, listener: Callable[[WorkspaceChange], None]) -> None:
        """Call ``listener(change)`` (the targets thread) for every batch applied, before the
        owner is told; a listener's failure is logged and skipped."""
        self._listeners.append(listener)

    def start(self) -> None:
        """Start (or restart) a graph build."""
        self.graph_builder.start()

    def rebuild(self) -> None:
        """Rebuild the graph unless a build runs (that one reads the tree as it is now). A
        restart per ``dsh/toolsChanged`` cancelled the running build each time: a client sending
        one every 0.5 s kept a serve on pallets/flask from ever being ready."""
        if not self.graph_builder.building:
            self.graph_builder.start()

    def start_if_idle(self) -> None:
        """Start a graph build unless one exists or runs."""
        if self.graph_builder.graph is None and not self.graph_builder.building:
            self.graph_builder.start()

    def _graph_listed(self, graph: WorkspaceGraph) -> None:
        """The graph's listing exists (builder thread): index contents, prepare the targets."""
        # the full sync starts once the symbol pass is done (one pass over the files at a time:
        # GraphBuilder.wait_symbols), bounded by the pass's own wall-clock cut
        # and takes the code files that pass read instead of reading them again (sharedreads.py)
        reads = SharedReads(MAX_READ_BYTES)
        self.graph_builder.next_reads = reads
        self.content.start(
            graph.files,
            graph.file_stats,
            graph.classified,
            after=lambda: self.graph_builder.wait_symbols(SYMBOL_WALL_S + 5.0),
            shared=reads,
        )
        self.owner().prepare(graph)

    def _graph_ready(self, graph: WorkspaceGraph) -> None:
        """The graph is ready (builder thread): the heap frozen, and the owner's work after
        ready (``after_ready``, when it has one: the suggester's tables kept off the start) started."""
        freeze_heap()
        after = getattr(self.owner(), "after_ready", None)
        if after is not None:
            after()

    def _graph_changed(self, graph: WorkspaceGraph, delta: GraphDelta) -> None:
        """A batch of files changed and the graph applied it (worker thread): the content index
        syncs those paths, and the batch goes to the targets (after that sync: its facts)."""
        self.content.refresh(delta.paths, delta.added | delta.modified)
        with self._batch_lock:
            self._batch.graph(delta)
        self._kick_targets()

    def _content_ready(self, content: ContentIndexer, changes: FactChanges | None) -> None:
        """A content sync finished (its thread): a full one may change any target (a full
        preparation follows), a partial one's fact changes join the batch."""
        with self._batch_lock:
            if changes is None:
                self._batch.full = True
            else:
                self._batch.content(changes)
        self._kick_targets()

    def _kick_targets(self) -> None:
        with self._batch_lock:
            if self._closed or not self._batch:
                return
            if self._targets is not None and self._targets.is_alive():
                return
            self._targets_idle.clear()
            self._targets = threading.Thread(target=self._deliver, name="dsh-workspace-targets", daemon=True)
            self._targets.start()

    def _deliver(self) -> None:
        """The targets thread: one event per accumulated batch, after the content sync of its
        paths, spaced by :data:`TARGETS_DUTY` when the owner rebuilds its whole view."""
        try:
            while not self._closed:
                self.content.wait(CONTENT_WAIT_S)  # the batch's facts first
                wait = self._next_prepare - time.monotonic()
                if wait > 0:
                    self._wake.wait(wait)  # changes arriving meanwhile join this event
                    self.content.wait(CONTENT_WAIT_S)
                if self._closed:
                    return
                with self._batch_lock:
                    batch, self._batch = self._batch, _Batch()
                if not batch:
                    return
                self._tell(batch.event())
        finally:
            with self._batch_lock:
                self._targets_idle.set()
                again = bool(self._batch) and not self._closed
            if again:
                self._kick_targets()

    def _tell(self, change: WorkspaceChange) -> None:
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception as exc:  # a listener failure must not stop the others
                log.warning("workspace change listener failed: %s", exc)
        owner = self.owner()
        t0 = time.thread_time()
        try:
            if change.full:
                owner.prepare()  # serialised with the graph thread's own (Suggester.prepare)
            else:
                apply = getattr(owner, "workspace_changed", None)
                if apply is None or not apply(change):
                    owner.files_changed(change.paths)
        except Exception as exc:  # an owner failure keeps its previous targets
            log.warning("workspace targets preparation failed: %s", exc)
        spent = time.thread_time() - t0
        self.changes += 1
        self.owner_cpu_s += spent
        self._next_prepare = time.monotonic() + spent * (1.0 / TARGETS_DUTY - 1.0)

    def wait_for_graph(self, timeout_s: float) -> bool:
        """Block until the workspace graph (with its symbol index) is built and a change on its
        way reached the targets; ``True`` if so."""
        self.start_if_idle()
        t0 = time.monotonic()

        def left() -> float:
            return max(0.0, timeout_s - (time.monotonic() - t0))

        done = self.graph_builder.wait(timeout_s) and self.content.wait(left())
        return done and self._targets_idle.wait(left())

    def report_progress(self, progress: Progress | None) -> None:
        """Send the graph builds' ``progress(done, total)`` to ``progress`` (see
        :meth:`GraphBuilder.set_progress`)."""
        self.graph_builder.set_progress(progress)

    def files_changed(self, paths: list[str] | None) -> None:
        """Queue the graph refresh of ``paths`` (``None``: rebuild); the graph, content index
        and the suggester's targets follow in the background."""
        self.graph_builder.refresh(paths)

    def pending(self) -> bool:
        """Whether the suggester's targets, the graph or the content index are still being
        built (a call that answers from all of them waits: :meth:`wait_for_graph`)."""
        return not self.owner().ready or self.building()

    def status(self) -> dict[str, Any]:
        """The ``graph`` block of ``dsh/status``."""
        graph = self.graph_builder.graph
        return {
            "building": self.graph_builder.building,
            # ready = the whole projection: symbols, content index (when FTS5 exists), targets
            # (and no change, or the content index's facts, still on its way to them)
            "ready": graph is not None
            and graph.symbols is not None
            and not self.graph_builder.building
            and not self.content.building
            and self._targets_idle.is_set()
            and self.owner().ready,
            "content": self.content.status(),
            "error": self.graph_builder.error,
            "changes": {
                "batches": self.graph_builder.refreshes,
                "graphCpuMs": round(self.graph_builder.refresh_cpu_s * 1000, 1),
                "contentSyncs": self.content.change_syncs,
                "contentCpuMs": round(self.content.change_cpu_s * 1000, 1),
                "events": self.changes,
                "targetsCpuMs": round(self.owner_cpu_s * 1000, 1),
                "pending": not self._targets_idle.is_set(),
            },
            **(graph.status() if graph is not None else {}),
            **({"listingRefused": refused} if (refused := self.graph_builder.listing_refused) else {}),
        }

    def close(self) -> None:
        """Cancel a running build, stop the freezer, stop syncing and close the content reader."""
        self._closed = True
        self._wake.set()
        self.graph_builder.close()
        self.heap.stop()
        self.content.close()

    def quiesce(self, timeout_s: float) -> None:
        """Wait (at most ``timeout_s``) for the graph build and the content sync to stop."""
        t0 = time.monotonic()
        if self.graph_builder.building:  # (a graph never started has nothing to wait for)
            self.graph_builder.wait(timeout_s)
        self.content.wait(max(0.0, timeout_s - (time.monotonic() - t0)))
        self._targets_idle.wait(max(0.0, timeout_s - (time.monotonic() - t0)))
