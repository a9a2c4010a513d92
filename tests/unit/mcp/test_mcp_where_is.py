"""``where_is`` is a tool call: it is never held for the workspace build longer than a tool
call's bound (``owed.TOOL_CALL_WAIT_S``, 5 s; the start's first-call window when that is longer);
an index still being built answers from what is ready and says so in ``index``. Driven
in-process through the SDK's own client, with the workspace build held (never finishing)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from dsh_sidecar import sidecar as sidecar_module
from dsh_sidecar.config import parse_config
from dsh_sidecar.mcp.building import Lifetime
from dsh_sidecar.mcp.server import build_server
from dsh_sidecar.sidecar import asked as asked_module
from mcp.client.client import Client
from support.sidecar import home_env
from support.waiting import until

BUILDING = "still building: ask again in a few seconds for the whole answer"
#: ``firstCallWaitMs`` of these servers, and the window it opens, s.
WINDOW_MS = 300
#: A tool call's bound in these tests (``TOOL_CALL_WAIT_S``), s: longer than the window.
TOOL_WAIT_S = 0.4


class HeldBuild:
    """The sidecar's workspace projection, held pending until :meth:`finish`: records every
    wait asked of it (the seconds) and waits none of them out past ``finish``."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self.done = threading.Event()

    def pending(self) -> bool:
        return not self.done.is_set()

    def wait(self, timeout_s: float) -> bool:
        self.asked.append(timeout_s)
        return self.done.wait(min(timeout_s, 2.0))

    def finish(self) -> None:
        self.done.set()


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> HeldBuild:
    build = HeldBuild()
    monkeypatch.setattr(sidecar_module.Sidecar, "projection_pending", lambda self: build.pending())
    monkeypatch.setattr(sidecar_module.Sidecar, "wait_for_graph", lambda self, timeout_s: build.wait(timeout_s))
    monkeypatch.setattr(sidecar_module.Sidecar, "_warm_search", lambda self: None)
    monkeypatch.setattr(asked_module, "TOOL_CALL_WAIT_S", TOOL_WAIT_S)
    return build


async def index_parts_ready(client: Client, live: Lifetime) -> None:
    """Once the parts of the index a note needs (the suggester's targets, the symbol pass, the
    content index's first sync: ``suggester/readiness.py``) are built: the build the held one
    leaves running. The tool list starts it; on a loaded machine it takes longer than a tool
    call's bound, and what is ready answering meanwhile is these tests' subject, not how soon
    it is ready."""
    await client.list_tools()
    assert live.building is not None
    sidecar = await live.building
    await until(lambda: not sidecar.suggester.pending(), "the index parts a note needs built")


@pytest.mark.parametrize(
    "args",
    [{"query": "package version"}, {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}}],
    ids=["free-text", "tool-call"],
)
async def test_where_is_waits_at_most_a_tool_calls_bound_and_says_the_index_is_building(
    workspace: Path, tmp_path: Path, held: HeldBuild, args: dict
) -> None:
    config = parse_config({"suggester": {"enabled": True, "sectionMode": "off", "firstCallWaitMs": WINDOW_MS}})
    live = Lifetime()
    async with Client(
        build_server(config, workspace, home_env(tmp_path / "home"), lifetime=live), mode="legacy"
    ) as client:
        await index_parts_ready(client, live)
        during = await client.call_tool("where_is", args)
        again = await client.call_tool("where_is", args)  # a call of its own: its own bound
        asked_during = [s for s in held.asked if s > 0]  # (the answer's own look is a wait of 0 s)
        held.finish()
        after = await client.call_tool("where_is", args)
    assert not during.is_error and not again.is_error and not after.is_error
    # the first call waited its own bound (never a one-shot 60 s, never only the prompt's 0.3 s);
    # the second may first share the first's wait, if that thread is still out, then waits what is
    # left of its own bound: no wait asked is ever longer than a tool call's bound
    assert asked_during[0] == pytest.approx(TOOL_WAIT_S, abs=0.05)
    assert len(asked_during) in (1, 2)
    assert all(s <= TOOL_WAIT_S + 1e-6 for s in asked_during)
    assert during.structured_content["index"] == BUILDING
    assert again.structured_content["index"] == BUILDING
    # what is ready answers meanwhile: the suggester's own targets of this small tree
    assert during.structured_content["intent"] == "Version"
    assert [t["path"] for t in during.structured_content["targets"]] == ["src/demo_pkg/__init__.py"]
    assert "index" not in after.structured_content  # built: the whole answer, nothing to say
    assert after.structured_content["targets"] == during.structured_content["targets"]


async def test_concurrent_where_is_share_one_wait_for_the_build(
    workspace: Path, tmp_path: Path, held: HeldBuild
) -> None:
    """Many ``where_is`` at once during the build: one wait on one thread for all of them, each
    awaiting it for what is left of its bound. A thread each filled the loop's default executor
    (6 threads on 2 cores): 30 calls were answered in batches of 6, one window apart (2.7 s
    for a 0.45 s window, measured on a 30,000-file tree), and every other ``to_thread`` queued."""
    import asyncio

    config = parse_config({"suggester": {"enabled": True, "sectionMode": "off", "firstCallWaitMs": WINDOW_MS}})
    args = {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}}
    async with Client(build_server(config, workspace, home_env(tmp_path / "home")), mode="legacy") as client:
        answers = await asyncio.gather(*[client.call_tool("where_is", args) for _ in range(20)])
        asked = [s for s in held.asked if s > 0]  # (the answer's own look is a wait of 0 s)
        held.finish()
    assert all(not a.is_error and a.structured_content["index"] == BUILDING for a in answers)
    assert len(asked) == 1 and asked[0] == pytest.approx(TOOL_WAIT_S, abs=0.05)


@pytest.mark.parametrize(
    "args",
    [{"query": "package version"}, {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}}],
    ids=["free-text", "tool-call"],
)
async def test_a_slow_where_is_leaves_the_event_loop_free_for_another_request(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: dict
) -> None:
    """``where_is`` is decided on a worker thread, as every tool's CPU work is, with or without a
    task lead set up (without one it ran on the event loop: a request sent while it ranked waited
    for it). The suggester's answer is held on an event that only the answer to a second request
    (the tool list) releases; held on the loop, that request could not be answered, and the hold
    would end at its bound instead."""
    import anyio
    from dsh_sidecar.suggester import Suggester

    entered, release = threading.Event(), threading.Event()
    released: list[bool] = []
    real = Suggester.where_is

    def slow(self: Suggester, tool: str, tool_input: dict) -> object:
        entered.set()
        released.append(release.wait(30))  # False: the hold ran out (the loop was held)
        return real(self, tool, tool_input)

    monkeypatch.setattr(Suggester, "where_is", slow)
    config = parse_config({"suggester": {"enabled": True, "sectionMode": "off"}})
    assert config.suggester.task_lead is False  # no task lead set up
    answers: list[object] = []
    async with Client(build_server(config, workspace, home_env(tmp_path / "home")), mode="legacy") as client:

        async def ask() -> None:
            answers.append(await client.call_tool("where_is", args))

        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            await anyio.to_thread.run_sync(entered.wait, 30)
            tools = await client.list_tools()  # answered while where_is is held
            release.set()
    assert "where_is" in {t.name for t in tools.tools}
    assert released == [True]
    (answer,) = answers
    assert not answer.is_error  # type: ignore[attr-defined]
    assert answer.structured_content["intent"] == "Version"  # type: ignore[attr-defined]
