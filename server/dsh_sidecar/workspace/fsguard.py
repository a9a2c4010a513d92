"""The one way the sidecar reads a workspace file: regular files inside the workspace only.

The workspace is untrusted (``docs/SECURITY.md``, class 2): a committed symlink
``x.py -> /proc/self/fd/0`` would make a plain ``open()`` read the sidecar's own stdin (the
JSON-RPC channel), a FIFO or a device blocks the reading thread forever, a symlink to
``/etc/…`` or ``~/.ssh/…`` reads outside the workspace. :func:`read_bytes` refuses all of those,
in this order, without ever blocking:

1. the path is repo-relative: no absolute path, no ``..`` segment, no NUL;
2. ``lstat`` (and ``stat`` when it says a link: following links; a loop is ``ELOOP``) says a
   **regular file** of at most
   ``max_bytes``: FIFOs, sockets, character/block devices and folders are refused *before* any
   ``open`` (opening some devices has effects of its own);
3. ``open(O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)``: should the file have been swapped for a
   FIFO since step 2, the open still returns at once. Where the kernel has ``openat2`` (Linux
   5.6+), the file is opened relative to a descriptor of the workspace's real root with
   ``RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS``: the kernel itself refuses, during the one
   resolution that opens the file, every path that would leave the root (an absolute symlink,
   ``..`` above it, a ``/proc`` magic link), so a symlink out of the workspace is never opened
   and no swap can come between the judgement and the open. A path whose ``lstat`` says no link
   is opened with ``RESOLVE_NO_SYMLINKS`` too: the kernel then also refuses any link on the way
   (a folder that is a link, a swap since the ``lstat``), so the file opened is the one its path
   spells, beneath the root, and step 5 has nothing left to judge. Such a refusal (or any other error)
   then takes the path below, which says why. Elsewhere (and on that path) it is first opened with
   ``O_PATH`` (which reads nothing) and that descriptor's real path judged as in step 5, so a
   symlink out of the workspace is refused before its target is opened for reading; the read
   descriptor is then that same inode, reopened through ``/proc/self/fd``;
4. ``fstat`` of the open descriptor: a regular file, and the same ``(st_dev, st_ino)`` as step 2
   (no swap in between);
5. the descriptor's real path (``/proc/self/fd/<n>``, the kernel's answer for the very inode
   opened; ``realpath`` where ``/proc`` is absent) lies inside the workspace's real path and not
   under ``/proc``, ``/sys`` or ``/dev``, nor in a ``.git`` folder unless the path itself names
   one, spelt ``.git`` (:func:`names_git_folder`): symlinks that stay inside are followed,
   symlinks that leave, or lead into git's own files (``notes.txt -> .git/config``), are
   refused (``openat2``'s ``RESOLVE_BENEATH`` is the
   first judgement made by the kernel during the open, so that path checks the last one only, for
   a link: with ``RESOLVE_NO_SYMLINKS`` there is none, and no ``/proc/self/fd`` is read);
6. at most ``max_bytes + 1`` bytes are read; more (the file grew) is refused.

A symlinked *folder* is never listed (not walked by ``files.walk_files``, left out of git's
listing by ``recency.listing``); a symlink to a file is listed, and step 5 judges it. Every refusal raises :class:`Refused`
(an ``OSError``, so existing ``except OSError`` paths treat it as unreadable) with a short
reason; :data:`REFUSED` counts refusals by reason for ``dsh/status`` and the tests.

Tests: ``tests/security/test_fs_guard.py`` (symlinks to ``/proc/self/fd/0``, a FIFO,
``/dev/zero``, loops, targets outside the workspace; FIFOs and sockets in the tree; the spawned
sidecar keeps answering and leaks no thread after many ``dsh/toolsChanged``).
"""

from __future__ import annotations

import collections
import errno
import functools
import os
import posixpath
import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Literal

from dsh_sidecar.capped import read_capped

