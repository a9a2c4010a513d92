"""Cold start (docs/architecture.md, "Start-up"): ``initialize`` is answered once the config is checked, and the
:class:`~dsh_sidecar.sidecar.Sidecar` is built right after the reply. What is deferred must still
happen, a request pipelined with ``initialize`` must get the same answer as before, and what
``initialize`` refused before it still refuses. The serve path must not import the CLI framework
nor the cores before the reply (checked in a fresh interpreter, not timed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from dsh_sidecar.cli.serving import mcp_args, serve_args
from dsh_sidecar.lsp.app import SidecarServer
from dsh_sidecar.lsp.handlers import require
from pygls.exceptions import JsonRpcException
from support.rawrpc import RawServer, frame
from support.sidecar import home_env
from support.waiting import wait_until


def _initialize(msg_id: int, root: Path | None, options: dict | None) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "initialize",
        "params": {
            "processId": None,
            "capabilities": {},
            "rootUri": root.as_uri() if root else None,
            "initializationOptions": options,
        },
    }


def test_a_request_pipelined_with_initialize_gets_the_built_sidecars_answer(dsh_home, workspace):
    srv = RawServer(dsh_home)
    # a first-call window longer than the build: under 3 busy loops (load 31-32) the default
    # 500 ms ran out before the symbol index was (1 run in 4: `suppressed not-ready Symbol`, the
    # bounded wait working as designed); the window is not this test's subject
    options = {"suggester": {"enabled": True, "firstCallWaitMs": 60000}, "router": {"timeoutMs": 1234}}
    try:
        # one write: initialize, initialized and a status request arrive in the same read
        srv.send_raw(
            frame(_initialize(1, workspace, options))
            + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            + frame({"jsonrpc": "2.0", "id": 2, "method": "dsh/status", "params": {}})
            + frame(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "dsh/postExecute",
                    "params": {
                        "sessionId": "s1",
                        "turn": 1,
                        "tool": {"name": "Grep", "input": {"pattern": "def main"}},
                    },
                }
            )
        )
        init = srv.response(1, timeout=60)
        assert init["result"]["serverInfo"]["name"] == "dsh-search-sidecar"
        status = srv.response(2, timeout=60)["result"]
        assert status["workspace"] == str(workspace)
        assert status["router"]["timeoutMs"] == 1234
        assert status["suggester"]["enabled"] is True
        note = srv.response(3, timeout=60)["result"]["additionalContexts"]
        srv.barrier()
        assert [c["source"]["intent"] for c in note] == ["Symbol"], srv.log_lines()
        # the deferred part happened: the workspace projection was built in the background and
        # the packs were activated (the ledger's ``activated`` line)
        wait_until(
            lambda: srv.request("dsh/status", {})["result"]["suggester"]["graph"]["ready"],
            "the workspace graph built in the background",
        )
        assert srv.shutdown() == 0
        ledger = (dsh_home / "search-suggester" / "ledger.log").read_text()
        assert "] activated (packs generic,python intents " in ledger, ledger
    finally:
        srv.close()


def test_a_bad_provider_url_in_the_environment_skips_that_provider_and_serves(dsh_home, workspace):
    """A malformed ``SEARXNG_BASE_URL`` (here with a password in it) is that provider's problem,
    as ``dsh-search mcp`` has it: ``initialize`` succeeds, the suggester notes, the status shows
    the skipped provider with its reason and the log names the variable, never the value."""
    srv = RawServer(dsh_home, env={"SEARXNG_BASE_URL": "http://admin:hunter22@"})
    why = "skipped: invalid config ($SEARXNG_BASE_URL: must be an absolute http:// or https:// URL)"
    try:
        # a first-call window longer than the build: at load 25-46 the default 500 ms ran out and
        # the note was owed to a next call; the window is not this test's subject
        options = {"suggester": {"enabled": True, "firstCallWaitMs": 60000}}
        init = srv.request("initialize", _initialize(1, workspace, options)["params"], 60)
        assert init["result"]["serverInfo"]["name"] == "dsh-search-sidecar"
        srv.notify("initialized", {})
        note = srv.request(
            "dsh/postExecute",
            {"sessionId": "s1", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "def main"}}},
            timeout=60,
        )["result"]["additionalContexts"]
        assert [c["source"]["intent"] for c in note] == ["Symbol"]
        router = srv.request("dsh/status", {}, timeout=60)["result"]["router"]
        assert [p["provider"] for p in router["chain"]] == ["duckduckgo"]
        assert router["unavailable"] == ["searxng"]
        assert [h["lastOutcome"] for h in router["health"] if h["provider"] == "searxng"] == [why]
        # the client is told too (a harness need not read the child's stderr), once, as a warning
        warnings = [
            m["params"]["message"]
            for m in srv.notifications
            if m.get("method") == "window/logMessage" and m["params"]["type"] == 2
        ]
        assert warnings == [f"router: provider searxng {why}"]
        # a router change rebuilds the chain from the same environment: told again; a change
        # elsewhere builds no router and says nothing
        srv.notify("workspace/didChangeConfiguration", {"settings": {"dsh": {"bandit": {"discount": 1}}}})
        srv.notify("workspace/didChangeConfiguration", {"settings": {"dsh": {"router": {"timeoutMs": 1500}}}})
        srv.barrier()
        assert [line for line in srv.log_lines() if line.startswith("router: ")] == 2 * warnings
        assert srv.shutdown() == 0
        err = srv.stderr_bytes.decode()
        assert f"router: provider searxng {why}" in err
        assert "hunter22" not in err + srv.stdout_bytes.decode()
    finally:
        srv.close()


def test_initialize_still_refuses_a_bad_provider_url_in_its_options(dsh_home):
    """The config document's own value is refused before the reply, naming the key."""
    srv = RawServer(dsh_home)
    options = {"router": {"providers": {"searxng": {"baseUrl": "ftp://searx.example"}}}}
    try:
        reply = srv.request("initialize", _initialize(1, None, options)["params"], timeout=60)
        assert reply["error"]["code"] == -32602
        assert reply["error"]["message"] == (
            "invalid initializationOptions: router.providers.searxng.baseUrl: must be an absolute http:// or https:// URL"
        )
        # and the server keeps refusing other requests as not initialized
        assert srv.request("dsh/status", {})["error"]["code"] == -32002
    finally:
        srv.close()


