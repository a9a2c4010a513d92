"""The task lead bench's selection (``bench/task_lead.py``): the stacked evaluation of many tasks
(:class:`Pool`) ranks exactly as each task's own ranking does, ties by path included, and the
objective per repository weighs every repository alike."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
task_lead = pytest.importorskip("task_lead")


def _record(rid: str, repo: str, gold: list[str], feats: dict[str, dict[str, float]], cats: dict[str, str]) -> dict:
    return {"id": rid, "repo": repo, "gold": gold, "features": feats, "category": cats, "named": [], "baselines": {}}


RECORDS = [
    # the gold file ties with another on `stem`: the path before it wins the tie
    _record("t1", "r/a", ["src/b.py"], {"stem": {"src/a.py": 1.0, "src/b.py": 1.0}, "bm25": {"src/b.py": 0.5}},
            {"src/a.py": "source", "src/b.py": "source"}),
    # a test scores highest until it is demoted
    _record("t2", "r/a", ["lib/x.js"], {"symbol": {"test/x.test.js": 1.0, "lib/x.js": 0.6}, "path": {"lib/y.js": 0.2}},
            {"test/x.test.js": "test", "lib/x.js": "source", "lib/y.js": "source"}),
    # the gold file is in no feature: a miss
    _record("t3", "r/b", ["gone.py"], {"words": {"a.py": 1.0}}, {"a.py": "source"}),
    # no scored file at all
    _record("t4", "r/b", ["z.py"], {}, {}),
    # eleven files above the gold one: past the first ten
    _record("t5", "r/c", ["k.py"], {"bm25": {**{f"f{i:02}.py": 1.0 for i in range(11)}, "k.py": 0.5}},
            {**{f"f{i:02}.py": "source" for i in range(11)}, "k.py": "source"}),
]  # fmt: skip


def test_pool_ranks_as_each_task_does():
    ts = [task_lead.Task(r) for r in RECORDS]
    pool = task_lead.Pool(ts)
    grid = (0.0, 0.5, 1.0)
    names = ("stem", "bm25", "symbol", "path", "words")
    seen = set()
    for values in itertools.product(grid, repeat=len(names)):
        for test in (0.05, 1.0):
            w = task_lead.Weights(**dict(zip(names, values)), test=test)
            own = [task_lead.first_hit(t.ranking(w), t.gold) or 0 for t in ts]
            assert pool.ranks(w).tolist() == own
            seen.add(tuple(own))
    assert (2, 2, 0, 0, 0) in seen  # the tie (t1) and the demoted test (t2) both seen
    # t1: the tie on `stem` goes to `src/a.py`; t2: `lib/y.js` (path 0.2 × 5) ties with the
    # undemoted test (1.0) and comes first by path, the gold file third
    w = task_lead.Weights(stem=1.0, bm25=0.0, symbol=1.0, test=1.0)
    assert pool.ranks(w).tolist() == [2, 3, 0, 0, 0]


def test_objective_per_task_and_per_repository():
    ts = [task_lead.Task(r) for r in RECORDS]
    pool = task_lead.Pool(ts)
    w = task_lead.Weights(stem=1.0, bm25=1.0, symbol=1.0, path=0.0, test=0.05)
    assert pool.ranks(w).tolist() == [1, 1, 0, 0, 0]
    # per task: two hits at rank 1 of five tasks, each 1 + 0.1 × 1
    assert task_lead.pool_objective(pool, w) == pytest.approx(2 * 1.1 / 5)
    assert task_lead.pool_objective(pool, w) == pytest.approx(task_lead.objective(ts, w))
    # per repository: r/a 1.1, r/b 0, r/c 0
    groups = np.array([0, 0, 1, 1, 2])
    assert task_lead.pool_objective(pool, w, groups) == pytest.approx(1.1 / 3)


def test_source_scale_sets_each_feature_by_its_best_source():
    # bm25's best file is a test (1.0); its best source scores 0.5, so with the source scale
    # the source is 1.0 and the test 2.0; the path feature is not scaled
    rec = _record(
        "t6", "r/d", ["src/s.py"],
        {"bm25": {"tests/test_s.py": 1.0, "src/s.py": 0.5, "src/o.py": 0.25}, "path": {"src/o.py": 0.4}},
        {"tests/test_s.py": "test", "src/s.py": "source", "src/o.py": "source"},
    )  # fmt: skip
    j, p = task_lead.FEATURES.index("bm25"), task_lead.FEATURES.index("path")
    plain, scaled = task_lead.Task(rec), task_lead.Task(rec, source_scale=True)
    by_file = {f: i for i, f in enumerate(scaled.files)}
    assert [scaled.m[by_file[f], j] for f in ("tests/test_s.py", "src/s.py", "src/o.py")] == [2.0, 1.0, 0.5]
    assert [plain.m[by_file[f], j] for f in ("tests/test_s.py", "src/s.py", "src/o.py")] == [1.0, 0.5, 0.25]
    assert scaled.m[by_file["src/o.py"], p] == plain.m[by_file["src/o.py"], p] == 0.4
    # the same weights rank alike: the scale moves bm25 against the unscaled path feature
    w = task_lead.Weights(**{**dict.fromkeys(task_lead.FEATURES, 0.0), "bm25": 1.0, "path": 1.0}, test=0.25)
    assert plain.ranking(w) == ["src/o.py", "src/s.py", "tests/test_s.py"]
    assert scaled.ranking(w) == ["src/s.py", "src/o.py", "tests/test_s.py"]


def test_a_kept_record_is_built_again_only_where_it_is_stale(monkeypatch):
    task = {"repo": "r/a", "commit": "c1", "text": "Fix `Foo.bar`"}
    rec = _record("t7", "r/a", ["a.py"], {}, {})
    # a record of before the versions is version 1 of this task: nothing to build
    monkeypatch.setattr(task_lead, "RECORD_VERSIONS", {"index": 1, "listing": 1, "baselines": 1})
    assert task_lead.stale(rec, task) == set()
    assert task_lead.stale(None, task) == {"task"}
    task_lead.stamp(rec, task)
    assert rec["versions"] == {"index": 1, "listing": 1, "baselines": 1}
    assert task_lead.code_changed(rec) == []
    # another text or commit: the whole record
    assert task_lead.stale(rec, {**task, "text": "Fix `Foo.baz`"}) == {"task"}
    assert task_lead.stale(rec, {**task, "commit": "c2"}) == {"task"}
    # a listing feature changed: that part alone, and stamping it leaves the others as they were
    monkeypatch.setattr(task_lead, "RECORD_VERSIONS", {"index": 1, "listing": 2, "baselines": 1})
    assert task_lead.stale(rec, task) == {"listing"}
    rec["code"]["index"] = "built-elsewhere"
    task_lead.stamp(rec, task, ("listing",))
    assert rec["versions"] == {"index": 1, "listing": 2, "baselines": 1}
    assert task_lead.stale(rec, task) == set()
    # code other than this tree's at the same version is said, not rebuilt
    assert task_lead.code_changed(rec) == ["index"]


def test_a_named_test_escapes_its_demotion_only_when_the_text_wrote_its_folder():
    assert task_lead.named_whole("testing/example/tests/test_basic.py", ["tests/test_basic.py"])
    assert not task_lead.named_whole("testing/example/tests/test_basic.py", ["test_basic.py"])
    assert not task_lead.named_whole("examples/pyproject.toml", ["pyproject.toml"])
    assert task_lead.named_whole("pyproject.toml", ["pyproject.toml"])
    assert task_lead.named_whole("src/Foo.java", ["./SRC/foo.java"])
    # the bare name of a test is named (no path score lost) but demoted like any test
    rec = _record(
        "t8", "r/e", ["src/basic.py"],
        {"path": {"testing/tests/test_basic.py": 1.0}, "bm25": {"src/basic.py": 1.0}},
        {"testing/tests/test_basic.py": "test", "src/basic.py": "source"},
    )  # fmt: skip
    rec["named"] = ["testing/tests/test_basic.py"]
    w = task_lead.Weights(**{**dict.fromkeys(task_lead.FEATURES, 0.0), "path": 2.0, "bm25": 1.0}, test=0.25)
    assert task_lead.Task(rec).ranking(w) == ["testing/tests/test_basic.py", "src/basic.py"]
    assert task_lead.Task(rec, whole=["test_basic.py"]).ranking(w) == ["src/basic.py", "testing/tests/test_basic.py"]
    assert task_lead.Task(rec, whole=["tests/test_basic.py"]).ranking(w) == [
        "testing/tests/test_basic.py",
        "src/basic.py",
    ]


def test_source_scale_of_some_features_only():
    rec = _record(
        "t9", "r/d", ["src/s.py"],
        {"bm25": {"tests/test_s.py": 1.0, "src/s.py": 0.5}, "words": {"tests/test_s.py": 1.0, "src/s.py": 0.5}},
        {"tests/test_s.py": "test", "src/s.py": "source"},
    )  # fmt: skip
    t = task_lead.Task(rec, ("bm25",))
    i = t.files.index("src/s.py")
    assert t.m[i, task_lead.FEATURES.index("bm25")] == 1.0
    assert t.m[i, task_lead.FEATURES.index("words")] == 0.5


def test_the_folds_in_processes_choose_what_one_process_chooses(capsys):
    held = sorted(task_lead.TRAJECTORY_HELDOUT)[0]
    # four repositories (one of them held out), the gold file lifted by another feature in each
    recs = []
    for n, repo in enumerate((held, "r/a", "r/b", "r/c")):
        for k in range(3):
            gold, other = f"src/g{n}{k}.py", f"src/o{n}{k}.py"
            feats = {"stem": {other: 1.0, gold: 0.5}, ("bm25", "words", "path")[(n + k) % 3]: {gold: 1.0}}
            recs.append(_record(f"{repo}-{k}", repo, [gold], feats, {gold: "source", other: "source"}))
    ts = [task_lead.Task(r) for r in recs]
    for selection in ("tasks", "nested"):
        one = task_lead.fold_weights(ts, selection, ("code",), jobs=1)
        said = capsys.readouterr().out
        many = task_lead.fold_weights(ts, selection, ("code",), jobs=3)
        assert capsys.readouterr().out == said
        assert list(one) == ["heldout", held, "r/a", "r/b", "r/c"]
        assert many == one
        assert all(w["code"] == 0.0 for w in one.values())
    assert said.count("# nested selection:") == 5
    assert f"(without ['{held}'])" in said


def test_a_test_lifts_the_source_it_tests_by_name():
    keys = {
        ("src/FooBarTest.java", True): "foobar",
        ("tests/test_foo_bar.py", True): "foobar",
        ("lib/foo-bar.spec.ts", True): "foobar",
        ("x/TestFoo.java", True): "foo",
        ("x/FooTestCase.java", True): "foo",
        ("pkg/foo_test.go", True): "foo",
        ("x/Testimony.java", True): "testimony",
        ("x/Test.java", True): "",
        ("src/FooBar.java", False): "foobar",
        ("src/foo_bar.py", False): "foobar",
    }
    assert {k: task_lead.pair_key(*k) for k in keys} == keys
    # the test scores on bm25 and path; its source on words alone; a third source shares no name
    rec = _record(
        "t10", "r/f", ["src/foo.py"],
        {"bm25": {"tests/test_foo.py": 1.0, "src/other.py": 0.6}, "path": {"tests/test_foo.py": 0.5},
         "words": {"src/foo.py": 0.2, "src/other.py": 0.1}},
        {"tests/test_foo.py": "test", "src/foo.py": "source", "src/other.py": "source"},
    )  # fmt: skip
    assert task_lead.paired_sources(["tests/test_foo.py", "src/foo.py", "src/other.py"], rec["category"]) == {0: [1]}
    plain, paired = task_lead.Task(rec), task_lead.Task(rec, pair=True)
    i = paired.files.index("src/foo.py")
    cols = [task_lead.FEATURES.index(n) for n in ("bm25", "path", "words")]
    assert [paired.m[i, j] for j in cols] == [1.0, 0.5, 0.2]  # each feature at least the test's
    assert [plain.m[i, j] for j in cols] == [0.0, 0.0, 0.2]
    w = task_lead.Weights(**{**dict.fromkeys(task_lead.FEATURES, 0.0), "bm25": 1.0, "words": 1.0}, test=0.25)
    assert plain.ranking(w) == ["src/other.py", "tests/test_foo.py", "src/foo.py"]
    assert paired.ranking(w) == ["src/foo.py", "src/other.py", "tests/test_foo.py"]
    # a name shared by more sources than MAX_PAIRED lifts none of them
    cat = {"t/test_a.py": "test", **{f"p{k}/a.py": "source" for k in range(task_lead.MAX_PAIRED + 1)}}
    assert task_lead.paired_sources(list(cat), cat) == {}
