"""``dsh-search mcp`` exits as Claude Code ends it: stdin closed, SIGINT, SIGTERM 100 ms later and
SIGKILL 400 ms after that (docs/fleet.md, "The exit is bounded"). With the fleet store stalled and
the workspace still being indexed, the state is written inside that window: the ledger's lines, the
decision log, and the store's close, which says how many writes it did not send — every bandit
update missing from the store is among them. The wait for a workspace build to stop (here one that
takes 2 s once cancelled) comes after the state, so a SIGKILL during it loses nothing uncounted."""

from __future__ import annotations

import json
import re
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest
import redis
from dsh_sidecar.bandit.policy import GLOBAL
from dsh_sidecar.state import keys
from support.fleetkit import REDIS_SERVER, Providers, make_workspace, options, sidecar_env
from support.storeproxy import StoreProxy

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed (.ci/run installs it)")

#: How late the store answers once stalled: past every bound of the test (it never answers in time).
STALL_S = 60.0
#: Claude Code's teardown of an MCP server: SIGINT, SIGTERM this much later, SIGKILL this much after.
SIGTERM_AFTER_S = 0.1
SIGKILL_AFTER_S = 0.4
UNSENT = re.compile(
    r"state store redis://127\.0\.0\.1:\d+/0(?: unavailable)?: (\d+) writes not sent at exit \(([^)]*); "
    r"the exit waits at most [0-9.]+ s for the store\)"
)
GREP = {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}, "session_id": "s"}


#: ``dsh-search mcp`` whose workspace build takes 2 s to stop once cancelled (a large tree's
#: graph pass between two checks of its cancellation): the rest is the real server.
SLOW_TO_STOP = """
import sys, time
from dsh_sidecar.workspace.projection import WorkspaceProjection

stop = WorkspaceProjection.quiesce

def slow_to_stop(self, timeout_s):
    stop(self, timeout_s)
    time.sleep(min(timeout_s, 2.0))

WorkspaceProjection.quiesce = slow_to_stop
from dsh_sidecar.cli import main
sys.argv[0] = "dsh-search"
sys.exit(main())
"""


class Mcp:
    """A ``dsh-search mcp`` process (no fork server: its own signals) spoken to line by line."""

    def __init__(self, workspace: Path, config: dict[str, Any], home: Path, stderr: IO[bytes]) -> None:
        cfg = home.parent / "sidecar.json"
        cfg.write_text(json.dumps(config))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SLOW_TO_STOP, "mcp", "--config", str(cfg), "--workspace", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=sidecar_env(home),
        )
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        assert self.proc.stdout is not None
        while True:
            ready, _, _ = select.select([self.proc.stdout], [], [], 60)
            assert ready, f"no answer to {method} within 60 s"
            message = json.loads(self.proc.stdout.readline())
            if message.get("id") == self.next_id:
                return message

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = self.request("tools/call", {"name": tool, "arguments": args})["result"]
        assert not result.get("isError"), result
        return result

    def notify(self, method: str) -> None:
        self._send({"jsonrpc": "2.0", "method": method})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def end_as_claude_code(self) -> int:
        """Close stdin, SIGINT, SIGTERM, then SIGKILL as Claude Code does; the exit status."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.send_signal(signal.SIGINT)
        for sig, after_s in ((signal.SIGTERM, SIGTERM_AFTER_S), (signal.SIGKILL, SIGKILL_AFTER_S)):
            try:
                return self.proc.wait(after_s)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(sig)
        return self.proc.wait(10)


def test_an_mcp_exit_on_a_slow_store_writes_its_state_before_claude_codes_sigkill(tmp_path: Path, server) -> None:
    raw = redis.Redis.from_url(server.url)
    raw.flushall()
    proxy = StoreProxy(server.port)
    providers = Providers(error_every=0)
    workspace = make_workspace(tmp_path / "demo")
    home = tmp_path / "home"
    home.mkdir()
    errlog = tmp_path / "stderr.log"
    try:
        with errlog.open("wb") as stderr:
            mcp = Mcp(workspace, options(providers, proxy.url(), seed=1, timeoutMs=5000, retryMs=60_000), home, stderr)
            try:
                init = {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                }
                assert "result" in mcp.request("initialize", init)
                mcp.notify("notifications/initialized")
                mcp.request("tools/list")
                mcp.call("search", {"query": "warm"})  # connections made, the search path prepared
                proxy.delay_s = STALL_S
                for i in range(3):  # learned while the store does not answer: the writes wait for it
                    mcp.call("search", {"query": f"slow {i}"})
                    mcp.call("post_tool_use", {**GREP, "session_id": f"s{i}"})
                replies = proxy.replies
                status = mcp.end_as_claude_code()
            finally:
                if mcp.proc.poll() is None:
                    mcp.proc.kill()
                    mcp.proc.wait(10)
        log = errlog.read_text("utf-8", "replace")
        assert proxy.replies == replies  # the exit ended without any of the store's replies
        found = UNSENT.findall(log)
        assert len(found) == 1, (status, log[-3000:])  # the store's close ran, before any SIGKILL
        unsent = int(found[0][0])
        decisions = [
            json.loads(line)
            for line in (home / "bandit" / "decisions.jsonl").read_text("utf-8").splitlines()
            if '"decision"' in line
        ]
        assert len(decisions) == 4  # the decision log has every search
        ledger = (home / "search-suggester" / "ledger.log").read_text("utf-8").splitlines()
        decided = [line.split("] ", 1)[1] for line in ledger[1:]]
        assert len(decided) == 3, ledger  # one line a call, each written before the kill
        # a note, or held back while the large tree is still being indexed
        assert set(decided) <= {
            "suggest Version 0.99 1 targets src/demo_pkg/__init__.py",
            "suppressed not-ready Version",
        }
        stored = sum(int(v) for k, v in raw.hgetall(keys.bandit_counts_key(GLOBAL)).items() if k.endswith(b":updates"))
        assert stored <= 4 and 4 - stored <= unsent  # every update missing from the store is counted
    finally:
        raw.close()
        proxy.close()
        providers.close()
