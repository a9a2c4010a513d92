"""The listing a walk verified, kept for the next session (``workspace/listingcache.py``): a later
session on a tree outside git is ready from it and walks after ready, applying the files added,
deleted and edited since; while it has not, a note never names a file that is gone."""

from __future__ import annotations

import os
import time
from array import array
from pathlib import Path

import pytest
from dsh_sidecar.state import columns
from dsh_sidecar.suggester.candidates import resolve
from dsh_sidecar.suggester.fileindex import FileIndex
from dsh_sidecar.suggester.packs import Candidate
from dsh_sidecar.workspace import GraphBuilder, listingcache
from dsh_sidecar.workspace.builder import MAX_INLINE_REFRESH
from dsh_sidecar.workspace.graph import WorkspaceGraph
from dsh_sidecar.workspace.listingcache import VERSION, ListingCache
from support.trees import write_tree

TREE = {
    "pkg/a.py": "def alpha():\n    return beta()\n",
    "pkg/b.py": "def beta():\n    pass\n",
    "docs/guide.md": "# Guide\n",
}


class Session:
    """One builder over ``ws`` with the home ``home``, what it saw when first ready, and how many
    walks were made by then; ``readies`` counts the builds that became ready."""

    def __init__(self, ws: Path, home: Path, walks: list[Path]) -> None:
        self.at_ready: dict[str, object] = {}
        self.walks_at_ready = -1
        self.readies = 0

        def ready(graph: WorkspaceGraph) -> None:
            self.readies += 1
            if self.readies > 1:
                return
            self.walks_at_ready = len(walks)
            self.at_ready = {
                "verified": graph.verified,
                "files": list(graph.files),
                "beta": graph.definitions("beta"),
                "status": graph.status()["verified"],
            }

        self.builder = GraphBuilder(ws, cache_dir=home, on_ready=ready)
        self.builder.start()
        assert self.builder.wait(60)


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The roots walked (``files.walk_files`` as the graph calls it)."""
    seen: list[Path] = []
    real = listingcache.walk_files

    def counted(root: Path, **kw):  # type: ignore[no-untyped-def]
        seen.append(root)
        return real(root, **kw)

    monkeypatch.setattr(listingcache, "walk_files", counted)
    return seen


def test_an_unchanged_tree_is_ready_before_it_is_walked_and_verified_after(tmp_path: Path, walks: list[Path]) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, TREE)
    first = Session(ws, home, walks)
    assert first.walks_at_ready == 1 and first.at_ready["verified"] is True  # no listing kept: walked first
    kept = first.builder.listing_cache.path
    assert kept.name.endswith(".listing.bin") and kept.stat().st_mode & 0o777 == 0o600
    written = kept.stat().st_mtime_ns

    second = Session(ws, home, walks)
    assert second.walks_at_ready == 1  # ready without a walk
    assert second.at_ready["verified"] is False and second.at_ready["status"] is False
    assert second.at_ready["files"] == ["docs/guide.md", "pkg/a.py", "pkg/b.py"]
    assert len(walks) == 2  # the walk after ready
    graph = second.builder.graph
    assert graph.verified is True and graph.status()["verified"] is True
    assert second.builder.verified_walk[1] == 0 and graph.stats["cacheHits"] == 2
    assert kept.stat().st_mtime_ns == written  # nothing differed: not written again


def test_files_added_deleted_and_edited_between_sessions_are_applied_after_ready(
    tmp_path: Path, walks: list[Path]
) -> None:
    """What a later session answers from before its walk is the past listing (a deleted file
    still listed, its definitions too; an added one not yet); after it, what a fresh build of
    the tree answers."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, TREE)
    Session(ws, home, walks)
    (ws / "pkg/b.py").unlink()
    (ws / "pkg/d.py").write_text("def delta():\n    return alpha()\n")
    (ws / "pkg/a.py").write_text("def alpha2():\n    pass\n")

    later = Session(ws, home, walks)
    assert later.at_ready == {
        "verified": False,
        "files": ["docs/guide.md", "pkg/a.py", "pkg/b.py"],
        "beta": ["pkg/b.py"],
        "status": False,
    }
    b = later.builder
    assert b.verified_walk[1] == 3 and b.graph.verified is True
    assert b.graph.files == ["docs/guide.md", "pkg/a.py", "pkg/d.py"]
    assert b.definitions("beta") == [] and b.definitions("alpha") == []
    assert b.definitions("alpha2") == ["pkg/a.py"] and b.definitions("delta") == ["pkg/d.py"]
    fresh = Session(ws, tmp_path / "other-home", walks).builder.graph
    assert b.graph.kind_map() == fresh.kind_map() and b.usages("alpha") == fresh.usages("alpha") == ["pkg/d.py"]
    kept = b.listing_cache.load()
    assert kept is not None and kept.stats.files == fresh.files

    third = Session(ws, home, walks)  # starts from the verified listing
    assert third.at_ready["files"] == fresh.files and third.builder.verified_walk[1] == 0