#: Default largest workspace file read, bytes.
DEFAULT_MAX_BYTES: Final = 2 * 1024 * 1024
#: Real-path prefixes never read, whatever the workspace root (kernel pseudo file systems).
FORBIDDEN_PREFIXES: Final = ("/proc/", "/sys/", "/dev/")
_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
_HAVE_PROC_FD: Final = os.path.isdir("/proc/self/fd")
#: Linux's ``O_PATH``: a descriptor naming an inode without opening it for reading (no read
#: permission checked, no device or FIFO open semantics), whose real path can be judged first.
_O_PATH: Final = getattr(os, "O_PATH", 0)
#: How :class:`FolderReader` names a folder (``O_PATH``: nothing is opened for reading) and opens
#: a file in it: never through a symlink (the file's own name; the folder's path is resolved by
#: ``openat2`` with no symlink at all).
_FOLDER_FLAGS: Final = _O_PATH | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS: Final = _FLAGS | getattr(os, "O_NOFOLLOW", 0)

#: ``openat2``'s syscall number (the same on every Linux architecture: it came after the tables
#: were unified) and its ``resolve`` flags (``linux/openat2.h``).
_SYS_OPENAT2: Final = 437
_RESOLVE_NO_MAGICLINKS: Final = 0x02
_RESOLVE_NO_SYMLINKS: Final = 0x04
_RESOLVE_BENEATH: Final = 0x08
#: Most workspace roots whose directory descriptor is kept open (they are never closed: a
#: descriptor in use on another thread must never be reused for another file).
_MAX_ROOT_FDS: Final = 16

#: Refusals so far, by reason (process-wide; a diagnostic, never a decision input).
REFUSED: collections.Counter[str] = collections.Counter()
_refused_lock = threading.Lock()


class Refused(OSError):
    """A workspace path that is not read; ``reason`` is one of ``path``, ``not-regular``,
    ``too-large``, ``loop``, ``raced``, ``outside``, ``git-folder`` (a link into a ``.git``
    folder), ``pseudo-fs``."""

    def __init__(self, reason: str, rel: str) -> None:
        super().__init__(errno.EPERM, f"refused ({reason})", rel)
        self.reason = reason


def _refuse(reason: str, rel: str) -> Refused:
    with _refused_lock:
        REFUSED[reason] += 1
    return Refused(reason, rel)


@functools.lru_cache(maxsize=64)
def real_root(root: str) -> str:
    """The real path of a workspace root, with a trailing separator (cached per root)."""
    return os.path.join(os.path.realpath(root), "")


def relative(root: Path | str, path: Path | str) -> str | None:
    """``path`` (absolute under ``root``, or already relative) as a repo-relative POSIX path, or
    ``None`` when it is not under ``root`` lexically (no link is resolved)."""
    text = os.fspath(path)
    if os.path.isabs(text):
        base = os.path.join(os.path.abspath(os.fspath(root)), "")
        full = os.path.abspath(text)
        if not full.startswith(base):
            return None
        text = full[len(base) :]
    return text.replace(os.sep, "/")


def _check_rel(rel: str) -> None:
    if not rel or "\0" in rel or rel.startswith("/") or os.path.isabs(rel):
        raise _refuse("path", rel)
    if any(part == ".." for part in rel.replace(os.sep, "/").split("/")):
        raise _refuse("path", rel)


def _fd_path(fd: int, full: str) -> str:
    if _HAVE_PROC_FD:
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return os.path.realpath(full)


def in_git_folder(rel: str) -> bool:
    """Whether the repo-relative ``rel`` lies in a git folder (a ``.git`` part, any case, as
    ``recency._in_work_tree`` reads an index entry): git's own files, which no listing names."""
    return ".git" in rel.lower().split("/")


def names_git_folder(rel: str) -> bool:
    """Whether the repo-relative ``rel`` names a place in git's folder: a ``.git`` part, spelt
    so, of the normalised path (``./.git/config``, ``src/../.git/config`` and
    ``self/.git/config`` name it; ``.git/../src/a.py`` does not). On a case-sensitive file
    system ``.GIT`` is a folder like any other, which the walk lists and git lists as untracked:
    a link in it into ``.git`` is a link into git's folder (:func:`_verdict`)."""
    return ".git" in posixpath.normpath(rel).split("/")


