"""One module per provider, all of the same shape (see :mod:`.base`); this registry maps ids
to modules."""

from __future__ import annotations

from types import ModuleType

from dsh_sidecar.router.providers import brave, deepseek, duckduckgo, exa, perplexity, searxng, tavily

#: Provider id → module with ``build_request`` and ``parse_response``.
PROVIDERS: dict[str, ModuleType] = {
    module.ID: module for module in (exa, tavily, brave, perplexity, deepseek, searxng, duckduckgo)
}
