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


#: A malformed SEARXNG_BASE_URL per way it can be wrong, with the reason the router gives.
BAD_SEARXNG = {
    "ftp://x": "must be an absolute http:// or https:// URL",
    "http://": "must be an absolute http:// or https:// URL",
    "not a url": "contains whitespace or control characters",
    "http://admin:hunter22@": "must be an absolute http:// or https:// URL",
}


@pytest.mark.parametrize("url", list(BAD_SEARXNG))
@pytest.mark.parametrize(
    ("cfg", "chain_ids", "missing_ids"),
    [
        (None, ["duckduckgo"], ["searxng"]),  # auto-detected: the set variable is reported, not dropped
        ({"provider": "searxng"}, [], ["searxng"]),
        ({"order": ["searxng", "duckduckgo"]}, ["duckduckgo"], ["searxng"]),
    ],
)
def test_a_malformed_setting_in_the_environment_skips_its_provider(url, cfg, chain_ids, missing_ids):
    """The environment is where the chain detects its providers: a malformed value there makes
    that provider unusable (the others answer), kept with its reason; without a place to keep
    it the resolver raises, as before."""
    problems: dict[str, ConfigError] = {}
    chain, missing = resolve_chain(parse_router_config(cfg), {"SEARXNG_BASE_URL": url}, problems)
    assert [s.id for s in chain] == chain_ids and missing == missing_ids
    assert {pid: str(exc) for pid, exc in problems.items()} == {"searxng": f"$SEARXNG_BASE_URL: {BAD_SEARXNG[url]}"}
    with pytest.raises(ConfigError):
        resolve_chain(parse_router_config(cfg), {"SEARXNG_BASE_URL": url})


def test_a_malformed_key_in_the_environment_skips_its_provider_too():
    problems: dict[str, ConfigError] = {}
    env = {"EXA_API_KEY": "exa-TEST KEY", "TAVILY_API_KEY": "tvly-TESTKEY-123"}
    chain, missing = resolve_chain(parse_router_config(None), env, problems)
    assert [s.id for s in chain] == ["tavily", "duckduckgo"] and missing == ["exa"]
    assert str(problems["exa"]) == "$EXA_API_KEY: API key contains whitespace, control or non-ASCII characters"


def test_a_literal_key_the_document_gives_is_refused_when_it_is_parsed():
    """The config document's own value is the document's error, at once, as a bad baseUrl is."""
    with pytest.raises(ConfigError) as info:
        parse_router_config({"providers": {"exa": {"apiKey": "exa-TEST KEY"}}})
    assert (
        str(info.value) == "router.providers.exa.apiKey: API key contains whitespace, control or non-ASCII characters"
    )


async def test_a_provider_with_a_malformed_setting_is_skipped_in_place_with_its_health_line(caplog):
    from dsh_sidecar.router import AllProvidersFailed, Router

    cfg = parse_router_config({"providers": {"duckduckgo": {"baseURL": "http://127.0.0.1:9"}}})
    with caplog.at_level("WARNING", logger="dsh_sidecar.router.config"):
        router = Router.from_config(cfg, {"SEARXNG_BASE_URL": "http://admin:hunter22@"})
    why = "invalid config ($SEARXNG_BASE_URL: must be an absolute http:// or https:// URL)"
    try:
        assert [r.getMessage() for r in caplog.records] == [f"router: provider searxng skipped: {why}"]
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("x", 5)
        assert info.value.message.split("\n") == [
            "search-router: all configured search providers failed:",
            f"- searxng: skipped: {why}",
            "- duckduckgo: network error: connection failed",
        ]
        health = {h["provider"]: h for h in router.health_status()}
        assert health["searxng"] == {
            "provider": "searxng",
            "state": "failing",
            "failureClass": "config",
            "cooldownSecondsLeft": 0,
            "lastOutcome": f"skipped: {why}",
            "successes": 0,
            "failures": 0,
        }
        assert "hunter22" not in info.value.message and "hunter22" not in caplog.text
    finally:
        await router.aclose()
