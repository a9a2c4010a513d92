"""Where a named tool's configuration lives, read the way the tool reads it
(``suggester/toolconfig.py``): a look for a tool's own file that is not there names the file
holding the tool's section first, then the configuration that runs the tool, and no unrelated
workflow; a listing that found only other configuration names where the tool is configured; a
search that shows the section is an echo. A small tree shaped like a real one (a ``src``
package, ``[tool.ruff]`` and ``[tool.pytest.ini_options]`` in ``pyproject.toml``, a
``tox.ini`` whose ``[testenv]`` runs pytest, pre-commit hooks running ruff, a workflow about
issues), the real sidecar (its workspace graph and content index), exact notes and ledger lines."""

from __future__ import annotations

import pytest
from dsh_sidecar.workspace import manifests
from support.suggester import answer_in_own_session, sidecar_on_tree

PYPROJECT = """[build-system]
requires = ["setuptools>=61.0"]
build-backend = "setuptools.build_meta"

[project]
name = "requests"
dynamic = ["version"]
dependencies = ["idna>=2.5", "urllib3>=1.21.1"]

[tool.setuptools.dynamic]
version = {attr = "requests.__version__.__version__"}

[tool.ruff]
target-version = "py310"
src = ["src/requests", "tests"]

[tool.ruff.lint]
select = ["E", "F", "I"]

[tool.pytest.ini_options]
addopts = "--doctest-modules"
testpaths = ["tests"]
"""
TOX = """[tox]
envlist = py{310,311,312}

[testenv]
deps = -rrequirements-dev.txt
commands =
    pytest {posargs:tests}
"""
PRE_COMMIT = """repos:
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.9.0
    hooks:
      - id: ruff
        args: [--fix]
      - id: ruff-format
"""
CLOSE_ISSUES = """name: Close issues
on:
  schedule:
    - cron: '0 0 * * *'
jobs:
  close:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/stale@v9
        with:
          days-before-close: 7
"""
CODEQL = """name: CodeQL
on: [push]
jobs:
  analyze:
    runs-on: ubuntu-latest
    steps:
      - uses: github/codeql-action/analyze@v3
"""
TREE = {
    "pyproject.toml": PYPROJECT,
    "tox.ini": TOX,
    ".pre-commit-config.yaml": PRE_COMMIT,
    ".github/workflows/close-issues.yml": CLOSE_ISSUES,
    ".github/workflows/codeql-analysis.yml": CODEQL,
    "requirements-dev.txt": "pytest>=7\npytest-cov\n",
    "src/requests/__init__.py": "from .api import get\n",
    "src/requests/__version__.py": '__version__ = "2.32.0"\n',
    "src/requests/api.py": "def get(url):\n    return url\n",
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef httpbin():\n    return 'x'\n",
    "tests/test_api.py": "import pytest\n\n\ndef test_get():\n    assert True\n",
    "README.md": "# requests\n",
}

RUFF_NOTE = (
    "search-suggester: in this repository, look here for the configuration:\n"
    "- pyproject.toml — ruff's configuration ([tool.ruff])\n"
    "- .pre-commit-config.yaml — the pre-commit hooks"
)
PYTEST_NOTE = (
    "search-suggester: in this repository, look here for the tests and their fixtures:\n"
    "- pyproject.toml — pytest's configuration ([tool.pytest.ini_options])\n"
    "- tests/conftest.py — shared pytest fixtures"
)

#: One call each (tool, input, result text, is-error) and the note's text (None: silence) with
#: the ledger's line.
CASES = {
    "ls of ruff's own files, none there": (
        (
            "bash",
            {"command": "ls ruff.toml .ruff.toml"},
            "ls: cannot access 'ruff.toml': No such file or directory\nls: cannot access '.ruff.toml': No such file or directory",
            True,
        ),
        RUFF_NOTE,
        "suggest Config 0.92 2 targets pyproject.toml,.pre-commit-config.yaml",
    ),
    "a glob of ruff.toml that found nothing": (
        ("Glob", {"pattern": "**/ruff.toml"}, "No files found", False),
        RUFF_NOTE,
        "suggest Config 0.92 2 targets pyproject.toml,.pre-commit-config.yaml",
    ),
    "a grep that shows the [tool.ruff] table: an echo": (
        (
            "bash",
            {"command": 'grep -rn "\\[tool.ruff" .'},
            "./pyproject.toml:13:[tool.ruff]\n./pyproject.toml:17:[tool.ruff.lint]",
            False,
        ),
        None,
        "suppressed echo Config",
    ),
    "a find of pytest's files that found only tox.ini (no [pytest] in it)": (
        ("bash", {"command": "find . -name pytest.ini -o -name setup.cfg -o -name tox.ini"}, "./tox.ini", False),
        PYTEST_NOTE,
        "suggest Test 0.92 2 targets pyproject.toml,tests/conftest.py",
    ),
    "a grep that shows [tool.pytest.ini_options]: an echo": (
        ("bash", {"command": 'grep -rn "tool.pytest" .'}, "./pyproject.toml:20:[tool.pytest.ini_options]", False),
        None,
        "suppressed echo Test",
    ),
}


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory):
    sc, lines = sidecar_on_tree(tmp_path_factory.mktemp("toolconfig"), TREE)
    yield sc, lines
    sc.shutdown()


