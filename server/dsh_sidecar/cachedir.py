"""The rebuildable caches (:func:`dsh_sidecar.paths.cache_home`): what is there, ``dsh-search
cache clean`` and ``dsh-search cache prune`` (standard library only).

Only files this program writes are ever deleted, recognised by name (:data:`INDEX_FILE` in
``workspace/``, :data:`DOCS_FILE` in ``docs/``), never by being in the folder: a
``DSH_CACHE_DIR`` pointed at ``/`` or at a home folder loses nothing but our own files.
Symbolic links are neither followed nor removed; folders are removed only when empty.

* **clean** removes every cache file (the next server rebuilds what it needs, like ``uv cache
  clean``); a running server keeps the index it has open (an unlinked SQLite file stays
  readable to whoever holds it) and writes a new one next time.
* **prune** removes what will not be used again (like ``uv cache prune``): the indexes of a
  workspace whose folder is gone (the symbol cache records its root), indexes not used for
  ``max_age_s`` (90 days by default), and the indexes older versions kept under
  ``$DSH_HOME/workspace/`` (:data:`dsh_sidecar.paths.LEGACY_INDEX`, never read since).
* **now and then** (:func:`prune_if_due`): a long-lived server prunes by itself at most once
  a day (:data:`AUTO_PRUNE_EVERY_S`, the time kept in :data:`PRUNE_STAMP`), after its
  workspace is ready, as Go trims its build cache: agents that work in throw-away checkouts
  leave an index per checkout, and nobody runs ``prune`` for them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import stat
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from dsh_sidecar.paths import DOCS_CACHE, LEGACY_INDEX, WORKSPACE_CACHE, cache_home, dsh_home

#: A workspace index file: ``<slug>-<12 hex>.json`` (symbol cache), ``.kinds.json`` (the
#: listing's kinds), ``.journal.json`` (the symbol cache's journal), ``.tables.bin`` (the suggester's
#: listing tables), ``.meant.bin`` (its missing-path tables), ``.listing.bin`` (the last verified listing), ``.listing-journal.json`` (its
#: journal) or ``.content.sqlite``, with their side files (SQLite's ``-wal``/``-shm``/
#: ``-journal``, the lock, a set-aside corrupt copy, an atomic write's temporary).
INDEX_FILE: Final = re.compile(
    r"^(?P<stem>[a-z0-9-]+-[0-9a-f]{12})(?P<kind>\.json|\.kinds\.json|\.journal\.json|\.tables\.bin|\.meant\.bin|\.listing\.bin|\.listing-journal\.json|\.content\.sqlite)"
    r"(?:-wal|-shm|-journal|\.lock|\.corrupt-\d+(?:-\d+)?)?$"
    r"|^\.(?P<tmpstem>[a-z0-9-]+-[0-9a-f]{12})(?:\.json|\.kinds\.json|\.journal\.json|\.tables\.bin|\.meant\.bin|\.listing\.bin|\.listing-journal\.json|\.content\.sqlite)"
    r"\.[A-Za-z0-9_]+\.tmp$"
)
#: An offline docs index file (:mod:`dsh_sidecar.router.localdocs`) and its side files.
DOCS_FILE: Final = re.compile(r"^docs\.sqlite(?:-wal|-shm|-journal|\.lock)?$|^docs\.sqlite\.[0-9]+\.tmp$")
#: The file whose modification time says when the cache was last pruned by a server.
PRUNE_STAMP: Final = ".last-prune"
_STAMP_FILE: Final = re.compile(f"^{re.escape(PRUNE_STAMP)}$")
#: How often a long-lived server prunes the cache by itself, seconds (a day).
AUTO_PRUNE_EVERY_S: Final = 86400.0
#: How far in the future a stamp may be and still count as recent, seconds (an hour, as Go's
#: build cache trim allows): further, it was set by a wrong clock and the cache is due.
STAMP_SKEW_S: Final = 3600.0
#: Default age after which ``prune`` removes an index nobody used, seconds (90 days).
DEFAULT_MAX_AGE_S: Final = 90 * 86400
#: Most entries a listing looks at (a huge or hostile folder stays bounded).
MAX_ENTRIES: Final = 100_000


@dataclass
class Removed:
    """What a clean or prune removed (or, ``dry_run``, would remove): paths and bytes."""

    paths: list[str] = field(default_factory=list)
    bytes: int = 0
    errors: list[str] = field(default_factory=list)

    def wire(self) -> dict[str, object]:
        return {"removed": self.paths, "bytes": self.bytes, "errors": self.errors}


def _files(folder: Path, pattern: re.Pattern[str]) -> Iterator[tuple[Path, os.stat_result]]:
    """Regular files directly in ``folder`` whose name matches ``pattern`` (no symlink, no
    recursion), with their ``lstat``; nothing when ``folder`` is missing or a symlink."""
    try:
        if stat.S_ISLNK(folder.lstat().st_mode):
            return
        with os.scandir(folder) as it:
            for n, entry in enumerate(it):
                if n >= MAX_ENTRIES:
                    return
                if not pattern.match(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    yield Path(entry.path), st
    except OSError:
        return


def _remove(path: Path, size: int, out: Removed, dry_run: bool) -> None:
    if not dry_run:
        try:
            path.unlink()
        except FileNotFoundError:
            return
        except OSError as exc:
            out.errors.append(f"{path}: {exc.strerror}")
            return
    out.paths.append(str(path))
    out.bytes += size


def _rmdir_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):
        folder.rmdir()


def usage(env: Mapping[str, str] | None = None) -> dict[str, object]:
    """``{dir, exists, bytes, files, parts: {workspace, docs}, legacy: {dir, bytes, files}}``:
    the cache directory, what our files there weigh, and the old indexes under
    ``$DSH_HOME/workspace`` that ``prune`` would remove."""
    root = cache_home(env)
    parts: dict[str, int] = {}
    total = files = 0
    for name, pattern in ((WORKSPACE_CACHE, INDEX_FILE), (DOCS_CACHE, DOCS_FILE)):
        size = 0
        for _path, st in _files(root / name, pattern):
            size += st.st_size
            files += 1
        parts[name] = size
        total += size
    legacy_dir = dsh_home(env) / WORKSPACE_CACHE
    legacy = [(p, st) for p, st in _files(legacy_dir, LEGACY_INDEX)]
    return {
        "dir": str(root),
        "exists": root.is_dir(),
        "bytes": total,
        "files": files,
        "parts": parts,
        "legacy": {"dir": str(legacy_dir), "bytes": sum(st.st_size for _, st in legacy), "files": len(legacy)},
    }


def clean(env: Mapping[str, str] | None = None, dry_run: bool = False) -> Removed:
    """Remove every cache file of ours (and the legacy indexes under ``$DSH_HOME``)."""
    out = Removed()
    root = cache_home(env)
    for name, pattern in ((WORKSPACE_CACHE, INDEX_FILE), (DOCS_CACHE, DOCS_FILE)):
        for path, st in list(_files(root / name, pattern)):
            _remove(path, st.st_size, out, dry_run)
        if not dry_run:
            _rmdir_if_empty(root / name)
    for path, st in list(_files(root, _STAMP_FILE)):
        _remove(path, st.st_size, out, dry_run)
    if not dry_run:
        _rmdir_if_empty(root)
    _prune_legacy(env, out, dry_run)
    return out


def _prune_legacy(env: Mapping[str, str] | None, out: Removed, dry_run: bool) -> None:
    for path, st in list(_files(dsh_home(env) / WORKSPACE_CACHE, LEGACY_INDEX)):
        _remove(path, st.st_size, out, dry_run)


#: Most bytes of a symbol cache read to find the workspace it belongs to.
_ROOT_PEEK_BYTES: Final = 4096
_ROOT_FIELD: Final = re.compile(r'"root"\s*:\s*("(?:[^"\\]|\\.)*")')


def _root_of(symbol_cache: Path) -> Path | None:
    """The workspace folder a symbol cache was built for (its ``root`` field, read from the
    document's head), or ``None`` when it cannot be told."""
    try:
        with open(symbol_cache, "rb") as f:
            head = f.read(_ROOT_PEEK_BYTES).decode("utf-8", "replace")
        m = _ROOT_FIELD.search(head)
        root = json.loads(m.group(1)) if m else None
    except (OSError, ValueError):
        return None
    return Path(root) if isinstance(root, str) and os.path.isabs(root) else None


def prune(
    env: Mapping[str, str] | None = None,
    max_age_s: float = DEFAULT_MAX_AGE_S,
    now: float | None = None,
    dry_run: bool = False,
) -> Removed:
    """Remove the indexes that will not be used again (see the module docstring): a
    workspace's whole group of files (``*-<hash>.*``: the hash is of its resolved root) goes
    together."""
    now = time.time() if now is None else now
    out = Removed()
    folder = cache_home(env) / WORKSPACE_CACHE
    groups: dict[str, list[tuple[Path, os.stat_result]]] = {}
    for path, st in _files(folder, INDEX_FILE):
        m = INDEX_FILE.match(path.name)
        assert m is not None
        stem = m.group("stem") or m.group("tmpstem")
        groups.setdefault(stem.rsplit("-", 1)[1], []).append((path, st))
    for members in groups.values():
        newest = max(st.st_mtime for _, st in members)
        roots = [_root_of(p) for p, _ in members if p.name.endswith(".json") and not p.name.startswith(".")]
        gone = any(r is not None and not r.is_dir() for r in roots)
        if gone or now - newest > max_age_s:
            for path, st in members:
                _remove(path, st.st_size, out, dry_run)
    docs = list(_files(cache_home(env) / DOCS_CACHE, DOCS_FILE))
    if docs and now - max(st.st_mtime for _, st in docs) > max_age_s:
        for path, st in docs:
            _remove(path, st.st_size, out, dry_run)
    _prune_legacy(env, out, dry_run)
    return out


def mark_used(env: Mapping[str, str] | None, digest: str, now: float | None = None) -> None:
    """Set the modification time of the workspace indexes ``*-<digest>.*`` to ``now``: an index a
    server has open is in use, though an unchanged tree rewrites none of its files, and
    :func:`prune` takes the newest modification time of a group for its last use."""
    now = time.time() if now is None else now
    for path, st in list(_files(cache_home(env) / WORKSPACE_CACHE, INDEX_FILE)):
        m = INDEX_FILE.match(path.name)
        if m is not None and (m.group("stem") or m.group("tmpstem")).rsplit("-", 1)[1] == digest and st.st_mtime < now:
            with contextlib.suppress(OSError):
                os.utime(path, (now, now), follow_symlinks=False)


def _due(st: os.stat_result, now: float) -> bool:
    """A regular stamp older than :data:`AUTO_PRUNE_EVERY_S`, or further in the future than a
    clock may drift (:data:`STAMP_SKEW_S`: a stamp set by a clock that was wrong must not stop
    pruning until the clock catches up)."""
    age = now - st.st_mtime
    return stat.S_ISREG(st.st_mode) and (age >= AUTO_PRUNE_EVERY_S or age < -STAMP_SKEW_S)


def prune_if_due(
    env: Mapping[str, str] | None = None, now: float | None = None, in_use: str | None = None
) -> Removed | None:
    """:func:`prune`, when the cache holds workspace indexes and was not pruned by a server in
    the last :data:`AUTO_PRUNE_EVERY_S` (``None``: not due). ``in_use``, the hash of the
    workspace the calling server has open, is marked used first (:func:`mark_used`), due or not.
    The stamp is claimed before pruning (created exclusively, or locked and looked at again), so
    the servers of a fleet starting together prune once, not each; a stamp that is a symlink or
    not a file is never followed or opened for writing and means "not due"."""
    now = time.time() if now is None else now
    if in_use:
        mark_used(env, in_use, now)
    root = cache_home(env)
    stamp = root / PRUNE_STAMP
    try:
        st: os.stat_result | None = stamp.lstat()
    except FileNotFoundError:
        st = None
    except OSError:
        return None
    if st is not None and not _due(st, now):
        return None
    if not (root / WORKSPACE_CACHE).is_dir():
        return None
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | (os.O_CREAT | os.O_EXCL if st is None else 0)
    try:
        fd = os.open(stamp, flags, 0o600)
    except OSError:  # another server created it first, or it changed since: not ours to prune
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if st is not None and not _due(os.fstat(fd), now):  # another server pruned meanwhile
            return None
        os.utime(fd, (now, now))
    except OSError:
        return None
    finally:
        os.close(fd)
    return prune(env, now=now)


#: The side files SQLite keeps beside a database (rollback journal, write-ahead log, its index).
SQLITE_SIDES: Final = ("-journal", "-wal", "-shm")


def _database_files(path: Path) -> list[Path]:
    return [path, *(Path(f"{path}{side}") for side in SQLITE_SIDES)]


def database_files_regular(path: Path) -> bool:
    """Whether the SQLite database ``path`` and each of its side files is a regular file or
    absent (``lstat``: a symbolic link is not). Checked before a cache database is opened: a
    FIFO there blocks a read-only open for good, a link makes SQLite read or write elsewhere."""
    for file in _database_files(path):
        try:
            mode = file.lstat().st_mode
        except FileNotFoundError:
            continue
        except OSError:
            return False
        if not stat.S_ISREG(mode):
            return False
    return True


def make_way_for_database(path: Path) -> list[str]:
    """Clear the way for the rebuildable SQLite database ``path``: each of it and its side files
    that is there but is not a regular file is removed — a FIFO, a socket, a device, a symbolic
    link (the link, never what it names) — or, a folder, renamed aside as
    ``<name>.corrupt-<seconds>`` (never deleted). What was done, one phrase each (for the
    caller's warning); ``[]`` when everything was in order."""
    done: list[str] = []
    for file in _database_files(path):
        try:
            mode = file.lstat().st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode):
            continue
        try:
            if stat.S_ISDIR(mode):
                aside = file.with_name(f"{file.name}.corrupt-{int(time.time())}")
                file.rename(aside)
                done.append(f"the folder {file.name} set aside as {aside.name}")
            else:
                file.unlink()
                done.append(f"{file.name} removed (not a regular file)")
        except OSError as exc:
            done.append(f"{file.name} left ({exc.strerror})")
    return done
