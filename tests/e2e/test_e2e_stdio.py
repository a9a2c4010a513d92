"""End to end over real stdio: the installed ``dsh-search serve`` driven by pytest-lsp, with
real HTTP providers on loopback."""

from __future__ import annotations

import re

import pytest
import pytest_asyncio
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from support.mockprovider import MockProvider, case_reply
from support.routers import router_block
from support.sidecar import initialize, prepared, start_server, stop_client

BANDIT_LINE = re.compile(
    r"^\[bandit-search\] arm=(quick|thorough) reward=\d\.\d{3} durationMs=\d+ resultCount=\d+ "
    r'stats=\{"quick":\{"alpha":[\d.]+,"beta":[\d.]+\},"thorough":\{"alpha":[\d.]+,"beta":[\d.]+\}\}$'
)


def chain_config(mock, order, **router):
    return {"router": router_block(mock, order, timeoutMs=5000, **router)}


@pytest.mark.asyncio(loop_scope="module")
async def test_search_searxng_quick(searxng_sidecar):
    _, case = case_reply("searxng", "ok", check=False)  # what the shared sidecar's SearXNG answers
    client = searxng_sidecar
    seen = len(client.log_messages)  # the lines of earlier searches came before their replies
    # a query no other test of the shared sidecar searches: not a cache hit
    result = await client.protocol.send_request_async(
        "dsh/search", {"query": "bike chain cleaning tools", "strategy": "quick"}
    )
    assert result["strategy"] == "quick"
    # quick caps at 5 of the 6 usable sources, so the cap really dropped one
    assert [s["url"] for s in result["sources"]] == case["expect"]["urls"][:5]
    assert result["truncated"] is True
    first = dict(case["expect"]["first_source"])
    first.pop("publishedAt_day")
    assert result["sources"][0] == first
    assert result["attempts"][0]["provider"] == "searxng" and result["attempts"][0]["outcome"] == "ok"
    assert 0.0 <= result["reward"] <= 1.0
    assert re.fullmatch(r"[0-9a-f]{32}", result["searchId"])
    # the seed's log line arrives as window/logMessage
    lines = [m.message for m in client.log_messages[seen:] if m.message.startswith("[bandit-search]")]
    assert len(lines) == 1 and BANDIT_LINE.match(lines[0]), lines
    assert " arm=quick " in lines[0] and " resultCount=5 " in lines[0]


async def test_fallback_from_forbidden_searxng_to_duckduckgo(spawn, mock_provider):
    mock_provider.route("GET", "/search", case_reply("searxng", "json-disabled", check=False)[0])
    ddg, ddg_case = case_reply("duckduckgo", "ok", check=False)
    mock_provider.route("POST", "/html/", ddg)
    client = await spawn(chain_config(mock_provider, ["searxng", "duckduckgo"]))
    result = await client.protocol.send_request_async(
        "dsh/search", {"query": "how to fix a leaky faucet", "strategy": "quick"}
    )
    assert [a["provider"] for a in result["attempts"]] == ["searxng", "duckduckgo"]
    assert result["attempts"][0]["outcome"].startswith("HTTP 403")
    assert "<html" not in result["attempts"][0]["outcome"].lower()
    assert result["attempts"][1]["outcome"] == "ok"
    assert [s["url"] for s in result["sources"]] == ddg_case["expect"]["urls"][:5]
    assert result["sources"][0] == ddg_case["expect"]["first_source"]


async def test_all_providers_failing_gives_the_aggregated_error(spawn, mock_provider):
    mock_provider.route("GET", "/search", case_reply("searxng", "json-disabled", check=False)[0])
    mock_provider.route("POST", "/html/", case_reply("duckduckgo", "challenge-202", check=False)[0])
    client = await spawn(chain_config(mock_provider, ["searxng", "duckduckgo"]))
    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async(
            "dsh/search", {"query": "how to fix a leaky faucet", "strategy": "quick"}
        )
    err = info.value
    assert err.code == -32001
    lines = err.message.split("\n")
    assert lines[0] == "search-router: all configured search providers failed:"
    assert lines[1] == "- searxng: HTTP 403 (is `json` enabled in search.formats of the instance's settings.yml?)"
    assert lines[2] == "- duckduckgo: blocked (HTTP 202 challenge)"
    assert len(lines) == 3
    assert [a["provider"] for a in err.data["attempts"]] == ["searxng", "duckduckgo"]
    # the server keeps serving
    status = await client.protocol.send_request_async("dsh/status", {})
    assert [c["provider"] for c in status["router"]["chain"]] == ["searxng", "duckduckgo"]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def searxng_sidecar(tmp_path_factory):
    """One sidecar over a SearXNG mock for the read-only cases (refused params change nothing;
    a search teaches the bandit, which no test here reads)."""
    mock = MockProvider()
    mock.route("GET", "/search", case_reply("searxng", "ok", check=False)[0])
    client = await start_server(tmp_path_factory.mktemp("dsh-home"))
    try:
        await initialize(client, chain_config(mock, ["searxng"]))
        yield client
    finally:
        await stop_client(client)
        mock.close()


