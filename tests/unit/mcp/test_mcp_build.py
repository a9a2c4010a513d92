"""The MCP server builds its sidecar on a thread (``mcp/server.py``): ``initialize`` and
``tools/list`` are answered while the build runs, every tool call waits for it, and a build
that fails leaves a server whose hooks answer ``{}`` and whose other tools report an error.
Driven in-process through the SDK's own client (the initialize handshake, the JSON-RPC stream)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from dsh_sidecar import sidecar as sidecar_module
from dsh_sidecar.config import parse_config
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.mcp import building as building_module
from dsh_sidecar.mcp import server as server_module
from dsh_sidecar.mcp.server import Lifetime, build_server
from mcp.client.client import Client
from support.mockprovider import case_reply
from support.routers import ROUTES, router_block
from support.sidecar import home_env

GREP = {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}, "session_id": "s"}
LISTED = ["search", "search_feedback", "suggestion_dismiss", "web_search", "where_is"]


#: The first call's window (``firstCallWaitMs``) of these servers, ms: long enough that a note
#: asked right after the build waits for the workspace index on a loaded machine (the default
#: 500 ms, opened at the call, ended before the index: the note was ``{}``); the call still ends
#: as soon as the index is whole. These tests are about the build, not that window.
WINDOW_MS = 20_000


def server_for(workspace: Path, home: Path, lifetime: Lifetime | None = None) -> Any:
    config = parse_config({"suggester": {"enabled": True, "sectionMode": "off", "firstCallWaitMs": WINDOW_MS}})
    return build_server(config, workspace, home_env(home), lifetime=lifetime)


async def test_tools_are_listed_during_the_build_and_a_call_waits_for_it(workspace, tmp_path, monkeypatch):
    release = held_build(monkeypatch)
    lifetime = Lifetime()
    try:
        async with Client(server_for(workspace, tmp_path / "home", lifetime), mode="legacy") as client:
            listed = await client.list_tools()  # the build is held: answered without it
            assert sorted(t.name for t in listed.tools) == LISTED
            assert lifetime.sidecar is None
            call = asyncio.create_task(client.call_tool("post_tool_use", GREP))
            await asyncio.sleep(0.3)
            assert not call.done()  # waiting for the sidecar
            release.set()
            result = await call
    finally:
        release.set()
    note = result.structured_content["hookSpecificOutput"]["additionalContext"]
    assert note.startswith("search-suggester: in this repository, look here for the package version:")
    assert lifetime.sidecar is None and lifetime.building is None  # closed with the session


def held_build(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Hold every sidecar build until the returned event is set."""
    release = threading.Event()
    original = sidecar_module.Sidecar.__init__

    def held(self: Any, *args: Any, **kwargs: Any) -> None:
        release.wait(30)
        original(self, *args, **kwargs)

    monkeypatch.setattr(sidecar_module.Sidecar, "__init__", held)
    return release


async def test_a_web_search_during_the_build_answers_on_the_router_built_first(
    workspace, tmp_path, monkeypatch, mock_provider
):
    """The build makes the router first: a web_search while the rest of the sidecar is still
    being built is answered with it (the same answer as the built sidecar's)."""
    reply, case = case_reply("searxng", "ok")
    mock_provider.route(*ROUTES["searxng"], reply)
    release = held_build(monkeypatch)
    config = parse_config(
        {
            "suggester": {"enabled": True, "firstCallWaitMs": WINDOW_MS},
            "router": router_block(mock_provider, ["searxng"]),
        }
    )
    lifetime = Lifetime()
    try:
        async with Client(build_server(config, workspace, home_env(tmp_path / "home"), lifetime=lifetime)) as client:
            await client.list_tools()
            web = await client.call_tool("web_search", {"query": "bike chain cleaning"})
            assert lifetime.sidecar is None  # answered while the sidecar is held
            release.set()
            note = await client.call_tool("post_tool_use", GREP)
            again = await client.call_tool("web_search", {"query": "bike chain cleaning", "max_results": 3})
    finally:
        release.set()
    assert not web.is_error
    assert [src["url"] for src in web.structured_content["sources"]] == case["expect"]["urls"][:5]
    assert "additionalContext" in note.structured_content["hookSpecificOutput"]
    assert len(again.structured_content["sources"]) == 3
    assert mock_provider.count(*ROUTES["searxng"]) == 2


