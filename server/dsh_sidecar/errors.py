"""Errors shared by the cores: a config error that names its key, the one reading of a
pydantic validation error (:func:`first_problem`), and the request error the front ends answer
as JSON-RPC errors (:class:`RequestError`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dsh_protocol import ErrorCode

if TYPE_CHECKING:  # annotations only: `dsh-search serve` imports this before pydantic (cold start, SIGTERM)
    from pydantic import ValidationError


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


@dataclass(frozen=True)
class FieldProblem:
    """The first error of a pydantic ``ValidationError``, without the input value (a config
    value may be an API key, a request param a secret pasted by mistake).

    ``key`` is the dotted location joined onto the caller's prefix (``router.timeoutMs``, ``""``
    for the root), ``loc`` pydantic's raw location, ``reason`` pydantic's message (``Input
    should be a valid integer``) or the caller's word for an unknown key, ``more`` the count of
    further errors."""

    key: str
    loc: tuple[str | int, ...]
    reason: str
    more: int

    def message(self, noun: str = "") -> str:
        """``reason`` plus `` (and 2 more)`` (``noun`` ``"error"``: `` (and 2 more errors)``)."""
        if not self.more:
            return self.reason
        if not noun:
            return f"{self.reason} (and {self.more} more)"
        return f"{self.reason} (and {self.more} more {noun}{'s' if self.more > 1 else ''})"


def first_problem(exc: ValidationError, prefix: str = "", unknown: str = "unknown key") -> FieldProblem:
    """The one way the sidecar reads a pydantic ``ValidationError``: its first error as a
    :class:`FieldProblem` (``extra_forbidden`` worded as ``unknown``). Used for config blocks
    (:func:`config_error_from_pydantic`), JSON-RPC params (-32602), CLI flags and MCP hooks."""
    errors = exc.errors(include_input=False, include_url=False, include_context=False)
    first = errors[0]
    loc = tuple(first.get("loc", ()))
    reason = unknown if first.get("type") == "extra_forbidden" else first.get("msg", "invalid value")
    return FieldProblem(format_loc(prefix, loc), loc, reason, len(errors) - 1)


def config_error_from_pydantic(prefix: str, exc: ValidationError) -> ConfigError:
    """Turn a pydantic ``ValidationError`` into a :class:`ConfigError` for its first error
    (``router.timeoutMs: Input should be a valid integer (and 1 more error)``); values dropped."""
    problem = first_problem(exc, prefix)
    return ConfigError(problem.key, problem.message("error"))


class RequestError(Exception):
    """A request the client got wrong, raised by the sidecar and its cores and answered by the
    front ends (``lsp/handlers.py``, ``mcp/``) as a JSON-RPC error with ``code`` (by default
    -32602 "Invalid params") and ``message``, which names the field and never echoes a value."""

    def __init__(self, message: str, code: int = ErrorCode.INVALID_PARAMS) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message
