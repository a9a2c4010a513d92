"""Router core against real loopback HTTP: every case of all seven providers in
``tests/data/providers/*/cases.yaml`` with its exact expected values (request checked by the
mock, sources, failure wording and class)."""

from __future__ import annotations

import base64
import json

import pytest
from dsh_sidecar.router import AllProvidersFailed, Router, parse_router_config
from dsh_sidecar.router.chain import AGGREGATE_HEADER
from dsh_sidecar.router.providers import duckduckgo
from dsh_sidecar.router.providers.base import HttpResponse
from support.mockprovider import DATA, Reply, case_reply, provider_cases
from support.routers import ALL, ROUTES, expected_source, make_router


def cases(provider):
    return [(provider, c["id"]) for c in provider_cases(provider)["cases"]]


@pytest.mark.parametrize("provider, case_id", [c for p in ALL for c in cases(p)])
async def test_case(provider, case_id, mock_provider):
    reply, case = case_reply(provider, case_id)
    mock_provider.route(*ROUTES[provider], reply)
    router = make_router(mock_provider, provider, cache=False)
    expect = case["expect"]
    call = case["call"]
    try:
        if expect["outcome"] == "ok":
            res = await router.search(call["query"], call["maxResults"])
            assert res.attempts[0].outcome == "ok"
            assert [s.url for s in res.sources] == expect["urls"]
            assert len(res.sources) == expect["sources"]
            assert res.truncated is expect["truncated"]
            assert res.sources[0].wire() == expected_source(expect["first_source"])
            if "all_sources" in expect:
                assert [s.wire() for s in res.sources] == [expected_source(s) for s in expect["all_sources"]]
            for needle in expect.get("must_not_appear", []):
                assert all(needle not in str(s.wire()) for s in res.sources)
        elif expect["outcome"] == "empty":
            # the default emptyResultsFallback: true with a single provider → the truthful empty result
            res = await router.search(call["query"], call["maxResults"])
            assert res.sources == [] and res.attempts[0].outcome == "0 results"
        else:
            with pytest.raises(AllProvidersFailed) as info:
                await router.search(call["query"], call["maxResults"])
            outcome = info.value.attempts[0].outcome
            for needle in expect.get("assert_contains", []):
                assert needle in outcome
            if expect.get("assert_contains_any"):
                assert any(n in outcome for n in expect["assert_contains_any"])
            for needle in expect.get("assert_not_contains", []):
                assert needle not in outcome and needle not in info.value.message
                assert needle not in str(router.health_status())
            assert outcome == expect["failure"]
            assert info.value.message == f"{AGGREGATE_HEADER}\n- {provider}: {expect['failure']}"
            assert router.health.last_class(provider) == expect["failure_class"]
        assert mock_provider.count(*ROUTES[provider]) == 1
    finally:
        await router.aclose()


def test_duckduckgo_unwraps_uddg_and_drops_ads():
    assert (
        duckduckgo.unwrap_link("//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2Fx%3Fq%3D1%26b%3D2&rut=abc")
        == "https://a.example/x?q=1&b=2"
    )
    assert duckduckgo.unwrap_link("https://duckduckgo.com/y.js?ad_domain=x") is None
    assert duckduckgo.unwrap_link("//duckduckgo.com/l/?uddg=https%3A%2F%2Fduckduckgo.com%2Fy.js%3Fa%3D1") is None
    assert duckduckgo.unwrap_link("https://direct.example/page") == "https://direct.example/page"


def test_duckduckgo_200_challenge_is_blocked_not_empty():
    body = (DATA / "duckduckgo" / "challenge.200.html").read_bytes()
    with pytest.raises(Exception) as info:
        duckduckgo.parse_response(HttpResponse(200, {"content-type": "text/html"}, body), 10)
    assert info.value.reason == "blocked (challenge page)"
    assert info.value.failure_class == "blocked"


async def test_empty_results_fallback_false_returns_empty_success(mock_provider):
    reply, _ = case_reply("duckduckgo", "no-results", check=False)
    mock_provider.route("POST", "/html/", reply)
    router = make_router(mock_provider, "duckduckgo", cache=False, emptyResultsFallback=False)
    try:
        res = await router.search("qzxv faucet gasket 88127-zz", 8)
        assert res.sources == [] and res.truncated is False
        assert [(a.provider, a.outcome) for a in res.attempts] == [("duckduckgo", "0 results")]
    finally:
        await router.aclose()


async def test_timeout_covers_a_trickling_body(mock_provider):
    reply, _ = case_reply("searxng", "ok", check=False)
    reply.trickle_s = 0.01  # ~6 KB at 10 ms a byte: a minute, far over the timeout
    mock_provider.route("GET", "/search", reply)
    router = make_router(mock_provider, "searxng", cache=False, timeoutMs=300)
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("bike chain cleaning", 10)
        assert info.value.attempts[0].outcome == "timeout after 300ms"
        assert info.value.attempts[0].ms < 25_000  # cut at the timeout, not after the minute the body takes
    finally:
        await router.aclose()


