"""The per-trace view of the tune trajectories (``bench/suggester_traces.py``): its ``G`` mark and
``own`` flag read a result the way the scorer does (``listed_files``), so they agree with the
index's ``ownSearchHit`` whatever the tool wraps a path in."""

from __future__ import annotations

from dsh_sidecar.evaluation import checkout_dir, read_trajectories

from bench.suggester_traces import TRAJ, main
from corpus.materialize import materialize_trajectory

#: AutoCodeRover's first call answers ``<file>xarray/core/concat.py</file>``, the gold file
#: (``ownSearchHit`` 0), with no space or quote around the path.
TRACE = "auto-code-rover/pydata__xarray-3364"


def test_a_path_between_tags_is_the_agents_own_hit(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    t = next(t for t in read_trajectories(TRAJ) if t.id == TRACE)
    materialize_trajectory(TRAJ, t.row["repo"], t.row["commit"], checkout_dir(tmp_path, t.row["repo"], t.row["commit"]))
    assert t.row["ownSearchHit"] == 0 and t.gold == {"xarray/core/concat.py"}
    assert main(["--cache", str(tmp_path), "--only", TRACE, "--verbose"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{TRACE} gold=['xarray/core/concat.py'] firstEdit=3 ownSearchHit=0 own=True ")
    calls = [ln for ln in lines if ln.startswith("    ") and ln.strip()[:1].isdigit()]
    assert [ln.split("'", 1)[0].split() for ln in calls] == [
        ["0", "search", "G", "[2]"],
        ["1", "search", "G", "[1]"],
        ["2", "search", "[1]"],
    ]
