"""One JSON state file, shared safely by every sidecar on the machine (DESIGN.md, "State").

* **Atomic**: written to a temp file in the same folder, fsync'd, then ``os.replace``d, mode
  0600 (folders 0700): a reader never sees half a file, a crash never leaves one.
* **No lost updates**: :meth:`StateFile.update` re-reads the file under an exclusive
  ``filelock`` lock, applies a merge function and writes back, so two sidecars updating the
  same file both land.
* **Corrupt → cold start**: a file that is not valid JSON (or not what ``validate`` accepts)
  is moved aside to ``<name>.corrupt-<epoch>`` (``<name>.corrupt-<epoch>-<n>`` when a copy set
  aside in the same second has that name: never overwritten) and treated as absent, with a
  warning.
* **Bounded**: a file larger than ``max_bytes`` is treated as corrupt; so is a document nested
  deeper than :data:`MAX_DEPTH`, an integer outside the signed 64-bit range, a non-finite
  number (``1e400``, ``NaN``, ``Infinity``), or anything ``validate`` rejects with *any*
  exception (``RecursionError``, ``OverflowError``… included): every parse or validation error is
  a warning and a cold start, never a failure (docs/SECURITY.md, class 6). At most
  :data:`KEEP_CORRUPT` set-aside copies are kept per file (the one just set aside and the newest
  others by their names' time and number); past :data:`MAX_ASIDE_NAMES` in one second a
  corrupt file is not moved aside (a cold start all the same, said so). Its warnings are
  bounded too: the newest :data:`KEEP_WARNINGS` (a file corrupted again at every update of a
  long-running sidecar adds one each time, and ``dsh/status`` lists them).
* **No debris**: temp files a killed writer left (``.<name>.*.tmp``) are removed at the first
  read (under the lock) or update of the file (class 12); under the lock no other writer has
  one open. A read that finds no debris and a valid file takes no lock.
* **Read back only what changed**: an update whose caller keeps the document it last wrote
  (``reuse``) takes that instead of reading the file back while the file is, to its stat, the
  one this object wrote (:func:`file_identity`: inode, size, modification and change times; any
  other writer's atomic rename is a new inode, an edit in place a new change time). A large
  document written behind once a second was read, parsed, walked and validated again each
  time (1,000 pending searches: 23 of a write's 45 ms of CPU at load 40).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from dsh_sidecar.capped import read_capped

if TYPE_CHECKING:  # filelock is imported by the first lock (a server's start needs none: ~9 ms of CPU)
    from filelock import FileLock

log = logging.getLogger(__name__)

#: Default largest state file accepted, bytes.
DEFAULT_MAX_BYTES: Final = 8 * 1024 * 1024
#: Seconds to wait for another sidecar's lock before giving up on one update.
LOCK_TIMEOUT_S: Final = 10.0
#: Deepest nesting accepted in a state document (ours: the deepest of our documents is 6).
MAX_DEPTH: Final = 64
#: Integer range accepted in a state document (signed 64 bits: ``mtime_ns`` fits).
MAX_INT: Final = 2**63 - 1
#: Set-aside ``.corrupt-<epoch>[-<n>]`` copies kept per state file (older ones are deleted).
KEEP_CORRUPT: Final = 3
#: Most names tried for one set-aside copy (``-1``, ``-2``… after ``<epoch>``); with none free
#: the file is not moved aside (a cold start all the same).
MAX_ASIDE_NAMES: Final = 100
#: Warnings kept per state file (the newest; ``dsh/status`` lists them).
KEEP_WARNINGS: Final = 10
#: A set-aside copy's suffix: its second and its number within that second.
_ASIDE: Final = re.compile(r"\.corrupt-([0-9]{1,20})(?:-([0-9]{1,3}))?")


class StateDocumentError(ValueError):
    """A state document outside the bounds of :func:`check_document`."""


def _no_constant(name: str) -> Any:
    raise StateDocumentError(f"non-finite number {name}")


def check_document(doc: Any) -> Any:
    """``doc`` unchanged if it is within bounds (depth ≤ :data:`MAX_DEPTH`, integers within
    ±:data:`MAX_INT`, finite floats); raises :class:`StateDocumentError` otherwise. Iterative:
    never recurses on the document."""
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, bool) or value is None or isinstance(value, str):
            continue
        if isinstance(value, int):
            if not -MAX_INT <= value <= MAX_INT:
                raise StateDocumentError("integer out of range")
        elif isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise StateDocumentError("non-finite number")
        elif isinstance(value, (list, dict)):
            if depth >= MAX_DEPTH:
                raise StateDocumentError(f"nested deeper than {MAX_DEPTH}")
            items = value.values() if isinstance(value, dict) else value
            stack.extend((v, depth + 1) for v in items)
    return doc


def parse_document(raw: bytes) -> Any:
    """JSON ``raw`` → a bounded document (:func:`check_document`). Raises ``ValueError``
    (``RecursionError`` of a deeply nested text is turned into one)."""
    try:
        return check_document(json.loads(raw, parse_constant=_no_constant))
    except RecursionError:
        raise StateDocumentError(f"nested deeper than {MAX_DEPTH}") from None


def private_dir(folder: Path) -> None:
    """Create ``folder`` and every missing parent with mode 0700 (``Path.mkdir(parents=True,
    mode=…)`` applies the mode to the leaf only). Existing folders are left alone.

    Raises ``OSError`` (read-only, disk full, a file in the way)."""
    missing = []
    for parent in (folder, *folder.parents):
        if parent.is_dir():
            break
        missing.append(parent)
    for parent in reversed(missing):
        try:
            parent.mkdir(mode=0o700)
        except FileExistsError:
            if not parent.is_dir():
                raise
        else:
            os.chmod(parent, 0o700)  # whatever the umask


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` atomically (temp + fsync + rename), file mode ``mode``.

    Creates missing parent folders with mode 0700. Raises ``OSError`` (disk full, read-only).
    """
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    try:  # make the rename itself durable
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


