"""List a workspace's files: ``git ls-files`` where the folder is a git checkout, else a walk
that honours ``.gitignore`` (pathspec's gitwildmatch, matched by RE2: see :mod:`.wildmatch`) and
skips VCS and build folders."""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import Final

from dsh_sidecar.workspace import fsguard, recency
from dsh_sidecar.workspace.stats import FileStats
from dsh_sidecar.workspace.wildmatch import ignore_matcher, ignore_spec

log = logging.getLogger(__name__)

#: Most files listed for one workspace (a bigger tree is cut, with a warning upstream).
MAX_FILES: Final = 250_000
_S_IFMT, _S_IFLNK = stat.S_IFMT(0o177777), stat.S_IFLNK
#: Folders never walked (VCS metadata, dependency and build caches).
SKIP_DIRS: Final = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        "target",
        "dist",
        "build",
        ".dsh-cache",
    }
)
#: CPU seconds a walk may spend (its thread's: a busy machine slows the walk's wall clock, not
#: the work it does); past that the listing is cut (with a warning), like at MAX_FILES.
WALK_BUDGET_S: Final = 20.0
#: Wall-clock seconds after which a walk is cut whatever its CPU time (a stuck file system).
WALK_WALL_S: Final = 300.0
#: Largest ``.gitignore`` read, bytes.
MAX_IGNORE_BYTES: Final = 1_000_000


def _read_ignore(root: Path, prefix: str) -> list[str]:
    """The lines of the ``.gitignore`` in folder ``prefix`` (``""`` = the root; read through
    :mod:`.fsguard`), rewritten relative to the workspace root (a nested file's patterns apply
    below its folder: anchored ones at ``prefix``, others at any depth under it)."""
    try:
        raw = fsguard.read_text(root, prefix + ".gitignore", MAX_IGNORE_BYTES).splitlines()
    except OSError:
        return []
    if not prefix:
        return raw
    out: list[str] = []
    for line in raw:
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        neg = text.startswith("!")
        body = text[1:] if neg else text
        anchored = "/" in body.rstrip("/")
        body = prefix + body.lstrip("/") if anchored else prefix + "**/" + body
        out.append(("!" if neg else "") + body)
    return out


