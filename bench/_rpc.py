"""A minimal LSP-framed JSON-RPC client over a subprocess' stdio, for the benchmarks
(kept out of the measured path: no pygls on the client side)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any


class StdioClient:
    """Spawn ``cmd`` and talk JSON-RPC to it with blocking reads/writes."""

    def __init__(self, cmd: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env or dict(os.environ))
        self.next_id = 0

    def send(self, method: str, params: Any = None, notify: bool = False) -> int | None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        msg_id = None
        if not notify:
            self.next_id += 1
            msg_id = msg["id"] = self.next_id
        body = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return msg_id

    def read(self) -> dict[str, Any]:
        """Next message from the server."""
        assert self.proc.stdout is not None
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError("server closed stdout")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def response(self, msg_id: int) -> dict[str, Any]:
        """Read until the response to ``msg_id`` (skipping notifications)."""
        while True:
            msg = self.read()
            if msg.get("id") == msg_id and "method" not in msg:
                return msg

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        return self.response(self.send(method, params))  # type: ignore[arg-type]

    def close(self) -> None:
        try:
            self.request("shutdown")
            self.send("exit", notify=True)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()


def sidecar_cmd() -> list[str]:
    return [sys.executable, "-m", "dsh_sidecar", "serve"]
