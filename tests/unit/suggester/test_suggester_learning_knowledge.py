"""Suggester learning (plan, "The learning"), the pieces on their own: the knowledge file (schema, mode, bound,
no lost update across processes), the scoring formula, what a call touches."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from dsh_sidecar.suggester import knowledge as knowledge_mod
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.knowledge import Knowledge, Row
from dsh_sidecar.suggester.learning import learned_factor, rank
from dsh_sidecar.suggester.parse import parse_call as make_probe
from dsh_sidecar.suggester.paths import WorkspacePaths

T0 = 1_764_480_000.0  # 2025-11-30T05:20:00Z


class Clock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_knowledge_file_round_trip_mode_and_schema(tmp_path):
    path = tmp_path / "k" / "knowledge.json"
    k = Knowledge(path, "/ws", Clock())
    k.record("Test", "tests/conftest.py", followed=1)
    k.record("Test", "tests/conftest.py", ignored=1)
    assert not path.exists()  # nothing written before a flush
    assert k.flush()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    doc = json.loads(path.read_text())
    assert doc == {
        "schema": "dsh-search-suggester/knowledge",
        "version": 1,
        "workspaces": {
            "/ws": {
                "dismissals": {},
                "rows": {"Test": {"tests/conftest.py": {"followed": 1, "ignored": 1, "seed": 0.0, "lastUsed": T0}}},
            }
        },
    }
    again = Knowledge(path, "/ws", Clock())
    assert again.row("Test", "tests/conftest.py") == Row(1, 1, 0.0, T0)
    assert Knowledge(path, "/other", Clock()).row("Test", "tests/conftest.py") is None


def test_rows_past_the_cap_evict_oldest_and_least_used(tmp_path, monkeypatch):
    monkeypatch.setattr(knowledge_mod, "MAX_ROWS", 3)
    clock = Clock()
    k = Knowledge(tmp_path / "k.json", "/ws", clock)
    for i, (f, ig) in enumerate([(1, 0), (0, 1), (5, 0), (1, 0)]):
        clock.t = T0 + (i if i != 2 else 0)  # row 2 is old but heavily used; row 0 is as old, less used
        k.record("Doc", f"d{i}.md", followed=f, ignored=ig)
    k.flush()
    kept = json.loads((tmp_path / "k.json").read_text())["workspaces"]["/ws"]["rows"]["Doc"]
    assert sorted(kept) == ["d1.md", "d2.md", "d3.md"]  # d0: lastUsed T0, 1 use < d2's 5 uses


def _hammer_script(path: Path, n: int) -> str:
    return (
        "from pathlib import Path\n"
        "from dsh_sidecar.suggester.knowledge import Knowledge\n"
        f"k = Knowledge(Path({str(path)!r}), '/ws')\n"
        f"for i in range({n}):\n"
        "    k.record('Test', 'tests/conftest.py', followed=1)\n"
        "    k.record('Test', f'tests/t{i % 3}.py', ignored=1)\n"
        "    for _ in range(30):  # a lock timeout keeps the deltas for the next flush\n"
        "        if k.flush():\n"
        "            break\n"
        "    else:\n"
        "        raise SystemExit('never flushed')\n"
    )


@pytest.mark.slow
def test_two_processes_on_one_file_lose_no_update(tmp_path):
    path = tmp_path / "knowledge.json"
    n = 40
    procs = [subprocess.Popen([sys.executable, "-c", _hammer_script(path, n)]) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    rows = json.loads(path.read_text())["workspaces"]["/ws"]["rows"]["Test"]
    assert rows["tests/conftest.py"]["followed"] == 2 * n
    assert sum(rows[f"tests/t{i}.py"]["ignored"] for i in range(3)) == 2 * n


def test_stale_snapshot_never_overwrites_another_writer(tmp_path):
    path = tmp_path / "knowledge.json"
    a, b = Knowledge(path, "/ws", Clock()), Knowledge(path, "/ws", Clock())
    a.ensure(), b.ensure()  # both loaded the empty file
    a.record("Doc", "README.md", followed=2)
    a.flush()
    b.record("Doc", "README.md", followed=1)
    b.dismiss("Test", "*", T0 + 60)
    b.flush()
    assert b.row("Doc", "README.md").followed == 3  # b's view adopted a's update too
    assert Knowledge(path, "/ws", Clock()).row("Doc", "README.md").followed == 3


def test_touched_paths():
    root = Path("/ws")

    def touched_paths(q, root):
        return WorkspacePaths(root, None).touched(q)

    assert touched_paths(make_probe("Read", {"file_path": "/ws/src/a.py"}), root) == {"src/a.py"}
    assert touched_paths(make_probe("edit", {"path": "./src/a.py"}), root) == {"src/a.py"}
    assert touched_paths(make_probe("grep", {"pattern": "x", "path": "tests/conftest.py"}), root) == {
        "tests/conftest.py"
    }
    assert "pyproject.toml" in touched_paths(make_probe("bash", {"command": "rg -n version pyproject.toml"}), root)
    assert touched_paths(make_probe("read", {"path": "/elsewhere/a.py"}), root) == set()


def test_scoring_formula_and_rank():
    assert learned_factor(None) == 0.5
    assert learned_factor(Row(seed=1.0)) == pytest.approx(2 / 3)
    assert learned_factor(Row(seed=2.0)) == pytest.approx(3 / 4)
    assert learned_factor(Row(followed=3, ignored=1, seed=1.0)) == pytest.approx(5 / 7)
    k = Knowledge(None, "/ws", Clock())
    k.record("Test", "b.py", followed=5)
    ranked = rank("Test", [Target("a.py", "r", 0.5), Target("b.py", "r", 0.3), Target("c.py", "r", 0.5)], k)
    # a, c: 0.5 × 0.5 = 0.25 (tie keeps pack order); b: 0.3 × 6/7 = 0.2571
    assert [(t.path, round(t.score, 4)) for t in ranked] == [("b.py", 0.2571), ("a.py", 0.25), ("c.py", 0.25)]


def test_another_writers_change_is_seen_without_a_restart(tmp_path):
    path = tmp_path / "knowledge.json"
    reader, writer = Knowledge(path, "/ws", Clock()), Knowledge(path, "/ws", Clock())
    assert reader.active_dismissals() == {}
    writer.dismiss("Version", "*", T0 + 60)
    writer.record("Doc", "README.md", followed=1)
    writer.flush()
    assert reader.active_dismissals() == {("Version", "*"): T0 + 60}
    assert reader.row("Doc", "README.md").followed == 1


def test_a_call_checks_the_file_once_and_the_next_call_sees_another_writers_change(tmp_path, monkeypatch):
    """Within a ``dsh/postExecute`` (``begin_call``/``end_call``) only the first read checks the
    file (one ``stat`` a call: the dismissals, the rows and the ranking read it); another
    writer's change is seen by the next call, by a read outside a call, and by another
    thread's read during the call."""
    import threading

    path = tmp_path / "knowledge.json"
    reader, writer = Knowledge(path, "/ws", Clock()), Knowledge(path, "/ws", Clock())
    writer.record("Doc", "README.md", followed=1)
    writer.flush()
    stamps: list[int] = []
    real_stamp = reader._stamp
    monkeypatch.setattr(reader, "_stamp", lambda: stamps.append(1) or real_stamp())
    reader.begin_call()
    assert reader.row("Doc", "README.md").followed == 1  # first read: loads the file
    checks = len(stamps)
    assert reader.active_dismissals() == {}
    assert reader.row("Doc", "README.md").followed == 1
    assert len(stamps) == checks  # the call's later reads: no stat
    writer.dismiss("Version", "*", T0 + 60)
    writer.flush()
    assert reader.active_dismissals() == {}  # the same call: as it was when it began
    seen: list[object] = []
    other = threading.Thread(target=lambda: seen.append(reader.active_dismissals()))
    other.start(), other.join()
    assert seen == [{("Version", "*"): T0 + 60}]  # another thread's read checks the file
    reader.end_call()
    writer.dismiss("Owner", "*", T0 + 90)
    writer.flush()
    assert ("Owner", "*") in reader.active_dismissals()  # outside a call: every read checks
    reader.begin_call()
    writer.record("Doc", "README.md", followed=1)
    writer.flush()
    assert reader.row("Doc", "README.md").followed == 2  # the next call's first read sees it
    reader.end_call()


