"""The status methods of :class:`~dsh_sidecar.sidecar.Sidecar`: ``dsh/status`` (chain and health,
posteriors, suggester counters, where state lives), the running-server status file's snapshot
(:mod:`dsh_sidecar.runstate`) and the fleet store's part of both."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from dsh_protocol import CacheStatus, ChainEntry, ProviderHealthStatus, RouterStatus, StateStatus, StatusResult

from dsh_sidecar import __version__
from dsh_sidecar.state.fleet import state_status

#: Longest ``dsh/status`` waits for the fleet's cooldowns, seconds (``state.timeoutMs`` bounds it too).
STATUS_READ_S: Final = 1.0

if TYPE_CHECKING:
    from dsh_sidecar.bandit import StrategyBandit
    from dsh_sidecar.config import SidecarConfig
    from dsh_sidecar.router import Router
    from dsh_sidecar.state.shared import SharedState
    from dsh_sidecar.suggester import Suggester, SuggesterConfig
    from dsh_sidecar.workspace.projection import WorkspaceProjection


class StatusMethods:
    """The status methods of the composition root, on the cores it holds (which
    :class:`~dsh_sidecar.sidecar.Sidecar` sets and replaces on a reconfiguration)."""

    router: Router
    bandit: StrategyBandit
    suggester: Suggester
    config: SidecarConfig
    projection: WorkspaceProjection
    shared: SharedState | None
    workspace: Path | None
    workspace_refused: str | None
    home: Path
    #: set when the first call is answered (the search path's preparation waits for it)
    _answered: threading.Event

    def _suggesting(self, cfg: SuggesterConfig) -> bool:
        raise NotImplementedError

    def status(self) -> StatusResult:
        """``dsh/status``: chain and health, posteriors, suggester counters, state paths (an
        answered call: the search path's preparation may start)."""
        self._answered.set()
        return StatusResult(
            version=__version__,
            workspace=str(self.workspace) if self.workspace else None,
            workspace_refused=self.workspace_refused or None,
            router=RouterStatus(
                chain=[ChainEntry.model_validate(c) for c in self.router.describe()],
                unavailable=list(self.router.missing),
                timeout_ms=self.config.router.timeout_ms,
                deadline_ms=self.config.router.deadline_ms,
                empty_results_fallback=self.config.router.empty_results_fallback,
                health=[ProviderHealthStatus.model_validate(h) for h in self.router.health_status()],
                cache=CacheStatus.model_validate(cache) if (cache := self.router.cache_status()) is not None else None,
            ),
            bandit=self.bandit.status(),
            suggester={**self.suggester.status(), "graph": self.projection.status()},
            state=StateStatus.model_validate({"dshHome": str(self.home), **self._fleet_status()}),
        )

    async def read_fleet_cooldowns(self) -> None:
        """Take the chain's cooldowns other sidecars started from the fleet's store, so that
        :meth:`status` says what this sidecar's next search would skip (on the store's read
        threads, awaited at most :data:`STATUS_READ_S` and ``state.timeoutMs``; a late or away
        store leaves what this process knows)."""
        await self.router.health.read_fleet([s.id for s in self.router.chain], STATUS_READ_S)

    def _run_snapshot(self) -> dict[str, Any]:
        """What the running-server status file carries (:mod:`dsh_sidecar.runstate`), read on
        its heartbeat thread: copies of the router's health and cache counts, the bandit's
        update counts and the suggester's counters, never :meth:`status` (which finishes the
        suggester's activation, the event-loop thread's work)."""
        router = self.router
        suggester = self.suggester
        return {
            "workspace": str(self.workspace) if self.workspace else None,
            "router": {
                "chain": router.describe(),
                "unavailable": list(router.missing),
                "health": router.health_status(),
                "cache": router.cache_status(),
            },
            "bandit": {"updates": dict(self.bandit.store.updates)},
            "suggester": {
                "enabled": self._suggesting(self.config.suggester),
                "counters": dict(suggester.counters),
            },
        }

    def _fleet_status(self) -> dict[str, Any]:
        """The shared store (none with the file backend: the status is as before) and what this
        process wrote to it (docs/fleet.md: the fleet test counts them)."""
        if self.shared is None:
            return {}
        return {
            **state_status(self.shared),
            "banditUpdates": self.bandit.store.fleet_updates,
            "knowledgeCounted": dict(self.suggester.knowledge.counted),
        }
