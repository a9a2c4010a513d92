"""Class 5 (docs/SECURITY.md): a key split across fields shows no part of it.

A Brave-format provider that answered ``title: "t <first 16 characters of the key>"`` and
``description: "<the other 16> tail"`` got both halves to the agent: each field held only part
of the key, so no form of the whole key matched. Any run of at least ``FRAGMENT_CHARS``
characters of a secret is now redacted, in replies, logs and frames.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from dsh_sidecar.redact import FRAGMENT_CHARS, MARKER, Redactor
from support.rawrpc import RawServer

KEY = "bsk-SplitAcrossFields-5c9e21d7a4"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"t {KEY[:16]}", f"t {MARKER}"),
        (f"{KEY[16:]} tail", f"{MARKER} tail"),
        (f"a {KEY[5 : 5 + FRAGMENT_CHARS]} b", f"a {MARKER} b"),
        (f"{KEY[:8]}|{KEY[8:]}", f"{KEY[:8]}|{MARKER}"),  # an 8-character piece alone stays
        (f"x {KEY} y {KEY[3:20]}", f"x {MARKER} y {MARKER}"),
        ("bsk- is a prefix, nothing else", "bsk- is a prefix, nothing else"),
    ],
)
def test_runs_of_the_key_are_redacted(text: str, expected: str) -> None:
    r = Redactor([KEY])
    assert r(text) == expected
    assert r.redact_bytes(text.encode()) == expected.encode()


class _Split(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server API
        item = {
            "url": f"https://example.com/?a={KEY[:12]}",
            "title": f"t {KEY[:16]}",
            "description": f"{KEY[16:]} tail",
            "page_age": KEY[10:30],
        }
        body = json.dumps({"web": {"results": [item]}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_split_key_never_reaches_the_agent(tmp_path: Path) -> None:
    http = ThreadingHTTPServer(("127.0.0.1", 0), _Split)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{http.server_address[1]}"
    server = RawServer(tmp_path / "home", env={"BRAVE_SEARCH_API_KEY": KEY, "DSH_LOG_LEVEL": "DEBUG"}, forked=True)
    try:
        server.initialize({"router": {"order": ["brave"], "providers": {"brave": {"baseUrl": base}}, "cache": False}})
        reply = server.request("dsh/search", {"query": "q", "strategy": "quick"}, timeout=30)
        source = reply["result"]["sources"][0]
        assert source["title"] == f"t {MARKER}"
        assert source["snippet"] == f"{MARKER} tail"
    finally:
        server.close()
        http.shutdown()
    seen = bytes(server.stdout_bytes + server.stderr_bytes).decode("utf-8", "replace")
    for i in range(len(KEY) - FRAGMENT_CHARS + 1):
        assert KEY[i : i + FRAGMENT_CHARS] not in seen
