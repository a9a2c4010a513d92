"""The suggester over real stdio: volatile knobs hot-reload on workspace/didChangeConfiguration,
Symbol names the defining file once the workspace graph is ready."""

from __future__ import annotations

from lsprotocol import types as lsp
from support.sidecar import prepared
from support.waiting import until


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
    result = await client.protocol.send_request_async("dsh/postExecute", _call("s", "class Session"))
    source = result["additionalContexts"][0]["source"]
    assert source["intent"] == "Symbol"
    assert source["targets"][0] == "src/demo_pkg/core.py"
    assert "- src/demo_pkg/core.py — defines Session" in result["additionalContexts"][0]["text"]
