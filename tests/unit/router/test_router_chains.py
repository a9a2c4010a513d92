"""Every scenario of ``tests/data/providers/chains.yaml`` over real loopback mocks (one per
provider), with its exact attempts, sources, error lines and ``then:`` follow-ups (cooldown
skips on the next search, request counts).

The scenarios run with ``cache: false``: their ``then:`` repeats a search to show a cooldown,
which a cache hit would otherwise answer (the cache has its own tests in test_router_cache.py).
"""

from __future__ import annotations

import asyncio
import time

import pytest
import yaml
from dsh_sidecar.router import AllProvidersFailed, Router, parse_router_config
from dsh_sidecar.router.chain import AGGREGATE_HEADER
from support.mockprovider import DATA, MockProvider, case_reply
from support.routers import ROUTES, base_url_key, credential_env, expected_source

SCENARIOS = {s["id"]: s for s in yaml.safe_load((DATA / "chains.yaml").read_text())["scenarios"]}


def case_of(ref: str) -> tuple[str, str]:
    """``tavily/cases.yaml#plan-limit`` → ``("tavily", "plan-limit")``."""
    path, _, case_id = ref.partition("#")
    return path.split("/")[0], case_id


def expected_sources(ref: str) -> list[dict]:
    provider, case_id = case_of(ref)
    _, case = case_reply(provider, case_id)
    return [expected_source(s) for s in case["expect"]["all_sources"]]


class Scenario:
    """One mock per provider of a scenario and a router pointed at them."""

    def __init__(self, scenario: dict, clock=time.monotonic) -> None:
        self.scenario = scenario
        self.mocks: dict[str, MockProvider] = {}
        cfg = dict(scenario["config"])
        ids = cfg.get("order") or [cfg["provider"]]
        env: dict[str, str] = {}
        providers = {}
        for pid in ids:
            mock = self.mocks[pid] = MockProvider()
            ref = scenario["uses"].get(pid, "")
            if "#" in ref and "+" not in ref:
                mock.route(*ROUTES[pid], case_reply(*case_of(ref), check=False)[0])
            env.update(credential_env(pid))
            providers[pid] = {base_url_key(pid): mock.url}
        cfg.update(providers=providers, cache=False)
        self.router = Router.from_config(parse_router_config(cfg), env, clock=clock)

    def count(self, pid: str) -> int:
        return self.mocks[pid].count(*ROUTES[pid])

    async def close(self) -> None:
        await self.router.aclose()
        for mock in self.mocks.values():
            mock.close()


def assert_attempts(attempts, wanted) -> None:
    assert [a.provider for a in attempts] == [w["provider"] for w in wanted]
    for got, want in zip(attempts, wanted, strict=True):
        if "outcome" in want:
            assert got.outcome == want["outcome"]
        if "outcome_starts_with" in want:
            assert got.outcome.startswith(want["outcome_starts_with"])
        for needle in want.get("outcome_contains", []):
            assert needle in got.outcome


async def run_ok(s: Scenario):
    call, expect = s.scenario["call"], s.scenario["expect"]
    res = await s.router.search(call["query"], call["maxResults"])
    assert [src.wire() for src in res.sources] == expected_sources(expect["sources_from"])
    assert_attempts(res.attempts, expect["attempts"])
    for pid, n in (expect.get("requests_received") or {}).items():
        assert s.count(pid) == n
    return res


def assert_error_lines(message: str, lines: list[str]) -> None:
    got = message.split("\n")
    assert got[0] == AGGREGATE_HEADER
    assert got == lines


async def run_failed(s: Scenario) -> AllProvidersFailed:
    """The scenario's call, which no provider answers: its error, its lines checked."""
    call, expect = s.scenario["call"], s.scenario["expect"]
    with pytest.raises(AllProvidersFailed) as info:
        await s.router.search(call["query"], call["maxResults"])
    assert_error_lines(info.value.message, expect["error_message_lines"])
    return info.value


async def test_ddg_blocked_then_searxng():
    s = Scenario(SCENARIOS["ddg-blocked-then-searxng"])
    try:
        await run_ok(s)
        # then: an identical search right after skips duckduckgo (cooldown), searxng answers
        call = s.scenario["call"]
        res = await s.router.search(call["query"], call["maxResults"])
        assert res.attempts[0].provider == "duckduckgo"
        assert res.attempts[0].outcome == "skipped: blocked cooldown 300s left"
        assert [a.outcome for a in res.attempts[1:]] == ["ok"]
        assert s.count("duckduckgo") == 1 and s.count("searxng") == 2
    finally:
        await s.close()


async def test_ddg_blocked_single_provider_empty_fallback_off_is_an_error():
    s = Scenario(SCENARIOS["ddg-blocked-single-provider-empty-fallback-off"])
    try:
        await run_failed(s)
    finally:
        await s.close()


@pytest.mark.slow
async def test_tavily_quota_then_brave():
    s = Scenario(SCENARIOS["tavily-quota-then-brave"])
    try:
        await run_ok(s)
        # then: a second search in the same process does not call tavily
        res = await s.router.search("when to water tomatoes", 10)
        assert [(a.provider, a.outcome) for a in res.attempts] == [
            ("tavily", "skipped: quota_exhausted cooldown 3600s left"),
            ("brave", "ok"),
        ]
        assert s.count("tavily") == 1 and s.count("brave") == 2
    finally:
        await s.close()


