"""Workspaces built on the fly for tests that need a tree large enough for the background build
to take a while."""

from __future__ import annotations

from pathlib import Path


def big_workspace(root: Path, folders: int = 100, files: int = 100) -> Path:
    """``root`` with ``folders`` × ``files`` small Python modules (``src/pkg<d>/m<f>.py``, one
    function each: 10,000 by default); returns ``root``."""
    for d in range(folders):
        pkg = root / "src" / f"pkg{d}"
        pkg.mkdir(parents=True)
        for f in range(files):
            (pkg / f"m{f}.py").write_text(f"def f{d}_{f}():\n    return {f}\n")
    return root
