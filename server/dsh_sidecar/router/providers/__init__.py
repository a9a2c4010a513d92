"""The provider registry: every module of this package that is a
:class:`~dsh_sidecar.router.providers.base.Provider`, keyed by its ``ID`` and ordered by its
``POSITION`` (the seed's canonical auto-detection order).

Adding a provider is adding one module here; nothing else lists providers. Modules whose
name starts with ``_`` and :mod:`.base` are not providers.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from typing import Final

from dsh_sidecar.router.providers.base import Provider


def discover(paths: Iterable[str], package: str) -> dict[str, Provider]:
    """Import every provider module of ``package`` (found in ``paths``) and return them keyed
    by ``ID`` in ``POSITION`` order.

    Raises :class:`TypeError` when a module lacks a name of the :class:`Provider` protocol or
    two modules declare the same ``ID`` or ``POSITION``.
    """
    found: list[Provider] = []
    for info in pkgutil.iter_modules(list(paths)):
        if info.name == "base" or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        if not isinstance(module, Provider):
            raise TypeError(f"router provider module {info.name} does not declare the Provider protocol's names")
        found.append(module)
    found.sort(key=lambda p: p.POSITION)
    positions = [p.POSITION for p in found]
    ids = [p.ID for p in found]
    if len(set(positions)) != len(positions) or len(set(ids)) != len(ids):
        raise TypeError("router provider modules declare a duplicate ID or POSITION")
    return {p.ID: p for p in found}


#: Provider id → provider (module), in canonical order.
PROVIDERS: Final[dict[str, Provider]] = discover(__path__, __name__)
#: Canonical order of auto-detection (seed: "exa → tavily → brave → perplexity → deepseek →
#: searxng → duckduckgo"), from each provider's ``POSITION``: the providers a zero-config chain
#: may hold. A module with ``AUTO_DETECT = False`` (the offline docs index, ``local``) is
#: known (``order``, ``provider``) but never auto-detected.
CANONICAL_ORDER: Final[tuple[str, ...]] = tuple(pid for pid, p in PROVIDERS.items() if getattr(p, "AUTO_DETECT", True))
#: The offline docs index's id (:mod:`.local`): the chain's last resort where it is asked for.
LOCAL_ID: Final = "local"
#: Every provider id, auto-detected or not, in ``POSITION`` order (what a config may name).
KNOWN: Final[tuple[str, ...]] = tuple(PROVIDERS)