def test_non_finite_numbers_are_refused(tmp_path):
    path = tmp_path / "knowledge.json"
    path.write_text(
        '{"schema": "dsh-search-suggester/knowledge", "version": 1, "workspaces": '
        '{"/ws": {"rows": {}, "dismissals": {"Version": {"*": Infinity}}}}}'
    )
    k = Knowledge(path, "/ws", Clock())
    assert k.active_dismissals() == {}  # an everlasting dismissal is not ours: kept aside
    assert len(list(tmp_path.glob("knowledge.json.corrupt-*"))) == 1


def test_records_during_a_worker_flush_are_never_lost(tmp_path):
    import threading

    path = tmp_path / "knowledge.json"
    k = Knowledge(path, "/ws", Clock())
    stop = threading.Event()

    def flusher() -> None:
        while not stop.is_set():
            k.flush()

    worker = threading.Thread(target=flusher)
    worker.start()
    for _ in range(300):
        k.record("Doc", "README.md", followed=1)
    stop.set()
    worker.join()
    assert k.flush()
    assert json.loads(path.read_text())["workspaces"]["/ws"]["rows"]["Doc"]["README.md"]["followed"] == 300
    assert k.row("Doc", "README.md").followed == 300


def test_a_failed_write_keeps_the_deltas_for_the_next_flush(tmp_path, monkeypatch):
    from dsh_sidecar.state import files

    path = tmp_path / "knowledge.json"
    k = Knowledge(path, "/ws", Clock())
    k.record("Doc", "README.md", followed=2)
    real = files.atomic_write_bytes

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files, "atomic_write_bytes", full_disk)
    assert k.flush() is False and k.dirty
    assert k.row("Doc", "README.md").followed == 2  # still counted in memory
    monkeypatch.setattr(files, "atomic_write_bytes", real)
    k.record("Doc", "README.md", followed=1)
    assert k.flush()
    assert json.loads(path.read_text())["workspaces"]["/ws"]["rows"]["Doc"]["README.md"]["followed"] == 3
