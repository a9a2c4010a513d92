"""Paths of a workspace as the incremental path (``WorkspaceGraph.apply``) takes them: a changed
path made repo-relative, whether a folder is a symlink or under one, whether a path is a file,
and a sorted list's removal."""

from __future__ import annotations

import bisect
import os
from pathlib import Path
from typing import Any

from dsh_sidecar.workspace import fsguard


def through_link(root: Path, folder: str, seen: dict[str, bool]) -> bool:
    """Whether ``folder`` (repo-relative, ``""`` the root) is a symlink or under one in the
    work tree ``root``: the walk never lists a file through one (``files.walk_files``; a tracked
    folder swapped for a link, ``recency.linked_folders``). Each folder ``lstat``-ed once a
    batch (``seen``)."""
    if not folder:
        return False
    if (known := seen.get(folder)) is not None:
        return known
    parts = folder.split("/")
    known, at = False, ""
    for part in parts:  # outermost first; iterative (a hostile path may be deep)
        at = f"{at}/{part}" if at else part
        if (cached := seen.get(at)) is None:
            try:
                cached = known or os.path.islink(os.path.join(root, at))
            except (OSError, ValueError):
                cached = True
            seen[at] = cached
        known = cached
    return known


def relative(root: Path, raw: str) -> str | None:
    """``raw`` (repo-relative, or absolute under ``root``: as spelt, else once its links are
    resolved) as a repo-relative POSIX path; ``None`` outside the workspace."""
    p = raw.replace(os.sep, "/")
    if os.path.isabs(p) and (lexical := fsguard.relative(root, p)) is not None:
        p = lexical  # a path under a symlinked folder stays under it (dropped, not kept listed)
    elif os.path.isabs(p):
        try:
            p = Path(p).resolve().relative_to(root.resolve()).as_posix()
        except (ValueError, OSError):
            return None
    while p.startswith("./"):
        p = p[2:]
    if not p or p.startswith("../") or "/../" in p or p == "..":
        return None
    return p


def sorted_remove(items: list[Any] | None, value: Any) -> None:
    """Remove ``value`` from the sorted list ``items`` if it is there (bisect: no scan)."""
    if not items:
        return
    i = bisect.bisect_left(items, value)
    if i < len(items) and items[i] == value:
        del items[i]


def is_file(full: Path) -> bool:
    """``full.is_file()``, ``False`` for a path the system cannot stat (``ENAMETOOLONG`` and the
    like, which ``Path.is_file`` raises)."""
    try:
        return full.is_file()
    except (OSError, ValueError):
        return False
