"""Today's suggester on the evaluation corpus, pinned exactly: every repository of
``corpus/intents/`` materialized into stub files (paths + symbols + facts) and replayed
through a spawned ``dsh-search serve`` over stdio, then a subset of the recorded trajectories of
``corpus/trajectories/`` on their materialized workspaces. Any change of suggester
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

import dsh_sidecar.evaluation.trace
import pytest
from dsh_sidecar.evaluation import intent_report, read_manifest, read_trajectories, run_intents, run_trajectories
from support.sidecar import forked_command

from corpus.materialize import materialize, materialize_trajectory

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
TRAJECTORIES = Path(os.environ.get("DSH_CORPUS_TRAJECTORIES", CORPUS / "trajectories"))


@pytest.fixture
def forked_replay(monkeypatch):
    """The replays' sidecars forked (support.forkserver: the same ``serve`` over the same stdio,
    without its imports): these figures are the suggester's, not the process start's, and each
    spawned sidecar costs ~0.7 s of CPU in imports (32 here: 26 repositories, 6 traces).
    ``dsh-search replay`` below spawns."""
    monkeypatch.setattr(dsh_sidecar.evaluation.trace, "server_command", forked_command)


#: One Corpus I trajectory per repository (the first of each in ``index.jsonl``), to keep this module fast.
TRAJECTORY_IDS = (
    "sympy__sympy-13798",
    "sphinx-doc__sphinx-9230",
    "astropy__astropy-13453",
    "pydata__xarray-4356",
    "pytest-dev__pytest-5631",
    "pylint-dev__pylint-7080",
)
#: Corpus II: one trace per agent family and language beyond them — for each (family, language)
#: the trace whose workspace has the fewest files (the first in ``index.jsonl`` on a tie).
#: coder/code-server is a held-out repository and iswe a held-out family.
CORPUS_II_IDS = (
    "rovo-dev/google__gson-2134",
    "rovo-dev/tailwindlabs__tailwindcss-550",
    "rovo-dev/coder__code-server-4923",
    "rovo-dev/keras-team__keras-19190",
    "iswe/google__gson-2134",
    "codex/tailwindlabs__tailwindcss-550",
    "codex/coder__code-server-4923",
    "auto-code-rover/pydata__xarray-3364",
)

# fmt: off
INTENTS = {
    'repos': {
        'attrs': {'repo': 'python-attrs/attrs', 'split': 'tune', 'calls': 47, 'notes': 4, 'correct': 3, 'precision': 0.75, 'recall': 0.0938, 'first_note': 1.0, 'expected_targets': 32, 'found_targets': 3},
        'httpx': {'repo': 'encode/httpx', 'split': 'tune', 'calls': 43, 'notes': 3, 'correct': 2, 'precision': 0.6667, 'recall': 0.069, 'first_note': 1.0, 'expected_targets': 29, 'found_targets': 2},
        'six': {'repo': 'benjaminp/six', 'split': 'heldout', 'calls': 43, 'notes': 3, 'correct': 2, 'precision': 0.6667, 'recall': 0.0769, 'first_note': 1.5, 'expected_targets': 26, 'found_targets': 2},
        'ky': {'repo': 'sindresorhus/ky', 'split': 'tune', 'calls': 44, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 27, 'found_targets': 0},
        'signals': {'repo': 'preactjs/signals', 'split': 'tune', 'calls': 44, 'notes': 4, 'correct': 4, 'precision': 1.0, 'recall': 0.1081, 'first_note': 1.0, 'expected_targets': 37, 'found_targets': 4},
        'chi': {'repo': 'go-chi/chi', 'split': 'tune', 'calls': 43, 'notes': 2, 'correct': 1, 'precision': 0.5, 'recall': 0.0455, 'first_note': 1.0, 'expected_targets': 22, 'found_targets': 1},
        'cobra': {'repo': 'spf13/cobra', 'split': 'heldout', 'calls': 42, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 25, 'found_targets': 0},
        'ripgrep': {'repo': 'BurntSushi/ripgrep', 'split': 'tune', 'calls': 41, 'notes': 3, 'correct': 2, 'precision': 0.6667, 'recall': 0.069, 'first_note': 1.5, 'expected_targets': 29, 'found_targets': 2},
        'anyhow': {'repo': 'dtolnay/anyhow', 'split': 'tune', 'calls': 43, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 0.0345, 'first_note': 1.0, 'expected_targets': 29, 'found_targets': 1},
        'sinatra': {'repo': 'sinatra/sinatra', 'split': 'tune', 'calls': 43, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 0.0312, 'first_note': 1.0, 'expected_targets': 32, 'found_targets': 1},
        'jsoup': {'repo': 'jhy/jsoup', 'split': 'tune', 'calls': 45, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 0.037, 'first_note': 1.0, 'expected_targets': 27, 'found_targets': 1},
        'gson': {'repo': 'google/gson', 'split': 'tune', 'calls': 41, 'notes': 4, 'correct': 3, 'precision': 0.75, 'recall': 0.1071, 'first_note': 1.0, 'expected_targets': 28, 'found_targets': 3},
        'retrofit': {'repo': 'square/retrofit', 'split': 'heldout', 'calls': 46, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 23, 'found_targets': 0},
        'polly': {'repo': 'App-vNext/Polly', 'split': 'tune', 'calls': 42, 'notes': 2, 'correct': 1, 'precision': 0.5, 'recall': 0.0476, 'first_note': 1.0, 'expected_targets': 21, 'found_targets': 1},
        'guzzle': {'repo': 'guzzle/guzzle', 'split': 'heldout', 'calls': 42, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 0.0417, 'first_note': 1.0, 'expected_targets': 24, 'found_targets': 1},
        'fmt': {'repo': 'fmtlib/fmt', 'split': 'tune', 'calls': 42, 'notes': 4, 'correct': 3, 'precision': 0.75, 'recall': 0.1379, 'first_note': 1.0, 'expected_targets': 29, 'found_targets': 4},
        'python-gitlab': {'repo': 'python-gitlab/python-gitlab', 'split': 'tune', 'calls': 44, 'notes': 4, 'correct': 1, 'precision': 0.25, 'recall': 0.037, 'first_note': 1.0, 'expected_targets': 27, 'found_targets': 1},
        'more-itertools': {'repo': 'more-itertools/more-itertools', 'split': 'heldout', 'calls': 43, 'notes': 2, 'correct': 2, 'precision': 1.0, 'recall': 0.0741, 'first_note': 1.0, 'expected_targets': 27, 'found_targets': 2},
        'commander': {'repo': 'tj/commander.js', 'split': 'tune', 'calls': 43, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 0.04, 'first_note': 1.0, 'expected_targets': 25, 'found_targets': 1},
        'react-hook-form': {'repo': 'react-hook-form/react-hook-form', 'split': 'heldout', 'calls': 41, 'notes': 2, 'correct': 1, 'precision': 0.5, 'recall': 0.04, 'first_note': 1.0, 'expected_targets': 25, 'found_targets': 1},
        'serilog': {'repo': 'serilog/serilog', 'split': 'heldout', 'calls': 49, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 24, 'found_targets': 0},
        'spdlog': {'repo': 'gabime/spdlog', 'split': 'heldout', 'calls': 47, 'notes': 2, 'correct': 2, 'precision': 1.0, 'recall': 0.08, 'first_note': 1.0, 'expected_targets': 25, 'found_targets': 2},
        'serde': {'repo': 'serde-rs/serde', 'split': 'heldout', 'calls': 47, 'notes': 2, 'correct': 2, 'precision': 1.0, 'recall': 0.0769, 'first_note': 1.0, 'expected_targets': 26, 'found_targets': 2},
        'moshi': {'repo': 'square/moshi', 'split': 'heldout', 'calls': 47, 'notes': 3, 'correct': 2, 'precision': 0.6667, 'recall': 0.0769, 'first_note': 1.0, 'expected_targets': 26, 'found_targets': 2},
        'express': {'repo': 'expressjs/express', 'split': 'heldout', 'calls': 48, 'notes': 2, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 24, 'found_targets': 0},
        'faraday': {'repo': 'lostisland/faraday', 'split': 'heldout', 'calls': 46, 'notes': 2, 'correct': 1, 'precision': 0.5, 'recall': 0.04, 'first_note': 1.0, 'expected_targets': 25, 'found_targets': 1},
    },
    'tune': {'calls': 605, 'notes': 35, 'correct': 24, 'precision': 0.6857, 'recall': 0.0635, 'first_note': 1.0417, 'expected_targets': 394, 'found_targets': 25},
    'heldout': {'calls': 541, 'notes': 22, 'correct': 13, 'precision': 0.5909, 'recall': 0.0433, 'first_note': 1.0769, 'expected_targets': 300, 'found_targets': 13},
    'pooled': {'calls': 1146, 'notes': 57, 'correct': 37, 'precision': 0.6491, 'recall': 0.0548, 'first_note': 1.0541, 'expected_targets': 694, 'found_targets': 38},
    'intents': {
        'Config': {'notes': 11, 'precision': 0.7273, 'expected': 83, 'recall': 0.0964},
        'Dependency': {'notes': 4, 'precision': 0.75, 'expected': 61, 'recall': 0.0492},
        'Doc': {'notes': 17, 'precision': 0.7647, 'expected': 65, 'recall': 0.2},
        'Ledger': {'notes': 4, 'precision': 1.0, 'expected': 40, 'recall': 0.1},
        'Owner': {'notes': 0, 'precision': 0.0, 'expected': 67, 'recall': 0.0},
        'Path': {'notes': 0, 'precision': 0.0, 'expected': 32, 'recall': 0.0},
        'Symbol': {'notes': 7, 'precision': 0.2857, 'expected': 116, 'recall': 0.0172},
        'Test': {'notes': 5, 'precision': 0.6, 'expected': 88, 'recall': 0.0455},
        'Usage': {'notes': 5, 'precision': 0.0, 'expected': 87, 'recall': 0.0},
        'Version': {'notes': 4, 'precision': 1.0, 'expected': 55, 'recall': 0.0727},
    },
    'ledger': {'abstained missing-file': 4, 'abstained missing-file Ledger': 1, 'abstained missing-file Owner': 2, 'abstained missing-file Usage': 1, 'abstained no-companions': 41, 'abstained no-companions Config': 5, 'abstained no-companions Dependency': 4, 'abstained no-companions Doc': 4, 'abstained no-companions Ledger': 10, 'abstained no-companions Owner': 11, 'abstained no-companions Path': 1, 'abstained no-companions Test': 4, 'abstained no-companions Version': 2, 'suggest': 57, 'suggest Config': 11, 'suggest Dependency': 4, 'suggest Doc': 17, 'suggest Ledger': 4, 'suggest Symbol': 7, 'suggest Test': 5, 'suggest Usage': 5, 'suggest Version': 4, 'suppressed answered': 165, 'suppressed answered Symbol': 85, 'suppressed answered Test': 20, 'suppressed answered Usage': 60, 'suppressed cooldown': 1, 'suppressed cooldown Doc': 1, 'suppressed dedupe': 3, 'suppressed dedupe Doc': 2, 'suppressed dedupe Ledger': 1, 'suppressed echo': 330, 'suppressed echo Config': 85, 'suppressed echo Dependency': 29, 'suppressed echo Doc': 32, 'suppressed echo Ledger': 22, 'suppressed echo Owner': 44, 'suppressed echo Path': 23, 'suppressed echo Symbol': 18, 'suppressed echo Test': 33, 'suppressed echo Usage': 9, 'suppressed echo Version': 35, 'suppressed low-confidence': 12, 'suppressed low-confidence Symbol': 6, 'suppressed low-confidence Test': 4, 'suppressed low-confidence Usage': 2, 'suppressed recent': 8, 'suppressed recent Config': 2, 'suppressed recent Owner': 1, 'suppressed recent Path': 1, 'suppressed recent Symbol': 1, 'suppressed recent Usage': 3, 'suppressed seen': 9, 'suppressed seen Dependency': 8, 'suppressed seen Doc': 1, 'suppressed unranked': 5, 'suppressed unranked Symbol': 1, 'suppressed unranked Test': 2, 'suppressed unranked Usage': 2},
    'echo_aware': {'relabelled': 481, 'narrowed': 31, 'repos': {'attrs': {'repo': 'python-attrs/attrs', 'split': 'tune', 'calls': 47, 'notes': 4, 'correct': 3, 'precision': 0.75, 'recall': 0.3, 'first_note': 1.0, 'expected_targets': 10, 'found_targets': 3}, 'httpx': {'repo': 'encode/httpx', 'split': 'tune', 'calls': 43, 'notes': 3, 'correct': 2, 'precision': 0.6667, 'recall': 0.2857, 'first_note': 1.0, 'expected_targets': 7, 'found_targets': 2}, 'six': {'repo': 'benjaminp/six', 'split': 'heldout', 'calls': 43, 'notes': 3, 'correct': 2, 'precision': 0.6667, 'recall': 0.4, 'first_note': 1.0, 'expected_targets': 5, 'found_targets': 2}, 'ky': {'repo': 'sindresorhus/ky', 'split': 'tune', 'calls': 44, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 5, 'found_targets': 0}, 'signals': {'repo': 'preactjs/signals', 'split': 'tune', 'calls': 44, 'notes': 4, 'correct': 4, 'precision': 1.0, 'recall': 0.3077, 'first_note': 1.0, 'expected_targets': 13, 'found_targets': 4}, 'chi': {'repo': 'go-chi/chi', 'split': 'tune', 'calls': 43, 'notes': 2, 'correct': 1, 'precision': 0.5, 'recall': 0.2, 'first_note': 1.0, 'expected_targets': 5, 'found_targets': 1}, 'cobra': {'repo': 'spf13/cobra', 'split': 'heldout', 'calls': 42, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 1, 'found_targets': 0}, 'ripgrep': {'repo': 'BurntSushi/ripgrep', 'split': 'tune', 'calls': 41, 'notes': 3, 'correct': 2, 'precision': 0.6667, 'recall': 0.25, 'first_note': 1.0, 'expected_targets': 8, 'found_targets': 2}, 'anyhow': {'repo': 'dtolnay/anyhow', 'split': 'tune', 'calls': 43, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 0.1667, 'first_note': 1.0, 'expected_targets': 6, 'found_targets': 1}, 'sinatra': {'repo': 'sinatra/sinatra', 'split': 'tune', 'calls': 43, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 0.25, 'first_note': 1.0, 'expected_targets': 4, 'found_targets': 1}, 'jsoup': {'repo': 'jhy/jsoup', 'split': 'tune', 'calls': 45, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 0.25, 'first_note': 1.0, 'expected_targets': 4, 'found_targets': 1}, 'gson': {'repo': 'google/gson', 'split': 'tune', 'calls': 41, 'notes': 4, 'correct': 3, 'precision': 0.75, 'recall': 0.5, 'first_note': 1.0, 'expected_targets': 6, 'found_targets': 3}, 'retrofit': {'repo': 'square/retrofit', 'split': 'heldout', 'calls': 46, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 4, 'found_targets': 0}, 'polly': {'repo': 'App-vNext/Polly', 'split': 'tune', 'calls': 42, 'notes': 2, 'correct': 1, 'precision': 0.5, 'recall': 0.25, 'first_note': 1.0, 'expected_targets': 4, 'found_targets': 1}, 'guzzle': {'repo': 'guzzle/guzzle', 'split': 'heldout', 'calls': 42, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 0.3333, 'first_note': 1.0, 'expected_targets': 3, 'found_targets': 1}, 'fmt': {'repo': 'fmtlib/fmt', 'split': 'tune', 'calls': 42, 'notes': 4, 'correct': 3, 'precision': 0.75, 'recall': 0.4444, 'first_note': 1.0, 'expected_targets': 9, 'found_targets': 4}, 'python-gitlab': {'repo': 'python-gitlab/python-gitlab', 'split': 'tune', 'calls': 44, 'notes': 4, 'correct': 1, 'precision': 0.25, 'recall': 0.125, 'first_note': 1.0, 'expected_targets': 8, 'found_targets': 1}, 'more-itertools': {'repo': 'more-itertools/more-itertools', 'split': 'heldout', 'calls': 43, 'notes': 2, 'correct': 2, 'precision': 1.0, 'recall': 0.6667, 'first_note': 1.0, 'expected_targets': 3, 'found_targets': 2}, 'commander': {'repo': 'tj/commander.js', 'split': 'tune', 'calls': 43, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 1.0, 'first_note': 1.0, 'expected_targets': 1, 'found_targets': 1}, 'react-hook-form': {'repo': 'react-hook-form/react-hook-form', 'split': 'heldout', 'calls': 41, 'notes': 2, 'correct': 1, 'precision': 0.5, 'recall': 0.1429, 'first_note': 1.0, 'expected_targets': 7, 'found_targets': 1}, 'serilog': {'repo': 'serilog/serilog', 'split': 'heldout', 'calls': 49, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 7, 'found_targets': 0}, 'spdlog': {'repo': 'gabime/spdlog', 'split': 'heldout', 'calls': 47, 'notes': 2, 'correct': 2, 'precision': 1.0, 'recall': 0.25, 'first_note': 1.0, 'expected_targets': 8, 'found_targets': 2}, 'serde': {'repo': 'serde-rs/serde', 'split': 'heldout', 'calls': 47, 'notes': 2, 'correct': 2, 'precision': 1.0, 'recall': 0.5, 'first_note': 1.0, 'expected_targets': 4, 'found_targets': 2}, 'moshi': {'repo': 'square/moshi', 'split': 'heldout', 'calls': 47, 'notes': 3, 'correct': 2, 'precision': 0.6667, 'recall': 0.25, 'first_note': 1.0, 'expected_targets': 8, 'found_targets': 2}, 'express': {'repo': 'expressjs/express', 'split': 'heldout', 'calls': 48, 'notes': 2, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 7, 'found_targets': 0}, 'faraday': {'repo': 'lostisland/faraday', 'split': 'heldout', 'calls': 46, 'notes': 2, 'correct': 1, 'precision': 0.5, 'recall': 0.1667, 'first_note': 1.0, 'expected_targets': 6, 'found_targets': 1}}, 'tune': {'calls': 605, 'notes': 35, 'correct': 24, 'precision': 0.6857, 'recall': 0.2778, 'first_note': 1.0, 'expected_targets': 90, 'found_targets': 25}, 'heldout': {'calls': 541, 'notes': 22, 'correct': 13, 'precision': 0.5909, 'recall': 0.2063, 'first_note': 1.0, 'expected_targets': 63, 'found_targets': 13}, 'pooled': {'calls': 1146, 'notes': 57, 'correct': 37, 'precision': 0.6491, 'recall': 0.2484, 'first_note': 1.0, 'expected_targets': 153, 'found_targets': 38}, 'intents': {'Config': {'notes': 11, 'precision': 0.7273, 'expected': 15, 'recall': 0.5333}, 'Dependency': {'notes': 4, 'precision': 0.75, 'expected': 23, 'recall': 0.1304}, 'Doc': {'notes': 17, 'precision': 0.7647, 'expected': 28, 'recall': 0.4643}, 'Ledger': {'notes': 4, 'precision': 1.0, 'expected': 16, 'recall': 0.25}, 'Owner': {'notes': 0, 'precision': 0.0, 'expected': 9, 'recall': 0.0}, 'Path': {'notes': 0, 'precision': 0.0, 'expected': 1, 'recall': 0.0}, 'Symbol': {'notes': 7, 'precision': 0.2857, 'expected': 5, 'recall': 0.4}, 'Test': {'notes': 5, 'precision': 0.6, 'expected': 18, 'recall': 0.2222}, 'Usage': {'notes': 5, 'precision': 0.0, 'expected': 11, 'recall': 0.0}, 'Version': {'notes': 4, 'precision': 1.0, 'expected': 27, 'recall': 0.1481}}},
    'session_aware': {'relabelled': 521, 'narrowed': 15, 'repos': {'attrs': {'repo': 'python-attrs/attrs', 'split': 'tune', 'calls': 47, 'notes': 4, 'correct': 3, 'precision': 0.75, 'recall': 0.375, 'first_note': 1.0, 'expected_targets': 8, 'found_targets': 3}, 'httpx': {'repo': 'encode/httpx', 'split': 'tune', 'calls': 43, 'notes': 3, 'correct': 2, 'precision': 0.6667, 'recall': 0.5, 'first_note': 1.0, 'expected_targets': 4, 'found_targets': 2}, 'six': {'repo': 'benjaminp/six', 'split': 'heldout', 'calls': 43, 'notes': 3, 'correct': 1, 'precision': 0.3333, 'recall': 1.0, 'first_note': 1.0, 'expected_targets': 1, 'found_targets': 1}, 'ky': {'repo': 'sindresorhus/ky', 'split': 'tune', 'calls': 44, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 3, 'found_targets': 0}, 'signals': {'repo': 'preactjs/signals', 'split': 'tune', 'calls': 44, 'notes': 4, 'correct': 4, 'precision': 1.0, 'recall': 0.4, 'first_note': 1.0, 'expected_targets': 10, 'found_targets': 4}, 'chi': {'repo': 'go-chi/chi', 'split': 'tune', 'calls': 43, 'notes': 2, 'correct': 1, 'precision': 0.5, 'recall': 0.3333, 'first_note': 1.0, 'expected_targets': 3, 'found_targets': 1}, 'cobra': {'repo': 'spf13/cobra', 'split': 'heldout', 'calls': 42, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 1, 'found_targets': 0}, 'ripgrep': {'repo': 'BurntSushi/ripgrep', 'split': 'tune', 'calls': 41, 'notes': 3, 'correct': 1, 'precision': 0.3333, 'recall': 0.25, 'first_note': 1.0, 'expected_targets': 4, 'found_targets': 1}, 'anyhow': {'repo': 'dtolnay/anyhow', 'split': 'tune', 'calls': 43, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 1, 'found_targets': 0}, 'sinatra': {'repo': 'sinatra/sinatra', 'split': 'tune', 'calls': 43, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 1.0, 'first_note': 1.0, 'expected_targets': 1, 'found_targets': 1}, 'jsoup': {'repo': 'jhy/jsoup', 'split': 'tune', 'calls': 45, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 0.3333, 'first_note': 1.0, 'expected_targets': 3, 'found_targets': 1}, 'gson': {'repo': 'google/gson', 'split': 'tune', 'calls': 41, 'notes': 4, 'correct': 3, 'precision': 0.75, 'recall': 0.6, 'first_note': 1.0, 'expected_targets': 5, 'found_targets': 3}, 'retrofit': {'repo': 'square/retrofit', 'split': 'heldout', 'calls': 46, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 4, 'found_targets': 0}, 'polly': {'repo': 'App-vNext/Polly', 'split': 'tune', 'calls': 42, 'notes': 2, 'correct': 1, 'precision': 0.5, 'recall': 0.3333, 'first_note': 1.0, 'expected_targets': 3, 'found_targets': 1}, 'guzzle': {'repo': 'guzzle/guzzle', 'split': 'heldout', 'calls': 42, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 0.5, 'first_note': 1.0, 'expected_targets': 2, 'found_targets': 1}, 'fmt': {'repo': 'fmtlib/fmt', 'split': 'tune', 'calls': 42, 'notes': 4, 'correct': 3, 'precision': 0.75, 'recall': 0.5, 'first_note': 1.0, 'expected_targets': 8, 'found_targets': 4}, 'python-gitlab': {'repo': 'python-gitlab/python-gitlab', 'split': 'tune', 'calls': 44, 'notes': 4, 'correct': 1, 'precision': 0.25, 'recall': 0.1667, 'first_note': 1.0, 'expected_targets': 6, 'found_targets': 1}, 'more-itertools': {'repo': 'more-itertools/more-itertools', 'split': 'heldout', 'calls': 43, 'notes': 2, 'correct': 2, 'precision': 1.0, 'recall': 1.0, 'first_note': 1.0, 'expected_targets': 2, 'found_targets': 2}, 'commander': {'repo': 'tj/commander.js', 'split': 'tune', 'calls': 43, 'notes': 1, 'correct': 1, 'precision': 1.0, 'recall': 1.0, 'first_note': 1.0, 'expected_targets': 1, 'found_targets': 1}, 'react-hook-form': {'repo': 'react-hook-form/react-hook-form', 'split': 'heldout', 'calls': 41, 'notes': 2, 'correct': 1, 'precision': 0.5, 'recall': 0.2, 'first_note': 1.0, 'expected_targets': 5, 'found_targets': 1}, 'serilog': {'repo': 'serilog/serilog', 'split': 'heldout', 'calls': 49, 'notes': 1, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 6, 'found_targets': 0}, 'spdlog': {'repo': 'gabime/spdlog', 'split': 'heldout', 'calls': 47, 'notes': 2, 'correct': 2, 'precision': 1.0, 'recall': 0.2857, 'first_note': 1.0, 'expected_targets': 7, 'found_targets': 2}, 'serde': {'repo': 'serde-rs/serde', 'split': 'heldout', 'calls': 47, 'notes': 2, 'correct': 2, 'precision': 1.0, 'recall': 0.5, 'first_note': 1.0, 'expected_targets': 4, 'found_targets': 2}, 'moshi': {'repo': 'square/moshi', 'split': 'heldout', 'calls': 47, 'notes': 3, 'correct': 2, 'precision': 0.6667, 'recall': 0.3333, 'first_note': 1.0, 'expected_targets': 6, 'found_targets': 2}, 'express': {'repo': 'expressjs/express', 'split': 'heldout', 'calls': 48, 'notes': 2, 'correct': 0, 'precision': 0.0, 'recall': 0.0, 'first_note': 0.0, 'expected_targets': 5, 'found_targets': 0}, 'faraday': {'repo': 'lostisland/faraday', 'split': 'heldout', 'calls': 46, 'notes': 2, 'correct': 1, 'precision': 0.5, 'recall': 0.3333, 'first_note': 1.0, 'expected_targets': 3, 'found_targets': 1}}, 'tune': {'calls': 605, 'notes': 35, 'correct': 22, 'precision': 0.6286, 'recall': 0.3833, 'first_note': 1.0, 'expected_targets': 60, 'found_targets': 23}, 'heldout': {'calls': 541, 'notes': 22, 'correct': 12, 'precision': 0.5455, 'recall': 0.2609, 'first_note': 1.0, 'expected_targets': 46, 'found_targets': 12}, 'pooled': {'calls': 1146, 'notes': 57, 'correct': 34, 'precision': 0.5965, 'recall': 0.3302, 'first_note': 1.0, 'expected_targets': 106, 'found_targets': 35}, 'intents': {'Config': {'notes': 11, 'precision': 0.7273, 'expected': 14, 'recall': 0.5714}, 'Dependency': {'notes': 4, 'precision': 0.5, 'expected': 10, 'recall': 0.2}, 'Doc': {'notes': 17, 'precision': 0.7059, 'expected': 24, 'recall': 0.5}, 'Ledger': {'notes': 4, 'precision': 1.0, 'expected': 11, 'recall': 0.3636}, 'Path': {'notes': 0, 'precision': 0.0, 'expected': 1, 'recall': 0.0}, 'Symbol': {'notes': 7, 'precision': 0.2857, 'expected': 5, 'recall': 0.4}, 'Test': {'notes': 5, 'precision': 0.6, 'expected': 14, 'recall': 0.2857}, 'Usage': {'notes': 5, 'precision': 0.0, 'expected': 10, 'recall': 0.0}, 'Version': {'notes': 4, 'precision': 0.75, 'expected': 17, 'recall': 0.1765}}},
}
TRAJECTORY_FIGURES = {
    'repos': {
        'astropy/astropy': {'traces': 1, 'calls': 30, 'search_calls': 7, 'notes': 1, 'useful_notes': 0, 'useful_precision': 0.0, 'target_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 14.29, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 71.43, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'pydata/xarray': {'traces': 1, 'calls': 74, 'search_calls': 1, 'notes': 0, 'useful_notes': 0, 'useful_precision': 0.0, 'target_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 0.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 100.0, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 0.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'pylint-dev/pylint': {'traces': 1, 'calls': 63, 'search_calls': 14, 'notes': 1, 'useful_notes': 1, 'useful_precision': 1.0, 'target_precision': 1.0, 'gold_hit_before_first_edit': 1.0, 'notes_per_100_search': 7.14, 'own_search_hit_before_first_edit': 0.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 64.29, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 0.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 1, 'lead_traces': 1, 'lead_share': 1.0, 'call_lead_share': 1.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 1, 'saved_pairs': 1, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'pytest-dev/pytest': {'traces': 1, 'calls': 29, 'search_calls': 2, 'notes': 0, 'useful_notes': 0, 'useful_precision': 0.0, 'target_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 0.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 50.0, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 0.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'sphinx-doc/sphinx': {'traces': 1, 'calls': 41, 'search_calls': 12, 'notes': 1, 'useful_notes': 0, 'useful_precision': 0.0, 'target_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 8.33, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 41.67, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 0.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'sympy/sympy': {'traces': 1, 'calls': 40, 'search_calls': 9, 'notes': 2, 'useful_notes': 2, 'useful_precision': 1.0, 'target_precision': 1.0, 'gold_hit_before_first_edit': 1.0, 'notes_per_100_search': 22.22, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 44.44, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 1, 'rank_share': 1.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
    },
    'tune': {'traces': 4, 'calls': 185, 'search_calls': 29, 'notes': 4, 'useful_notes': 2, 'useful_precision': 0.5, 'target_precision': 0.2222, 'gold_hit_before_first_edit': 0.25, 'notes_per_100_search': 13.79, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 51.72, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 0.5, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 1, 'rank_share': 1.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
    'heldout': {'traces': 2, 'calls': 92, 'search_calls': 16, 'notes': 1, 'useful_notes': 1, 'useful_precision': 1.0, 'target_precision': 1.0, 'gold_hit_before_first_edit': 0.5, 'notes_per_100_search': 6.25, 'own_search_hit_before_first_edit': 0.5, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 62.5, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 0.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 1, 'lead_traces': 1, 'lead_share': 0.5, 'call_lead_share': 0.5, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 1, 'saved_pairs': 1, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
    'pooled': {'traces': 6, 'calls': 277, 'search_calls': 45, 'notes': 5, 'useful_notes': 3, 'useful_precision': 0.6, 'target_precision': 0.3, 'gold_hit_before_first_edit': 0.3333, 'notes_per_100_search': 11.11, 'own_search_hit_before_first_edit': 0.8333, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 55.56, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 0.3333, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 1, 'lead_traces': 1, 'lead_share': 0.1667, 'call_lead_share': 0.1667, 'broad_notes': 1, 'rank_share': 1.0, 'searches_saved': 1, 'saved_pairs': 1, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
    'ledger': {'abstained missing-file': 1, 'abstained missing-file Usage': 1, 'suggest': 5, 'suggest Symbol': 4, 'suggest Test': 1, 'suppressed answered': 14, 'suppressed answered Symbol': 5, 'suppressed answered Test': 2, 'suppressed answered Usage': 7, 'suppressed dedupe': 1, 'suppressed dedupe Test': 1, 'suppressed echo': 9, 'suppressed echo Path': 1, 'suppressed echo Symbol': 7, 'suppressed echo Test': 1, 'suppressed recent': 6, 'suppressed recent Symbol': 3, 'suppressed recent Usage': 3, 'suppressed turn-cap': 1, 'suppressed turn-cap Symbol': 1},
}
CORPUS_II_FIGURES = {
    'repos': {
        'coder/code-server': {'traces': 2, 'calls': 66, 'search_calls': 17, 'notes': 2, 'useful_notes': 1, 'useful_precision': 0.5, 'target_precision': 0.2, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 11.76, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 70.59, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'google/gson': {'traces': 2, 'calls': 24, 'search_calls': 4, 'notes': 0, 'useful_notes': 0, 'useful_precision': 0.0, 'target_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 0.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 75.0, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'keras-team/keras': {'traces': 1, 'calls': 20, 'search_calls': 2, 'notes': 0, 'useful_notes': 0, 'useful_precision': 0.0, 'target_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 0.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 0.0, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'pydata/xarray': {'traces': 1, 'calls': 4, 'search_calls': 3, 'notes': 1, 'useful_notes': 1, 'useful_precision': 1.0, 'target_precision': 1.0, 'gold_hit_before_first_edit': 1.0, 'notes_per_100_search': 33.33, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 100.0, 'gold_hit_before_any_edit': 1.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'tailwindlabs/tailwindcss': {'traces': 2, 'calls': 31, 'search_calls': 12, 'notes': 0, 'useful_notes': 0, 'useful_precision': 0.0, 'target_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 0.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 41.67, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
    },
    'families': {
        'auto-code-rover': {'traces': 1, 'calls': 4, 'search_calls': 3, 'notes': 1, 'useful_notes': 1, 'useful_precision': 1.0, 'target_precision': 1.0, 'gold_hit_before_first_edit': 1.0, 'notes_per_100_search': 33.33, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 100.0, 'gold_hit_before_any_edit': 1.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'codex': {'traces': 2, 'calls': 33, 'search_calls': 16, 'notes': 1, 'useful_notes': 1, 'useful_precision': 1.0, 'target_precision': 0.4, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 6.25, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 100.0, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'iswe': {'traces': 1, 'calls': 5, 'search_calls': 3, 'notes': 0, 'useful_notes': 0, 'useful_precision': 0.0, 'target_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 0.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 100.0, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'rovo-dev': {'traces': 4, 'calls': 103, 'search_calls': 16, 'notes': 1, 'useful_notes': 0, 'useful_precision': 0.0, 'target_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 6.25, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 6.25, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
    },
    'languages': {
        'java': {'traces': 2, 'calls': 24, 'search_calls': 4, 'notes': 0, 'useful_notes': 0, 'useful_precision': 0.0, 'target_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 0.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 75.0, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'javascript': {'traces': 2, 'calls': 31, 'search_calls': 12, 'notes': 0, 'useful_notes': 0, 'useful_precision': 0.0, 'target_precision': 0.0, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 0.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 41.67, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'python': {'traces': 2, 'calls': 24, 'search_calls': 5, 'notes': 1, 'useful_notes': 1, 'useful_precision': 1.0, 'target_precision': 1.0, 'gold_hit_before_first_edit': 0.5, 'notes_per_100_search': 20.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 60.0, 'gold_hit_before_any_edit': 0.5, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
        'typescript': {'traces': 2, 'calls': 66, 'search_calls': 17, 'notes': 2, 'useful_notes': 1, 'useful_precision': 0.5, 'target_precision': 0.2, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 11.76, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 70.59, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
    },
    'tune': {'traces': 5, 'calls': 74, 'search_calls': 18, 'notes': 1, 'useful_notes': 1, 'useful_precision': 1.0, 'target_precision': 1.0, 'gold_hit_before_first_edit': 0.2, 'notes_per_100_search': 5.56, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 44.44, 'gold_hit_before_any_edit': 0.2, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
    'heldout': {'traces': 3, 'calls': 71, 'search_calls': 20, 'notes': 2, 'useful_notes': 1, 'useful_precision': 0.5, 'target_precision': 0.2, 'gold_hit_before_first_edit': 0.0, 'notes_per_100_search': 10.0, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 75.0, 'gold_hit_before_any_edit': 0.0, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
    'pooled': {'traces': 8, 'calls': 145, 'search_calls': 38, 'notes': 3, 'useful_notes': 2, 'useful_precision': 0.6667, 'target_precision': 0.2727, 'gold_hit_before_first_edit': 0.125, 'notes_per_100_search': 7.89, 'own_search_hit_before_first_edit': 1.0, 'random_useful_precision': 0.0, 'random_gold_hit_before_first_edit': 0.0, 'random_notes_per_100_search': 60.53, 'gold_hit_before_any_edit': 0.125, 'own_hit_before_any_edit': 1.0, 'random_gold_hit_before_any_edit': 0.0, 'echo_notes': 0, 'echo_share': 0.0, 'echo_first_share': 0.0, 'lead_notes': 0, 'lead_traces': 0, 'lead_share': 0.0, 'call_lead_share': 0.0, 'broad_notes': 0, 'rank_share': 0.0, 'searches_saved': 0, 'saved_pairs': 0, 'random_echo_share': 0.0, 'random_lead_share': 0.0},
    'ledger': {'abstained no-companions': 1, 'abstained no-companions Usage': 1, 'suggest': 3, 'suggest Doc': 1, 'suggest Symbol': 2, 'suppressed answered': 6, 'suppressed answered Symbol': 1, 'suppressed answered Test': 2, 'suppressed answered Usage': 3, 'suppressed echo': 6, 'suppressed echo Doc': 1, 'suppressed echo Symbol': 5, 'suppressed recent': 11, 'suppressed recent Symbol': 6, 'suppressed recent Test': 3, 'suppressed recent Usage': 2, 'suppressed unranked': 1, 'suppressed unranked Symbol': 1},
}
# fmt: on


def test_corpus_data_is_as_documented():
    repos = read_manifest(CORPUS)
    assert len(repos) >= 20 and len({r.ecosystem for r in repos}) >= 6
    assert {r.split for r in repos} == {"tune", "heldout"}
    held = {r.ecosystem for r in repos if r.split == "heldout"}
    assert len(held) >= 4 and "java" in held, held
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
    assert calls >= 800 and silent / calls >= 0.4
    assert sorted(intents) == sorted(
        ["Version", "Path", "Ledger", "Config", "Dependency", "Test", "Symbol", "Doc", "Usage", "Owner"]
    )
    assert all(len(v) >= 14 for v in intents.values()), {k: len(v) for k, v in intents.items()}


def test_intent_figures_on_materialized_repositories(tmp_path, forked_replay):
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
def test_trajectory_figures_on_materialized_workspaces(tmp_path, forked_replay):
    trajs = read_trajectories(TRAJECTORIES, TRAJECTORY_IDS)
    assert sorted(t.id for t in trajs) == sorted(TRAJECTORY_IDS)

    def workspace(t):
        dest = tmp_path / t.id
        materialize_trajectory(TRAJECTORIES, t.row["repo"], t.row["commit"], dest)
        return dest

    rep = run_trajectories(trajs, workspace)
    keys = ("repos", "tune", "heldout", "pooled", "ledger")  # tune / heldout: dsh_sidecar.evaluation.TRAJECTORY_HELDOUT
    assert {k: rep[k] for k in keys} == TRAJECTORY_FIGURES


@pytest.mark.skipif(not (TRAJECTORIES / "index.jsonl").is_file(), reason=f"no trajectory data in {TRAJECTORIES}")
def test_corpus_ii_figures_on_materialized_workspaces(tmp_path, forked_replay):
    """Rovo Dev (Java, JavaScript, TypeScript, Python), iSWE (Java), Codex (JavaScript,
    TypeScript) and AutoCodeRover (Python) runs: every family and language of Corpus II, with the help figures (echo, lead,
    rank, gold-hit before any edit, searches saved) beside the agent's own results and random files."""
    trajs = read_trajectories(TRAJECTORIES, CORPUS_II_IDS)
    assert sorted(t.id for t in trajs) == sorted(CORPUS_II_IDS)
    assert {(t.family, t.language) for t in trajs} == {
        ("rovo-dev", "java"),
        ("rovo-dev", "javascript"),
        ("rovo-dev", "typescript"),
        ("rovo-dev", "python"),
        ("iswe", "java"),
        ("codex", "javascript"),
        ("codex", "typescript"),
        ("auto-code-rover", "python"),
    }

    def workspace(t):
        dest = tmp_path / t.id
        materialize_trajectory(TRAJECTORIES, t.row["repo"], t.row["commit"], dest)
        return dest

    rep = run_trajectories(trajs, workspace)
    keys = ("repos", "families", "languages", "tune", "heldout", "pooled", "ledger")
    assert {k: rep[k] for k in keys} == CORPUS_II_FIGURES


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
    bad_knobs = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "replay", "--corpus", str(corpus), "--cache", str(cache)]
        + ["--suggester", "[1]"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DSH_HOME": str(dsh_home)},
    )
    assert bad_knobs.returncode == 2 and "--suggester must be a JSON object" in bad_knobs.stderr
