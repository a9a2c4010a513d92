"""One module per provider, all of the same shape (see :mod:`.base`); this registry maps ids
to modules."""

from __future__ import annotations

from types import ModuleType

from dsh_sidecar.router.providers import duckduckgo, searxng

#: Provider id → module with ``build_request`` and ``parse_response``.
PROVIDERS: dict[str, ModuleType] = {
    searxng.ID: searxng,
    duckduckgo.ID: duckduckgo,
}
