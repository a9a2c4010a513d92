"""The benchmarks' temp folders go however a run ends: at its end, on an error, on a kill
(``bench/_scratch.py``); ``bench/transport.py`` refusing its repository leaves none."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bench import transport
from bench._scratch import scratch

BENCH = Path(__file__).resolve().parents[3] / "bench"


def test_the_folder_goes_at_the_end_and_on_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with scratch("dsh-x-") as tmp:
        (tmp / "a").mkdir()
        (tmp / "a" / "b").write_text("b")
    assert not tmp.exists()
    with pytest.raises(RuntimeError), scratch("dsh-x-") as tmp:
        (tmp / "c").write_text("c")
        raise RuntimeError("the bench failed")
    assert list(tmp_path.iterdir()) == []


def test_a_kill_ends_the_run_and_the_folder_goes(tmp_path):
    script = (
        "import sys, threading\n"
        f"sys.path.insert(0, {str(BENCH)!r})\n"
        "from _scratch import scratch\n"
        "with scratch('dsh-x-') as tmp:\n"
        "    (tmp / 'state').write_text('s')\n"
        "    print(tmp, flush=True)\n"
        "    threading.Event().wait()\n"
    )
    env = dict(os.environ, TMPDIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    folder = Path(proc.stdout.readline().strip())
    assert folder.parent == tmp_path and (folder / "state").exists()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


def test_the_signal_handler_is_given_back(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = signal.getsignal(signal.SIGTERM)
    with scratch("dsh-x-"):
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before


def test_transport_refusing_its_repository_leaves_no_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    argv = ["transport.py", "--repo", "nobody/nothing", "--cache", str(tmp_path / "no-cache")]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exited:
        transport.main()
    assert str(exited.value).startswith("transport: ")
    assert list((tmp_path / "tmp").iterdir()) == []
