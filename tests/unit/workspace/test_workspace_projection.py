"""The workspace projection's change events: one batch of file changes reaches the targets'
owner once, with the delta (paths, kinds, content facts, names), after the content sync."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from dsh_sidecar.workspace.projection import WorkspaceChange, WorkspaceProjection


class Owner:
    """A targets' owner that records what it is asked (the suggester's side of the contract)."""

    def __init__(self, applies: bool = False) -> None:
        self.prepared = 0
        self.changed: list[list[str] | None] = []
        self.deltas: list[WorkspaceChange] = []
        self.applies = applies
        self.lock = threading.Lock()

    def prepare(self, graph: Any = None) -> bool:
        with self.lock:
            self.prepared += 1
        return True

    def files_changed(self, changed: list[str] | None) -> None:
        with self.lock:
            self.changed.append(changed)

    def workspace_changed(self, change: WorkspaceChange) -> bool:
        with self.lock:
            self.deltas.append(change)
        return self.applies

    @property
    def ready(self) -> bool:
        return self.prepared > 0


def build(tmp_path: Path, owner: Owner) -> WorkspaceProjection:
    root = tmp_path / "ws"
    for rel, text in {"README.md": "# r\n", "src/app.py": "def run():\n    pass\n", "docs/a.md": "# a\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    projection = WorkspaceProjection(root, tmp_path / "home", lambda: owner)
    projection.start()
    assert projection.wait_for_graph(60)
    return projection


def test_a_burst_of_changes_is_one_event_with_its_delta(tmp_path: Path) -> None:
    owner = Owner()
    projection = build(tmp_path, owner)
    seen: list[WorkspaceChange] = []
    projection.subscribe(seen.append)
    events = projection.status()["changes"]["events"]  # the full content sync's, at the build
    try:
        assert owner.prepared >= 1 and owner.changed == []
        root = projection.graph_builder.root
        assert root is not None
        (root / "CHANGELOG.md").write_text("1.0\n---\n")
        (root / "src/app.py").write_text("def start():\n    pass\n")
        (root / "docs/a.md").unlink()
        for rel in ("CHANGELOG.md", "src/app.py", "docs/a.md"):  # three notifications, one burst
            projection.files_changed([rel])
        assert projection.wait_for_graph(60)
        assert len(seen) == 1 and not seen[0].full
        change = seen[0]
        assert change.added == {"CHANGELOG.md"} and change.removed == {"docs/a.md"}
        assert change.modified == {"src/app.py"}
        assert change.kinds == {"CHANGELOG.md": "doc"}
        assert change.facts["CHANGELOG.md"] == {"changelog"}
        assert change.names == {"run", "start"}
        assert change.paths == ["CHANGELOG.md", "docs/a.md", "src/app.py"] and change.listing_changed
        # the owner without an O(k) update is told the paths once (its full preparation)
        assert owner.changed == [["CHANGELOG.md", "docs/a.md", "src/app.py"]] and owner.deltas == [change]
        assert projection.content.with_fact("changelog") == ["CHANGELOG.md"]
        status = projection.status()["changes"]
        assert status["batches"] == 1 and status["events"] == events + 1 and status["pending"] is False
    finally:
        projection.close()


def test_an_owner_that_applies_the_delta_is_not_asked_to_rebuild(tmp_path: Path) -> None:
    owner = Owner(applies=True)
    projection = build(tmp_path, owner)
    try:
        root = projection.graph_builder.root
        assert root is not None
        (root / "src/new.py").write_text("x = 1\n")
        projection.files_changed(["src/new.py"])
        assert projection.wait_for_graph(60)
        assert [d.added for d in owner.deltas] == [{"src/new.py"}] and owner.changed == []
    finally:
        projection.close()


def test_the_content_index_syncs_the_listing_after_the_symbol_pass(tmp_path: Path, monkeypatch) -> None:
    """One pass over the files at a time: the content index's full sync of a build's listing
    starts once that build's symbol pass has ended (side by side, the two handed the GIL to each
    other at every system call), with the kinds the listing was classified with."""
    from dsh_sidecar.workspace import fts
    from dsh_sidecar.workspace.graph import WorkspaceGraph

    events: list[str] = []
    real_index, real_sync = WorkspaceGraph.index_symbols, fts.ContentDB.sync

    def index_symbols(self, **kw):
        events.append("symbols start")
        real_index(self, **kw)
        events.append("symbols end")

    def sync(self, root, listing, only=None, present=None, stats=None, kinds=None, shared=None, basis=None):
        events.append(f"content sync ({'kinds' if kinds is not None else 'classified here'})")
        return real_sync(self, root, listing, only, present, stats, kinds, shared, basis)

    monkeypatch.setattr(WorkspaceGraph, "index_symbols", index_symbols)
    monkeypatch.setattr(fts.ContentDB, "sync", sync)
    projection = build(tmp_path, Owner())
    try:
        assert events == ["symbols start", "symbols end", "content sync (kinds)"]
        assert projection.status()["ready"] and projection.content.stats["read"] == 3
    finally:
        projection.close()
