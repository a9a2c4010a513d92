"""A minimal blocking JSON-RPC client over a child's stdio (LSP ``Content-Length`` framing).

For tools that drive a spawned ``dsh-search serve``: ``dsh-search replay`` and the
benchmarks in ``bench/``. Kept free of pygls so it measures the server, not a client library.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import IO, Any


def encode_frame(msg: Any) -> bytes:
    r"""One JSON-RPC message as an LSP frame: ``Content-Length: <n>\r\n\r\n<JSON body>``."""
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_frame(stream: IO[bytes], raw: bytearray | None = None) -> bytes | None:
    """The body bytes of the next LSP frame on ``stream`` (headers up to the blank line; a
    missing ``Content-Length`` reads an empty body), or ``None`` at end of stream. Every byte
    read (headers and body) is appended to ``raw`` when given, for callers that check what
    the server wrote. Raises ``ValueError`` on a ``Content-Length`` that is not a number."""
    length = 0
    while True:
        line = stream.readline()
        if not line:
            return None
        if raw is not None:
            raw += line
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = stream.read(length)
    if raw is not None:
        raw += body
    return body


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
        assert self.proc.stdin is not None
        self.proc.stdin.write(encode_frame(msg))
        self.proc.stdin.flush()
        return msg_id

    def read(self) -> dict[str, Any]:
        """The next message from the server. Raises ``EOFError`` when it closed stdout."""
        assert self.proc.stdout is not None
        body = read_frame(self.proc.stdout)
        if body is None:
            raise EOFError("the server closed stdout")
        return json.loads(body)

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

    def initialize(self, root: Path | None, options: Any = None) -> Any:
        """The LSP handshake: ``initialize`` (``rootUri`` from ``root``, ``initializationOptions``
        ``options``) then the ``initialized`` notification; returns the ``initialize`` result.
        Raises ``RuntimeError`` when the server refuses it (e.g. -32602 for bad options)."""
        result = self.call(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": {},
                "rootUri": root.resolve().as_uri() if root is not None else None,
                "initializationOptions": options,
            },
        )
        self.send("initialized", {}, notify=True)
        return result

    def close(self) -> None:
        """``shutdown`` + ``exit`` and wait; kill the process if it does not go."""
        try:
            self.request("shutdown")
            self.send("exit", notify=True)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
