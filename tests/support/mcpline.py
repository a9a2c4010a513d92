"""A spawned ``dsh-search mcp`` spoken to line by line: newline-delimited JSON-RPC over real
stdio, the server's configuration written to a file, its replies read on a thread (for tests
that send many requests before reading any answer)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from support.sidecar import forked, home_env

#: The ``initialize`` params every line client sends.
INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}


class McpLine:
    """``dsh-search mcp --config <config> --workspace <workspace>``, initialized; ``send`` writes
    one message, ``reply`` takes the next answer read."""

    def __init__(self, tmp_path: Path, workspace: Path, config: dict[str, Any]) -> None:
        cfg = tmp_path / "sidecar.json"
        cfg.write_text(json.dumps(config))
        script = str(Path(sys.executable).parent / "dsh-search")
        self.proc = subprocess.Popen(
            forked([script, "mcp", "--config", str(cfg), "--workspace", str(workspace)]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=home_env(tmp_path / "home"),
        )
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.send({"id": 0, "method": "initialize", "params": INITIALIZE})
        assert self.reply()["id"] == 0
        self.send({"method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 60) -> dict[str, Any]:
        return self.replies.get(timeout=timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