def _is_utf8(name: str) -> bool:
    """Whether a file name from ``os.scandir`` decodes as UTF-8 (undecodable bytes come back
    as lone surrogates, which every later step refuses: RE2, JSON, the ledger)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def walk_files(root: Path, *, mtimes: bool = False, stats: FileStats | None = None) -> list[tuple[str, float]]:
    """``(repo-relative POSIX path, mtime or 0.0)`` of every file under ``root``, honouring the
    root's and nested ``.gitignore`` files (pathspec's gitwildmatch) and skipping
    :data:`SKIP_DIRS`; unsorted, at most :data:`MAX_FILES`. Symlinked folders are not followed
    (each folder is opened ``O_NOFOLLOW``: one swapped for a symlink after it was listed is not
    walked either); files and folders whose names are not UTF-8 are left out. With ``mtimes``
    and ``stats`` (an empty :class:`~dsh_sidecar.workspace.stats.FileStats` over an empty
    list), each listed file and its stat are given to it, in the walk's order
    (``files`` and :meth:`~dsh_sidecar.workspace.stats.FileStats.extend`): the one ``lstat`` the mtime needs,
    made relative to the open folder (``fstatat``: no path walk from the root per file; a
    symlink is stat'ed once more, followed)."""
    out: list[tuple[str, float]] = []
    taken: list[os.stat_result | None] = []
    stack: list[_Pending] = [(str(root), "", [], None, None)]
    cpu0, wall0 = time.thread_time(), time.monotonic()
    try:
        while stack:
            if _spent(root, len(out), cpu0, wall0):
                return out
            folder, prefix, lines, ignored, listed_as = stack.pop()
            try:
                fd = os.open(folder, _DIR_FLAGS)
            except OSError:
                continue
            try:
                if listed_as is not None and _identity(os.fstat(fd)) != listed_as:
                    continue  # a folder on its path was swapped (for a symlink) since it was listed
                entries = list(os.scandir(fd))
                lines, ignored = _with_folder_ignores(root, prefix, entries, lines, ignored)
                if _walk_folder(folder, fd, prefix, entries, lines, ignored, stack, out, taken if mtimes else None):
                    return out
                if stats is not None and len(taken) >= _STATS_BATCH:  # columns, not 100k stat objects
                    stats.extend(taken)
                    taken.clear()
            except OSError:
                continue
            finally:
                os.close(fd)
        return out
    finally:
        if stats is not None and mtimes:
            stats.files.extend([rel for rel, _ in out])
            stats.extend(taken)


#: A folder still to walk: its path, its prefix, its ignore lines and matcher, and the device and
#: inode it was listed with (``None`` for the root). The path is opened from the root again, and
#: ``O_NOFOLLOW`` checks its last component only: a folder on the way swapped for a symlink
#: after it was listed would lead outside the workspace, so the folder opened must be the one listed.
_Pending = tuple[str, str, list[str], Callable[[str], bool] | None, tuple[int, int] | None]


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


#: Stats kept as objects before they go to the columns (each ``os.stat_result`` is ~200 bytes).
_STATS_BATCH: Final = 4096
#: How a walked folder is opened: a folder, never through a symlink, not inherited.
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _walk_folder(
    folder: str,
    fd: int,
    prefix: str,
    entries: list[os.DirEntry[str]],
    lines: list[str],
    ignored: Callable[[str], bool] | None,
    stack: list[_Pending],
    out: list[tuple[str, float]],
    taken: list[os.stat_result | None] | None,
) -> bool:
    """List the folder ``folder`` (open as ``fd``, its ``entries`` from ``os.scandir(fd)``, at
    ``prefix``): its files to ``out`` (their stats to ``taken`` when given), its walked folders
    onto ``stack``; ``True`` once :data:`MAX_FILES` files are listed. The entries are sorted
    out first (their types come from the folder's listing, ``d_type``: no system call), then
    the folder's files are stat'ed and listed together (C loops: ``map``, not a method call
    and an append or two a file)."""
    all_utf8 = _is_utf8("".join([e.name for e in entries]))  # one check for the folder
    found: list[os.DirEntry[str]] = []
    links = False  # a symlink among them (its stat is the file it points to, ``_stat_at``)
    for e in entries:
        name = e.name
        if not all_utf8 and not _is_utf8(name):
            continue  # a name that is not UTF-8 cannot be matched (RE2), shown or sent in JSON
        try:
            if e.is_dir(follow_symlinks=False):
                rel = prefix + name
                if _walked(name, rel, ignored):
                    # fstatat(fd, name): what opening it by its path must find again
                    listed_as = _identity(e.stat(follow_symlinks=False))
                    stack.append((folder + "/" + name, rel + "/", lines, ignored, listed_as))
                continue
            if ignored is not None and ignored(prefix + name):
                continue
            if e.is_file(follow_symlinks=False):
                found.append(e)
            elif e.is_symlink():  # (FIFOs, sockets and devices are not files of the project)
                target = _stat_at(fd, name)
                if target is not None and stat.S_ISDIR(target.st_mode):
                    continue  # a symlink to a folder: neither walked nor a file (a dangling one is)
                found.append(e)
                links = True
        except OSError:
            continue
    return _list_found(fd, prefix, found, links, out, taken)


def _list_found(
    fd: int,
    prefix: str,
    found: list[os.DirEntry[str]],
    links: bool,
    out: list[tuple[str, float]],
    taken: list[os.stat_result | None] | None,
) -> bool:
    """List the files ``found`` in the folder open as ``fd`` (at ``prefix``; ``links``: a
    symlink among them) as :func:`_walk_folder` does; ``True`` once :data:`MAX_FILES` files
    are listed."""
    if not found:
        return False
    room = MAX_FILES - len(out)
    if len(found) > room:
        found = found[:room]
    rels = [prefix + e.name for e in found]
    if taken is None:
        out.extend(zip(rels, repeat(0.0)))
        return len(out) >= MAX_FILES
    try:  # fstatat(fd, name): the folder is open
        stats: list[os.stat_result | None] = [e.stat(follow_symlinks=False) for e in found]
    except OSError:  # (rare: a file gone meanwhile)
        stats = [_lstat_or_none(e) for e in found]
    if links or None in stats or any(map(stat.S_ISLNK, map(_MODE, stats))):
        # a symlink's time is its own (the lstat's), its stat the file it points to
        mtimes = [0.0 if st is None else st.st_mtime for st in stats]
        for k, st in enumerate(stats):
            if st is None or st.st_mode & _S_IFMT == _S_IFLNK:
                stats[k] = _stat_at(fd, found[k].name)
    else:
        mtimes = list(map(_MTIME, stats))
    taken.extend(stats)
    out.extend(zip(rels, mtimes))
    return len(out) >= MAX_FILES


def _lstat_or_none(e: os.DirEntry[str]) -> os.stat_result | None:
    try:
        return e.stat(follow_symlinks=False)
    except OSError:
        return None


_MODE, _MTIME = attrgetter("st_mode"), attrgetter("st_mtime")


def _stat_at(fd: int, name: str) -> os.stat_result | None:
    """``stat`` of ``name`` in the open folder ``fd``, following a symlink; ``None`` when it
    fails (dangling, gone)."""
    try:
        return os.stat(name, dir_fd=fd)
    except (OSError, ValueError):
        return None


def _walked(name: str, rel: str, ignored: Callable[[str], bool] | None) -> bool:
    """Whether the folder ``name`` at ``rel`` is walked (not a skipped or ignored one)."""
    return name not in SKIP_DIRS and (ignored is None or not ignored(rel + "/"))


def _spent(root: Path, listed: int, cpu0: float, wall0: float) -> bool:
    """Whether a walk that started at ``cpu0`` (its thread's CPU clock) and ``wall0`` has used
    its budget (then it is cut, with a warning)."""
    if time.thread_time() - cpu0 > WALK_BUDGET_S or time.monotonic() - wall0 > WALK_WALL_S:
        cpu, wall = time.thread_time() - cpu0, time.monotonic() - wall0
        log.warning("walk of %s cut at %d files after %.0f s of CPU (%.0f s)", root, listed, cpu, wall)
        return True
    return False


def _with_folder_ignores(
    root: Path,
    prefix: str,
    entries: list[os.DirEntry[str]],
    lines: list[str],
    ignored: Callable[[str], bool] | None,
) -> tuple[list[str], Callable[[str], bool] | None]:
    """The ignore lines and matcher of the folder at ``prefix`` (its ``entries``): its parent's,
    plus its own ``.gitignore``'s lines when it has one."""
    for e in entries:
        if e.name == ".gitignore":
            extra = _read_ignore(root, prefix)
            if extra:
                lines = lines + extra
                with contextlib.suppress(Exception):  # a malformed .gitignore must not stop the listing
                    ignored = ignore_matcher(ignore_spec(lines))
            break
    return lines, ignored


def walk_ignores(root: Path, rel: str, folders: dict[str, tuple[list[str], Callable[[str], bool] | None]]) -> bool:
    """Whether :func:`walk_files` leaves the file ``rel`` out by its rules: a folder on its
    way in :data:`SKIP_DIRS` or ignored by the ``.gitignore`` files above it, or the file
    ignored by those of every folder it is under (the root's and nested ones, read as the walk
    reads them). ``folders``: each folder's lines and matcher so far, filled in for the
    caller's batch (its ``.gitignore`` files read once a batch)."""
    parts = rel.split("/")
    if any(part in SKIP_DIRS for part in parts[:-1]):
        return True
    lines: list[str] = []
    ignored: Callable[[str], bool] | None = None
    prefix = ""
    for i, part in enumerate(parts):
        if (known := folders.get(prefix)) is None:
            extra = _read_ignore(root, prefix)
            if extra:
                lines = lines + extra
                with contextlib.suppress(Exception):  # a malformed .gitignore must not stop it
                    ignored = ignore_matcher(ignore_spec(lines))
            known = folders[prefix] = (lines, ignored)
        lines, ignored = known
        if ignored is not None and ignored(prefix + part + ("/" if i < len(parts) - 1 else "")):
            return True
        prefix += part + "/"
    return False


def _walk_files(root: Path) -> list[str]:
    return [rel for rel, _ in walk_files(root)]


def list_files(root: Path) -> list[str]:
    """Repo-relative POSIX paths of the workspace's files, sorted; at most :data:`MAX_FILES`."""
    files = recency.git_files(root)
    if files is None:
        files = _walk_files(root)
    return sorted(set(files))[:MAX_FILES]


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
