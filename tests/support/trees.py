"""Workspaces built on the fly: a copy of a workspace fixture (:func:`copy_fixture`), a tree of
given files (:func:`write_tree`), and one large enough for the background build to take a while
(:func:`big_workspace`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: The workspace fixtures (``tests/data/workspaces``).
WORKSPACES = Path(__file__).resolve().parents[1] / "data" / "workspaces"
#: The modification time every copied fixture file gets (2020-09-13): the checkout's own times
#: are when git wrote each file, so two files written across a second boundary differed in
#: recency (``workspace.recency``: ranks by the second) and swapped places in a note's targets.
FIXTURE_MTIME = 1_600_000_000


def copy_fixture(name: str, dest: Path) -> Path:
    """``dest``, a copy of the workspace fixture ``tests/data/workspaces/<name>`` (tests may
    change it), every file changed at :data:`FIXTURE_MTIME`, so its recency ties wherever the
    repository was checked out."""
    shutil.copytree(WORKSPACES / name, dest)
    for path in dest.rglob("*"):
        if path.is_file() and not path.is_symlink():
            os.utime(path, (FIXTURE_MTIME, FIXTURE_MTIME))
    return dest


def big_workspace(root: Path, folders: int = 100, files: int = 100) -> Path:
    """``root`` with ``folders`` × ``files`` small Python modules (``src/pkg<d>/m<f>.py``, one
    function each: 10,000 by default); returns ``root``."""
    for d in range(folders):
        pkg = root / "src" / f"pkg{d}"
        pkg.mkdir(parents=True)
        for f in range(files):
            (pkg / f"m{f}.py").write_text(f"def f{d}_{f}():\n    return {f}\n")
    return root


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write each ``{relative path: text}`` of ``files`` under ``root`` (folders made as needed);
    returns ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