def test_reading_the_sidecar_completes_a_pending_build():
    server = SidecarServer()
    built = SimpleNamespace(config=SimpleNamespace(log_messages="all"))
    calls: list[int] = []

    def build():
        calls.append(1)
        return built

    server.defer_sidecar(build)  # no running loop here: built at once
    assert calls == [1] and server.sidecar is built
    server._build = build  # a build still pending when a request reads the sidecar
    server._sidecar = None
    assert require(server) is built
    assert calls == [1, 1]
    assert server.sidecar is built and calls == [1, 1]  # once


def test_a_failed_build_is_an_internal_error_for_every_request(caplog):
    server = SidecarServer()

    def build():
        raise OSError("disk full")

    server.defer_sidecar(build)
    assert server.sidecar is None
    assert isinstance(server.build_error, OSError)
    with pytest.raises(JsonRpcException) as info:
        require(server)
    assert info.value.code == -32603
    assert "initialize: disk full" in caplog.text


def test_before_initialize_requests_are_still_not_initialized():
    with pytest.raises(JsonRpcException) as info:
        require(SidecarServer())
    assert info.value.code == -32002


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        ([], (None, None, "WARNING")),
        (["serve"], (None, None, "WARNING")),
        (["serve", "--stdio"], (None, None, "WARNING")),
        (["serve", "--config", "a.yml"], (Path("a.yml"), None, "WARNING")),
        (["serve", "-c", "a.yml", "--log-level", "DEBUG"], (Path("a.yml"), None, "DEBUG")),
        (["serve", "--log-file=/tmp/s.log", "--config=b.json"], (Path("b.json"), Path("/tmp/s.log"), "WARNING")),
    ],
)
def test_plain_serve_command_lines_skip_the_typer_app(argv, parsed, monkeypatch):
    monkeypatch.delenv("DSH_LOG_LEVEL", raising=False)
    assert serve_args(argv) == parsed


def test_the_log_level_falls_back_to_the_environment(monkeypatch):
    monkeypatch.setenv("DSH_LOG_LEVEL", "INFO")
    assert serve_args(["serve"]) == (None, None, "INFO")
    assert serve_args(["serve", "--log-level", "ERROR"]) == (None, None, "ERROR")


