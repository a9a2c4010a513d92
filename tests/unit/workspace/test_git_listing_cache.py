"""A git checkout's listing kept for the next session (``workspace/listingcache.py``, source
``git``): a later session is ready from it without running git or stat'ing a file, then lists
the checkout with git after ready and applies what differs (files edited, added, deleted,
committed since), so that the verified graph is what a fresh build of the checkout gives."""

from __future__ import annotations

import os
from array import array
from pathlib import Path

import pytest
from dsh_sidecar.state import columns
from dsh_sidecar.workspace import GraphBuilder, gitguard, listingcache, recency, stats
from dsh_sidecar.workspace.graph import WorkspaceGraph
from dsh_sidecar.workspace.listingcache import VERSION, ListingCache
from dsh_sidecar.workspace.projection import WorkspaceProjection
from support.gitrepo import git
from support.trees import write_tree

TREE = {
    ".gitignore": "build/\n",
    "pkg/a.py": "def alpha():\n    return beta()\n",
    "pkg/b.py": "def beta():\n    pass\n",
    "docs/guide.md": "# Guide\n",
}


class Counts:
    """Git scans (``recency.scan``) and file stats (``stats.stat_of``) made, and walks."""

    def __init__(self) -> None:
        self.scans = 0
        self.stats = 0
        self.walks = 0


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    seen = Counts()
    scan, stat_of, walk = recency.scan, stats.stat_of, listingcache.walk_files

    def counted_scan(root: Path):  # type: ignore[no-untyped-def]
        seen.scans += 1
        return scan(root)

    def counted_stat(path: str):  # type: ignore[no-untyped-def]
        seen.stats += 1
        return stat_of(path)

    def counted_walk(root: Path, **kw):  # type: ignore[no-untyped-def]
        seen.walks += 1
        return walk(root, **kw)

    monkeypatch.setattr(recency, "scan", counted_scan)
    monkeypatch.setattr(stats, "stat_of", counted_stat)
    monkeypatch.setattr(listingcache, "walk_files", counted_walk)
    return seen


class Session:
    """One builder over ``ws`` with the home ``home``: what it saw and what it had done (the
    counts) when first ready; ``readies`` counts the builds that became ready."""

    def __init__(self, ws: Path, home: Path, counts: Counts) -> None:
        self.at_ready: dict[str, object] = {}
        self.readies = 0

        def ready(graph: WorkspaceGraph) -> None:
            self.readies += 1
            if self.readies > 1:
                return
            self.at_ready = {
                "verified": graph.verified,
                "files": list(graph.files),
                "beta": graph.definitions("beta"),
                "source": graph.time_source,
                "scans": counts.scans,
                "stats": counts.stats,
                "walks": counts.walks,
            }

        self.builder = GraphBuilder(ws, cache_dir=home, on_ready=ready)
        self.builder.start()
        assert self.builder.wait(60)


def _checkout(ws: Path) -> None:
    write_tree(ws, TREE)
    write_tree(ws, {"build/gen.py": "def made():\n    pass\n"})  # ignored, and tracked (a generated file)
    git(ws, "init", "-q")
    git(ws, "add", ".")
    git(ws, "add", "-f", "build/gen.py")
    git(ws, "commit", "-qm", "tree", date="2026-01-01T00:00:00")


def _ranks(graph: WorkspaceGraph) -> dict[str, int]:
    return {f: graph.rank(f) for f in graph.files}


def test_an_unchanged_checkout_is_ready_before_git_runs_and_verified_after(tmp_path: Path, counts: Counts) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    _checkout(ws)
    first = Session(ws, home, counts)
    assert first.at_ready["scans"] == 1 and first.at_ready["verified"] is True  # no listing kept yet
    kept = first.builder.listing_cache
    listed = kept.load()
    assert listed is not None and listed.source == "git"
    assert listed.stats.files == [".gitignore", "build/gen.py", "docs/guide.md", "pkg/a.py", "pkg/b.py"]
    written = kept.path.stat().st_mtime_ns
    scans, stat_calls = counts.scans, counts.stats

    second = Session(ws, home, counts)
    assert second.at_ready["scans"] == scans and second.at_ready["stats"] == stat_calls  # no git, no stat
    assert second.at_ready["walks"] == 0 and second.at_ready["source"] == "git"
    assert second.at_ready["verified"] is False and second.at_ready["files"] == listed.stats.files
    assert counts.scans == scans + 1  # git's listing, after ready
    assert counts.stats == stat_calls + len(listed.stats.files)  # one stat a file, after ready
    graph = second.builder.graph
    assert graph.verified is True and second.builder.verified_walk[1] == 0 and graph.stats["cacheHits"] == 2
    assert kept.path.stat().st_mtime_ns == written  # nothing differed: not written again
    assert second.readies == 1


