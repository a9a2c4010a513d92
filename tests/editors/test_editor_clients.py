"""The VS Code extension's Node tests (editor-clients/vscode): its client code driving the
real sidecar over stdio with vscode-jsonrpc, plus its lint. Runs ``npm run lint`` and
``npm test`` so that ``pytest`` stays the single test command; ``.ci/run`` installs the Node
packages (``npm ci``) and builds ``out/`` first, so ``npm test``'s ``pretest`` build (tsc, ~3 s
of CPU) runs here only when a source is newer than ``out/``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from support.editors import VSCODE_EXTENSION as VSCODE
from support.editors import vscode_build_is_current
from support.locks import VSCODE_BUILD, shared
from support.sidecar import server_command


def _npm() -> str:
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        pytest.skip("node/npm not installed (apt-get install nodejs npm); .ci/run installs them")
    if not (VSCODE / "node_modules").is_dir():
        pytest.skip("editor-clients/vscode/node_modules missing: run `npm ci` there (.ci/run does)")
    return npm


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DSH_SEARCH_COMMAND=server_command()[0])
    return subprocess.run(args, cwd=VSCODE, env=env, capture_output=True, text=True, timeout=600)


def test_vscode_extension_lint_clean():
    proc = _run([_npm(), "run", "--silent", "lint"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_vscode_extension_node_tests_against_real_sidecar():
    npm = _npm()
    with shared(VSCODE_BUILD):  # the workbench test builds the same out/ (pytest-xdist workers)
        # --ignore-scripts: the `test` script without its `pretest` build, out/ being current
        current = vscode_build_is_current(VSCODE / "out")
        proc = _run([npm, "test"] if not current else [npm, "test", "--ignore-scripts"])
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-8000:]
    assert re.search(r"^# fail 0$", out, re.M), out[-4000:]
    passed = int(re.search(r"^# pass (\d+)$", out, re.M).group(1))
    # every command's request: search, status, suggest, dismiss (+ failure paths, + pure rendering)
    assert passed >= 23, out[-4000:]
    for name in (
        "DSH: Search the web",
        "DSH: Show sidecar status",
        "DSH: What would the suggester say?",
        "DSH: Dismiss suggestion family",
    ):
        assert re.search(rf"^\s*ok \d+ - {re.escape(name)}", out, re.M), name
