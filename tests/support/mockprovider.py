"""A real HTTP server on loopback that replays provider responses (the fixtures in
``tests/data/providers``) and checks the request each provider must send.

Each route is ``(METHOD, path) → Reply``. A request that does not match a route's
expectations gets a 400 (so a test fails loudly); every request is recorded.
"""

from __future__ import annotations

import copy
import functools
import json
import select
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from dsh_sidecar.configmodel import load_yaml

DATA = Path(__file__).resolve().parents[1] / "data" / "providers"


@functools.cache
def _parsed_cases(provider: str) -> dict[str, Any]:
    return load_yaml((DATA / provider / "cases.yaml").read_text())


def provider_cases(provider: str) -> dict[str, Any]:
    """``<provider>/cases.yaml`` parsed (a copy the caller may change): parsed once per
    worker, where each case's reply and each router's credential parsed it again (~10 ms)."""
    return copy.deepcopy(_parsed_cases(provider))


@dataclass
class Reply:
    """What to answer: status, headers, body; ``delay_s`` before headers; ``trickle_s``
    between body bytes (a slow-loris body); ``hang_s`` a hang before headers that watches the
    connection and gives up when the client closes it (recorded in ``MockProvider.closed_early``);
    ``expect`` the request checks (cases.yaml)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay_s: float = 0.0
    trickle_s: float = 0.0
    hang_s: float = 0.0
    expect: dict[str, Any] | None = None


@dataclass
class Seen:
    """One request the mock received."""

    method: str
    path: str
    headers: dict[str, str]
    query: dict[str, str]
    body: bytes

    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode(), keep_blank_values=True).items()}

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


def check_request(seen: Seen, expect: dict[str, Any]) -> list[str]:
    """Differences between a request and a case's ``request`` block (empty = it matches)."""
    problems = []
    if expect.get("method") and expect["method"].upper() != seen.method:
        problems.append(f"method {seen.method} != {expect['method']}")
    for name, value in (expect.get("headers") or {}).items():
        got = seen.headers.get(name.lower())
        if name.lower() == "content-type" and got is not None:
            got = got.split(";")[0].strip()
        if got != str(value):
            problems.append(f"header {name}: {got!r} != {value!r}")
    for part, actual in (
        ("query", seen.query),
        ("form", seen.form() if expect.get("form") else {}),
        ("json", seen.json() if expect.get("json") else {}),
    ):
        wanted = expect.get(part) or {}
        optional = expect.get(f"{part}_optional") or {}
        for k, v in wanted.items():
            if actual.get(k) != v:
                problems.append(f"{part}.{k}: {actual.get(k)!r} != {v!r}")
        for k, v in optional.items():
            if k in actual and actual[k] != v:
                problems.append(f"{part}.{k} (optional): {actual[k]!r} != {v!r}")
    return problems


def case_reply(provider: str, case_id: str, check: bool = True) -> tuple[Reply, dict[str, Any]]:
    """The :class:`Reply` of one case of ``<provider>/cases.yaml`` and the whole case."""
    doc = provider_cases(provider)
    case = next(c for c in doc["cases"] if c["id"] == case_id)
    resp = case["response"]
    body = (DATA / provider / resp["body_file"]).read_bytes()
    headers = {str(k): str(v) for k, v in (resp.get("headers") or {}).items()}
    return Reply(resp["status"], headers, body, expect=case["request"] if check else None), case


class _QuietServer(ThreadingHTTPServer):
    """A client that drops its connection (a cancelled search, a timeout) is what the tests
    cause on purpose: no traceback on stderr for a reset or broken pipe; anything else is
    still reported."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class MockProvider:
    """A loopback HTTP server. ``url`` is its base URL; set routes with :meth:`route`."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Reply] = {}
        self.requests: list[Seen] = []
        self.closed_early: list[Seen] = []
        self.lock = threading.Lock()
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = Seen(
                    self.command,
                    parts.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()},
                    body,
                )
                with mock.lock:
                    mock.requests.append(seen)
                    reply = mock.routes.get((self.command, parts.path))
                    if callable(reply):
                        reply = reply(seen)
                if reply is None:
                    return self._send(Reply(404, {"content-type": "text/plain"}, b"no route"))
                if reply.expect is not None:
                    expect = dict(reply.expect)
                    problems = check_request(seen, expect)
                    if problems:
                        return self._send(Reply(400, {"content-type": "text/plain"}, "; ".join(problems).encode()))
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.hang_s and self._client_closed_within(reply.hang_s):
                    with mock.lock:
                        mock.closed_early.append(seen)
                    return
                self._send(reply)

            def _client_closed_within(self, seconds: float) -> bool:
                """Wait up to ``seconds``; ``True`` as soon as the client closes the connection."""
                end = time.monotonic() + seconds
                while (left := end - time.monotonic()) > 0:
                    readable, _, _ = select.select([self.connection], [], [], min(left, 0.02))
                    if readable:
                        try:
                            data = self.connection.recv(1, socket.MSG_PEEK)
                        except OSError:
                            data = b""
                        if not data:
                            return True
                return False

            def _send(self, reply: Reply) -> None:
                try:
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    if reply.trickle_s:
                        for i in range(len(reply.body)):
                            self.wfile.write(reply.body[i : i + 1])
                            self.wfile.flush()
                            time.sleep(reply.trickle_s)
                    else:
                        self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = _handle

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def route(self, method: str, path: str, reply: Reply | Callable[[Seen], Reply]) -> None:
        """Answer ``method path`` with ``reply``, or with ``reply(seen)`` when it is a function
        (called under the mock's lock, so it may keep state safely)."""
        with self.lock:
            self.routes[(method.upper(), path)] = reply

    def count(self, method: str, path: str) -> int:
        """Requests received for ``method path``."""
        with self.lock:
            return sum(1 for r in self.requests if r.method == method.upper() and r.path == path)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
