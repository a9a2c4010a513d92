"""The router seed's ``web_search`` on a :class:`~dsh_sidecar.router.chain.Router` alone: one
query through the chain, the first provider that answers, no strategy and no bandit. The
composition root answers ``dsh/routeSearch`` and ``web_search`` with it, and the MCP server
answers a ``web_search`` that comes before the rest of the sidecar is built with the router
built first (``mcp/server.py``), so the two answers are the same function."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from dsh_sidecar.escape import for_model, source_for_model

if TYPE_CHECKING:
    from dsh_sidecar.router.chain import Router, RouterResult


async def route(router: Router, query: str, max_results: int, deadline_ms: int | None = None) -> RouterResult:
    """One query through ``router``'s chain, with the router seed's rule for an answer with no
    sources: unless ``emptyResultsFallback`` is false, the seed's aggregated error (every
    provider failed or answered empty). Raises :class:`~dsh_sidecar.router.AllProvidersFailed`."""
    out = await router.search(query, max_results, deadline_ms)
    if not out.sources and router.config.empty_results_fallback:
        raise router.empty_as_failure(out)
    return out


async def web_search(router: Router, query: str, max_results: int) -> RouterResult:
    """:func:`route` with every provider text through :func:`~dsh_sidecar.escape.for_model`
    (the answer reaches the model). Raises :class:`~dsh_sidecar.router.AllProvidersFailed`."""
    out = await route(router, query, max_results)
    return replace(
        out,
        sources=[source_for_model(s) for s in out.sources],
        content=for_model(out.content) if out.content is not None else None,
    )
