"""Helpers of the security suite: run a call under a deadline (a block is a failure, never a
hung test run), poll a spawned sidecar's graph, count its threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def finishes(fn: Callable[[], Any], timeout: float = 20.0) -> Any:
    """``fn()`` on a daemon thread; fails the test if it does not return within ``timeout``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised below
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), f"{fn} blocked for more than {timeout} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def threads(pid: int) -> int:
    """The thread count of process ``pid`` (``Threads:`` of /proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads line")


def wait_built(server: Any, timeout: float = 60) -> dict[str, Any]:
    """Poll ``dsh/status`` until the workspace graph is ready and no build runs."""
    deadline = time.monotonic() + timeout
    while True:
        graph = server.request("dsh/status")["result"]["suggester"]["graph"]
        if graph.get("ready") and not graph.get("building"):
            return graph
        assert time.monotonic() < deadline, graph
        time.sleep(0.05)  # poll: the build runs in the background


def finishes_in_child(fn: Callable[[], Any], timeout: float = 20.0) -> None:
    """Run ``fn()`` in a forked child and fail unless it returns within ``timeout``. For
    CPU-bound calls (a backtracking regex holds the GIL, so a thread deadline cannot fire):
    a regression fails here instead of hanging the test run. Exceptions in ``fn`` fail too."""
    import multiprocessing
    import os
    import traceback

    def child() -> None:
        try:
            fn()
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)

    proc = multiprocessing.get_context("fork").Process(target=child, daemon=True)
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        raise AssertionError(f"{fn} ran for more than {timeout} s")
    assert proc.exitcode == 0, f"{fn} raised in the child (exit {proc.exitcode})"
