"""``shutdown`` with searches in flight: each is answered RequestCancelled (-32800) at once,
the state is flushed, ``exit`` ends the process with code 0."""

from __future__ import annotations

import json

from support.mockprovider import MockProvider, Reply, case_reply
from support.rawrpc import RawServer
from support.waiting import wait_until

#: Seconds the slow provider waits before answering: far longer than the test may take (each
#: reply below must come within REPLY_S, so a search that was waited for fails them).
SLOW_S = 300.0
REPLY_S = 30.0


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
                    "timeoutMs": 600000,  # neither the attempt nor the chain times out before SLOW_S
                    "deadlineMs": 600000,
                    "cache": False,
                },
                "suggester": {"enabled": True},
            },
            root=workspace,
        )
        dismissed = srv.request("dsh/dismiss", {"family": "Version", "path": "src/demo_pkg/__init__.py"})
        assert "result" in dismissed
        searches = [srv.request_id("dsh/search", {"query": f"in flight {i}", "strategy": "quick"}) for i in range(5)]
        wait_until(lambda: slow.count("GET", "/search") >= 5, "five searches at the provider")
        assert slow.count("GET", "/search") == 5  # all five are really in flight
        shutdown = srv.request_id("shutdown")
        assert srv.response(shutdown, timeout=REPLY_S)["result"] is None
        for msg_id in searches:  # cancelled, not waited for (SLOW_S is 10 times REPLY_S)
            assert srv.response(msg_id, timeout=REPLY_S)["error"]["code"] == -32800
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
