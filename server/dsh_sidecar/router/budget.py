"""A search's time budget: what its deadline keeps back to compose and send the answer
(:func:`deadline_reserve_ms`), and how much of what is left it may wait for the fleet's store
(:func:`fleet_wait`); the rest is its providers'. The chain (:mod:`.chain`) spends it.

**A fair budget** (:data:`MIN_ATTEMPT_MS`): a provider is asked only with at least that much of
the deadline left. With less, the attempt is not made (``skipped: deadline``, an outage: the
bandit learns nothing), whatever ate the time: the providers before it, a wait for a turn at
the providers (:mod:`.admission`), the search path's preparation or a rate-limit spacing wait
(:mod:`.pacing`). So a timeout is blamed on a provider (class ``timeout``: a real outcome, the
arm scores 0) only when the provider had a fair budget; our own queueing never counts against
an arm (a waiter handed its turn with 1 ms left used to call its provider and end ``timeout
after 1ms (deadline)``, counted against the arm: the thorough arm, taking more turns, most).
"""

from __future__ import annotations

import time
from typing import Final

#: Time kept back from a search's deadline to compose and send its answer, milliseconds: the
#: last attempt's budget ends this long before the deadline. What it covers, measured with
#: ``bench/deadlines.py`` (two CPU burners on the 2-core reference machine, load average 11-15,
#: the workspace's files changing every 200 ms so the graph, content index and suggester
#: re-prepare in the background) with no reserve at all: a reply came p50 25 ms, p90 104 ms,
#: max 279 ms (n=90, both arms) after a 1 s deadline. That is the attempt's timer firing late
#: (the event loop's thread waits for a CPU and for the GIL, which the background threads hold
#: in 5 ms turns) plus composing the answer: the aggregated error, the bandit's update, log
#: line and decision record, the escape pass, the frame (2-5 ms warm; 30-45 ms the first time
#: a process does it, the first window/logMessage and decision write included). 250 ms covers
#: every such reply measured, and the machine's own floor (a stdio echo child under the same
#: load: p99 ~20 ms, max ~250 ms); it is 5% of a 5 s deadline, 0.4% of the default 60 s.
DEADLINE_RESERVE_MS: Final = 250
#: Largest share of a short deadline the reserve takes (a 100 ms deadline keeps 90 ms for
#: its providers, not none).
DEADLINE_RESERVE_SHARE: Final = 0.1
#: Largest share of what is left of a search's deadline that it waits for the fleet's store
#: (on top of ``state.timeoutMs``): a store that is slow but alive leaves the providers the rest.
FLEET_WAIT_SHARE: Final = 0.5
#: Least budget a provider is asked with, milliseconds (see the module docstring): half the
#: shortest deadline a search may have (100 ms, whose providers get 90: its first attempt is
#: always made), twice the event loop's median lateness under load measured for
#: :data:`DEADLINE_RESERVE_MS` (25 ms): below it a timeout says more of our scheduling than of
#: the provider. Under every ``timeoutMs`` (at least 100).
MIN_ATTEMPT_MS: Final = 50


def deadline_reserve_ms(deadline_ms: float) -> float:
    """Milliseconds of a ``deadline_ms`` deadline kept back to compose and send the answer:
    :data:`DEADLINE_RESERVE_MS`, at most :data:`DEADLINE_RESERVE_SHARE` of the deadline."""
    return min(DEADLINE_RESERVE_MS, deadline_ms * DEADLINE_RESERVE_SHARE)


def fleet_wait(left_s: float) -> float:
    """Longest a search with ``left_s`` seconds left waits for the fleet's store, seconds."""
    return left_s * FLEET_WAIT_SHARE


def fair(budget_ms: float) -> bool:
    """Whether a provider may be asked with ``budget_ms`` milliseconds (:data:`MIN_ATTEMPT_MS`)."""
    return budget_ms >= MIN_ATTEMPT_MS


def ms_since(t0: float) -> int:
    """Whole milliseconds since ``t0`` (``time.monotonic()``): an attempt's duration."""
    return int((time.monotonic() - t0) * 1000)