def test_more_changes_than_a_batch_make_a_full_build(tmp_path: Path, walks: list[Path]) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, TREE)
    Session(ws, home, walks)
    write_tree(ws, {f"gen/m{i}.py": f"def made_{i}():\n    pass\n" for i in range(MAX_INLINE_REFRESH + 1)})
    later = Session(ws, home, walks)
    assert later.at_ready["verified"] is False and later.builder.verified_walk[1] == MAX_INLINE_REFRESH + 1
    graph = later.builder.graph
    assert graph.verified is True and len(graph.files) == len(TREE) + MAX_INLINE_REFRESH + 1
    assert later.builder.definitions(f"made_{MAX_INLINE_REFRESH}") == [f"gen/m{MAX_INLINE_REFRESH}.py"]
    assert len(walks) == 3 and later.readies == 2  # the first session's, the verification's, the full build's


def test_a_git_checkout_takes_no_listing_of_a_walk(tmp_path: Path, walks: list[Path]) -> None:
    """(A checkout's own listing, git's, is kept as well: ``test_git_listing_cache.py``.)"""
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, TREE)
    Session(ws, home, walks)
    (ws / ".git").mkdir()  # now a checkout (an unusable one: git fails, the build walks)
    later = Session(ws, home, walks)
    assert later.at_ready["verified"] is True and later.walks_at_ready == 2


def _forge(cache: ListingCache, paths: list[str], root: str | None = None, stamp: float = 1.0) -> None:
    n = len(paths)
    head = {"version": VERSION, "root": root or cache.root, "files": n}
    body = [array("q", [1] * n).tobytes(), array("q", [1] * n).tobytes(), array("Q", [1] * n).tobytes()]
    body.append(array("d", [stamp] * n).tobytes())
    cache.path.parent.mkdir(parents=True, exist_ok=True)
    cache.path.write_bytes(columns.encode(head, body, [paths]))
    os.chmod(cache.path, 0o600)


@pytest.mark.parametrize(
    "paths",
    [
        ["/etc/passwd"],
        ["pkg/../../outside.py"],
        ["./pkg/a.py"],
        ["pkg//a.py"],
        ["pkg/"],
        ["..", "pkg/a.py"],
        ["pkg/b.py", "pkg/a.py"],  # not sorted
        ["pkg/a.py", "pkg/a.py"],  # twice
        ["pkg/a.py", "pkg/\ud800.py"],  # not UTF-8 (a lone surrogate): no file is named so
    ],
)
def test_a_forged_listing_is_set_aside_and_the_session_walks(
    tmp_path: Path, walks: list[Path], paths: list[str]
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, TREE)
    cache = ListingCache(home, ws)
    _forge(cache, paths)
    assert cache.load() is None and list(home.glob("*.listing.bin.corrupt-*"))
    session = Session(ws, home, walks)
    assert session.walks_at_ready == 1 and session.at_ready["files"] == ["docs/guide.md", "pkg/a.py", "pkg/b.py"]


