"""The workspace graph through the real server: background build with ``$/progress`` on a large
workspace, refresh on ``workspace/didChangeWatchedFiles``, state in ``dsh/status``."""

from __future__ import annotations

from pathlib import Path

from dsh_sidecar.workspace.graph import LARGE_REPO_FILES
from lsprotocol import types as lsp
from support.waiting import until

ENABLED = {"suggester": {"enabled": True}}


async def _status_graph(client) -> dict:
    status = await client.protocol.send_request_async("dsh/status", {})
    suggester = status["suggester"]
    return suggester.get("graph") or status.get("workspaceGraph") or {}


async def _wait_ready(client) -> dict:
    async def ready() -> dict | None:
        graph = await _status_graph(client)
        return graph if graph.get("ready") or graph.get("state") == "ready" else None

    return await until(ready, "the workspace graph ready")


def _ended(client, tokens: set[str] = frozenset()) -> bool:
    """Whether every progress token (but ``tokens``) is complete, and there is at least one."""
    fresh = {t: v for t, v in client.progress_reports.items() if t not in tokens}
    return bool(fresh) and all(v and isinstance(v[-1], lsp.WorkDoneProgressEnd) for v in fresh.values())


def _large_workspace(root: Path) -> None:
    (root / "notes").mkdir(parents=True)
    for i in range(LARGE_REPO_FILES):
        (root / "notes" / f"n{i}.txt").write_text("x")
    (root / "pyproject.toml").write_text("[project]\nname = 'big'\n")
    for i in range(3):
        (root / f"mod{i}.py").write_text(f"def func{i}():\n    pass\n")


async def test_large_workspace_reports_progress(spawn, tmp_path: Path) -> None:
    root = tmp_path / "big"
    _large_workspace(root)
    client = await spawn(initialize=False)
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(window=lsp.WindowClientCapabilities(work_done_progress=True)),
            root_uri=root.as_uri(),
            initialization_options=ENABLED,
        )
    )
    await _wait_ready(client)
    first = set(client.progress_reports)
    # the first build may finish before `initialized`; a rebuild (dsh/toolsChanged) is reported
    for i in range(3):
        (root / f"mod{i}.py").write_text(f"def func{i}():\n    pass\n" * 2000)
    client.protocol.notify("dsh/toolsChanged", {})
    await until(lambda: _ended(client, first), "the rebuild's progress begin … end")
    await until(lambda: _ended(client), "every progress token ended")
    graph = await _wait_ready(client)
    assert graph["files"] == LARGE_REPO_FILES + 4
    # the first build is reported too when it is still running at `initialized` (timing):
    # one or two tokens, each a complete begin … end sequence; the last one is the rebuild
    assert 1 <= len(client.progress_reports) <= 2
    for token, values in client.progress_reports.items():
        assert token.startswith("dsh/workspaceGraph/")
        assert isinstance(values[0], lsp.WorkDoneProgressBegin)
        assert values[0].title == "Indexing workspace"
        assert values[0].percentage == 0
        assert isinstance(values[-1], lsp.WorkDoneProgressEnd)
    values = list(client.progress_reports.values())[-1]
    assert values[-1].message == "symbols 3/3"
    reports = [v for v in values[1:-1]]
    assert all(isinstance(v, lsp.WorkDoneProgressReport) for v in reports)
    assert [v.message for v in reports] == ["symbols 1/3", "symbols 2/3"]


async def test_small_workspace_sends_no_progress(spawn, workspace: Path) -> None:
    client = await spawn(initialize=False)
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(window=lsp.WindowClientCapabilities(work_done_progress=True)),
            root_uri=workspace.as_uri(),
            initialization_options=ENABLED,
        )
    )
    await _wait_ready(client)
    await client.protocol.send_request_async("dsh/status", {})  # a progress begun before this reply is in
    assert client.progress_reports == {}


async def test_watched_file_change_refreshes_graph(spawn, workspace: Path) -> None:
    client = await spawn(ENABLED, root=workspace)
    before = await _wait_ready(client)
    new = workspace / "added_module.py"
    new.write_text("class FreshlyAdded:\n    pass\n")
    client.protocol.notify(
        lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=new.as_uri(), type=lsp.FileChangeType.Created)]),
    )

    async def refreshed() -> dict | None:
        after = await _status_graph(client)
        return after if after.get("files") == before["files"] + 1 else None

    after = await until(refreshed, "the graph counting the added file")
    assert after["files"] == before["files"] + 1
    assert after["kinds"]["source"] == before["kinds"]["source"] + 1
