"""The corpus scorer's definitions (``dsh_sidecar.evaluation``) on hand-made data: pooling,
per-intent figures, the ledger summary and the trajectory figures with their baselines.
No server here; the replays of the corpus itself are in ``test_corpus_scores.py``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from dsh_sidecar.evaluation import (
    CorpusRepo,
    FileIndex,
    IntentRun,
    Trajectory,
    fold_report,
    format_folds,
    format_intent_report,
    intent_figures,
    intent_report,
    ledger_summary,
    listed_files,
    notes_from_log,
    parse_objective,
    pooled,
    rescore_trajectories,
    score,
    trajectory_figures,
    trajectory_summary,
)
from dsh_sidecar.evaluation.folds import objective_value
from dsh_sidecar.evaluation.trajectories import _mentions
from support.replay import line, note  # the fixture scorer test's note/line builders


def test_per_intent_counts_and_pooling():
    a = score(
        [line("a", 1, "Version", ["v.py", "pyproject.toml"]), line("a", 1), line("a", 2, "Doc", ["README.md"])],
        [[note("Version", "v.py")], [note("Config", "x.toml")], []],
    )
    b = score(
        [line("b", 1, "Doc", ["README.md"]), line("b", 1, "Doc", ["README.md"]), line("b", 2, "Owner", ["LICENSE"])],
        [[], [note("Doc", "README.md")], [note("Owner", "CODEOWNERS")]],
    )
    assert a.by_intent == {
        "Version": {"notes": 1, "correct": 1, "expected": 2, "found": 1, "episodes": 1},
        "Config": {"notes": 1, "correct": 0, "expected": 0, "found": 0, "episodes": 0},
        "Doc": {"notes": 0, "correct": 0, "expected": 1, "found": 0, "episodes": 1},
    }
    p = pooled([a, b])
    assert (p.calls, p.notes, p.correct, p.expected_targets, p.found_targets) == (6, 4, 2, 5, 2)
    assert p.precision == 0.5 and p.recall == 0.4
    assert p.firsts == [1, 2] and p.first_note == 1.5  # positions pooled, not a mean of means
    assert p.line() == "calls=6 notes=4 precision=0.50 recall=0.40 first-note=1.5"
    assert intent_figures(p) == {
        "Config": {"notes": 1, "precision": 0.0, "expected": 0, "recall": 0.0},
        "Doc": {"notes": 1, "precision": 1.0, "expected": 2, "recall": 0.5},
        "Owner": {"notes": 1, "precision": 0.0, "expected": 1, "recall": 0.0},
        "Version": {"notes": 1, "precision": 1.0, "expected": 2, "recall": 0.5},
    }
    empty = pooled([])
    assert (empty.calls, empty.precision, empty.recall, empty.first_note) == (0, 0.0, 0.0, 0.0)


def test_intent_report_splits_tune_and_heldout():
    a = score([line("a", 1, "Doc", ["README.md"])], [[note("Doc", "README.md")]])
    b = score([line("b", 1, "Doc", ["README.md"])], [[note("Doc", "docs/x.md")]])
    runs = [
        IntentRun(CorpusRepo("o/a", "0" * 40, "a", "python", "tune", Path("a")), a, [], {"suggest": 1}),
        IntentRun(CorpusRepo("o/b", "1" * 40, "b", "go", "heldout", Path("b")), b, [], {"suggest": 1}),
    ]
    rep = intent_report(runs)
    assert rep["tune"]["precision"] == 1.0 and rep["heldout"]["precision"] == 0.0
    assert rep["pooled"]["precision"] == 0.5 and rep["pooled"]["notes"] == 2
    assert rep["ledger"] == {"suggest": 2}
    table = format_intent_report(rep)
    assert "o/b                          heldout      1     1      0.00   0.00       0.00" in table
    assert "pooled all" in table
    assert table.splitlines()[-1] == f"{'all':12} {2:>24}"


def test_ledger_summary_counts_the_seed_lines():
    lines = [
        "[2026-12-01T09:00:00.000Z] activated (packs generic intents 4 threshold 0.75)",
        "[2026-12-01T09:00:00.001Z] suggest Version 0.88 2 targets a.py,b.toml",
        "[2026-12-01T09:00:00.002Z] suppressed turn-cap Doc",
        "[2026-12-01T09:00:00.003Z] suppressed turn-cap Symbol",
        "[2026-12-01T09:00:00.004Z] abstained no-companions Owner 0.86",
        "abstained foreign-workspace",
        "followed Version a.py",
    ]
    assert ledger_summary(lines) == {
        "abstained foreign-workspace": 1,
        "abstained no-companions": 1,
        "abstained no-companions Owner": 1,
        "suggest": 1,
        "suggest Version": 1,
        "suppressed turn-cap": 2,
        "suppressed turn-cap Doc": 1,
        "suppressed turn-cap Symbol": 1,
    }


def call(i, cls, name, inp, text="", opens=(), dirs=()):
    """A trajectory call line; ``text`` its result, ``opens``/``dirs`` as the converters write them."""
    return {
        "i": i,
        "class": cls,
        "params": {"sessionId": "t", "turn": 1, "tool": {"name": name, "input": inp}, "result": {"text": text}},
        "opens": list(opens),
        "dirs": list(dirs),
    }


def test_trajectory_figures_and_baselines():
    calls = [
        call(0, "search", "bash", {"command": "grep -rn foo /testbed/pkg"}),
        call(1, "read", "read", {"file_path": "pkg/other.py"}),
        call(2, "search", "bash", {"command": "find . -name '*.py'"}),
        call(3, "edit", "edit", {"file_path": "pkg/core.py", "command": "sed -i s/a/b/ pkg/core.py"}),
        call(4, "run", "bash", {"command": "cat /testbed/pkg/late.py"}),
    ]
    t = Trajectory({"id": "t", "repo": "o/n", "gold": ["pkg/core.py"], "firstEdit": 3, "ownSearchHit": 0}, calls)
    notes = [
        [note("Symbol", "pkg/other.py")],  # useful: read at call 1
        [],
        [note("Usage", "pkg/nope.py", "pkg/core.py")],  # names gold before the first edit
        [note("Doc", "pkg/late.py")],  # at the edit: not before it; "run" class reads do not count
        [],
    ]
    files = ["pkg/core.py", "pkg/other.py", "pkg/late.py", "README.md"]
    f = trajectory_figures(t, notes, files)
    rng = random.Random(int("e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8", 16))  # sha256("t")
    picks = [rng.choice(sorted(files)) for _ in range(2)]  # two search calls before the first edit
    assert {k: f[k] for k in ("calls", "search", "notes", "useful", "named", "named_used", "gold_hit", "own_hit")} == {
        "calls": 5,
        "search": 2,
        "notes": 3,
        "useful": 2,
        "named": 4,  # the Usage note's pkg/nope.py is padding: the note is useful, that file is not
        "named_used": 2,
        "gold_hit": True,
        "own_hit": True,
    }
    assert f["random_notes"] == 2
    assert f["random_hit"] == ("pkg/core.py" in picks)
    assert trajectory_figures(t, notes, files) == f  # seeded: the same draw every time
    s = trajectory_summary([f, {**f, "gold_hit": False, "own_hit": False, "useful": 0}])
    assert s["traces"] == 2 and s["notes"] == 6 and s["search_calls"] == 4
    assert s["useful_precision"] == round(2 / 6, 4)
    assert s["target_precision"] == round(4 / 8, 4)
    assert s["gold_hit_before_first_edit"] == 0.5 and s["own_search_hit_before_first_edit"] == 0.5
    assert s["notes_per_100_search"] == 150.0


def test_trajectory_without_edit_counts_every_call():
    calls = [call(0, "search", "bash", {"command": "ls"}), call(1, "search", "bash", {"command": "ls src"})]
    t = Trajectory({"id": "u", "repo": "o/n", "gold": ["src/a.py"], "firstEdit": None, "ownSearchHit": None}, calls)
    f = trajectory_figures(t, [[], [note("Symbol", "src/a.py")]], ["src/a.py"])
    assert f["gold_hit"] is True and f["own_hit"] is False
    assert f["random_notes"] == 2 and f["random_hit"] is True  # one file: the draw is the gold file


def test_a_path_counts_only_as_a_whole_path():
    assert _mentions(json.dumps({"command": "git checkout a/b.py\npython3 -m pytest"}), "a/b.py")
    assert _mentions(json.dumps({"command": "cat /testbed/a/b.py | head"}), "a/b.py")
    assert _mentions(json.dumps({"command": "echo x >a/b.py"}), "a/b.py")
    assert not _mentions(json.dumps({"command": "cat a/b.pyc"}), "a/b.py")
    assert not _mentions(json.dumps({"command": "cat xa/b.py"}), "a/b.py")


# ---------------------------------------------------------------------------- help, not agreement

FILES = [f"pkg/m{k}.py" for k in range(12)] + ["setup.py", "pkg/core.py", "docs/index.md"]


def test_listed_files_resolves_the_ways_results_name_a_file():
    index = FileIndex(FILES)
    text = "\n".join(
        [
            "./pkg/m0.py:3:    def x",  # ./ prefix, grep -n
            "/testbed/pkg/m1.py",  # a container root
            "/mnt/w/repos/o__n/pkg/m2.py:9: y",  # the longest workspace path ending an absolute path
            "--- a/pkg/m3.py",  # a diff header
            "m4.py",  # a bare name, relative to dirs
            "pkg/m0.py again",  # each file once
            "pkg/m5.pyc pkg/m6.py.bak xpkg/m7.py",  # not as part of a longer name
            "/usr/lib/python3/setup.py",  # a root-level name under a foreign absolute path: no
            "sympy.core.add README",  # no path
        ]
    )
    assert listed_files(text, index, ["pkg"]) == ["pkg/m0.py", "pkg/m1.py", "pkg/m2.py", "pkg/m3.py", "pkg/m4.py"]
    assert listed_files("m4.py", index) == []  # no folder given: a bare name is no root file
    assert listed_files("setup.py:1:import x", index) == ["setup.py"]
    # an ``ls -R`` header (or a folder tree line ``pkg/:``) sets the folder of the names below it
    assert listed_files("./pkg:\nm8.py  m9.py\n\n./docs:\nindex.md", index) == [
        "pkg/m8.py",
        "pkg/m9.py",
        "docs/index.md",
    ]
    assert listed_files("/testbed/pkg/:\nm8.py", index) == ["pkg/m8.py"]
    assert listed_files("nowhere/:\nm8.py", index) == []


def listing(n):
    return "\n".join(f"./pkg/m{k}.py" for k in range(n))


def test_echo_is_a_note_repeating_a_small_listing():
    calls = [
        call(0, "search", "bash", {"command": "find pkg -name 'm*'"}, listing(5)),  # exactly 5: a note can echo
        call(1, "search", "bash", {"command": "find pkg -name 'm*'"}, listing(6)),  # 6: ranked, no echo
        call(2, "read", "read", {"file_path": "/testbed/pkg/core.py"}, "def f(): pass", opens=["pkg/core.py"]),
        call(3, "search", "grep", {"pattern": "zzz"}, "No matches"),
    ]
    t = Trajectory({"id": "e", "repo": "o/n", "gold": ["pkg/core.py"], "firstEdit": None, "ownSearchHit": None}, calls)
    notes = [
        [
            note("Path", "pkg/m0.py", "pkg/m4.py"),
            note("Path", "pkg/m0.py", "setup.py"),
        ],  # echo; not (setup.py unlisted)
        [note("Path", "pkg/m0.py")],  # 6 files listed: not an echo
        [note("Symbol", "pkg/core.py")],  # the file the read call just showed: echo
        [note("Symbol", "pkg/m0.py")],  # nothing listed: no echo
    ]
    f = trajectory_figures(t, notes, FILES)
    assert (f["notes"], f["echo"], f["echo_first"]) == (5, 2, 3)  # the padded note repeats pkg/m0.py first
    assert (trajectory_summary([f])["echo_share"], trajectory_summary([f])["echo_first_share"]) == (0.4, 0.6)
    assert [(n["i"], n["echo"], n["echo_first"]) for n in f["note_log"]] == [
        (0, True, True),
        (0, False, True),
        (1, False, False),
        (2, True, True),
        (3, False, False),
    ]


def test_lead_names_a_gold_file_no_result_had_shown():
    calls = [
        call(0, "search", "grep", {"pattern": "f"}, "pkg/m0.py:1:f"),
        call(1, "search", "grep", {"pattern": "g"}, "/testbed/pkg/core.py:4:g"),  # shows the gold file
        call(2, "search", "grep", {"pattern": "h"}, ""),
    ]
    row = {"id": "l", "repo": "o/n", "gold": ["pkg/core.py", "setup.py"], "firstEdit": None, "ownSearchHit": None}
    t = Trajectory(row, calls)
    # call 0: a lead (core.py not shown yet); call 1: core.py is in its own output; call 2: setup.py never shown
    notes = [[note("Symbol", "pkg/core.py")], [note("Symbol", "pkg/core.py")], [note("Symbol", "pkg/core.py")]]
    f = trajectory_figures(t, notes, FILES)
    assert (f["lead"], f["echo"]) == (1, 1)
    f2 = trajectory_figures(t, [[], [note("Symbol", "pkg/core.py")], [note("Config", "setup.py")]], FILES)
    assert f2["lead"] == 1
    none = trajectory_figures(t, [[], [note("Symbol", "pkg/core.py")], []], FILES)
    assert none["lead"] == 0
    s = trajectory_summary([f, f2, none])
    assert (s["lead_notes"], s["lead_traces"], s["lead_share"]) == (2, 2, 0.6667)


def test_rank_judges_notes_on_listings_of_ten_files_or_more():
    calls = [
        call(0, "search", "bash", {"command": "find pkg"}, listing(10)),  # exactly 10: broad
        call(1, "search", "bash", {"command": "find pkg"}, listing(9)),  # 9: not broad
        call(2, "other", "bash", {"command": "git status"}),
        call(3, "read", "read", {"file_path": "pkg/m3.py"}, opens=["pkg/m3.py"]),
        call(4, "read", "read", {"file_path": "pkg/m4.py"}, opens=["pkg/m4.py"]),
    ]
    t = Trajectory({"id": "r", "repo": "o/n", "gold": ["pkg/m9.py"], "firstEdit": None, "ownSearchHit": None}, calls)
    hit = trajectory_figures(
        t, [[note("Symbol", "pkg/m3.py", "pkg/m4.py")], [note("Symbol", "pkg/m3.py")], [], [], []], FILES
    )
    assert (hit["broad"], hit["ranked"]) == (1, 1)  # the next file opened after call 0 is pkg/m3.py
    miss = trajectory_figures(t, [[note("Symbol", "pkg/m4.py", "pkg/m3.py")], [], [], [], []], FILES)
    assert (miss["broad"], miss["ranked"]) == (1, 0)  # the first target is judged
    assert trajectory_summary([hit, miss])["rank_share"] == 0.5


def test_gold_hit_before_any_edit_and_before_the_first_repository_edit():
    calls = [
        call(0, "search", "grep", {"pattern": "f"}, "./pkg/m0.py:1:f"),
        call(
            1, "edit", "write", {"file_path": "reproduce.py", "content": "import pkg"}
        ),  # a new script: no repository file
        call(2, "search", "grep", {"pattern": "g"}, "pkg/core.py:2:g"),
        call(3, "edit", "edit", {"file_path": "pkg/core.py"}, opens=["pkg/core.py"]),  # the first repository edit
    ]
    row = {"id": "g", "repo": "o/n", "gold": ["pkg/core.py"], "firstEdit": 3, "ownSearchHit": 2}
    t = Trajectory(row, calls)
    assert (t.any_limit, t.limit) == (1, 3)
    late = trajectory_figures(t, [[], [], [note("Symbol", "pkg/core.py")], []], FILES)
    assert (late["gold_hit"], late["gold_hit_any"], late["own_hit"], late["own_hit_any"]) == (True, False, True, False)
    early = trajectory_figures(t, [[note("Symbol", "pkg/core.py")], [], [], []], FILES)
    assert (early["gold_hit"], early["gold_hit_any"]) == (True, True)
    s = trajectory_summary([late, early])
    assert (s["gold_hit_before_first_edit"], s["gold_hit_before_any_edit"], s["own_hit_before_any_edit"]) == (
        1.0,
        0.5,
        0.0,
    )


def test_searches_saved_count_the_search_calls_between_the_note_and_the_agents_own_open():
    calls = [call(0, "search", "grep", {"pattern": "a"})]
    calls += [call(i, "search" if i != 3 else "run", "grep", {"pattern": "b"}) for i in range(1, 5)]
    calls.append(call(5, "read", "read", {"file_path": "pkg/core.py"}, opens=["pkg/core.py"]))
    row = {"id": "s", "repo": "o/n", "gold": ["pkg/core.py", "setup.py"], "firstEdit": None, "ownSearchHit": None}
    row["firstOpen"] = {"pkg/core.py": 5}
    t = Trajectory(row, calls)
    notes = [[note("Symbol", "pkg/core.py")], [note("Symbol", "pkg/core.py")], [], [], [], []]
    f = trajectory_figures(t, notes, FILES)
    assert (f["saved"], f["saved_pairs"]) == (3, 1)  # calls 1, 2 and 4 are searches; call 3 runs; setup.py never opened
    after = trajectory_figures(t, [[], [], [], [], [], [note("Symbol", "pkg/core.py")]], FILES)
    assert (after["saved"], after["saved_pairs"]) == (0, 0)  # the note came with the open
    assert trajectory_summary([f, after])["searches_saved"] == 3


def test_random_file_echo_and_lead_are_seeded():
    calls = [call(i, "search", "grep", {"pattern": "x"}, listing(3)) for i in range(4)]
    t = Trajectory({"id": "rnd", "repo": "o/n", "gold": ["pkg/m1.py"], "firstEdit": 2, "ownSearchHit": 0}, calls)
    f = trajectory_figures(t, [[], [], [], []], FILES)
    rng = random.Random(int(__import__("hashlib").sha256(b"rnd").hexdigest(), 16))
    picks = [rng.choice(sorted(FILES)) for _ in range(2)]  # two searches before the first repository edit
    assert f["random_notes"] == 2
    assert f["random_echo"] == sum(p in {"pkg/m0.py", "pkg/m1.py", "pkg/m2.py"} for p in picks)
    assert f["random_lead"] == 0  # the gold file was shown by every result: no pick can lead
    assert f["own_hit_any"] is True and f["gold_hit_any"] is False


def per(ids, **values):
    """Per-trace counts of one trace per id, tagged (repo, family, heldout) — the folds' input."""
    base = {"calls": 1, "search": 1, "notes": 0, "useful": 0, "gold_hit": False, "own_hit": False}
    base.update(random_notes=0, random_useful=0, random_hit=False, lead=0, echo=0)
    return {i: {**base, **tags, **values.get(i, {})} for i, tags in ids.items()}


