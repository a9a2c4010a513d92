"""The names of a workspace's indexes in the cache folder (``<slug>-<hash>``), and what a
start may know of its kept listing before it imports the rest of the workspace: this module
imports nothing of the sidecar (``dsh-search mcp`` asks it before its imports, ``cli/serving.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path
from typing import Final

#: Bytes of a kept listing's head read to learn its source (``state/columns.py``'s
#: ``MAX_HEAD_BYTES``: a longer head line is no head of ours).
HEAD_BYTES: Final = 4096
#: The suffix of a kept listing (``listingcache.py``).
LISTING_SUFFIX: Final = ".listing.bin"


def index_stem(root: Path) -> str:
    """``<slug>-<hash>``, the name every index of the workspace ``root`` starts with: slug = the
    folder name lower-cased to ``[a-z0-9-]``, hash = the first 12 hex digits of SHA-1 of the
    resolved root path's bytes (``os.fsencode``: a path that is not UTF-8 has one too)."""
    resolved = str(root.resolve())
    slug = re.sub(r"[^a-z0-9]+", "-", root.name.lower()).strip("-") or "workspace"
    return f"{slug}-{hashlib.sha1(os.fsencode(resolved)).hexdigest()[:12]}"


def cache_path(cache_dir: Path, root: Path) -> Path:
    """``<cache_dir>/<slug>-<hash>.json`` (:func:`index_stem`)."""
    return cache_dir / f"{index_stem(root)}.json"


def kept_listing_source(cache_dir: Path, root: Path) -> str | None:
    """The ``source`` the head of the listing kept for ``root`` names (``"git"``, ``"mtime"``),
    or ``None`` when there is none or its head cannot be read as one of this workspace's. A
    hint only, read without the listing's checks (``listingcache.py`` reads the whole file
    and refuses what this does not look at): what it may decide is whether git's scan is
    started before the imports, and a wrong hint only moves that scan (a forged head naming
    git makes the build run the scan itself, before ready). One regular file, not followed,
    at most :data:`HEAD_BYTES` read; never raises."""
    path = cache_path(cache_dir, root).with_suffix(LISTING_SUFFIX)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        line = os.read(fd, HEAD_BYTES + 1).split(b"\n", 1)
        if len(line) < 2:
            return None
        head = json.loads(line[0])
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)
    if not isinstance(head, dict) or head.get("root") != str(root.resolve()):
        return None
    source = head.get("source", "mtime")
    return source if isinstance(source, str) else None
