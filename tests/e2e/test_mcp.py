"""``dsh-search mcp`` over real stdio with the official MCP client: the listed and hook-only
tools, Claude Code's hook fields (``tool_input`` as JSON text or an object), the hook output JSON, progress
per provider attempt, cancellation reaching the HTTP call, and the key-free failure."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import pytest_asyncio
from support.mockprovider import Reply, case_reply
from support.routers import ROUTES, router_block
from support.sidecar import forked, home_env
from support.trees import copy_fixture
from support.waiting import until, workspace_indexed

mcp = pytest.importorskip("mcp", reason="the [mcp] extra (official MCP SDK) is not installed")
from dsh_sidecar.mcp.hooks import TurnCounter, parse_tool_input, post_execute_params  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

NOTE = "search-suggester: in this repository, look here for the package version:\n- src/demo_pkg/__init__.py — defines __version__"
SECTION_START = (
    "search-suggester: where things live in this repository:\n- Version: src/demo_pkg/__init__.py\n"
    "- Path: src/demo_pkg/__init__.py\n- Dependency: pyproject.toml\n- Test: tests/conftest.py, tests/test_core.py\n- Doc: README.md, docs/index.md"
)
HANG = Reply(200, {"content-type": "application/json"}, b'{"results": []}', hang_s=20.0)


def command() -> str:
    script = Path(sys.executable).parent / "dsh-search"
    return str(script)


@asynccontextmanager
async def session(
    tmp_path: Path, workspace: Path, config: dict, env: dict | None = None
) -> AsyncIterator[ClientSession]:
    cfg = tmp_path / "sidecar.json"
    cfg.write_text(json.dumps(config))
    home = tmp_path / "dsh-home"
    home.mkdir(exist_ok=True)
    # forked (support.forkserver): these tests talk MCP to the server, none is about its start
    argv = forked([command(), "mcp", "--config", str(cfg), "--workspace", str(workspace)])
    params = StdioServerParameters(command=argv[0], args=argv[1:], env={**home_env(home), **(env or {})})
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            yield s


SUGGEST = {"suggester": {"enabled": True, "sectionMode": "sticky"}}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def suggesting(tmp_path_factory) -> AsyncIterator[ClientSession]:
    """One ``dsh-search mcp`` (SUGGEST) shared by the listing and the note tests: the listing
    changes nothing, and the note test is the only one here whose calls teach it anything (its
    notes and its write are learning signals, which later sections reflect), under session ids
    of its own. Tests whose outcome depends on what the suggester has learned, a dismissal or a
    ledger count get their own server below. The SDK's client is held by a task of its own,
    which enters and leaves its cancel scopes (anyio's rule) while the tests call it from theirs."""
    tmp = tmp_path_factory.mktemp("mcp-suggesting")
    workspace = tmp / "pyproj"
    copy_fixture("pyproj", workspace)
    opened: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        try:
            async with session(tmp, workspace, SUGGEST) as s:
                await workspace_indexed(s)  # the tests here are about notes, not the first call's wait
                opened.set_result(s)
                await done.wait()
        except BaseException as exc:
            if not opened.done():
                opened.set_exception(exc)
            raise

    holder = asyncio.create_task(hold())
    try:
        yield await opened
    finally:
        done.set()
        await holder


@pytest.mark.asyncio(loop_scope="module")
async def test_tools_listed_with_schemas(suggesting):
    """The model-facing tools only (the hook-only ones are served, not listed), each with a
    closed input schema and a typed output schema, snake_case throughout; no strategy, reward
    or provider attempt anywhere a model reads."""
    tools = {t.name: t for t in (await suggesting.list_tools()).tools}
    assert set(tools) == {"search", "web_search", "search_feedback", "where_is", "suggestion_dismiss"}
    for tool in tools.values():
        assert tool.input_schema["additionalProperties"] is False, tool.name
        assert tool.output_schema is not None and tool.output_schema["additionalProperties"] is False, tool.name
        assert tool.output_schema["type"] == "object" and tool.output_schema["properties"], tool.name
        fields = set(tool.input_schema["properties"]) | set(tool.output_schema["properties"])
        assert all(f == f.lower() for f in fields), (tool.name, fields)  # snake_case
        assert not fields & {"strategy", "reward", "attempts", "duration_ms", "k"}, (tool.name, fields)
    assert tools["search"].input_schema["properties"].keys() == {"query"}
    assert tools["search"].input_schema["required"] == ["query"]
    assert set(tools["search"].output_schema["required"]) == {"search_id", "sources", "truncated"}
    assert set(tools["web_search"].input_schema["properties"]) == {"query", "max_results"}
    assert set(tools["search_feedback"].input_schema["required"]) == {"search_id", "used_urls"}
    where = tools["where_is"].output_schema
    assert set(where["properties"]) == {"intent", "confidence", "about", "targets", "index"}
    assert set(where["required"]) == {"intent", "targets"}
    assert where["properties"]["confidence"]["anyOf"][0] == {"maximum": 1, "minimum": 0, "type": "number"}


@pytest.mark.asyncio(loop_scope="module")
async def test_post_tool_use_note_as_hook_output(suggesting):
    s = suggesting
    # Claude Code's mcp_tool hook interpolates ${tool_input} as JSON text
    first = await s.call_tool(
        "post_tool_use",
        {"tool_name": "Grep", "tool_input": json.dumps({"pattern": "__version__"}), "session_id": "note-1"},
    )
    # the same call again inside the cooldown: silence is {}
    again = await s.call_tool(
        "post_tool_use", {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}, "session_id": "note-1"}
    )
    # an object tool_input (any other MCP client) in a new session notes again
    other = await s.call_tool(
        "post_tool_use", {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}, "session_id": "note-2"}
    )
    # a write is a learning signal only; malformed input is fail-open {}
    write = await s.call_tool(
        "post_tool_use", {"tool_name": "Write", "tool_input": {"file_path": "x.py"}, "session_id": "note-1"}
    )
    bad = await s.call_tool("post_tool_use", {"tool_name": "Grep", "tool_input": "[1, 2", "session_id": "note-3"})
    expected = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": NOTE}}
    assert first.structured_content == expected
    assert json.loads(first.content[0].text) == expected  # the text Claude Code's hook parser reads
    assert again.structured_content == {}
    assert other.structured_content == expected
    assert write.structured_content == {}
    assert bad.structured_content == {} and not bad.is_error


