"""Where gold-hit is lost (``bench/suggester_goldhit.py``): each gold file's furthest stage at a
call, its status (a lead, shown again, shown by the call itself), a trace's furthest stage over
its calls, and the summary table."""

from __future__ import annotations

import pytest
from dsh_sidecar.evaluation import read_trajectories

from bench.suggester_goldhit import TRAJ, Call, main, stage_of, status_of, summarise, trace_loss

G = "pkg/core.py"


def test_each_stage_of_a_call():
    assert stage_of(Call(0, named=[G]), G) == "named"
    chosen = ["a.py", "b.py", "c.py", "d.py", "e.py", G]
    kept = Call(0, trigger="search", decision="Suppressed", reason="low-confidence", targets=chosen, fresh=chosen)
    assert stage_of(Call(**{**kept.__dict__, "chosen": [G, "a.py"]}), G) == "after ranking: low-confidence"
    assert stage_of(Call(**{**kept.__dict__, "chosen": chosen}), G) == "cut"
    assert stage_of(Call(**{**kept.__dict__, "chosen": chosen}), G, max_targets=6) == "after ranking: low-confidence"
    assert stage_of(Call(0, trigger="search", targets=[G], fresh=[G], chosen="answered"), G) == "ranking: answered"
    assert stage_of(Call(0, trigger="search", targets=[G], fresh=["a.py"], chosen=["a.py"]), G) == "filters"
    assert stage_of(Call(0, trigger="search", targets=[G]), G) == "filters"  # filtered before the ranking
    assert stage_of(Call(0, trigger="search", targets=["a.py"], fresh=["a.py"], chosen=["a.py"]), G) == "not a target"
    assert (
        stage_of(Call(0, trigger="search", decision="Suppressed", reason="not-ready"), G) == "before targets: not-ready"
    )
    assert stage_of(Call(0, trigger="script"), G) == "before targets: Silent"
    assert stage_of(Call(0), G) == "no trigger"


def test_status_a_lead_unless_a_result_showed_it():
    assert status_of(Call(0), G) == "lead"
    assert status_of(Call(0, seen=[G]), G) == "again"
    assert status_of(Call(0, shown=[G], seen=[G]), G) == "shown"


def test_a_trace_counts_under_its_furthest_stage_a_lead_first():
    calls = [
        Call(0, trigger="search", targets=["x.py"], support={G: 0.5}),  # not a target, a lead, findable
        Call(1, shown=[G]),  # the agent's own listing showed it
        Call(2, trigger="search", targets=[G], fresh=[G], chosen="echo", shown=[G], seen=[G]),
    ]
    assert trace_loss(calls, [G]) == ("ranking: echo", "shown", True)
    same_stage = [
        Call(0, trigger="search", targets=["x.py"], seen=[G]),
        Call(1, trigger="search", targets=["x.py"]),
    ]
    assert trace_loss(same_stage, [G]) == ("not a target", "lead", False)
    hit = [Call(0, support={G: 3.0}), Call(1, named=[G])]
    assert trace_loss(hit, [G, "other.py"]) == ("named", "lead", False)
    assert trace_loss([], [G]) == ("no call", "lead", False)


def test_findable_only_where_no_result_showed_it():
    shown_only = [Call(0, trigger="search", targets=["x.py"], shown=[G], support={G: 3.0})]
    assert trace_loss(shown_only, [G]) == ("not a target", "shown", False)


def test_summary_table():
    traces = [
        {"family": "a", "gold": [G], "calls": [{"index": 0, "named": [G]}]},
        {
            "family": "a",
            "gold": [G],
            "calls": [{"index": 0, "trigger": "search", "targets": ["x.py"], "fresh": ["x.py"], "chosen": ["x.py"]}],
        },
        {
            "family": "b",
            "gold": [G],
            "calls": [
                {
                    "index": 0,
                    "trigger": "search",
                    "targets": ["x.py", G],
                    "fresh": ["x.py", G],
                    "chosen": "unranked",
                    "support": {G: 1.0},
                }
            ],
        },
    ]
    assert summarise(traces).splitlines() == [
        "traces 3",
        "| furthest stage | gold status | traces | findable |",
        "| --- | --- | ---: | ---: |",
        "| named | lead | 1 | 0 |",
        "| ranking: unranked | lead | 1 | 1 |",
        "| not a target | lead | 1 | 0 |",
        "a better order of the targets alone could add at most 1 of 3 traces (cut, unranked)",
        "",
        "| family | hit | lost |",
        "| --- | ---: | ---: |",
        "| a | 1 | 1 |",
        "| b | 0 | 1 |",
    ]


def test_a_missing_checkout_or_a_held_out_trace_is_not_replayed(tmp_path, capsys):
    assert main(["--cache", str(tmp_path), "--only", "sympy__sympy-13031,pylint-dev__pylint-4551"]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        "pylint-dev__pylint-4551: held out, not replayed",
        f"sympy__sympy-13031: not replayed (no checkout {tmp_path}/sympy__sympy@{_commit('sympy__sympy-13031')})",
    ]
    assert "traces 0" in out.splitlines()


def _commit(trace_id: str) -> str:
    return next(t.row["commit"] for t in read_trajectories(TRAJ) if t.id == trace_id)


def test_a_sample_under_one_is_refused(tmp_path, capsys):
    for n in ("0", "-1"):  # -1 would have sliced every trace but one
        with pytest.raises(SystemExit) as exc:
            main(["--cache", str(tmp_path), "--sample", n])
        assert exc.value.code == 2
        assert "--sample takes a number of traces, at least 1" in capsys.readouterr().err
