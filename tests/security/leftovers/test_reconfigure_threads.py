"""Reconfiguring does not grow the process (docs/SECURITY.md, "Leftovers of the earlier suite"):
300 ``workspace/didChangeConfiguration`` notifications leave no more threads and no more open
descriptors than before them, once the work they started has ended. Each variant changes what
a reconfiguration rebuilds: the router (a new chain, its HTTP client handed over), the
suggester's volatile knobs (hot reload), its structural ones (a new core, prepared on a thread
of its own), and all three at once."""

from __future__ import annotations

import os

import pytest
from support.rawrpc import RawServer
from support.secutil import threads, wait_built
from support.waiting import wait_until


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def settled(count, polls: int = 10) -> int:
    """``count()`` once it read the same ``polls`` times in a row (the threads the start left
    running have ended): the baseline."""
    seen: list[int] = []

    def stable() -> bool:
        seen.append(count())
        return len(seen) >= polls and len(set(seen[-polls:])) == 1

    wait_until(stable, "a settled count", 60, poll_s=0.1)
    return seen[-1]


def router(i: int) -> dict:
    return {
        "router": {
            "timeoutMs": 1000 + i % 7,
            "order": ["searxng"],
            "providers": {"searxng": {"baseUrl": f"http://127.0.0.1:9/{i % 3}"}},
        }
    }


def volatile(i: int) -> dict:
    return {"suggester": {"enabled": True, "cooldownTurns": 1 + i % 4}}


def structural(i: int) -> dict:
    return {"suggester": {"enabled": True, "refreshOnBoot": bool(i % 2)}}


def everything(i: int) -> dict:
    return {**router(i), "suggester": {**volatile(i)["suggester"], **structural(i)["suggester"]}}


@pytest.mark.parametrize("change", [router, volatile, structural, everything])
def test_300_reconfigurations_leave_no_extra_threads_or_descriptors(dsh_home, tmp_path, change):
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "1.0"\n')
    (ws / "src" / "app.py").write_text("def main():\n    return 1\n")
    srv = RawServer(dsh_home)
    try:
        srv.initialize({"suggester": {"enabled": True}, **router(0)}, root=ws)
        wait_built(srv)
        # a first search (refused at once: nothing listens on port 9) waits for the search
        # path's preparation, which starts the long-lived writer threads: the baseline is after
        search = srv.request("dsh/search", {"query": "x", "strategy": "quick", "deadlineMs": 60000}, timeout=90)
        assert search["error"]["code"] == -32001, search
        srv.barrier()
        base_threads = settled(lambda: threads(srv.pid))  # the search path's preparation ended
        base_fds = settled(lambda: fds(srv.pid))
        for i in range(300):
            srv.notify("workspace/didChangeConfiguration", {"settings": change(i)})
        srv.barrier()  # every notification handled
        status = srv.request("dsh/status", {}, timeout=60)["result"]
        assert status["suggester"]["enabled"] is True
        wait_built(srv)
        # the threads a reconfiguration started (a core's preparation) end on their own
        wait_until(lambda: threads(srv.pid) <= base_threads, f"threads back to {base_threads}", 60)
        wait_until(lambda: fds(srv.pid) <= base_fds, f"descriptors back to {base_fds}", 60)
        assert srv.alive()
    finally:
        srv.close()