def spells_git_file(real_rel: str, rel: str) -> bool:
    """Whether ``rel`` reaches the place in git's folder it resolves to (``real_rel``, relative to
    the workspace's real root) by its own spelling: it names git's folder and, normalised, is
    that very path (git's own reads: ``.git/HEAD``, ``./.git/config``). A spelling that gets
    there through a link on the way (``self/.git/config`` with ``self -> .``) or as a link
    (``notes -> .git/config``) does not: it is a link into git's folder (:func:`_verdict`)."""
    return names_git_folder(rel) and posixpath.normpath(rel) == real_rel.replace(os.sep, "/")


@functools.lru_cache(maxsize=64)
def git_folder_elsewhere(base: str) -> str:
    """Where the workspace's git folder really is, relative to its real root ``base`` and with a
    trailing ``/``, when its ``.git`` is a link to a folder elsewhere in the tree or a ``gitdir:``
    pointer to one (``.git -> meta/repo.git``, ``git init --separate-git-dir meta/repo.git``):
    git's own files under a name with no ``.git`` part, which git lists as untracked. ``""``
    when there is none (a ``.git`` folder, a pointer out of the tree or into a ``.git`` folder:
    the other rules cover those). Read once a root (a ``.git`` changed later is not seen)."""
    dot = base + ".git"
    try:
        mode = os.lstat(dot).st_mode
        if stat.S_ISLNK(mode):
            target = os.path.realpath(dot)
        elif stat.S_ISREG(mode):
            with open(dot, "rb") as f:  # a pointer is one short line
                line = f.read(4096).split(b"\n", 1)[0].decode("utf-8").strip()
            if not line.startswith("gitdir:"):
                return ""
            target = os.path.realpath(os.path.join(base, line[len("gitdir:") :].strip()))
        else:
            return ""
    except (OSError, ValueError):
        return ""
    target = os.path.join(target, "")
    if not target.startswith(base) or target == base or in_git_folder(target[len(base) :]):
        return ""
    return target[len(base) :].replace(os.sep, "/")


def _in_git_elsewhere(real_rel: str, rel: str, elsewhere: str) -> bool:
    """Whether ``real_rel`` lies in the git folder at ``elsewhere`` (:func:`git_folder_elsewhere`)
    through a link: not spelt as it is, nor through the root's ``.git`` (git's own reads)."""
    if not elsewhere:
        return False  # (nearly every workspace)
    real_rel = real_rel.replace(os.sep, "/")
    if not (real_rel + "/").startswith(elsewhere):
        return False
    spelt = posixpath.normpath(rel)  # git's own reads: the real spelling, or through the root's .git
    return spelt != real_rel and spelt != posixpath.join(".git", real_rel[len(elsewhere) :]).rstrip("/")


def _names_git_elsewhere(root: Path | str, rel: str) -> bool:
    """Whether ``rel``, normalised, lies in the git folder elsewhere in the tree (named by no
    surface, however spelt, as ``.git`` is)."""
    elsewhere = git_folder_elsewhere(real_root(os.fspath(root)))
    return bool(elsewhere) and (posixpath.normpath(rel) + "/").startswith(elsewhere)


def _verdict(real: str, base: str, rel: str) -> str | None:
    """Why the real path ``real`` of ``rel`` is not read (``None``: it is): the workspace rule."""
    if real.startswith(FORBIDDEN_PREFIXES):
        return "pseudo-fs"
    if not real.startswith(base):
        return "outside"
    real_rel = real[len(base) :]
    if in_git_folder(real_rel) and not spells_git_file(real_rel, rel):  # a link into .git (git's config)
        return "git-folder"
    if _in_git_elsewhere(real_rel, rel, git_folder_elsewhere(base)):  # .git -> meta/repo.git
        return "git-folder"
    return None