def test_the_build_yields_to_a_search_until_it_ends_or_a_call_needs_the_sidecar():
    gate = building_module.BuildGate(search_s=30.0)
    passed: list[str] = []

    def step(name: str) -> threading.Thread:
        thread = threading.Thread(target=lambda: (gate.wait(), passed.append(name)))
        thread.start()
        return thread

    gate.wait()  # no search: at once
    with gate.searching():
        first = step("after the search")
        first.join(0.3)
        assert passed == []  # held while the search runs
    first.join(5)
    assert passed == ["after the search"]
    with gate.searching():
        gate.need()  # a call needs the sidecar: no more yielding
        second = step("needed")
        second.join(5)
    assert passed == ["after the search", "needed"]


def test_the_build_yields_at_most_its_bound():
    gate = building_module.BuildGate(search_s=0.2)
    with gate.searching():
        gate.wait()  # returns once the bound passed, the search still running
        gate.wait()  # the bound is for the whole build: no second wait


def test_the_build_steps_are_modules_the_sidecar_imports():
    """Every step of the build's imports exists, and the sidecar imports it anyway (the steps
    only order what ``dsh_sidecar.sidecar`` would import in one go)."""
    import importlib
    import subprocess
    import sys

    for name in building_module.BUILD_MODULES:
        importlib.import_module(name)
    probe = "import sys, dsh_sidecar.sidecar; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert set(building_module.BUILD_MODULES) <= set(out)


PROMPT = {
    "session_id": "s",
    "hook_event_name": "UserPromptSubmit",
    "prompt": "Find where the package version is defined.",
}


async def test_a_session_start_with_nothing_to_add_is_answered_during_the_build(workspace, tmp_path, monkeypatch):
    """A harness's first call (Claude Code's UserPromptSubmit hook) right after the tool list:
    no sticky section, no task lead (the defaults), so {} at once; the next hook still waits."""
    release = held_build(monkeypatch)
    lifetime = Lifetime()
    try:
        async with Client(server_for(workspace, tmp_path / "home", lifetime), mode="legacy") as client:
            first = await asyncio.wait_for(client.call_tool("session_start", PROMPT), 10)
            assert lifetime.sidecar is None and not lifetime.building.done()  # answered while held
            call = asyncio.create_task(client.call_tool("post_tool_use", GREP))
            await asyncio.sleep(0.3)
            assert not call.done()
            release.set()
            note = await call
    finally:
        release.set()
    assert first.structured_content == {} and not first.is_error
    assert note.structured_content["hookSpecificOutput"]["additionalContext"].startswith("search-suggester: ")


async def test_the_build_starts_when_the_tools_are_listed(workspace, tmp_path, monkeypatch):
    """Until the client lists the tools (its handshake, which its session waits for) the
    build's imports stay off the GIL; listing starts it."""
    monkeypatch.setattr(server_module, "BUILD_AFTER_LIST_S", 60.0)
    started = threading.Event()
    original = sidecar_module.Sidecar.__init__

    def noted(self: Any, *args: Any, **kwargs: Any) -> None:
        started.set()
        original(self, *args, **kwargs)

    monkeypatch.setattr(sidecar_module.Sidecar, "__init__", noted)
    lifetime = Lifetime()
    async with Client(server_for(workspace, tmp_path / "home", lifetime), mode="legacy") as client:
        await asyncio.sleep(0.3)
        assert not started.is_set() and not lifetime.building.done()  # connected, nothing listed
        await client.list_tools()
        assert await asyncio.to_thread(started.wait, 30)
        note = await client.call_tool("post_tool_use", GREP)
    assert note.structured_content["hookSpecificOutput"]["additionalContext"].startswith("search-suggester: ")