class NotRegularFile(OSError):
    """A state path that is not a regular file of at most the size allowed; ``reason`` says
    what it is instead (treated as a corrupt file: set aside, cold start)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


#: Flags of every state-file read: no symlink followed, no wait on a FIFO, no controlling tty.
_READ_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes`` bytes.

    Opened ``O_NOFOLLOW | O_NONBLOCK`` and checked with ``fstat`` before any read, and never
    more than ``max_bytes + 1`` bytes are read: a state file replaced by a symlink to
    ``/dev/zero``, a FIFO or a folder is refused instead of reading forever (gigabytes of RSS)
    or blocking. Raises ``FileNotFoundError``, :class:`NotRegularFile` (symlink, not regular,
    too large) or ``OSError``."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegularFile("a symbolic link") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile("not a regular file")
        if st.st_size > max_bytes:
            raise NotRegularFile(f"larger than {max_bytes} bytes")
        data = read_capped(fd, max_bytes)
        if data is None:
            raise NotRegularFile(f"larger than {max_bytes} bytes")
        return data
    finally:
        os.close(fd)


def file_identity(path: Path) -> tuple[int, int, int, int, int] | None:
    """``(device, inode, size, mtime_ns, ctime_ns)`` of the regular file at ``path`` (not
    followed), or ``None`` (absent, not a regular file, unreadable): what tells a file this
    process wrote from one written, replaced or edited since (the change time cannot be set
    back)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class UnsafeAppendFile(OSError):
    """An append-only state file that is not a regular file of this user with one link."""


