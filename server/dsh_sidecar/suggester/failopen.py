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
                self.counters["errors"] += 1
                where = "; ".join(getattr(exc, "__notes__", ()))
                log.warning("search-suggester: %s%s", doing, f" ({where})" if where else "", exc_info=True)
                if forget_packs:
                    self.active = None
                return cast(R, default())

        return entry

    return wrap
