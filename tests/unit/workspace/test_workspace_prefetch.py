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


def test_mcp_starts_no_early_git_scan_when_the_last_session_kept_gits_listing(tmp_path: Path, monkeypatch) -> None:
    """A kept listing of git's makes the build ready without the scan (it runs after ready):
    none is started before the imports. A walk's listing, another workspace's head, a head
    that is no JSON or a link in its place leave the early scan as it was."""
    from dsh_sidecar.cli.serving import _start_git
    from dsh_sidecar.workspace.cachenames import cache_path, kept_listing_source
    from dsh_sidecar.workspace.listingcache import ListingCache
    from dsh_sidecar.workspace.stats import stat_files

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    git(ws, "init", "-q")
    cache = tmp_path / "cache"
    monkeypatch.setenv("DSH_CACHE_DIR", str(cache))
    index_dir = cache / "workspace"
    root = ws.resolve()
    started: list[tuple] = []
    monkeypatch.setattr(prefetch, "start", lambda key, fn, *args: started.append(key))

    def early(source: str | None) -> list[tuple]:
        started.clear()
        assert kept_listing_source(index_dir, root) == source
        _start_git(ws, suggesting=True)
        return started

    assert early(None) == [("identity", str(root)), ("git_scan", str(root))]
    kept = ListingCache(index_dir, root)
    assert kept.save(stat_files(root, ["a.py"]), [1.0], "git")
    assert early("git") == [("identity", str(root))]
    assert kept.save(stat_files(root, ["a.py"]), [1.0], "mtime")
    assert early("mtime") == [("identity", str(root)), ("git_scan", str(root))]
    listing = cache_path(index_dir, root).with_suffix(".listing.bin")
    listing.write_bytes(b'{"root": "/elsewhere", "source": "git"}\n')
    assert early(None) == [("identity", str(root)), ("git_scan", str(root))]
    listing.write_bytes(b"not json\n")
    assert early(None) == [("identity", str(root)), ("git_scan", str(root))]
    listing.unlink()
    (tmp_path / "forged").write_bytes(b'{"root": "%s", "source": "git"}\n' % str(root).encode())
    listing.symlink_to(tmp_path / "forged")
    assert early(None) == [("identity", str(root)), ("git_scan", str(root))]


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
