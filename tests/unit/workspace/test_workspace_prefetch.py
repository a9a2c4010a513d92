"""Git answers started early (workspace/prefetch.py): taken once by the build that asks for the
same thing, never when stale or failed, and never started for a folder the sidecar refuses."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from dsh_sidecar.workspace import prefetch, recency
from support.gitrepo import git


def test_a_result_started_early_is_taken_once(monkeypatch: pytest.MonkeyPatch) -> None:
    go = threading.Event()
    calls: list[str] = []

    def slow(x: str) -> str:
        calls.append(x)
        go.wait(5)
        return f"early {x}"

    prefetch.start(("k", "a"), slow, "a")
    prefetch.start(("k", "a"), slow, "again")  # already started: left as it is
    threading.Timer(0.05, go.set).start()
    assert prefetch.take(("k", "a"), lambda x: f"now {x}", "a") == "early a"  # waited for it
    assert prefetch.take(("k", "a"), lambda x: f"now {x}", "a") == "now a"  # once
    assert calls == ["a"]


def test_a_stale_or_failed_result_is_run_again(monkeypatch: pytest.MonkeyPatch) -> None:
    prefetch.start(("k", "stale"), lambda: "early")
    time.sleep(0.05)
    monkeypatch.setattr(prefetch, "FRESH_S", 0.0)
    assert prefetch.take(("k", "stale"), lambda: "now") == "now"
    monkeypatch.undo()

    def boom() -> str:
        raise RuntimeError("git failed")

    prefetch.start(("k", "failed"), boom)
    time.sleep(0.05)
    assert prefetch.take(("k", "failed"), lambda: "now") == "now"
    assert prefetch.take(("k", "never"), lambda: "now") == "now"


def test_mcp_starts_the_builds_git_early_for_a_workspace_it_accepts(tmp_path: Path, monkeypatch) -> None:
    from dsh_sidecar.cli.serving import _start_git

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "one")
    started: list[tuple] = []
    real_start = prefetch.start
    monkeypatch.setattr(prefetch, "start", lambda key, fn, *args: started.append(key) or real_start(key, fn, *args))
    _start_git(ws, suggesting=True)
    root = str(ws.resolve())
    assert started == [("identity", root), ("git_scan", root)]
    files, _times = recency.git_scan(ws.resolve())  # the early scan, taken
    assert files == ["a.py"]
    started.clear()
    _start_git(ws, suggesting=False)  # no projection to build: the identity only
    assert started == [("identity", root)]
    started.clear()
    monkeypatch.setenv("HOME", str(tmp_path))  # a folder the sidecar refuses (an ancestor of home)
    _start_git(tmp_path, suggesting=True)
    assert started == []


def test_a_result_slower_than_the_freshness_is_waited_for_not_run_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow repository's git (a job still running past FRESH_S when the build asks) is waited
    for: running it again beside itself doubled the git work and the wait for the first answer."""
    monkeypatch.setattr(prefetch, "FRESH_S", 0.05)
    calls: list[str] = []

    def slow(x: str) -> str:
        calls.append(x)
        time.sleep(0.3)
        return f"{x} {len(calls)}"

    prefetch.start(("k", "slow"), slow, "early")
    assert prefetch.take(("k", "slow"), slow, "now") == "early 1"
    assert calls == ["early"]
