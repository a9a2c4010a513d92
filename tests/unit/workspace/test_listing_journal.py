"""The kept listing's journal (``workspace/listingjournal.py``): a session that changed files
writes their rows over the kept listing instead of the whole listing, and the next session
lays them over it, so its walk after ready finds nothing to apply; a forged or torn journal is
set aside and the walk applies the changes instead; more than the journal holds, or a journal past
its compaction size, makes the whole listing written."""

from __future__ import annotations

import hashlib
import json
import os
from array import array
from pathlib import Path
from typing import Any

import pytest
from dsh_sidecar.workspace import GraphBuilder, listingcache, listingjournal
from dsh_sidecar.workspace.listingcache import ListingCache
from dsh_sidecar.workspace.listingjournal import lay_over
from dsh_sidecar.workspace.stats import FileStats, stat_files
from support.trees import write_tree

FILES = {f"pkg/m{i}.py": f"def f{i}(x):\n    return f{i - 1}(x)\n" for i in range(12)}
FILES["docs/guide.md"] = "# Guide\n"


def _session(ws: Path, home: Path) -> GraphBuilder:
    b = GraphBuilder(ws, cache_dir=home)
    b.start()
    assert b.wait(60)
    return b


def _edit_during(session: GraphBuilder, ws: Path) -> None:
    """One file changed, one deleted, one added, notified; the session keeps what they did."""
    (ws / "pkg/m1.py").write_text("def f1(y):\n    return renamed(y)\n")
    (ws / "pkg/m2.py").unlink()
    (ws / "pkg/new.py").write_text("def brand_new():\n    return f1(0)\n")
    session.refresh(["pkg/m1.py", "pkg/m2.py", "pkg/new.py"])
    assert session.wait(30) and session.wait_kept(30)
    session.close()


def _walked(ws: Path) -> tuple[list[str], list[tuple[int, int, int]]]:
    files = sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if p.is_file())
    stats = stat_files(ws, files)
    return files, [stats.at(i) for i in range(len(files))]


def _as_read(home: Path, ws: Path) -> tuple[list[str], list[tuple[int, int, int]]]:
    listed = ListingCache(home, ws).load()
    assert listed is not None
    return listed.stats.files, [listed.stats.at(i) for i in range(len(listed.stats))]


def test_a_session_with_changes_journals_them_and_the_next_reads_the_tree_as_they_left_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    _session(ws, home)
    kept = ListingCache(home, ws)
    before = kept.path.read_bytes()
    saves: list[int] = []
    real = ListingCache.save
    monkeypatch.setattr(ListingCache, "save", lambda self, *a, **kw: saves.append(1) or real(self, *a, **kw))
    _edit_during(_session(ws, home), ws)
    assert saves == [] and kept.path.read_bytes() == before  # the listing itself not written again
    assert kept.journal.path.is_file() and kept.journal.path.stat().st_mode & 0o777 == 0o600
    assert _as_read(home, ws) == _walked(ws)

    after = _session(ws, home)
    assert after.verified_walk is not None and after.verified_walk[1] == 0  # nothing to apply
    assert saves == []  # nor by the verification: the journal stays until compaction
    assert after.graph.files == _session(ws, tmp_path / "fresh").graph.files


def test_more_changes_than_the_journal_holds_write_the_whole_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    _session(ws, home)
    monkeypatch.setattr(listingjournal, "MAX_FILES", 2)
    _edit_during(_session(ws, home), ws)
    kept = ListingCache(home, ws)
    assert not kept.journal.path.exists()
    assert _as_read(home, ws) == _walked(ws)
    assert _session(ws, home).verified_walk[1] == 0


def test_a_journal_past_its_compaction_size_makes_the_next_session_write_the_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    _session(ws, home)
    _edit_during(_session(ws, home), ws)
    monkeypatch.setattr(listingcache, "COMPACT_AT", 2)  # the journal holds 3 files
    after = _session(ws, home)
    assert after.verified_walk[1] == 0
    kept = ListingCache(home, ws)
    assert not kept.journal.path.exists()
    assert _as_read(home, ws) == _walked(ws)


