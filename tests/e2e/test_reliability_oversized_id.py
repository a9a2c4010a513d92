"""A request over the 16 MiB body limit is answered with its own id (docs/SECURITY.md, class 12).

The body is drained and refused; the reply used to carry ``id: null`` always, so a client
waiting for its request's id (every harness does) waited forever: a 16 MiB + 10 byte
``dsh/postExecute`` got no reply it could match in 60 s. The id is now recovered from the
first bytes of the discarded body when it is at the top level there.
"""

from __future__ import annotations

import json

from support.rawrpc import RawServer


def test_oversized_request_is_refused_with_its_id(tmp_path):
    server = RawServer(tmp_path / "home", forked=True)
    try:
        server.initialize({})
        pad = "x" * (16 * 1024 * 1024 + 10)
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 77, "method": "dsh/postExecute", "params": {"tool": {"input": {"p": pad}}}}
        ).encode()
        server.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        reply = server.response(77, timeout=60)
        assert reply["error"]["code"] == -32600
        assert reply["error"]["message"] == (
            f"Invalid Request: Content-Length {len(body)} is over 16777216 bytes (body discarded)"
        )
        assert "result" in server.request("dsh/status")
    finally:
        server.close()
