"""The answer-usage reward of ``dsh/searchFeedback`` (the bandit seed's "stronger version":
"score reward against whether the model's final answer actually used the returned sources").

The harness reports, after the answer, which URLs it used. For that search::

    usage  = 1 if any used URL is one of the search's returned sources (normalised URL) else 0
    reward = w * usage + (1 - w) * heuristic

``w`` is ``feedbackWeight`` (default :data:`DEFAULT_FEEDBACK_WEIGHT` = 0.5: relevance and
the seed's cost/coverage heuristic weighted equally, as the seed weights its two halves; 1.0
replaces the heuristic). The search was already credited with the heuristic when it ran;
feedback *re-credits* it by ``reward − credited`` (:func:`~.policy.apply_adjust`), so a
search counts once however many feedbacks arrive.

Searches wait for feedback in a bounded map (:class:`PendingSearches`): the newest
``max_pending`` for at most ``ttl_s`` seconds; older ones are dropped (then feedback is
refused with an error naming ``searchId``).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from dsh_sidecar.errors import RequestError

#: Default weight of the usage half of the feedback reward (see module docstring).
DEFAULT_FEEDBACK_WEIGHT: Final = 0.5
#: Default searches kept waiting for feedback.
DEFAULT_MAX_PENDING: Final = 1000
#: Default seconds a search waits for its feedback (an agent turn rarely lasts an hour).
DEFAULT_TTL_S: Final = 3600.0


def usage_reward(used: bool, heuristic: float, weight: float = DEFAULT_FEEDBACK_WEIGHT) -> float:
    """``weight * used + (1 - weight) * heuristic``, in [0, 1]."""
    return weight * (1.0 if used else 0.0) + (1.0 - weight) * min(max(heuristic, 0.0), 1.0)


class UnknownSearch(RequestError):
    """Feedback for a ``searchId`` that was never returned, or was dropped (too old): the
    client's error, answered -32602 naming ``searchId``."""


@dataclass
class PendingSearch:
    """One search awaiting feedback: its class, arm, heuristic reward, the reward it is
    currently credited with, its returned sources' URLs (as returned: normalised when feedback
    arrives, not on every search), and when it ran (``time.monotonic()`` seconds)."""

    query_class: str
    arm: str
    heuristic: float
    credited: float
    urls: frozenset[str]
    at: float


class PendingSearches:
    """The bounded map ``searchId → PendingSearch`` (oldest dropped first)."""

    def __init__(
        self,
        max_pending: int = DEFAULT_MAX_PENDING,
        ttl_s: float = DEFAULT_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_pending = max_pending
        self.ttl_s = ttl_s
        self.clock = clock
        self._items: OrderedDict[str, PendingSearch] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def add(self, search_id: str, query_class: str, arm: str, heuristic: float, urls: Iterable[str]) -> None:
        """Remember a search (its reward so far is the heuristic)."""
        self._items[search_id] = PendingSearch(query_class, arm, heuristic, heuristic, frozenset(urls), self.clock())
        self._items.move_to_end(search_id)
        while len(self._items) > self.max_pending:
            self._items.popitem(last=False)

    def get(self, search_id: str) -> PendingSearch:
        """The pending search. Raises :class:`UnknownSearch` (message names ``searchId``)."""
        now = self.clock()
        while self._items:
            oldest_id, oldest = next(iter(self._items.items()))
            if now - oldest.at <= self.ttl_s:
                break
            del self._items[oldest_id]
        item = self._items.get(search_id)
        if item is None:
            raise UnknownSearch(
                f"searchId: unknown or expired search {search_id[:64]!r} (feedback is accepted for the "
                f"last {self.max_pending} searches within {self.ttl_s:g} s)"
            )
        return item
