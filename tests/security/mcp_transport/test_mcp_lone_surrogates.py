"""A lone surrogate escape (``"\\ud83d"`` without its pair) is valid JSON but not text: a user's
prompt or a tool's output cut in half an emoji carries one. The MCP SDK's parser refuses a line
holding one anywhere, so a hook call (``post_tool_use``, ``session_start``) or a ``where_is`` was
answered -32600 "could not parse this message" instead of being read (a hook is answered ``{}``
at worst, never an error). Over real stdio to ``dsh-search mcp``: each lone surrogate is read as
U+FFFD; a pair stays the character it is. A request whose id holds one ended the server
(the SDK's writer could not write the id back); it is refused with a null id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.security.mcp_transport.test_mcp_where_is_parallel import Mcp

pytest.importorskip("mcp", reason="the [mcp] extra is not installed")

LONE = "\ud83d"
BAD = {"code": -32600, "message": "Invalid Request: id must be a number or a string"}


def call(client: Mcp, rid: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    assert client.proc.stdin is not None
    client.proc.stdin.write(json.dumps(body).encode() + b"\n")  # json.dumps writes the lone one as \ud83d
    client.proc.stdin.flush()
    return client.reply()


def test_hook_calls_and_where_is_holding_a_lone_surrogate_are_read(tmp_path: Path, workspace: Path) -> None:
    client = Mcp(tmp_path, workspace)
    try:
        hook = {"tool_name": "Grep", "tool_input": {"pattern": "__version__" + LONE}, "session_id": "a" + LONE}
        got = call(client, 1, "post_tool_use", {**hook, "tool_response": "x" + LONE})
        assert got["id"] == 1 and "error" not in got and got["result"]["isError"] is False
        prompt = {"session_id": "b", "hook_event_name": "UserPromptSubmit", "prompt": "bump the version " + LONE}
        got = call(client, 2, "session_start", prompt)
        assert got["id"] == 2 and "error" not in got and got["result"]["isError"] is False
        got = call(client, 3, "suggestion_dismiss", {"family": "Version" + LONE})
        assert got["result"]["isError"] is True  # read: the family is unknown, named as it was read
        assert "unknown intent 'Version\ufffd'" in got["result"]["content"][0]["text"]
        got = call(client, 4, "where_is", {"query": "__version__ \U0001f600" + LONE})
        assert got["id"] == 4 and got["result"]["structuredContent"]["intent"] == "Version"
        # an id holding one is no text, so no id: refused with a null id (it is never rewritten
        # into another id); before, the SDK's writer raised on it and the server ended
        got = call(client, "id" + LONE, "where_is", {"query": "__version__"})
        assert got == {"jsonrpc": "2.0", "id": None, "error": BAD}
        got = call(client, 5, "where_is", {"query": "__version__"})
        assert got["id"] == 5 and got["result"]["structuredContent"]["intent"] == "Version"
    finally:
        client.close()