async def test_suggester_off_is_silent_and_section_off(tmp_path, workspace):
    async with session(tmp_path, workspace, {}) as s:
        note = await s.call_tool("post_tool_use", {"tool_name": "Grep", "tool_input": '{"pattern": "__version__"}'})
        section = await s.call_tool("session_start", {"session_id": "s1"})
        # where_is answers on demand whatever suggester.enabled says
        where = await s.call_tool("where_is", {"query": "__version__"})
        # free text is read by the query model's question rules, like a search's words
        phrase = await s.call_tool("where_is", {"query": "package version"})
    assert note.structured_content == {}
    assert section.structured_content == {}
    assert where.structured_content["intent"] == "Version"
    assert phrase.structured_content == {
        "intent": "Version",
        "confidence": 0.9608,
        "about": "the package version",
        "targets": [
            {"path": "src/demo_pkg/__init__.py", "display": "src/demo_pkg/__init__.py", "reason": "defines __version__"}
        ],
    }


async def test_session_start_section_where_is_and_dismiss(tmp_path, workspace):
    async with session(tmp_path, workspace, SUGGEST) as s:
        await workspace_indexed(s)  # the section waits at most 5 s for the index
        section = await s.call_tool("session_start", {"session_id": "s1", "hook_event_name": "SessionStart"})
        prompt = await s.call_tool("session_start", {"session_id": "s1", "hook_event_name": "UserPromptSubmit"})
        where = await s.call_tool(
            "where_is", {"tool_name": "Bash", "tool_input": '{"command": "grep -rn __version__ ."}'}
        )
        nothing = await s.call_tool("where_is", {"query": "zebra giraffe"})
        empty = await s.call_tool("where_is", {})
        dismissed = await s.call_tool("suggestion_dismiss", {"family": "Version"})
        unknown = await s.call_tool("suggestion_dismiss", {"family": "Nope"})
        after = await s.call_tool(
            "post_tool_use", {"tool_name": "Grep", "tool_input": '{"pattern": "__version__"}', "session_id": "s9"}
        )
        asked = await s.call_tool("where_is", {"query": "where is the package version"})
    assert section.structured_content == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": SECTION_START}
    }
    assert prompt.structured_content["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert where.structured_content == {
        "intent": "Version",
        "confidence": where.structured_content["confidence"],
        "about": "the package version",
        "targets": [
            {"path": "src/demo_pkg/__init__.py", "display": "src/demo_pkg/__init__.py", "reason": "defines __version__"}
        ],
    }
    assert 0.85 <= where.structured_content["confidence"] < 1
    assert nothing.structured_content == {"intent": None, "targets": []}
    assert empty.is_error and "give query" in empty.content[0].text
    assert dismissed.structured_content["record"] == "dismissed Version *"
    assert set(dismissed.structured_content) == {"record", "expires_at"}
    assert unknown.is_error and "unknown intent 'Nope'" in unknown.content[0].text
    assert after.structured_content == {}  # the dismissed family is silent
    # an explicit question is no note: a dismissed family still answers it
    assert asked.structured_content["intent"] == "Version"
    assert [t["path"] for t in asked.structured_content["targets"]] == ["src/demo_pkg/__init__.py"]