@pytest.mark.parametrize("stamp", [float("nan"), float("inf"), float("-inf")])
def test_a_change_time_that_is_not_finite_sets_the_listing_aside(tmp_path: Path, stamp: float) -> None:
    cache = ListingCache(tmp_path / "home", tmp_path / "ws")
    _forge(cache, ["pkg/a.py"], stamp=stamp)
    assert cache.load() is None and list((tmp_path / "home").glob("*.listing.bin.corrupt-*"))


def test_another_workspace_listing_is_not_taken(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, TREE)
    cache = ListingCache(home, ws)
    _forge(cache, ["pkg/a.py"], root=str(tmp_path / "elsewhere"))
    assert cache.load() is None


def test_an_unverified_index_never_names_a_file_that_is_gone(tmp_path: Path) -> None:
    """While the listing is a past session's, a target is checked on disk when it is resolved;
    once verified, the listing is what the index answers from (no check a call)."""
    ws = tmp_path / "ws"
    write_tree(ws, {"pkg/a.py": "", "pkg/kept.cfg": ""})
    index = FileIndex(ws.resolve(), ["pkg/a.py", "pkg/gone.cfg", "pkg/kept.cfg"])
    unverified = [True]
    index.unverified = lambda: unverified[0]
    cands = [Candidate(path="pkg/*.cfg", reason="the config", prior=0.9)]
    assert [t.path for t in resolve(cands, index)] == ["pkg/kept.cfg"]
    assert index.inside("pkg/gone.cfg") is False and index.refused == []  # gone, not outside
    unverified[0] = False
    assert index.inside("pkg/gone.cfg") is True  # the answer while unverified was not kept


def test_the_task_lead_never_offers_a_file_gone_since_the_listing_was_walked(tmp_path: Path) -> None:
    """The task lead ranks the graph's listing itself (not through the index's check): while the
    listing is a past session's, a file gone from the tree is left out of its ranking."""
    from dsh_sidecar.suggester.lead.mentions import mentions
    from dsh_sidecar.suggester.lead.ranker import rank

    ws = tmp_path / "ws"
    write_tree(
        ws, {"pkg/parser.py": "def parse_config():\n    pass\n", "pkg/loader.py": "def load_config():\n    pass\n"}
    )
    walked = listingcache.walk_listing(ws)
    (ws / "pkg/parser.py").unlink()
    graph = WorkspaceGraph.build_files(ws, past=listingcache.Listing(*walked))
    graph.index_symbols()
    task = mentions("Fix parse_config in pkg/parser.py and load_config in pkg/loader.py")
    assert graph.verified is False and "pkg/parser.py" in graph.files
    assert [lead.path for lead in rank(task, graph)] == ["pkg/loader.py"]
    graph.verified = True  # the same ranking over a listing taken as it is
    assert sorted(lead.path for lead in rank(task, graph)) == ["pkg/loader.py", "pkg/parser.py"]


def test_the_task_lead_never_offers_a_file_through_a_folder_now_a_symlink_out(tmp_path: Path) -> None:
    """A folder of the past listing replaced by a symlink to a folder outside the workspace: its
    files still exist through the link (``lexists`` follows the folders on the way), but they are
    outside, so the task lead leaves them out until the walk has dropped them."""
    from dsh_sidecar.suggester.lead.mentions import mentions
    from dsh_sidecar.suggester.lead.ranker import rank

    ws, out = tmp_path / "ws", tmp_path / "outside"
    write_tree(
        ws, {"pkg/parser.py": "def parse_config():\n    pass\n", "vendor/loader.py": "def load_config():\n    pass\n"}
    )
    walked = listingcache.walk_listing(ws)
    write_tree(out, {"loader.py": "def load_config():\n    pass\n"})
    (ws / "vendor/loader.py").unlink()
    (ws / "vendor").rmdir()
    (ws / "vendor").symlink_to(out, target_is_directory=True)
    graph = WorkspaceGraph.build_files(ws, past=listingcache.Listing(*walked))
    graph.index_symbols()
    task = mentions("Fix parse_config in pkg/parser.py and load_config in vendor/loader.py")
    assert graph.verified is False and "vendor/loader.py" in graph.files
    assert graph.definitions("load_config") == []  # never read through the link
    assert [lead.path for lead in rank(task, graph)] == ["pkg/parser.py"]