def _judge(real: str, base: str, rel: str) -> None:
    if (reason := _verdict(real, base, rel)) is not None:
        raise _refuse(reason, rel)


def resolves_inside(root: Path | str, rel: str) -> bool:
    """Whether the workspace path ``rel`` resolves where :func:`read_bytes` reads, outside git's
    folders: inside the workspace's real root, not naming a git folder however spelt
    (:func:`names_git_folder`: ``./.git/config``, ``self/.git/config``; a traceback frame or a
    free-text path is no listing's), and not resolving into one (a symlink out of the tree,
    ``x.py -> /etc/passwd``, or into ``.git``, ``notes -> .git/config``). What a surface may name (a
    listing names file links, whose reading this judges): the task lead's files, the
    suggester's targets. Nothing is opened (a missing path resolves as spelt; whether it is
    there is the caller's question); a name the file system cannot take is not inside."""
    if not rel or "\0" in rel or os.path.isabs(rel) or ".." in rel.split("/") or names_git_folder(rel):
        return False  # git's own files are named by no surface, however spelt
    if _names_git_elsewhere(root, rel):
        return False
    try:
        real = os.path.realpath(os.path.join(os.fspath(root), rel))
    except (OSError, ValueError):  # a name the file system cannot take (a lone surrogate)
        return False
    return _verdict(real, real_root(os.fspath(root)), rel) is None


def resolves_inside_now(root: Path | str, rel: str) -> bool:
    """:func:`resolves_inside`, asked of a path about to be named: a path that the kernel
    resolves beneath the root with no symlink on the way (one ``openat2`` of an ``O_PATH``
    descriptor, nothing opened for reading) is where it is spelt, so inside and, naming no git
    folder, outside them; anything else (a link on the way, a missing path, no ``openat2``) is
    judged by :func:`resolves_inside` itself. One system call instead of ``realpath``'s
    ``lstat`` a part (bench/named_now.py)."""
    if not rel or "\0" in rel or os.path.isabs(rel) or ".." in rel.split("/") or names_git_folder(rel):
        return False
    try:
        fd = _OPENAT2.spelt(real_root(os.fspath(root)), rel)
    except (OSError, ValueError):  # a name the file system cannot take
        return False
    if fd is not None:
        os.close(fd)  # spelt with no link on the way: the spelling is the real path
        return not _names_git_elsewhere(root, rel)
    return resolves_inside(root, rel)


