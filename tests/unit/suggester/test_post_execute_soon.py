"""``dsh/postExecute`` answered without a task when nothing is ahead of it
(``Sidecar.post_execute_soon``): the usual call is answered at once, with the same note; a call
that waits for the index, and every call that comes while one is queued or running, goes
through a task and is answered in the order the calls came."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from dsh_protocol import PostExecuteParams, PostExecuteResult
from dsh_sidecar.config import parse_config
from dsh_sidecar.sidecar import Sidecar
from dsh_sidecar.suggester.readiness import SYMBOLS
from support.trees import copy_fixture


def call(pattern: str, session: str, wait_ms: int | None = None) -> PostExecuteParams:
    extra = {} if wait_ms is None else {"waitMs": wait_ms}
    return PostExecuteParams.model_validate(
        {"sessionId": session, "turn": 1, "tool": {"name": "Grep", "input": {"pattern": pattern}}, **extra}
    )


def notes(result: PostExecuteResult) -> list[tuple[str, str]]:
    return [(n.source.intent, n.source.targets[0]) for n in result.additional_contexts]


@pytest.fixture
def sidecar(tmp_path: Path) -> Iterator[Sidecar]:
    yield from started(tmp_path, {"enabled": True})


@pytest.fixture
def lead_sidecar(tmp_path: Path) -> Iterator[Sidecar]:
    yield from started(tmp_path, {"enabled": True, "taskLead": True})


def started(tmp_path: Path, suggester: dict[str, object]) -> Iterator[Sidecar]:
    workspace = tmp_path / "pyproj"
    copy_fixture("pyproj", workspace)
    env = {"DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    s = Sidecar(parse_config({"suggester": suggester}), workspace, env)
    try:
        assert s.wait_for_graph(60)
        yield s
    finally:
        s.shutdown()
        asyncio.run(s.aclose())


def test_a_call_with_nothing_ahead_is_answered_at_once_with_its_note(sidecar: Sidecar):
    async def run() -> tuple[object, object]:
        return sidecar.post_execute_soon(call("def merge_setting", "a")), sidecar.post_execute_soon(call("zzz", "b"))

    first, silent = asyncio.run(run())
    assert isinstance(first, PostExecuteResult) and isinstance(silent, PostExecuteResult)
    assert notes(first) == [("Symbol", "src/demo_pkg/core.py")]
    assert silent.additional_contexts == []


def test_calls_behind_a_waiting_call_are_queued_and_answered_in_order(sidecar: Sidecar):
    built = threading.Event()
    real = sidecar.suggester.pending
    sidecar.suggester.pending = lambda: real() if built.is_set() else frozenset({SYMBOLS})  # type: ignore[method-assign]

    async def run() -> tuple[list[list[tuple[str, str]]], bool]:
        waiting = sidecar.post_execute_soon(call("def merge_setting", "a", wait_ms=30_000))
        behind = sidecar.post_execute_soon(call("__version__", "b"))  # would not wait: still queued
        assert isinstance(waiting, asyncio.Future) and isinstance(behind, asyncio.Future)
        await asyncio.sleep(0.2)
        assert not waiting.done() and not behind.done()
        threading.Timer(0.05, built.set).start()
        results = [await waiting, await behind]
        after = sidecar.post_execute_soon(call("zzz", "c"))  # nothing ahead any more
        return [notes(r) for r in results], isinstance(after, PostExecuteResult)

    try:
        answered, at_once_after = asyncio.run(run())
    finally:
        built.set()
    assert answered == [[("Symbol", "src/demo_pkg/core.py")], [("Version", "src/demo_pkg/__init__.py")]]
    assert at_once_after


def test_a_cancelled_call_that_waits_keeps_later_calls_behind_its_thread(sidecar: Sidecar):
    """A call waiting for the index on its worker thread, cancelled (pygls cancels the task a
    handler yielded when ``shutdown`` comes): the thread cannot be stopped, so a later call still
    queues behind it (never two calls in the suggester at once) and is answered once it is done."""
    built = threading.Event()
    real_pending, real_post = sidecar.suggester.pending, sidecar.suggester.post_execute
    sidecar.suggester.pending = lambda: real_pending() if built.is_set() else frozenset({SYMBOLS})  # type: ignore[method-assign]
    inside, most = [0], [0]
    lock = threading.Lock()

    def counted(params: PostExecuteParams) -> list:  # type: ignore[type-arg]
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        try:
            return real_post(params)
        finally:
            with lock:
                inside[0] -= 1

    sidecar.suggester.post_execute = counted  # type: ignore[method-assign]

    async def run() -> tuple[bool, list[tuple[str, str]]]:
        waiting = sidecar.post_execute_soon(call("def merge_setting", "a", wait_ms=30_000))
        assert isinstance(waiting, asyncio.Future)
        await asyncio.sleep(0.3)  # on its worker thread, waiting for the symbol pass
        waiting.cancel()
        await asyncio.sleep(0.1)
        after = sidecar.post_execute_soon(call("__version__", "b"))
        queued = isinstance(after, asyncio.Future)
        threading.Timer(0.05, built.set).start()
        result = await after if isinstance(after, asyncio.Future) else after
        return queued, notes(result)

    try:
        queued, answered = asyncio.run(run())
    finally:
        built.set()
    assert (queued, most[0]) == (True, 1)
    assert answered == [("Version", "src/demo_pkg/__init__.py")]


def test_an_exception_deciding_whether_a_call_waits_fails_open(sidecar: Sidecar):
    """The suggester's fail-open covers the question whether a call may wait for the index:
    an internal error there counts in ``errors`` and the call passes through silently."""

    def broken() -> frozenset[str]:
        raise RuntimeError("readiness broke")

    sidecar.suggester.pending = broken  # type: ignore[method-assign]
    before = sidecar.suggester.counters["errors"]

    async def run() -> PostExecuteResult:
        answer = sidecar.post_execute_soon(call("def merge_setting", "a", wait_ms=5_000))
        return await answer if isinstance(answer, asyncio.Future) else answer

    result = asyncio.run(run())
    assert result.additional_contexts == []
    assert sidecar.suggester.counters["errors"] > before


def test_an_exception_taking_an_owed_task_lead_fails_open(sidecar: Sidecar):
    """Adding the task lead owed to a session to a call without a note of its own is a step of
    the suggester's answer: an internal error there counts in ``errors`` and the call passes
    through silently, over JSON-RPC an answer (never an error reply)."""
    from support.inprocess_lsp import replies, served

    def broken(session_id: str) -> None:
        raise RuntimeError("owed leads broke")

    sidecar.prompt_index.owed.take = broken  # type: ignore[method-assign]
    # a lead is ready for some session: the call takes the step (with none ready it is skipped)
    sidecar.prompt_index.owed.any_ready = lambda: True  # type: ignore[method-assign]
    before = sidecar.suggester.counters["errors"]
    assert sidecar.post_execute(call("zzz", "a")).additional_contexts == []
    assert sidecar.suggester.counters["errors"] == before + 1

    proto, written = served(sidecar)

    async def run() -> None:
        proto._handle_request(7, "dsh/postExecute", call("zzz", "b").wire())
        for _ in range(50):
            await asyncio.sleep(0)
            if written:
                break

    asyncio.run(run())
    assert replies(written) == [{"jsonrpc": "2.0", "id": 7, "result": {"additionalContexts": []}}]
    assert sidecar.suggester.counters["errors"] == before + 2


@pytest.mark.parametrize("part", ["owe", "rank_later"])
def test_an_exception_owing_a_task_lead_fails_open(lead_sidecar: Sidecar, part: str):
    """Owing a task lead to its session (the index still being built) and starting its ranking
    are steps of the suggester's answer to ``dsh/taskLead``: an internal error there counts in
    ``errors`` and the task is answered empty, over JSON-RPC an answer (never an error reply)."""
    from dsh_protocol import TaskLeadParams
    from support.inprocess_lsp import replies, served

    async def building(at_least_s: float = 0.0) -> bool:
        return False

    def broken(*args: object) -> None:
        raise RuntimeError("owed leads broke")

    lead_sidecar.prompt_index.ready = building  # type: ignore[method-assign]
    setattr(lead_sidecar.prompt_index.owed, part, broken)
    before = lead_sidecar.suggester.counters["errors"]
    task = TaskLeadParams.model_validate({"sessionId": "a", "task": "fix merge_setting"})
    assert asyncio.run(lead_sidecar.task_lead_async(task)).additional_contexts == []
    assert lead_sidecar.suggester.counters["errors"] == before + 1

    proto, written = served(lead_sidecar)

    async def run() -> None:
        proto._handle_request(9, "dsh/taskLead", task.wire())
        for _ in range(50):
            await asyncio.sleep(0)
            if written:
                break

    asyncio.run(run())
    assert replies(written) == [{"jsonrpc": "2.0", "id": 9, "result": {"additionalContexts": []}}]
    assert lead_sidecar.suggester.counters["errors"] == before + 2
