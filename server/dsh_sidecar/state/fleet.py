"""Opening the configured state backend (the composition root, ``sidecar/``, hands it to the
cores: the state layer imports none of them).

``state.backend: file`` (the default) opens nothing: every core keeps exactly its behaviour of
before (files under ``$DSH_HOME``, health and cache in memory). A Redis/Valkey URL opens one
:class:`~.redis_store.RedisState` per sidecar, shared by the router's health and cache, the
bandit's posteriors and the suggester's knowledge (see each module's "Fleet" paragraph).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from dsh_sidecar.errors import ConfigError

if TYPE_CHECKING:  # the shared stores' interface: imported by a backend that opens one
    from dsh_sidecar.state.config import StateConfig
    from dsh_sidecar.state.shared import SharedState


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


#: Shortest wait per store command of an administrative call (``dsh-search bandit reset``),
#: milliseconds: it is on no call's path, and a store that fsyncs every write on a loaded
#: machine answers later than the 50 ms (``state.timeoutMs``'s default) a search may wait.
ADMIN_TIMEOUT_MS: Final = 5000


def open_admin_state(config: StateConfig) -> SharedState | None:
    """:func:`open_state` for an administrative command: each store command waits up to
    :data:`ADMIN_TIMEOUT_MS` (or ``config.timeout_ms`` when longer)."""
    return open_state(config.model_copy(update={"timeout_ms": max(config.timeout_ms, ADMIN_TIMEOUT_MS)}))


def state_status(shared: SharedState | None) -> dict[str, Any]:
    """``{backend, shared, available, …}`` for ``dsh/status`` (no password)."""
    if shared is None:
        return {"backend": "file", "shared": False, "available": True}
    return shared.status()
