"""The VS Code extension inside a real VS Code: code-server (npm) serves the workbench, Debian's
Chromium renders it, playwright-core drives it (tests/vscode/workbench.mjs). The built .vsix
(packed again when a source is newer than it) is installed with ``code-server
--install-extension``, a copy of the pyproj workspace is opened, and "DSH: Show sidecar status"
and "DSH: What would the suggester say?" are run from the command palette; the assertions are
on what the workbench rendered: the status webview, the modal note, the "DSH Sidecar" output
channel. Screenshots, the code-server log and the browser console are
kept in ``$DSH_TEST_ARTIFACTS`` (default ``tests/vscode/artifacts/``).

``.ci/run`` installs chromium (apt) and ``tests/vscode``'s locked packages (npm ci); where either
is missing the test skips and says which.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.editors import VSCODE_EXTENSION as EXTENSION
from support.editors import vscode_build_is_current
from support.locks import VSCODE_BUILD, shared
from support.sidecar import clean_env, server_command
from support.trees import copy_fixture

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "tests" / "vscode"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def _requirements() -> str:
    node = shutil.which("node")
    if not node:
        pytest.skip("node not installed (apt-get install nodejs npm); .ci/run installs it")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing (apt-get install chromium); .ci/run installs it")
    if not (HARNESS / "node_modules" / "code-server" / "lib" / "vscode" / "node_modules").is_dir():
        pytest.skip("tests/vscode/node_modules (code-server, playwright-core) missing: .ci/run installs them")
    if not (EXTENSION / "node_modules" / "@vscode" / "vsce").is_dir():
        pytest.skip("editor-clients/vscode/node_modules missing: run `npm ci` there (.ci/run does)")
    return node


def test_extension_in_a_real_vscode_workbench(tmp_path: Path):
    node = _requirements()
    artifacts = Path(os.environ.get("DSH_TEST_ARTIFACTS", HARNESS / "artifacts")).resolve()
    shutil.rmtree(artifacts, ignore_errors=True)
    artifacts.mkdir(parents=True)
    vsix = tmp_path / "dsh-search.vsix"
    with shared(VSCODE_BUILD):  # test_editor_clients builds the same out/ (pytest-xdist workers)
        if not vscode_build_is_current(EXTENSION / "dsh-search.vsix"):
            pack = subprocess.run(
                ["npm", "run", "--silent", "package"], cwd=EXTENSION, capture_output=True, text=True, timeout=600
            )
            assert pack.returncode == 0, pack.stdout[-3000:] + pack.stderr[-3000:]
        shutil.copyfile(EXTENSION / "dsh-search.vsix", vsix)  # this run's package, whoever builds next
    workspace = tmp_path / "pyproj"
    copy_fixture("pyproj", workspace)
    env = clean_env(
        tmp_path / "dsh-home",
        {
            "VSIX": str(vsix),
            "WORKSPACE": str(workspace),
            "DSH_COMMAND": server_command()[0] if server_command()[0] != sys.executable else "dsh-search",
            "ARTIFACTS": str(artifacts),
            "CHROMIUM": CHROMIUM,
        },
    )
    run = subprocess.run([node, "workbench.mjs"], cwd=HARNESS, env=env, capture_output=True, text=True, timeout=600)
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    assert lines, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads(lines[-1])
    assert run.returncode == 0 and "error" not in report, json.dumps(report, indent=1)[-6000:]
    assert report["steps"][0] == "installed: dsh-search.dsh-search-0.1.0"

    # the status webview, rendered by the workbench from a real dsh/status
    status = report["statusText"]
    assert status.startswith("DSH sidecar status\nSidecar\nversion\n")
    assert f"workspace\n{workspace}\n" in status
    assert "duckduckgo\thttps://html.duckduckgo.com\tunknown" in status  # the zero-config chain
    assert "\nBandit\n" in status and "\nSuggester\n" in status
    assert report["statusTab"] == 1

    # the modal note of "What would the suggester say?" for grep __version__
    dialog = report["suggestDialog"]
    assert "The suggester would say (Version): Version: src/demo_pkg/__init__.py" in dialog
    assert "search-suggester: in this repository, look here for the package version:\n" in dialog
    assert "- src/demo_pkg/__init__.py — defines __version__" in dialog

    # the Output channel got the ledger lines as they arrived
    out = report["outputText"]
    assert "activated (packs generic,python intents" in out
    assert "suggest Version 0.99 1 targets src/demo_pkg/__init__.py" in out

    assert json.loads(report["savedSettings"]) == report["wantedSettings"]  # saved as typed
    # a settings change went to the same sidecar as workspace/didChangeConfiguration, no restart
    assert "[config] sent workspace/didChangeConfiguration" in report["configText"]
    assert report["configText"].count("activated (packs") == 1
    assert "discount\n0.9\n" in report["statusAfterChange"]
    assert f"workspace\n{workspace}\n" in report["statusAfterChange"]

    for shot in report["screenshots"]:
        assert Path(shot).stat().st_size > 10_000  # a rendered page, not an empty canvas
