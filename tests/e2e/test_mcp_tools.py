"""The MCP tools as a model meets them, over real stdio with the official MCP client: the seed's
steer in the server's instructions, ``search`` with its arms hidden and the router's aggregated
error as its only failure text, unknown and malformed arguments refused in plain words,
answer-usage feedback (``search_feedback`` and the hook-only ``stop``) moving the posterior
exactly as docs/bandit.md says, and the hook-only WebSearch steer (``pre_tool_use``) off and on."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from support.mockprovider import Reply
from support.routers import ROUTES, router_block
from support.sidecar import forked, home_env

mcp = pytest.importorskip("mcp", reason="the [mcp] extra (official MCP SDK) is not installed")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

STEER = (
    "Prefer the search tool over web_search for web searches: it picks a quick or a thorough "
    "strategy per query and learns which pays off. Cite the returned URLs as markdown links."
)
URLS = ["https://example.org/chain/clean", "https://example.org/chain/oil", "https://example.org/chain/wear"]


def three_results() -> Reply:
    """A SearXNG answer with the three :data:`URLS`, whatever the query."""
    results = [{"url": u, "title": f"Chain {i}", "content": f"About chains {i}."} for i, u in enumerate(URLS)]
    body = json.dumps({"query": "q", "results": results, "answers": [], "suggestions": []}).encode()
    return Reply(200, {"content-type": "application/json"}, body)


def dsh_search() -> str:
    import sys

    return str(Path(sys.executable).parent / "dsh-search")


@asynccontextmanager
async def session(tmp_path: Path, workspace: Path, config: dict, env: dict | None = None) -> AsyncIterator[tuple]:
    cfg = tmp_path / "sidecar.json"
    cfg.write_text(json.dumps(config))
    home = tmp_path / "dsh-home"
    home.mkdir(exist_ok=True)
    argv = forked([dsh_search(), "mcp", "--config", str(cfg), "--workspace", str(workspace)])
    params = StdioServerParameters(command=argv[0], args=argv[1:], env={**home_env(home), **(env or {})})
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            init = await s.initialize()
            yield s, init


async def test_arguments_are_closed_and_errors_read_plainly(tmp_path, workspace, mock_provider):
    mock_provider.route(*ROUTES["searxng"], three_results())
    async with session(tmp_path, workspace, {"router": router_block(mock_provider, ["searxng"])}) as (s, init):
        calls = [
            ("web_search", {"query": "bike chain", "maxResults": 3}),
            ("web_search", {"query": "bike chain", "max_results": 0}),
            ("web_search", {"max_results": 3}),
            ("search", {"query": "bike chain", "strategy": "quick"}),
            ("search_feedback", {"searchId": "x", "used_urls": []}),
            ("where_is", {"query": "version", "limit": 3}),
            ("suggestion_dismiss", {"family": "Version", "paht": "a.py"}),
        ]
        results = [await s.call_tool(name, args) for name, args in calls]
    assert init.instructions is not None and init.instructions.startswith(STEER)
    texts = [r.content[0].text for r in results]
    assert all(r.is_error for r in results)
    assert texts == [
        "Invalid arguments for web_search: unknown argument 'maxResults' (did you mean 'max_results'?). "
        "Arguments: query (required), max_results.",
        "Invalid arguments for web_search: max_results: Input should be greater than or equal to 1.",
        "Invalid arguments for web_search: query: required.",
        "Invalid arguments for search: unknown argument 'strategy'. Arguments: query (required).",
        "Invalid arguments for search_feedback: unknown argument 'searchId' (did you mean 'search_id'?). "
        "Arguments: search_id (required), used_urls (required).",
        "Invalid arguments for where_is: unknown argument 'limit'. Arguments: query, tool_name, tool_input.",
        "Invalid arguments for suggestion_dismiss: unknown argument 'paht' (did you mean 'path'?). "
        "Arguments: family (required), path.",
    ]
    assert mock_provider.count(*ROUTES["searxng"]) == 0  # nothing ran


async def test_search_hides_its_arms_and_fails_with_the_seed_text_alone(tmp_path, workspace, mock_provider):
    mock_provider.route(*ROUTES["searxng"], three_results())
    config = {"router": router_block(mock_provider, ["searxng"])}
    async with session(tmp_path, workspace, config) as (s, _):
        results = [await s.call_tool("search", {"query": q}) for q in ("bike chain length", "how do I clean a chain")]
        mock_provider.route(*ROUTES["searxng"], Reply(503, {"content-type": "text/plain"}, b"down"))
        failed = await s.call_tool("search", {"query": "bike chain tool"})
    for res in results:
        out = res.structured_content
        assert not res.is_error and set(out) == {"search_id", "sources", "truncated"}
        assert [src["url"] for src in out["sources"]] == URLS
        assert res.content[0].text == json.dumps(out, ensure_ascii=False, separators=(",", ":"))
        for hidden in ("strategy", "quick", "thorough", "reward", "attempt", "searxng", "durationMs"):
            assert hidden not in res.content[0].text
    assert failed.is_error
    assert [c.text for c in failed.content] == [
        "search-router: all configured search providers failed:\n- searxng: HTTP 503"
    ]


async def test_web_search_answered_empty_is_the_router_seeds_error_unless_empty_is_an_answer(
    tmp_path, workspace, mock_provider
):
    """The router seed: "0-result success counts as failure" (``emptyResultsFallback``, default
    true) — the model gets the aggregated error, as over ``dsh/routeSearch``; with the knob off
    the empty answer is the answer."""
    empty = json.dumps({"query": "q", "results": [], "answers": [], "suggestions": []}).encode()
    mock_provider.route(*ROUTES["searxng"], Reply(200, {"content-type": "application/json"}, empty))
    block = router_block(mock_provider, ["searxng"])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with session(tmp_path / "a", workspace, {"router": block}) as (s, _):
        failed = await s.call_tool("web_search", {"query": "nothing here"})
    assert failed.is_error
    assert [c.text for c in failed.content] == [
        "search-router: all configured search providers failed:\n- searxng: 0 results"
    ]
    async with session(tmp_path / "b", workspace, {"router": {**block, "emptyResultsFallback": False}}) as (s, _):
        answered = await s.call_tool("web_search", {"query": "nothing here"})
    assert not answered.is_error and answered.structured_content == {"sources": [], "truncated": False}


async def test_feedback_moves_the_posterior_as_the_formula_says(tmp_path, workspace, mock_provider):
    """Three searches (the third finds other pages); search_feedback reports the first used;
    the hook-only stop (Claude Code's Stop hook) reports an answer citing a source of the first
    two: the second becomes used, the third unused, the first stays as it was. Each reward
    becomes 0.5·used + 0.5·h (h: its heuristic reward in the decision log), and the persisted
    posterior is exactly the sum of [r, 1 − r] per search (discount 1)."""
    mock_provider.route(*ROUTES["searxng"], three_results())
    config = {"router": router_block(mock_provider, ["searxng"]), "bandit": {"discount": 1, "seed": 3}}
    other = [{"url": "https://other.example/rust", "title": "Rust", "content": "Rust on chains."}]
    async with session(tmp_path, workspace, config) as (s, _):
        ids = [
            (await s.call_tool("search", {"query": q})).structured_content["search_id"]
            for q in ("bike chain length", "how do I clean a bike chain")
        ]
        receipt = await s.call_tool(
            "search_feedback",
            {
                "search_id": ids[0],
                "used_urls": [URLS[1].replace("https://example.org", "HTTPS://Example.ORG:443") + "/#top"],
            },
        )
        again = await s.call_tool("search_feedback", {"search_id": ids[0], "used_urls": []})
        unknown = await s.call_tool("search_feedback", {"search_id": "nope", "used_urls": []})
        body = json.dumps({"query": "q", "results": other}).encode()
        mock_provider.route(*ROUTES["searxng"], Reply(200, {"content-type": "application/json"}, body))
        ids.append((await s.call_tool("search", {"query": "bike chain rust"})).structured_content["search_id"])
        answer = f"Clean it first ([guide]({URLS[2]})); oil sparingly."
        stop = await s.call_tool("stop", {"last_assistant_message": answer, "session_id": "s1"})
    assert receipt.structured_content == {"search_id": ids[0], "used": True}
    assert again.structured_content == {"search_id": ids[0], "used": True}  # usage only turns on
    assert unknown.is_error and unknown.content[0].text == (
        "Error executing tool search_feedback: search_id: unknown or expired search 'nope' "
        "(feedback is accepted for the last 1000 searches within 3600 s)"
    )
    assert stop.structured_content == {}
    home = tmp_path / "dsh-home"
    records = [json.loads(x) for x in (home / "bandit" / "decisions.jsonl").read_text().splitlines()]
    decisions = {r["searchId"]: r for r in records if r["event"] == "decision"}
    h = {sid: r["reward"] for sid, r in decisions.items()}
    final = {ids[0]: 0.5 + 0.5 * h[ids[0]], ids[1]: 0.5 + 0.5 * h[ids[1]], ids[2]: 0.5 * h[ids[2]]}
    fed = [(r["searchId"], r["used"], r["reward"]) for r in records if r["event"] == "feedback"]
    assert fed == [
        (ids[0], True, pytest.approx(final[ids[0]], abs=1e-6)),
        (ids[0], True, pytest.approx(final[ids[0]], abs=1e-6)),
        (ids[1], True, pytest.approx(final[ids[1]], abs=1e-6)),
        (ids[2], False, pytest.approx(final[ids[2]], abs=1e-6)),
    ]
    want: dict[tuple[str, str], list[float]] = {}
    for sid, rec in decisions.items():
        for row in (rec["class"], "global"):
            cell = want.setdefault((row, rec["arm"]), [0.0, 0.0])
            cell[0] += final[sid]
            cell[1] += 1 - final[sid]
    doc = json.loads((home / "bandit" / "posteriors.json").read_text())
    got = {(row, arm): cell for row, cells in doc["rows"].items() for arm, cell in cells.items() if any(cell)}
    assert got.keys() == want.keys()
    for key, cell in want.items():
        assert got[key] == pytest.approx(cell, abs=1e-5), key


@pytest.mark.parametrize("switch", [None, "true"])
async def test_the_websearch_steer_is_off_by_default(tmp_path, workspace, switch):
    env = {} if switch is None else {"DSH_SEARCH_STEER_WEBSEARCH": switch}
    async with session(tmp_path, workspace, {}, env=env) as (s, _):
        out = await s.call_tool(
            "pre_tool_use", {"tool_name": "WebSearch", "search_tool": "mcp__plugin_dsh-search_dsh-search__search"}
        )
        odd = await s.call_tool("pre_tool_use", {"tool_name": "WebSearch", "search_tool": "x\ny"})
        listed = {t.name for t in (await s.list_tools()).tools}
    assert "pre_tool_use" not in listed and "stop" not in listed
    if switch is None:
        assert out.structured_content == {} and odd.structured_content == {}
        return
    reason = (
        "Search the web with the mcp__plugin_dsh-search_dsh-search__search tool instead of WebSearch: it picks "
        "a quick or a thorough strategy per query and learns which pays off. Cite the returned URLs as markdown links."
    )
    assert out.structured_content == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
    assert odd.structured_content["hookSpecificOutput"]["permissionDecisionReason"].startswith(
        "Search the web with the search tool instead of WebSearch:"
    )
