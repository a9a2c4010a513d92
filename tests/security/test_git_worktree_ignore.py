"""Work-tree files git would block on (a FIFO, a device, a link to one): ``git ls-files --others
--exclude-standard`` opens each walked folder's ``.gitignore`` and ``status`` the
``.gitattributes`` of folders with stat-dirty files, and a FIFO held every run until git's 10 s
timeout. The pre-check (``gitguard.worktree_refusal``) finds them without opening anything, and
the listing walks the folder instead (its own ``.gitignore`` reads refuse FIFOs); the files git
is told not to read (``core.excludesFile``, ``.mailmap``) are not read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from dsh_sidecar.workspace import files, gitcmd, gitguard, recency
from dsh_sidecar.workspace.graph import WorkspaceGraph
from support.gitrepo import git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def checkout(tmp_path: Path) -> Path:
    """A git checkout with one commit: ``a.py`` and ``sub/v.py``, plus an untracked ``sub/new.py``."""
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    (root / "sub" / "v.py").write_text("__version__ = '1'\n")
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "one"]):
        git(root, *args)
    (root / "sub" / "new.py").write_text("y = 2\n")
    return root


def no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if any git listing or scan is started."""

    def refuse(*_a: object, **_k: object) -> object:
        raise AssertionError("git was run in a work tree it would block in")

    monkeypatch.setattr(gitcmd, "run", refuse)
    monkeypatch.setattr(gitcmd.Git, "run_many", refuse)


@pytest.mark.parametrize(
    "where", [".gitignore", "sub/.gitignore", "sub/deep/er/.gitignore", ".gitattributes", "sub/.gitattributes"]
)
def test_a_fifo_gitignore_is_refused_and_the_folder_is_walked(tmp_path, monkeypatch, where):
    root = checkout(tmp_path)
    (root / where).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(root / where)
    name = where.rsplit("/", 1)[-1]
    assert gitguard.worktree_refusal(root) == f"work tree holds a {name} that is a FIFO or device ({where})"
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
    assert gitguard.worktree_refusal(root) == "work tree holds a .gitignore that is a FIFO or device (sub/.gitignore)"
    os.unlink(root / "sub" / ".gitignore")
    os.symlink("/dev/null", root / ".gitignore")
    assert gitguard.worktree_refusal(root) == (
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
    assert gitguard.worktree_refusal(root) is None
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
    assert gitguard.worktree_refusal(root) is None


def test_the_scan_is_bounded_and_a_bigger_tree_is_walked(tmp_path, monkeypatch):
    """Past :data:`gitguard.MAX_WORKTREE_ENTRIES` entries what lies beyond is unknown (a FIFO
    there held git 10 s): the tree is refused and walked, listing the same files."""
    root = checkout(tmp_path)
    deep = root / "zz"
    deep.mkdir()
    os.mkfifo(deep / ".gitignore")
    monkeypatch.setattr(gitguard, "MAX_WORKTREE_ENTRIES", 1000)
    assert gitguard.worktree_refusal(root) == "work tree holds a .gitignore that is a FIFO or device (zz/.gitignore)"
    os.unlink(deep / ".gitignore")
    assert gitguard.worktree_refusal(root) is None
    monkeypatch.setattr(gitguard, "MAX_WORKTREE_ENTRIES", 3)
    assert gitguard.worktree_refusal(root) == "work tree has more than 3 entries"
    no_git(monkeypatch)
    assert sorted(files.list_files(root)) == ["a.py", "sub/new.py", "sub/v.py"]


def test_a_name_that_is_not_utf8_is_shown_escaped(tmp_path):
    root = checkout(tmp_path)
    folder = os.path.join(os.fsencode(root), b"\xff\xfe")
    os.mkdir(folder)
    os.mkfifo(os.path.join(folder, b".gitignore"))
    assert (
        gitguard.worktree_refusal(root)
        == "work tree holds a .gitignore that is a FIFO or device (\\udcff\\udcfe/.gitignore)"
    )


@pytest.mark.parametrize("trap", ["excludes-file", "mailmap"])
def test_files_git_is_told_not_to_read_are_not_read(tmp_path, monkeypatch, trap):
    """A FIFO named by the repository's ``core.excludesFile`` (read by ``ls-files --others``)
    or a FIFO ``.mailmap`` (read by ``log`` since git 2.29) held git until its timeout; the
    fixed overrides (``core.excludesFile=/dev/null``, ``log.mailmap=false``) keep git off them,
    so the listing and the recency scan are git's, untracked file included, within a 3 s
    timeout (past it the scan would fall back to the walk: ``recencySource`` ``mtime``)."""
    root = checkout(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    if trap == "excludes-file":
        with open(root / ".git" / "config", "a") as f:
            f.write(f"[core]\n\texcludesFile = {tmp_path / 'pipe'}\n")
    else:
        os.mkfifo(root / ".mailmap")
    monkeypatch.setattr(recency, "GIT_TIMEOUT_S", 3)
    assert gitguard.worktree_refusal(root) is None
    assert "sub/new.py" in files.list_files(root)
    scan = recency.git_scan(root)
    assert scan is not None
    assert "sub/new.py" in scan[0] and "a.py" in scan[1]  # a.py's time comes from the log
    graph = WorkspaceGraph.build_files(root)
    assert graph.stats["recencySource"] == "git" and "sub/new.py" in graph.files


def test_a_scan_whose_untracked_listing_fails_is_walked(tmp_path, monkeypatch):
    """Tracked files alone (the untracked listing timed out) would drop ``sub/new.py`` from the
    graph: the scan gives up and the walk lists everything."""
    root = checkout(tmp_path)
    real = gitcmd.Git.run_many

    def lose_untracked(self, commands):
        out = real(self, commands)
        return {**out, "untracked": None}

    monkeypatch.setattr(gitcmd.Git, "run_many", lose_untracked)
    assert recency.git_scan(root) is None
    graph = WorkspaceGraph.build_files(root)
    assert graph.stats["recencySource"] == "mtime" and "sub/new.py" in graph.files