def test_folds_choose_on_the_training_folds_and_score_the_held_out_one():
    tags = {
        "a1": {"repo": "o/a", "family": "f1", "heldout": False},
        "a2": {"repo": "o/a", "family": "f2", "heldout": False},
        "b1": {"repo": "o/b", "family": "f1", "heldout": True},
    }
    # config "x" leads on o/a's traces, "y" only on o/b's
    runs = {
        "x": per(tags, a1={"lead": 1, "notes": 1}, a2={"lead": 1, "notes": 1}),
        "y": per(tags, b1={"lead": 1, "notes": 1}),
    }
    folds = fold_report(runs, parse_objective("lead_share"))
    repo = {f["held_out"]: (f["chosen"], f["figures"]["lead_share"]) for f in folds["repository"]}
    assert repo == {"o/a": ("y", 0.0), "o/b": ("x", 0.0)}  # each fold scored under the other's choice
    assert folds["pooled repository"]["lead_share"] == 0.0 and folds["pooled repository"]["traces"] == 3
    fam = {f["held_out"]: (f["chosen"], f["figures"]["lead_share"]) for f in folds["family"]}
    # f1 is trained on a2 (x leads); f2 on a1 and b1, where x and y tie (the first listed wins)
    assert fam == {"f1": ("x", 0.5), "f2": ("x", 1.0)}
    assert folds["pooled family"]["lead_traces"] == 2
    assert (folds["fixed"]["chosen"], folds["fixed"]["figures"]["traces"]) == ("x", 1)
    single = fold_report({"default": runs["x"]})
    assert [f["chosen"] for f in single["repository"]] == ["default", "default"]
    table = format_folds(folds)
    assert "repository o/a [y]" in table and "pooled held-out (family)" in table and "fixed held-out set [x]" in table
    assert parse_objective("lead_share, -echo_share") == ("lead_share", "-echo_share")


