"""The search methods a harness plugin drives over real stdio: ``dsh/routeSearch`` (the
search-router seed's single-query semantics: one backend query, fallback, no bandit) and the
bandit seed's search split in two, ``dsh/searchPlan`` (the sidecar picks the arm and the
queries) and ``dsh/searchReport`` (the harness ran them over its own web seam; the sidecar
merges, rewards, logs the seed line and records) — and a cached 0 ms answer is never credited."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from support.mockprovider import MockProvider, Reply


def searx(mock: MockProvider, results: int, status: int = 200) -> None:
    """The mock answers every SearXNG search with ``results`` results (``status``)."""
    body = json.dumps(
        {"results": [{"url": f"https://example.org/r{i}", "title": f"R{i}", "content": "text"} for i in range(results)]}
    ).encode()
    mock.route("GET", "/search", Reply(status=status, headers={"Content-Type": "application/json"}, body=body))


def router(url: str, **extra: Any) -> dict[str, Any]:
    return {"router": {"order": ["searxng"], "providers": {"searxng": {"baseUrl": url}}, **extra}}


def log_lines(client: Any) -> list[str]:
    return [m.message for m in client.log_messages if m.message.startswith("[bandit-search]")]


async def test_route_search_is_one_backend_query_and_no_bandit(spawn, mock_provider, dsh_home: Path):
    searx(mock_provider, 12)
    client = await spawn(router(mock_provider.url))
    r = await client.protocol.send_request_async("dsh/routeSearch", {"query": "how do I clean a bike chain"})
    assert [s["url"] for s in r["sources"]] == [f"https://example.org/r{i}" for i in range(10)]  # the default 10
    assert r["truncated"] is True and r["provider"] == "searxng" and r["cached"] is False
    assert set(r) == {"sources", "truncated", "provider", "cached", "durationMs"}
    r = await client.protocol.send_request_async("dsh/routeSearch", {"query": "bike chain", "maxResults": 3})
    assert len(r["sources"]) == 3
    # one provider request per call: no reformulated variants (the thorough arm's), no bandit
    assert [seen.query["q"] for seen in mock_provider.requests] == ["how do I clean a bike chain", "bike chain"]
    assert log_lines(client) == []
    status = await client.protocol.send_request_async("dsh/status", {})
    assert status["bandit"]["updates"] == {"quick": 0, "thorough": 0}


async def test_route_search_all_empty_is_the_seeds_aggregated_error(spawn, mock_provider):
    searx(mock_provider, 0)
    client = await spawn(router(mock_provider.url))
    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async("dsh/routeSearch", {"query": "nothing here"})
    assert info.value.code == -32001
    assert info.value.message == "search-router: all configured search providers failed:\n- searxng: 0 results"
    assert info.value.data["outage"] is False


async def test_route_search_empty_is_the_answer_without_empty_results_fallback(spawn, mock_provider):
    searx(mock_provider, 0)
    client = await spawn(router(mock_provider.url, emptyResultsFallback=False))
    r = await client.protocol.send_request_async("dsh/routeSearch", {"query": "nothing here"})
    assert r["sources"] == [] and r["provider"] == "searxng"


async def test_route_search_failure_says_outage(spawn, mock_provider):
    client = await spawn({"router": {"order": ["exa"], "providers": {"exa": {"baseURL": "http://127.0.0.1:9"}}}})
    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async("dsh/routeSearch", {"query": "q"})
    assert info.value.code == -32001
    assert info.value.message.startswith("search-router: all configured search providers failed:\n- exa: ")
    assert info.value.data["outage"] is True  # no key: nothing configured, nothing to learn from


async def test_route_search_with_the_opt_in_cache_says_cached(spawn, mock_provider):
    searx(mock_provider, 3)
    client = await spawn(router(mock_provider.url, cache=True))
    first = await client.protocol.send_request_async("dsh/routeSearch", {"query": "bike chain"})
    again = await client.protocol.send_request_async("dsh/routeSearch", {"query": "bike chain"})
    assert first["cached"] is False and again["cached"] is True
    assert again["sources"] == first["sources"] and len(mock_provider.requests) == 1


def run(query: str, n: int, **extra: Any) -> dict[str, Any]:
    sources = [{"url": f"https://example.org/{query.replace(' ', '-')}/{i}", "title": f"{query} {i}"} for i in range(n)]
    return {"query": query, "sources": sources, "durationMs": 40, **extra}


async def test_plan_then_report_learns_and_logs_the_seed_line(spawn, dsh_home: Path):
    client = await spawn({"bandit": {"seed": 3, "speedMs": 6000}})
    plan = await client.protocol.send_request_async("dsh/searchPlan", {"query": "bike chain length"})
    assert set(plan) == {"searchId", "arm", "queries", "maxResults"}
    arm, queries = plan["arm"], plan["queries"]
    if arm == "quick":
        assert queries == ["bike chain length"] and plan["maxResults"] == 5
    else:
        assert queries[0] == "bike chain length" and 2 <= len(queries) <= 3 and plan["maxResults"] == 10
    runs = [run(q, 4) for q in queries]
    out = await client.protocol.send_request_async(
        "dsh/searchReport", {"searchId": plan["searchId"], "runs": runs, "durationMs": 120}
    )
    cap = plan["maxResults"]
    merged = [s for r in runs for s in r["sources"]]
    assert [s["url"] for s in out["sources"]] == [s["url"] for s in merged][:cap]
    expected = 0.5 * min(len(out["sources"]) / cap, 1.0) + 0.5  # 120 ms: the whole speed half
    assert out["reward"] == pytest.approx(expected, abs=1e-6)
    prior = {"alpha": 1, "beta": 1}
    after = {"alpha": 1 + round(expected, 6), "beta": 1 + round(1 - expected, 6)}
    stats = {"quick": after if arm == "quick" else prior, "thorough": after if arm == "thorough" else prior}
    stats = {a: {k: int(v) if float(v).is_integer() else v for k, v in ab.items()} for a, ab in stats.items()}
    assert log_lines(client) == [
        f"[bandit-search] arm={arm} reward={expected:.3f} durationMs=120 resultCount={len(out['sources'])} "
        f"stats={json.dumps(stats, separators=(',', ':'))}"
    ]
    # the search waits for answer-usage feedback like a dsh/search
    fb = await client.protocol.send_request_async(
        "dsh/searchFeedback", {"searchId": plan["searchId"], "usedUrls": [out["sources"][0]["url"]]}
    )
    assert fb["reward"] == pytest.approx(0.5 + 0.5 * expected, abs=1e-6)
    # a plan is reported once
    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async(
            "dsh/searchReport", {"searchId": plan["searchId"], "runs": runs, "durationMs": 1}
        )
    assert info.value.code == -32602 and info.value.message.startswith("searchId: unknown, expired or already reported")


async def test_a_cached_report_is_never_credited_as_a_fast_search(spawn):
    client = await spawn({"bandit": {"seed": 3}})
    plan = await client.protocol.send_request_async("dsh/searchPlan", {"query": "bike chain length"})
    runs = [run(q, 5, cached=True, durationMs=0) for q in plan["queries"]]
    out = await client.protocol.send_request_async(
        "dsh/searchReport", {"searchId": plan["searchId"], "runs": runs, "durationMs": 0}
    )
    assert "reward" not in out  # None is omitted on the wire: nothing was credited
    status = await client.protocol.send_request_async("dsh/status", {})
    assert status["bandit"]["updates"] == {"quick": 0, "thorough": 0}
    [line] = log_lines(client)
    assert line.startswith(f"[bandit-search] arm={plan['arm']} reward=none durationMs=0 resultCount=")
    assert line.endswith(" learned=false cached=true")


async def test_an_all_outage_report_is_not_learned_and_a_failed_one_is_reward_0(spawn):
    client = await spawn({"bandit": {"seed": 3}})
    plan = await client.protocol.send_request_async("dsh/searchPlan", {"query": "bike chain length"})
    runs = [{"query": q, "error": "no provider", "outage": True, "durationMs": 2} for q in plan["queries"]]
    out = await client.protocol.send_request_async(
        "dsh/searchReport", {"searchId": plan["searchId"], "runs": runs, "durationMs": 3}
    )
    assert out["sources"] == [] and "reward" not in out
    plan = await client.protocol.send_request_async("dsh/searchPlan", {"query": "bike chain length"})
    runs = [{"query": q, "error": "HTTP 503", "durationMs": 2} for q in plan["queries"]]
    out = await client.protocol.send_request_async(
        "dsh/searchReport", {"searchId": plan["searchId"], "runs": runs, "durationMs": 3}
    )
    assert out["reward"] == 0.0
    status = await client.protocol.send_request_async("dsh/status", {})
    assert sum(status["bandit"]["updates"].values()) == 1


async def test_the_dsh_search_cache_hit_is_not_credited_either(spawn, mock_provider):
    searx(mock_provider, 5)
    client = await spawn({**router(mock_provider.url, cache=True), "bandit": {"seed": 3}})
    params = {"query": "bike chain length", "strategy": "quick"}
    await client.protocol.send_request_async("dsh/search", params)
    await client.protocol.send_request_async("dsh/search", params)
    status = await client.protocol.send_request_async("dsh/status", {})
    assert status["bandit"]["updates"] == {"quick": 1, "thorough": 0}
    assert log_lines(client)[-1].endswith(" learned=false cached=true")


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"searchId": "x", "runs": [], "durationMs": 1}, "runs"),
        ({"searchId": "x", "runs": [{"query": "q", "durationMs": -1}], "durationMs": 1}, "runs[0].durationMs"),
        (
            {"searchId": "x", "runs": [{"query": "q", "durationMs": 1, "sources": [{"url": ""}]}], "durationMs": 1},
            "runs[0].sources[0].url",
        ),
        ({"searchId": "x", "runs": [{"query": "q", "durationMs": 1}] * 11, "durationMs": 1}, "runs"),
        ({"searchId": "x", "runs": [{"query": "q", "durationMs": 1, "extra": 1}], "durationMs": 1}, "runs[0].extra"),
    ],
)
async def test_a_malformed_report_is_refused_naming_the_field(spawn, params, field):
    client = await spawn({})
    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async("dsh/searchReport", params)
    assert info.value.code == -32602 and info.value.message.startswith(f"{field}:"), info.value.message


async def test_seed_mode_logs_the_seeds_three_example_lines_byte_for_byte():
    """``contextual: false``, ``discount: 1``, ``evidenceScale: 1`` (the DSH bandit-search
    plugin's defaults): one posterior pair for every query, the seed's stationary update, and
    its README's three example lines exactly, from their own durations and counts."""
    from dsh_sidecar.bandit import StrategyBandit
    from dsh_sidecar.bandit.config import parse_bandit_config
    from dsh_sidecar.bandit.policy import GLOBAL

    lines: list[str] = []
    config = parse_bandit_config({"contextual": False, "discount": 1, "evidenceScale": 1, "persist": False})
    bandit = StrategyBandit(None, config, log=lines.append)  # type: ignore[arg-type]
    assert bandit._class_of("how do I clean a bike chain") == bandit._class_of("bike chain length") == GLOBAL
    await bandit._learn(GLOBAL, "quick", 5, 4393)
    await bandit._learn(GLOBAL, "thorough", 10, 8481)
    await bandit._learn(GLOBAL, "quick", 0, 5777)
    assert lines == [
        '[bandit-search] arm=quick reward=1.000 durationMs=4393 resultCount=5 stats={"quick":{"alpha":2,"beta":1},"thorough":{"alpha":1,"beta":1}}',
        '[bandit-search] arm=thorough reward=0.854 durationMs=8481 resultCount=10 stats={"quick":{"alpha":2,"beta":1},"thorough":{"alpha":1.85,"beta":1.15}}',
        '[bandit-search] arm=quick reward=0.000 durationMs=5777 resultCount=0 stats={"quick":{"alpha":2,"beta":2},"thorough":{"alpha":1.85,"beta":1.15}}',
    ]
    assert bandit.policy.evidence[GLOBAL]["quick"] == [1.0, 1.0]  # counted once, not in two rows
    bandit.close()
