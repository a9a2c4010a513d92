"""Keep secrets out of every text that leaves the router (errors, attempts, logs, status).

Every configured API key is replaced by ``[redacted]`` wherever it appears, also when a
provider echoes it back in an error body (fixtures: ``exa/auth-key-echo.401.json``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Final

#: What a secret is replaced with.
MARKER: Final = "[redacted]"
#: Secrets shorter than this are not redacted by substring (they would shred normal text);
#: no real API key is this short.
MIN_SECRET_CHARS: Final = 6


class Redactor:
    """Replace every known secret in a text. Thread-safe for reads; secrets only grow."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Register more secrets (blank and too-short ones are ignored)."""
        for s in secrets:
            if s and len(s.strip()) >= MIN_SECRET_CHARS:
                self._secrets.add(s.strip())
        if self._secrets:
            alts = sorted(self._secrets, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(s) for s in alts))

    def __call__(self, text: str) -> str:
        """Return ``text`` with every secret replaced by :data:`MARKER`."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(MARKER, text)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts the rendered message of every record it passes."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record whose args do not format: leave it to logging
            return True
        redacted = self.redactor(message)
        if redacted != message or record.args:
            record.msg, record.args = redacted, None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = self.redactor(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True