def searxng(mock) -> dict:
    return {"router": router_block(mock, ["searxng"])}


async def test_web_search_sources_and_progress(tmp_path, workspace, mock_provider):
    """web_search is the router seed's tool: one query to the chain (one provider request), the
    first answer's sources, up to max_results; the provider attempt reaches the client as
    progress, never the result."""
    reply, case = case_reply("searxng", "ok")
    mock_provider.route(*ROUTES["searxng"], reply)
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value, total, message):
        progress.append((value, message))

    async with session(tmp_path, workspace, searxng(mock_provider)) as s:
        res = await s.call_tool("web_search", {"query": "bike chain cleaning"}, progress_callback=on_progress)
        three = await s.call_tool("web_search", {"query": "bike chain cleaning", "max_results": 3})
    out = res.structured_content
    assert not res.is_error
    assert set(out) == {"sources", "truncated"}
    assert [src["url"] for src in out["sources"]] == case["expect"]["urls"][:5]
    assert json.loads(res.content[0].text) == out
    assert len(three.structured_content["sources"]) == 3 and three.structured_content["truncated"] is True
    assert mock_provider.count(*ROUTES["searxng"]) == 2  # one request per call: no query variants
    assert len(progress) == 1 and progress[0][0] == 1
    assert progress[0][1].startswith("searxng: ok (")


async def test_web_search_all_failed_is_a_key_free_tool_error(tmp_path, workspace, mock_provider):
    mock_provider.route("POST", "/search", Reply(429, {"content-type": "application/json"}, b"{}"))
    key = "tvly-SECRET-0123456789abcdef"
    config = {"router": {"order": ["tavily"], "providers": {"tavily": {"baseURL": mock_provider.url}}}}
    async with session(tmp_path, workspace, config, env={"TAVILY_API_KEY": key}) as s:
        res = await s.call_tool("web_search", {"query": "anything"})
    assert res.is_error
    text = res.content[0].text
    assert text == "search-router: all configured search providers failed:\n- tavily: HTTP 429"
    assert key not in text and key not in (tmp_path / "stderr.log").read_text()


async def test_cancellation_reaches_the_http_call(tmp_path, workspace, mock_provider):
    mock_provider.route(*ROUTES["searxng"], HANG)
    config = searxng(mock_provider)
    config["router"]["timeoutMs"] = 30000
    async with session(tmp_path, workspace, config) as s:
        call = asyncio.ensure_future(s.call_tool("web_search", {"query": "bike chain cleaning"}))
        await until(lambda: mock_provider.count(*ROUTES["searxng"]) == 1, "the search at the provider")
        call.cancel()  # the SDK sends notifications/cancelled for an abandoned request
        with pytest.raises(asyncio.CancelledError):
            await call
        await until(lambda: mock_provider.closed_early, "the provider seeing the connection closed")
        assert len(mock_provider.closed_early) == 1  # the provider saw the connection closed
        still = await s.call_tool("where_is", {"query": "__version__"})  # and the server keeps serving
    assert still.structured_content["intent"] == "Version"


def test_hook_fields_mapping():
    turns = TurnCounter(limit=2)
    p = post_execute_params(turns, "Read", '{"file_path": "a.py"}', None, {"file": {"content": "x"}}, "toolu_1")
    assert p.session_id == "claude-code" and p.turn == 0 and p.call_id == "toolu_1"
    assert p.tool.input == {"file_path": "a.py"}
    assert p.result is not None and json.loads(p.result.text) == {"file": {"content": "x"}}
    assert post_execute_params(turns, "Read", {}, None).turn == 1
    assert [turns.next("a"), turns.next("b"), turns.next("claude-code")] == [0, 0, 0]  # bounded: oldest dropped
    assert parse_tool_input("") == {} and parse_tool_input(None) == {}
    for bad in ("[1]", "{", 3, ["x"]):
        with pytest.raises(ValueError, match="^tool_input: "):
            parse_tool_input(bad)


