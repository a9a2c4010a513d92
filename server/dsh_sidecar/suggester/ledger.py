"""The ledger (plan, "The ledger"): one line per decision, ``[<ISO-8601>] <message>``,
appended to ``logFile`` and handed to a sink (the server sends it as ``window/logMessage``).

Message shapes, exactly::

    activated (packs <ids> intents <n> threshold <k>)
    suggest <intent> <k> <n> targets <path>[,<path>…]
    suppressed <reason> <intent>
    abstained foreign-workspace
    abstained not-ready
    abstained no-companions <intent> <k>
    abstained missing-folder <intent> <k>
    abstained missing-file <intent> <k>
    followed <intent> <path>
    ignored <intent>
    dismissed <intent> <path|*>
    section rebuilt (ttl <n>)
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from dsh_sidecar.escape import escape_controls
from dsh_sidecar.state.files import open_append

log = logging.getLogger(__name__)

#: Size at which the ledger file is rotated to ``<logFile>.1``, bytes.
ROTATE_BYTES: Final = 5 * 1024 * 1024
#: Longest a written line waits in the buffer before it is appended, seconds (the file I/O below).
FLUSH_S: Final = 1.0
#: Most lines written on other threads kept for the sink until its thread takes them.
MAX_HELD_LINES: Final = 1000


def iso_now(clock: Callable[[], float] | None = None) -> str:
    """UTC now (or ``clock()`` seconds) as ISO-8601 with milliseconds and ``Z`` (the
    milliseconds truncated, as ``isoformat(timespec="milliseconds")`` does)."""
    global _SECOND  # noqa: PLW0603 -- a one-entry cache, swapped whole
    ts = clock() if clock else None
    now = datetime.fromtimestamp(ts, UTC) if ts is not None else datetime.now(UTC)
    second = now.replace(microsecond=0)
    kept = _SECOND
    if kept[0] != second:  # a line in another second: its date and time formatted once
        kept = (second, second.isoformat(timespec="seconds").removesuffix("+00:00"))
        _SECOND = kept  # one tuple, swapped whole (whichever thread)
    return f"{kept[1]}.{now.microsecond // 1000:03d}Z"


#: The second of the last ledger line and its ``YYYY-MM-DDTHH:MM:SS`` (one entry).
_SECOND: tuple[datetime | None, str] = (None, "")


def fmt_k(k: float) -> str:
    """The gate score as written in ledger lines: two decimals."""
    return f"{k:.2f}"


# --------------------------------------------------------------------------- the messages
# Every ledger message is built here and nowhere else (the plan's shapes, byte-exact).


def activated(pack_ids: list[str], intents: int, threshold: float) -> str:
    """``activated (packs <ids> intents <n> threshold <k>)``."""
    return f"activated (packs {','.join(pack_ids)} intents {intents} threshold {threshold:.2f})"


def suggest(intent: str, k: float, targets: list[str]) -> str:
    """``suggest <intent> <k> <n> targets <path>[,<path>…]``."""
    return f"suggest {intent} {fmt_k(k)} {len(targets)} targets {','.join(targets)}"


#: ``suppressed editing <intent>``: the shell line changes a file it searches (it checks its own edit).
EDITING: Final = "editing"
#: ``suppressed outside <intent>``: every path the call searches and reads lies outside the workspace.
OUTSIDE: Final = "outside"


def suppressed(reason: str, intent: str) -> str:
    """``suppressed <reason> <intent>``."""
    return f"suppressed {reason} {intent}"


def abstained_foreign_workspace() -> str:
    """``abstained foreign-workspace``."""
    return "abstained foreign-workspace"


def abstained_not_ready() -> str:
    """``abstained not-ready`` (ours): the session ended while the sidecar's start (its build
    and the packs' activation) was still running: no call was decided, nothing activated."""
    return "abstained not-ready"


def abstained(reason: str, intent: str, k: float) -> str:
    """``abstained <reason> <intent> <k>`` (the plan's ``no-companions`` shape, any reason)."""
    return f"abstained {reason} {intent} {fmt_k(k)}"


