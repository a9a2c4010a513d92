"""The sticky section over MCP while a large workspace is still being indexed: Claude Code's
prompt hook (``session_start`` on ``UserPromptSubmit``) is answered without waiting for the
build (the first within ``firstCallWaitMs``, the first note's bound; the section is then owed),
and the owed section comes with the session's next ``post_tool_use`` once the index is built
(once), then with every ``session_start`` as before. Real stdio with the official MCP client,
on a fresh 10,000-file tree (``support.trees.big_workspace``) that takes seconds to index."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.sidecar import forked, home_env
from support.trees import big_workspace, copy_fixture
from support.waiting import until

mcp = pytest.importorskip("mcp", reason="the [mcp] extra (official MCP SDK) is not installed")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

SECTION_HEAD = "search-suggester: where things live in this repository:\n"
PROMPT = {"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "Where is the version set?"}


def echo(n: int) -> dict:
    """A Bash call of session s1 that no note answers and that names no intent (so the
    section stays the session's general one), each its own call id."""
    command = {"command": f"echo {n}"}
    return {"tool_name": "Bash", "tool_input": json.dumps(command), "session_id": "s1", "tool_use_id": f"t{n}"}


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """The pyproj fixture with 10,000 modules more under src/ (written once; the sidecars only
    read it, each with its own DSH_HOME and caches, so each builds from scratch)."""
    root = tmp_path_factory.mktemp("big") / "pyproj"
    copy_fixture("pyproj", root)
    return big_workspace(root)


def server(tmp_path: Path, workspace: Path, suggester: dict) -> StdioServerParameters:
    """``dsh-search mcp`` on ``workspace`` with these suggester knobs and a home of its own."""
    cfg = tmp_path / "sidecar.json"
    cfg.write_text(json.dumps({"suggester": suggester}))
    home = tmp_path / "dsh-home"
    home.mkdir()
    script = str(Path(sys.executable).parent / "dsh-search")
    argv = forked([script, "mcp", "--config", str(cfg), "--workspace", str(workspace)])
    return StdioServerParameters(command=argv[0], args=argv[1:], env=home_env(home))


def context(result) -> str | None:
    return (result.structured_content or {}).get("hookSpecificOutput", {}).get("additionalContext")


async def test_the_prompt_hook_never_waits_for_the_build_and_the_owed_section_follows(tmp_path, big):
    params = server(tmp_path, big, {"enabled": True, "sectionMode": "sticky"})
    calls = iter(range(100_000))
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            first = await s.call_tool("session_start", PROMPT)
            during = await s.call_tool("session_start", PROMPT)  # still building: no wait, no section

            async def owed():
                text = context(await s.call_tool("post_tool_use", echo(next(calls))))
                return text if text is not None and SECTION_HEAD in text else None

            paid = await until(owed, "the owed section with a post_tool_use", timeout_s=240, poll_s=0.5)
            after = context(await s.call_tool("post_tool_use", echo(next(calls))))
            prompt = await s.call_tool("session_start", PROMPT)
    assert first.structured_content == {} and not first.is_error
    assert during.structured_content == {} and not during.is_error
    assert paid.startswith(SECTION_HEAD)  # the section alone: no note for an echo
    assert paid.splitlines()[1] == "- Version: src/demo_pkg/__init__.py"
    assert after is None  # paid once
    section = paid
    assert prompt.structured_content == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": section}
    }


LEAD_HEAD = "search-suggester: in this repository, look here for the code this task is about:\n"


async def test_the_task_lead_of_a_prompt_during_the_build_is_owed_and_follows_once(tmp_path, big):
    """taskLead on, the section off: the prompt's lead is not waited for either; it comes with
    the session's next post_tool_use that has no note once the index is built, once
    (``sidecar/owed.py``)."""
    params = server(tmp_path, big, {"enabled": True, "taskLead": True})
    calls = iter(range(100_000))
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            first = await s.call_tool("session_start", PROMPT)

            async def owed():
                return context(await s.call_tool("post_tool_use", echo(next(calls))))

            paid = await until(owed, "the owed task lead with a post_tool_use", timeout_s=240, poll_s=0.5)
            after = context(await s.call_tool("post_tool_use", echo(next(calls))))
            prompt = await s.call_tool("session_start", PROMPT)
    assert first.structured_content == {} and not first.is_error
    assert paid.startswith(LEAD_HEAD + "- src/demo_pkg/__init__.py — ")
    assert after is None  # paid once
    assert prompt.structured_content == {}  # the session had its lead; no section
