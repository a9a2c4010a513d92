"""Class 8 (docs/SECURITY.md): a file name that is not UTF-8 is data, not a crash.

In a folder that is not a git checkout, one file named ``docs/\\xff\\xfe.md`` came back from the
walk as a string with lone surrogates; RE2 refused to encode it (``UnicodeEncodeError``), so
the ``.gitignore`` matcher, and the suggester's glob matching at every activation, failed: one
such name switched the suggester off for the whole workspace. The walk now leaves such names
out (they could not be matched, shown or sent as JSON anyway).
"""

from __future__ import annotations

import os
from pathlib import Path

from dsh_sidecar.workspace.files import list_files, walk_files
from dsh_sidecar.workspace.wildmatch import glob_spec, ignore_matcher


def _tree(root: Path) -> None:
    (root / "docs").mkdir()
    (root / "docs" / "good.md").write_text("d\n")
    for name in (b"\xff\xfe.md", b"bad\xc3(.md"):
        with open(os.path.join(os.fsencode(root / "docs"), name), "w") as fh:
            fh.write("d\n")
    os.mkdir(os.path.join(os.fsencode(root), b"dir\xff"))
    (root / os.fsdecode(b"dir\xff") / "inner.md").write_text("d\n")
    (root / ".gitignore").write_text("*.log\n")


def test_walk_leaves_undecodable_names_out(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert sorted(rel for rel, _ in walk_files(tmp_path)) == [".gitignore", "docs/good.md"]


def test_listing_and_glob_matching_work(tmp_path: Path) -> None:
    _tree(tmp_path)
    files = list_files(tmp_path)
    assert files == [".gitignore", "docs/good.md"]
    match = ignore_matcher(glob_spec("docs/*.md"))
    assert [f for f in files if match(f)] == ["docs/good.md"]
