"""``dsh-search mcp`` sent SIGTERM or SIGHUP during its own start (the config read, the SDK's and
the server's imports: seconds on a loaded machine, before the server's signal receiver runs)
ends with status 0, as ``serve``'s start does (``lsp/signals.py``: ``install_start_sigterm``).
Before, the signal's default action killed it (status -15, -1: a harness's teardown saw a
crash), with no stderr. The process is held at a point of its start (``support.heldbuild``), so
the signal comes there whatever the machine's load."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.heldbuild import HELD_AT
from support.sidecar import home_env
from support.waiting import wait_until

pytest.importorskip("mcp", reason="the [mcp] extra (official MCP SDK) is not installed")

#: How long the process may take to start and then to end: bounds on a hang, not figures.
BOUND_S = 120.0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize(
    "held",
    [
        ("dsh_sidecar.cli.serving", "_start_git"),  # the config read, the server not imported
        ("dsh_sidecar.mcp", "run"),  # the SDK's and the server's imports next
    ],
    ids=["config-read", "before-the-server"],
)
def test_a_signal_during_the_start_ends_mcp_with_0(
    workspace: Path, tmp_path: Path, signum: signal.Signals, held: tuple[str, str]
) -> None:
    marker = tmp_path / "held"
    args = [sys.executable, "-c", HELD_AT, str(marker), *held, "mcp", "--workspace", str(workspace)]
    proc = subprocess.Popen(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ | home_env(tmp_path / "home"),
    )
    try:
        wait_until(marker.exists, "the start reached the held point", BOUND_S)
        proc.send_signal(signum)
        assert proc.wait(BOUND_S) == 0, proc.stderr.read().decode() if proc.stderr else ""
        assert proc.stdout is not None and proc.stdout.read() == b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