def test_without_the_sdk_help_works_and_serving_names_the_install_that_fits(monkeypatch, capsys, workspace):
    """Without the extra, ``mcp --help`` is the help (exit 0) and ``mcp`` is one line naming the
    command that adds the extra to this installation (exit 2): here a virtual environment, so
    pip with this interpreter; tests/test_install_paths.py checks uv tool and pipx installs."""
    import dsh_sidecar.mcp as front
    from dsh_sidecar.cli.commands import main
    from dsh_sidecar.cli.installs import detect, extra_hint

    for name in [m for m in sys.modules if m in front.SDK_MODULES or m.startswith(("mcp.", "mcp_types."))]:
        monkeypatch.setitem(sys.modules, name, None)  # import mcp… → ModuleNotFoundError
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.delitem(sys.modules, "dsh_sidecar.mcp.server", raising=False)
    assert not front.sdk_installed()
    assert main(["mcp", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "Usage: dsh-search mcp [OPTIONS]" in help_text
    assert "--workspace -w" in help_text and "--config -c" in help_text and "DEBUG, INFO, WARNING or ERROR" in help_text
    assert main(["mcp", "-w", str(workspace)]) == 2
    err = capsys.readouterr().err
    assert err == (
        "dsh-search: dsh-search mcp needs the optional [mcp] extra, which is not installed; add it with: "
        f"{extra_hint('mcp')}\n"
    )
    assert detect().kind == "venv" and "-m pip install" in err


async def test_post_tool_use_never_a_tool_error(tmp_path, workspace):
    """Whatever shape the hook fields take (a missing or non-string tool_name, a session_id
    that is a number, tool_input as a list, a number or the JSON text of a list), the hook
    answers {} and never a tool error that Claude Code would report as a failed hook."""
    shapes = [
        {},
        {"tool_input": "{}"},
        {"tool_name": 5, "tool_input": "{}"},
        {"tool_name": None, "tool_input": "{}"},
        {"tool_name": "Grep", "tool_input": ["a"]},
        {"tool_name": "Grep", "tool_input": 5},
        {"tool_name": "Grep", "tool_input": "[" * 300 + "]" * 300},
        {"tool_name": "Grep", "tool_input": '{"pattern": "__version__"}', "session_id": 5},
        {"tool_name": "Grep", "tool_input": '{"pattern": "__version__"}', "tool_use_id": ["x"]},
        {"tool_name": ["Grep"], "tool_input": '{"pattern": "__version__"}', "hook_event_name": {"a": 1}},
    ]
    async with session(tmp_path, workspace, SUGGEST) as s:
        await workspace_indexed(s)  # the good call's note and the section, not the first call's window
        results = [await s.call_tool("post_tool_use", args) for args in shapes]
        section = await s.call_tool("session_start", {"session_id": 5, "hook_event_name": ["UserPromptSubmit"]})
        # and a well-formed call after them still notes
        good = await s.call_tool(
            "post_tool_use", {"tool_name": "Grep", "tool_input": '{"pattern": "__version__"}', "session_id": "ok"}
        )
    for args, res in zip(shapes, results):
        assert not res.is_error, (args, res.content)
        assert res.structured_content == {}, args
        assert json.loads(res.content[0].text) == {}
    assert good.structured_content == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": NOTE}
    }
    assert not section.is_error  # the sticky section, under the default event name
    assert section.structured_content == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": SECTION_START}
    }


