"""List a workspace's files: ``git ls-files`` where the folder is a git checkout, else a walk
that honours ``.gitignore`` (via pathspec's gitwildmatch) and skips VCS and build folders."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import pathspec

#: Most files listed for one workspace (a bigger tree is cut, with a warning upstream).
MAX_FILES: Final = 250_000
#: Folders never walked (VCS metadata, dependency and build caches).
SKIP_DIRS: Final = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".tox", ".nox", "target", "dist", "build", ".dsh-cache"}
)
#: Seconds a ``git ls-files`` may take before the walk is used instead.
GIT_TIMEOUT_S: Final = 10


def _git_files(root: Path) -> list[str] | None:
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=True,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    files = [p for p in out.stdout.decode("utf-8", "replace").split("\0") if p]
    return files[:MAX_FILES]


def _walk_files(root: Path) -> list[str]:
    ignore_file = root / ".gitignore"
    spec = None
    if ignore_file.is_file():
        try:
            spec = pathspec.GitIgnoreSpec.from_lines(ignore_file.read_text("utf-8", "replace").splitlines())
        except Exception:  # a malformed .gitignore must not stop the listing
            spec = None
    files: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in SKIP_DIRS and not (spec and spec.match_file(rel_dir + d + "/"))
        )
        for name in sorted(filenames):
            rel = rel_dir + name
            if spec and spec.match_file(rel):
                continue
            files.append(rel)
            if len(files) >= MAX_FILES:
                return files
    return files


def list_files(root: Path) -> list[str]:
    """Repo-relative POSIX paths of the workspace's files, sorted; at most :data:`MAX_FILES`."""
    files = _git_files(root)
    if files is None:
        files = _walk_files(root)
    return sorted(set(files))


@dataclass
class WorkspaceFiles:
    """A cached listing of one workspace. :meth:`refresh` re-lists it."""

    root: Path
    files: list[str] = field(default_factory=list)
    file_set: frozenset[str] = frozenset()
    loaded: bool = False

    def ensure(self) -> None:
        """List the files once."""
        if not self.loaded:
            self.refresh()

    def refresh(self) -> None:
        """Re-list the files."""
        self.files = list_files(self.root)
        self.file_set = frozenset(self.files)
        self.loaded = True

    def exists(self, rel: str) -> bool:
        """Whether ``rel`` (repo-relative POSIX path) is a listed file."""
        self.ensure()
        return rel in self.file_set
