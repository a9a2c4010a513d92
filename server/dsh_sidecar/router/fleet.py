"""What a search reads from the fleet's shared store (docs/fleet.md), off the event loop.

On a shared store a search that misses the local cache makes one read before its first attempt:
the fleet's cache entry and the cooldowns of the whole chain in one round trip
(:meth:`FleetReads.read`), on the store's read threads, so the event loop answers other calls
meanwhile. A store later than ``state.timeoutMs`` or :data:`~.budget.FLEET_WAIT_SHARE` of what is left
of the search's deadline (the providers keep the rest) is a miss with this process's cooldowns.
The cooldowns are read again before an attempt that comes more than :data:`FLEET_READ_S` after
that read (a chain whose first provider failed: :meth:`FleetReads.refresh`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from dsh_sidecar.router.budget import fleet_wait

if TYPE_CHECKING:
    from dsh_sidecar.router.cache import CachedAnswer, CacheKey, ResultCache
    from dsh_sidecar.router.health import ProviderHealth

#: How long the fleet's cooldowns read by a search answer its attempts, seconds: an attempt
#: later than this after the read (the providers before it failed) reads them again.
FLEET_READ_S: Final = 0.02


class FleetReads:
    """A router's reads of the fleet's store (module docstring); :attr:`at` is when the chain's
    cooldowns were last read (``time.monotonic()``)."""

    def __init__(self) -> None:
        self.at = float("-inf")

    async def read(
        self,
        health: ProviderHealth,
        cache: ResultCache | None,
        providers: Iterable[str],
        key: CacheKey | None,
        left_s: float,
    ) -> CachedAnswer | None:
        """The fleet's cache entry of ``key`` (``None``: none read) and the cooldowns of
        ``providers`` (adopted by ``health``), in one round trip on the store's read threads,
        awaited at most :func:`fleet_wait` of ``left_s``; a late or away store: a miss, this
        process's cooldowns."""
        name = json.dumps(key) if key is not None else None
        raw = await health.read_fleet(providers, fleet_wait(left_s), name)
        self.at = time.monotonic()
        if key is None or cache is None:
            return None
        return cache.adopt(key, raw)

    async def refresh(self, health: ProviderHealth, providers: Iterable[str], left_s: float) -> None:
        """Read the cooldowns again when the last read is older than :data:`FLEET_READ_S`."""
        if time.monotonic() - self.at > FLEET_READ_S:
            await self.read(health, None, providers, None, left_s)
