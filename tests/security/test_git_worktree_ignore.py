"""A ``.gitignore`` in the work tree that git would block on (a FIFO, a device, a link to one):
``git ls-files --others --exclude-standard`` opens each walked folder's ``.gitignore`` and a
FIFO held every run until git's 10 s timeout, twice per build (the listing and the recency
scan). The pre-check (``gitcmd.worktree_refusal``) finds it without opening anything, and the
listing walks the folder instead (its own ``.gitignore`` reads refuse FIFOs)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from dsh_sidecar.workspace import files, gitcmd, recency
from dsh_sidecar.workspace.graph import WorkspaceGraph

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def checkout(tmp_path: Path) -> Path:
    """A git checkout with one commit: ``a.py`` and ``sub/v.py``, plus an untracked ``sub/new.py``."""
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    (root / "sub" / "v.py").write_text("__version__ = '1'\n")
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
    }
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "one"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)
    (root / "sub" / "new.py").write_text("y = 2\n")
    return root


def no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if any git listing or scan is started."""

    def refuse(*_a: object, **_k: object) -> object:
        raise AssertionError("git was run in a work tree it would block in")

    monkeypatch.setattr(gitcmd, "run", refuse)
    monkeypatch.setattr(gitcmd.Git, "run_many", refuse)


@pytest.mark.parametrize("where", [".gitignore", "sub/.gitignore", "sub/deep/er/.gitignore"])
def test_a_fifo_gitignore_is_refused_and_the_folder_is_walked(tmp_path, monkeypatch, where):
    root = checkout(tmp_path)
    (root / where).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(root / where)
    assert gitcmd.worktree_refusal(root) == f"work tree holds a .gitignore that is a FIFO or device ({where})"
    no_git(monkeypatch)
    assert recency.git_scan(root) is None
    assert sorted(files.list_files(root)) == ["a.py", "sub/new.py", "sub/v.py"]
    graph = WorkspaceGraph.build_files(root)
    assert sorted(graph.files) == ["a.py", "sub/new.py", "sub/v.py"]
    assert graph.stats["recencySource"] == "mtime"


def test_a_link_to_a_fifo_or_through_dev_is_refused(tmp_path):
    root = checkout(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    os.symlink(tmp_path / "pipe", root / "sub" / ".gitignore")
    assert gitcmd.worktree_refusal(root) == "work tree holds a .gitignore that is a FIFO or device (sub/.gitignore)"
    os.unlink(root / "sub" / ".gitignore")
    os.symlink("/dev/null", root / ".gitignore")
    assert gitcmd.worktree_refusal(root) == (
        "work-tree .gitignore is read through /proc, /sys or /dev, or past 40 links (.gitignore)"
    )


def test_regular_folder_and_dangling_gitignores_pass_and_git_lists(tmp_path):
    """An ordinary tree: no refusal, and the listing is git's (ignored files left out)."""
    root = checkout(tmp_path)
    (root / ".gitignore").write_text("*.log\n")
    (root / "debug.log").write_text("x\n")
    (root / "sub" / ".gitignore").mkdir()  # a folder of that name: git skips it, nothing blocks
    os.symlink(tmp_path / "missing", root / "sub" / "deeper")
    (root / "sub" / "deeper2").mkdir()
    os.symlink(tmp_path / "missing", root / "sub" / "deeper2" / ".gitignore")
    assert gitcmd.worktree_refusal(root) is None
    listed = files.list_files(root)
    assert "debug.log" not in listed and {"a.py", "sub/new.py", "sub/v.py", ".gitignore"} <= set(listed)
    assert WorkspaceGraph.build_files(root).stats["recencySource"] == "git"


def test_git_folders_and_linked_folders_are_not_walked(tmp_path):
    """A FIFO ``.gitignore`` inside ``.git`` (the git-folder scan's concern) or behind a folder
    link (git does not follow it) is not this check's refusal."""
    root = checkout(tmp_path)
    os.mkfifo(root / ".git" / ".gitignore")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.mkfifo(elsewhere / ".gitignore")
    os.symlink(elsewhere, root / "linked")
    assert gitcmd.worktree_refusal(root) is None


def test_the_scan_is_bounded(tmp_path, monkeypatch):
    """Past :data:`gitcmd.MAX_WORKTREE_ENTRIES` entries the rest is left to git's timeout."""
    root = checkout(tmp_path)
    deep = root / "zz"
    deep.mkdir()
    os.mkfifo(deep / ".gitignore")
    monkeypatch.setattr(gitcmd, "MAX_WORKTREE_ENTRIES", 2)
    assert gitcmd.worktree_refusal(root) is None
    monkeypatch.setattr(gitcmd, "MAX_WORKTREE_ENTRIES", 1000)
    assert gitcmd.worktree_refusal(root) == "work tree holds a .gitignore that is a FIFO or device (zz/.gitignore)"
