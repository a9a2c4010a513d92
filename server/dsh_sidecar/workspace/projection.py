"""The background index and its readiness: :class:`WorkspaceProjection` owns the workspace
graph's builder (:mod:`.builder`), the content indexer (:mod:`.content`) and the heap freezer
(:mod:`.heap`), chains them (the graph's listing starts the content index; a change the graph
applied is followed by the content index), tells the targets' owner (the suggester, through
:class:`TargetsOwner`) when to prepare again, and answers whether the whole projection is built.

The composition root (``sidecar.py``) builds one per workspace and keeps the config, the cores and
the method mapping; this module never imports a core above it (the suggester is reached through
the callable given at construction).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from dsh_sidecar.workspace.builder import GraphBuilder
from dsh_sidecar.workspace.content import ContentIndexer
from dsh_sidecar.workspace.graph import Progress, WorkspaceGraph
from dsh_sidecar.workspace.heap import HeapFreezer


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
        # the workspace graph (symbol index) and the content index are built in the background
        # once the suggester runs; the suggester prepares its targets on the graph's thread as
        # soon as the listing exists (initialize never waits for any of it).
        # gc.freeze() when the graph is ready: the long-lived graph and pack indexes leave the
        # cyclic GC's generations, so a full collection never pauses a dsh/postExecute call for
        # tens of ms on a big tree
        self.content = ContentIndexer(root, cache_dir, on_ready=self._content_ready)
        # freezes the heap in steps while the projection is built, from every build start
        # (workspace/heap.py: a full collection over a big build's heap stops the event loop
        # for hundreds of ms)
        self.heap = HeapFreezer(self.building)
        self.graph_builder = GraphBuilder(
            root,
            on_ready=lambda graph: gc.freeze(),
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
        """Whether the graph or the content index is being built."""
        # the targets are prepared on these two threads (on_files, the content's on_ready)
        return self.graph_builder.building or self.content.building

    def start(self) -> None:
        """Start (or restart) a graph build."""
        self.graph_builder.start()

    def start_if_idle(self) -> None:
        """Start a graph build unless one exists or runs."""
        if self.graph_builder.graph is None and not self.graph_builder.building:
            self.graph_builder.start()

    def _graph_listed(self, graph: WorkspaceGraph) -> None:
        """The graph's listing exists (builder thread): index contents, prepare the targets."""
        self.content.start(graph.files)
        self.owner().prepare(graph)

    def _graph_changed(self, graph: WorkspaceGraph, changed: list[str]) -> None:
        """Files changed and the graph applied them (worker thread): follow in the content
        index and the suggester's targets."""
        rel = [r for r in (graph.relative(c) for c in changed) if r]
        self.content.refresh(rel, graph.files)
        self.owner().files_changed(rel)

    def _content_ready(self, content: ContentIndexer) -> None:
        """A content sync finished (its thread): its facts change targets; prepare again."""
        self.owner().prepare()  # serialised with the graph thread's own (Suggester.prepare)

    def wait_for_graph(self, timeout_s: float) -> bool:
        """Block until the workspace graph (with its symbol index) is built; ``True`` if it is."""
        self.start_if_idle()
        t0 = time.monotonic()
        done = self.graph_builder.wait(timeout_s)
        return done and self.content.wait(max(0.0, timeout_s - (time.monotonic() - t0)))

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
        return not self.owner().ready or self.graph_builder.building or self.content.building

    def status(self) -> dict[str, Any]:
        """The ``graph`` block of ``dsh/status``."""
        graph = self.graph_builder.graph
        return {
            "building": self.graph_builder.building,
            # ready = the whole projection: symbols, content index (when FTS5 exists), targets
            "ready": graph is not None
            and graph.symbols is not None
            and not self.graph_builder.building
            and not self.content.building
            and self.owner().ready,
            "content": self.content.status(),
            "error": self.graph_builder.error,
            **(graph.status() if graph is not None else {}),
        }

    def close(self) -> None:
        """Cancel a running build, stop the freezer, stop syncing and close the content reader."""
        self.graph_builder.cancel()
        self.heap.stop()
        self.content.close()

    def quiesce(self, timeout_s: float) -> None:
        """Wait (at most ``timeout_s``) for the graph build and the content sync to stop."""
        t0 = time.monotonic()
        if self.graph_builder.building:  # (a graph never started has nothing to wait for)
            self.graph_builder.wait(timeout_s)
        self.content.wait(max(0.0, timeout_s - (time.monotonic() - t0)))