async def test_connection_refused_is_a_network_failure():
    cfg = parse_router_config({"provider": "searxng", "providers": {"searxng": {"baseUrl": "http://127.0.0.1:9"}}})
    router = Router.from_config(cfg, {})
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("x", 5)
        assert info.value.message == (
            "search-router: all configured search providers failed:\n- searxng: network error: connection failed"
        )
    finally:
        await router.aclose()


async def test_basic_auth_from_the_base_url_is_sent_and_the_password_redacted(mock_provider):
    # an auth proxy that echoes what it got: the password must not come back out
    body = b'{"error": "proxy says: wrong login admin:pa55-w0rd-x for http://admin:pa55-w0rd-x@host"}'
    mock_provider.route("GET", "/search", Reply(502, {"content-type": "application/json"}, body))
    base = mock_provider.url.replace("http://", "http://admin:pa55-w0rd-x@")
    cfg = parse_router_config({"provider": "searxng", "providers": {"searxng": {"baseUrl": base}}})
    router = Router.from_config(cfg, {})
    try:
        assert router.describe() == [{"provider": "searxng", "baseUrl": mock_provider.url}]
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("bike chain cleaning", 5)
        seen = mock_provider.requests[0]
        assert seen.headers["authorization"] == "Basic " + base64.b64encode(b"admin:pa55-w0rd-x").decode()
        assert info.value.message == (
            f"{AGGREGATE_HEADER}\n- searxng: HTTP 502: proxy says: wrong login admin:[redacted] for "
            "http://admin:[redacted]@host"
        )
        assert "pa55" not in str(router.health_status())
    finally:
        await router.aclose()


async def test_keys_planted_in_results_are_redacted(mock_provider):
    reply, _ = case_reply("tavily", "ok", check=False)
    body = json.loads(reply.body)
    body["results"][0]["content"] = "leaked tvly-TESTKEY-123 here"
    body["results"][0]["title"] = "title tvly-TESTKEY-123"
    body["results"][1]["url"] = "https://evil.example/?k=tvly-TESTKEY-123"
    mock_provider.route(*ROUTES["tavily"], Reply(200, reply.headers, json.dumps(body).encode()))
    router = make_router(mock_provider, "tavily", cache=False)
    try:
        res = await router.search("best time to plant tomatoes", 10)
        first, second = res.sources[0].wire(), res.sources[1].wire()
        assert (first["title"], first["snippet"]) == ("title [redacted]", "leaked [redacted] here")
        assert second["url"] == "https://evil.example/?k=[redacted]"
        assert "TESTKEY" not in json.dumps([s.wire() for s in res.sources])
    finally:
        await router.aclose()


def test_params_put_in_the_url_make_the_url_httpx_would_build_from_them():
    """router/http.with_query: the request line is byte-for-byte what httpx builds from
    ``params`` (code-like text, non-ASCII, reserved characters, every provider's params)."""
    import random
    import string

    import httpx
    from dsh_sidecar.router.http import with_query
    from dsh_sidecar.router.providers import PROVIDERS
    from dsh_sidecar.router.providers.base import ProviderSpec

    client = httpx.Client()  # build_request only: nothing is sent
    rng = random.Random(16)
    alphabet = string.printable + "éü中文😀\u00a0\u2028%+&=#?/[]@!$'()*,;:~"
    queries = [
        "Vec<T> in std::vec",
        "a&b=c?d#e",
        "100% + 1",
        "",
        " ",
        *("".join(rng.choices(alphabet, k=rng.randint(1, 40))) for _ in range(300)),
    ]
    requests = []
    for pid, provider in PROVIDERS.items():
        spec = ProviderSpec(id=pid, base_url="https://user.example:8443/base", api_key="k-0123456789", model="m")
        for q in queries:
            try:
                requests.append(provider.build_request(spec, q, 5))
            except Exception:  # a builder may refuse a query (e.g. an empty one)
                continue
    with_params = [r for r in requests if r.params]
    assert with_params  # the providers that send a query string (SearXNG, Brave) are covered
    for r in requests:
        url, params = with_query(r.url, r.params)
        ours = client.build_request(r.method, url, params=params)
        theirs = client.build_request(r.method, r.url, params=r.params)
        assert (str(ours.url), ours.url.raw_path) == (str(theirs.url), theirs.url.raw_path)
        if r.params and "?" not in r.url:
            assert params is None  # the query went into the URL
    for url in ("https://x.example/s?a=1", "https://x.example/s#frag", "https://x.example/s"):
        got, params = with_query(url, {"q": "é x"})
        theirs = client.build_request("GET", url, params={"q": "é x"})
        assert str(client.build_request("GET", got, params=params).url) == str(theirs.url)
