"""``bench/file_churn.py`` leaves nothing behind: its temporary folder (the synthetic tree, ~380 MiB
at its default 100k files, and the sidecars' homes) is removed when the run ends, on Ctrl-C (the
terminal's SIGINT to the whole process group) and on a ``kill``, and its sidecars are stopped;
``--keep`` keeps the folder and says where. Real runs of the bench on a small tree."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.waiting import wait_until

BENCH = Path(__file__).resolve().parents[2] / "bench" / "file_churn.py"
SMALL = ["--files", "300", "--rounds", "1", "--phase", "0.3", "--interval", "0.1"]


class Run:
    """The bench in its own process group (as a terminal runs it), its temporary folders under
    ``tmp``; its output read on a thread."""

    def __init__(self, tmp: Path, *args: str) -> None:
        self.tmp = tmp
        tmp.mkdir()
        env = {**os.environ, "TMPDIR": str(tmp)}
        self.proc = subprocess.Popen(
            [sys.executable, str(BENCH), *SMALL, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self.tree_made = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if line.startswith("tree "):
                self.tree_made.set()

    def wait(self) -> int:
        try:
            return self.proc.wait(timeout=300)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)

    def left(self) -> list[str]:
        return sorted(p.name for p in self.tmp.glob("dsh-churn-*"))

    def group_gone(self) -> bool:
        """Whether no process of the run's group is left (a sidecar's own worker processes end a
        moment after it: waited for, up to the usual hang bound)."""

        def gone() -> bool:
            try:
                os.killpg(self.proc.pid, 0)
            except ProcessLookupError:
                return True
            return False

        try:
            return wait_until(gone, "the bench's process group gone", timeout_s=30)
        finally:
            if not gone():
                os.killpg(self.proc.pid, signal.SIGKILL)


def test_a_whole_run_removes_its_folder(tmp_path: Path) -> None:
    run = Run(tmp_path / "t")
    assert run.wait() == 0, "".join(run.lines)
    assert any(line.startswith("load ") for line in run.lines)
    assert run.left() == []


def test_ctrl_c_removes_the_folder_and_stops_the_sidecars(tmp_path: Path) -> None:
    run = Run(tmp_path / "t")
    assert run.tree_made.wait(120), "".join(run.lines)
    assert len(run.left()) == 1  # the tree is there while the bench runs
    os.killpg(run.proc.pid, signal.SIGINT)  # what Ctrl-C sends: the bench and its children
    assert run.wait() != 0
    assert run.left() == []
    assert run.group_gone()


@pytest.mark.parametrize("sig", [signal.SIGTERM])
def test_a_kill_with_keep_keeps_the_folder_and_says_where(tmp_path: Path, sig: signal.Signals) -> None:
    run = Run(tmp_path / "t", "--keep")
    assert run.tree_made.wait(120), "".join(run.lines)
    os.kill(run.proc.pid, sig)  # the bench alone: its sidecars are stopped by it
    assert run.wait() == 128 + sig
    [kept] = run.left()
    folder = run.tmp / kept
    assert f"kept {folder} (its tree: --tree {folder / 'synthetic-300'})\n" in run.lines
    assert (folder / "synthetic-300").is_dir()
    assert run.group_gone()
