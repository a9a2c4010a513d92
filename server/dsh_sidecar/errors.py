"""Errors shared by the cores: a config error that names its key."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class ConfigError(ValueError):
    """A configuration value is invalid.

    ``key`` is the dotted path of the offending key as the user wrote it
    (``router.providers.searxng.baseUrl``); the message never contains the value itself, which
    may be a secret.
    """

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key
        self.reason = message


def format_loc(prefix: str, loc: Iterable[Any]) -> str:
    """Join a pydantic error location onto ``prefix`` as a dotted key (``router.timeoutMs``)."""
    parts = [prefix] if prefix else []
    for item in loc:
        parts.append(f"[{item}]" if isinstance(item, int) else str(item))
    return ".".join(parts).replace(".[", "[")


def config_error_from_pydantic(prefix: str, exc: Any) -> ConfigError:
    """Turn a pydantic ``ValidationError`` into a :class:`ConfigError` for its first error.

    Only the location and pydantic's message are kept: input values are dropped because a
    config value may be an API key.
    """
    errors = exc.errors(include_input=False, include_url=False, include_context=False)
    first = errors[0]
    key = format_loc(prefix, first.get("loc", ()))
    message = first.get("msg", "invalid value")
    if first.get("type") == "extra_forbidden":
        message = "unknown key"
    more = len(errors) - 1
    if more:
        message += f" (and {more} more error{'s' if more > 1 else ''})"
    return ConfigError(key, message)