@pytest.mark.parametrize("first", ["post_tool_use", "session end"])
async def test_a_call_or_the_end_before_any_tool_list_starts_the_build(workspace, tmp_path, monkeypatch, first):
    """A client that calls a tool without listing them gets its answer from the sidecar (no
    wait for the bound); one that leaves at once gets no sidecar built at all."""
    monkeypatch.setattr(server_module, "BUILD_AFTER_LIST_S", 60.0)
    built: list[object] = []
    original = sidecar_module.Sidecar.__init__

    def noted(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(sidecar_module.Sidecar, "__init__", noted)
    lifetime = Lifetime()
    async with asyncio.timeout(30):
        async with Client(server_for(workspace, tmp_path / "home", lifetime), mode="legacy") as client:
            if first == "post_tool_use":
                note = await client.call_tool("post_tool_use", GREP)
                context = note.structured_content["hookSpecificOutput"]["additionalContext"]
                assert context.startswith("search-suggester: in this repository, look here for the package version:")
    assert len(built) == (1 if first == "post_tool_use" else 0)
    assert lifetime.sidecar is None and lifetime.building is None  # closed with the session


@pytest.mark.parametrize(
    "knobs",
    [{"sectionMode": "sticky"}, {"taskLead": True}],
    ids=["sticky-section", "task-lead"],
)
async def test_a_session_start_that_may_add_context_waits_for_the_build(workspace, tmp_path, monkeypatch, knobs):
    release = held_build(monkeypatch)
    # a window that outlasts the held build and the index after it on a loaded machine (the
    # default 500 ms, opened at the call, left the index 0.2 s after the release: the lead was
    # owed, the context empty); the call still ends as soon as the index is whole
    config = parse_config({"suggester": {"enabled": True, "firstCallWaitMs": WINDOW_MS, **knobs}})
    try:
        async with Client(build_server(config, workspace, home_env(tmp_path / "home")), mode="legacy") as client:
            call = asyncio.create_task(client.call_tool("session_start", PROMPT))
            await asyncio.sleep(0.3)
            assert not call.done()  # the section or the lead needs the sidecar
            release.set()
            result = await call
    finally:
        release.set()
    context = result.structured_content["hookSpecificOutput"]["additionalContext"]
    assert result.structured_content["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert context  # the section (sticky) or the task lead's files: built from the sidecar


@pytest.mark.parametrize(
    ("error", "why"),
    [
        (
            RuntimeError("no sidecar here"),
            "dsh-search could not start (RuntimeError); the server's log (stderr) has the details",
        ),
        (
            ConfigError("state.backend", "cannot open the shared store"),
            "dsh-search could not start: invalid config: state.backend: cannot open the shared store",
        ),
    ],
    ids=["crash", "config"],
)
async def test_a_failed_build_answers_hooks_with_nothing_and_tools_with_an_error_naming_it(
    workspace, tmp_path, monkeypatch, caplog, mock_provider, error, why
):
    """Every call that needs the sidecar says why there is none (a config error's key and
    reason; a crash's type only, its text stays in the log), as an MCP tool error; the hooks stay
    fail-open ({}), each logging the same reason. ``web_search`` needs only the router, which the
    build made before it failed: it answers on it, before the failure is known and after."""
    reply, case = case_reply("searxng", "ok")
    mock_provider.route(*ROUTES["searxng"], reply)

    def broken(self: Any, *args: Any, **kwargs: Any) -> None:
        raise error

    monkeypatch.setattr(sidecar_module.Sidecar, "__init__", broken)
    config = parse_config(
        {"suggester": {"enabled": True, "sectionMode": "off"}, "router": router_block(mock_provider, ["searxng"])}
    )
    async with Client(build_server(config, workspace, home_env(tmp_path / "home")), mode="legacy") as client:
        listed = await client.list_tools()
        hook = await client.call_tool("post_tool_use", GREP)
        where = await client.call_tool("where_is", {"query": "package version"})
        web = await client.call_tool("web_search", {"query": "bike chain cleaning", "max_results": 3})
        again = await client.call_tool("post_tool_use", GREP)
    assert sorted(t.name for t in listed.tools) == LISTED
    assert hook.structured_content == {} and again.structured_content == {} and not hook.is_error
    assert where.is_error and [c.text for c in where.content] == [f"Error executing tool where_is: {why}"]
    assert not web.is_error
    assert [src["url"] for src in web.structured_content["sources"]] == case["expect"]["urls"][:3]
    assert mock_provider.count(*ROUTES["searxng"]) == 1
    assert f"the sidecar could not be built: {type(error).__name__}" in caplog.text
    assert caplog.text.count(f"post_tool_use: no note: {why}") == 2


async def test_a_build_that_fails_before_its_router_makes_web_search_an_error_naming_it(
    workspace, tmp_path, monkeypatch
):
    """Without a router (its own build failed) there is nothing to search on: the tool error
    says why, as every other tool's."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no router here")

    monkeypatch.setattr(server_module, "search_router", broken)
    async with Client(server_for(workspace, tmp_path / "home"), mode="legacy") as client:
        web = await client.call_tool("web_search", {"query": "x"})
        where = await client.call_tool("where_is", {"query": "package version"})
    why = "dsh-search could not start (RuntimeError); the server's log (stderr) has the details"
    assert web.is_error and [c.text for c in web.content] == [f"Error executing tool web_search: {why}"]
    assert where.is_error and [c.text for c in where.content] == [f"Error executing tool where_is: {why}"]


@pytest.fixture(autouse=True)
def _no_warm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search path's warm-up (httpx, the client) is not what these tests are about."""
    monkeypatch.setattr(sidecar_module.Sidecar, "_warm_search", lambda self: None)


async def test_a_hook_only_tool_is_registered_by_its_first_call_and_never_listed(workspace, tmp_path):
    server = server_for(workspace, tmp_path / "home")
    registered = {t.name for t in server._tool_manager.list_tools()}
    assert registered == set(LISTED)  # the four hook-only tools wait for their first call
    async with Client(server, mode="legacy") as client:
        first = await client.call_tool("pre_tool_use", {"tool_name": "WebSearch"})
        again = await client.call_tool("pre_tool_use", {"tool_name": "WebSearch"})
        listed = await client.list_tools()
        unknown = await client.call_tool("no_such_tool", {})
    assert first.structured_content == again.structured_content == {} and not first.is_error
    assert sorted(t.name for t in listed.tools) == LISTED
    assert {t.name for t in server._tool_manager.list_tools()} == {*LISTED, "pre_tool_use"}
    assert unknown.is_error


async def test_with_a_shared_store_the_build_precedes_the_reply(workspace, tmp_path, monkeypatch):
    """Opening a shared store can refuse the config, so the server does not start without it."""

    def broken(self: Any, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the store refused")

    monkeypatch.setattr(sidecar_module.Sidecar, "__init__", broken)
    config = parse_config({"suggester": {"enabled": True}, "state": {"backend": "redis://127.0.0.1:1"}})
    server = build_server(config, workspace, home_env(tmp_path / "home"))
    with pytest.raises(ExceptionGroup) as info:  # the SDK's task group: the server never started
        async with asyncio.timeout(20), Client(server, mode="legacy") as client:
            await client.list_tools()
    assert [repr(e) for e in info.value.exceptions] == ["RuntimeError('the store refused')"]


async def test_a_closing_during_another_waits_for_its_state_not_for_the_build_to_stop():
    """A signal during the session's own closing (Claude Code closes stdin, then sends SIGINT):
    the signal's closing returns once the first has written the state, and the process may end
    then, while the first still waits for a workspace build to stop."""

    class Closing:
        def __init__(self) -> None:
            self.state_written = self.build_stopped = False

        def shutdown(self) -> None:
            pass

        async def aclose_state(self) -> None:
            await asyncio.sleep(0.2)  # the state's writes
            self.state_written = True

        async def aquiesce(self) -> None:
            await asyncio.sleep(0.5)  # the workspace build stopping
            self.build_stopped = True

    lifetime = Lifetime()
    sidecar = Closing()
    lifetime.sidecar = sidecar  # type: ignore[assignment]
    first = asyncio.create_task(lifetime.close())
    await asyncio.sleep(0.05)
    await lifetime.close()
    assert sidecar.state_written and not sidecar.build_stopped
    await first
    assert sidecar.build_stopped


async def test_a_session_start_whose_task_lead_cannot_be_owed_still_gives_the_section(workspace, tmp_path, monkeypatch):
    """Owing the task lead (the index not whole for it) is a step of the suggester's answer,
    under its fail-open: an internal error there leaves the lead out, never the sticky section
    the same ``session_start`` built (it was the whole hook's ``{}``)."""
    from dsh_sidecar.sidecar.owed import OwedLeads, PromptIndex

    real_ready = PromptIndex.ready
    asked: list[float] = []

    async def section_whole_lead_not(self: PromptIndex, at_least_s: float = 0.0) -> bool:
        asked.append(at_least_s)
        return await real_ready(self, at_least_s) if len(asked) == 1 else False  # the section, then the lead

    def broken(self: OwedLeads, session_id: str, task: str) -> None:
        raise RuntimeError("owed leads broke")

    monkeypatch.setattr(PromptIndex, "ready", section_whole_lead_not)
    monkeypatch.setattr(OwedLeads, "owe", broken)
    config = parse_config(
        {"suggester": {"enabled": True, "firstCallWaitMs": WINDOW_MS, "sectionMode": "sticky", "taskLead": True}}
    )
    async with Client(build_server(config, workspace, home_env(tmp_path / "home")), mode="legacy") as client:
        result = await client.call_tool("session_start", PROMPT)
    assert len(asked) == 2
    context = result.structured_content["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(
        "search-suggester: where things live in this repository:\n- Version: src/demo_pkg/__init__.py\n"
    )