def test_a_fold_without_training_traces_keeps_the_first_configuration():
    """A run limited to one fold's traces (``--only`` the held-out set) has nothing to choose
    on: the first configuration is scored, never the one that does best on the judged traces."""
    tags = {"b1": {"repo": "o/b", "family": "f1", "heldout": True}}
    runs = {"x": per(tags), "y": per(tags, b1={"lead": 1, "notes": 1})}
    folds = fold_report(runs, parse_objective("lead_share"))
    assert [f["chosen"] for f in folds["repository"] + folds["family"]] == ["x", "x"]
    assert (folds["fixed"]["chosen"], folds["fixed"]["train"], folds["fixed"]["figures"]["lead_share"]) == (
        "x",
        [],
        0.0,
    )


def test_an_objective_may_hold_floors_and_ceilings():
    tags = {
        "a": {"repo": "o/a", "family": "f1", "heldout": False},
        "b": {"repo": "o/b", "family": "f2", "heldout": True},
    }
    # "x" leads in every trace with four notes each; "y" in one trace, with one useful note of one
    runs = {
        "x": per(tags, a={"lead": 1, "notes": 4, "useful": 1}, b={"lead": 1, "notes": 4, "useful": 1}),
        "y": per(tags, a={"lead": 1, "notes": 1, "useful": 1}),
    }
    spec = "lead_share >= 0.5, useful_precision"
    objective = parse_objective(spec)
    assert objective == ("lead_share>=0.5", "useful_precision")
    # trained on trace a both keep the floor and y's precision wins; on b only x leads
    assert objective_value(trajectory_summary([runs["y"]["a"]]), objective) == (1.0, 1.0)
    folds = fold_report(runs, objective)
    assert {f["held_out"]: f["chosen"] for f in folds["repository"]} == {"o/a": "x", "o/b": "y"}
    # over both traces y leads in half of them: a floor of 0.5 is kept, one of 0.6 is not
    assert objective_value(trajectory_summary(list(runs["y"].values())), objective) == (1.0, 1.0)
    strict = parse_objective("lead_share>=0.6,useful_precision")
    assert objective_value(trajectory_summary(list(runs["y"].values())), strict) == (0.0, 1.0)
    assert objective_value(trajectory_summary(list(runs["x"].values())), strict) == (1.0, 0.25)
    assert objective_value({"echo_share": 0.25}, ("echo_share<=0.2",)) == (0.0,)
    for bad in ("lead_share>0.5", "lead_share>=", "lead_share=>0.5"):
        with pytest.raises(ValueError, match="not a floor or ceiling"):
            parse_objective(bad)


