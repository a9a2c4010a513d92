"""``dsh-search mcp`` with a bad setting, over real stdio with the official MCP client, as a
user meets it: a malformed provider setting in the environment skips that provider (the log
names the variable at start-up, the tools that need only it answer a tool error naming it),
while the suggester's hooks, ``where_is`` and the chain's other providers keep answering; a
config file that cannot be used fails the start, naming the problem on stderr, as
``dsh-search serve`` does. Never a secret in any of it."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from support.mockprovider import case_reply
from support.routers import ROUTES
from support.sidecar import forked, home_env
from support.waiting import workspace_indexed

mcp = pytest.importorskip("mcp", reason="the [mcp] extra (official MCP SDK) is not installed")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

NOTE = "search-suggester: in this repository, look here for the package version:\n- src/demo_pkg/__init__.py — defines __version__"
SUGGEST = {"suggester": {"enabled": True}}
PASSWORD = "hunter22"
#: A malformed ``SEARXNG_BASE_URL`` per way it can be wrong, with the reason the router gives
#: (the last one carries a password: it must appear nowhere).
BAD_URLS = {
    "ftp": ("ftp://x", "must be an absolute http:// or https:// URL"),
    "no-host": ("http://", "must be an absolute http:// or https:// URL"),
    "not-a-url": ("not a url", "contains whitespace or control characters"),
    "password": (f"http://admin:{PASSWORD}@", "must be an absolute http:// or https:// URL"),
}


def command() -> list[str]:
    return [str(Path(sys.executable).parent / "dsh-search"), "mcp"]


def params(tmp_path: Path, argv: list[str], env: dict[str, str]) -> StdioServerParameters:
    home = tmp_path / "dsh-home"
    home.mkdir(exist_ok=True)
    return StdioServerParameters(command=argv[0], args=argv[1:], env={**home_env(home), **env})


@asynccontextmanager
async def session(tmp_path: Path, workspace: Path, config: dict, env: dict[str, str]) -> AsyncIterator[ClientSession]:
    cfg = tmp_path / "sidecar.json"
    cfg.write_text(json.dumps(config))
    # forked (support.forkserver): the server's start is not what these tests time
    argv = forked([*command(), "--config", str(cfg), "--workspace", str(workspace)])
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with (
            stdio_client(params(tmp_path, argv, env), errlog=errlog) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            yield s


@pytest.mark.parametrize("bad", list(BAD_URLS))
async def test_a_bad_searxng_url_skips_searxng_and_nothing_else(tmp_path, workspace, mock_provider, bad):
    """The zero-config chain with a malformed SEARXNG_BASE_URL: the hook still notes,
    where_is still answers, DuckDuckGo (on the loopback mock) answers web_search, whose
    progress says why SearXNG was skipped; the start-up log names the variable."""
    url, reason = BAD_URLS[bad]
    why = f"skipped: invalid config ($SEARXNG_BASE_URL: {reason})"
    reply, _ = case_reply("duckduckgo", "ok", check=False)
    mock_provider.route(*ROUTES["duckduckgo"], reply)
    config = {**SUGGEST, "router": {"providers": {"duckduckgo": {"baseURL": mock_provider.url}}}}
    progress: list[str | None] = []

    async def on_progress(value, total, message):
        progress.append(message)

    async with session(tmp_path, workspace, config, {"SEARXNG_BASE_URL": url}) as s:
        await workspace_indexed(s)  # the note, not the first call's window (firstCallWaitMs)
        note = await s.call_tool(
            "post_tool_use", {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}, "session_id": "a"}
        )
        where = await s.call_tool("where_is", {"query": "package version"})
        found = await s.call_tool("web_search", {"query": "leaky faucet"}, progress_callback=on_progress)
    assert note.structured_content == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": NOTE}
    }
    assert not where.is_error and where.structured_content["intent"] == "Version"
    assert not found.is_error and len(found.structured_content["sources"]) == 5
    assert progress[0] == f"searxng: {why} (0 ms)"
    assert progress[1] is not None and progress[1].startswith("duckduckgo: ok (") and len(progress) == 2
    err = (tmp_path / "stderr.log").read_text()
    assert f"WARNING dsh_sidecar.router.config: router: provider searxng {why}\n" in err
    assert "Traceback" not in err
    everything = err + json.dumps([note.model_dump(), where.model_dump(), found.model_dump(), progress])
    assert PASSWORD not in everything


@pytest.mark.parametrize("tool", ["web_search", "search"])
async def test_a_chain_of_only_the_bad_provider_answers_a_tool_error_naming_the_variable(tmp_path, workspace, tool):
    """``provider: searxng`` and a malformed SEARXNG_BASE_URL: every search cannot work, and
    says so as the router seed's aggregated error, naming the variable (not the value); the
    hook keeps its note."""
    url, reason = BAD_URLS["password"]
    config = {**SUGGEST, "router": {"provider": "searxng"}}
    async with session(tmp_path, workspace, config, {"SEARXNG_BASE_URL": url}) as s:
        res = await s.call_tool(tool, {"query": "leaky faucet"})
        await workspace_indexed(s)  # the note, not the first call's window (firstCallWaitMs)
        note = await s.call_tool(
            "post_tool_use", {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}, "session_id": "b"}
        )
    assert res.is_error
    assert res.content[0].text == (
        "search-router: all configured search providers failed:\n"
        f"- searxng: skipped: invalid config ($SEARXNG_BASE_URL: {reason})"
    )
    assert note.structured_content["hookSpecificOutput"]["additionalContext"] == NOTE
    assert PASSWORD not in (tmp_path / "stderr.log").read_text()


#: A config file ``--config`` passes that the server cannot use, and the line it fails its start with.
BAD_FILES = {
    "not-json": ('{"router": {"timeoutMs": 5', "{path}: not valid JSON (line 1, column 27: Expecting ',' delimiter)"),
    "bad-url": (
        json.dumps({"router": {"providers": {"searxng": {"baseUrl": f"http://admin:{PASSWORD}@:99999"}}}}),
        "router.providers.searxng.baseUrl: not a valid URL",
    ),
    "bad-key": (
        json.dumps({"router": {"providers": {"exa": {"apiKey": f"exa {PASSWORD}"}}}}),
        "router.providers.exa.apiKey: API key contains whitespace, control or non-ASCII characters",
    ),
    "unknown-key": (json.dumps({"router": {"timeoutMS": 500}}), "router.timeoutMS: unknown key"),
}


@pytest.mark.parametrize("bad", list(BAD_FILES))
async def test_a_config_file_it_cannot_use_fails_the_start_naming_the_problem(tmp_path, workspace, bad):
    """Before its first reply, as ``serve`` checks its ``--config``: the client's start fails
    (the server exits 2) and stderr has the one line every command writes for it."""
    text, line = BAD_FILES[bad]
    cfg = tmp_path / "sidecar.json"
    cfg.write_text(text)
    argv = [*command(), "--config", str(cfg), "--workspace", str(workspace)]  # the real start, not forked
    errlog_path = tmp_path / "stderr.log"
    with errlog_path.open("w") as errlog, pytest.raises(ExceptionGroup) as info:
        async with (
            stdio_client(params(tmp_path, argv, {}), errlog=errlog) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
    assert info.group_contains(MCPError, match="^Connection closed$", depth=2)
    assert errlog_path.read_text() == f"dsh-search: invalid config: {line.format(path=cfg)}\n"
