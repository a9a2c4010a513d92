"""Opening the configured state backend and handing it to the cores (the composition root's part).

``state.backend: file`` (the default) opens nothing: every core keeps exactly its behaviour of
before (files under ``$DSH_HOME``, health and cache in memory). A Redis/Valkey URL opens one
:class:`~.redis_store.RedisState` per sidecar, shared by the router's health and cache, the
bandit's posteriors and the suggester's knowledge (see each module's "Fleet" paragraph).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh_sidecar.errors import ConfigError
from dsh_sidecar.state.config import StateConfig
from dsh_sidecar.state.keys import provider_identity
from dsh_sidecar.state.shared import SharedState

if TYPE_CHECKING:
    from dsh_sidecar.bandit import StrategyBandit
    from dsh_sidecar.router import Router
    from dsh_sidecar.suggester.knowledge import Knowledge


def open_state(config: StateConfig) -> SharedState | None:
    """The shared state of ``config`` (``None`` for ``file``). Connects lazily: a store that is
    down at start is not an error (the sidecar serves locally and re-syncs). Raises
    :class:`ConfigError` (``state.backend``) when redis-py is not installed."""
    if not config.shared:
        return None
    try:
        from dsh_sidecar.state.redis_store import RedisState
    except ImportError:
        raise ConfigError(
            "state.backend", "a Redis/Valkey backend needs redis-py: pip install 'dsh-search-sidecar[redis]'"
        ) from None
    return RedisState(config)


def share_router(router: Router, shared: SharedState | None) -> None:
    """Give ``router``'s health (cooldowns, rate windows) and cache the shared state. Providers
    are identified by id, endpoint and a digest of their key (:func:`~.keys.provider_identity`);
    a provider module's ``RATE_LIMIT = (requests, window seconds)`` (a documented limit) is
    enforced fleet-wide."""
    if shared is None:
        return
    identities = {s.id: provider_identity(s.id, s.base_url, s.api_key) for s in router.chain}
    limits: dict[str, tuple[int, float]] = {}
    for spec in router.chain:
        limit = getattr(router.modules.get(spec.id), "RATE_LIMIT", None)
        if isinstance(limit, tuple) and len(limit) == 2:
            limits[spec.id] = (int(limit[0]), float(limit[1]))
    router.health.share(shared, identities, limits)
    if router.cache is not None:
        router.cache.share(shared)


def share_bandit(bandit: StrategyBandit, shared: SharedState | None) -> None:
    """Keep ``bandit``'s posteriors in the shared state (not when ``persist: false``)."""
    if shared is not None and bandit.config.persist:
        bandit.store.share(shared, bandit.policy)


def share_knowledge(knowledge: Knowledge, shared: SharedState | None, workspace: Path | None) -> None:
    """Keep the suggester's knowledge and dismissals in the shared state under the repository
    identity of ``workspace`` (no workspace: nothing to key it by, the file as before)."""
    if shared is None or workspace is None:
        return
    from dsh_sidecar.workspace.identity import repository_identity

    knowledge.share(shared, repository_identity(workspace))


def state_status(shared: SharedState | None) -> dict[str, Any]:
    """``{backend, shared, available, …}`` for ``dsh/status`` (no password)."""
    if shared is None:
        return {"backend": "file", "shared": False, "available": True}
    return shared.status()
