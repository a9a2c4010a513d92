"""Provider health: cooldown lengths from the response (Retry-After in seconds or as an
HTTP-date, Brave's per-window X-RateLimit-Reset), the router's defaults per class, skipping
while cooling, expiry on an injected clock, and the ``dsh/status`` view."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from dsh_sidecar.router import AllProvidersFailed, Router, parse_router_config
from dsh_sidecar.router.health import MAX_COOLDOWN_S, ProviderHealth
from dsh_sidecar.router.providers import brave
from dsh_sidecar.router.providers.base import HttpResponse, retry_after_seconds
from support.mockprovider import Reply, case_reply
from support.routers import ROUTES, FakeClock, credential_env, make_router


async def test_tavily_retry_after_cools_down_exactly_30s(mock_provider):
    clock = FakeClock()
    mock_provider.route(*ROUTES["tavily"], case_reply("tavily", "rate-limited", check=False)[0])
    router = make_router(mock_provider, "tavily", clock=clock, cache=False)
    try:
        with pytest.raises(AllProvidersFailed):
            await router.search("best time to plant tomatoes", 8)
        clock.now += 29.5
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("best time to plant tomatoes", 8)
        assert [a.outcome for a in info.value.attempts] == ["skipped: rate_limited cooldown 1s left"]
        assert info.value.message.endswith("- tavily: skipped: rate_limited cooldown 1s left")
        assert mock_provider.count(*ROUTES["tavily"]) == 1
        clock.now += 0.6
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("best time to plant tomatoes", 8)
        assert info.value.attempts[0].outcome.startswith("HTTP 429")
        assert mock_provider.count(*ROUTES["tavily"]) == 2
    finally:
        await router.aclose()


async def test_status_shows_health_without_secrets(mock_provider):
    clock = FakeClock()
    mock_provider.route(*ROUTES["exa"], case_reply("exa", "auth-key-echo", check=False)[0])
    router = make_router(mock_provider, "exa", clock=clock, cache=False)
    try:
        assert router.health_status() == [
            {
                "provider": "exa",
                "state": "unknown",
                "failureClass": None,
                "cooldownSecondsLeft": 0,
                "lastOutcome": None,
                "successes": 0,
                "failures": 0,
            }
        ]
        with pytest.raises(AllProvidersFailed):
            await router.search("how to remove rust from cast iron skillet", 8)
        clock.now += 10
        assert router.health_status() == [
            {
                "provider": "exa",
                "state": "cooling_down",
                "failureClass": "auth",
                "cooldownSecondsLeft": 3590,
                "lastOutcome": "HTTP 401: Invalid API key: [redacted]",
                "successes": 0,
                "failures": 1,
            }
        ]
    finally:
        await router.aclose()


async def test_success_clears_state_and_timeouts_do_not_cool_down(mock_provider):
    clock = FakeClock()
    reply, _ = case_reply("searxng", "ok", check=False)
    reply.delay_s = 1.0
    mock_provider.route(*ROUTES["searxng"], reply)
    cfg = parse_router_config(
        {
            "provider": "searxng",
            "providers": {"searxng": {"baseUrl": mock_provider.url}},
            "cache": False,
            "timeoutMs": 200,
        }
    )
    router = Router.from_config(cfg, {}, clock=clock)
    try:
        with pytest.raises(AllProvidersFailed):
            await router.search("bike chain cleaning", 8)
        assert router.health_status()[0]["state"] == "failing"
        assert router.health.skip_reason("searxng") is None
        reply.delay_s = 0
        res = await router.search("bike chain cleaning", 8)
        assert res.attempts[0].outcome == "ok"
        status = router.health_status()[0]
        assert (status["state"], status["failureClass"], status["lastOutcome"]) == ("ok", None, "ok")
    finally:
        await router.aclose()


def test_retry_after_http_date_and_seconds():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(datetime(2026, 1, 1, 12, 0, 37, tzinfo=UTC), usegmt=True)
    assert retry_after_seconds(HttpResponse(429, {"retry-after": later}, b""), now=now.timestamp()) == 37.0
    assert retry_after_seconds(HttpResponse(429, {"retry-after": "30"}, b"")) == 30.0
    assert retry_after_seconds(HttpResponse(429, {"retry-after": "soon"}, b"")) is None
    assert retry_after_seconds(HttpResponse(429, {"retry-after": "-5"}, b"")) is None
    assert retry_after_seconds(HttpResponse(429, {"retry-after": "nan"}, b"")) is None
    assert retry_after_seconds(HttpResponse(429, {}, b"")) is None


def test_brave_reset_uses_the_exhausted_window():
    per_second = {"x-ratelimit-reset": "1, 1419704", "x-ratelimit-remaining": "0, 1983"}
    monthly = {"x-ratelimit-reset": "1, 1419704", "x-ratelimit-remaining": "1, 0"}
    assert brave.rate_limit_reset_seconds(per_second) == 1.0
    assert brave.rate_limit_reset_seconds(monthly) == 1419704.0
    assert brave.rate_limit_reset_seconds({"x-ratelimit-reset": "7"}) == 7.0
    assert brave.rate_limit_reset_seconds({"x-ratelimit-reset": "x, y"}) is None
    assert brave.rate_limit_reset_seconds({}) is None


def test_cooldown_capped_and_defaults_per_class():
    clock = FakeClock()
    health = ProviderHealth(clock=clock)
    assert health.record_failure("brave", "rate_limited", "HTTP 429", 1419704.0) == MAX_COOLDOWN_S
    assert health.record_failure("duckduckgo", "blocked", "blocked (HTTP 202 challenge)") == 300.0
    assert health.record_failure("tavily", "quota_exhausted", "HTTP 432") == 3600.0
    assert health.record_failure("perplexity", "upstream_error", "HTTP 502") == 0.0
    assert health.skip_reason("perplexity") is None
    assert health.skip_reason("duckduckgo") == "skipped: blocked cooldown 300s left"
    clock.now += 300
    assert health.skip_reason("duckduckgo") is None


async def test_reconfiguration_keeps_cooldowns_of_unchanged_providers(mock_provider):
    clock = FakeClock()
    mock_provider.route(*ROUTES["tavily"], case_reply("tavily", "plan-limit", check=False)[0])
    old = make_router(mock_provider, "tavily", clock=clock, cache=False)
    try:
        with pytest.raises(AllProvidersFailed):
            await old.search("best time to plant tomatoes", 8)
        # another timeout, same key and endpoint: the quota cooldown survives
        cfg = parse_router_config(
            {
                "order": ["tavily"],
                "providers": {"tavily": {"baseURL": mock_provider.url}},
                "cache": False,
                "timeoutMs": 5000,
            }
        )
        same = Router.from_config(cfg, credential_env("tavily"), client=old.client, clock=clock, previous=old)
        assert same.health.skip_reason("tavily") == "skipped: quota_exhausted cooldown 3600s left"
        # a new key starts clean
        fresh = Router.from_config(
            cfg, {"TAVILY_API_KEY": "tvly-OTHERKEY-456"}, client=old.client, clock=clock, previous=old
        )
        assert fresh.health.skip_reason("tavily") is None
        assert fresh.health_status()[0]["state"] == "unknown"
    finally:
        await old.aclose()


async def test_503_with_retry_after_cools_down_for_that_long(mock_provider):
    clock = FakeClock()
    mock_provider.route(
        *ROUTES["perplexity"],
        Reply(503, {"content-type": "text/html", "retry-after": "120"}, b"<html>maintenance</html>"),
    )
    router = make_router(mock_provider, "perplexity", clock=clock, cache=False)
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await router.search("sourdough", 5)
        assert info.value.attempts[0].outcome == "HTTP 503"
        assert router.health.skip_reason("perplexity") == "skipped: upstream_error cooldown 120s left"
        mock_provider.route(*ROUTES["perplexity"], Reply(502, {"content-type": "text/html"}, b"<html>bad</html>"))
        clock.now += 121
        with pytest.raises(AllProvidersFailed):
            await router.search("sourdough", 5)
        assert router.health.skip_reason("perplexity") is None  # a 502 without Retry-After: no cooldown
    finally:
        await router.aclose()
