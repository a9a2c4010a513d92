"""The task lead's ranking a recording server writes (``lead ranked <JSON list>``) read back from
a replay's ledger lines: the first such line, prefix optional; anything else is no ranking."""

from __future__ import annotations

from dsh_sidecar.evaluation.trajectories import task_ranks


def test_the_first_ranking_line_is_read_with_or_without_its_time_prefix():
    logs = [
        "[2026-12-07T20:00:00Z] lead offered 1 targets a.py",
        '[2026-12-07T20:00:00Z] lead ranked ["a.py", "b,c.py"]',
    ]
    assert task_ranks(logs) == ["a.py", "b,c.py"]
    assert task_ranks(['lead ranked ["x.py"]', 'lead ranked ["y.py"]']) == ["x.py"]


def test_no_line_or_a_malformed_one_is_no_ranking():
    assert task_ranks(["lead offered 1 targets a.py"]) is None
    assert task_ranks(["lead ranked [not json"]) is None
    assert task_ranks(['lead ranked {"a": 1}']) is None
    assert task_ranks(['lead ranked ["a.py", 3]']) is None
