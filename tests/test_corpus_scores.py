"""Today's suggester on the evaluation corpus, pinned exactly: every repository of
``bench/corpus/intents/`` materialized into stub files (paths + symbols + facts) and replayed
through a spawned ``dsh-search serve`` over stdio, then a subset of the recorded trajectories of
``bench/corpus/trajectories/`` on their materialized workspaces. Any change of suggester
behaviour shows up here as a number that moved: update the figures (and ``docs/corpus.md``)
in the same change, and say why.

The figures on real checkouts (``bench/suggester.py --corpus --cache DIR``) are in
``docs/corpus.md``; these are the materialized ones, which differ a little (stub files carry
definitions and structure, not text).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dsh_sidecar.replay import intent_report, read_manifest, read_trajectories, run_intents, run_trajectories

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "corpus"
TRAJECTORIES = Path(os.environ.get("DSH_CORPUS_TRAJECTORIES", CORPUS / "trajectories"))
sys.path.insert(0, str(CORPUS))

from materialize import materialize, materialize_trajectory  # noqa: E402

#: One trajectory per repository (the first of each in ``index.jsonl``), to keep this module fast.
TRAJECTORY_IDS = (
    "sympy__sympy-13798",
    "sphinx-doc__sphinx-9230",
    "astropy__astropy-13453",
    "pydata__xarray-4356",
    "pytest-dev__pytest-5631",
    "pylint-dev__pylint-7080",
)

# fmt: off
INTENTS = {
    'repos': {
        'attrs': {'repo': 'python-attrs/attrs', 'split': 'tune', 'calls': 47, 'notes': 6, 'correct': 5, 'precision': 0.8333, 'recall': 0.1875, 'first_note': 1.0, 'expected_targets': 32, 'found_targets': 6},
        'httpx': {'repo': 'encode/httpx', 'split': 'tune', 'calls': 43, 'notes': 5, 'correct': 4, 'precision': 0.8, 'recall': 0.2069, 'first_note': 1.0, 'expected_targets': 29, 'found_targets': 6},
        'six': {'repo': 'benjaminp/six', 'split': 'heldout', 'calls': 43, 'notes': 5, 'correct': 3, 'precision': 0.6, 'recall': 0.1154, 'first_note': 1.0, 'expected_targets': 26, 'found_targets': 3},
        'ky': {'repo': 'sindresorhus/ky', 'split': 'tune', 'calls': 44, 'notes': 3, 'correct': 3, 'precision': 1.0, 'recall': 0.1111, 'first_note': 1.3333, 'expected_targets': 27, 'found_targets': 3},
        'signals': {'repo': 'preactjs/signals', 'split': 'tune', 'calls': 44, 'notes': 5, 'correct': 4, 'precision': 0.8, 'recall': 0.1351, 'first_note': 1.0, 'expected_targets': 37, 'found_targets': 5},
        'chi': {'repo': 'go-chi/chi', 'split': 'tune', 'calls': 43, 'notes': 4, 'correct': 2, 'precision': 0.5, 'recall': 0.0909, 'first_note': 1.0, 'expected_targets': 22, 'found_targets': 2},
        'cobra': {'repo': 'spf13/cobra', 'split': 'heldout', 'calls': 42, 'notes': 4, 'correct': 3, 'precision': 0.75, 'recall': 0.12, 'first_note': 1.0, 'expected_targets': 25, 'found_targets': 3},
        'ripgrep': {'repo': 'BurntSushi/ripgrep', 'split': 'tune', 'calls': 41, 'notes': 4, 'correct': 3, 'precision': 0.75, 'recall': 0.1034, 'first_note': 1.0, 'expected_targets': 29, 'found_targets': 3},
        'anyhow': {'repo': 'dtolnay/anyhow', 'split': 'tune', 'calls': 43, 'notes': 4, 'correct': 4, 'precision': 1.0, 'recall': 0.1379, 'first_note': 1.0, 'expected_targets': 29, 'found_targets': 4},
        'sinatra': {'repo': 'sinatra/sinatra', 'split': 'tune', 'calls': 43, 'notes': 3, 'correct': 3, 'precision': 1.0, 'recall': 0.125, 'first_note': 1.0, 'expected_targets': 32, 'found_targets': 4},
    },
    'tune': {'calls': 348, 'notes': 34, 'correct': 28, 'precision': 0.8235, 'recall': 0.1392, 'first_note': 1.0357, 'expected_targets': 237, 'found_targets': 33},
    'heldout': {'calls': 85, 'notes': 9, 'correct': 6, 'precision': 0.6667, 'recall': 0.1176, 'first_note': 1.0, 'expected_targets': 51, 'found_targets': 6},
    'pooled': {'calls': 433, 'notes': 43, 'correct': 34, 'precision': 0.7907, 'recall': 0.1354, 'first_note': 1.0294, 'expected_targets': 288, 'found_targets': 39},
    'intents': {
        'Config': {'notes': 6, 'precision': 1.0, 'expected': 36, 'recall': 0.2222},
        'Dependency': {'notes': 4, 'precision': 0.5, 'expected': 23, 'recall': 0.1739},
        'Doc': {'notes': 7, 'precision': 0.7143, 'expected': 33, 'recall': 0.1515},
        'Ledger': {'notes': 2, 'precision': 1.0, 'expected': 18, 'recall': 0.1111},
        'Owner': {'notes': 2, 'precision': 0.0, 'expected': 32, 'recall': 0.0},
        'Path': {'notes': 0, 'precision': 0.0, 'expected': 14, 'recall': 0.0},
        'Symbol': {'notes': 15, 'precision': 1.0, 'expected': 46, 'recall': 0.3478},
        'Test': {'notes': 1, 'precision': 0.0, 'expected': 23, 'recall': 0.0},
        'Usage': {'notes': 1, 'precision': 0.0, 'expected': 40, 'recall': 0.0},
        'Version': {'notes': 5, 'precision': 0.8, 'expected': 23, 'recall': 0.1739},
    },
    'ledger': {'abstained no-companions': 30, 'abstained no-companions Dependency': 2, 'abstained no-companions Doc': 2, 'abstained no-companions Ledger': 8, 'abstained no-companions Symbol': 4, 'abstained no-companions Test': 1, 'abstained no-companions Usage': 7, 'abstained no-companions Version': 6, 'suggest': 43, 'suggest Config': 6, 'suggest Dependency': 4, 'suggest Doc': 7, 'suggest Ledger': 2, 'suggest Owner': 2, 'suggest Symbol': 15, 'suggest Test': 1, 'suggest Usage': 1, 'suggest Version': 5, 'suppressed recent': 8, 'suppressed recent Dependency': 1, 'suppressed recent Doc': 3, 'suppressed recent Path': 1, 'suppressed recent Symbol': 1, 'suppressed recent Test': 2, 'suppressed turn-cap': 113, 'suppressed turn-cap Config': 28, 'suppressed turn-cap Dependency': 9, 'suppressed turn-cap Doc': 16, 'suppressed turn-cap Ledger': 5, 'suppressed turn-cap Owner': 20, 'suppressed turn-cap Path': 7, 'suppressed turn-cap Symbol': 11, 'suppressed turn-cap Test': 7, 'suppressed turn-cap Usage': 6, 'suppressed turn-cap Version': 4},
}
TRAJECTORY_FIGURES = {
    'repos': {
        'astropy/astropy': {'traces': 1, 'calls': 30, 'search_calls': 7, 'notes': 0, 'useful_notes': 0, 'useful_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 0.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 71.43},
        'pydata/xarray': {'traces': 1, 'calls': 74, 'search_calls': 1, 'notes': 0, 'useful_notes': 0, 'useful_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 0.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 100.0},
        'pylint-dev/pylint': {'traces': 1, 'calls': 63, 'search_calls': 14, 'notes': 1, 'useful_notes': 1, 'useful_precision': 1.0, 'gold_hit_before_first_edit': 1.0, 'notes_per_100_search': 7.14, 'own_search_hit_before_first_edit': 0.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 64.29},
        'pytest-dev/pytest': {'traces': 1, 'calls': 29, 'search_calls': 2, 'notes': 0, 'useful_notes': 0, 'useful_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 0.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 50.0},
        'sphinx-doc/sphinx': {'traces': 1, 'calls': 41, 'search_calls': 12, 'notes': 1, 'useful_notes': 0, 'useful_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 8.33, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 41.67},
        'sympy/sympy': {'traces': 1, 'calls': 40, 'search_calls': 9, 'notes': 1, 'useful_notes': 1, 'useful_precision': 1.0, 'gold_hit_before_first_edit': 1.0, 'notes_per_100_search': 11.11, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 44.44},
    },
    'pooled': {'traces': 6, 'calls': 277, 'search_calls': 45, 'notes': 3, 'useful_notes': 2, 'useful_precision': 0.6667, 'gold_hit_before_first_edit': 0.3333, 'notes_per_100_search': 6.67, 'own_search_hit_before_first_edit': 0.8333, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 55.56},
    'ledger': {'abstained no-companions': 10, 'abstained no-companions Usage': 10, 'suggest': 3, 'suggest Doc': 1, 'suggest Symbol': 2, 'suppressed recent': 4, 'suppressed recent Symbol': 3, 'suppressed recent Usage': 1, 'suppressed turn-cap': 10, 'suppressed turn-cap Config': 1, 'suppressed turn-cap Doc': 6, 'suppressed turn-cap Symbol': 2, 'suppressed turn-cap Usage': 1},
}
# fmt: on


def test_corpus_data_is_as_documented():
    repos = read_manifest(CORPUS)
    assert len(repos) >= 8 and len({r.ecosystem for r in repos}) >= 4
    assert {r.split for r in repos} == {"tune", "heldout"}
    assert len({r.ecosystem for r in repos if r.split == "heldout"}) >= 2
    calls = silent = 0
    intents: dict[str, set[str]] = {}
    for r in repos:
        lines = (r.data / "trace.jsonl").read_text("utf-8").splitlines()
        paths = set((r.data / "paths.txt").read_text("utf-8").split())
        assert len(lines) >= 40, r.dir
        n_silent = sum(1 for ln in lines if ln.endswith('"expect": null}'))
        assert n_silent / len(lines) >= 0.4, r.dir
        calls += len(lines)
        silent += n_silent
        for ln in lines:
            e = json.loads(ln)["expect"]
            if e:
                intents.setdefault(e["intent"], set()).add(r.dir)
                assert set(e["targets"]) <= paths, (r.dir, e)
    assert calls >= 320 and silent / calls >= 0.4
    assert sorted(intents) == sorted(
        ["Version", "Path", "Ledger", "Config", "Dependency", "Test", "Symbol", "Doc", "Usage", "Owner"]
    )
    assert all(len(v) >= 4 for v in intents.values()), {k: len(v) for k, v in intents.items()}


def test_intent_figures_on_materialized_repositories(tmp_path):
    repos = read_manifest(CORPUS)

    def workspace(r):
        dest = tmp_path / r.dir
        materialize(r.data, dest)
        return dest

    rep = intent_report(run_intents(repos, workspace))
    assert rep == INTENTS


@pytest.mark.skipif(
    not (TRAJECTORIES / "index.jsonl").is_file(), reason=f"no trajectory data in {TRAJECTORIES} (not merged yet)"
)
def test_trajectory_figures_on_materialized_workspaces(tmp_path):
    trajs = read_trajectories(TRAJECTORIES, TRAJECTORY_IDS)
    assert sorted(t.id for t in trajs) == sorted(TRAJECTORY_IDS)

    def workspace(t):
        dest = tmp_path / t.id
        materialize_trajectory(TRAJECTORIES, t.row["repo"], t.row["commit"], dest)
        return dest

    rep = run_trajectories(trajs, workspace)
    assert {"repos": rep["repos"], "pooled": rep["pooled"], "ledger": rep["ledger"]} == TRAJECTORY_FIGURES


def test_cli_replay_corpus_prints_the_tables(tmp_path, dsh_home):
    """``dsh-search replay --corpus DIR --cache DIR`` on a one-repository corpus whose checkout
    is a materialized workspace in the cache layout ``<owner>__<name>@<commit>/``."""
    src = next(r for r in read_manifest(CORPUS) if r.dir == "httpx")
    corpus = tmp_path / "corpus"
    (corpus / "intents" / "httpx").mkdir(parents=True)
    (corpus / "intents" / "manifest.yaml").write_text(
        f"repositories:\n  - {{repo: {src.repo}, commit: {src.commit}, dir: httpx, ecosystem: python, split: tune}}\n"
    )
    shutil.copy(src.data / "trace.jsonl", corpus / "intents" / "httpx" / "trace.jsonl")
    cache = tmp_path / "cache"
    materialize(src.data, cache / f"encode__httpx@{src.commit}")
    out = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "replay", "--corpus", str(corpus), "--cache", str(cache)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DSH_HOME": str(dsh_home)},
    )
    assert out.returncode == 0, out.stderr
    rows = out.stdout.splitlines()
    assert rows[0] == "intents (labelled calls on real repositories)"
    f = INTENTS["repos"]["httpx"]  # the same figures as the materialized run above
    assert rows[2] == (
        f"encode/httpx                 tune     {f['calls']:>5} {f['notes']:>5} {f['precision']:>9.2f} "
        f"{f['recall']:>6.2f} {f['first_note']:>10.2f}"
    )
    assert "trajectories" not in out.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "replay", "--corpus", str(corpus), "--cache", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DSH_HOME": str(dsh_home)},
    )
    assert missing.returncode == 2 and "--cache" in missing.stderr
