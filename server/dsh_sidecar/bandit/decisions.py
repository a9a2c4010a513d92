"""The decision log: one JSON line per bandit decision and per feedback, for inspection and
off-policy evaluation (inverse propensity scoring needs the propensity of each logged choice).

``$DSH_HOME/bandit/decisions.jsonl``, mode 0600, rotated by the standard library's
``RotatingFileHandler`` at ``maxBytes`` with ``backupCount`` old files (``.1``, ``.2`` …), so
it stays bounded. The query text is not logged (it may be private); its class is.

A decision line::

    {"event":"decision","ts":1764480000.123,"searchId":"…","class":"open","arm":"thorough",
     "forced":false,"propensity":0.8125,"reward":0.7342,"rewardSource":"heuristic",
     "durationMs":5210,"decisionUs":41.0,"resultCount":8,"posterior":{"quick":[α,β],"thorough":[α,β]}}

``propensity`` is the probability the policy had of choosing ``arm`` (1.0 when the
harness forced the arm); ``posterior`` the effective Beta parameters the choice was sampled
from. A feedback line: ``{"event":"feedback","ts":…,"searchId":…,"class":…,"arm":…,
"used":true,"reward":…,"previousReward":…}``.

Lines are batched: :meth:`DecisionLog.append` only queues the record; a writer thread
serialises (and redacts) everything queued within :data:`FLUSH_DELAY_S` and appends it in
one write, in order.
:meth:`DecisionLog.flush` (``shutdown``, close, interpreter exit) writes what is queued now.

A write failure (read-only, disk full) is warned about once; the log then stays off.
"""

from __future__ import annotations

import atexit
import io
import json
import logging
import logging.handlers
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

log = logging.getLogger(__name__)

#: File name under ``$DSH_HOME/bandit/``.
DECISIONS_FILE: Final = "decisions.jsonl"
#: Default size at which the log rotates, bytes.
DEFAULT_MAX_BYTES: Final = 4 * 1024 * 1024
#: Default rotated files kept.
DEFAULT_BACKUPS: Final = 2
#: Longest a queued line waits before it is written, seconds.
FLUSH_DELAY_S: Final = 1.0
#: Longest :meth:`DecisionLog.close` waits for the writer, seconds (a stuck write must not hang exit).
CLOSE_FLUSH_S: Final = 5.0
#: Most lines held in memory; past it the oldest unwritten lines are dropped (warned once).
MAX_QUEUED_LINES: Final = 10_000


class _PrivateRotatingHandler(logging.handlers.RotatingFileHandler):
    """A rotating handler whose files are created 0600 and whose failures are reported once."""

    def __init__(self, path: Path, max_bytes: int, backups: int, on_error: Any) -> None:
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8", delay=True)
        self.on_error = on_error

    def _open(self) -> io.TextIOWrapper:
        # never through a planted symlink or hard link, never blocked by a FIFO (SECURITY.md, class 10)
        from dsh_sidecar.state.files import open_append  # not needed to parse the config

        return open(open_append(self.baseFilename), "a", encoding="utf-8")

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        self.on_error()