def test_files_edited_added_deleted_and_committed_between_sessions_are_applied_after_ready(
    tmp_path: Path, counts: Counts
) -> None:
    """Before git's listing the session answers from the past one; after it, what a fresh build
    of the checkout answers: the same files (a tracked file its ignore rules leave out stays),
    kinds, definitions and recency ranks (git's commit times, not the time of the check)."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    _checkout(ws)
    Session(ws, home, counts)
    (ws / "pkg/b.py").unlink()
    (ws / "pkg/d.py").write_text("def delta():\n    return alpha()\n")  # untracked
    (ws / "pkg/a.py").write_text("def alpha2():\n    pass\n")
    (ws / "build/gen.py").write_text("def made2():\n    pass\n")
    git(ws, "commit", "-qam", "edit", date="2026-02-01T00:00:00")  # a.py, gen.py; b.py deleted

    later = Session(ws, home, counts)
    assert later.at_ready["verified"] is False and later.at_ready["beta"] == ["pkg/b.py"]
    b = later.builder
    assert b.verified_walk[1] == 4 and b.graph.verified is True and later.readies == 1
    fresh = Session(ws, tmp_path / "other-home", counts).builder.graph
    assert b.graph.files == fresh.files == [".gitignore", "build/gen.py", "docs/guide.md", "pkg/a.py", "pkg/d.py"]
    assert b.graph.kind_map() == fresh.kind_map() and _ranks(b.graph) == _ranks(fresh)
    assert b.definitions("beta") == [] and b.definitions("alpha2") == ["pkg/a.py"]
    assert b.definitions("delta") == ["pkg/d.py"] and b.graph.node("build/gen.py") == fresh.node("build/gen.py")
    kept = b.listing_cache.load()
    assert kept is not None and kept.stats.files == fresh.files and kept.source == "git"

    third = Session(ws, home, counts)  # starts from the verified listing: nothing differs
    assert third.at_ready["files"] == fresh.files and third.builder.verified_walk[1] == 0
    assert _ranks(third.builder.graph) == _ranks(fresh)


def test_a_commit_alone_moves_the_change_times_once_verified(tmp_path: Path, counts: Counts) -> None:
    """A commit of files already edited in the last session changes no stat, only their change
    time in git's history: the verification gives them that time, nothing is read again."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    _checkout(ws)
    (ws / "pkg/a.py").write_text("def alpha():\n    return 2\n")
    Session(ws, home, counts)  # a.py modified: its time is its mtime
    git(ws, "commit", "-qam", "edit", date="2026-03-01T00:00:00")
    later = Session(ws, home, counts)
    graph = later.builder.graph
    assert later.builder.verified_walk[1] == 0 and graph.stats["cacheHits"] == 2
    assert _ranks(graph) == _ranks(Session(ws, tmp_path / "other-home", counts).builder.graph)
    kept = later.builder.listing_cache.load()
    assert kept is not None and kept.stamps[kept.stats.files.index("pkg/a.py")] == graph._time["pkg/a.py"]


