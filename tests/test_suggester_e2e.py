"""The suggester over real stdio: volatile knobs hot-reload on workspace/didChangeConfiguration,
Symbol names the defining file once the workspace graph is ready."""

from __future__ import annotations

import asyncio

from lsprotocol import types as lsp
from support.waiting import until


async def _graph_ready(client) -> None:
    for _ in range(300):
        status = await client.protocol.send_request_async("dsh/status", {})
        if status["suggester"]["graph"]["ready"]:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the workspace graph never got ready")


async def prepared(client, timeout_s: float = 60.0):
    """Wait until the sidecar's workspace projection (graph, content index, targets) is ready:
    initialize answers before it, and calls before it are suppressed as not-ready."""
    for _ in range(int(timeout_s / 0.05)):
        status = await client.protocol.send_request_async("dsh/status", {})
        if status["suggester"]["graph"]["ready"]:
            return client
        await asyncio.sleep(0.05)
    raise AssertionError("the workspace projection never got ready")


def _call(session: str, pattern: str, turn: int = 1) -> dict:
    return {"sessionId": session, "turn": turn, "tool": {"name": "Grep", "input": {"pattern": pattern}}}


async def test_volatile_knob_hot_reloads_over_stdio(spawn, workspace):
    client = await prepared(await spawn({"suggester": {"enabled": True}}, root=workspace))
    first = await client.protocol.send_request_async("dsh/postExecute", _call("a", "__version__"))
    assert first["additionalContexts"][0]["source"]["intent"] == "Version"
    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(
            settings={"suggester": {"enabled": True, "maxNotesPerTurn": 0, "indexPath": "/retired/index.json"}}
        )
    )
    second = await client.protocol.send_request_async("dsh/postExecute", _call("b", "__version__"))
    assert second == {"additionalContexts": []}
    await until(
        lambda: any(m.message.endswith("] suppressed turn-cap Version") for m in client.log_messages),
        "the suppressed turn-cap ledger line",
    )


async def test_symbol_names_the_defining_file_over_stdio(spawn, workspace):
    client = await prepared(await spawn({"suggester": {"enabled": True}}, root=workspace))
    await _graph_ready(client)
    result = await client.protocol.send_request_async("dsh/postExecute", _call("s", "class Session"))
    source = result["additionalContexts"][0]["source"]
    assert source["intent"] == "Symbol"
    assert source["targets"][0] == "src/demo_pkg/core.py"
    assert "- src/demo_pkg/core.py — defines Session" in result["additionalContexts"][0]["text"]
