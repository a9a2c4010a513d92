"""Keep secrets out of every text that leaves the sidecar: replies, notifications, logs, state.

Every configured secret (API keys, Basic-auth passwords) is replaced by ``[redacted]``
wherever it appears, in each form a hostile or careless provider may echo it back in
(:func:`secret_forms`): raw, percent-encoded once or twice (``quote``/``quote_plus``, either
hex case),
base64 (standard and URL-safe alphabets, at any byte alignment inside a longer encoded
string), JSON-escaped and HTML-escaped. Callers redact *first*: before any text is cut to a
length, sanitised or folded, so no cut can leave a partial key behind.

Three places apply it: the router on every string it takes from a provider, the logging
filter (:class:`RedactingFilter`) on every record at every level, and the JSON-RPC writer on
every outgoing frame (:meth:`Redactor.redact_bytes`), the last line of defence.
"""

from __future__ import annotations

import base64
import html
import json
import logging
import math
import re
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import quote, quote_plus

#: What a secret is replaced with.
MARKER: Final = "[redacted]"
#: Secrets shorter than this are not redacted by substring (they would shred normal text);
#: no real API key is this short. Encoded forms shorter than this are not used either.
MIN_SECRET_CHARS: Final = 6

_PCT_ANY = re.compile(r"%(?:25)?[0-9A-Fa-f]{2}")  # one escape, or an escaped escape (%252F)


def _base64_cores(secret: bytes) -> set[str]:
    """The part of ``base64(prefix + secret + suffix)`` that depends on ``secret`` alone, for
    each of the three alignments of ``secret`` within the encoded bytes, in both alphabets.

    With ``k`` bytes before the secret, output character ``i`` covers input bits
    ``[6i, 6i + 6)``; those inside ``[8k, 8(k + n))`` are fixed by the secret: characters
    ``ceil(8k / 6)`` to ``floor(8(k + n) / 6)`` (RFC 4648 §4 and §5).
    """
    out: set[str] = set()
    n = len(secret)
    for k in range(3):
        encoded = base64.b64encode(b"\0" * k + secret + b"\0\0").decode("ascii")
        core = encoded[math.ceil(8 * k / 6) : (8 * (k + n)) // 6]
        if len(core) >= MIN_SECRET_CHARS:
            out.add(core)
            out.add(core.replace("+", "-").replace("/", "_"))
    return out


def secret_forms(secret: str) -> set[str]:
    """Every form of ``secret`` that :class:`Redactor` replaces (see the module docstring)."""
    forms = {secret}
    once = {quote(secret, safe=""), quote_plus(secret, safe="")}
    twice = {quote(e, safe="") for e in once}  # a URL inside a URL (redirect links: ``uddg=``)
    forms |= once | twice  # either hex case matches (see _form_regex)
    forms |= _base64_cores(secret.encode("utf-8"))
    escaped = json.dumps(secret)[1:-1]
    forms |= {escaped, escaped.replace("/", "\\/"), json.dumps(secret, ensure_ascii=False)[1:-1]}
    forms.add(html.escape(secret, quote=True))
    return {f for f in forms if len(f) >= MIN_SECRET_CHARS}


def _form_regex(form: str) -> str:
    """``form`` as a regex matching it literally, except that each ``%XX`` escape matches in
    either hex case (``%2F``/``%2f``, also mixed across nesting levels)."""
    out, last = [], 0
    for m in _PCT_ANY.finditer(form):
        out.append(re.escape(form[last : m.start()]))
        out.append("%" + "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in m.group()[1:]))
        last = m.end()
    out.append(re.escape(form[last:]))
    return "".join(out)


class Redactor:
    """Replace every known secret, in every form, in a text. Thread-safe for reads (the
    patterns are swapped whole); secrets only grow."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._bytes_pattern: re.Pattern[bytes] | None = None
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Register more secrets (blank and too-short ones are ignored)."""
        fresh = {s.strip() for s in secrets if s and len(s.strip()) >= MIN_SECRET_CHARS} - self._secrets
        if not fresh:
            return
        self._secrets |= fresh
        forms: set[str] = set()
        for s in self._secrets:
            forms |= secret_forms(s)
        alts = sorted(forms, key=lambda f: (-len(f), f))  # longest first: a form inside another
        source = "|".join(_form_regex(f) for f in alts)
        self._pattern = re.compile(source)
        self._bytes_pattern = re.compile(source.encode("utf-8"))

    @property
    def active(self) -> bool:
        """Whether any secret is registered (nothing to do otherwise)."""
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        """Return ``text`` with every form of every secret replaced by :data:`MARKER`."""
        pattern = self._pattern
        if pattern is None or not text:
            return text
        return pattern.sub(MARKER, text)

    def redact_bytes(self, data: bytes) -> bytes:
        """:meth:`__call__` on UTF-8 bytes (a frame body, a log line), without decoding."""
        pattern = self._bytes_pattern
        if pattern is None or not data:
            return data
        return pattern.sub(MARKER.encode("ascii"), data)

    def deep(self, value: Any) -> Any:
        """``value`` (JSON-like: dicts, lists, strings, scalars) with every string redacted,
        keys included; other values unchanged. Returns ``value`` itself when no secret is set."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self(k) if isinstance(k, str) else k: self.deep(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.deep(v) for v in value]
        return value


class RedactingFilter(logging.Filter):
    """A logging filter that redacts every record it passes, at every level: the rendered
    message, the exception text and the stack text."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # args that do not format: log the template and the args' reprs, redacted
            message = f"{record.msg!s} {record.args!r}"
        redacted = self.redactor(message)
        if redacted != message or record.args:
            record.msg, record.args = redacted, None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = self.redactor(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = self.redactor(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor(record.stack_info)
        return True
