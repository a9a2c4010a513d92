"""The result cache: recent successful answers, so a repeated search costs no provider call.

TTL plus a bounded LRU (``cachetools.TTLCache``, which evicts the least recently used entry
when full). The key is the normalised query (case-folded, whitespace runs folded, ends
trimmed), ``maxResults`` and the chain (provider ids and endpoints): a different chain is a
different answer. Only answers with sources are stored; failures and empty answers never are
(an outage or an empty web must be asked again). A hit is reported as one attempt
``{provider: <the provider that answered>, outcome: "ok (cached)", ms: 0}`` so a caller can
tell it apart from a fresh answer.

**Fleet** (docs/fleet.md): with a shared state (:meth:`ResultCache.share`) an answer is also stored
there (``SET NX EX``: the first sidecar's answer wins, same TTL, the store bounded to
``maxEntries``), and a local miss asks the store, so one sidecar's answer serves the fleet.
What the store returns is validated like a provider answer; anything malformed is a miss. A
search on the event loop reads the store off the loop (the router's fleet read, with the chain's
cooldowns) and hands the entry to :meth:`ResultCache.adopt`; a store that is late is a miss.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

if TYPE_CHECKING:
    from cachetools import TTLCache
    from dsh_protocol import Source

    from dsh_sidecar.state.shared import SharedState

#: Outcome of the single attempt reported for a cache hit.
CACHED_OUTCOME: Final = "ok (cached)"
#: Default time to live, seconds: short, so a cache never hides news for long.
DEFAULT_TTL_S: Final = 300
#: Default number of entries kept.
DEFAULT_MAX_ENTRIES: Final = 256

CacheKey = tuple[str, int, tuple[tuple[str, str], ...]]


def normalise_query(query: str) -> str:
    """Case-fold, fold whitespace runs to one space, trim."""
    return " ".join(query.casefold().split())


@dataclass(frozen=True)
class CachedAnswer:
    """What a hit gives back: the answer of ``provider``."""

    sources: tuple[Source, ...]
    truncated: bool
    provider: str
    content: str | None


class ResultCache:
    """TTL + LRU cache of answers. ``clock`` returns monotonic seconds (injectable)."""

    def __init__(
        self,
        ttl_s: float = DEFAULT_TTL_S,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from cachetools import TTLCache  # here: the config parser reads this module's defaults only

        self._cache: TTLCache[CacheKey, CachedAnswer] = TTLCache(maxsize=max_entries, ttl=ttl_s, timer=clock)
        self.hits = 0
        self.misses = 0
        self.shared: SharedState | None = None

    def share(self, shared: SharedState | None) -> None:
        """Also keep answers in ``shared`` (``None``: this process only)."""
        self.shared = shared

    @staticmethod
    def key(query: str, max_results: int, chain: tuple[tuple[str, str], ...]) -> CacheKey:
        """The cache key of one search."""
        return (normalise_query(query), max_results, chain)

    def get(self, key: CacheKey) -> CachedAnswer | None:
        """The live entry for ``key`` (refreshing its LRU position), else ``None``."""
        answer = self._cache.get(key)
        if answer is None and self.shared is not None:
            answer = _decode(self.shared.cache_get(json.dumps(key)), {pid for pid, _url in key[2]})
            if answer is not None:
                self._cache[key] = answer
        if answer is None:
            self.misses += 1
        else:
            self.hits += 1
        return answer

    def peek(self, key: CacheKey) -> CachedAnswer | None:
        """The live local entry for ``key`` (refreshing its LRU position), not counted and
        without asking the shared store (:meth:`adopt` takes what it holds)."""
        return self._cache.get(key)

    def adopt(self, key: CacheKey, raw: bytes | None) -> CachedAnswer | None:
        """The shared store's entry ``raw`` for ``key`` as an answer (kept locally), ``None``
        when absent or malformed."""
        answer = _decode(raw, {pid for pid, _url in key[2]})
        if answer is not None:
            self._cache[key] = answer
        return answer

    def count(self, hit: bool) -> None:
        """Count one lookup (:meth:`get` counts its own)."""
        if hit:
            self.hits += 1
        else:
            self.misses += 1

    def put(self, key: CacheKey, answer: CachedAnswer) -> None:
        """Store a successful answer (callers never store failures or empty answers)."""
        if answer.sources:
            self._cache[key] = answer
            if self.shared is not None:
                value = json.dumps(_encode(answer), separators=(",", ":")).encode()
                self.shared.cache_put(json.dumps(key), value, self._cache.ttl, int(self._cache.maxsize))

    def __len__(self) -> int:
        return len(self._cache)

    def status(self) -> dict[str, int]:
        """``{entries, hits, misses}`` for ``dsh/status``."""
        self._cache.expire()
        return {"entries": len(self._cache), "hits": self.hits, "misses": self.misses}


def _encode(answer: CachedAnswer) -> dict[str, Any]:
    return {
        "sources": [s.model_dump(mode="json", by_alias=True, exclude_none=True) for s in answer.sources],
        "truncated": answer.truncated,
        "provider": answer.provider,
        "content": answer.content,
    }


def _decode(raw: bytes | None, providers: set[str]) -> CachedAnswer | None:
    """A shared entry back into an answer; ``None`` for anything malformed (untrusted store),
    or answered by a provider that is not one of ``providers`` (the chain's ids, which the
    entry's key names: a planted provider name with a terminal sequence and a line break was
    the attempt's provider in the answer, raw)."""
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        from dsh_protocol import Source  # the wire models are not needed to parse the config

        sources = tuple(Source.model_validate(s) for s in data["sources"])
        content = data.get("content")
        if not sources or data["provider"] not in providers or not (content is None or isinstance(content, str)):
            return None
        return CachedAnswer(sources, bool(data["truncated"]), data["provider"], content)
    except (ValueError, TypeError, KeyError, ValidationError, RecursionError):  # "[" x 1 MiB: too deep
        return None
