"""The ledger (plan, "The ledger"): one line per decision, ``[<ISO-8601>] <message>``,
appended to ``logFile`` and handed to a sink (the server sends it as ``window/logMessage``).

Message shapes, exactly::

    activated (packs <ids> intents <n> threshold <k>)
    suggest <intent> <k> <n> targets <path>[,<path>…]
    suppressed <reason> <intent>
    abstained foreign-workspace
    abstained no-companions <intent> <k>
    followed <intent> <path>
    ignored <intent>
    dismissed <intent> <path|*>
    section rebuilt (ttl <n>)
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

log = logging.getLogger(__name__)

#: Size at which the ledger file is rotated to ``<logFile>.1``, bytes.
ROTATE_BYTES: Final = 5 * 1024 * 1024


def iso_now(clock: Callable[[], float] | None = None) -> str:
    """UTC now (or ``clock()`` seconds) as ISO-8601 with milliseconds and ``Z``."""
    ts = clock() if clock else None
    now = datetime.fromtimestamp(ts, UTC) if ts is not None else datetime.now(UTC)
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


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


def suppressed(reason: str, intent: str) -> str:
    """``suppressed <reason> <intent>``."""
    return f"suppressed {reason} {intent}"


def abstained_foreign_workspace() -> str:
    """``abstained foreign-workspace``."""
    return "abstained foreign-workspace"


def abstained_no_companions(intent: str, k: float) -> str:
    """``abstained no-companions <intent> <k>``."""
    return f"abstained no-companions {intent} {fmt_k(k)}"


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


class Ledger:
    """Appends ledger lines to ``path`` (``None``: no file) and passes each to ``sink``.

    A write failure (read-only or full disk) is logged once and never raised: the ledger
    is evidence, not a reason to fail a tool call.
    """

    def __init__(
        self,
        path: Path | None,
        sink: Callable[[str], None] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.path = path
        self.sink = sink
        self.clock = clock
        self.lines_written = 0
        self._warned = False
        self._dir_ready: Path | None = None

    def write(self, message: str) -> str:
        """Record ``message``; return the full line."""
        line = f"[{iso_now(self.clock)}] {message}"
        self.lines_written += 1
        if self.path is not None:
            try:
                if self._dir_ready != self.path:
                    self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                    self._dir_ready = self.path
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                if os.fstat(fd).st_size > ROTATE_BYTES:
                    os.close(fd)
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
                    fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                with os.fdopen(fd, "a", encoding="utf-8") as fh:
                    fh.write(line + "\n")
            except OSError as exc:
                if not self._warned:
                    log.warning("search-suggester: cannot write the ledger file (%s); keeping on", exc.strerror)
                    self._warned = True
        if self.sink is not None:
            try:
                self.sink(line)
            except Exception:  # the sink is the transport; never fail a decision on it
                log.exception("ledger sink failed")
        return line