class DecisionLog:
    """Appends decision/feedback records under ``home/bandit/`` (``home`` ``None``: off).
    ``redact`` is applied to every line before it is queued."""

    def __init__(
        self,
        home: Path | None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        backups: int = DEFAULT_BACKUPS,
        redact: Callable[[str], str] = lambda text: text,
        flush_delay_s: float = FLUSH_DELAY_S,
    ) -> None:
        self.path = home / "bandit" / DECISIONS_FILE if home is not None else None
        self.enabled = self.path is not None
        self.warnings: list[str] = []
        self.redact = redact
        self.flush_delay_s = flush_delay_s
        self.max_bytes = max_bytes
        self._logger: logging.Logger | None = None
        self._cond = threading.Condition()
        self._lines: list[tuple[dict[str, Any], Callable[[dict[str, Any]], None] | None]] = []
        self._queued = 0
        self._written = 0
        self._urgent = False
        self._writer: threading.Thread | None = None
        self._dropped = False
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            except OSError as exc:
                self._fail(exc.strerror or type(exc).__name__)
                return
            # a private logger object, not registered in logging's tree: no propagation
            self._logger = logging.Logger(f"dsh.bandit.decisions.{id(self)}", logging.INFO)
            self._logger.addHandler(
                _PrivateRotatingHandler(self.path, max_bytes, backups, lambda: self._fail("write failed"))
            )

    def _fail(self, reason: str) -> None:
        if not self.enabled:
            return
        self.enabled = False
        message = f"bandit decision log {self.path} cannot be written ({reason}); decisions are no longer logged"
        self.warnings.append(message)
        log.warning("%s", message)

    def start_writer(self) -> None:
        """Start the writer thread now, when the log is on (idempotent; see
        :meth:`~dsh_sidecar.bandit.store.PosteriorStore.start_writer`)."""
        if not (self.enabled and self._logger is not None):
            return
        with self._cond:
            if self._writer is None:
                self._writer = threading.Thread(target=self._run, name="dsh-bandit-decisions", daemon=True)
                self._writer.start()
                _LIVE.add(self)

    def append(self, record: dict[str, Any], finish: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Queue one record as a JSON line (silently nothing when the log is off).
        ``finish(record)``, when given, completes the record in the writer thread first (work
        that need not delay the caller, e.g. a propensity)."""
        if not (self.enabled and self._logger is not None):
            return
        with self._cond:
            if len(self._lines) >= MAX_QUEUED_LINES:
                del self._lines[0]
                self._written += 1
                if not self._dropped:
                    self._dropped = True
                    log.warning("bandit decision log falls behind; oldest queued lines dropped")
            self._lines.append((record, finish))
            self._queued += 1
            if self._writer is None:
                self._writer = threading.Thread(target=self._run, name="dsh-bandit-decisions", daemon=True)
                self._writer.start()
                _LIVE.add(self)
            if len(self._lines) == 1:  # only a writer waiting for an empty queue needs waking (store.py)
                self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._lines:
                    if self._writer is not threading.current_thread():
                        return
                    self._cond.wait()
                if not self._urgent:
                    self._cond.wait_for(lambda: self._urgent, timeout=self.flush_delay_s)
                batch, self._lines = self._lines, []
                self._urgent = False
            lines = [line for line in (self._line(record, finish) for record, finish in batch) if line is not None]
            if self.enabled and self._logger is not None:
                for chunk in _chunks(lines, self.max_bytes // 8):
                    self._logger.info("%s", "\n".join(chunk))  # one write per chunk of lines
            with self._cond:
                self._written += len(batch)
                self._cond.notify_all()

    def _line(self, record: dict[str, Any], finish: Callable[[dict[str, Any]], None] | None) -> str | None:
        try:
            if finish is not None:
                finish(record)
            line = json.dumps(record, separators=(",", ":"), allow_nan=False)
        except ValueError:  # a NaN/inf slipped in: drop the record rather than write non-JSON
            log.warning("bandit decision record with a non-finite number dropped")
            return None
        except Exception:  # a failing finisher must not stop the writer
            log.warning("bandit decision record could not be completed", exc_info=True)
            return None
        return self.redact(line)

    def flush(self, timeout_s: float | None = None) -> bool:
        """Write every queued line now; ``True`` when all were written within ``timeout_s``."""
        with self._cond:
            target = self._queued
            if self._written >= target:
                return True
            self._urgent = True
            self._cond.notify_all()
            return self._cond.wait_for(lambda: self._written >= target, timeout=timeout_s)

    def close(self) -> None:
        """Write what is queued (waiting at most :data:`CLOSE_FLUSH_S`) and close the file."""
        self.flush(timeout_s=CLOSE_FLUSH_S)
        with self._cond:
            self._writer = None
            self._cond.notify_all()
        _LIVE.discard(self)
        if self._logger is not None:
            for h in list(self._logger.handlers):
                h.close()


def _chunks(lines: list[str], limit: int) -> list[list[str]]:
    """``lines`` in consecutive groups of at most ``limit`` bytes each (a longer line alone),
    so a batch never makes a file pass the rotation size."""
    out: list[list[str]] = []
    size = limit + 1
    for line in lines:
        n = len(line.encode("utf-8")) + 1
        if size + n > limit:
            out.append([])
            size = 0
        out[-1].append(line)
        size += n
    return out


#: Logs with a running writer: flushed at interpreter exit.
_LIVE: weakref.WeakSet[DecisionLog] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for decision_log in list(_LIVE):
        try:
            decision_log.flush(timeout_s=5.0)
        except Exception:  # exit must go on
            log.warning("bandit: decision log flush at exit failed", exc_info=True)
