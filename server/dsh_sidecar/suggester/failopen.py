"""One fail-open policy for every entry point of the suggester: an internal error counts in
``errors``, logs a warning and answers silence (the tool call is never broken by it)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, cast

log = logging.getLogger("dsh_sidecar.suggester.service")  # the name its lines always had

P = ParamSpec("P")
R = TypeVar("R")


class Entry(Protocol):
    """What :func:`fail_open` touches of the suggester: its counters and its active packs."""

    counters: dict[str, int]
    active: Any


S = TypeVar("S", bound=Entry)


def fail_open(
    default: Callable[[], object], doing: str, forget_packs: bool = False
) -> Callable[[Callable[Concatenate[S, P], R]], Callable[Concatenate[S, P], R]]:
    """Make an entry point of the suggester (:class:`~dsh_sidecar.suggester.service.Suggester`) fail open: an exception counts in ``errors``, is
    logged (``doing``, and the trigger it happened in, when one raised) and the entry point
    returns ``default()``, its answer for "nothing" (``[]``, ``None``); ``forget_packs`` drops
    the packs too (read again at the next call)."""

    def wrap(fn: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
        @functools.wraps(fn)
        def entry(self: S, *args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(self, *args, **kwargs)
            except Exception as exc:
                return cast(R, failed(self, doing, exc, default, forget_packs))

        return entry

    return wrap


def failing_open(suggester: Entry, doing: str, default: Callable[[], R], fn: Callable[[], R]) -> R:
    """``fn()`` under :func:`fail_open`'s policy, for a step of a suggester's answer taken
    outside its entry points (the sidecar adding the task lead owed to a session): an exception
    counts in ``suggester``'s ``errors``, is logged (``doing``) and ``default()`` is returned."""
    try:
        return fn()
    except Exception as exc:
        return failed(suggester, doing, exc, default)


def failed(suggester: Entry, doing: str, exc: BaseException, default: Callable[[], R], forget_packs: bool = False) -> R:
    """The fail-open policy's answer to ``exc``: ``errors`` +1, a warning naming ``doing`` (and
    the trigger it happened in, when one raised), the packs dropped when ``forget_packs``, and
    ``default()``."""
    suggester.counters["errors"] += 1
    where = "; ".join(getattr(exc, "__notes__", ()))
    log.warning("search-suggester: %s%s", doing, f" ({where})" if where else "", exc_info=exc)
    if forget_packs:
        suggester.active = None
    return default()
