"""The listing's stats (workspace/stats.py): one stat per file, the walk's taken in its order and
aligned with the sorted listing, and a fingerprint that tells an unchanged listing."""

from __future__ import annotations

import os
from pathlib import Path

from dsh_sidecar.workspace.files import walk_files
from dsh_sidecar.workspace.stats import FileStats, stat_files


def test_the_walks_stats_are_the_listings_stats(tmp_path: Path) -> None:
    for rel in ("b/z.py", "a.py", "b/a.md", "c/d/e.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    os.symlink("a.py", tmp_path / "link.py")  # followed: the stat of what a reader opens
    os.symlink("gone.py", tmp_path / "dangling.py")  # no stat at all
    walked = FileStats([])
    pairs = walk_files(tmp_path, mtimes=True, stats=walked)
    files = sorted(rel for rel, _ in pairs)
    assert walked.files != files  # the walk's own order
    aligned, reference = walked.select(files), stat_files(tmp_path, files)
    assert [aligned.at(i) for i in range(len(files))] == [reference.at(i) for i in range(len(files))]
    assert aligned.get("link.py") == aligned.get("a.py") and aligned.get("dangling.py") is None
    assert aligned.fingerprint() == reference.fingerprint()
    some = sorted(["a.py", "b/a.md", "not-walked.py"])  # a listing the walk did not take whole
    assert [walked.select(some).get(p) for p in some] == [reference.get("a.py"), reference.get("b/a.md"), None]


def test_the_fingerprint_tells_any_change(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    files = ["a.py", "b.py"]
    first = stat_files(tmp_path, files).fingerprint()
    assert stat_files(tmp_path, files).fingerprint() == first
    assert stat_files(tmp_path, ["a.py"]).fingerprint() != first
    st = os.stat(tmp_path / "b.py")
    (tmp_path / "new").write_text("y = 3\n")  # the same size and mtime, another inode
    os.utime(tmp_path / "new", ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp_path / "new", tmp_path / "b.py")
    assert stat_files(tmp_path, files).fingerprint() != first


def test_the_walk_stats_each_file_in_its_open_folder_as_a_stat_by_path_would(tmp_path: Path) -> None:
    """The walk stats a file relative to its open folder (``fstatat``): the same values as a
    ``stat`` of its whole path; a symlinked folder is not walked; a file rewritten in place
    (same size, its inode kept) reads as changed by its mtime."""
    for rel in ("src/pkg/m.py", "src/pkg/n.py", "docs/index.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x = 1\n")
    os.symlink(outside, tmp_path / "src" / "linked")  # a folder through a symlink: not walked
    walked = FileStats([])
    files = sorted(rel for rel, _ in walk_files(tmp_path, mtimes=True, stats=walked))
    assert files == ["docs/index.md", "src/pkg/m.py", "src/pkg/n.py"]  # nor listed as a file
    aligned = walked.select(files)
    for rel in ("docs/index.md", "src/pkg/m.py", "src/pkg/n.py"):
        st = os.stat(tmp_path / rel)
        assert aligned.get(rel) == (st.st_mtime_ns, st.st_size, st.st_ino)
    target = tmp_path / "src/pkg/m.py"
    before = aligned.get("src/pkg/m.py")
    with target.open("r+") as fh:  # the same size, in place
        fh.write("src/pkg/M.py")
    os.utime(target, ns=(before[0] + 1_000_000, before[0] + 1_000_000))  # (a later clock tick)
    again = FileStats([])
    walk_files(tmp_path, mtimes=True, stats=again)
    changed = again.select(files)
    assert changed.get("src/pkg/m.py") == (before[0] + 1_000_000, before[1], before[2])
    assert changed.fingerprint() != aligned.fingerprint()


def test_a_symlink_to_a_folder_is_no_file_and_one_to_a_file_or_nowhere_is(tmp_path: Path) -> None:
    """A symlink is listed as the file it names (git lists it so too), a dangling one included;
    one that names a folder, inside the workspace or out, is neither walked nor a file, with or
    without the stats."""
    (tmp_path / "src/pkg").mkdir(parents=True)
    (tmp_path / "src/pkg/m.py").write_text("x = 1\n")
    os.symlink("pkg", tmp_path / "src" / "alias")  # a folder inside
    os.symlink(tmp_path.parent, tmp_path / "up")  # a folder outside
    os.symlink("pkg/m.py", tmp_path / "src" / "m_link.py")
    os.symlink("gone.py", tmp_path / "src" / "dangling.py")
    expected = ["src/dangling.py", "src/m_link.py", "src/pkg/m.py"]
    assert sorted(rel for rel, _ in walk_files(tmp_path)) == expected
    walked = FileStats([])
    assert sorted(rel for rel, _ in walk_files(tmp_path, mtimes=True, stats=walked)) == expected
    picked = walked.select(expected)
    assert picked.get("src/m_link.py") == picked.get("src/pkg/m.py")  # the stat of what it names


def test_a_walks_stats_sorted_are_its_files_stats_in_path_order_and_select_keeps_them(tmp_path: Path) -> None:
    for i, rel in enumerate(["b/z.py", "a.py", "b/a.py", "a-b.py", "a/x.py", "c.txt"]):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x" * i)
    walked = FileStats([])
    pairs = walk_files(tmp_path, mtimes=True, stats=walked)
    ordered, times = walked.sort([t for _, t in pairs])
    assert ordered.files == sorted(walked.files) == ["a-b.py", "a.py", "a/x.py", "b/a.py", "b/z.py", "c.txt"]
    assert times == [dict(pairs)[rel] for rel in ordered.files]  # the walk's times, carried along
    by_path = {rel: walked.at(i) for i, rel in enumerate(walked.files)}  # the walk's order: no bisect
    assert [ordered.at(i) for i in range(len(ordered))] == [by_path[rel] for rel in ordered.files]
    assert [st[1] for st in map(ordered.at, range(6))] == [3, 1, 4, 2, 0, 5]  # the sizes written
    listing = list(ordered.files)  # the graph's own list, equal
    picked = ordered.select(listing)
    assert picked.files is listing and picked.fingerprint() == ordered.fingerprint()
    assert picked.fingerprint() == stat_files(tmp_path, listing).fingerprint()