def test_a_checkout_git_cannot_list_now_is_built_again_by_a_walk(tmp_path: Path, counts: Counts) -> None:
    """A ``.gitignore`` turned into a FIFO between the sessions (git would block on it): the
    verification does not run git's listing; a full build walks the folder instead."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    _checkout(ws)
    Session(ws, home, counts)
    (ws / ".gitignore").unlink()
    os.mkfifo(ws / ".gitignore")
    later = Session(ws, home, counts)
    assert later.at_ready["verified"] is False and later.at_ready["source"] == "git"
    assert later.readies == 2 and later.builder.graph.time_source == "mtime" and counts.walks == 1
    assert later.builder.graph.verified is True and "build/gen.py" not in later.builder.graph.files


def test_a_listing_is_taken_only_by_a_tree_listed_the_same_way(tmp_path: Path, counts: Counts) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    _checkout(ws)
    Session(ws, home, counts)
    git_dir = ws / ".git"
    git_dir.rename(tmp_path / "git-aside")  # no longer a checkout: git's listing is not taken
    later = Session(ws, home, counts)
    assert later.at_ready["walks"] == 1 and later.at_ready["verified"] is True
    assert later.builder.listing_cache.load().source == "mtime"
    (tmp_path / "git-aside").rename(git_dir)  # a checkout again: the walk's listing is not taken
    scans = counts.scans
    again = Session(ws, home, counts)
    assert again.at_ready["scans"] == scans + 1 and again.at_ready["verified"] is True


def test_a_listing_of_an_unknown_source_is_set_aside(tmp_path: Path) -> None:
    cache = ListingCache(tmp_path / "home", tmp_path / "ws")
    head = {"version": VERSION, "root": cache.root, "files": 1, "source": "svn"}
    body = [array("q", [1]).tobytes(), array("q", [1]).tobytes(), array("Q", [1]).tobytes()]
    body.append(array("d", [1.0]).tobytes())
    cache.path.parent.mkdir(parents=True, exist_ok=True)
    cache.path.write_bytes(columns.encode(head, body, [["pkg/a.py"]]))
    os.chmod(cache.path, 0o600)
    assert cache.load() is None and list((tmp_path / "home").glob("*.listing.bin.corrupt-*"))


def _forge_listing(cache: ListingCache, rows: int) -> None:
    """Keep a git listing of ``rows`` paths that are not in the checkout (a forged file)."""
    files = sorted(f"src/f{i:06d}.py" for i in range(rows))
    forged = stats.FileStats(files)
    forged.mtime, forged.size, forged.ino = (
        array("q", [1] * rows),
        array("q", [9] * rows),
        array("Q", range(1, rows + 1)),
    )
    assert cache.save(forged, [1.0] * rows, "git")


def test_a_kept_listing_longer_than_the_index_allows_is_not_taken(tmp_path: Path, counts: Counts) -> None:
    """A kept git listing may exceed its index's entries (5 here) by files git does not track, at
    most ``UNTRACKED_ALLOWANCE`` (or the entries again): one more row and the checkout is listed by
    git before ready, as with no listing kept, and ``dsh/status`` says why."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    _checkout(ws)
    first = Session(ws, home, counts)
    allowed = 5 + gitguard.UNTRACKED_ALLOWANCE
    _forge_listing(first.builder.listing_cache, allowed)
    taken = Session(ws, home, counts)  # at the bound: taken, and verified after ready
    assert taken.at_ready["verified"] is False and len(taken.at_ready["files"]) == allowed  # type: ignore[arg-type]
    assert "listingRefused" not in taken.builder.status() and taken.builder.graph.files == first.builder.graph.files
    _forge_listing(first.builder.listing_cache, allowed + 1)
    scans = counts.scans
    refused = Session(ws, home, counts)
    assert refused.at_ready["scans"] == scans + 1 and refused.at_ready["verified"] is True
    assert refused.at_ready["files"] == first.builder.graph.files and refused.readies == 1
    assert refused.builder.status()["listingRefused"] == "a listing of 4102 files where git's index holds 5 entries"
    kept = refused.builder.listing_cache.load()  # the build's own listing replaced the forged one
    assert kept is not None and kept.stats.files == first.builder.graph.files


def test_dsh_status_says_why_a_kept_listing_was_not_taken(tmp_path: Path, counts: Counts) -> None:
    """The ``graph`` block of ``dsh/status`` (``WorkspaceProjection.status``) carries the reason."""

    class Owner:  # the targets' owner: nothing to prepare
        ready = True

        def prepare(self, graph: object = None) -> bool:
            return True

        def files_changed(self, changed: object) -> None:
            pass

        def workspace_changed(self, change: object) -> bool:
            return False

    ws, home = tmp_path / "ws", tmp_path / "home"
    _checkout(ws)
    _forge_listing(Session(ws, home, counts).builder.listing_cache, 9000)
    projection = WorkspaceProjection(ws, home, lambda: Owner())
    projection.start()
    try:
        assert projection.wait_for_graph(60)
        status = projection.status()
        assert status["listingRefused"] == "a listing of 9000 files where git's index holds 5 entries"
        assert status["files"] == 5
    finally:
        projection.close()