@pytest.mark.parametrize("parse", [serve_args, mcp_args], ids=["serve", "mcp"])
def test_an_unknown_log_level_is_left_to_the_typer_app(parse, monkeypatch):
    """The plain parsers accept the four levels in any case and leave anything else (the flag
    or ``$DSH_LOG_LEVEL``) to the Typer app, which refuses it naming the flag."""
    command = "serve" if parse is serve_args else "mcp"
    monkeypatch.delenv("DSH_LOG_LEVEL", raising=False)
    assert parse([command, "--log-level", "debug"])[2] == "debug"
    assert parse([command, "--log-level", "BOGUS"]) is None
    monkeypatch.setenv("DSH_LOG_LEVEL", "verbose")
    assert parse([command]) is None
    if parse is serve_args:
        assert parse([]) is None


@pytest.mark.parametrize(
    ("argv", "env", "bad"),
    [
        (["mcp", "--log-level", "BOGUS"], {}, "BOGUS"),
        (["serve", "--log-level", "nope"], {}, "nope"),
        (["mcp"], {"DSH_LOG_LEVEL": "verbose"}, "verbose"),
    ],
)
def test_a_server_refuses_an_unknown_log_level_in_one_line(argv, env, bad):
    """Before, ``mcp --log-level BOGUS`` served at WARNING with exit 0: a typo went unseen."""
    out = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
        check=False,
    )
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr == f"dsh-search: '--log-level' must be one of DEBUG, INFO, WARNING, ERROR, got '{bad}'\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--help"],
        ["--json"],
        ["status"],
        ["serve", "--config"],
        ["serve", "--config", "--stdio"],
        ["serve", "--config", ""],
        ["serve", "--stdio", "--stdio"],
        ["serve", "-c", "a", "--config", "b"],
        ["serve", "-c=a.yml"],
        ["serve", "--verbose"],
        ["serve", "--", "x"],
    ],
)
def test_every_other_command_line_goes_through_typer(argv):
    assert serve_args(argv) is None


