"""``dsh-search mcp`` whose session ends while the sidecar is still being built (its build held
for good in the server process): the end does not wait for the build, the process exits 0 on
its own, and the suggester's ledger says so in one line, ``abstained not-ready``, as ``serve``
does (``SidecarServer.end_before_start``). Before, the end waited for the whole build: the
client's teardown had to kill the process, and the ledger stayed empty. Driven through the
official MCP SDK client over real stdio; its stdin is closed by the client's own teardown."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.heldbuild import HELD_BUILD
from support.sidecar import home_env
from support.waiting import until

mcp = pytest.importorskip("mcp", reason="the [mcp] extra (official MCP SDK) is not installed")
from mcp.client import stdio as sdk_stdio  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

#: How long the client's teardown waits for the process to exit on its own (the SDK's default
#: is 2 s, then SIGTERM): a bound on a hang, not a figure.
EXIT_BOUND_S = 120.0


async def test_a_session_ended_during_the_build_exits_0_without_it_and_says_not_ready(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "ledger.log"
    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"suggester": {"enabled": True, "logFile": str(ledger)}}))
    marker = tmp_path / "building"
    ended: dict[str, Any] = {"killed": False}
    stop = sdk_stdio._stop_server_process

    async def stopped(process: Any) -> None:
        await stop(process)
        ended["code"] = process.returncode

    async def kill(process: Any) -> None:
        ended["killed"] = True
        await terminate(process)

    terminate = sdk_stdio._terminate_process_tree
    monkeypatch.setattr(sdk_stdio, "PROCESS_TERMINATION_TIMEOUT", EXIT_BOUND_S)
    monkeypatch.setattr(sdk_stdio, "_stop_server_process", stopped)
    monkeypatch.setattr(sdk_stdio, "_terminate_process_tree", kill)
    args = ["-c", HELD_BUILD, str(marker), "mcp", "--config", str(config), "--workspace", str(workspace)]
    params = StdioServerParameters(command=sys.executable, args=args, env=home_env(tmp_path / "home"))
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()  # starts the build
            await until(marker.exists, "the build started", EXIT_BOUND_S)
    assert ended == {"killed": False, "code": 0}
    lines = [line.split("] ", 1)[1] for line in ledger.read_text().splitlines()]
    assert lines == ["abstained not-ready"]
