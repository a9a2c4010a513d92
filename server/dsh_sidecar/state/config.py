"""The ``state`` block of the sidecar config: where durable and shared state lives.

::

    state:
      backend: file                 # default: files under $DSH_HOME, one sidecar's memory (today)
      # backend: redis://:password@redis.internal:6379/0   (or rediss://, valkey://, valkeys://)
      timeoutMs: 50                 # longest a call waits on the store (connect, each command)
      retryMs: 1000                 # first wait before probing a store that went away (doubles to 30 s)

``valkey://`` / ``valkeys://`` are Valkey's spellings of ``redis://`` / ``rediss://`` (the
same RESP protocol; redis-py speaks to both). A URL's password is never echoed: errors and
``dsh/status`` show :func:`public_url`.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field, field_validator

from dsh_sidecar.configmodel import ConfigModel, parse_block

#: The default backend: today's files under ``$DSH_HOME``.
FILE: Final = "file"
#: URL schemes accepted for a shared store, and what redis-py is given instead.
SCHEMES: Final[dict[str, str]] = {"redis": "redis", "rediss": "rediss", "valkey": "redis", "valkeys": "rediss"}
#: Default bound on one store operation, milliseconds: a loopback or LAN round trip is
#: ~0.1–1 ms, so 50 ms only ever trips on a store that is down, partitioned or overloaded.
DEFAULT_TIMEOUT_MS: Final = 50
#: Default first back-off before probing a store that went away, milliseconds.
DEFAULT_RETRY_MS: Final = 1000


class StateConfig(ConfigModel):
    """``state``: the backend and the bounds on waiting for it."""

    backend: str = Field(default=FILE, min_length=1, max_length=2048, repr=False)
    """``file`` (default) or a ``redis://``/``rediss://``/``valkey://``/``valkeys://`` URL."""
    timeout_ms: int = Field(default=DEFAULT_TIMEOUT_MS, ge=1, le=5000)
    """Longest wait on the store per operation (socket connect and read), milliseconds."""
    retry_ms: int = Field(default=DEFAULT_RETRY_MS, ge=10, le=60_000)
    """First wait before probing a store that went away, milliseconds (doubles, capped at 30 s)."""

    @field_validator("backend")
    @classmethod
    def _backend(cls, value: str) -> str:
        if value == FILE:
            return value
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 (raises ValueError for a malformed port)
        except ValueError:
            raise ValueError("must be 'file' or a redis://, rediss://, valkey:// or valkeys:// URL") from None
        if parts.scheme not in SCHEMES or not (parts.hostname or parts.path):
            raise ValueError("must be 'file' or a redis://, rediss://, valkey:// or valkeys:// URL")
        return value

    @property
    def shared(self) -> bool:
        """Whether a shared store (not files) is configured."""
        return self.backend != FILE

    def redis_url(self) -> str:
        """The URL as redis-py takes it (``valkey`` schemes mapped to ``redis`` ones)."""
        parts = urlsplit(self.backend)
        return urlunsplit(parts._replace(scheme=SCHEMES[parts.scheme]))


def public_url(url: str) -> str:
    """``url`` without its user and password (for status, logs and errors)."""
    if url == FILE:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def parse_state_config(raw: Any) -> StateConfig:
    """Validate the ``state`` block (``None`` = defaults). Raises :class:`ConfigError` naming
    the key; the URL itself is never echoed (it may hold a password)."""
    return parse_block(StateConfig, raw, "state")
