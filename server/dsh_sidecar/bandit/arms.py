"""The two strategies (arms) of the bandit seed, run over the router.

``quick``: one query, at most :data:`QUICK_MAX` results. ``thorough``: the original query
plus two reframed variants (:mod:`.variants`) run **concurrently**, merged and de-duplicated
by normalised URL, at most :data:`THOROUGH_MAX` results.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from dsh_sidecar.bandit.variants import reframe

if TYPE_CHECKING:  # the arm sizes below are read by the config parser, before the router is imported
    from dsh_protocol import Attempt, Source

    from dsh_sidecar.router import Router, RouterResult

#: Seed: quick is "a single search query, capped at 5 results".
QUICK_MAX: Final = 5
#: Seed: thorough is "capped at 10 results".
THOROUGH_MAX: Final = 10


@dataclass
class ArmResult:
    """What one arm produced: merged sources, whether a cap dropped any, every attempt."""

    sources: list[Source]
    truncated: bool
    attempts: list[Attempt]
    content: str | None = None


#: What keeps a URL off :func:`normalise_url`'s plain path: a query or fragment (parsed), and in
#: the host part user info, a port or an IPv6 literal.
_NOT_PLAIN: Final = frozenset("?#")
_NOT_PLAIN_HOST: Final = frozenset("@:[]")


def _plain_key(url: str) -> str | None:
    """:func:`normalise_url` of a plain ``http(s)://host/path`` URL (printable ASCII, no query,
    fragment, user info, port or IPv6 literal: most answers' URLs) without ``urlsplit``, which
    re-parses the host part for each of ``hostname`` and ``port`` (~8 µs a URL, five or ten a
    search); ``None`` for any other URL. The same key as the general path
    (tests/unit/bandit/test_bandit.py checks both on every kind of URL)."""
    if url.startswith("https://"):
        scheme, rest = "https", url[8:]
    elif url.startswith("http://"):
        scheme, rest = "http", url[7:]
    else:
        return None
    if not (url.isascii() and url.isprintable()) or not _NOT_PLAIN.isdisjoint(rest):
        return None
    host, slash, path = rest.partition("/")
    if not host or not _NOT_PLAIN_HOST.isdisjoint(host):
        return None
    return f"{scheme}://{host.lower()}{(slash + path).rstrip('/')}"


def normalise_url(url: str) -> str:
    """The key URLs are de-duplicated on across variants: scheme and host lower-cased, a
    default port, the fragment, ``utm_*`` parameters and a trailing ``/`` removed."""
    plain = _plain_key(url)
    return plain if plain is not None else _parsed_key(url)


def _parsed_key(url: str) -> str:
    """:func:`normalise_url` of any URL, through ``urlsplit``."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # a malformed host part or port (a provider's answer, a client's report): as it is
        return url
    host = (parts.hostname or "").lower()
    if port and not ((parts.scheme == "http" and port == 80) or (parts.scheme == "https" and port == 443)):
        host = f"{host}:{port}"
    query = ""  # no query (most URLs): nothing to parse and re-encode
    if parts.query:
        kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not k.startswith("utm_")]
        query = urlencode(kept)
    path = parts.path.rstrip("/") or ""
    return urlunsplit((parts.scheme.lower(), host, path, query, ""))


async def run_quick(router: Router, query: str, cap: int, deadline_ms: int | None) -> ArmResult:
    """One router search. Raises :class:`AllProvidersFailed` when the chain fails."""
    res = await router.search(query, cap, deadline_ms)
    return ArmResult(res.sources, res.truncated, res.attempts, res.content)


async def run_thorough(router: Router, query: str, cap: int, deadline_ms: int | None) -> ArmResult:
    """The variants concurrently, merged in variant order (original first), de-duplicated
    by :func:`normalise_url`. Raises the original query's :class:`AllProvidersFailed` only
    when every variant failed."""
    from dsh_sidecar.router import AllProvidersFailed

    variants = reframe(query)
    results = await asyncio.gather(*(router.search(v, cap, deadline_ms) for v in variants), return_exceptions=True)
    answered: list[RouterResult | AllProvidersFailed] = []  # variant order; a failure carries its attempts too
    for r in results:
        if isinstance(r, BaseException) and not isinstance(r, AllProvidersFailed):
            raise r
        answered.append(r)
    ok = [r for r in answered if not isinstance(r, AllProvidersFailed)]
    attempts = [a for r in answered for a in r.attempts]
    if not ok:
        first = results[0]
        assert isinstance(first, AllProvidersFailed)
        outage = all(isinstance(r, AllProvidersFailed) and r.outage for r in results)
        raise AllProvidersFailed(first.message, attempts, outage=outage)
    sources, truncated = merge([r.sources for r in ok], cap)
    content = next((r.content for r in ok if r.content), None)
    return ArmResult(sources, truncated or any(r.truncated for r in ok), attempts, content)


def merge(runs: list[list[Source]], cap: int) -> tuple[list[Source], bool]:
    """The sources of ``runs`` in run order (the original query's first), de-duplicated by
    :func:`normalise_url` and cut to ``cap``; ``True`` when the cut dropped any."""
    seen: set[str] = set()
    merged: list[Source] = []
    for sources in runs:
        for s in sources:
            key = normalise_url(s.url)
            if key not in seen:
                seen.add(key)
                merged.append(s)
    return merged[:cap], len(merged) > cap


def all_cached(attempts: list[Attempt]) -> bool:
    """Whether an answer came from the router's result cache alone (one ``ok (cached)``
    attempt per query run): a cached answer took 0 ms and says nothing of the arm's speed."""
    from dsh_sidecar.router.cache import CACHED_OUTCOME

    answered = [a for a in attempts if a.outcome == "ok" or a.outcome == CACHED_OUTCOME]
    return bool(answered) and all(a.outcome == CACHED_OUTCOME for a in answered)
