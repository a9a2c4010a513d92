"""Per-session tables bounded by recency: the one rule every such table keeps (a session's entry
is its newest, the oldest dropped first past the bound), so a client that opens sessions without
end never grows one (standard library only, so the servers' start can use it). Caches and id
sets bounded the same way use it too (a claim or a first-writer-wins entry is remembered only
when new; a cache hit that keeps its place is not remembered again). A table whose eviction
does more than forget (``fsguard``'s open folders close a descriptor) keeps its own loop."""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def remember(table: OrderedDict[K, V], key: K, value: V, limit: int) -> None:
    """Set ``table[key] = value`` as its newest entry, then drop the oldest past ``limit``."""
    table.pop(key, None)
    table[key] = value
    while len(table) > limit:
        table.popitem(last=False)