def abstained_no_companions(intent: str, k: float) -> str:
    """``abstained no-companions <intent> <k>``."""
    return abstained(NO_COMPANIONS, intent, k)


#: The intent crossed its threshold but none of its candidates is left to name (the plan's).
NO_COMPANIONS: Final = "no-companions"
#: The call searched only folders the workspace does not have (``search_dir x dir=cmake``
#: answered "Directory cmake not found"): the intent its words cross is not noted (ours).
MISSING_FOLDER: Final = "missing-folder"
#: The call named only files the workspace does not have (``ls mypy.ini .flake8`` answered "No
#: such file or directory"): the intent its words cross is not noted (ours).
MISSING_FILE: Final = "missing-file"


def followed(intent: str, path: str) -> str:
    """``followed <intent> <path>``."""
    return f"followed {intent} {path}"


def ignored(intent: str) -> str:
    """``ignored <intent>``."""
    return f"ignored {intent}"


def dismissed(intent: str, path: str) -> str:
    """``dismissed <intent> <path|*>``."""
    return f"dismissed {intent} {path}"


def section_rebuilt(ttl: int) -> str:
    """``section rebuilt (ttl <n>)``."""
    return f"section rebuilt (ttl {ttl})"


def pack_refused(reason: str) -> str:
    """``pack refused (<reason>)`` (ours: an untrusted pack or candidate was refused)."""
    return f"pack refused ({reason})"


def ledger_path(log_file: str | None, dsh_home: Path) -> Path:
    """Where the suggester's ledger is appended: ``logFile``, else under ``dsh_home``."""
    return Path(log_file).expanduser() if log_file else dsh_home / "search-suggester" / "ledger.log"


def end_during_start(path: Path) -> None:
    """The session whose ledger is ``path`` ended while its start still ran: append ``abstained
    not-ready`` now, as its one line, and nothing more of that start from this process. The
    start goes on on its thread until the process ends, and its suggester may have written (or
    may still write) its activation lines (``activated``, ``pack refused``, ``abstained
    foreign-workspace``) into a buffer the exit flushes (:func:`flush_all`): those are dropped,
    unless a flush appended them already (a line is in the file at most :data:`FLUSH_S` after
    it was written). Never raises."""
    _ENDED.add(path)
    for book in list(_LIVE):
        if book.path == path:
            book.drop()
    Ledger(path).append_now(abstained_not_ready())


def write_not_ready(log_file: str | None, dsh_home: Path) -> None:
    """The session ended while the sidecar's start still ran (stdio and MCP alike): one
    ``abstained not-ready`` line, written now, the session's only one (:func:`end_during_start`)."""
    end_during_start(ledger_path(log_file, dsh_home))