def test_the_serve_path_imports_neither_the_cli_framework_nor_the_cores_before_the_reply():
    """What ``initialize`` runs (entry point, server, config check) in a fresh interpreter."""
    code = textwrap.dedent(
        """
        import os, sys
        import dsh_sidecar.cli
        from dsh_sidecar.lsp.handlers import build_server
        from dsh_sidecar.config import parse_config
        from dsh_sidecar.options import merge_options
        from dsh_sidecar.router.config import resolve_chain
        build_server()
        config = parse_config(merge_options(None, {"suggester": {"enabled": True}}))
        resolve_chain(config.router, os.environ)
        heavy = ["typer", "rich", "httpx", "bashlex", "yaml", "filelock", "numpy", "cachetools", "dsh_protocol.models",
                 "dsh_sidecar.sidecar", "dsh_sidecar.router.chain", "dsh_sidecar.suggester.service",
                 "dsh_sidecar.bandit.core", "dsh_sidecar.workspace.graph", "dsh_sidecar.lsp.progress"]
        print(",".join(m for m in heavy if m in sys.modules))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == ""


def test_serve_defines_the_config_models_without_their_docstrings_and_nothing_else_does():
    code = textwrap.dedent(
        """
        import sys
        from dsh_sidecar import configmodel
        if sys.argv[1] == "serve":
            configmodel.set_attribute_docstrings(False)
        from dsh_sidecar.config import SidecarConfig
        from dsh_sidecar.router.config import RouterConfig
        print(SidecarConfig.model_fields["log_messages"].description is None,
              RouterConfig.model_fields["timeout_ms"].description is None)
        """
    )
    for mode, expected in (("serve", "True True"), ("cli", "False False")):
        out = subprocess.run(
            [sys.executable, "-c", code, mode], capture_output=True, text=True, timeout=120, check=True
        )
        assert out.stdout.strip() == expected


def test_aclose_stops_a_running_workspace_build_before_the_interpreter_exits(dsh_home, workspace):
    """Exiting under a background build can abort the process (a native extension's thread at
    interpreter finalisation: exit status -6): aclose cancels it and waits, bounded."""
    import asyncio

    from dsh_sidecar.config import parse_config
    from dsh_sidecar.sidecar import Sidecar

    sidecar = Sidecar(parse_config({"suggester": {"enabled": True}}), workspace, home_env(dsh_home))
    assert sidecar.projection.graph_builder.building  # started by the constructor
    asyncio.run(sidecar.aclose())
    assert not sidecar.projection.graph_builder.building and not sidecar.projection.content.building


@pytest.mark.parametrize(
    ("options", "built"),
    [
        (None, ""),
        ({}, ""),
        ({"suggester": {"enabled": True}}, "SuggesterConfig"),
        ({"router": {"timeoutMs": 500, "cache": False}, "logMessages": "none"}, "RouterConfig,SidecarConfig"),
    ],
)
def test_initialize_builds_the_validators_of_the_blocks_it_was_given_only(options, built):
    """What ``initialize`` runs, in a fresh interpreter: an absent block is its defaults, with
    no validator generated for it (pydantic's plugin loader, which imports importlib.metadata
    when the first validator is built, is not even imported without options)."""
    code = textwrap.dedent(
        """
        import json, os, sys
        from dsh_sidecar.configmodel import ConfigModel
        from dsh_sidecar.config import parse_config
        from dsh_sidecar.options import merge_options
        from dsh_sidecar.router.config import resolve_chain
        config = parse_config(merge_options(None, json.loads(sys.argv[1])))
        resolve_chain(config.router, os.environ)
        todo, built = [ConfigModel], []
        while todo:
            for sub in todo.pop().__subclasses__():
                todo.append(sub)
                if sub.__pydantic_complete__:
                    built.append(sub.__name__)
        print(",".join(sorted(built)))
        print("pydantic.plugin._loader" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(options)], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.splitlines() == [built, str(bool(built))]


def test_a_sidecar_whose_suggester_is_off_imports_no_pack_parser_nor_shell_parser(tmp_path, workspace):
    """In a fresh interpreter: the built sidecar (default config: the suggester is off) has not
    imported yaml, regex, bashlex, pathspec or RE2, nor built the pack models; the built-in packs
    need neither yaml nor regex (built from their validated form, ``dsh_packs/parsed.py``; their
    regexes are ours: ``re`` compiles them), and a pack of the workspace needs yaml and regex (its
    regexes are checked and matched by it)."""
    code = textwrap.dedent(
        """
        import asyncio, os, sys
        from pathlib import Path
        from dsh_sidecar.config import parse_config
        from dsh_sidecar.sidecar import Sidecar
        from dsh_sidecar.suggester import packs
        sidecar = Sidecar(parse_config(None), Path(sys.argv[1]), dict(os.environ))
        print([m for m in ("yaml", "regex", "bashlex", "pathspec", "re2") if m in sys.modules],
              packs.Pack.__pydantic_complete__)
        asyncio.run(sidecar.aclose())
        print(len(packs.builtin_packs()) > 0, [m for m in ("yaml", "regex") if m in sys.modules])
        packs.parse_pack("id: repo\\nintents:\\n  Config:\\n    signals: [{pattern: 'x+', weight: 1.0}]\\n", "repo")
        print([m for m in ("yaml", "regex") if m in sys.modules])
        """
    )
    env = {**os.environ, "DSH_HOME": str(tmp_path / "home")}
    out = subprocess.run(
        [sys.executable, "-c", code, str(workspace)], capture_output=True, text=True, timeout=120, check=True, env=env
    )
    assert out.stdout.splitlines() == ["[] False", "True []", "['yaml', 'regex']"]


def test_a_server_sidecar_prepares_the_search_path_off_the_event_loop(tmp_path, workspace):
    """In a fresh interpreter: a server's sidecar (``warm_search``) imports httpx and builds the
    HTTP client on the ``dsh-search-prepare`` thread, so the first ``auto`` search does not
    import them where it runs (0.1–0.25 s on the event loop); numpy is imported by
    neither (the bandit draws with the standard library). The decision stream is the one a
    fresh policy with the same seed draws. A one-shot CLI sidecar starts no such thread and
    imports none of it; with the suggester off, neither imports the shell parser."""
    code = textwrap.dedent(
        """
        import asyncio, os, sys, threading
        from pathlib import Path
        from dsh_sidecar.config import parse_config
        from dsh_sidecar.sidecar import Sidecar
        from dsh_sidecar.bandit.policy import ContextualPolicy
        config = parse_config({"bandit": {"seed": 7, "persist": False}})
        warm = sys.argv[2] == "server"
        sidecar = Sidecar(config, Path(sys.argv[1]), dict(os.environ), warm_search=warm)
        threads = [t for t in threading.enumerate() if t.name == "dsh-search-prepare"]
        for t in threads:
            t.join(60)
        policy = sidecar.bandit.policy
        print(len(threads), sidecar.router.client is not None,
              [m for m in ("numpy", "httpx", "anyio._backends._asyncio", "bashlex") if m in sys.modules])
        cold = ContextualPolicy(policy.classes, seed=7)
        cls = policy.classes[0]
        print([policy.choose(cls) for _ in range(20)] == [cold.choose(cls) for _ in range(20)])
        asyncio.run(sidecar.aclose())
        """
    )
    env = {**os.environ, "DSH_HOME": str(tmp_path / "home")}
    for mode, first in (
        ("server", "1 True ['httpx', 'anyio._backends._asyncio']"),
        ("cli", "0 False []"),
    ):
        out = subprocess.run(
            [sys.executable, "-c", code, str(workspace), mode],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
            env=env,
        )
        assert out.stdout.splitlines() == [first, "True"], (mode, out.stdout, out.stderr)


def test_the_lsp_server_builds_a_sidecar_that_prepares_the_search_path(dsh_home, monkeypatch):
    """The server asks for the ``warm_search`` sidecar (the CLI's one-shot commands do not:
    :func:`test_a_server_sidecar_prepares_the_search_path_off_the_event_loop`)."""
    import asyncio
    import threading

    from dsh_sidecar import sidecar as sidecar_module
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.lsp.handlers import build_sidecar

    seen: list[bool] = []

    class Recording(sidecar_module.Sidecar):
        def __init__(self, *args, **kwargs):
            seen.append(kwargs.get("warm_search", False))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(sidecar_module, "Sidecar", Recording)
    server = SidecarServer()
    server.env = home_env(dsh_home)
    sidecar = build_sidecar(server, parse_config(None), None, threading.get_ident())
    assert seen == [True] and sidecar._search_warm is not None
    asyncio.run(sidecar.aclose())
    assert not sidecar._search_warm.is_alive()


def test_with_the_suggester_on_the_search_path_is_prepared_after_the_workspace_graph(tmp_path, workspace):
    """The suggester's first notes need the graph: its build goes first, the search path's
    imports after it (a fresh interpreter; the preparation records whether the graph was
    still building when it began). The shell parser (bashlex, ~100 ms to import) is imported
    on that thread too, so the first shell line that needs it does not wait for it."""
    code = textwrap.dedent(
        """
        import asyncio, os, sys, threading, time
        from pathlib import Path
        from dsh_sidecar.config import parse_config
        from dsh_sidecar.router.chain import Router
        from dsh_sidecar.sidecar import Sidecar
        built, seen, original = [], [], Router.warm
        def warm(self):
            while not built:
                time.sleep(0.01)
            seen.append((built[0].projection.graph_builder.building, built[0].projection.graph is not None))
            original(self)
        Router.warm = warm
        config = parse_config({"suggester": {"enabled": True}})
        built.append(Sidecar(config, Path(sys.argv[1]), dict(os.environ), warm_search=True))
        built[0]._search_warm.join(60)
        print(seen, built[0].router.client is not None, "bashlex" in sys.modules)
        asyncio.run(built[0].aclose())
        """
    )
    env = {**os.environ, "DSH_HOME": str(tmp_path / "home")}
    out = subprocess.run(
        [sys.executable, "-c", code, str(workspace)], capture_output=True, text=True, timeout=120, check=True, env=env
    )
    assert out.stdout.splitlines() == ["[(False, True)] True True"], out.stderr


def test_a_reconfigure_while_the_search_path_warms_keeps_one_http_client(dsh_home, monkeypatch, mock_provider):
    """The reconfigured router was built before the warming router had a client: it adopts
    that client (one client, closed at exit), instead of building its own on the event loop."""
    import asyncio
    import threading

    from dsh_sidecar import sidecar as sidecar_module
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.router.chain import Router
    from dsh_sidecar.sidecar import Sidecar

    go, entered = threading.Event(), threading.Event()
    original = Router.warm

    def held_warm(self):
        entered.set()
        go.wait(30)
        original(self)

    monkeypatch.setattr(Router, "warm", held_warm)
    monkeypatch.setattr(sidecar_module, "WARM_AFTER_FIRST_CALL_S", 0.0)  # no first call to wait for
    block = {"order": ["searxng"], "providers": {"searxng": {"baseUrl": mock_provider.url}}}
    sidecar = Sidecar(parse_config({"router": block}), None, home_env(dsh_home), warm_search=True)
    old = sidecar.router
    assert entered.wait(30)  # the preparation is warming the first router
    sidecar.reconfigure({"router": {**block, "timeoutMs": 5000}})
    new = sidecar.router
    assert new is not old and old.client is None and new.client is None
    go.set()
    sidecar._search_warm.join(30)
    assert new.client is not None and new.client is old.client
    asyncio.run(sidecar.aclose())
    assert new.client.is_closed


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["mcp"], (None, None, "WARNING")),
        (["mcp", "--workspace", "w", "--config", "c.yml"], (Path("w"), Path("c.yml"), "WARNING")),
        (["mcp", "-w", "w", "-c", "c.yml", "--log-level", "DEBUG"], (Path("w"), Path("c.yml"), "DEBUG")),
        (["mcp", "--workspace=w", "--log-level=INFO"], (Path("w"), None, "INFO")),
    ],
)
def test_plain_mcp_command_lines_skip_the_typer_app(argv, parsed, monkeypatch):
    monkeypatch.delenv("DSH_LOG_LEVEL", raising=False)
    assert mcp_args(argv) == parsed


