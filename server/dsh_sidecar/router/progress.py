"""Per-attempt progress: who is told when the chain records a provider attempt.

A front end that reports progress (MCP ``notifications/progress`` for ``web_search``) sets
an observer for the duration of one search with :func:`observe_attempts`; the chain's
attempt list (:class:`ObservedAttempts`) calls it once per recorded attempt. The observer is
a :class:`contextvars.ContextVar`, so concurrent searches (the thorough arm's variants, two
requests at once) each report to their own caller and the router core knows no protocol.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from dsh_protocol import Attempt

log = logging.getLogger(__name__)

AttemptObserver = Callable[[Attempt], None]

_observer: ContextVar[AttemptObserver | None] = ContextVar("dsh_attempt_observer", default=None)


class ObservedAttempts(list[Attempt]):
    """A plain ``list`` of attempts that also tells the current observer of each append.

    An observer that raises is logged and ignored: progress never fails a search."""

    def append(self, attempt: Attempt) -> None:
        super().append(attempt)
        observer = _observer.get()
        if observer is not None:
            try:
                observer(attempt)
            except Exception:
                log.warning("router: attempt observer failed; ignored", exc_info=True)


@contextlib.contextmanager
def observe_attempts(observer: AttemptObserver) -> Iterator[None]:
    """Call ``observer(attempt)`` for every provider attempt recorded inside the block
    (tasks created inside it inherit the observer)."""
    token = _observer.set(observer)
    try:
        yield
    finally:
        _observer.reset(token)
