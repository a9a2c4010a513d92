"""``dsh-search mcp`` over real stdio: a ``where_is`` (or ``session_start``) that waits for the
workspace build waits off the event loop, so a ``web_search`` and hook calls sent after it are
answered first (on the loop they all waited for the build: 5.8 s for a 20 000-file tree; 10 000 here).
Both wait at most the start's first-call window (``firstCallWaitMs``), set long here so that they
wait for the whole build."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from support.mockprovider import case_reply
from support.routers import ROUTES, router_block
from support.sidecar import home_env
from support.trees import big_workspace

mcp = pytest.importorskip("mcp", reason="the [mcp] extra (official MCP SDK) is not installed")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402


async def test_a_where_is_waiting_for_the_build_blocks_no_other_call(tmp_path, mock_provider):
    reply, _ = case_reply("searxng", "ok")
    mock_provider.route(*ROUTES["searxng"], reply)
    workspace = big_workspace(tmp_path / "big")
    cfg = tmp_path / "sidecar.json"
    cfg.write_text(
        json.dumps(
            {
                "router": router_block(mock_provider, ["searxng"]),
                "suggester": {"enabled": True, "sectionMode": "sticky", "firstCallWaitMs": 60_000},
            }
        )
    )
    home = tmp_path / "dsh-home"
    home.mkdir()
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "dsh-search"),
        args=["mcp", "--config", str(cfg), "--workspace", str(workspace)],
        env=home_env(home),
    )
    order: list[str] = []
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()

            async def call(name: str, args: dict) -> object:
                res = await s.call_tool(name, args)
                order.append(name)
                return res

            where = asyncio.ensure_future(call("where_is", {"query": "f3_4"}))
            start = asyncio.ensure_future(call("session_start", {"session_id": "a"}))
            search = await call("web_search", {"query": "bike chain cleaning"})
            hook = await call("post_tool_use", {"tool_name": "Grep", "tool_input": {"pattern": "x"}, "session_id": "a"})
            found = await where
            await start
    assert not search.is_error and not hook.is_error
    assert order[:2] == ["web_search", "post_tool_use"], order
    assert not found.is_error and "intent" in found.structured_content
    assert "index" not in found.structured_content  # it waited for the whole index