def open_append(path: Path | str) -> int:
    """Open the append-only state file ``path`` (created 0600) and return its descriptor.

    ``O_NOFOLLOW`` (a planted symlink fails with ``ELOOP``, never followed) and ``O_NONBLOCK``
    (a FIFO without a reader fails with ``ENXIO`` instead of blocking), then ``fstat`` must show
    a regular file owned by this user with one link (a hard link to another file is refused).
    Raises ``OSError`` (:class:`UnsafeAppendFile` for the checks); docs/SECURITY.md, class 10."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o600)
    st = os.fstat(fd)
    reason = None
    if not stat.S_ISREG(st.st_mode):
        reason = "not a regular file"
    elif st.st_uid != os.geteuid():
        reason = f"owned by uid {st.st_uid}, not {os.geteuid()}"
    elif st.st_nlink != 1:
        reason = f"{st.st_nlink} hard links"
    if reason is not None:
        os.close(fd)
        raise UnsafeAppendFile(errno.EPERM, f"refusing {os.path.basename(path)}: {reason}")
    return fd


#: What :meth:`StateFile._read_valid` returns for a file it cannot use (``None`` is a document).
_INVALID: Final = object()


@dataclass
class StateFile:
    """A JSON document at ``path`` guarded by ``<path>.lock``.

    ``validate(data)`` returns the data to use or raises ``ValueError`` for a foreign or
    malformed document (treated like a corrupt file). ``parse(raw)`` turns the bytes into the
    data (default :func:`parse_document`; a cache whose validator bounds every value itself may
    skip the generic walk of :func:`check_document`).
    """

    path: Path
    validate: Callable[[Any], Any] = lambda data: data
    max_bytes: int = DEFAULT_MAX_BYTES
    warnings: list[str] | None = None
    parse: Callable[[bytes], Any] = parse_document

    def __post_init__(self) -> None:
        if self.warnings is None:
            self.warnings = []
        self._swept = False
        #: :func:`file_identity` of the file as the last :meth:`update` wrote it (``None``: not
        #: known, or that update failed).
        self._written: tuple[int, int, int, int, int] | None = None

    def _sweep_temps(self) -> None:
        """Remove the temp files killed writers left beside the file (call under the lock)."""
        if self._swept:
            return
        self._swept = True
        n = 0
        for name in self._temps():
            try:
                os.unlink(self.path.parent / name)
                n += 1
            except OSError:
                pass
        if n:
            log.info("state: removed %d temp file(s) left beside %s by a killed writer", n, self.path.name)

    def _temps(self) -> list[str]:
        """The names of the temp files beside the file (``.<name>.*.tmp``, a writer's)."""
        prefix = f".{self.path.name}."
        try:
            return [
                e.name for e in os.scandir(self.path.parent) if e.name.startswith(prefix) and e.name.endswith(".tmp")
            ]
        except OSError:
            return []

    @property
    def lock(self) -> FileLock:
        """The inter-process lock beside the file (``<name>.lock``, mode 0600)."""
        from filelock import FileLock

        return FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_S, mode=0o600)

    def _warn(self, message: str) -> None:
        assert self.warnings is not None
        self.warnings.append(message)
        del self.warnings[:-KEEP_WARNINGS]
        log.warning("%s", message)

    def _set_aside(self, reason: str) -> None:
        """Move the file aside to a name no earlier copy has (the caller holds the lock: no other
        sidecar sets this file aside meanwhile), then keep it and the newest others, :data:`KEEP_CORRUPT`
        in all."""
        aside = self._aside_name()
        if aside is None:
            self._warn(f"state file {self.path} is {reason} and could not be moved aside (no free name); starting cold")
            return
        try:
            os.replace(self.path, aside)
            self._warn(f"state file {self.path} is {reason}; moved aside to {aside.name}, starting cold")
        except OSError as exc:
            self._warn(
                f"state file {self.path} is {reason} and could not be moved aside ({exc.strerror}); starting cold"
            )
            return
        with contextlib.suppress(OSError):  # this copy kept whatever the others' names say (a clock stepped back)
            others = [c for c in self._aside_copies() if c[2] != aside]
            for *_, old in others[: max(len(others) - KEEP_CORRUPT + 1, 0)]:
                old.unlink()

    def _aside_name(self) -> Path | None:
        """``<name>.corrupt-<epoch>``, or ``-<n>`` after it, past the copies of this second (so
        the names keep the order the copies were set aside in); ``None`` past
        :data:`MAX_ASIDE_NAMES` copies in one second."""
        epoch = int(time.time())
        with contextlib.suppress(OSError):
            taken = [n for second, n, _ in self._aside_copies() if second == epoch]
            stem = f"{self.path.name}.corrupt-{epoch}"
            for n in range(max(taken) + 1 if taken else 0, MAX_ASIDE_NAMES):
                candidate = self.path.with_name(f"{stem}-{n}" if n else stem)
                if not os.path.lexists(candidate):
                    return candidate
        return None

    def _aside_copies(self) -> list[tuple[int, int, Path]]:
        """The set-aside copies of this file as ``(second, number, path)``, oldest first (the
        order their names give, not their files' own times)."""
        prefix = self.path.name
        copies: list[tuple[int, int, Path]] = []
        for entry in os.scandir(self.path.parent):
            if entry.name.startswith(prefix) and (m := _ASIDE.fullmatch(entry.name, len(prefix))):
                copies.append((int(m[1]), int(m[2] or 0), Path(entry.path)))
        return sorted(copies)

    def _read_valid(self) -> Any:
        """The validated document of a whole, valid regular file, else :data:`_INVALID` (absent,
        not a regular file, unreadable, corrupt or not ours: the locked read says why and sets
        it aside); no warning."""
        try:
            return self.validate(self.parse(read_regular(self.path, self.max_bytes)))
        except Exception:
            return _INVALID

    def _read_unlocked(self, set_aside: bool = True) -> Any | None:
        try:
            raw = read_regular(self.path, self.max_bytes)
        except FileNotFoundError:
            return None
        except NotRegularFile as exc:
            if set_aside:
                self._set_aside(exc.reason)
            else:
                self._warn(f"state file {self.path} is {exc.reason}; starting cold")
            return None
        except OSError as exc:
            self._warn(f"state file {self.path} unreadable ({exc.strerror}); starting cold")
            return None
        try:
            return self.validate(self.parse(raw))
        except Exception as exc:  # any parse/validation error (RecursionError, OverflowError…): cold start
            if set_aside:
                self._set_aside(f"corrupt or not ours ({type(exc).__name__})")
            else:
                self._warn(f"state file {self.path} is corrupt or not ours ({type(exc).__name__}); starting cold")
            return None

    def read(self) -> Any | None:
        """The validated document, or ``None`` (absent, corrupt, unreadable: cold start).

        Never waits for another process's lock (docs/SECURITY.md, class 7: a stopped sidecar holding it
        froze every request for 10 s): writes are atomic renames, so an unlocked read always
        sees a whole file. A valid file with no temp debris beside it is read without the lock
        (nothing to sweep or set aside: no lock file, nor filelock's import, on a start's path).
        Otherwise the lock is only *tried*: when free, temp debris is swept and a corrupt file is
        set aside under it; when held, the file is read without setting anything aside (a writer
        may be replacing it this very moment)."""
        if not self.path.parent.is_dir():
            return None  # nothing to read; never let the lock create the folder (0755)
        if self._swept or not self._temps():  # no debris to sweep
            if not os.path.lexists(self.path):
                return None  # nothing to read, sweep or set aside: no lock (nor filelock's import) needed
            document = self._read_valid()
            if document is not _INVALID:
                return document
        from filelock import FileLock, Timeout

        try:
            with FileLock(str(self.path) + ".lock", timeout=0, mode=0o600):
                self._sweep_temps()
                return self._read_unlocked()
        except (Timeout, OSError):
            return self._read_unlocked(set_aside=False)

    def replace(self, data: bytes) -> None:
        """Under the lock, replace the file's bytes with ``data`` at once (a cache writing a
        whole document of its own format); its folder and missing parents made private first.

        Raises ``OSError`` when the file cannot be written (callers keep serving and warn) and
        ``filelock.Timeout`` when the lock is held too long."""
        private_dir(self.path.parent)
        with self.lock:
            atomic_write_bytes(self.path, data)

    def replace_or_warn(self, data: bytes, what: str, logger: logging.Logger = log) -> bool:
        """:meth:`replace`, ``True`` once written; ``False`` when it fails (disk full, a read-only
        cache, a lock timeout: a cache not written is only work done again, the caller keeps
        serving), warned on ``logger`` (the caller's) as ``<what> not written: <error>``."""
        try:
            self.replace(data)
        except Exception as exc:
            logger.warning("%s not written: %s", what, exc)
            return False
        return True

    def remove_or_note(self, what: str, logger: logging.Logger = log) -> None:
        """Remove the file (absent already: done); a failure leaves it, noted on ``logger`` (the
        caller's, at debug) as ``<what> not removed: <error>``."""
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:
            logger.debug("%s not removed: %s", what, exc)

    def update(
        self,
        merge: Callable[[Any | None], Any],
        reuse: Callable[[], Any] | None = None,
        encode: Callable[[Any], bytes] | None = None,
    ) -> Any:
        """Under the lock: read the current document, ``merge`` it, write the result back.

        ``reuse`` (optional) gives the validated document the last update of this object wrote
        (what ``validate`` would make of it): taken instead of reading the file while the file
        is still the one that update wrote (:func:`file_identity`); the caller keeps it, and
        ``merge`` must not change it in place. ``encode`` (optional) makes the bytes of what
        ``merge`` returned (else compact JSON with sorted keys). Returns what ``merge``
        returned. Raises ``OSError`` when the file cannot be written (callers keep serving and
        warn) and ``filelock.Timeout`` when the lock is held too long.
        """
        private_dir(self.path.parent)
        with self.lock:
            self._sweep_temps()
            written, self._written = self._written, None
            if reuse is not None and written is not None and written == file_identity(self.path):
                current = reuse()
            else:
                current = self._read_unlocked()
            new = merge(current)
            data = (
                encode(new) if encode is not None else json.dumps(new, separators=(",", ":"), sort_keys=True).encode()
            )
            atomic_write_bytes(self.path, data)
            self._written = file_identity(self.path)
            return new
