"""The raw config document (a ``--config`` file's, a client's ``initializationOptions``) before
the models validate it, and what ``initialize`` checks before its reply; no pydantic here.

:func:`merge_options` lays the client's options over the ``--config`` file's. A document with
nothing in it (:func:`is_empty`: absent, ``null`` or ``{}``) is every default, so ``initialize``
checks it with :func:`preflight_defaults`, which reads the defaults the config models' fields
read too (the router's :data:`~dsh_sidecar.router.resolve.DEFAULT_PROVIDER`,
:data:`~dsh_sidecar.router.resolve.DEFAULT_ORDER` and
:data:`~dsh_sidecar.router.resolve.DEFAULT_PROVIDERS`, the state's
:data:`~dsh_sidecar.state.backends.DEFAULT_BACKEND`) and imports no pydantic: pydantic and the
models (~0.1 s) are imported after the reply, when the :class:`~dsh_sidecar.sidecar.Sidecar`
is built (cold start). Any other document is validated first and checked with
:func:`preflight_of`; both give the same :class:`Preflight` and raise the same errors for the
same environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from dsh_sidecar.config import SidecarConfig
    from dsh_sidecar.errors import ConfigError
    from dsh_sidecar.router.resolve import ProviderSpec

__all__ = [
    "Preflight",
    "is_empty",
    "merge_options",
    "preflight_defaults",
    "preflight_of",
]

#: Keys of the router block that exclude each other: an override giving one drops the other.
_ALTERNATIVES: Final = {"router": ("provider", "order")}


def merge_options(base: Any, override: Any) -> Any:
    """``override`` (a client's ``initializationOptions``) laid over ``base`` (the
    ``dsh-search serve --config`` file): objects merge key by key, recursively; any other value
    of ``override`` replaces the base's. In ``router``, ``provider`` and ``order`` are
    alternatives: an override naming one drops the other from the base. ``None`` on either
    side is the other side unchanged. Nothing is validated here
    (:func:`~dsh_sidecar.config.parse_config` does)."""
    if base is None:
        return override
    if override is None:
        return base
    if not isinstance(base, Mapping) or not isinstance(override, Mapping):
        return override
    out = dict(base)
    for key, value in override.items():
        if key in out and isinstance(out[key], Mapping) and isinstance(value, Mapping):
            merged = dict(merge_options(out[key], value))
            pair = _ALTERNATIVES.get(str(key))
            if pair:
                for mine, other in (pair, pair[::-1]):
                    if mine in value and other not in value:
                        merged.pop(other, None)
            out[key] = merged
        else:
            out[key] = value
    return out


def is_empty(raw: Any) -> bool:
    """Whether the config document ``raw`` sets nothing (``None`` or an empty object), so that
    :func:`~dsh_sidecar.config.parse_config` of it is every default."""
    return raw is None or (isinstance(raw, Mapping) and not raw)


@dataclass(frozen=True)
class Preflight:
    """What ``initialize`` checks and keeps before its reply: the router's chain resolved
    against the environment (``chain``, as :func:`~dsh_sidecar.router.config.resolve_chain`
    gives it), every secret it holds for the log filter (``secrets``,
    :func:`~dsh_sidecar.router.resolve.secrets_of`), and whether the state backend is a shared
    store (``shared_state``: the sidecar is then built before the reply, since opening the store
    can refuse the config)."""

    chain: tuple[ProviderSpec, ...]
    secrets: tuple[str, ...]
    shared_state: bool


def preflight_defaults(env: Mapping[str, str]) -> Preflight:
    """The :class:`Preflight` of a config with every default (an empty document), against
    ``env``, without importing pydantic: equal to ``preflight_of(parse_config(None), env)``.
    A malformed base URL or key in the environment skips its provider, as the router does
    (the router logs it when it is built)."""
    from dsh_sidecar.router.resolve import (
        DEFAULT_ORDER,
        DEFAULT_PROVIDER,
        DEFAULT_PROVIDERS,
        resolve_chain_of,
        secrets_of,
    )
    from dsh_sidecar.state.backends import DEFAULT_BACKEND, is_shared

    problems: dict[str, ConfigError] = {}
    chain, _missing = resolve_chain_of(DEFAULT_PROVIDER, DEFAULT_ORDER, DEFAULT_PROVIDERS, env, problems)
    return Preflight(tuple(chain), tuple(secrets_of(chain)), is_shared(DEFAULT_BACKEND))


def preflight_of(config: SidecarConfig, env: Mapping[str, str]) -> Preflight:
    """The :class:`Preflight` of a validated ``config`` against ``env``.

    A malformed base URL or key in the environment skips its provider (the router logs it when it is built)."""
    from dsh_sidecar.router.config import resolve_chain, secrets_of

    problems: dict[str, ConfigError] = {}
    chain, _missing = resolve_chain(config.router, env, problems)
    return Preflight(tuple(chain), tuple(secrets_of(chain)), config.state.shared)
