"""``shutdown`` with searches in flight: each is answered RequestCancelled (-32800) at once,
the state is flushed, ``exit`` ends the process with code 0."""

from __future__ import annotations

import json
import time

from mockprovider import MockProvider, Reply, case_reply
from rawrpc import RawServer

#: Seconds the slow provider waits before answering: far longer than the test may take.
SLOW_S = 20.0


def test_shutdown_cancels_searches_in_flight_flushes_state_and_exits_0(dsh_home, workspace):
    slow = MockProvider()
    reply, _ = case_reply("searxng", "ok", check=False)
    slow.route("GET", "/search", Reply(reply.status, reply.headers, reply.body, delay_s=SLOW_S))
    srv = RawServer(dsh_home)
    try:
        srv.initialize(
            {
                "router": {
                    "order": ["searxng"],
                    "providers": {"searxng": {"baseUrl": slow.url}},
                    "timeoutMs": 60000,
                    "cache": False,
                },
                "suggester": {"enabled": True},
            },
            root=workspace,
        )
        dismissed = srv.request("dsh/dismiss", {"family": "Version", "path": "src/demo_pkg/__init__.py"})
        assert "result" in dismissed
        searches = [srv.request_id("dsh/search", {"query": f"in flight {i}", "strategy": "quick"}) for i in range(5)]
        deadline = time.monotonic() + 15
        while slow.count("GET", "/search") < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert slow.count("GET", "/search") == 5  # all five are really in flight
        t0 = time.monotonic()
        shutdown = srv.request_id("shutdown")
        assert srv.response(shutdown, timeout=15)["result"] is None
        for msg_id in searches:
            assert srv.response(msg_id, timeout=15)["error"]["code"] == -32800
        assert time.monotonic() - t0 < SLOW_S / 2  # cancelled, not waited for
        srv.notify("exit")
        assert srv.wait(15) == 0
    finally:
        srv.close()
        slow.close()
    knowledge = json.loads((dsh_home / "search-suggester" / "knowledge.json").read_text())
    dismissals = knowledge["workspaces"]["path:" + workspace.resolve().as_posix()]["dismissals"]
    assert "src/demo_pkg/__init__.py" in dismissals["Version"]
    assert b"Traceback" not in srv.stderr_bytes, srv.stderr_bytes.decode()[-2000:]


def test_exit_without_shutdown_exits_1_and_eof_exits_0(dsh_home):
    srv = RawServer(dsh_home)
    srv.initialize({})
    srv.notify("exit")
    assert srv.wait(15) == 1  # LSP: exit before shutdown is an error exit
    srv = RawServer(dsh_home)
    srv.initialize({})
    srv.proc.stdin.close()
    assert srv.wait(15) == 0


def test_requests_after_shutdown_are_refused_with_their_id(dsh_home):
    srv = RawServer(dsh_home)
    try:
        srv.initialize({})
        assert srv.request("shutdown")["result"] is None
        for method, params in (("dsh/status", {}), ("dsh/search", {"query": "late"}), ("initialize", {})):
            reply = srv.request(method, params)
            assert reply["error"] == {"code": -32600, "message": f"Invalid Request: {method} after shutdown"}, reply
        srv.notify("dsh/toolsChanged")  # a notification after shutdown: ignored, no reply
        assert srv.drain(0.3) == []
        srv.notify("exit")
        assert srv.wait(15) == 0
    finally:
        srv.close()
