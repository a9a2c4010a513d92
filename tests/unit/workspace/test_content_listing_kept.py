"""The content index's stored listing fingerprint kept current by syncs of changed paths
(``workspace/fts.py``, ``workspace/stats.py``): the session after one that changed files reads
no row at its start; a file edited while no session ran is still found (the walk after ready);
a forged or corrupt fingerprint, another writer, or a failure between the rows and the
fingerprint never leaves a fingerprint that claims rows the database does not have."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from dsh_sidecar.workspace import fts
from dsh_sidecar.workspace.content import ContentIndexer
from dsh_sidecar.workspace.projection import WorkspaceProjection
from dsh_sidecar.workspace.stats import FileStats, stat_files
from support.trees import write_tree

pytestmark = pytest.mark.skipif(not fts.fts5_available(), reason="this Python's SQLite has no FTS5")

FILES = {f"docs/p{i}.md": f"# page {i}\n" for i in range(20)} | {
    f"pkg/m{i}.py": f"def f{i}(x):\n    return x\n" for i in range(10)
}


class Owner:
    """A targets' owner with nothing to prepare."""

    ready = True

    def prepare(self, graph: object = None) -> bool:
        return True

    def files_changed(self, changed: object) -> None:
        pass

    def workspace_changed(self, change: object) -> bool:
        return False


def _session(ws: Path, home: Path) -> WorkspaceProjection:
    """A session's workspace side, ready and its listing verified (the walk after ready done)."""
    projection = WorkspaceProjection(ws, home, lambda: Owner())
    projection.start()
    deadline = time.monotonic() + 60
    while projection.status().get("verified") is False and time.monotonic() < deadline:
        time.sleep(0.02)
    assert projection.wait_for_graph(60)
    return projection


def _close(projection: WorkspaceProjection) -> None:
    assert projection.wait_for_graph(60) and projection.graph_builder.wait_kept(30)
    projection.close()


def _content(projection: WorkspaceProjection) -> dict[str, Any]:
    status = projection.status()["content"]
    return {k: status.get(k) for k in ("fingerprint", "read", "unchanged", "removed", "listingKept")}


