"""The result cache: hits report one ``ok (cached)`` attempt and cost no provider request;
TTL expiry and LRU bound on an injected clock; failures and empty answers never cached; the
key is normalised query + maxResults + chain; ``cache: false`` turns it off."""

from __future__ import annotations

import pytest
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.router import AllProvidersFailed, Router, parse_router_config
from dsh_sidecar.router.cache import normalise_query
from support.mockprovider import case_reply
from support.routers import ROUTES, FakeClock, expected_source, make_router

SEARCH = ROUTES["searxng"]


def searxng_router(mock, clock=None, **extra):
    return make_router(mock, "searxng", env={}, clock=clock or FakeClock(), **extra)


async def test_hit_is_reported_and_costs_no_request(mock_provider):
    reply, case = case_reply("searxng", "ok", check=False)
    mock_provider.route(*SEARCH, reply)
    router = searxng_router(mock_provider)
    try:
        first = await router.search("Bike  chain cleaning", 10)
        second = await router.search("  bike chain CLEANING ", 10)
        assert [a.wire() for a in second.attempts] == [{"provider": "searxng", "outcome": "ok (cached)", "ms": 0}]
        assert [s.wire() for s in second.sources] == [s.wire() for s in first.sources]
        assert [s.wire() for s in second.sources] == [expected_source(s) for s in case["expect"]["all_sources"]]
        assert second.truncated is first.truncated and second.provider == "searxng"
        assert mock_provider.count(*SEARCH) == 1
        await router.search("bike chain cleaning", 3)  # another maxResults is another key
        assert mock_provider.count(*SEARCH) == 2
        assert router.cache_status() == {"entries": 2, "hits": 1, "misses": 2}
    finally:
        await router.aclose()


async def test_ttl_expiry_and_lru_bound(mock_provider):
    mock_provider.route(*SEARCH, case_reply("searxng", "ok", check=False)[0])
    clock = FakeClock()
    router = searxng_router(mock_provider, clock, cache={"ttlSeconds": 60, "maxEntries": 2})
    try:
        await router.search("a", 5)
        clock.now += 59
        assert (await router.search("a", 5)).attempts[0].outcome == "ok (cached)"
        clock.now += 2
        assert (await router.search("a", 5)).attempts[0].outcome == "ok"  # expired
        await router.search("b", 5)
        await router.search("a", 5)  # refreshes a
        await router.search("c", 5)  # evicts b, the least recently used
        before = mock_provider.count(*SEARCH)
        assert (await router.search("a", 5)).attempts[0].outcome == "ok (cached)"
        assert (await router.search("b", 5)).attempts[0].outcome == "ok"
        assert mock_provider.count(*SEARCH) == before + 1
    finally:
        await router.aclose()


async def test_failures_and_empty_answers_are_never_cached(mock_provider):
    mock_provider.route(*SEARCH, case_reply("searxng", "json-disabled", check=False)[0])
    router = searxng_router(mock_provider)
    try:
        for _ in range(2):
            with pytest.raises(AllProvidersFailed):
                await router.search("bike chain cleaning", 8)
        mock_provider.route(*SEARCH, case_reply("searxng", "ok", check=False)[0])
        res = await router.search("bike chain cleaning", 8)
        assert res.attempts[0].outcome == "ok"
        assert mock_provider.count(*SEARCH) == 3
    finally:
        await router.aclose()


async def test_empty_answer_not_cached(mock_provider):
    mock_provider.route("POST", "/html/", case_reply("duckduckgo", "no-results", check=False)[0])
    cfg = parse_router_config(
        {
            "provider": "duckduckgo",
            "providers": {"duckduckgo": {"baseURL": mock_provider.url}},
            "emptyResultsFallback": False,
        }
    )
    router = Router.from_config(cfg, {}, clock=FakeClock())
    try:
        for _ in range(2):
            assert (await router.search("qzxv", 8)).attempts[0].outcome == "0 results"
        assert mock_provider.count("POST", "/html/") == 2
    finally:
        await router.aclose()


async def test_cache_false_turns_it_off(mock_provider):
    mock_provider.route(*SEARCH, case_reply("searxng", "ok", check=False)[0])
    router = searxng_router(mock_provider, cache=False)
    try:
        await router.search("x", 5)
        assert (await router.search("x", 5)).attempts[0].outcome == "ok"
        assert mock_provider.count(*SEARCH) == 2 and router.cache_status() is None
    finally:
        await router.aclose()


def test_cache_is_on_by_default_with_a_short_ttl():
    cfg = parse_router_config(None)
    assert (cfg.cache.enabled, cfg.cache.ttl_seconds, cfg.cache.max_entries) == (True, 300, 256)
    assert normalise_query("  Foo\tBAR  baz ") == "foo bar baz"


@pytest.mark.parametrize(
    "raw, key",
    [
        ({"cache": {"ttlSeconds": 0}}, "router.cache.ttlSeconds"),
        ({"cache": {"ttlSeconds": 1.5}}, "router.cache.ttlSeconds"),
        ({"cache": {"maxEntries": "10"}}, "router.cache.maxEntries"),
        ({"cache": {"maxEntries": 0}}, "router.cache.maxEntries"),
        ({"cache": {"size": 3}}, "router.cache.size"),
        ({"cache": "off"}, "router.cache"),
    ],
)
def test_cache_config_errors_name_the_key(raw, key):
    with pytest.raises(ConfigError) as info:
        parse_router_config(raw)
    assert info.value.key == key
