"""The search router core: one query → a chain of providers with fallback.

``config`` validates the seed's config block, ``chain`` walks the providers, ``providers/``
holds one module per backend, ``normalize`` turns raw items into sources, ``redact``
keeps secrets out of every text that leaves the router.
"""

from dsh_sidecar.router.chain import AllProvidersFailed, Router, RouterResult
from dsh_sidecar.router.config import RouterConfig, parse_router_config

__all__ = ["AllProvidersFailed", "Router", "RouterConfig", "RouterResult", "parse_router_config"]
