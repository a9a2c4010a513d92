"""State files: atomic, 0600, corrupt → cold start (kept aside), no lost updates."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
from pathlib import Path

import pytest
from dsh_sidecar.state import StateFile


def test_atomic_write_modes_and_roundtrip(tmp_path):
    sf = StateFile(tmp_path / "d" / "s.json")
    sf.update(lambda cur: {"n": 1})
    assert sf.read() == {"n": 1}
    assert stat.S_IMODE((tmp_path / "d" / "s.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) == 0o700
    assert [p.name for p in (tmp_path / "d").iterdir() if p.name.endswith(".tmp")] == []


def test_corrupt_file_is_kept_aside(tmp_path):
    path = tmp_path / "s.json"
    path.write_text("{not json")
    sf = StateFile(path)
    assert sf.read() is None
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("s.json.corrupt-")]
    assert len(aside) == 1 and aside[0].read_text() == "{not json"
    assert "corrupt" in sf.warnings[0]


def test_foreign_document_is_rejected(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"other": "tool"}))

    def validate(data):
        if not isinstance(data, dict) or data.get("schema") != "mine":
            raise ValueError("foreign")
        return data

    assert StateFile(path, validate=validate).read() is None


def _bump(path: str, n: int) -> None:
    sf = StateFile(Path(path))
    for _ in range(n):
        sf.update(lambda cur: {"count": (cur or {}).get("count", 0) + 1})


@pytest.mark.slow
def test_concurrent_writers_lose_no_update(tmp_path):
    path = tmp_path / "s.json"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_bump, args=(str(path), 50)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert StateFile(path).read() == {"count": 200}


def _counting(calls: list[object]):
    def validate(data):
        calls.append(data)
        return data

    return validate


def test_an_update_takes_what_it_wrote_instead_of_reading_the_file_back(tmp_path):
    calls: list[object] = []
    sf = StateFile(tmp_path / "s.json", validate=_counting(calls))
    assert sf.update(lambda cur: {"n": 1}, reuse=lambda: {"n": 1}) == {"n": 1}  # nothing written yet: read
    assert calls == []  # absent: nothing to validate
    assert sf.update(lambda cur: {"n": cur["n"] + 1}, reuse=lambda: {"n": 1}) == {"n": 2}
    assert calls == []  # the file is the one written: taken, not read and validated
    assert sf.update(lambda cur: {"n": cur["n"] + 1}) == {"n": 3}  # no reuse given: read
    assert calls == [{"n": 2}]
    assert json.loads((tmp_path / "s.json").read_text()) == {"n": 3}


def test_an_update_reads_the_file_another_writer_replaced_or_edited(tmp_path):
    path = tmp_path / "s.json"
    mine, other = StateFile(path), StateFile(path)
    mine.update(lambda cur: {"n": 1})
    other.update(lambda cur: {"n": cur["n"] + 10})  # another sidecar's update: a new file
    assert mine.update(lambda cur: {"n": cur["n"] + 1}, reuse=lambda: {"n": 1}) == {"n": 12}
    path.write_text(json.dumps({"n": 100}))  # edited in place (same inode, another size)
    assert mine.update(lambda cur: {"n": cur["n"] + 1}, reuse=lambda: {"n": 12}) == {"n": 101}
    path.unlink()
    assert mine.update(lambda cur: {"n": (cur or {}).get("n", 0) + 1}, reuse=lambda: {"n": 101}) == {"n": 1}


def test_a_failed_update_reads_the_file_at_the_next(tmp_path, monkeypatch):
    from dsh_sidecar.state import files

    path = tmp_path / "s.json"
    sf = StateFile(path)
    sf.update(lambda cur: {"n": 1})
    real = files.atomic_write_bytes

    def full(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files, "atomic_write_bytes", full)
    with pytest.raises(OSError):
        sf.update(lambda cur: {"n": 2})
    monkeypatch.setattr(files, "atomic_write_bytes", real)
    assert sf.update(lambda cur: {"n": cur["n"] + 1}, reuse=lambda: {"n": 2}) == {"n": 2}  # the file's 1, read


def _bump_reusing(path: str, n: int) -> None:
    sf = StateFile(Path(path))
    last: list[dict] = [{}]
    for _ in range(n):
        last[0] = sf.update(lambda cur: {"count": (cur or {}).get("count", 0) + 1}, reuse=lambda: last[0])


@pytest.mark.slow
def test_concurrent_writers_reusing_what_they_wrote_lose_no_update(tmp_path):
    path = tmp_path / "s.json"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_bump_reusing, args=(str(path), 50)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert StateFile(path).read() == {"count": 200}


def test_read_only_dir_raises_oserror_on_update(tmp_path):
    if os.geteuid() == 0:
        # root ignores directory permissions; simulate with a path whose parent is a file
        (tmp_path / "file").write_text("x")
        sf = StateFile(tmp_path / "file" / "s.json")
    else:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        sf = StateFile(ro / "s.json")
    try:
        sf.update(lambda cur: {"a": 1})
    except OSError:
        pass
    else:
        raise AssertionError("expected OSError")


def test_reading_an_absent_file_takes_no_lock_unless_temps_are_left(tmp_path):
    sf = StateFile(tmp_path / "s.json")
    assert sf.read() is None
    assert list(tmp_path.iterdir()) == []  # no lock file: nothing to sweep or set aside
    (tmp_path / ".s.json.1234.tmp").write_bytes(b"{")  # a killed writer's debris
    (tmp_path / ".s.json.keep").write_bytes(b"x")  # not a temp file: left alone
    assert sf.read() is None
    assert sorted(p.name for p in tmp_path.iterdir()) == [".s.json.keep", "s.json.lock"]
    sf.update(lambda cur: {"n": 1})
    assert StateFile(tmp_path / "s.json").read() == {"n": 1}


def test_reading_a_valid_file_takes_no_lock_and_a_corrupt_one_is_still_set_aside(tmp_path):
    path = tmp_path / "s.json"
    StateFile(path).update(lambda cur: {"n": 2})
    (tmp_path / "s.json.lock").unlink()
    sf = StateFile(path)
    assert sf.read() == {"n": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]  # no lock file made
    assert sf.warnings == []
    path.write_text('{"n": [')  # corrupt now: the locked read sets it aside and says so
    assert sf.read() is None
    assert sorted(p.name for p in tmp_path.iterdir())[0].startswith("s.json.corrupt-")
    assert "s.json.lock" in {p.name for p in tmp_path.iterdir()}
    assert len(sf.warnings) == 1 and "corrupt" in sf.warnings[0]


def test_a_valid_file_with_a_killed_writers_temp_beside_it_is_read_under_the_lock_and_swept(tmp_path):
    path = tmp_path / "s.json"
    StateFile(path).update(lambda cur: {"n": 3})
    (tmp_path / ".s.json.99.tmp").write_bytes(b"{")
    sf = StateFile(path)
    assert sf.read() == {"n": 3}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json", "s.json.lock"]
