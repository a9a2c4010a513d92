"""Class 10 (docs/SECURITY.md): the bandit's ``decisions.jsonl`` is never followed elsewhere.

It was opened without ``O_NOFOLLOW``: a symlink (or a hard link) planted at
``$DSH_HOME/bandit/decisions.jsonl`` made every search append a decision line to the target
file, and a FIFO in its place hung the sidecar's exit (the writer blocked in ``open``, and
``close`` waited for it without a bound).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from dsh_sidecar.bandit.decisions import DecisionLog


def _plant(home: Path, kind: str, victim: Path) -> Path:
    path = home / "bandit" / "decisions.jsonl"
    path.parent.mkdir(parents=True)
    if kind == "symlink":
        os.symlink(victim, path)
    elif kind == "dangling-symlink":
        os.symlink(victim.with_name("absent.txt"), path)
    elif kind == "hardlink":
        os.link(victim, path)
    elif kind == "fifo":
        os.mkfifo(path)
    return path


def _close_within(dlog: DecisionLog, timeout: float) -> None:
    t = threading.Thread(target=dlog.close, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "DecisionLog.close blocked"


@pytest.mark.parametrize("kind", ["symlink", "dangling-symlink", "hardlink", "fifo"])
def test_planted_file_is_refused(tmp_path: Path, kind: str) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    _plant(tmp_path / "home", kind, victim)
    dlog = DecisionLog(tmp_path / "home", flush_delay_s=0.01)
    dlog.append({"event": "decision", "arm": "quick"})
    _close_within(dlog, 10)
    assert victim.read_text() == "precious\n"
    assert not victim.with_name("absent.txt").exists()
    assert not dlog.enabled and "cannot be written" in dlog.warnings[0]


def test_regular_file_gets_the_lines(tmp_path: Path) -> None:
    dlog = DecisionLog(tmp_path, flush_delay_s=0.01)
    for arm in ("quick", "thorough"):
        dlog.append({"event": "decision", "arm": arm})
    _close_within(dlog, 10)
    path = tmp_path / "bandit" / "decisions.jsonl"
    assert [json.loads(line)["arm"] for line in path.read_text().splitlines()] == ["quick", "thorough"]
    assert path.stat().st_mode & 0o777 == 0o600
