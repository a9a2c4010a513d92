"""When each workspace file last changed, and its recency rank (0 = most recently changed).

Where the workspace is a git checkout, one bounded ``git log --name-only --format=%ct`` pass
(at most :data:`MAX_COMMITS` commits, :data:`GIT_LOG_TIMEOUT_S` seconds) gives each file the
committer time of the newest commit that touched it, and one ``git status --porcelain`` pass
names the files changed since (modified or untracked): those take their mtime. Files neither
pass reaches (last touched before the bound) count as 0, the oldest. Without git, every file's
mtime is used.

Ranks are dense: files changed at the same second (e.g. one commit) share a rank.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Final

#: Newest commits read by the recency pass (bounds time and memory on huge histories).
MAX_COMMITS: Final = 2_000
#: Seconds the ``git log`` pass may take; past that, mtimes are used.
GIT_LOG_TIMEOUT_S: Final = 10


def git_commit_times(root: Path) -> dict[str, float] | None:
    """``{repo-relative path: newest committer time (Unix seconds)}`` from the bounded log pass,
    or ``None`` when ``root`` is not a git checkout or git fails/times out."""
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "-c", "core.quotepath=off", "log", f"-n{MAX_COMMITS}",
             "--name-only", "--no-renames", "--format=%x00%ct", "--no-color"],
            capture_output=True,
            timeout=GIT_LOG_TIMEOUT_S,
            check=True,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    times: dict[str, float] = {}
    for block in out.stdout.decode("utf-8", "replace").split("\0"):
        lines = block.split("\n")
        try:
            ts = float(lines[0].strip())
        except ValueError:
            continue
        for line in lines[1:]:
            if line and line not in times:  # the log is newest first
                times[line] = ts
    return times


def git_dirty(root: Path) -> list[str]:
    """Modified, added or untracked (not ignored) paths from ``git status --porcelain``; ``[]``
    when git fails."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"],
            capture_output=True,
            timeout=GIT_LOG_TIMEOUT_S,
            check=True,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return [e[3:] for e in out.stdout.decode("utf-8", "replace").split("\0") if len(e) > 3 and e[0] != "D" and e[1] != "D"]


def file_times(root: Path, files: list[str]) -> tuple[dict[str, float], str]:
    """``({path: change time}, source)`` where source is ``"git"`` or ``"mtime"`` (rules in the
    module docstring)."""
    times = git_commit_times(root)
    if times is None:
        return mtimes(root, files), "mtime"
    times.update(mtimes(root, git_dirty(root)))
    return times, "git"


def mtimes(root: Path, files: Iterable[str]) -> dict[str, float]:
    """``{path: mtime}`` for the files that can be stat'ed (others are left out)."""
    out: dict[str, float] = {}
    base = str(root) + os.sep
    for rel in files:
        try:
            out[rel] = os.stat(base + rel).st_mtime
        except OSError:
            continue
    return out


def dense_ranks(times: dict[str, float], files: Iterable[str]) -> dict[str, int]:
    """``{path: rank}``, rank 0 for the newest time; missing times count as 0 (oldest)."""
    files = list(files)
    distinct = sorted({times.get(f, 0.0) for f in files}, reverse=True)
    rank_of = {t: i for i, t in enumerate(distinct)}
    return {f: rank_of[times.get(f, 0.0)] for f in files}
