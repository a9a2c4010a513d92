"""The search router core: one query → a chain of providers with fallback.

``config`` validates the seed's config block, ``chain`` walks the providers (fallback, the
whole-search deadline), ``http`` does one bounded HTTP exchange (timeouts, capped reads and
decompression, cancellation), ``providers/`` holds one module per backend, each its whole
definition (descriptor, request builder, parser; found by the registry), ``normalize`` turns
raw items into sources, ``health`` keeps per-provider failures and cooldowns, ``cache`` the
recent answers, ``redact`` keeps secrets out of every text that leaves the router.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_sidecar.lazy import lazy_exports

if TYPE_CHECKING:
    from dsh_sidecar.router.chain import AllProvidersFailed, Router, RouterResult
    from dsh_sidecar.router.config import RouterConfig, parse_router_config

#: Where each public name lives; each is imported on first use (PEP 562), so importing one
#: submodule (the config parser a server's ``initialize`` needs) does not import the whole core.
_EXPORTS = {
    "AllProvidersFailed": "chain",
    "Router": "chain",
    "RouterResult": "chain",
    "RouterConfig": "config",
    "parse_router_config": "config",
}

__all__ = ["AllProvidersFailed", "Router", "RouterConfig", "RouterResult", "parse_router_config"]


__getattr__ = lazy_exports(__name__, _EXPORTS)
