"""The router seed's config schema, validated loudly, and the chain it resolves to."""

from __future__ import annotations

import pytest
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.router.config import parse_router_config, resolve_chain
from dsh_sidecar.router.normalize import RawItem, clean_text, normalize, parse_date


@pytest.mark.parametrize(
    "raw, key",
    [
        ({"timeoutMs": 99}, "router.timeoutMs"),
        ({"timeoutMs": 1000.5}, "router.timeoutMs"),
        ({"timeoutMs": "1000"}, "router.timeoutMs"),
        ({"provider": "exa", "order": ["exa"]}, "router.provider"),
        ({"provider": "bing"}, "router.provider"),
        ({"order": ["exa", "nope"]}, "router.order[1]"),
        ({"order": []}, "router.order"),
        ({"surprise": 1}, "router.surprise"),
        ({"providers": {"searxng": {"baseUrl": "ftp://x"}}}, "router.providers.searxng.baseUrl"),
        ({"providers": {"exa": {"baseURL": "http://u:pw@host"}}}, "router.providers.exa.baseURL"),
        ({"providers": {"duckduckgo": {"apiKey": "k"}}}, "router.providers.duckduckgo.apiKey"),
        ({"providers": {"exa": {"model": "m"}}}, "router.providers.exa.model"),
        ({"providers": {"google": {}}}, "router.providers.google"),
        ({"emptyResultsFallback": "yes"}, "router.emptyResultsFallback"),
    ],
)
def test_config_errors_name_the_key(raw, key):
    with pytest.raises(ConfigError) as info:
        parse_router_config(raw)
    assert info.value.key == key
    assert "pw" not in str(info.value)


def test_auto_detect_in_canonical_order():
    env = {
        "TAVILY_API_KEY": "tvly-TESTKEY-123",
        "EXA_API_KEY": " exa-TESTKEY-123 ",
        "SEARXNG_BASE_URL": "http://127.0.0.1:8888/",
    }
    chain, missing = resolve_chain(parse_router_config(None), env)
    assert [s.id for s in chain] == ["exa", "tavily", "searxng", "duckduckgo"]
    assert chain[0].api_key == "exa-TESTKEY-123"  # stray whitespace trimmed
    assert chain[2].base_url == "http://127.0.0.1:8888"
    assert missing == []


def test_zero_config_is_duckduckgo():
    chain, _ = resolve_chain(parse_router_config(None), {})
    assert [s.id for s in chain] == ["duckduckgo"]


def test_named_but_unusable_providers_are_reported():
    chain, missing = resolve_chain(parse_router_config({"order": ["exa", "duckduckgo"]}), {})
    assert [s.id for s in chain] == ["duckduckgo"] and missing == ["exa"]


def test_base_url_alias_both_spellings():
    a = parse_router_config({"providers": {"duckduckgo": {"baseURL": "http://127.0.0.1:1"}}})
    b = parse_router_config({"providers": {"duckduckgo": {"baseUrl": "http://127.0.0.1:1"}}})
    assert a.providers["duckduckgo"].base_url == b.providers["duckduckgo"].base_url == "http://127.0.0.1:1"


def test_normalisation_rules():
    assert clean_text("<b>Tom</b> &amp; Jerry&#39;s\n  show ", is_html=True) == "Tom & Jerry's show"
    assert clean_text("   ") is None
    assert clean_text("x" * 401, 400) == "x" * 400 + "…"
    assert parse_date("2024-04-09T00:00:00") == "2024-04-09T00:00:00"
    assert parse_date("Tue, 09 Apr 2024 10:00:00 GMT") == "Tue, 09 Apr 2024 10:00:00 GMT"
    assert parse_date("3 days ago") is None and parse_date(None) is None and parse_date("2024-13-45") is None
    items = [
        RawItem("https://a/1", "A"),
        RawItem(None, "no url"),
        RawItem("", "empty"),
        RawItem("https://a/1", "dup"),
        RawItem("https://a/2"),
    ]
    sources, truncated = normalize(items, 1)
    assert [s.wire() for s in sources] == [{"url": "https://a/1", "title": "A"}]
    assert truncated is True
    sources, truncated = normalize(items, 2)
    assert len(sources) == 2 and truncated is False


@pytest.mark.parametrize(
    "cfg, env, key",
    [
        ({}, {"EXA_API_KEY": "exa-TEST\nKEY-123"}, "$EXA_API_KEY"),
        ({}, {"TAVILY_API_KEY": "tvly-TEST KEY-123"}, "$TAVILY_API_KEY"),
        ({"providers": {"brave": {"apiKey": "BSA-TEST\tKEY"}}}, {}, "router.providers.brave.apiKey"),
        ({"providers": {"exa": {"apiKeyEnv": "MY_EXA"}}}, {"MY_EXA": "exa-\x00TESTKEY"}, "$MY_EXA"),
    ],
)
def test_secret_problems_name_only_the_variable(cfg, env, key):
    with pytest.raises(ConfigError) as info:
        resolve_chain(parse_router_config(cfg), env)
    assert info.value.key == key
    for secret in ("hunter22", "admin", "TEST", "exa-", "tvly-", "BSA-"):
        assert secret not in str(info.value)


def test_keys_are_trimmed_and_never_in_a_repr():
    env = {"BRAVE_SEARCH_API_KEY": "\tBSA-TESTKEY-123 \n"}
    chain, _ = resolve_chain(parse_router_config({"provider": "brave"}), env)
    assert chain[0].api_key == "BSA-TESTKEY-123"
    assert "TESTKEY" not in repr(chain[0])


def test_user_password_base_url_refused_for_keyed_providers_naming_only_the_key():
    with pytest.raises(ConfigError) as info:
        parse_router_config({"providers": {"brave": {"baseURL": "http://bob:s3cretpw@proxy.example:8080"}}})
    assert info.value.key == "router.providers.brave.baseURL"
    assert "s3cretpw" not in str(info.value) and "bob" not in str(info.value)


def test_user_password_base_url_becomes_basic_auth_for_searxng():
    env = {"SEARXNG_BASE_URL": "http://admin:hunter%2122@127.0.0.1:8888/searx/"}
    chain, _ = resolve_chain(parse_router_config({"provider": "searxng"}), env)
    assert chain[0].base_url == "http://127.0.0.1:8888/searx"
    assert chain[0].basic_auth == ("admin", "hunter!22")
    assert "hunter" not in repr(chain[0])


async def test_named_but_unusable_providers_are_reported_as_skipped_in_place(mock_provider):
    from dsh_sidecar.router import AllProvidersFailed, Router

    cfg = parse_router_config(
        {"order": ["exa", "searxng", "duckduckgo"], "providers": {"duckduckgo": {"baseURL": "http://127.0.0.1:9"}}}
    )
    router = Router.from_config(cfg, {})
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("x", 5)
        assert info.value.message.split("\n") == [
            "search-router: all configured search providers failed:",
            "- exa: skipped: not configured (no API key: set EXA_API_KEY or providers.exa.apiKey)",
            "- searxng: skipped: not configured (no base URL: set SEARXNG_BASE_URL or providers.searxng.baseUrl)",
            "- duckduckgo: network error: connection failed",
        ]
        assert [a.ms for a in info.value.attempts] == [0, 0, info.value.attempts[2].ms]
    finally:
        await router.aclose()
