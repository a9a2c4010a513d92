"""The prompt-path calls over stdio JSON-RPC while a large workspace is still being indexed
(``sidecar/owed.py``): DeepSeek Harness holds the user's step for ``dsh/assembleSection`` (the
system prompt, assembled before each model step) and ``dsh/taskLead`` (the session's first
step). Neither waits for the build past the first-call window: the section answers ``null``
(never one of a half-built index) and the next request after the build has it; the lead answers
empty and is owed to its session, ranked once the index is built and added to the session's
next ``dsh/postExecute`` that has no note of its own (once); a rebuild after the index was
whole answers from the whole index it has. Real ``dsh-search serve`` on a
fresh 10,000-file tree (``support.trees.big_workspace``) that takes seconds to index."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.rawrpc import RawServer
from support.trees import big_workspace, copy_fixture
from support.waiting import wait_until

SECTION_HEAD = "search-suggester: where things live in this repository:\n"
LEAD_HEAD = "search-suggester: in this repository, look here for the code this task is about:\n"
TASK = {"sessionId": "s1", "task": "Where is the version set?"}


def echo(n: int, session: str = "s1") -> dict:
    """A shell call that no note answers and that names no intent."""
    return {
        "sessionId": session,
        "turn": 1,
        "callId": f"c{n}",
        "tool": {"name": "bash", "input": {"command": f"echo {n}"}},
    }


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """The pyproj fixture with 10,000 modules more under src/ (written once; each sidecar has
    its own DSH_HOME and caches, so each builds from scratch)."""
    root = tmp_path_factory.mktemp("big") / "pyproj"
    copy_fixture("pyproj", root)
    return big_workspace(root)


def test_section_and_task_lead_never_wait_for_the_build_and_the_owed_lead_follows(dsh_home, big):
    srv = RawServer(dsh_home, forked=True)
    calls = iter(range(100_000))
    try:
        srv.initialize({"suggester": {"enabled": True, "sectionMode": "sticky", "taskLead": True}}, root=big)
        first = srv.request("dsh/assembleSection", {}, timeout=30)["result"]
        lead = srv.request("dsh/taskLead", TASK, timeout=30)["result"]
        during = srv.request("dsh/assembleSection", {}, timeout=30)["result"]
        building = srv.request("dsh/status", {}, timeout=30)["result"]["suggester"]["graph"]["ready"]
        other = srv.request("dsh/postExecute", echo(next(calls), "s2"), timeout=30)["result"]

        def owed() -> list | None:
            contexts = srv.request("dsh/postExecute", echo(next(calls)), timeout=30)["result"]["additionalContexts"]
            return contexts or None

        paid = wait_until(owed, "the owed task lead with a dsh/postExecute", timeout_s=240, poll_s=0.5)
        after = srv.request("dsh/postExecute", echo(next(calls)), timeout=30)["result"]
        section = srv.request("dsh/assembleSection", {}, timeout=30)["result"]["section"]
        again = srv.request("dsh/taskLead", TASK, timeout=30)["result"]
        # a rebuild after the index was whole (refreshOnBoot: tools changed) keeps answering
        # from the whole index it has until the new one is published
        srv.notify("dsh/toolsChanged")
        rebuilding = srv.request("dsh/status", {}, timeout=30)["result"]["suggester"]["graph"]["building"]
        during_rebuild = srv.request("dsh/assembleSection", {}, timeout=30)["result"]["section"]
        assert srv.shutdown(30) == 0  # shutdown, exit, a clean end
    finally:
        srv.close()
    assert b"Traceback" not in srv.stderr_bytes
    assert building is False  # the answers above came during the build
    assert first == {"section": None} and during == {"section": None}
    assert lead == {"additionalContexts": []}
    assert other == {"additionalContexts": []}  # another session is owed nothing
    assert len(paid) == 1
    assert paid[0]["source"]["intent"] == "Task" and paid[0]["source"]["kind"] == "search-suggester"
    assert paid[0]["source"]["targets"][0] == "src/demo_pkg/__init__.py"
    assert paid[0]["text"].startswith(LEAD_HEAD + "- src/demo_pkg/__init__.py — ")
    assert after == {"additionalContexts": []}  # paid once
    assert again == {"additionalContexts": []}  # the session had its lead
    assert section["name"] == "search-suggester" and section["order"] == 900
    assert section["text"].startswith(SECTION_HEAD + "- Version: src/demo_pkg/__init__.py\n")
    assert rebuilding is True
    assert during_rebuild == section