@pytest.mark.parametrize(
    "argv",
    [
        ["mcp", "--help"],
        ["--json", "mcp"],
        ["mcp", "--workspace"],
        ["mcp", "-w", "a", "--workspace", "b"],
        ["mcp", "-w=a"],
        ["mcp", "--stdio"],
        ["mcp", "--bogus"],
        ["mcp", "-w", ""],
        ["serve"],
    ],
)
def test_every_other_mcp_command_line_goes_through_typer(argv):
    assert mcp_args(argv) is None


def test_mcp_serves_without_the_typer_app(tmp_path, workspace):
    """A spawned ``dsh-search mcp`` answers ``initialize`` and a tool call without importing
    Typer or the Typer commands (``-X importtime`` lists every module the process imported;
    Rich and Click come with the MCP SDK, and a trivial server on it imports them too)."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "post_tool_use",
                "arguments": {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}, "session_id": "s"},
            },
        },
    ]
    env = {**os.environ, "DSH_HOME": str(tmp_path / "home")}
    with (tmp_path / "stderr").open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "dsh_sidecar", "mcp", "--workspace", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
        proc.stdin.close()
        assert proc.wait(60) == 0
    assert [r["id"] for r in replies] == [1, 2] and all("result" in r for r in replies)
    lines = (tmp_path / "stderr").read_text().splitlines()
    imported = {line.split("|")[-1].strip() for line in lines if line.startswith("import time:")}
    assert "dsh_sidecar.mcp.server" in imported
    assert not {"typer", "dsh_sidecar.cli.commands"} & imported


def test_the_search_path_is_prepared_after_the_first_answer(dsh_home, workspace, monkeypatch):
    """A harness calls its hooks right after the start: the preparation's imports wait for
    the first answered call (or :data:`~dsh_sidecar.sidecar.WARM_AFTER_FIRST_CALL_S`)."""
    import asyncio
    import threading

    from dsh_protocol import PostExecuteParams
    from dsh_sidecar import sidecar as sidecar_module
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.router.chain import Router

    warmed = threading.Event()
    original = Router.warm

    def warm(self):
        warmed.set()
        original(self)

    monkeypatch.setattr(Router, "warm", warm)
    monkeypatch.setattr(sidecar_module, "WARM_AFTER_FIRST_CALL_S", 60.0)
    sidecar = sidecar_module.Sidecar(
        parse_config({"suggester": {"enabled": True}}), workspace, home_env(dsh_home), warm_search=True
    )
    try:
        assert sidecar.wait_for_graph(60)
        assert not warmed.wait(0.5)  # the graph is built, but no call was answered yet
        sidecar.post_execute(
            PostExecuteParams.model_validate(
                {"sessionId": "s", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "x"}}}
            )
        )
        assert warmed.wait(30)
    finally:
        asyncio.run(sidecar.aclose())
