"""The "Search router" card in a real ``dsh web`` (DeepSeek Harness 0.1.0-rc.8's web profile, its
Settings → Plugins → Plugin configuration), rendered by Debian's Chromium and driven through
playwright-core (tests/harness/webcard.mjs, run by tests/harness/webcard.py inside a private
network namespace with the loopback fake model and one loopback Exa + SearXNG mock). Each
search is a real chat turn whose ``web_search`` goes through the router; what the providers
received is the behaviour asserted:

* the card shows the row's chain (the composition value), numbered by priority;
* dragging a row, and the arrow keys on a row's handle, reorder the chain the next search uses;
* a key stored in the card overrides ``EXA_API_KEY``; clearing it falls back to the variable;
* the add-provider flow adds a row (its editor open) and removing it takes it out;
* a reset re-inherits the composition value: the chain, and the timeout (a 2500 ms override
  makes a 3 s Exa time out and SearXNG answer; after the reset the row's 4000 ms lets Exa answer);
* the empty-results policy: an Exa answering 0 results falls through to SearXNG (the seed's
  ``emptyResultsFallback: true``), is the answer once the card says so, and falls through again
  after its reset;
* the searches' cap (``maxConcurrentSearches``, ``maxQueuedSearches``): the card shows the
  sidecar's defaults (16, 256) where nothing sets them and the row's value (64 queued) where it
  does; an override is marked, written to DSH's settings, and reset.

Screenshots, the browser console and ``dsh web``'s log are kept in ``$DSH_TEST_ARTIFACTS``
(default ``tests/harness/artifacts/dsh-web``, git-ignored).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from harness import harnesses as h

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
PLAYWRIGHT = ROOT / "tests" / "vscode" / "node_modules" / "playwright-core" / "index.mjs"
RUNNER = Path(__file__).resolve().parent / "webcard.py"


def requirements() -> None:
    if h.dsh_missing():
        pytest.skip(h.dsh_missing())
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing (apt-get install chromium); .ci/run installs it")
    if not PLAYWRIGHT.exists():
        pytest.skip("tests/vscode/node_modules (playwright-core) missing: .ci/run installs them")


def run_card(tmp_path: Path, artifacts: Path) -> dict:
    args = [sys.executable, str(RUNNER), str(tmp_path / "work"), str(artifacts)]
    prefix = h.netns_prefix()
    argv = [*prefix, "sh", "-c", "ip link set lo up && exec " + shlex.join(args)] if prefix else args
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_the_search_router_card_in_a_real_dsh_web(tmp_path):
    requirements()
    artifacts = Path(os.environ.get("DSH_TEST_ARTIFACTS", ROOT / "tests" / "harness" / "artifacts")) / "dsh-web"
    report = run_card(tmp_path, artifacts.resolve())
    steps = {s["step"]: s for s in report["steps"]}
    assert "error" not in report, json.dumps(report, indent=1)[-6000:]

    # the composition value: the row's chain, numbered; the first search asks Exa with the env key
    assert steps["card"]["rows"] == ["exa", "searxng"]
    assert steps["search composed"]["asked"] == [{"provider": "exa", "key": "env-exa-key-0001"}]
    # a drag reorders the chain the next search uses (live: no restart)
    assert steps["drag searxng above exa"]["rows"] == ["searxng", "exa"]
    assert steps["after drag"]["resetChain"] is True  # the user layer now sets the chain
    assert steps["search after drag"]["asked"] == [{"provider": "searxng", "key": None}]
    # the keyboard reorders too; a key stored in the card overrides EXA_API_KEY
    assert steps["exa up with the keyboard"]["rows"] == ["exa", "searxng"]
    assert steps["store a key for exa"]["keyState"] == "Key stored in settings (overrides EXA_API_KEY)"
    assert steps["search gui key"]["asked"] == [{"provider": "exa", "key": "gui-exa-key-0002"}]
    assert report["keyInSettings"] == {"stored": True, "mode": "0o600"}  # in DSH's settings document
    # clearing it falls back to the environment
    assert steps["clear exa's key"]["keyState"] == "No key stored: EXA_API_KEY from the environment is used"
    assert steps["search key cleared"]["asked"] == [{"provider": "exa", "key": "env-exa-key-0001"}]
    # the add-provider flow, and removing a provider
    assert steps["add duckduckgo"] == {
        **steps["add duckduckgo"],
        "rows": ["exa", "searxng", "duckduckgo"],
        "editorOpen": True,
    }
    assert steps["remove duckduckgo"]["rows"] == ["exa", "searxng"]
    # a reset re-inherits the composition value: the chain...
    assert steps["drag searxng above exa again"]["rows"] == ["searxng", "exa"]
    assert steps["reset the chain"]["rows"] == ["exa", "searxng"]
    assert steps["after reset"]["resetChain"] is False
    assert steps["search chain reset"]["asked"] == [{"provider": "exa", "key": "env-exa-key-0001"}]
    # ...and the timeout (Advanced): 2500 ms makes a 3 s Exa time out; the row's 4000 ms does not
    assert steps["timeout 2500"]["overridden"] is True
    assert steps["search timeout 2500, exa slow"]["asked"] == [
        {"provider": "exa", "key": "env-exa-key-0001"},
        {"provider": "searxng", "key": None},
    ]
    assert steps["reset the timeout"] == {**steps["reset the timeout"], "value": "4000", "overridden": False}
    assert steps["search timeout reset, exa slow"]["asked"] == [{"provider": "exa", "key": "env-exa-key-0001"}]
    # ...and the empty-results policy (Advanced): Exa answering 0 results falls through to
    # SearXNG (the seed's default), is the answer once the card says so, and falls through again
    # after the reset
    exa, searxng = {"provider": "exa", "key": "env-exa-key-0001"}, {"provider": "searxng", "key": None}
    assert steps["search exa empty, fallback"]["asked"] == [exa, searxng]
    assert steps["empty results: the answer"] == {
        **steps["empty results: the answer"],
        "value": "answer",
        "overridden": True,
    }
    assert steps["search exa empty, answer"]["asked"] == [exa]
    assert steps["reset empty results"] == {**steps["reset empty results"], "value": "fallback", "overridden": False}
    assert steps["search exa empty, reset"]["asked"] == [exa, searxng]
    # ...and the searches' cap (Advanced): the sidecar's defaults where nothing sets them, the
    # row's value where it does; an override is marked and stored, and a reset re-inherits
    concurrent_label = "Searches at the providers at once (more wait for a turn)"
    queued = {
        "label": "Searches that may wait for a turn (more are refused at once)",
        "value": "64",
        "placeholder": "256",
        "overridden": False,
    }
    composed = {"label": concurrent_label, "value": "", "placeholder": "16", "overridden": False}
    assert steps["limits as composed"] == {"step": "limits as composed", "concurrent": composed, "queued": queued}
    assert steps["at most 4 searches at once"]["concurrent"] == {**composed, "value": "4", "overridden": True}
    assert steps["at most 4 searches at once"]["queued"] == queued
    assert report["concurrentInSettings"] is True
    assert steps["reset the searches at once"]["concurrent"] == composed
    # every field reset: the user layer holds nothing of the router any more
    assert "search-router:\n  providers:\n    exa: {}\n" in report["settingsAtEnd"]
    # the stored key never reached a log (dsh web's, the browser console)
    assert report["leakedKey"] is False
    for name in (
        "01-card-composed",
        "02-dragged",
        "03-key-stored",
        "04-added",
        "05-timeout-overridden",
        "06-timeout-reset",
        "07-empty-answer",
        "08-limits",
    ):
        assert (artifacts / f"{name}.png").stat().st_size > 10_000, name
