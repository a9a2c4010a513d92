"""Workspace-derived strings are data: their control characters are escaped before they reach a
ledger line, a log line or a note (issue 13, class 8).

A file named ``x\\n[2026-01-01T00:00:00.000Z] followed Doc evil`` would otherwise forge a second
ledger line, and a path with a newline would put extra lines into the note shown to the agent.
:func:`escape_controls` rewrites every C0 control (U+0000–U+001F), DEL (U+007F), C1 control
(U+0080–U+009F), the Unicode line/paragraph separators (U+2028, U+2029) and the bidirectional
overrides/isolates (U+202A–U+202E, U+2066–U+2069, which reorder what a reader sees) as a visible
escape: ``\\n``, ``\\r``, ``\\t``, else ``\\xHH`` (below U+0100) or ``\\uHHHH``. Everything else,
including a backslash, passes unchanged, so ordinary paths and seed strings stay byte-exact.
"""

from __future__ import annotations

import logging
import re
from typing import Final

_CONTROLS: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _one(match: re.Match[str]) -> str:
    ch = match.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """``text`` with its control characters escaped (rules in the module docstring); the same
    object when there is nothing to escape."""
    if _CONTROLS.search(text) is None:
        return text
    return _CONTROLS.sub(_one, text)


class EscapingFilter(logging.Filter):
    """A logging filter that escapes control characters in every rendered message, so that a
    workspace name cannot start a forged log line. Tracebacks (multi-line by nature) are kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record whose args do not format: leave it to logging
            return True
        escaped = escape_controls(message)
        if escaped is not message:
            record.msg, record.args = escaped, None
        return True