def test_the_session_after_one_with_changes_reads_no_row_and_finds_the_new_text(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    _close(_session(ws, home))  # cold: every file read, the fingerprint stored
    warm = _session(ws, home)
    assert _content(warm) == {"fingerprint": True, "read": 0, "unchanged": 30, "removed": 0, "listingKept": None}
    (ws / "docs/p1.md").write_text("# page one, rewritten with quokka\n")
    (ws / "pkg/m2.py").unlink()
    (ws / "docs/added.md").write_text("# wombat notes\n")
    warm.files_changed(["docs/p1.md", "pkg/m2.py", "docs/added.md"])
    assert warm.wait_for_graph(60)
    last = warm.status()["content"]["lastChange"]
    assert (last["read"], last["removed"], last["listingKept"]) == (2, 1, True)
    _close(warm)

    after = _session(ws, home)
    try:  # nothing read, nothing compared: the fingerprint the changed session kept current
        assert _content(after) == {"fingerprint": True, "read": 0, "unchanged": 30, "removed": 0, "listingKept": None}
        assert "lastChange" not in after.status()["content"]  # and the walk after ready found nothing
        assert [p for p, _ in after.content.search(["quokka"])] == ["docs/p1.md"]
        assert [p for p, _ in after.content.search(["wombat"])] == ["docs/added.md"]
    finally:
        _close(after)


def test_a_file_edited_while_no_session_ran_is_found_by_the_next_session(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    _close(_session(ws, home))
    changed = _session(ws, home)
    (ws / "docs/p3.md").write_text("# page three with platypus\n")
    changed.files_changed(["docs/p3.md"])
    _close(changed)
    (ws / "docs/p4.md").write_text("# page four with echidna\n")  # no session sees it
    os.utime(ws / "docs/p4.md", ns=(time.time_ns(), time.time_ns() + 10**9))
    later = _session(ws, home)
    try:  # ready from the kept listing (the rows it names), the edit found by the walk after it
        assert later.status()["content"]["lastChange"]["read"] == 1
        assert [p for p, _ in later.content.search(["echidna"])] == ["docs/p4.md"]
        assert [p for p, _ in later.content.search(["platypus"])] == ["docs/p3.md"]
    finally:
        _close(later)


# ---------------------------------------------------------------------------- the database


def _indexed(tmp_path: Path) -> tuple[Path, Path, list[str], ContentIndexer]:
    root = tmp_path / "ws"
    write_tree(root, FILES)
    listing = sorted(FILES)
    ix = ContentIndexer(root, tmp_path / "cache")
    ix.start(listing, lambda: stat_files(root, listing))
    assert ix.wait(60) and ix.stats["listingKept"] is True
    return root, tmp_path / "cache", listing, ix


def _stored(ix: ContentIndexer) -> Any:
    assert ix.db_path is not None
    con = sqlite3.connect(ix.db_path)
    try:
        row = con.execute("SELECT value FROM meta WHERE key='listing'").fetchone()
    finally:
        con.close()
    return row[0] if row else None


def _next_start(root: Path, cache: Path, listing: list[str]) -> dict[str, Any]:
    ix = ContentIndexer(root, cache)
    ix.start(listing, lambda: stat_files(root, listing))
    assert ix.wait(60)
    ix.close()
    return {k: ix.stats.get(k) for k in ("fingerprint", "read", "unchanged", "removed")}


def test_the_stored_fingerprint_is_the_listing_after_the_change(tmp_path: Path) -> None:
    root, cache, listing, ix = _indexed(tmp_path)
    (root / "docs/p5.md").write_text("# five, longer now\n")
    (root / "docs/p6.md").unlink()
    (root / "aaa.md").write_text("# first\n")
    ix.refresh(["docs/p5.md", "docs/p6.md", "aaa.md"], ["docs/p5.md", "aaa.md"])
    assert ix.wait(60) and ix.stats["lastChange"]["listingKept"] is True
    now = sorted({*listing, "aaa.md"} - {"docs/p6.md"})
    assert _stored(ix) == stat_files(root, now).fingerprint()
    ix.close()
    assert _next_start(root, cache, now) == {"fingerprint": True, "read": 0, "unchanged": 30, "removed": 0}


@pytest.mark.parametrize("forged", ["", "0" * 40, "x" * 100_000, b"\x00\xff", 7, None])
def test_a_forged_or_corrupt_fingerprint_makes_a_full_sync(tmp_path: Path, forged: object) -> None:
    root, cache, listing, ix = _indexed(tmp_path)
    ix.close()
    assert ix.db_path is not None
    con = sqlite3.connect(ix.db_path)
    with con:
        con.execute("INSERT OR REPLACE INTO meta VALUES('listing', ?)", (forged,))
    con.close()
    assert _next_start(root, cache, listing) == {"fingerprint": None, "read": 0, "unchanged": 30, "removed": 0}
    again = ContentIndexer(root, cache)  # and a change after it is followed: the rows were compared
    again.start(listing, lambda: stat_files(root, listing))
    assert again.wait(60) and again.stats["fingerprint"] is True


def test_a_fingerprint_changed_by_another_writer_is_not_followed(tmp_path: Path) -> None:
    root, cache, listing, ix = _indexed(tmp_path)
    assert ix.db_path is not None
    con = sqlite3.connect(ix.db_path)
    with con:  # another session's claim: not the rows this session knows
        con.execute("UPDATE meta SET value='f' || value WHERE key='listing'")
    con.close()
    (root / "docs/p7.md").write_text("# seven, changed\n")
    ix.refresh(["docs/p7.md"], ["docs/p7.md"])
    assert ix.wait(60) and ix.stats["lastChange"]["listingKept"] is False and _stored(ix) is None
    (root / "docs/p8.md").write_text("# eight, changed\n")  # nor anything after it this session
    ix.refresh(["docs/p8.md"], ["docs/p8.md"])
    assert ix.wait(60) and ix.stats["lastChange"]["listingKept"] is False and _stored(ix) is None
    ix.close()
    assert _next_start(root, cache, listing) == {"fingerprint": None, "read": 0, "unchanged": 30, "removed": 0}


def test_rows_written_by_another_writer_during_the_sync_store_no_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _cache, _listing, ix = _indexed(tmp_path)
    assert ix.db_path is not None
    path, real = ix.db_path, fts.read_row

    def read_row(*args: Any, **kwargs: Any) -> Any:
        con = sqlite3.connect(path, timeout=10)
        with con:  # another process's sync, between this one's start and its last rows
            con.execute("INSERT INTO files(path, rid) VALUES('zz.md', 999999)")
        con.close()
        return real(*args, **kwargs)

    monkeypatch.setattr(fts, "read_row", read_row)
    (root / "docs/p9.md").write_text("# nine, changed\n")
    ix.refresh(["docs/p9.md"], ["docs/p9.md"])
    assert ix.wait(60) and ix.stats["lastChange"]["listingKept"] is False and _stored(ix) is None
    ix.close()


def test_a_failure_between_the_rows_and_the_fingerprint_leaves_no_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last rows and the fingerprint are one transaction: when storing the fingerprint
    fails, neither is written; rows written in earlier transactions have no fingerprint either
    (it was taken out before the first)."""
    root, cache, listing, ix = _indexed(tmp_path)
    monkeypatch.setattr(fts, "BATCH", 2)
    monkeypatch.setattr(fts, "_CLAIM", "INSERT INTO no_such_table VALUES(?, ?, ?)")
    changed = ["docs/p10.md", "docs/p11.md", "docs/p12.md"]
    for rel in changed:
        (root / rel).write_text(f"# {rel} rewritten with narwhal\n")
    ix.refresh(changed, changed)
    assert ix.wait(60) and ix.status()["state"] == "failed" and _stored(ix) is None
    assert sorted(p for p, _ in ix.search(["narwhal"])) == ["docs/p10.md", "docs/p11.md"]  # the last row not written
    ix.close()
    monkeypatch.undo()
    assert _next_start(root, cache, listing) == {"fingerprint": None, "read": 1, "unchanged": 29, "removed": 0}


# ---------------------------------------------------------------------------- the stats


def test_the_fingerprint_after_path_changes_is_a_fresh_listings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept run digests give the fingerprint a listing of the same paths and stats gives when
    made from scratch, after edits in place, paths added and paths taken out anywhere."""
    from dsh_sidecar.workspace import stats as stats_module

    monkeypatch.setattr(stats_module, "DIGEST_RUN", 4)
    files = [f"f{i:03d}" for i in range(0, 60, 2)]
    kept = FileStats([])
    for i in range(len(files)):
        kept.set(files[i], (i, i + 1, i + 2))
    kept.fingerprint()

    def fresh() -> str:
        out = FileStats([])
        for i in range(len(kept)):
            out.set(kept.files[i], kept.at(i))
        return out.fingerprint()

    steps: list[tuple[str, tuple[int, int, int] | None]] = [
        ("f010", (9, 9, 9)),
        ("f000", None),
        ("f001", (1, 1, 1)),
        ("f059", (5, 5, 5)),
        ("f030", (3, 3, 3)),
    ]
    seen = {kept.fingerprint()}
    for rel, st in steps:
        kept.set(rel, st)
        assert kept.fingerprint() == fresh()
        seen.add(kept.fingerprint())
    for rel in ("f001", "f058", "f000", "nope"):
        kept.remove(rel)
        assert kept.fingerprint() == fresh()
        seen.add(kept.fingerprint())
    assert len(seen) == 9  # every change told ("nope" was not listed: no change)
    assert kept.files == sorted(kept.files) and len(kept.files) == len(kept) == 29
    assert kept.copy(list(kept.files), digests=True).fingerprint() == kept.fingerprint()
