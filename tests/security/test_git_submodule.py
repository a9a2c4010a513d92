"""Class 1 (docs/SECURITY.md): a submodule's own config runs nothing either.

``git status`` (the recency scan) enters every submodule and runs ``git status`` there, under
the submodule's config (``.git/modules/<name>/config``), whose program keys the parent's
``git config --list`` never names: a ``filter.<driver>.clean`` defined there, with a
stat-dirty file in the submodule, ran at every ``initialize``. Each case has a live control
(plain git runs the program) and a marker that must never appear.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from dsh_sidecar.workspace.files import list_files
from dsh_sidecar.workspace.recency import git_scan

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@e", "-c", "user.name=t", "-c", "protocol.file.allow=always", *args],
        cwd=root,
        env=ENV,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def checkout(tmp_path: Path) -> tuple[Path, Path]:
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "lib.py").write_text("x = 1\n")
    (sub / ".gitattributes").write_text("*.py filter=evil\n")
    git(sub, "init", "-q")
    git(sub, "add", "-A")
    git(sub, "commit", "-qm", "sub")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def main():\n    return 1\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "ws")
    git(root, "submodule", "add", "-q", str(sub), "vendor")
    git(root, "commit", "-qm", "vendor")
    marker = tmp_path / "MARKER"
    prog = tmp_path / "evil.sh"
    prog.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    prog.chmod(0o755)
    with open(root / ".git" / "modules" / "vendor" / "config", "a") as fh:
        fh.write(f'[filter "evil"]\n\tclean = {prog}\n[diff "evil"]\n\ttextconv = {prog}\n')
    return root, marker


def _dirty(root: Path) -> None:
    later = time.time() + 10
    os.utime(root / "vendor" / "lib.py", (later, later))


def test_control_plain_git_runs_the_submodule_filter(checkout: tuple[Path, Path]) -> None:
    root, marker = checkout
    _dirty(root)
    subprocess.run(["git", "status", "--porcelain"], cwd=root, env=ENV, capture_output=True, check=True)
    assert marker.exists()


def test_recency_scan_never_enters_the_submodule(checkout: tuple[Path, Path]) -> None:
    root, marker = checkout
    _dirty(root)
    files, _times = git_scan(root) or ([], {})
    assert "app.py" in files and "vendor" in files
    list_files(root)
    assert not marker.exists()


def test_submodule_ignore_none_in_the_repository_changes_nothing(checkout: tuple[Path, Path]) -> None:
    root, marker = checkout
    with open(root / ".git" / "config", "a") as fh:
        fh.write('[submodule "vendor"]\n\tignore = none\n[diff]\n\tignoreSubmodules = none\n')
    _dirty(root)
    git_scan(root)
    assert not marker.exists()
