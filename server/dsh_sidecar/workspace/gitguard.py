"""What makes the sidecar refuse to run ``git`` in a workspace at all: files git would open on
every command and block on, or read for us from outside the workspace (``docs/SECURITY.md``,
class 1; how git is run when it may: :mod:`dsh_sidecar.workspace.gitcmd`).

* :func:`include_refusal` — the repository's config and what its ``[include]``/``[includeIf]``
  paths name (resolved as the kernel resolves git's, ``stat``-ed, never opened): a FIFO, device,
  socket or folder, a file outside the workspace and the git folders, an oversized or
  over-deep chain; and a git folder holding a FIFO or device where git opens ``config``,
  ``HEAD``, ``index``….
* :func:`worktree_refusal` — a ``.gitignore``/``.gitattributes`` in the work tree that git would
  block on, or a tree past :data:`MAX_WORKTREE_ENTRIES` entries.
* :func:`can_list` — a checkout with nothing of the above: git may list and check it.
* :func:`listing_refusal` — a listing of the checkout (git's answer, or one kept from an earlier
  session) longer than its index's head says git can list (:func:`index_entries`).

Every check reads metadata only and never raises; a refusal is a sentence naming the path.
"""

from __future__ import annotations

import collections
import logging
import os
import stat
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Final

from dsh_sidecar.workspace import fsguard, gitconfig

log = logging.getLogger(__name__)


def is_checkout(root: Path) -> bool:
    """Whether ``root/.git`` exists (a folder, or a ``gitdir:`` file); never follows more."""
    try:
        os.lstat(root / ".git")
    except OSError:
        return False
    return True


#: Largest config file :func:`include_refusal` reads (a larger one is refused, not skipped).
MAX_CONFIG_BYTES: Final = 1 << 20
#: Deepest ``[include]`` chain followed by :func:`include_refusal` (git's own limit is 10).
MAX_INCLUDE_DEPTH: Final = 10
#: Most include paths :func:`include_refusal` examines in all (more is a refusal: a real
#: configuration has a handful; a hostile one could make each file include the others).
MAX_INCLUDES: Final = 1000
#: Most bytes of config text :func:`include_refusal` reads in all (more is a refusal: each
#: megabyte costs a fraction of a second to read, and a thousand included files would be minutes).
MAX_CONFIG_TOTAL_BYTES: Final = 2 * MAX_CONFIG_BYTES


def _include_paths(text: str) -> list[str]:
    """The ``path`` values of the ``[include]``/``[includeIf "…"]`` sections of a git config
    text (git-config(1) "Includes"; read as git reads them: ``workspace/gitconfig.py``)."""
    return [
        e.value
        for e in gitconfig.entries(text)
        if e.section in ("include", "includeif") and e.key == "path" and e.value
    ]


def _physical(path: str, hops: int = 40, steps: int = 4096) -> str | None:
    """The absolute ``path`` as the kernel resolves it: each symlink read (``readlink``) and
    followed, ``..`` after a link taken from the link target's parent, as ``open`` does; no
    file is opened. ``None`` when the walk passes ``/proc``, ``/sys`` or ``/dev`` (what git
    would open there is its own: ``/proc/self/cwd`` is its working folder, ``/dev/stdout`` its
    output pipe, which this process cannot ``stat`` for it), follows more than ``hops`` links
    (the kernel's ``ELOOP`` bound) or takes more than ``steps`` components (a bound on the
    ``readlink`` calls: a real path has a few dozen)."""
    todo = path.split("/")[::-1]
    cur = ""
    while todo:
        steps -= 1
        if steps < 0:
            return None
        part = todo.pop()
        if part in ("", "."):
            continue
        if part == "..":
            cur = cur.rpartition("/")[0]
            continue
        nxt = f"{cur}/{part}"
        if (nxt + "/").startswith(fsguard.FORBIDDEN_PREFIXES):
            return None
        try:
            link = os.readlink(nxt)
        except OSError:  # not a link, or missing (the stat that follows says so)
            cur = nxt
            continue
        hops -= 1
        if hops < 0:
            return None
        todo.extend(link.split("/")[::-1])
        if link.startswith("/"):
            cur = ""
    return cur or "/"


#: Most entries of a git folder :func:`_special_entry` looks at (its own files come first; past
#: the bound the rest, loose objects mostly, is left to git's timeout).
MAX_GIT_DIR_ENTRIES: Final = 20_000


