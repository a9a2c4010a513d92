"""A router's health (cooldowns, rate windows) and result cache on the fleet's shared state
(docs/fleet.md): what each sidecar of a fleet shares with the others about the providers."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh_sidecar.state.keys import provider_identity

if TYPE_CHECKING:
    from dsh_sidecar.router.chain import Router
    from dsh_sidecar.state.shared import SharedState


def share_router(router: Router, shared: SharedState | None) -> None:
    """Give ``router``'s health (cooldowns, rate windows) and cache the shared state (docs/fleet.md).
    Providers are identified by id, endpoint and a digest of their key
    (:func:`~dsh_sidecar.state.keys.provider_identity`); a provider module's documented
    ``RATE_LIMIT`` is enforced fleet-wide as one request per the interval the router's pacer
    has in force (a paid plan's headers raise it)."""
    if shared is None:
        return
    identities = {s.id: provider_identity(s.id, s.base_url, s.api_key) for s in router.chain}

    def spacing(pid: str, limit: Any) -> Callable[[], tuple[int, float]]:
        return lambda: (1, router.pacer.interval(pid, limit))

    limits: dict[str, Callable[[], tuple[int, float]]] = {}
    for spec in router.chain:
        limit = getattr(router.modules.get(spec.id), "RATE_LIMIT", None)
        if limit is not None:  # one request per the spacing in force (router/pacing.py), fleet-wide
            limits[spec.id] = spacing(spec.id, limit)
    router.health.share(shared, identities, limits)
    if router.cache is not None:
        router.cache.share(shared)