def test_unparseable_requests_get_an_error_with_their_id(tmp_path, workspace):
    """Raw newline-delimited JSON over real stdio: a request nested deeper than the SDK's parser
    accepts (200 levels), or with a malformed envelope, is answered -32600 with its own id
    (the SDK alone drops it and the client waits forever); garbage with no id stays silent;
    the server keeps serving after them."""
    import select
    import subprocess

    proc = subprocess.Popen(
        forked([command(), "mcp", "--workspace", str(workspace)]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**home_env(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
        bufsize=0,  # unbuffered: select() then sees every byte not yet read
    )

    def send(line: bytes) -> None:
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()

    def answer() -> dict:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "no answer within 30 s"
        return json.loads(proc.stdout.readline())

    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode())
        assert answer()["id"] == 0
        send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        deep = b'{"a":' * 300 + b"1" + b"}" * 300
        send(
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"where_is","arguments":{"tool_name":"Grep","tool_input":'
            + deep
            + b"}}}"
        )
        send(b"this is not JSON")  # no id: nothing to answer
        send(b'{"jsonrpc": "2.0", "id": "eight", "method": 5}')
        send(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).encode())
        got = [answer() for _ in range(3)]
    finally:
        proc.stdin.close()
        proc.wait(30)
    error = {
        "code": -32600,
        "message": "Invalid Request: the server could not parse this message (nested too deeply, or a malformed envelope)",
    }
    assert got[0] == {"jsonrpc": "2.0", "id": 7, "error": error}
    assert got[1] == {"jsonrpc": "2.0", "id": "eight", "error": error}
    assert got[2]["id"] == 9 and "where_is" in {t["name"] for t in got[2]["result"]["tools"]}
    assert proc.returncode == 0


async def test_parallel_hook_calls_each_note_once_in_their_own_session(tmp_path, workspace):
    """Claude Code runs the hooks of parallel tool calls at once: 24 concurrent post_tool_use
    calls of 12 sessions (two each) give exactly one note per session, and the ledger holds
    exactly 12 ``suggest`` lines and 12 ``suppressed`` ones — the noise control saw every call
    one at a time. The calls start once the workspace is indexed (``where_is`` asks without a
    ledger line): a tool call waits at most 5 s for the index, which a loaded machine can miss."""
    async with session(tmp_path, workspace, SUGGEST) as s:
        await workspace_indexed(s)
        calls = [
            s.call_tool(
                "post_tool_use",
                {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}, "session_id": f"p{n % 12}"},
            )
            for n in range(24)
        ]
        results = await asyncio.gather(*calls)
    noted = [r.structured_content for r in results if r.structured_content]
    assert len(noted) == 12 and all(n["hookSpecificOutput"]["additionalContext"] == NOTE for n in noted)
    lines = (tmp_path / "dsh-home" / "search-suggester" / "ledger.log").read_text().splitlines()
    assert sum(" suggest Version " in line for line in lines) == 12, lines
    assert sum(" suppressed " in line for line in lines) == 12, lines


@pytest.mark.parametrize("ending", ["SIGTERM", "SIGHUP", "SIGINT", "EOF"])
def test_a_signal_ends_the_mcp_server_with_0_and_its_learning_saved(tmp_path, workspace, mock_provider, ending):
    """A harness tears its MCP servers down with SIGTERM: the search's bandit update (written
    behind) is flushed and the exit status is 0, as at the end of stdin (a real spawned
    ``dsh-search mcp``: the SDK's stdin reader is a blocked thread no cancellation reaches)."""
    import os
    import signal
    import subprocess

    reply, _ = case_reply("searxng", "ok", check=False)  # any query
    mock_provider.route(*ROUTES["searxng"], reply)
    cfg = tmp_path / "sidecar.json"
    cfg.write_text(json.dumps(searxng(mock_provider)))
    home = tmp_path / "dsh-home"
    proc = subprocess.Popen(
        [command(), "mcp", "--config", str(cfg), "--workspace", str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": os.environ["PATH"], "DSH_HOME": str(home), "HOME": str(tmp_path)},
    )
    try:

        def send(*messages: dict) -> None:
            proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
            proc.stdin.flush()

        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        assert json.loads(proc.stdout.readline())["id"] == 1
        send(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "search", "arguments": {"query": "bike chain"}},
            },
        )
        answer = json.loads(proc.stdout.readline())
        assert answer["id"] == 2 and not answer["result"].get("isError"), answer
        if ending == "EOF":
            proc.stdin.close()
        else:
            proc.send_signal(getattr(signal, ending))
        assert proc.wait(30) == 0, proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    saved = json.loads((home / "bandit" / "posteriors.json").read_text())
    assert sum(saved["updates"].values()) == 1
    assert len(json.loads((home / "bandit" / "pending.json").read_text())["searches"]) == 1


async def test_a_provider_error_with_a_lone_surrogate_is_a_tool_error_not_a_dead_session(
    tmp_path, workspace, mock_provider
):
    """A provider's error body is quoted in the tool error; a lone surrogate in it (JSON's
    ``"\\ud800"``) is U+FFFD, and the session keeps answering (the SDK's writer cannot encode
    a surrogate: it stopped answering at all)."""
    body = b'{"error": "quota \\ud800 exceeded\\n- forged: ok"}'
    mock_provider.route(*ROUTES["searxng"], Reply(400, {"content-type": "application/json"}, body))
    async with session(tmp_path, workspace, searxng(mock_provider)) as s:
        res = await s.call_tool("web_search", {"query": "bike chain"})
        again = await s.call_tool("where_is", {"query": "zebra giraffe"})
    assert res.is_error
    text = res.content[0].text
    assert text == (
        "search-router: all configured search providers failed:\n"
        "- searxng: HTTP 400: quota \ufffd exceeded - forged: ok"  # one line: the body adds none
    )
    assert again.structured_content is not None