def _rewrite(path: Path, body: bytes, head: dict[str, Any] | None = None) -> None:
    """The journal at ``path`` with ``body`` (its digest made to match) and its head's fields."""
    old = json.loads(path.read_bytes().split(b"\n", 1)[0])
    new = {**old, "digest": hashlib.blake2b(body, digest_size=20).hexdigest(), **(head or {})}
    path.write_bytes(json.dumps(new).encode() + b"\n" + body)
    os.chmod(path, 0o600)


FORGED = {
    "torn": None,
    "not a mapping": b"[1, 2]",
    "unsafe path": b'{"../outside.py": [1, 1, 1, 0.0]}',
    "absolute path": b'{"/etc/passwd": null}',
    "empty component": b'{"pkg//m1.py": null}',
    "path too long": b'{"%s": null}' % (b"a" * 1025),
    "bool stat": b'{"pkg/m1.py": [true, 1, 1, 0.0]}',
    "size below -1": b'{"pkg/m1.py": [1, -2, 1, 0.0]}',
    "inode past 64 bits": b'{"pkg/m1.py": [1, 1, 18446744073709551616, 0.0]}',
    "stamp not a number": b'{"pkg/m1.py": [1, 1, 1, "x"]}',
    "non-finite stamp": b'{"pkg/m1.py": [1, 1, 1, NaN]}',
    "short row": b'{"pkg/m1.py": [1, 1, 1]}',
    "nested": b"[" * 100_000,
}


@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_forged_or_torn_journal_is_set_aside_and_the_walk_applies_the_changes(tmp_path: Path, case: str) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    _session(ws, home)
    _edit_during(_session(ws, home), ws)
    path = ListingCache(home, ws).journal.path
    if FORGED[case] is None:
        path.write_bytes(path.read_bytes()[:-7])  # torn: the digest no longer matches
    else:
        _rewrite(path, FORGED[case])
    after = _session(ws, home)
    assert list(home.glob("*.listing-journal.json.corrupt-*"))
    assert after.verified_walk[1] == 3  # the listing as the first session wrote it: three differ
    assert after.graph.files == _session(ws, tmp_path / "fresh").graph.files


@pytest.mark.parametrize("head", [{"base": "0" * 40}, {"source": "git"}, {"root": "/elsewhere"}, {"version": 99}])
def test_a_journal_of_another_listing_or_workspace_is_not_taken(tmp_path: Path, head: dict[str, Any]) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    _session(ws, home)
    _edit_during(_session(ws, home), ws)
    path = ListingCache(home, ws).journal.path
    _rewrite(path, path.read_bytes().split(b"\n", 1)[1], head)
    after = _session(ws, home)
    assert after.verified_walk[1] == 3
    assert after.graph.files == _session(ws, tmp_path / "fresh").graph.files


def test_rows_laid_over_a_listing_add_replace_and_take_out_in_order() -> None:
    stats = FileStats(["a", "c", "e"])
    stats.mtime, stats.size, stats.ino = array("q", [1, 3, 5]), array("q", [10, 30, 50]), array("Q", [100, 300, 500])
    out, stamps = lay_over(
        stats,
        [1.0, 3.0, 5.0],
        {"e": None, "b": (2, 20, 200, 2.0), "c": (4, -1, 0, 4.0), "zz": None, "f": (6, 60, 600, 6.0)},
    )
    assert out.files == ["a", "b", "c", "f"] and stamps == [1.0, 2.0, 4.0, 6.0]
    assert [out.at(i) for i in range(4)] == [(1, 10, 100), (2, 20, 200), None, (6, 60, 600)]
    assert stats.files == ["a", "c", "e"] and list(stats.mtime) == [1, 3, 5]  # the listing read is not changed
