"""Workspaces built on the fly: a tree of given files (:func:`write_tree`), and one large enough
for the background build to take a while (:func:`big_workspace`)."""

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


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write each ``{relative path: text}`` of ``files`` under ``root`` (folders made as needed);
    returns ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
