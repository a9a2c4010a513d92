"""The listing walk's and the symbol pass's budgets count the CPU time of their own thread: a
busy machine stretches their wall clock, and a wall-clock budget then cut the index short (a
workspace's files missing from the listing, names from the symbol index); a wall-clock backstop
still ends a walk or pass stuck on a file system."""

from __future__ import annotations

import itertools
import time

from dsh_sidecar.workspace import files as files_mod
from dsh_sidecar.workspace import graph as graph_mod
from dsh_sidecar.workspace import symbolpass


def slow_wall_clock(monkeypatch, module, step_s: float) -> None:
    """Every reading of ``module``'s wall clock is ``step_s`` later than the one before."""
    ticks = itertools.count()
    monkeypatch.setattr(module.time, "monotonic", lambda: next(ticks) * step_s)
    monkeypatch.setattr(module.time, "perf_counter", lambda: next(ticks) * step_s)


def test_a_slow_wall_clock_does_not_cut_the_walk(tmp_path, monkeypatch):
    for i in range(30):
        (tmp_path / f"f{i}").mkdir()
        (tmp_path / f"f{i}" / "x.py").write_text("")
    slow_wall_clock(monkeypatch, files_mod, files_mod.WALK_BUDGET_S)  # each folder "takes" the budget
    monkeypatch.setattr(files_mod, "WALK_WALL_S", 1e9)
    assert len(files_mod.walk_files(tmp_path)) == 30
    monkeypatch.setattr(files_mod, "WALK_WALL_S", files_mod.WALK_BUDGET_S * 5)  # the backstop still cuts
    assert len(files_mod.walk_files(tmp_path)) < 30
    monkeypatch.setattr(files_mod.time, "monotonic", time.monotonic)
    monkeypatch.setattr(files_mod, "WALK_BUDGET_S", 0.0)  # no CPU time at all: cut
    assert len(files_mod.walk_files(tmp_path)) < 30


def test_a_slow_wall_clock_does_not_cut_the_symbol_pass(tmp_path, monkeypatch):
    for i in range(200):
        (tmp_path / f"m{i}.py").write_text(f"def name_{i}():\n    pass\n")
    graph = graph_mod.WorkspaceGraph.build_files(tmp_path)
    slow_wall_clock(monkeypatch, graph_mod, 1.0)  # 200 files "take" 400 s of wall clock
    graph.index_symbols()
    assert graph.stats["symbolsTruncated"] is False and graph.definitions("name_199") == ["m199.py"]
    monkeypatch.setattr(symbolpass, "SYMBOL_BUDGET_S", 0.0)  # no CPU time at all: cut
    graph.index_symbols()
    assert graph.stats["symbolsTruncated"] is True