async def test_all_fail_keys_redacted():
    s = Scenario(SCENARIOS["all-fail-keys-redacted"])
    call, expect = s.scenario["call"], s.scenario["expect"]
    try:
        error = await run_failed(s)
        texts = [
            error.message,
            *(a.outcome for a in error.attempts),
            str(s.router.health_status()),
            str(s.router.describe()),
        ]
        for needle in expect["assert_not_contains"]:
            assert all(needle.lower() not in t.lower() for t in texts), needle
        # exa (auth) and tavily (auth) cool down; searxng (config) is tried again
        res_err = None
        try:
            await s.router.search(call["query"], call["maxResults"])
        except AllProvidersFailed as exc:
            res_err = exc
        assert res_err is not None
        assert [a.outcome for a in res_err.attempts][:2] == [
            "skipped: auth cooldown 3600s left",
            "skipped: auth cooldown 3600s left",
        ]
        assert res_err.message.split("\n")[1] == "- exa: skipped: auth cooldown 3600s left"
        assert s.count("exa") == 1 and s.count("tavily") == 1 and s.count("searxng") == 2
    finally:
        await s.close()


async def test_searxng_degraded_then_duckduckgo():
    s = Scenario(SCENARIOS["searxng-degraded-then-duckduckgo"])
    try:
        await run_ok(s)
    finally:
        await s.close()


async def test_deepseek_error_block_then_perplexity():
    s = Scenario(SCENARIOS["deepseek-error-block-then-perplexity"])
    try:
        res = await run_ok(s)
        assert res.attempts[0].outcome == "web_search error too_many_requests"
        assert s.router.health.last_class("deepseek") == "rate_limited"
        assert s.router.health.skip_reason("deepseek") == "skipped: rate_limited cooldown 60s left"
    finally:
        await s.close()


class FreezableClock:
    """The router's injectable clock: ``time.monotonic`` until :meth:`freeze`, then the last
    value it returned, for good."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.frozen = False

    def __call__(self) -> float:
        if not self.frozen:
            self.last = time.monotonic()
        return self.last

    def freeze(self) -> float:
        self.frozen = True
        return self.last


@pytest.mark.slow
async def test_brave_one_per_second(monkeypatch: pytest.MonkeyPatch):
    """The scenario's first alternative: the router spaces its Brave calls by Brave's documented
    free-plan rate (1 request/s), so both concurrent searches are answered by Brave and the
    mock never has to refuse one. The third search is decided on frozen clocks (the router's
    injectable one, frozen where the pair's last reading left it, and the deadline's): on a
    loaded machine the real time from the pair to the third search brought Brave's next slot
    within its budget (or its deadline past) and the outcome depended on the load."""
    from dsh_sidecar.router import chain as chain_module

    clock = FreezableClock()
    s = Scenario(SCENARIOS["brave-one-per-second"], clock=clock)
    ok, _ = case_reply("brave", "ok", check=False)
    limited, _ = case_reply("brave", "rate-limited", check=False)
    last_ok = [float("-inf")]
    refused = [0]

    def brave(seen):  # the mock of the scenario: 429 within 1 s of the last 200
        now = time.monotonic()
        if now - last_ok[0] < 1.0:
            refused[0] += 1
            return limited
        last_ok[0] = now
        return ok

    s.mocks["brave"].route(*ROUTES["brave"], brave)
    s.mocks["searxng"].route(*ROUTES["searxng"], case_reply("searxng", "ok", check=False)[0])
    try:
        first, second = await asyncio.gather(
            s.router.search("how to descale a kettle", 10), s.router.search("descale kettle citric acid", 10)
        )
        assert [(a.provider, a.outcome) for a in first.attempts] == [("brave", "ok")]
        assert [(a.provider, a.outcome) for a in second.attempts] == [("brave", "ok")]
        assert refused == [0] and s.count("brave") == 2 and s.count("searxng") == 0
        # a search whose budget ends before Brave's next slot does not wait: it falls back at once
        # (no time passes for the router from here: the slot is a full second away, 900 ms never end)
        frozen = clock.freeze()
        monkeypatch.setattr(chain_module, "_now", lambda: frozen)
        third = await s.router.search("kettle limescale vinegar", 10, deadline_ms=900)
        assert third.attempts[0].provider == "brave"
        assert third.attempts[0].outcome.startswith("skipped: rate limit spacing (next request slot in ")
        assert third.attempts[-1].provider == "searxng" and third.provider == "searxng"
        assert s.router.health.cooldown_left("brave") == 0  # spacing is not a failure that cools down
        assert refused == [0] and s.count("brave") == 2
    finally:
        await s.close()


def test_every_scenario_has_a_test():
    tested = {
        "ddg-blocked-then-searxng",
        "ddg-blocked-single-provider-empty-fallback-off",
        "tavily-quota-then-brave",
        "all-fail-keys-redacted",
        "searxng-degraded-then-duckduckgo",
        "deepseek-error-block-then-perplexity",
        "brave-one-per-second",
    }
    assert set(SCENARIOS) == tested
