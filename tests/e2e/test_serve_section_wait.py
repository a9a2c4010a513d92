"""``dsh/assembleSection`` during the workspace build waits for it (within the first-call
window, ``sidecar/owed.py``) off the event loop, so the ``dsh/postExecute`` calls after it are
answered at once. On the loop it held them for the whole wait (then 5 s: 5.3 s on a 20 000-file
tree), past DeepSeek Harness's 500 ms bound:
three of them in a row count as a hung sidecar, which the bundle kills and restarts (and the
restarted one builds again: a restart storm until maxRestarts). The sidecars are forked
(support.forkserver): these are about its event loop during the build, not its start."""

from __future__ import annotations

import pytest
from support.rawrpc import RawServer
from support.trees import big_workspace

POST = {"sessionId": "s", "turn": 0, "tool": {"name": "grep", "input": {"pattern": "x"}}}


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """The 10,000-file tree, written once for both tests (the sidecar only reads its workspace;
    each test has its own DSH_HOME and its own sidecar building from scratch)."""
    return big_workspace(tmp_path_factory.mktemp("big"))


def arrival(srv: RawServer, ids: list[int]) -> list[int]:
    order: list[int] = []
    while len(order) < len(ids):
        msg = srv.recv(timeout=60)
        if msg.get("id") in ids:
            order.append(msg["id"])
    return order


def test_a_section_waiting_for_the_build_holds_no_post_execute(dsh_home, big):
    root = big
    srv = RawServer(dsh_home, forked=True)
    try:
        # a first-call window longer than the build: on a loaded machine the default 500 ms ran
        # out between the first postExecute's answer and the next two ([3, 2, 4, 5]), which is
        # the window working, not the loop held
        config = {"suggester": {"enabled": True, "sectionMode": "sticky", "firstCallWaitMs": 60000}}
        srv.initialize(config, root=root)
        section = srv.request_id("dsh/assembleSection", {})
        posts = [srv.request_id("dsh/postExecute", POST) for _ in range(3)]
        assert arrival(srv, [section, *posts]) == [*posts, section]
        assert srv.shutdown(30) == 0  # shutdown, exit, a clean end
    finally:
        srv.close()
    assert b"Traceback" not in srv.stderr_bytes


def test_with_the_section_off_the_request_answers_null_without_waiting_for_the_build(dsh_home, big):
    """sectionMode off: the section is always empty, so it waits for nothing — its null reply
    comes while the build still runs."""
    root = big
    srv = RawServer(dsh_home, forked=True)
    try:
        srv.initialize({"suggester": {"enabled": True}}, root=root)
        assert srv.request("dsh/assembleSection", {})["result"] == {"section": None}
        assert srv.request("dsh/status", {})["result"]["suggester"]["graph"]["ready"] is False
        assert srv.shutdown(30) == 0  # shutdown, exit, a clean end
    finally:
        srv.close()