def _blocking_entry(start: str, limit: int, checked: Callable[[str], bool], skip: str = "") -> tuple[str, str] | None:
    """The first entry under the folder ``start`` (breadth first; folder links not walked; an
    entry named ``skip`` neither looked at nor walked) whose name ``checked`` accepts and that
    git could block on: ``(path, "special")`` for a FIFO or a device once its links are
    followed, ``(path, "link")`` for a link through ``/proc``, ``/sys`` or ``/dev`` (or past 256
    components: a bound on the work per link); ``("", "bound")`` once more than ``limit``
    entries were looked at without one; ``None`` when there is none. Nothing is opened."""
    todo = collections.deque([start])
    count = 0
    while todo:
        try:
            with os.scandir(todo.popleft()) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            count += 1
            if count > limit:
                return "", "bound"
            if entry.name == skip:
                continue
            if not checked(entry.name):
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                continue
            target = _physical(entry.path, steps=256) if entry.is_symlink() else entry.path
            if target is None:
                return entry.path, "link"
            try:
                mode = os.stat(target).st_mode
            except OSError:
                continue  # a dangling link: git finds nothing there
            if stat.S_ISDIR(mode):
                if not entry.is_symlink():
                    todo.append(entry.path)
            elif stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                return entry.path, "special"  # (a socket, git's fsmonitor daemon's, fails to open at once)
    return None


def _special_entry(real_base: str, git_dir: str) -> str | None:
    """The first entry of the git folder ``git_dir`` (at most :data:`MAX_GIT_DIR_ENTRIES`) that
    git could block on (:func:`_blocking_entry`); ``None`` when there is none, or when the
    folder is not inside the workspace (not read)."""
    real = _physical(git_dir)
    if real is None or fsguard.relative(real_base, real) is None:
        return None
    hit = _blocking_entry(real, MAX_GIT_DIR_ENTRIES, lambda _name: True)
    return hit[0] if hit is not None and hit[1] != "bound" else None  # past the bound: git's timeout


def _commondir(real_base: str, git_dir: str) -> str | None:
    """The common folder git uses for ``git_dir`` when it holds a ``commondir`` file (a linked
    worktree's git folder, gitrepository-layout(5); relative to ``git_dir``), else ``None``; the
    file is read only inside the workspace."""
    real = _physical(os.path.join(git_dir, "commondir"))
    inner = fsguard.relative(real_base, real) if real is not None else None
    raw = fsguard.read_or_none(real_base, inner, 4096) if inner is not None else None
    named = raw.decode("utf-8", "surrogateescape").strip() if raw is not None else ""
    return os.path.join(git_dir, named) if named else None


def include_refusal(root: Path) -> str | None:
    """Why git must not be run in ``root`` because of what its config includes, else ``None``.

    Git opens every ``[include]``/``[includeIf]`` ``path`` while it reads its config, for any
    command: a FIFO (or device, socket, folder) named there would block or fail each git run
    until its timeout. The repository's ``config`` and ``config.worktree`` are read (guarded,
    inside the workspace only: the ``.git`` folder, or the folder a ``gitdir:`` file names when
    it is inside the workspace, and the ``config`` of the common folder its ``commondir`` file
    names; a config file git reads through ``/proc``, ``/sys`` or ``/dev`` is refused). Those
    git folders are scanned first (:func:`_special_entry`): git opens ``config``, ``HEAD``,
    ``index``, ``packed-refs``… on every command, and one that is a FIFO blocks it just the
    same. Each included path is resolved as the kernel resolves git's (:func:`_physical`) and
    ``stat``-ed, never opened: one that exists and is no regular file, or is a regular file
    outside both the workspace and the git folders (``~/.aws/credentials``, ``/etc/shadow``: git
    would read it for us), is a refusal; a regular file inside the workspace has its own includes
    followed, breadth first so each file at its shallowest
    depth, up to :data:`MAX_INCLUDE_DEPTH` deep; a config file over :data:`MAX_CONFIG_BYTES` is
    itself a refusal). Paths are expanded as git's ``interpolate_path``: ``~/`` is the user's
    home, ``~user/`` that user's, a relative path is relative to the folder of the including
    file as git names it (git-config(1) "Includes"); a ``%(prefix)/`` path (git's install
    prefix) and one through ``/proc``, ``/sys`` or ``/dev`` are refused. Never raises."""
    try:
        return _include_refusal(root)
    except Exception:  # a pre-check never fails the caller: git's own timeout still bounds it
        log.debug("git include pre-check failed", exc_info=True)
    return None


