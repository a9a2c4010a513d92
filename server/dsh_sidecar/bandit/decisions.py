"""The decision log: one JSON line per bandit decision and per feedback, for inspection and
off-policy evaluation (inverse propensity scoring needs the propensity of each logged choice).

``$DSH_HOME/bandit/decisions.jsonl``, mode 0600, rotated by the standard library's
``RotatingFileHandler`` at ``maxBytes`` with ``backupCount`` old files (``.1``, ``.2`` …), so
it stays bounded. The query text is not logged (it may be private); its class is.

A decision line::

    {"event":"decision","ts":1764480000.123,"searchId":"…","class":"open","arm":"thorough",
     "forced":false,"propensity":0.8125,"reward":0.7342,"rewardSource":"heuristic",
     "durationMs":5210,"decisionUs":41.0,"resultCount":8,"posterior":{"quick":[α,β],"thorough":[α,β]}}

``propensity`` is the Monte-Carlo probability the policy had of choosing ``arm`` (1.0 when the
harness forced the arm); ``posterior`` the effective Beta parameters the choice was sampled
from. A feedback line: ``{"event":"feedback","ts":…,"searchId":…,"class":…,"arm":…,
"used":true,"reward":…,"previousReward":…}``.

A write failure (read-only, disk full) is warned about once; the log then stays off.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
from pathlib import Path
from typing import IO, Any, Final

log = logging.getLogger(__name__)

#: File name under ``$DSH_HOME/bandit/``.
DECISIONS_FILE: Final = "decisions.jsonl"
#: Default size at which the log rotates, bytes.
DEFAULT_MAX_BYTES: Final = 4 * 1024 * 1024
#: Default rotated files kept.
DEFAULT_BACKUPS: Final = 2


class _PrivateRotatingHandler(logging.handlers.RotatingFileHandler):
    """A rotating handler whose files are created 0600 and whose failures are reported once."""

    def __init__(self, path: Path, max_bytes: int, backups: int, on_error: Any) -> None:
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8", delay=True)
        self.on_error = on_error

    def _open(self) -> IO[str]:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return open(fd, "a", encoding="utf-8")

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        self.on_error()


class DecisionLog:
    """Appends decision/feedback records under ``home/bandit/`` (``home`` ``None``: off)."""

    def __init__(self, home: Path | None, max_bytes: int = DEFAULT_MAX_BYTES, backups: int = DEFAULT_BACKUPS) -> None:
        self.path = home / "bandit" / DECISIONS_FILE if home is not None else None
        self.enabled = self.path is not None
        self.warnings: list[str] = []
        self._logger: logging.Logger | None = None
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

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as a JSON line (silently nothing when the log is off)."""
        if self.enabled and self._logger is not None:
            try:
                line = json.dumps(record, separators=(",", ":"), allow_nan=False)
            except ValueError:  # a NaN/inf slipped in: drop the record rather than write non-JSON
                log.warning("bandit decision record with a non-finite number dropped")
                return
            self._logger.info("%s", line)

    def close(self) -> None:
        """Close the file."""
        if self._logger is not None:
            for h in list(self._logger.handlers):
                h.close()
