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

import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from dsh_sidecar.workspace import gitcmd, gitguard, prefetch

log = logging.getLogger(__name__)

#: Newest commits read by the recency pass (bounds time and memory on huge histories).
MAX_COMMITS: Final = 2_000
#: Seconds the git scan may take; past that, the walk (listing) or no history (recency) is used.
GIT_TIMEOUT_S: Final = 10

#: The git commands of one scan (run side by side): tracked files (with their index modes:
#: ``<mode> <object> <stage>\t<path>``), untracked-not-ignored files, the bounded history, and
#: tracked files changed since the last commit.
#: :mod:`.gitcmd` sets ``GIT_OPTIONAL_LOCKS=0``: ``git status`` does not take the index lock (it
#: would race the agent's own git commands).
_GIT_SCAN: Final = {
    "tracked": ["ls-files", "-z", "--stage"],
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
#: The two listing commands of :data:`_GIT_SCAN`, for a listing without recency.
_LISTING: Final = {key: _GIT_SCAN[key] for key in ("tracked", "untracked")}


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
    listed = listing(root, outs)
    if listed is None:
        return None
    files, untracked = listed
    times = _parse_log(outs["log"]) if outs["log"] else {}
    modified = [e[3:] for e in _z(outs["modified"]) if len(e) > 3 and "D" not in e[:2]]
    times.update(mtimes(root, untracked + modified))
    return files, times


#: The index mode of a symlink (which may point to a folder in the work tree).
_LINK_MODE: Final = "120000"


def git_files(root: Path) -> list[str] | None:
    """The files of a git checkout as :func:`scan` lists them (:func:`listing`), without the
    history; ``None`` when git cannot list ``root`` (the caller walks it)."""
    if not gitguard.can_list(root):
        return None
    listed = listing(root, _run_parallel(root, _LISTING))
    return None if listed is None else listed[0]


def listing(root: Path, outs: dict[str, bytes | None]) -> tuple[list[str], list[str]] | None:
    """``(files, untracked)`` from the outputs of :data:`_LISTING`'s commands; ``None`` when
    either failed (a listing without the untracked files would drop them). A symlink to a
    folder (index mode 120000, or untracked) is no file: left out, as the walk
    (``files.walk_files``) leaves it out, and so is an untracked nested repository (``sub/``);
    a symlink to a file, a dangling one or a loop stays listed, as there (reading it is
    :mod:`.fsguard`'s judgement). A submodule stays listed as git lists it (one path). An index
    entry whose path leaves the work tree (:func:`_in_work_tree`) is left out, and so is one
    under a symlinked folder git lists (a tracked folder replaced by a link). A listing longer
    than the index's head allows (:func:`.gitguard.listing_refusal`) is not used: ``None``."""
    if outs["tracked"] is None or outs["untracked"] is None:
        return None
    entries = _z(outs["tracked"])
    untracked = _z(outs["untracked"])
    refusal = gitguard.listing_refusal(root, len(entries), len(entries))  # (untracked: git's own)
    if refusal is not None:
        log.info("git's listing of %s not used (%s); walking the folder", root, refusal)
        return None
    tracked: list[str] = []
    links: list[str] = []
    for entry in entries:
        head, sep, path = entry.partition("\t")
        mode = head.partition(" ")[0]
        if not sep or not path or not _in_work_tree(path):
            continue
        tracked.append(path)
        if mode == _LINK_MODE:
            links.append(path)
    folders = _folders(root, links + untracked)
    if folders:
        tracked = [p for p in tracked if p not in folders]
        untracked = [p for p in untracked if p not in folders]
    # a tracked folder the work tree replaced by a symlink (git lists the link as untracked, or
    # nowhere when it is ignored): the index's paths under it now resolve through the link,
    # where the walk never goes
    linked = linked_folders(root, tracked)
    if linked:
        tracked = [p for p in tracked if not p.startswith(linked)]
    return list(dict.fromkeys(tracked + untracked)), untracked


def linked_folders(root: Path, paths: list[str]) -> tuple[str, ...]:
    """The folders (``"x/"``) of ``paths`` that are symlinks in the work tree, outermost only:
    each distinct folder ``lstat``-ed once, none under one found (the index names paths, git
    checks none of them when it lists it)."""
    folders = {p.rpartition("/")[0] for p in paths}
    folders.discard("")
    prefixes: set[str] = set()
    for folder in folders:
        while folder and folder not in prefixes:
            prefixes.add(folder)
            folder = folder.rpartition("/")[0]
    base = str(root) + os.sep
    found: list[str] = []
    for folder in sorted(prefixes):  # a folder sorts before every folder under it
        if found and folder.startswith(tuple(found)):
            continue
        try:
            if stat.S_ISLNK(os.lstat(base + folder).st_mode):
                found.append(folder + "/")
        except (OSError, ValueError):
            continue
    return tuple(found)


def _in_work_tree(path: str) -> bool:
    """Whether an index entry's path names a place in the work tree as git writes one: no
    leading, trailing or doubled ``/``, no ``.``, ``..`` or ``.git`` part (any case). A forged
    ``.git/index`` holds any bytes (git checks a path when it is added, not when the index is
    read): ``ls-files`` then lists ``../../etc/passwd``, ``/etc/shadow`` or ``.git/config``,
    which no walk gives."""
    p = f"/{path}/"
    return "//" not in p and "/../" not in p and "/./" not in p and "/.git/" not in p.lower()


def _folders(root: Path, paths: list[str]) -> set[str]:
    """Those of ``paths`` that are folders, a symlink followed (``stat``: the walk's judgement
    of a symlink; a path that cannot be stat'ed is no folder)."""
    out: set[str] = set()
    base = str(root) + os.sep
    for rel in paths:
        try:
            if stat.S_ISDIR(os.stat(base + rel).st_mode):
                out.add(rel)
        except (OSError, ValueError):
            continue
    return out


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