def _include_refusal(root: Path) -> str | None:
    """:func:`include_refusal`, which may raise."""
    base = os.path.abspath(root)
    real_base = fsguard.real_root(base)
    git_dir = _repository_git_dir(root, base)
    if git_dir is None:
        return None
    # (the path git names a config file by, depth); read where it physically is
    queue = collections.deque([(os.path.join(git_dir, "config"), 0), (os.path.join(git_dir, "config.worktree"), 0)])
    common = _commondir(real_base, git_dir)
    if common is not None:  # a worktree's git folder: git reads the common folder's config
        queue.appendleft((os.path.join(common, "config"), 0))
    for folder in dict.fromkeys(f for f in (git_dir, common) if f is not None):
        special = _special_entry(real_base, folder)
        if special is not None:
            return f"repository git folder holds a FIFO or device ({special})"
    # where an included file may be: the workspace, and the git folders git reads it from
    # (a linked worktree's are outside it: they are the repository's own)
    allowed = [real_base, *(p for p in (_physical(f) for f in (git_dir, common) if f is not None) if p)]
    return _walk_includes(real_base, queue, allowed)


def _repository_git_dir(root: Path, base: str) -> str | None:
    """The repository's git folder: ``.git``, or the folder a ``gitdir:`` file names (a
    submodule, ``--separate-git-dir``); ``None`` when there is neither."""
    git_dir = os.path.join(base, ".git")
    if os.path.isdir(git_dir):
        return git_dir
    # a `gitdir: <folder>` file: its config is pre-read when that folder is inside the
    # workspace; one outside is not read
    raw = fsguard.read_or_none(root, ".git", 4096)
    text = raw.decode("utf-8", "replace").strip() if raw is not None else ""
    if not text.startswith("gitdir:"):
        return None
    return os.path.join(base, text[len("gitdir:") :].strip())


def _walk_includes(real_base: str, queue: collections.deque[tuple[str, int]], allowed: list[str]) -> str | None:
    """Follow the config files in ``queue`` and what they include, breadth first (the bounds
    and refusals of :func:`include_refusal`); the first refusal, else ``None``."""
    seen: set[tuple[str, str]] = set()
    examined = total = 0
    while queue:
        named, depth = queue.popleft()
        real = _physical(named)
        if real is None:
            return f"repository config is read through /proc, /sys or /dev, or past 40 links ({named})"
        inner = fsguard.relative(real_base, real)
        # the folder its relative includes resolve from, as the kernel resolves it: one
        # file named in many spellings (`./x`, `././x`) is read once
        key = (real, _physical(os.path.dirname(named)) or "")
        if inner is None or key in seen or depth > MAX_INCLUDE_DEPTH:
            continue  # outside the workspace: not read (git's timeout bounds it)
        seen.add(key)
        data, refusal = _config_bytes(real_base, inner)
        if refusal is not None:
            return refusal
        if data is None:
            continue
        total += len(data)
        if total > MAX_CONFIG_TOTAL_BYTES:
            return f"repository config files larger than {MAX_CONFIG_TOTAL_BYTES} bytes in all"
        # surrogateescape: a non-UTF-8 name stays the bytes git opens
        for value in _include_paths(data.decode("utf-8", "surrogateescape")):
            examined += 1
            if examined > MAX_INCLUDES:
                return f"repository config includes more than {MAX_INCLUDES} paths"
            refusal, target = _included(value, named, allowed)
            if refusal is not None:
                return refusal
            if target is not None:
                queue.append((target, depth + 1))
    return None


def _config_bytes(real_base: str, inner: str) -> tuple[bytes | None, str | None]:
    """A config file's bytes (``None`` when it cannot be read: git skips it too), or the
    refusal of one over :data:`MAX_CONFIG_BYTES` (what it includes past the bound is unknown)."""
    try:
        return fsguard.read_bytes(real_base, inner, MAX_CONFIG_BYTES), None
    except fsguard.Refused as exc:
        if exc.reason == "too-large":
            return None, f"repository config file larger than {MAX_CONFIG_BYTES} bytes ({inner})"
        return None, None
    except OSError:
        return None, None


