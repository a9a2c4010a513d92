"""Class 11 (docs/SECURITY.md): config is bounded and URLs are validated up front. Out-of-range numbers
and malformed URLs are refused by the config model with an error naming the key (never the
value); a URL that still cannot be sent at request time is that provider's failure, so the
chain goes on."""

from __future__ import annotations

import pytest
from dsh_sidecar.bandit import parse_bandit_config
from dsh_sidecar.config import parse_config
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.redact import Redactor
from dsh_sidecar.router import Router, parse_router_config
from dsh_sidecar.router.config import ProviderSpec, resolve_chain
from dsh_sidecar.router.http import make_client
from dsh_sidecar.router.providers import PROVIDERS
from support.mockprovider import case_reply


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"timeoutMs": 10**400}, "router.timeoutMs"),
        ({"timeoutMs": 600_001}, "router.timeoutMs"),
        ({"timeoutMs": 99}, "router.timeoutMs"),
        ({"deadlineMs": 10**400}, "router.deadlineMs"),
        ({"deadlineMs": 3_600_001}, "router.deadlineMs"),
        ({"deadlineMs": -1}, "router.deadlineMs"),
        ({"cache": {"ttlSeconds": 10**20}}, "router.cache.ttlSeconds"),
        ({"cache": {"maxEntries": 0}}, "router.cache.maxEntries"),
        ({"providers": {"exa": {"apiKey": "k" * 5000}}}, "router.providers.exa.apiKey"),
        ({"providers": {"exa": {"apiKeyEnv": "EXA KEY"}}}, "router.providers.exa.apiKeyEnv"),
        ({"providers": {"searxng": {"baseUrlEnv": "1BAD"}}}, "router.providers.searxng.baseUrlEnv"),
        ({"providers": {"perplexity": {"model": "m" * 201}}}, "router.providers.perplexity.model"),
    ],
)
def test_router_ranges_name_the_key(raw, key):
    with pytest.raises(ConfigError) as info:
        parse_router_config(raw)
    assert info.value.key == key


BAD_URLS = {
    "tab": "http://sear\txng.example",
    "cr": "http://searxng.example/\rpath",
    "lf": "http://searxng.example/\nHost: evil",
    "del": "http://searx\x7fng.example",
    "nul": "http://searxng.example\x00/",
    "space": "http://searxng .example",
    "zero-width": "http://searxng\u200b.example",
    "unclosed-ipv6": "http://[::1",
    "port-range": "http://searxng.example:99999",
    "bad-port": "http://searxng.example:80a",
    "no-host": "http:///path",
    "scheme": "ftp://searxng.example",
    "javascript": "javascript:alert(1)",
    "query": "http://searxng.example/?q=1",
    "too-long": "http://searxng.example/" + "a" * 3000,
}


@pytest.mark.parametrize("name", list(BAD_URLS))
@pytest.mark.parametrize("spelling", ["baseUrl", "baseURL"])
def test_malformed_base_urls_are_refused_naming_the_key_not_the_value(name, spelling):
    url = BAD_URLS[name]
    with pytest.raises(ConfigError) as info:
        parse_router_config({"provider": "searxng", "providers": {"searxng": {spelling: url}}})
    assert info.value.key == f"router.providers.searxng.{spelling}"
    assert url.strip() not in str(info.value)


@pytest.mark.parametrize("name", ["tab", "del", "unclosed-ipv6", "port-range", "scheme"])
def test_malformed_base_urls_from_the_environment_name_the_variable(name):
    cfg = parse_router_config({"provider": "searxng"})
    with pytest.raises(ConfigError) as info:
        resolve_chain(cfg, {"SEARXNG_BASE_URL": BAD_URLS[name]})
    assert info.value.key == "$SEARXNG_BASE_URL"


def test_good_urls_still_pass():
    for url in ("http://127.0.0.1:8080", "https://searx.example/searx/", "http://[::1]:8888", "https://bücher.example"):
        parse_router_config({"provider": "searxng", "providers": {"searxng": {"baseUrl": url}}})


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"seed": -1}, "bandit.seed"),
        ({"seed": 10**400}, "bandit.seed"),
        ({"speedMs": float("inf")}, "bandit.speedMs"),
        ({"speedMs": 0}, "bandit.speedMs"),
        ({"discount": float("nan")}, "bandit.discount"),
        ({"qualityWeight": 1.5}, "bandit.qualityWeight"),
        ({"quickMaxResults": 0}, "bandit.quickMaxResults"),
        ({"thoroughMaxResults": 10**30}, "bandit.thoroughMaxResults"),
        ({"feedbackTtlS": 1e20}, "bandit.feedbackTtlS"),
        ({"decisionLogMaxBytes": 10**400}, "bandit.decisionLogMaxBytes"),
    ],
)
def test_bandit_ranges_name_the_key(raw, key):
    with pytest.raises(ConfigError) as info:
        parse_bandit_config(raw)
    assert info.value.key == key


@pytest.mark.parametrize("value", ["verbose", "", None, 1, ["all"]])
def test_log_messages_takes_one_of_three_values(value):
    with pytest.raises(ConfigError) as info:
        parse_config({"logMessages": value})
    assert info.value.key == "logMessages"
    for ok in ("all", "decisions", "none"):
        assert parse_config({"logMessages": ok}).log_messages == ok
    assert parse_config({}).log_messages == "all"


async def test_a_url_that_cannot_be_sent_is_that_providers_failure_and_the_chain_goes_on(mock_provider):
    """Specs built past the config check (a bad URL can only come from a bug or a future
    provider): the exchange refuses it as ``config`` and the next provider answers."""
    mock_provider.route("POST", "/html/", case_reply("duckduckgo", "ok", check=False)[0])
    cfg = parse_router_config({"order": ["searxng", "duckduckgo"], "cache": False})
    for bad in ("http://searx\x7fng.example", "http://[::1", "http://searxng.example:99999", "gopher://x.example"):
        router = Router(
            config=cfg,
            chain=[ProviderSpec("searxng", bad), ProviderSpec("duckduckgo", mock_provider.url)],
            redactor=Redactor(),
            client=make_client(),
        )
        try:
            res = await router.search(f"q {bad!r}", 5)
        finally:
            await router.aclose()
        assert res.provider == "duckduckgo", bad
        assert res.attempts[0].provider == "searxng"
        assert res.attempts[0].outcome.startswith("invalid request URL"), res.attempts[0].outcome
        assert router.health.last_class("searxng") == "config"


async def test_a_request_builder_that_raises_is_that_providers_failure(mock_provider, monkeypatch):
    mock_provider.route("POST", "/html/", case_reply("duckduckgo", "ok", check=False)[0])

    def broken(spec, query, max_results):
        raise UnicodeEncodeError("ascii", query, 0, 1, "boom")

    monkeypatch.setattr(PROVIDERS["searxng"], "build_request", broken)
    cfg = parse_router_config(
        {
            "order": ["searxng", "duckduckgo"],
            "cache": False,
            "providers": {"searxng": {"baseUrl": "http://127.0.0.1:9"}, "duckduckgo": {"baseURL": mock_provider.url}},
        }
    )
    router = Router.from_config(cfg, {})
    try:
        res = await router.search("q", 5)
    finally:
        await router.aclose()
    assert [(a.provider, a.outcome) for a in res.attempts] == [("searxng", "invalid request"), ("duckduckgo", "ok")]
