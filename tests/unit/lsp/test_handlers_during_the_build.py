"""Requests and notifications that come while the sidecar is being built (its build held on an
event here, never a sleep): none holds the event loop. ``dsh/status`` and ``dsh/searchPlan``
wait for the build off the loop, as ``dsh/postExecute`` does, and are answered when it ends; a
``dsh/postExecute`` with nothing to wait is answered meanwhile. A notification meanwhile
(``dsh/toolsChanged``, a configuration or file change) is applied once the build ends, before
any request that came after it. Before, each read the sidecar on the loop, which waited for the
build: every request behind it waited as long."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from dsh_sidecar.lsp.handlers import build_server
from lsprotocol import types as lsp
from support.inprocess_lsp import replies

SILENT = {"sessionId": "s", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "x"}}, "waitMs": 0}


class Status:
    def wire(self) -> dict[str, Any]:
        return {"ok": True}


class BuiltSidecar:
    """What the handlers read of a built sidecar, and what it was told."""

    shared = None

    def __init__(self) -> None:
        self.told: list[str] = []

    def status(self) -> Status:
        self.told.append("status")
        return Status()

    def search_plan(self, params: Any) -> Status:
        self.told.append("searchPlan")
        return Status()

    def tools_changed(self) -> None:
        self.told.append("toolsChanged")

    def files_changed(self, paths: list[str]) -> None:
        self.told.append(f"filesChanged {len(paths)}")


async def until(predicate, turns: int = 2000) -> None:
    """Turn the loop until ``predicate()`` (at most ``turns`` turns, each yielding to threads)."""
    for _ in range(turns):
        if predicate():
            return
        await asyncio.sleep(0.001)


def served_during_a_held_build() -> tuple[Any, Any, list[bytes], threading.Event, BuiltSidecar]:
    """A server whose sidecar's build runs on its thread until the event is set."""
    server = build_server()
    written: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

    server.protocol.set_writer(Writer())
    release, sidecar = threading.Event(), BuiltSidecar()

    def build() -> BuiltSidecar:
        release.wait(10)  # released by the test; the bound only ends a test whose loop is held
        return sidecar

    server.defer_sidecar(build)  # type: ignore[arg-type]
    return server, server.protocol, written, release, sidecar


def test_status_and_search_plan_wait_for_the_build_off_the_loop():
    async def run() -> tuple[list[int], list[int], list[str]]:
        server, proto, written, release, sidecar = served_during_a_held_build()
        await until(server.building)
        proto._handle_request(1, "dsh/status", {})
        proto._handle_request(2, "dsh/searchPlan", {"query": "q"})
        proto._handle_request(3, "dsh/postExecute", SILENT)
        await until(lambda: len(written) >= 1)
        during = [r["id"] for r in replies(written)]
        told_during = list(sidecar.told)
        release.set()
        await until(lambda: len(written) >= 3)
        return during, [r["id"] for r in replies(written)], told_during + ["|"] + sidecar.told

    during, after, told = asyncio.run(run())
    assert during == [3]  # answered while the build was held: the loop served it
    assert after == [3, 1, 2]
    assert told == ["|", "status", "searchPlan"]


def test_a_notification_during_the_build_is_applied_once_it_ends_before_later_requests():
    async def run() -> tuple[list[str], list[str], list[int]]:
        server, proto, written, release, sidecar = served_during_a_held_build()
        await until(server.building)
        proto._handle_notification("dsh/toolsChanged", None)
        change = lsp.FileEvent(uri="file:///w/a.py", type=lsp.FileChangeType.Changed)
        proto._handle_notification("workspace/didChangeWatchedFiles", lsp.DidChangeWatchedFilesParams(changes=[change]))
        proto._handle_request(1, "dsh/status", {})
        proto._handle_request(2, "dsh/postExecute", SILENT)
        await until(lambda: len(written) >= 1)
        told_during = list(sidecar.told)
        release.set()
        await until(lambda: len(written) >= 2)
        return told_during, sidecar.told, [r["id"] for r in replies(written)]

    during, told, ids = asyncio.run(run())
    assert during == []
    assert told == ["toolsChanged", "filesChanged 1", "status"]
    assert ids == [2, 1]


class ShutSidecar(BuiltSidecar):
    def shutdown(self) -> None:
        self.told.append("shutdown")


def test_shutdown_during_the_build_is_answered_at_once_and_exit_ends_without_it():
    """``shutdown`` during the build is answered at once, without waiting for it: a
    ``dsh/postExecute`` waiting for the build is cancelled (answered), and the ``exit`` after it
    ends the process with status 0 while the build is still held; the sidecar it would have
    built is never shut down here (``run_stdio`` leaves a running build to the process's end and
    says ``abstained not-ready``: ``SidecarServer.end_before_start``). Before, ``shutdown``
    awaited the whole build off the loop, and the ``exit`` behind it waited as long."""
    server = build_server()
    written: list[bytes] = []
    closed: list[int] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

        def close(self) -> None:
            closed.append(len(written))

    server.protocol.set_writer(Writer())
    release, sidecar = threading.Event(), ShutSidecar()

    def build() -> ShutSidecar:
        release.wait(10)  # released by the test; the bound only ends a test whose loop is held
        return sidecar

    seen: dict[str, Any] = {}

    async def run() -> None:
        server.defer_sidecar(build)  # type: ignore[arg-type]
        proto = server.protocol
        await until(server.building)
        proto._handle_request(2, "dsh/postExecute", {**SILENT, "waitMs": 60000})
        proto._handle_request(1, "shutdown", None)
        await until(lambda: len(written) >= 2)
        seen["held"] = not release.is_set()
        proto._handle_notification("exit", None)
        await until(lambda: bool(closed))

    try:
        with pytest.raises(SystemExit) as ended:
            asyncio.run(run())
    finally:
        release.set()
    assert seen["held"]  # both answered while the build was held
    answered = {r["id"]: r.get("result", "?") for r in replies(written)}
    assert answered == {1: None, 2: "?"}  # the waiting postExecute cancelled by shutdown
    assert sidecar.told == [] and closed == [2]  # the writer closed after both replies
    assert ended.value.code == 0


def test_shutdown_and_exit_back_to_back_answer_shutdown_and_exit_0():
    """No build running: ``shutdown`` and ``exit`` handled in one turn of the loop (one read of
    the wire) still write the reply before the process ends, exit code 0."""
    sidecar = ShutSidecar()
    server = build_server()
    written: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

        def close(self) -> None:
            written.append(b"closed")

    server.protocol.set_writer(Writer())
    server.sidecar = sidecar  # type: ignore[assignment]

    async def run() -> None:
        server.protocol._handle_request(7, "shutdown", None)
        server.protocol._handle_notification("exit", None)
        await until(lambda: False)

    with pytest.raises(SystemExit) as ended:
        asyncio.run(run())
    assert written[-1] == b"closed" and [r["id"] for r in replies(written[:-1])] == [7]
    assert ended.value.code == 0 and sidecar.told == ["shutdown"]