@pytest.mark.parametrize("change", ["added", "deleted"])
def test_a_watched_change_applied_before_the_walk_after_ready_leaves_the_past_listing_as_read(
    tmp_path: Path, walks: list[Path], change: str
) -> None:
    """A ``didChangeWatchedFiles`` batch applied between ready and the walk after it changes the
    graph's listing, never the past listing the walk is compared with: the walk ends verified
    (it failed with an index out of range, the graph unverified for the session) and the graph
    is a fresh build's."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, {**TREE, "zz/last.py": "def last():\n    pass\n"})
    Session(ws, home, walks)
    applied: list[bool] = []
    box: list[GraphBuilder] = []

    def ready(graph: WorkspaceGraph) -> None:
        if applied:
            return
        path = "pkg/c.py" if change == "added" else "pkg/b.py"
        if change == "added":
            (ws / path).write_text("def gamma():\n    pass\n")
        else:
            (ws / path).unlink()
        box[0].refresh([path])
        for _ in range(500):  # the refresh thread applies it (the walk runs after this returns)
            if (path in graph.files) == (change == "added"):
                break
            time.sleep(0.01)
        applied.append(graph.verified is False)

    later = GraphBuilder(ws, cache_dir=home, on_ready=ready)
    box.append(later)
    later.start()
    assert later.wait(60) and applied == [True]
    assert later.error is None and later.graph.verified is True and later.verified_walk[1] == 1
    fresh = Session(ws, tmp_path / "other-home", walks).builder.graph
    assert later.graph.files == fresh.files and later.graph.kind_map() == fresh.kind_map()
    kept = later.listing_cache.load()
    assert kept is not None and kept.stats.files == fresh.files
    later.close()


def test_ignore_files_added_between_sessions_leave_out_what_they_ignore_once_verified(
    tmp_path: Path, walks: list[Path]
) -> None:
    """A root and a nested ``.gitignore`` written between sessions: the files they ignore are in
    the past listing until the walk after ready, and not after it (the walk leaves them out and
    the batch it applies does not take them back in)."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, {**TREE, "generated/gen.py": "def made():\n    pass\n", "docs/run.log": "log\n"})
    Session(ws, home, walks)
    write_tree(ws, {".gitignore": "generated/\n", "docs/.gitignore": "*.log\n"})
    later = Session(ws, home, walks)
    assert later.at_ready["files"] == ["docs/guide.md", "docs/run.log", "generated/gen.py", "pkg/a.py", "pkg/b.py"]
    graph = later.builder.graph
    assert graph.verified is True
    assert graph.files == [".gitignore", "docs/.gitignore", "docs/guide.md", "pkg/a.py", "pkg/b.py"]
    assert graph.files == Session(ws, tmp_path / "other-home", walks).builder.graph.files
    assert later.builder.definitions("made") == []


def test_a_build_from_a_kept_listing_that_fails_walks_instead(
    tmp_path: Path, walks: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever a kept listing holds that the build from it cannot take, the session is not left
    without a graph: the listing is forgotten and the tree walked."""
    from dsh_sidecar.workspace import builder

    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, TREE)
    Session(ws, home, walks)
    real = WorkspaceGraph.build_files

    def failing(root: Path, kind_cache: object = None, past: object = None) -> WorkspaceGraph:
        if past is not None:
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        return real(root, kind_cache, past)  # type: ignore[arg-type]

    monkeypatch.setattr(builder.WorkspaceGraph, "build_files", failing)
    later = Session(ws, home, walks)
    graph = later.builder.graph
    assert graph is not None and graph.verified is True and graph.files == ["docs/guide.md", "pkg/a.py", "pkg/b.py"]
    assert later.at_ready["verified"] is True and later.walks_at_ready == 2
    assert later.builder.error is None
    kept = later.builder.listing_cache.load()
    assert kept is not None and kept.stats.files == graph.files  # the walk kept again
