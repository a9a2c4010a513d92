"""The texts of a search that no provider answered, in a module that imports nothing: the
stdio transport answers a search whose deadline passes while the sidecar is still being built
with them (``lsp/handlers.py``), without importing the router the build is importing."""

from __future__ import annotations

from typing import Final

#: First line of the all-failed error, byte-exact (seed, "Fallback").
AGGREGATE_HEADER: Final = "search-router: all configured search providers failed:"
#: Each provider's outcome in a search not tried because its deadline had passed (before a turn
#: came, or the search path was ready).
DEADLINE_SKIP: Final = "skipped: deadline"