@pytest.mark.parametrize(
    "params, field",
    [
        ({}, "query: Field required"),
        ({"query": 42}, "query: Input should be a valid string"),
        ({"query": "x", "maxResults": "5"}, "maxResults: Input should be a valid integer"),
        ({"query": "x", "strategy": "fast"}, "strategy: Input should be 'auto', 'quick' or 'thorough'"),
        ({"query": "x", "max_results": 5}, "max_results: unknown field"),
        ([1, 2], "params must be an object"),
    ],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_malformed_search_gets_invalid_params_with_its_id(searxng_sidecar, params, field):
    client = searxng_sidecar
    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async("dsh/search", params)
    assert info.value.code == -32602
    assert info.value.message == field
    ok = await client.protocol.send_request_async("dsh/search", {"query": "bike chain cleaning", "strategy": "quick"})
    assert len(ok["sources"]) == 5


async def test_post_execute_names_the_file_defining_version(spawn, workspace):
    # once the workspace is indexed: a call before it waits at most 5 s, which a loaded machine misses
    client = await prepared(await spawn({"suggester": {"enabled": True}}, root=workspace))
    result = await client.protocol.send_request_async(
        "dsh/postExecute",
        {"sessionId": "s1", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "__version__"}}},
    )
    notes = result["additionalContexts"]
    assert len(notes) == 1
    source = notes[0]["source"]
    assert source["kind"] == "search-suggester" and source["form"] == "notice"
    assert source["intent"] == "Version"
    assert source["targets"] == ["src/demo_pkg/__init__.py"]
    assert "src/demo_pkg/__init__.py — defines __version__" in notes[0]["text"]
    ledger = [m.message for m in client.log_messages if "] suggest " in m.message]
    assert len(ledger) == 1
    assert re.fullmatch(
        r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] suggest Version 0\.99 1 targets src/demo_pkg/__init__\.py",
        ledger[0],
    )


async def test_unrelated_call_is_silent(spawn, workspace):
    client = await spawn({"suggester": {"enabled": True}}, root=workspace)
    for tool in (
        {"name": "grep", "input": {"pattern": "frobnicate"}},
        {"name": "bash", "input": {"command": "make build"}},
        {"name": "edit", "input": {"path": "src/demo_pkg/__init__.py"}},
    ):
        result = await client.protocol.send_request_async(
            "dsh/postExecute", {"sessionId": "s", "turn": 0, "tool": tool}
        )
        assert result == {"additionalContexts": []}


async def test_suggester_ships_disabled(spawn, workspace):
    client = await spawn({}, root=workspace)
    result = await client.protocol.send_request_async(
        "dsh/postExecute", {"sessionId": "s", "turn": 0, "tool": {"name": "grep", "input": {"pattern": "__version__"}}}
    )
    assert result == {"additionalContexts": []}


async def test_invalid_initialization_options_name_the_key(spawn):
    client = await spawn(initialize=False)
    with pytest.raises(JsonRpcException) as info:
        await client.initialize_session(
            lsp.InitializeParams(
                capabilities=lsp.ClientCapabilities(), initialization_options={"router": {"timeoutMs": 50}}
            )
        )
    assert info.value.code == -32602
    assert info.value.message.startswith("invalid initializationOptions: router.timeoutMs: ")


async def test_request_before_initialize_is_refused(spawn):
    client = await spawn(initialize=False)
    client.capabilities = lsp.ClientCapabilities()  # let pytest-lsp send without initialize
    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async("dsh/status", {})
    assert info.value.code == -32002
