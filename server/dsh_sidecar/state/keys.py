"""The key layout of the shared store: every key under ``dsh:v1:``, every value with a TTL or a bound.

=================================================  ======  ==================================================
key                                                type    what / bound
=================================================  ======  ==================================================
``dsh:v1:cool:<provider>:<cred>``                  string  failure class; ``PX`` = the cooldown (≤ 1 day)
``dsh:v1:rate:<provider>:<cred>``                  zset    send times (ms) in the sliding window; ``PX`` = window
``dsh:v1:cache:<digest>``                          string  a cached answer (JSON, ≤ 1 MiB); ``EX`` = cache TTL
``dsh:v1:cache:index``                             zset    cache keys by insertion time: ≤ ``maxEntries``
``dsh:v1:bandit:n:<row>``                          hash    ``<arm>:updates``, ``<arm>:reward``: exact totals; 90 days
``dsh:v1:bandit:d:<γ>:<row>``                      hash    ``t`` (updates), ``<k>:<arm>:a|b`` bucket sums; ≤ 32 buckets; 90 days
``dsh:v1:know:<repo>:rows``                        hash    ``f|i|s:<intent>:<path>`` counts and seed; 90 days
``dsh:v1:know:<repo>:used``                        zset    ``<intent>:<path>`` by last use: ≤ 5000 rows (least recent evicted)
``dsh:v1:know:<repo>:dis``                         zset    ``<intent>:<path|*>`` by expiry: ≤ 1000, expired pruned
``dsh:v1:know:<repo>:ver``                         string  version counter (changes with every write); 90 days
``dsh:v1:op:<op id>``                              string  a write already applied (replays count once); 1 day
=================================================  ======  ==================================================

``<cred>`` is a one-way digest of the provider's endpoint and API key, so sidecars sharing a key
share its rate limit and cooldowns, sidecars with different keys do not, and no key appears in
the store. ``<repo>`` is a digest of the repository identity (root commit or remote, see
``workspace/identity.py``): a moved or re-cloned repository keeps its knowledge. ``<row>`` is a
query class (``bandit/context.py``) or ``global``; ``<γ>`` the discount, so sidecars configured
with different discounts keep separate discounted sums (the exact totals stay shared).
"""

from __future__ import annotations

import hashlib
from typing import Final

#: Prefix and format version of every key.
PREFIX: Final = "dsh:v1:"
#: TTL of learned state (bandit statistics, knowledge), seconds: refreshed on every write,
#: so only a repository or class nobody touched for 90 days is forgotten.
LEARNED_TTL_S: Final = 90 * 86_400
#: TTL of an applied-write marker, seconds (a replay older than this is not expected).
OP_TTL_S: Final = 86_400
#: Largest cached answer stored, bytes (bigger ones stay in the local cache only).
MAX_CACHE_VALUE_BYTES: Final = 1024 * 1024


def digest(*parts: str, size: int = 12) -> str:
    """A hex SHA-256 of ``parts`` (NUL-joined), ``size`` bytes: fixed-length, one-way."""
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[: 2 * size]


def provider_identity(provider: str, base_url: str, api_key: str | None) -> str:
    """``<provider>:<cred>``: what cooldowns and rate windows are shared by."""
    return f"{provider}:{digest('provider', provider, base_url, api_key or '')}"


def cooldown_key(identity: str) -> str:
    return f"{PREFIX}cool:{identity}"


def rate_key(identity: str) -> str:
    return f"{PREFIX}rate:{identity}"


#: Prefix of every cache entry (and of its index): the only keys the cache's eviction deletes.
CACHE_PREFIX: Final = f"{PREFIX}cache:"


def cache_key(key: str) -> str:
    return f"{CACHE_PREFIX}{digest('cache', key, size=16)}"


CACHE_INDEX: Final = f"{PREFIX}cache:index"


def bandit_counts_key(row: str) -> str:
    return f"{PREFIX}bandit:n:{row}"


def bandit_discounted_key(row: str, discount: float) -> str:
    return f"{PREFIX}bandit:d:{discount:.12g}:{row}"


#: A ``SCAN MATCH`` pattern of every bandit key above (every row, every discount).
BANDIT_PATTERN: Final = f"{PREFIX}bandit:*"


def repo_key(repo: str) -> str:
    """``dsh:v1:know:<digest of the repository identity>``."""
    return f"{PREFIX}know:{digest('repo', repo)}"


def op_key(op_id: str) -> str:
    return f"{PREFIX}op:{op_id}"
