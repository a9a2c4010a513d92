"""A session that ends while the sidecar's start (its build, the packs' activation) still runs:
the end does not wait for the build, and the suggester's ledger says so once, ``abstained
not-ready`` (``SidecarServer.end_before_start``, which ``run_stdio`` calls at every end: ``exit``,
EOF, SIGTERM, SIGHUP). Before, the end waited for the whole build, and a harness that ended the
process within its start (the DSH no-pack run under load) left an empty ledger. The build is
held on an event here, never a sleep."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from dsh_sidecar.lsp import handlers
from lsprotocol import types as lsp
from support.inprocess_lsp import writing_server


class BuiltSidecar:
    shared = None

    def shutdown(self) -> None:
        pass


async def until(predicate, turns: int = 2000) -> None:
    for _ in range(turns):
        if predicate():
            return
        await asyncio.sleep(0.001)


def ended_during_a_held_build(monkeypatch, options: dict[str, Any]) -> tuple[list[bool], bool]:
    """``initialize`` with ``options``, its build held; the session's end twice while it is;
    what each end answered and whether the build was still held after both."""
    release = threading.Event()

    def held_build(*_args: Any) -> BuiltSidecar:
        release.wait(10)  # released below; the bound only ends a test whose end waited for it
        return BuiltSidecar()

    monkeypatch.setattr(handlers, "build_sidecar", held_build)

    async def run() -> tuple[list[bool], bool]:
        server, _written = writing_server()
        params = lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), process_id=None, root_uri=None, initialization_options=options
        )
        server.protocol._handle_request(0, "initialize", params)
        await until(server.building)
        ends = [server.end_before_start(), server.end_before_start()]
        held = not release.is_set()
        release.set()
        await until(lambda: not server.building())
        ends.append(server.end_before_start())  # built: the end flushes the sidecar as before
        return ends, held

    return asyncio.run(run())


def ledger_lines(path: Path) -> list[str]:
    return [line.split("] ", 1)[1] for line in path.read_text().splitlines()] if path.exists() else []


def test_a_session_ended_during_the_build_says_so_once_without_waiting(tmp_path, monkeypatch):
    ledger = tmp_path / "ledger" / "ledger.log"
    options = {"suggester": {"enabled": True, "logFile": str(ledger)}}
    ends, held = ended_during_a_held_build(monkeypatch, options)
    assert ends == [True, True, False]
    assert held  # the end did not wait for the build
    assert ledger_lines(ledger) == ["abstained not-ready"]


def test_without_the_suggester_there_is_no_ledger_line(tmp_path, monkeypatch):
    ledger = tmp_path / "ledger.log"
    ends, held = ended_during_a_held_build(monkeypatch, {"suggester": {"enabled": False, "logFile": str(ledger)}})
    assert (ends, held) == ([True, True, False], True)
    assert not ledger.exists()


def test_the_default_ledger_is_under_dsh_home(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    ends, _ = ended_during_a_held_build(monkeypatch, {"suggester": {"enabled": True}})
    assert ends[0] is True
    assert ledger_lines(tmp_path / "home" / "search-suggester" / "ledger.log") == ["abstained not-ready"]


def test_a_session_ended_after_the_activation_but_before_the_build_returned_has_one_line(tmp_path, monkeypatch):
    """The real build, held right after the suggester's activation wrote its line (its
    projection's start): the session ends then, and the process's exit flushes every ledger
    (``ledger.flush_all``, atexit). Before, both the activation's buffered line and ``abstained
    not-ready`` reached the file: two lines, one saying nothing was activated."""
    from dsh_sidecar.suggester import ledger as ledger_module
    from dsh_sidecar.workspace.projection import WorkspaceProjection

    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DSH_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "ledger.log"
    activated, release = threading.Event(), threading.Event()

    def held_start(self: WorkspaceProjection) -> None:
        activated.set()
        release.wait(10)  # released below; the bound only ends a test whose end waited for it

    monkeypatch.setattr(WorkspaceProjection, "start", held_start)

    async def run() -> bool:
        server, _written = writing_server()
        options = {"suggester": {"enabled": True, "logFile": str(path)}}
        params = lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), process_id=None, root_uri=None, initialization_options=options
        )
        server.protocol._handle_request(0, "initialize", params)
        await until(activated.is_set, 20000)
        ended = server.end_before_start()
        release.set()
        await until(lambda: not server.building(), 20000)
        sidecar = server.sidecar
        sidecar.shutdown()  # (its threads end; a flush of its ledger appends nothing)
        await sidecar.aclose()
        return ended

    assert asyncio.run(run()) is True
    ledger_module.flush_all()  # the process's exit (atexit)
    assert ledger_lines(path) == ["abstained not-ready"]
