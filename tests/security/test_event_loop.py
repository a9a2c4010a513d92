"""Class 7: nothing blocks the event loop (docs/SECURITY.md).

A lock held by another (stopped) sidecar, a burst of invalidations, a workspace of ``/`` or
``$HOME``, a thousand glob candidates: the sidecar keeps answering other requests meanwhile, and
every scan is bounded.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest
from dsh_sidecar.state.files import StateFile
from dsh_sidecar.suggester.candidates import FileIndex
from dsh_sidecar.suggester.fileindex import MAX_GLOB_WORK
from dsh_sidecar.workspace import files as files_mod
from dsh_sidecar.workspace.builder import GraphBuilder
from dsh_sidecar.workspace.fsguard import root_refusal
from filelock import FileLock
from support.rawrpc import RawServer
from support.secutil import threads, wait_built


def _hold(lock_path: str, ready, release) -> None:
    with FileLock(lock_path):
        ready.set()
        release.wait(60)


@pytest.fixture
def held_lock():
    """``hold(path)``: another process takes ``path``'s lock until the test ends."""
    ctx = multiprocessing.get_context("fork")
    procs = []

    def hold(path: Path):
        ready, release = ctx.Event(), ctx.Event()
        p = ctx.Process(target=_hold, args=(str(path) + ".lock", ready, release), daemon=True)
        p.start()
        assert ready.wait(20)
        procs.append((p, release))
        return release.set

    yield hold
    for p, release in procs:
        release.set()
        p.join(10)


def test_a_read_never_waits_for_a_held_lock(tmp_path, held_lock):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"v": 1}))
    held_lock(path)
    f = StateFile(path)
    assert f.read() == {"v": 1}  # the lock timeout is 10 s; a wait would be a 10 s test
    path.write_bytes(b"[" * 10_000)
    assert f.read() is None
    assert path.exists(), "nothing is set aside without the lock (a writer may be renaming)"


def test_dismiss_waiting_for_a_held_lock_does_not_stop_other_requests(dsh_home, workspace, held_lock):
    knowledge = dsh_home / "search-suggester" / "knowledge.json"
    knowledge.parent.mkdir(parents=True)
    server = RawServer(dsh_home, cwd=workspace, forked=True)
    try:
        server.initialize({"suggester": {"enabled": True}}, root=workspace)
        release = held_lock(knowledge)
        dismiss_id = server.request_id("dsh/dismiss", {"family": "Doc"})
        status_id = server.request_id("dsh/status")
        # the status reply arrives while the dismiss still waits for the lock
        first = server.recv(8)
        while "method" in first:
            first = server.recv(8)
        assert first["id"] == status_id, first
        release()
        assert server.response(dismiss_id, timeout=30)["result"]["record"] == "dismissed Doc *"
    finally:
        server.close()


def test_a_burst_of_invalidations_runs_one_build_at_a_time(tmp_path):
    for i in range(200):
        (tmp_path / f"m{i}.py").write_text(f"def f{i}():\n    pass\n")
    builder = GraphBuilder(tmp_path)
    before = threads(os.getpid())
    for _ in range(50):
        builder.start()
        assert threads(os.getpid()) <= before + 2
    assert builder.wait(60)
    assert builder.graph is not None and len(builder.graph) == 200
    assert builder.graph.definitions("f199") == ["m199.py"]


def test_sidecar_burst_of_tools_changed_keeps_threads_and_memory_bounded(dsh_home, workspace):
    server = RawServer(dsh_home, cwd=workspace)
    try:
        server.initialize({"suggester": {"enabled": True}}, root=workspace)
        wait_built(server)
        base_threads, base_rss = threads(server.pid), server.rss_kib()
        for _ in range(50):
            server.notify("dsh/toolsChanged", {})
        assert "result" in server.request("dsh/status")
        wait_built(server)
        assert threads(server.pid) <= base_threads + 2
        assert server.rss_kib() < base_rss + 64 * 1024
    finally:
        server.close()


@pytest.mark.parametrize(
    ("root", "home", "word"),
    [
        ("/", "/home/someone", "filesystem root"),
        ("/proc", "/home/someone", "pseudo"),
        ("HOME", None, "home folder"),
        ("PARENT", None, "contains the home folder"),
    ],
)
def test_root_refusals(tmp_path, root, home, word):
    user_home = tmp_path / "home" / "me"
    user_home.mkdir(parents=True)
    real = {"HOME": user_home, "PARENT": user_home.parent}.get(root, root)
    message = root_refusal(real, home or str(user_home))
    assert message is not None and word in message
    assert root_refusal(user_home / "project", str(user_home)) is None


@pytest.mark.parametrize("kind", ["slash", "home"])
def test_sidecar_refuses_a_root_of_slash_or_home_and_keeps_answering(tmp_path, dsh_home, kind):
    fake_home = tmp_path / "me"
    fake_home.mkdir()
    root = Path("/") if kind == "slash" else fake_home
    server = RawServer(dsh_home, env={"HOME": str(fake_home)}, cwd=tmp_path, forked=True)
    try:
        server.initialize({"suggester": {"enabled": True}}, root=root)
        status = server.request("dsh/status")["result"]
        assert status["workspace"] is None
        assert "not indexed" in status["workspaceRefused"]
        assert status["suggester"]["graph"]["building"] is False
        reply = server.request(
            "dsh/postExecute",
            {"sessionId": "s", "turn": 1, "tool": {"name": "grep", "input": {"pattern": "__version__"}}},
        )
        assert reply["result"] == {"additionalContexts": []}
    finally:
        server.close()
    assert b"not indexed" in server.stderr_bytes


def test_a_thousand_glob_candidates_are_bounded(tmp_path):
    files = [f"d{i % 100}/sub{i % 7}/file_{i}.py" for i in range(30_000)]
    index = FileIndex(tmp_path, files)
    for i in range(1000):
        index.glob(f"**/*{i % 10}*.py")
    assert index.glob_cut
    assert index.glob_work <= MAX_GLOB_WORK + 2 * len(files)  # one glob may overshoot
    fresh = FileIndex(tmp_path, files)
    assert fresh.glob("d1/sub1/*.py")[:1] == ["d1/sub1/file_1.py"]  # a narrow glob still works


def test_the_walk_is_time_bounded(tmp_path, monkeypatch):
    for i in range(50):
        (tmp_path / f"f{i}").mkdir()
        (tmp_path / f"f{i}" / "x.py").write_text("")
    monkeypatch.setattr(files_mod, "WALK_BUDGET_S", 0.0)
    assert len(files_mod.walk_files(tmp_path)) < 50
    monkeypatch.setattr(files_mod, "WALK_BUDGET_S", 60.0)
    assert len(files_mod.walk_files(tmp_path)) == 50