def _included(value: str, named: str, allowed: list[str]) -> tuple[str | None, str | None]:
    """One ``path`` the config file ``named`` includes: ``(refusal, None)``, ``(None, path to
    follow)`` for a regular file inside ``allowed``, or ``(None, None)`` for a missing one (git
    skips it)."""
    if value.startswith("%(prefix)/"):
        return f"repository config includes a path under git's install prefix ({value})", None
    expanded = os.path.expanduser(value) if value.startswith("~") else value
    target = expanded if os.path.isabs(expanded) else os.path.dirname(named) + "/" + expanded
    resolved = _physical(target)
    if resolved is None:
        return f"repository config includes a path through /proc, /sys or /dev, or past 40 links ({value})", None
    try:
        st = os.stat(resolved)
    except OSError:
        return None, None  # git skips a missing include
    if not stat.S_ISREG(st.st_mode):
        return f"repository config includes a file that is not a regular file ({value})", None
    if not any(fsguard.relative(folder, resolved) is not None for folder in allowed):
        # git would open it for every command: a workspace must not make our children read
        # the user's files (`path = ~/.aws/credentials`, `/etc/shadow`)
        return f"repository config includes a file outside the workspace ({value})", None
    return None, target


#: Most work-tree entries :func:`worktree_refusal` looks at; past the bound the tree is refused
#: (walked instead): above the listing's own bound (``files.MAX_FILES``).
MAX_WORKTREE_ENTRIES: Final = 300_000
#: Work-tree files git opens in every folder it walks: ``ls-files --others --exclude-standard``
#: each ``.gitignore``; ``status`` each ``.gitattributes`` of a folder holding a file whose
#: index entry is stat-dirty (a fresh commit, a touched file).
WORKTREE_GIT_FILES: Final = frozenset({".gitignore", ".gitattributes"})


def worktree_refusal(root: Path) -> str | None:
    """Why git must not list or check ``root``'s work tree, else ``None``: a ``.gitignore`` or
    ``.gitattributes`` in it that git would block on (a FIFO or a device, once links are
    followed; a link through ``/proc``, ``/sys`` or ``/dev``): one held each ``ls-files
    --others`` or ``status`` run until its timeout (10 s; git 2.39). Also a tree of more than
    :data:`MAX_WORKTREE_ENTRIES` entries (what lies past the bound is unknown). Git folders
    (``.git``) and linked folders are not walked, and ignored folders are walked too (git
    skips them: the check is conservative; a refusal costs git's recency, the walk lists the
    same files). Nothing is opened; never raises."""
    try:
        hit = _blocking_entry(os.path.abspath(root), MAX_WORKTREE_ENTRIES, WORKTREE_GIT_FILES.__contains__, ".git")
    except Exception:  # a pre-check never fails the caller: git's own timeout still bounds it
        log.debug("git work-tree pre-check failed", exc_info=True)
        return None
    if hit is None:
        return None
    path, kind = hit
    if kind == "bound":
        return f"work tree has more than {MAX_WORKTREE_ENTRIES} entries"
    rel = os.path.relpath(path, root).encode("utf-8", "backslashreplace").decode("utf-8")
    name = os.path.basename(path)
    if kind == "link":
        return f"work-tree {name} is read through /proc, /sys or /dev, or past 40 links ({rel})"
    return f"work tree holds a {name} that is a FIFO or device ({rel})"


def can_list(root: Path) -> bool:
    """Whether git may list and check ``root``'s work tree (``ls-files --others``, ``status``):
    it is a checkout (:func:`is_checkout`) holding nothing git would block on
    (:func:`worktree_refusal`; a refusal is logged). ``False``: the caller walks the folder."""
    if not is_checkout(root):
        return False
    refusal = worktree_refusal(root)
    if refusal is not None:
        log.info("git not run over the work tree of %s (%s); walking the folder", root, refusal)
        return False
    return True