class Ledger:
    """Appends ledger lines to ``path`` (``None``: no file) and passes each to ``sink``.

    Threads: a line is appended to the file's buffer at once, whatever thread writes it, so the
    file's order is the order of the decisions. The ``sink`` (the server's transport) is only
    called on the thread that made the ledger (its owner): a line written on another thread (an
    activation or preparation on a worker thread) is held and passed to the sink before the
    owner's next line, or at :meth:`drain`.

    File I/O (``docs/SECURITY.md``, classes 8–10):

    * every message has its control characters escaped (:func:`~dsh_sidecar.escape.escape_controls`)
      before it becomes a line: a workspace name cannot forge a second line;
    * lines are buffered and appended in one ``write`` per batch, at most :data:`FLUSH_S` after the
      first line of the batch (a timer thread), and on :meth:`flush` — which the sidecar calls at
      ``shutdown``, EOF, SIGTERM and interpreter exit (``atexit``); order is kept, no line is lost
      or torn (one ``O_APPEND`` write of whole lines);
    * the file is opened ``O_NOFOLLOW`` (a symlink planted at ``ledger.log`` is refused, never
      followed) and must be a regular file owned by this user with one link; otherwise nothing is
      written and a warning is logged once;
    * a write failure (read-only or full disk) is logged once and never raised: the ledger is
      evidence, not a reason to fail a tool call.
    """

    def __init__(
        self,
        path: Path | None,
        sink: Callable[[str], None] | None = None,
        clock: Callable[[], float] | None = None,
        owner: int | None = None,
    ) -> None:
        self.path = path
        self.sink = sink
        self.clock = clock
        self.lines_written = 0
        self._warned = False
        self._dir_ready: Path | None = None
        self._buffer: list[str] = []
        self._lock = threading.Lock()  # guards the buffer
        self._io = threading.Lock()  # one flush at a time: batches land in order
        self._timer: threading.Timer | None = None
        #: the sink's thread (``threading.get_ident()``): the given one, else the making thread
        self._owner = owner if owner is not None else threading.get_ident()
        self._held: deque[str] = deque(maxlen=MAX_HELD_LINES)
        if path is not None:
            _LIVE.add(self)

    def write(self, message: str) -> str:
        """Record ``message``; return the full line (control characters escaped)."""
        line = f"[{iso_now(self.clock)}] {escape_controls(message)}"
        with self._lock:
            self.lines_written += 1
            if self.path is not None:
                self._buffer.append(line)
                if self._timer is None:
                    self._timer = threading.Timer(FLUSH_S, self.flush)
                    self._timer.daemon = True
                    self._timer.start()
            if self.sink is not None and threading.get_ident() != self._owner:
                self._held.append(line)  # for the sink's own thread (class docstring)
                return line
        if self.sink is not None:
            self.drain()
            self._send(line)
        return line

    def drain(self) -> None:
        """Pass the lines written on other threads to the sink (on the owner thread; elsewhere
        nothing happens)."""
        if self.sink is None or threading.get_ident() != self._owner:
            return
        while self._held:
            try:
                line = self._held.popleft()
            except IndexError:
                return
            self._send(line)

    def _send(self, line: str) -> None:
        assert self.sink is not None
        try:
            self.sink(line)
        except Exception:  # the sink is the transport; never fail a decision on it
            log.exception("ledger sink failed")

    def flush(self) -> None:
        """Append every buffered line now (one write); never raises. A ledger whose session
        ended during its start (:func:`end_during_start`) appends nothing."""
        with self._io:
            with self._lock:
                lines, self._buffer = self._buffer, []
                timer, self._timer = self._timer, None
            if timer is not None and timer is not threading.current_thread():
                timer.cancel()
            if lines and self.path is not None and self.path not in _ENDED:
                self._append("".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape"))

    def append_now(self, message: str) -> None:
        """Append ``message`` as one line now, past the buffer and the ended check (the one line
        :func:`end_during_start` writes); never raises."""
        line = f"[{iso_now(self.clock)}] {escape_controls(message)}\n"
        with self._io:
            self._append(line.encode("utf-8", "surrogateescape"))

    def drop(self) -> None:
        """Forget the buffered lines (its session ended during its start: :func:`end_during_start`)."""
        with self._io, self._lock:
            self._buffer = []

    def _append(self, data: bytes) -> None:
        assert self.path is not None
        try:
            if self._dir_ready != self.path:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                self._dir_ready = self.path
            fd = open_append(self.path)
            try:
                if os.fstat(fd).st_size > ROTATE_BYTES:
                    os.close(fd)
                    fd = -1
                    os.replace(
                        self.path, self.path.with_name(self.path.name + ".1")
                    )  # renames a link, never follows it
                    fd = open_append(self.path)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                if fd >= 0:
                    os.close(fd)
        except OSError as exc:
            if not self._warned:
                log.warning("search-suggester: cannot write the ledger file (%s); keeping on", exc.strerror or exc)
                self._warned = True


#: Ledgers with a file, flushed at interpreter exit (weak: a dropped ledger is not kept alive).
_LIVE: weakref.WeakSet[Ledger] = weakref.WeakSet()
#: Ledger files whose session ended during its start (:func:`end_during_start`): this process
#: appends nothing more to them (one path a session; a process serves one session).
_ENDED: set[Path] = set()


def flush_all() -> None:
    """Flush every live ledger (called at exit; never raises)."""
    for ledger in list(_LIVE):
        with contextlib.suppress(Exception):
            ledger.flush()


atexit.register(flush_all)
