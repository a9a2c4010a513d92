"""``dsh-search serve`` treats SIGTERM as ``exit``: it flushes its state and exits 0 (a
harness's teardown, e.g. DeepSeek Harness's ctx.subprocess, SIGTERMs its children while the
adapter's shutdown/exit may still be in flight)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from dsh_protocol.stdio_client import StdioClient


def test_sigterm_exits_0(tmp_path: Path):
    home = tmp_path / "home"
    env = {**os.environ, "DSH_HOME": str(home)}
    client = StdioClient([sys.executable, "-m", "dsh_sidecar", "serve"], env=env)
    ws = Path(__file__).parent / "data" / "workspaces" / "pyproj"
    client.request(
        "initialize",
        {
            "processId": None,
            "capabilities": {},
            "rootUri": ws.resolve().as_uri(),
            "initializationOptions": {"suggester": {"enabled": True}},
        },
    )
    client.request(
        "dsh/postExecute", {"sessionId": "s", "turn": 0, "tool": {"name": "grep", "input": {"pattern": "__version__"}}}
    )
    proc: subprocess.Popen = client.proc
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0  # not -15: the handler ran, then the finally block's flush