#: The head of git's index file (gitformat-index(5)): the signature ``DIRC``, a version (2, 3
#: or 4: git refuses any other), the number of index entries; all big-endian.
INDEX_HEAD: Final = struct.Struct(">4sII")
#: Index versions git reads (``read_index_from``: "bad index version" for any other).
INDEX_VERSIONS: Final = frozenset({2, 3, 4})
#: Fewest bytes one index entry takes (gitformat-index(5): 40 bytes of stat data, a 20-byte
#: object name, 2 bytes of flags, then its path): a head claiming more entries than its file can
#: hold is not one git reads (2**31 entries over 64 MiB of random bytes).
MIN_ENTRY_BYTES: Final = 62
#: Most ``sharedindex.*`` files of a split index whose heads :func:`index_entries` reads (git
#: keeps the one in use and a few older ones until they expire).
MAX_SHARED_INDEXES: Final = 16
#: Rows a kept git listing may hold beyond its index's entries, as files the index does not
#: track (``ls-files --others``): at least this many, and at most the index's entries again.
#: A listing past that is no listing of this checkout's index plus the files made since (a
#: forged one of 249,044 rows for a 41-file checkout made the next session take 192 s and
#: 250 MiB to be ready): the scan before ready is taken instead, so a forged listing costs a
#: session at most twice the real listing's work, or this many rows (a fraction of a second).
UNTRACKED_ALLOWANCE: Final = 4096


def _index_head(path: str) -> int | None:
    """The entry count in the head of the index file ``path`` (a regular file, not a link: the
    first :attr:`INDEX_HEAD.size` bytes read, nothing more); ``0`` when there is no such file
    (git then tracks nothing); ``None`` when it is no regular file or its head is not one git
    reads (signature, version, more entries than the file can hold: :data:`MIN_ENTRY_BYTES`)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return 0
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        raw = os.pread(fd, INDEX_HEAD.size, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(raw) != INDEX_HEAD.size:
        return None
    signature, version, entries = INDEX_HEAD.unpack(raw)
    if signature != b"DIRC" or version not in INDEX_VERSIONS or entries * MIN_ENTRY_BYTES > st.st_size:
        return None
    return int(entries)


def index_entries(root: Path) -> int | None:
    """How many entries git's index of the checkout ``root`` holds, from its head alone
    (:data:`INDEX_HEAD`), or ``None`` when that cannot be known (no git folder, a git folder
    reached through ``/proc``, ``/sys`` or ``/dev``, an index that is no regular file or whose
    head git refuses: git's listing fails then too). A split index (``core.splitIndex``) keeps
    most entries in a ``sharedindex.<hash>`` file beside it: the largest of those heads is
    added. Never raises."""
    try:
        base = os.path.abspath(root)
        git_dir = _repository_git_dir(root, base)
        real = _physical(git_dir) if git_dir is not None else None
        if real is None:
            return None
        entries = _index_head(os.path.join(real, "index"))
        return None if entries is None else entries + _shared_entries(real)
    except Exception:  # a pre-check never fails the caller
        log.debug("git index head unreadable", exc_info=True)
        return None


def _shared_entries(git_dir: str) -> int:
    """The most entries of the ``sharedindex.*`` heads in ``git_dir`` (at most
    :data:`MAX_SHARED_INDEXES` read, :data:`MAX_GIT_DIR_ENTRIES` entries looked at); 0 without."""
    most = seen = read = 0
    with os.scandir(git_dir) as it:
        for entry in it:
            seen += 1
            if seen > MAX_GIT_DIR_ENTRIES or read >= MAX_SHARED_INDEXES:
                break
            if entry.name.startswith("sharedindex."):
                read += 1
                most = max(most, _index_head(entry.path) or 0)
    return most


def listing_refusal(root: Path, rows: int, tracked: int | None = None) -> str | None:
    """Why a git listing of ``rows`` paths (``tracked`` of them index entries, when known) is not
    this checkout's, judged against its index's entry count (:func:`index_entries`); ``None``
    when it may be. Entries a listing leaves out (links to folders, paths that leave the work
    tree, a conflict's stages) make it shorter, never longer: ``tracked`` may not exceed the
    entries, and all ``rows`` may exceed them by files the index does not track, at most
    :data:`UNTRACKED_ALLOWANCE` or the entries again. A sentence naming both counts."""
    entries = index_entries(root)
    if entries is None:
        return "git's index head is not one git reads"
    if tracked is not None and tracked > entries:
        return f"git listed {tracked} index entries where its index holds {entries}"
    if rows > entries + max(entries, UNTRACKED_ALLOWANCE):
        return f"a listing of {rows} files where git's index holds {entries} entries"
    return None