def test_a_kept_report_scores_again_on_the_same_notes():
    calls = [
        call(0, "search", "grep", {"pattern": "f"}, "./pkg/m0.py:1:f\n./pkg/m1.py:2:f"),
        call(1, "read", "read", {"file_path": "pkg/m0.py"}, opens=["pkg/m0.py"]),
        call(2, "search", "grep", {"pattern": "g"}, ""),
    ]
    row = {"id": "k", "repo": "o/n", "gold": ["pkg/core.py"], "firstEdit": None, "ownSearchHit": None}
    t = Trajectory(row, calls)
    notes = [[note("Symbol", "pkg/m0.py", "setup.py"), note("Usage", "pkg/m1.py")], [], [note("Symbol", "pkg/core.py")]]
    f = trajectory_figures(t, notes, FILES)
    rebuilt = notes_from_log(t, f["note_log"])
    assert [[(n["source"]["intent"], n["source"]["targets"]) for n in ns] for ns in rebuilt] == [
        [("Symbol", ["pkg/m0.py", "setup.py"]), ("Usage", ["pkg/m1.py"])],
        [],
        [("Symbol", ["pkg/core.py"])],
    ]
    per = rescore_trajectories([t], {"k": f}, lambda _t: FILES)
    assert per["k"] == {"repo": "o/n", "family": "mini-swe-agent", "language": "python", "heldout": False, **f}
    assert (f["echo"], f["echo_first"], f["lead"]) == (1, 2, 1)
    with pytest.raises(ValueError, match="a note at call 7 of 3"):
        notes_from_log(t, [{"i": 7, "intent": "Symbol", "targets": []}])