class _Openat2:
    """``openat2(2)`` through ``ctypes`` (the standard library has no binding), loaded on first
    use; :attr:`usable` turns false for good when the kernel (or a seccomp filter) lacks it."""

    def __init__(self) -> None:
        self.usable = sys.platform.startswith("linux") and bool(_O_PATH)
        self._call: Callable[..., int] | None = None
        #: the ``open_how`` of each way to open (:meth:`_beneath`): a reference, its size, the
        #: errno reader and the structure the reference points into (kept alive)
        self._hows: dict[str, tuple[Any, int, Callable[[], int], Any]] = {}
        self._roots: dict[str, int] = {}
        self._lock = threading.Lock()

    def _load(self) -> bool:
        try:
            import ctypes

            class OpenHow(ctypes.Structure):
                _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

            libc = ctypes.CDLL(None, use_errno=True)
            call = libc.syscall
            call.restype = ctypes.c_long
            call.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
            beneath = _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS
            for name, flags, resolve in (
                ("file", _FLAGS, beneath),
                ("plain", _FLAGS, beneath | _RESOLVE_NO_SYMLINKS),
                ("folder", _FOLDER_FLAGS, beneath | _RESOLVE_NO_SYMLINKS),
                ("spelt", _O_PATH | getattr(os, "O_CLOEXEC", 0), beneath | _RESOLVE_NO_SYMLINKS),
            ):
                how = OpenHow(flags, 0, resolve)
                self._hows[name] = (ctypes.byref(how), ctypes.sizeof(how), ctypes.get_errno, how)
            self._call = call
            return True
        except Exception:  # no libc symbol, no ctypes: the O_PATH path
            self.usable = False
            return False

    def _root_fd(self, base: str) -> int | None:
        fd = self._roots.get(base)
        if fd is not None:
            return fd
        with self._lock:
            fd = self._roots.get(base)
            if fd is None:
                fd = os.open(base, _O_PATH | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
                if len(self._roots) >= _MAX_ROOT_FDS:
                    return fd  # not kept: the caller closes it (see _open_beneath)
                self._roots[base] = fd
        return fd

    def open(self, base: str, rel: str, *, plain: bool = False) -> int | None:
        """A read descriptor of ``rel`` resolved beneath the real root ``base``, or ``None``
        (refused by the kernel, missing, or ``openat2`` unavailable: take the O_PATH path);
        ``plain``: with no symlink anywhere on the way (``RESOLVE_NO_SYMLINKS``: a link refused)."""
        return self._beneath(base, rel, how="plain" if plain else "file")

    def open_folder(self, base: str, rel: str) -> int | None:
        """An ``O_PATH`` descriptor of the folder ``rel`` (``""``: the root) resolved beneath the
        real root ``base`` with no symlink on the way (``RESOLVE_NO_SYMLINKS``), or ``None``
        (refused, missing, or ``openat2`` unavailable). The caller closes it."""
        return self._beneath(base, rel or ".", how="folder")

    def spelt(self, base: str, rel: str) -> int | None:
        """An ``O_PATH`` descriptor of ``rel`` (whatever it is: nothing is opened for reading)
        resolved beneath the real root ``base`` with no symlink on the way, or ``None`` (a link
        on the way, missing, or ``openat2`` unavailable). The caller closes it."""
        return self._beneath(base, rel, how="spelt")

    def _beneath(self, base: str, rel: str, *, how: Literal["file", "plain", "folder", "spelt"]) -> int | None:
        """``openat2`` of ``rel`` beneath the real root ``base``, as a file to read (``plain``:
        with no symlink on the way) or an ``O_PATH`` folder (``spelt``: anything, nothing opened
        for reading) with no symlink on the way; ``None``
        when refused, missing or unavailable (a kernel without the call, or a seccomp filter
        refusing it, turns it off for the process)."""
        if not self.usable or (self._call is None and not self._load()):
            return None
        assert self._call is not None
        try:
            root_fd = self._root_fd(base)
        except OSError:
            return None
        if root_fd is None:
            return None
        ref, size, get_errno, _ = self._hows[how]
        try:
            fd = self._call(_SYS_OPENAT2, root_fd, os.fsencode(rel), ref, size)
            err = get_errno() if fd < 0 else 0
        finally:
            if self._roots.get(base) != root_fd:
                os.close(root_fd)
        if fd >= 0:
            return fd
        if err in (errno.ENOSYS, errno.EPERM):  # no openat2 in this kernel, or a seccomp filter
            self.usable = False
        return None


_OPENAT2: Final = _Openat2()

#: Folder descriptors a :class:`FolderReader` keeps open (the most recently used).
_READER_FOLDERS: Final = 16


class FolderReader:
    """Reads many files of one workspace, the way :func:`read_or_none` does, for a pass over a
    listing (the content index, the symbol pass): each folder is named once (an ``O_PATH``
    descriptor that ``openat2`` resolved beneath the real root with no symlink on the way, so it
    is inside the workspace), and each file in it is taken relative to that descriptor: ``stat``
    of the name (``fstatat``, no symlink followed) says a regular file of at most ``max_bytes``
    before anything is opened; ``open`` of the name with ``O_NOFOLLOW`` (and :data:`_FLAGS`);
    ``fstat`` says the same ``(st_dev, st_ino)``; one bounded read sized by that stat
    (``read_capped``). No path is walked from the root a file and no ``ctypes`` call is made a
    file: 5 cheap system calls instead of a path ``stat``, an ``openat2`` through ``ctypes``, an
    ``fstat``, a 1 MiB read buffer and a close (12 → 5 µs a file on the 100k-file tree).

    Anything else (a symlink, which :func:`read_bytes` follows when it stays inside; a file that is
    not regular, too large, missing or swapped; a folder ``openat2`` refuses or no ``openat2``)
    is handed to :func:`read_or_none` itself, so the answer for every path is the one it gives,
    with its refusals counted the same way. A folder descriptor names the folder it was opened
    on: the file names are resolved in that folder, never through a symlink. Use it from one
    thread, and close it (``with``)."""

    def __init__(self, root: Path | str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._base = real_root(os.fspath(root))
        self._usable = bool(_O_PATH) and _OPENAT2.usable
        self._folders: dict[str, int] = {}
        #: the folder of the last file read and its descriptor (the newest in ``_folders``): a
        #: pass reads a folder's files one after the other, and they skip the dictionary's reorder
        self._last: tuple[str, int] | None = None

    def __enter__(self) -> FolderReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the folder descriptors."""
        folders, self._folders, self._last = self._folders, {}, None
        for fd in folders.values():
            os.close(fd)

    def _folder(self, rel: str) -> int | None:
        last = self._last
        if last is not None and last[0] == rel:
            return last[1]  # already the most recently used
        fd = self._folders.pop(rel, None)
        if fd is None:
            fd = _OPENAT2.open_folder(self._base, rel)
            if fd is None:
                self._usable = _OPENAT2.usable
                return None
            if len(self._folders) >= _READER_FOLDERS:
                os.close(self._folders.pop(next(iter(self._folders))))
        self._folders[rel] = fd  # the most recently used last
        self._last = (rel, fd)
        return fd

    def read(self, rel: str, head: int | None = None) -> bytes | None:
        """:func:`read_or_none` of ``rel`` (repo-relative POSIX path) with :attr:`max_bytes`;
        with ``head``, only its first ``head`` bytes are read and returned (a file over
        :attr:`max_bytes` is still refused, by its size): a pass that looks at a file's head
        reads no more of it."""
        data = self._read(rel, head)
        if data is False:  # anything but a regular file named in an open folder: read_bytes judges it
            data = read_or_none(self.root, rel, self.max_bytes)
        return data[:head] if data is not None and head is not None else data

    def _read(self, rel: str, head: int | None) -> bytes | Literal[False] | None:
        """The bytes (or head) of ``rel`` read in its folder, ``None`` when refused as too
        large, ``False`` for everything :func:`read_or_none` is to judge."""
        if _names_git_elsewhere(self._base, rel):
            return None  # git's folder under another name: no pass reads it (gitguard's pre-read does)
        if not self._usable or not rel or "\0" in rel or rel.startswith("/") or ".." in rel or "//" in rel:
            return False
        folder, _, name = rel.rpartition("/")
        dfd = self._folder(folder)
        if dfd is None or not name:
            return False
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except (OSError, ValueError):
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_size > self.max_bytes:
            return False
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dfd)
        except OSError:
            return False
        try:
            fst = os.fstat(fd)
            if not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
                return False  # swapped since the stat: read_bytes judges what is there now
            if head is not None and head < fst.st_size:
                return _read_head(fd, head)
            data = read_capped(fd, self.max_bytes, fst.st_size)
            if data is None:
                with _refused_lock:
                    REFUSED["too-large"] += 1
            return data
        except OSError:
            return False
        finally:
            os.close(fd)


def _read_head(fd: int, head: int) -> bytes:
    """The first ``head`` bytes of the open file ``fd`` (fewer at its end)."""
    chunks: list[bytes] = []
    size = 0
    while size < head:
        chunk = os.read(fd, head - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _open_inside(full: str, base: str, rel: str) -> int:
    """A read descriptor (:data:`_FLAGS`) of ``full``; where Linux has ``O_PATH`` and
    ``/proc/self/fd``, the inode is first named with ``O_PATH`` and its real path judged
    (:func:`_judge`), then that same inode reopened through ``/proc/self/fd``: a symlink leaving
    the workspace (``x.py -> /etc/passwd``) is refused before the file is ever opened for reading,
    and no swap can happen between the judgement and the open."""
    if not (_O_PATH and _HAVE_PROC_FD):
        return os.open(full, _FLAGS)
    pfd = os.open(full, _O_PATH | getattr(os, "O_CLOEXEC", 0))
    try:
        _judge(os.readlink(f"/proc/self/fd/{pfd}"), base, rel)
        return os.open(f"/proc/self/fd/{pfd}", _FLAGS)
    finally:
        os.close(pfd)


def read_bytes(root: Path | str, rel: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of the workspace file ``rel`` (repo-relative POSIX path) under ``root``.

    Rules in the module docstring. Raises :class:`Refused` (an ``OSError``) for a path that is
    not a regular file inside the workspace or is larger than ``max_bytes``, and ``OSError``
    for a missing or unreadable one. Never blocks on a FIFO, socket or device."""
    _check_rel(rel)
    base = real_root(os.fspath(root))
    full = os.path.join(os.fspath(root), rel)
    try:
        st = os.lstat(full)
        link = stat.S_ISLNK(st.st_mode)
        if link:  # the last component is a link: what it names is judged
            st = os.stat(full)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse("loop", rel) from None
        raise
    if not stat.S_ISREG(st.st_mode):
        raise _refuse("not-regular", rel)
    if st.st_size > max_bytes:
        raise _refuse("too-large", rel)
    # the kernel judges it beneath the root (module docstring); not a link: with no link on the
    # way either (a folder on the way that is a link, or a swap since the lstat, is refused)
    fd = _OPENAT2.open(base, rel, plain=not link)
    beneath = fd is not None
    judged = beneath and not link  # no link followed: its real path is the root's and rel's
    if fd is None:
        try:
            fd = _open_inside(full, base, rel)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refuse("loop", rel) from None
            raise
    try:
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
            raise _refuse("raced", rel)
        # beneath, no link followed: the kernel judged it; a link (beneath or not) is judged here
        if not judged:
            _judge(_fd_path(fd, full), base, rel)
        data = read_capped(fd, max_bytes, fst.st_size)
        if data is None:
            raise _refuse("too-large", rel)
        return data
    finally:
        os.close(fd)


def read_text(root: Path | str, rel: str, max_bytes: int = DEFAULT_MAX_BYTES, errors: str = "replace") -> str:
    """:func:`read_bytes` decoded as UTF-8 (``errors`` as for ``bytes.decode``); same errors,
    plus ``UnicodeDecodeError`` with ``errors="strict"``."""
    return read_bytes(root, rel, max_bytes).decode("utf-8", errors)


def read_or_none(root: Path | str, rel: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes | None:
    """:func:`read_bytes`, or ``None`` for anything it refuses or cannot read."""
    try:
        return read_bytes(root, rel, max_bytes)
    except OSError:
        return None


def root_refusal(root: Path | str | None, home: str | None = None) -> str | None:
    """Why ``root`` is refused as a workspace (``None``: accepted). Refused: a filesystem root
    (``/``), a kernel pseudo file system (``/proc``, ``/sys``, ``/dev``), the user's home folder
    (``home``, default ``$HOME`` / ``~``) or one of its ancestors (``/home``): listing and indexing
    those would walk the whole machine or every project of the user (docs/SECURITY.md, class 7). The
    message names the folder and what to do."""
    if root is None:
        return None
    real = os.path.realpath(os.fspath(root))
    homes = {os.path.realpath(h) for h in (home, os.environ.get("HOME"), os.path.expanduser("~")) if h}
    if os.path.dirname(real) == real:
        why = "is a filesystem root"
    elif real.startswith(FORBIDDEN_PREFIXES) or real in ("/proc", "/sys", "/dev"):
        why = "is a kernel pseudo file system"
    elif real in homes:
        why = "is the home folder"
    elif any(h.startswith(os.path.join(real, "")) for h in homes):
        why = "contains the home folder"
    else:
        return None
    return f"workspace {real} {why}: not indexed (open a project folder instead); the suggester is off for it"