@pytest.mark.parametrize(("call", "note", "line"), CASES.values(), ids=CASES.keys())
def test_a_tools_configuration_is_named_where_the_tool_reads_it(sidecar, call, note, line):
    sc, lines = sidecar
    notes, ledger = answer_in_own_session(sc, lines, *call)
    notes = [n.text for n in notes]
    assert notes == ([note] if note is not None else [])
    assert ledger[-1] == line


@pytest.mark.parametrize(
    ("path", "text", "tools"),
    [
        ("pyproject.toml", PYPROJECT, {"pytest", "ruff", "setuptools"}),
        ("tox.ini", TOX, {"tox"}),  # `commands = pytest` runs pytest; only `[pytest]` configures it
        (
            "setup.cfg",
            "[tool:pytest]\naddopts = -q\n[flake8]\nmax-line-length = 99\n[mypy-pkg.*]\nstrict = True\n",
            {"pytest", "flake8", "mypy"},
        ),
        ("setup.cfg", "[pytest]\naddopts = -q\n", set()),  # pytest does not read [pytest] of setup.cfg
        ("tox.ini", "[pytest]\naddopts = -q\n[mypy]\nstrict = True\n", {"pytest"}),  # mypy reads no tox.ini
        (
            "package.json",
            '{"name": "x", "jest": {"testEnvironment": "node"}, "eslintConfig": {"root": true}, "scripts": {"test": "vitest"}}',
            {"jest", "eslint"},
        ),
        ("ruff.toml", "line-length = 99\n", {"ruff"}),
        ("web/.eslintrc.json", "{}", {"eslint"}),
        ("jest.config.ts", "export default {}\n", {"jest"}),
        ("coverage.py", "x = 1\n", set()),  # code named after a tool is not its configuration
        (
            "pom.xml",
            "<project><build><plugins><plugin><artifactId>maven-surefire-plugin</artifactId></plugin></plugins></build></project>",
            {"surefire"},
        ),
    ],
)
def test_the_manifest_readers_say_which_tools_a_file_configures(path, text, tools):
    m = manifests.read(path, text)
    got = {f.removeprefix("configures:") for f in (m.facts if m is not None else ()) if f.startswith("configures:")}
    assert got == tools


def test_a_test_runner_the_project_does_not_use_names_where_its_tests_are_set_up(tmp_path):
    """``{jest,vitest}.config.*`` in a package whose script runs ``node --test``: nothing
    configures or mentions jest or vitest, so the note names the package's test set-up, not its
    test modules."""
    sc, lines = sidecar_on_tree(
        tmp_path,
        {
            "package.json": '{"name": "cli", "version": "1.0.0", "scripts": {"test": "node --test"}}',
            "index.js": "exports.run = () => 1;\n",
            "lib/command.js": "class Command {}\nexports.Command = Command;\n",
            "tests/command.test.js": "const test = require('node:test');\ntest('x', () => {});\n",
            "tests/options.test.js": "const test = require('node:test');\ntest('y', () => {});\n",
            "README.md": "# cli\n",
        },
    )
    try:
        glob = {"pattern": "{jest,vitest}.config.*"}
        notes, ledger = answer_in_own_session(sc, lines, "Glob", glob, "No files found", False)
    finally:
        sc.shutdown()
    assert [(n.source.intent, n.source.targets) for n in notes] == [("Test", ["package.json"])]
    assert ledger == ["suggest Test 0.92 1 targets package.json"]


@pytest.mark.parametrize(
    ("patterns", "headers", "bare"),
    [
        (["frobnicate"], [], []),
        (["def main"], [], []),
        ([r"\[tool\.ruff"], ["ruff"], ["ruff"]),
        ([r"foo\|\[tool.mypy\]"], ["mypy"], ["mypy"]),  # one alternative of several
        (["x -e tool:pytest"], ["pytest"], ["pytest"]),  # grep's `-e` alternatives
        ([r"to\ol.ruff"], ["ruff"], ["ruff"]),  # escapes undone before the header is looked for
        ([r"^\[flake8\]$"], ["flake8"], ["flake8"]),
        (["mypy"], [], ["mypy"]),  # a bare name: only when bare names count
        (["tool_ruff"], [], ["ruff"]),
        (["tool.ruff|tool.black"], ["ruff", "black"], ["ruff", "black"]),
        (["[tool.pytest", "frob"], ["pytest"], ["pytest"]),
        ([r"\[tool\.pytest\.ini_options\]"], ["pytest"], ["pytest"]),
        (["[ testenv ]", "tool:", "[ "], [], []),
    ],
)
def test_the_sections_a_search_names(patterns: list[str], headers: list[str], bare: list[str]):
    """``toolconfig.sections``: the tools whose sections the searched patterns spell, each
    alternative read alone (``\\|``, ``-e``), escapes undone; a bare tool name only when bare
    names count (a search that found nothing asks for a section by its spelling alone)."""
    from dsh_sidecar.suggester import toolconfig

    assert toolconfig.sections(patterns, bare=False) == headers
    assert toolconfig.sections(patterns) == bare
