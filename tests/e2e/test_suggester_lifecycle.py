"""The suggester's lifecycle on every front end: activated at start (its ``activated`` or
``abstained foreign-workspace`` ledger line first, before any call is answered, whether or not a
call ever comes), over stdio, MCP and the CLI's ``suggest``; the ledger's sink is used on one
thread only."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import threading
from pathlib import Path

import pytest
from dsh_sidecar.suggester.ledger import Ledger
from support.cli import forked_cli, relhome
from support.rawrpc import RawServer, frame
from support.trees import copy_fixture
from support.waiting import wait_until, workspace_indexed

ACTIVATED = "activated (packs generic,python intents 10 threshold 0.75)"


def messages(text: str) -> list[str]:
    """The messages of ledger lines (``[<ISO>] <message>``)."""
    return [re.sub(r"^\[[^\]]+\] ", "", line) for line in text.splitlines() if line]


def ledger_of(home: Path) -> list[str]:
    path = home / "search-suggester" / "ledger.log"
    return messages(path.read_text()) if path.exists() else []


def foreign(tmp_path: Path) -> Path:
    """A folder no pack applies to (no marker of any built-in pack)."""
    ws = tmp_path / "notes"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    return ws


def test_the_ledger_hands_its_sink_lines_on_its_own_thread(tmp_path):
    seen: list[tuple[str, int]] = []
    ledger = Ledger(tmp_path / "ledger.log", lambda line: seen.append((line, threading.get_ident())), clock=lambda: 0.0)
    worker = threading.Thread(target=ledger.write, args=("activated (packs generic intents 10 threshold 0.75)",))
    worker.start()
    worker.join()
    assert seen == []  # written on another thread: held for the owner
    ledger.write("suggest Version 0.99 1 targets a.py")
    owner = threading.get_ident()
    assert seen == [
        ("[1970-01-01T00:00:00.000Z] activated (packs generic intents 10 threshold 0.75)", owner),
        ("[1970-01-01T00:00:00.000Z] suggest Version 0.99 1 targets a.py", owner),
    ]
    ledger.flush()  # the file has both, in the order they were written
    assert messages((tmp_path / "ledger.log").read_text()) == [
        "activated (packs generic intents 10 threshold 0.75)",
        "suggest Version 0.99 1 targets a.py",
    ]
    worker = threading.Thread(target=ledger.write, args=("ignored Version",))
    worker.start()
    worker.join()
    ledger.drain()
    assert [m for m, _ in seen][-1].endswith("] ignored Version")


def test_stdio_writes_the_activation_first_without_any_call(dsh_home, workspace):
    srv = RawServer(dsh_home)
    try:
        srv.initialize({"suggester": {"enabled": True}}, root=workspace)
        srv.notify("initialized", {})
        # no call at all: the line is written (and sent as window/logMessage) at start
        wait_until(lambda: ledger_of(dsh_home) == [ACTIVATED], "the activation line in the ledger file")
        sent = [m["params"]["message"] for m in srv.drain() if m.get("method") == "window/logMessage"]
        assert [m for m in messages("\n".join(sent)) if not m.startswith("[bandit")] == [ACTIVATED]
        assert srv.shutdown() == 0
    finally:
        srv.close()


def test_stdio_a_call_pipelined_with_initialize_comes_after_the_activation(dsh_home, workspace):
    srv = RawServer(dsh_home)
    try:
        init = {
            "processId": None,
            "capabilities": {},
            "rootUri": workspace.as_uri(),
            "initializationOptions": {"suggester": {"enabled": True}},
        }
        call = {"sessionId": "s", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "__version__"}}}
        srv.send_raw(
            frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
            + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            + frame({"jsonrpc": "2.0", "id": 2, "method": "dsh/postExecute", "params": {**call, "waitMs": 30000}})
        )
        assert srv.response(1, timeout=60)["result"]["serverInfo"]["name"] == "dsh-search-sidecar"
        note = srv.response(2, timeout=60)["result"]["additionalContexts"]
        assert [n["source"]["intent"] for n in note] == ["Version"]
        sent = [m for m in messages("\n".join(srv.log_lines())) if not m.startswith("[bandit")]
        assert sent[:2] == [ACTIVATED, "suggest Version 0.99 1 targets src/demo_pkg/__init__.py"]
        assert srv.shutdown() == 0
        assert ledger_of(dsh_home)[:2] == sent[:2]
    finally:
        srv.close()


def test_stdio_a_foreign_workspace_abstains_at_start(dsh_home, tmp_path):
    srv = RawServer(dsh_home)
    try:
        srv.initialize({"suggester": {"enabled": True}}, root=foreign(tmp_path))
        wait_until(lambda: ledger_of(dsh_home) == ["abstained foreign-workspace"], "the abstention in the ledger")
        assert srv.shutdown() == 0
    finally:
        srv.close()


def test_a_suggester_that_is_off_writes_nothing(dsh_home, workspace):
    srv = RawServer(dsh_home)
    try:
        srv.initialize({}, root=workspace)
        assert srv.request("dsh/status", {})["result"]["suggester"]["activation"] == "off"
        assert srv.shutdown() == 0
        assert ledger_of(dsh_home) == []
    finally:
        srv.close()


def test_mcp_activates_at_start(tmp_path):
    pytest.importorskip("mcp", reason="the [mcp] extra is not installed")
    from e2e.test_mcp import session

    workspace = tmp_path / "pyproj"
    copy_fixture("pyproj", workspace)
    home = tmp_path / "dsh-home"

    async def run() -> None:
        async with session(tmp_path, workspace, {"suggester": {"enabled": True}}) as s:
            await asyncio.to_thread(wait_until, lambda: ledger_of(home)[:1] == [ACTIVATED], "the activation line")
            # the note is asked of the indexed workspace: a loaded machine's build outlasted the
            # first call's default window and the note was owed to a next call this test never makes
            await workspace_indexed(s)
            hook = await s.call_tool(
                "post_tool_use", {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}, "session_id": "m"}
            )
            assert hook.structured_content["hookSpecificOutput"]["additionalContext"]
            await asyncio.to_thread(wait_until, lambda: len(ledger_of(home)) == 2, "the note's line")
            assert ledger_of(home)[0] == ACTIVATED and ledger_of(home)[1].startswith("suggest Version ")

    asyncio.run(run())


def test_mcp_a_foreign_workspace_abstains_at_start(tmp_path):
    pytest.importorskip("mcp", reason="the [mcp] extra is not installed")
    from e2e.test_mcp import session

    home = tmp_path / "dsh-home"

    async def run() -> None:
        async with session(tmp_path, foreign(tmp_path), {"suggester": {"enabled": True}}) as s:
            await asyncio.to_thread(
                wait_until, lambda: ledger_of(home) == ["abstained foreign-workspace"], "the abstention"
            )
            hook = await s.call_tool(
                "post_tool_use", {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}, "session_id": "m"}
            )
            assert hook.structured_content == {}
        assert ledger_of(home) == ["abstained foreign-workspace"]

    asyncio.run(run())


def test_cli_suggest_writes_the_activation_first(tmp_path):
    workspace = tmp_path / "pyproj"
    copy_fixture("pyproj", workspace)
    home = tmp_path / "h"
    home.mkdir()
    env = relhome(home)
    args = ["suggest", "--tool", "grep", "--input", json.dumps({"pattern": "__version__"}), "-w", str(workspace)]
    out = subprocess.run(forked_cli(env) + args, env=env, cwd=home, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = ledger_of(home / env["DSH_HOME"])
    assert lines[0] == ACTIVATED and lines[1].startswith("suggest Version "), lines
