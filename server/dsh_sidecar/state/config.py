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

import re
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit, urlunsplit

from pydantic import Field, field_validator

from dsh_sidecar.configmodel import ConfigModel, parse_block
from dsh_sidecar.state.backends import DEFAULT_BACKEND, FILE, is_shared

#: URL schemes accepted for a shared store, and what redis-py is given instead.
SCHEMES: Final[dict[str, str]] = {"redis": "redis", "rediss": "rediss", "valkey": "redis", "valkeys": "rediss"}
#: Default bound on one store operation, milliseconds: a loopback or LAN round trip is
#: ~0.1–1 ms, so 50 ms only ever trips on a store that is down, partitioned or overloaded.
DEFAULT_TIMEOUT_MS: Final = 50
#: Default first back-off before probing a store that went away, milliseconds.
DEFAULT_RETRY_MS: Final = 1000
#: A URL's path: empty or the database number (redis-py reads ``/1/2`` as database 12 and
#: drops any other path silently; :func:`public_url` shows the path, so it must hold no secret).
_DB_PATH: Final = re.compile(r"/?[0-9]{0,5}")
#: Query options a URL may set (redis-py lets the URL's options override the client's, so
#: ``?socket_timeout=…`` would undo ``timeoutMs``; any other name is passed on as a keyword
#: the connection does not take). The ``ssl_`` options only on the TLS schemes.
URL_OPTIONS: Final = frozenset({"db", "username", "password", "protocol"})
TLS_URL_OPTIONS: Final = frozenset(
    {"ssl_cert_reqs", "ssl_ca_certs", "ssl_ca_path", "ssl_certfile", "ssl_keyfile", "ssl_check_hostname"}
)
_URL_ERROR: Final = "must be 'file' or a redis://, rediss://, valkey:// or valkeys:// URL"


class StateConfig(ConfigModel):
    """``state``: the backend and the bounds on waiting for it."""

    backend: str = Field(default=DEFAULT_BACKEND, min_length=1, max_length=2048, repr=False)
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
            raise ValueError(_URL_ERROR) from None
        if parts.scheme not in SCHEMES or not (parts.hostname or parts.path):
            raise ValueError(_URL_ERROR)
        if not _DB_PATH.fullmatch(parts.path):
            raise ValueError(f"{_URL_ERROR} (its path, if any, a database number: /0)")
        allowed = URL_OPTIONS | (TLS_URL_OPTIONS if SCHEMES[parts.scheme] == "rediss" else frozenset())
        try:
            options = parse_qs(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
        except ValueError:
            raise ValueError(f"{_URL_ERROR} (a malformed query)") from None
        if not set(options) <= allowed:  # names not echoed: a mistyped URL may put a secret there
            raise ValueError(
                f"{_URL_ERROR} whose query sets only {', '.join(sorted(allowed))}"
                " (timeouts and retries are state.timeoutMs and state.retryMs)"
            )
        if "db" in options and not all(v.isdigit() and v.isascii() for v in options["db"]):
            raise ValueError(f"{_URL_ERROR} (db, a database number)")
        return value

    @property
    def shared(self) -> bool:
        """Whether a shared store (not files) is configured."""
        return is_shared(self.backend)

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
