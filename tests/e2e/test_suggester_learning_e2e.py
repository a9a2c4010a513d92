"""Suggester II over real stdio: ``dsh/dismiss``, ``dsh/assembleSection`` (sticky section),
``dsh/toolsChanged``, online learning, and the knowledge flush on ``shutdown`` → a restarted
sidecar keeps the learned order and the dismissal."""

from __future__ import annotations

import json
import re

import pytest
from pygls.exceptions import JsonRpcException
from support.sidecar import prepared, stop_client


def grep(session: str, pattern: str = "pytest fixture") -> dict:
    return {"sessionId": session, "turn": 1, "tool": {"name": "Grep", "input": {"pattern": pattern}}}


def read(session: str, path: str) -> dict:
    return {"sessionId": session, "turn": 1, "tool": {"name": "Read", "input": {"file_path": path}}}


def ledger(client) -> list[str]:
    return [re.sub(r"^\[[^\]]+\] ", "", m.message) for m in client.log_messages]


async def test_section_is_null_when_sticky_mode_is_off(spawn, workspace):
    client = await spawn({"suggester": {"enabled": True}}, root=workspace)
    assert await client.protocol.send_request_async("dsh/assembleSection", {}) == {"section": None}


async def test_dismiss_section_learning_and_restart(spawn, workspace, dsh_home):
    # the Test notes learning and the section are tested on; the per-note confidence holds such
    # notes back by default (a test module first, no evidence for it): its bar is 0 here
    opts = {"suggester": {"enabled": True, "sectionMode": "sticky", "sectionTtl": 300, "minConfidence": 0}}
    client = await prepared(await spawn(opts, root=workspace))
    send = client.protocol.send_request_async

    first = (await send("dsh/postExecute", grep("a")))["additionalContexts"][0]["source"]["targets"]
    assert first[0] == "tests/conftest.py" and "tests/test_core.py" in first
    section = (await send("dsh/assembleSection", {"sessionId": "a"}))["section"]
    assert section["name"] == "search-suggester" and section["order"] == 900
    assert section["text"].startswith(
        "search-suggester: in this repository, the tests and their fixtures lives here:\n"
    )
    assert "- tests/conftest.py — shared pytest fixtures" in section["text"]
    assert await send("dsh/assembleSection", {"sessionId": "a"}) == {"section": section}  # cached: no rebuild
    assert ledger(client).count("section rebuilt (ttl 300)") == 1

    # a path dismissal drops the candidate; toolsChanged makes the section rebuild without it
    result = await send("dsh/dismiss", {"family": "Test", "path": "tests/conftest.py"})
    assert result["record"] == "dismissed Test tests/conftest.py"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", result["expiresAt"])
    assert "dismissed Test tests/conftest.py" in ledger(client)
    client.protocol.notify("dsh/toolsChanged", {})
    section = (await send("dsh/assembleSection", {"sessionId": "a"}))["section"]
    assert "tests/conftest.py" not in section["text"]
    assert ledger(client).count("section rebuilt (ttl 300)") == 2

    # learning: two sessions follow tests/test_core.py (the second, within the flush
    # interval of the first, reaches the file only through the shutdown flush)
    await send("dsh/postExecute", read("a", str(workspace / "tests" / "test_core.py")))
    await send("dsh/postExecute", grep("b"))
    await send("dsh/postExecute", read("b", "tests/test_core.py"))
    assert ledger(client).count("followed Test tests/test_core.py") == 2

    with pytest.raises(JsonRpcException) as exc:
        await send("dsh/dismiss", {"family": "Nope"})
    assert exc.value.code == -32602 and "family: unknown intent 'Nope'" in exc.value.message

    await stop_client(client)  # shutdown flushes the knowledge file
    doc = json.loads((dsh_home / "search-suggester" / "knowledge.json").read_text())
    ws = doc["workspaces"]["path:" + workspace.resolve().as_posix()]
    assert ws["rows"]["Test"]["tests/test_core.py"]["followed"] == 2
    assert set(ws["dismissals"]["Test"]) == {"tests/conftest.py"}

    again = await prepared(await spawn(opts, root=workspace))
    result = await again.protocol.send_request_async("dsh/postExecute", grep("c"))
    targets = result["additionalContexts"][0]["source"]["targets"]
    assert targets[0] == "tests/test_core.py"  # the learned order survived the restart
    assert "tests/conftest.py" not in targets  # so did the dismissal
