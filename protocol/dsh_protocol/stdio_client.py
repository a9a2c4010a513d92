"""A minimal blocking JSON-RPC client over a child's stdio (LSP ``Content-Length`` framing).

For tools that drive a spawned ``dsh-search serve``: ``dsh-search replay`` and the
benchmarks in ``bench/``. Kept free of pygls so it measures the server, not a client library.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any


class StdioClient:
    """Spawn ``cmd`` and talk JSON-RPC to it. ``logs`` collects the ``window/logMessage``
    lines seen while waiting for responses."""

    def __init__(self, cmd: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env or dict(os.environ)
        )
        self.next_id = 0
        self.logs: list[str] = []

    def send(self, method: str, params: Any = None, notify: bool = False) -> int | None:
        """Write one request (returns its id) or notification (returns ``None``)."""
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
        """The next message from the server. Raises ``EOFError`` when it closed stdout."""
        assert self.proc.stdout is not None
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError("the server closed stdout")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def response(self, msg_id: int) -> dict[str, Any]:
        """Read until the response to ``msg_id`` (notifications in between: log lines kept)."""
        while True:
            msg = self.read()
            if msg.get("method") == "window/logMessage":
                self.logs.append(msg.get("params", {}).get("message", ""))
            if msg.get("id") == msg_id and "method" not in msg:
                return msg

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        """Send a request and return its whole response message (``result`` or ``error``)."""
        return self.response(self.send(method, params))  # type: ignore[arg-type]

    def call(self, method: str, params: Any = None) -> Any:
        """Send a request and return its ``result``. Raises ``RuntimeError`` on an error reply."""
        msg = self.request(method, params)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error'].get('message')}")
        return msg.get("result")

    def close(self) -> None:
        """``shutdown`` + ``exit`` and wait; kill the process if it does not go."""
        try:
            self.request("shutdown")
            self.send("exit", notify=True)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
