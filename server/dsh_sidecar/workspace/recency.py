"""When each workspace file last changed, and its recency rank (0 = most recently changed).

Where the workspace is a git checkout, one bounded ``git log --name-only --format=%ct`` pass
(at most :data:`MAX_COMMITS` commits, :data:`GIT_TIMEOUT_S` seconds) gives each file the
committer time of the newest commit that touched it, and ``git status --porcelain -uno`` plus
``git ls-files --others`` name the files changed since (modified or untracked): those take their
mtime. Files none of these reach (last touched before the bound) count as 0, the oldest. The
four git commands of :func:`git_scan` run side by side. Without git, every file's mtime is used
(collected during the walk); so too when either listing fails, or when the work tree holds a
``.gitignore`` or ``.gitattributes`` git would block on (:func:`.gitguard.worktree_refusal`).

Ranks are dense: files changed at the same second (e.g. one commit) share a rank.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from dsh_sidecar.workspace import gitcmd, gitguard, prefetch

#: Newest commits read by the recency pass (bounds time and memory on huge histories).
MAX_COMMITS: Final = 2_000
#: Seconds the git scan may take; past that, the walk (listing) or no history (recency) is used.
GIT_TIMEOUT_S: Final = 10

#: The git commands of one scan (run side by side): tracked files, untracked-not-ignored
#: files, the bounded history, and tracked files changed since the last commit.
#: :mod:`.gitcmd` sets ``GIT_OPTIONAL_LOCKS=0``: ``git status`` does not take the index lock (it
#: would race the agent's own git commands).
_GIT_SCAN: Final = {
    "tracked": ["ls-files", "-z", "--cached"],
    "untracked": ["ls-files", "-z", "--others", "--exclude-standard"],
    "log": [
        "log",
        f"-n{MAX_COMMITS}",
        "--name-only",
        "--no-renames",
        "--format=%x00%ct",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-show-signature",
    ],
    # --ignore-submodules=all: status otherwise runs `git status` inside each submodule, under
    # the submodule's own config (its clean/process filters ran: docs/SECURITY.md, class 1); the
    # command-line option beats every `submodule.<name>.ignore` the repository sets
    "modified": ["status", "--porcelain=v1", "-z", "--untracked-files=no", "--no-renames", "--ignore-submodules=all"],
}


def _parse_log(out: bytes) -> dict[str, float]:
    times: dict[str, float] = {}
    for block in out.decode("utf-8", "replace").split("\0"):
        lines = block.split("\n")
        try:
            ts = float(lines[0].strip())
        except ValueError:
            continue
        for line in lines[1:]:
            if line and line not in times:  # the log is newest first
                times[line] = ts
    return times


def _z(out: bytes | None) -> list[str]:
    return [p for p in (out or b"").decode("utf-8", "replace").split("\0") if p]


def _run_parallel(root: Path, commands: dict[str, list[str]]) -> dict[str, bytes | None]:
    """Run git commands side by side through :mod:`.gitcmd`; ``{key: stdout}`` (``None`` for
    a failure/timeout; all ``None`` when the repository cannot be run safely)."""
    try:
        return gitcmd.Git(root, GIT_TIMEOUT_S).run_many(commands)
    except gitcmd.GitError:
        return {key: None for key in commands}


def git_scan(root: Path) -> tuple[list[str], dict[str, float]] | None:
    """``(files, {path: change time})`` of a git checkout (rules in the module docstring):
    files = tracked + untracked-not-ignored, de-duplicated, unsorted. ``None`` when ``root`` is
    not a checkout or the listing fails (the caller walks instead); a failed log or status only
    loses recency. A scan of ``root`` started early (``prefetch.py``) is taken when fresh."""
    return prefetch.take(("git_scan", str(root)), scan, root)


def scan(root: Path) -> tuple[list[str], dict[str, float]] | None:
    """:func:`git_scan` run now."""
    if not gitguard.can_list(root):
        return None
    outs = _run_parallel(root, _GIT_SCAN)
    if outs["tracked"] is None or outs["untracked"] is None:
        return None  # a listing without the untracked files would drop them from the graph
    untracked = _z(outs["untracked"])
    files = list(dict.fromkeys(_z(outs["tracked"]) + untracked))
    times = _parse_log(outs["log"]) if outs["log"] else {}
    modified = [e[3:] for e in _z(outs["modified"]) if len(e) > 3 and "D" not in e[:2]]
    times.update(mtimes(root, untracked + modified))
    return files, times


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
