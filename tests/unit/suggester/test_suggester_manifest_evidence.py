"""Structural evidence read from manifests (suggester/evidence/): a search inside a manifest
is classified by the section of the words it names, a search of the tree that finds only
manifests and tool configurations by theirs, listings of test-runner, solution and tool
configurations by what they configure, and a listing that misses a tool's configuration by
where the project configures it instead."""

from __future__ import annotations

import pytest
from dsh_sidecar.suggester import evidence
from dsh_sidecar.suggester.evidence import AGAINST, SCOPE, SUBJECT, Workspace, rules, wrong_guess
from dsh_sidecar.suggester.gate import INTENTS
from dsh_sidecar.suggester.parse import parse_call
from dsh_sidecar.workspace import manifests
from dsh_sidecar.workspace.facts import facts_of
from dsh_sidecar.workspace.kinds import classify

POM = """<project><version>1.0</version>
  <build><plugins><plugin><artifactId>maven-surefire-plugin</artifactId>
    <configuration><argLine>-Xss640k</argLine></configuration></plugin></plugins></build>
  <dependencies><dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId>
    <version>5.10</version></dependency></dependencies>
  <developers><developer><id>jhy</id></developer></developers></project>"""
PYPROJECT = """[project]
name = "pkg"
dynamic = ["version"]
[tool.setuptools.dynamic]
version = {attr = "pkg.__version__"}
[tool.pytest.ini_options]
addopts = "-q"
[tool.ruff]
line-length = 100
"""
CARGO = '[package]\nname = "x"\nversion = "1.0.0"\n[dependencies]\na = { version = "1" }\nb = { version = "2" }\n'
TOX = "[tox]\nenvlist = py312\n[flake8]\nmax-line-length = 100\n"
FILES = {
    "pom.xml": POM,
    "pyproject.toml": PYPROJECT,
    "Cargo.toml": CARGO,
    "tox.ini": TOX,
    ".prettierrc.js": "module.exports = { singleQuote: true };\n",
    "src/app.py": "def main():\n    pass\n",
    "include/fmt/base.h": "#define FMT_VERSION 120201\n",
    "CHANGELOG.md": "# Changelog\n\n## Unreleased\n\n## 1.0.0 (2024-01-01)\n",
    "README.md": "# x\n",
    "Polly.slnx": '<Solution><Project Path="src/A/A.csproj" /></Solution>',
    "package.json": '{"name": "x", "scripts": {"test": "node --test"}}',
}


def workspace(files: dict[str, str] = FILES) -> Workspace:
    read = {p: manifests.read(p, t) for p, t in files.items()}
    facts = {p: frozenset(facts_of(p, classify(p), t)) for p, t in files.items()}
    by_fact: dict[str, list[str]] = {}
    for p, fs in sorted(facts.items()):
        for f in fs:
            by_fact.setdefault(f, []).append(p)
    folders = {p.rsplit("/", 1)[0] for p in files if "/" in p}
    return Workspace(
        is_file=lambda p: p in files,
        is_dir=lambda p: not p or p in folders,
        kind=classify,
        facts=lambda p: facts.get(p, frozenset()),
        keys=lambda p: read[p].keys if read.get(p) is not None else None,
        with_fact=lambda f: by_fact.get(f, []),
    )


def decided(intent: str, weight: float = SUBJECT) -> dict[str, float]:
    return {i: (weight if i == intent else AGAINST) for i in INTENTS}


def weights(tool: str, inp: dict[str, object], result: str = "", ws: Workspace | None = None) -> dict[str, float]:
    return rules(parse_call(tool, inp, result, False), ws or workspace())


@pytest.mark.parametrize(
    ("command", "intent"),
    [
        ("grep -n argLine pom.xml", "Test"),
        ("grep -n -A6 '<developers>' pom.xml", "Owner"),
        ("grep -n junit-jupiter pom.xml", "Dependency"),
        ("grep -n 'version' Cargo.toml", "Version"),  # a word that names an intent itself
        ("grep -n -A2 'tool.setuptools.dynamic' pyproject.toml", "Version"),
        ("grep -n line-length pyproject.toml", "Config"),
        ("grep -n 'tool.pytest\\|^\\[pytest' pyproject.toml tox.ini", "Test"),  # a tie goes against Config
        ("grep -n flake8 tox.ini", "Config"),
    ],
)
def test_a_search_inside_a_manifest_is_read_by_the_section_it_names(command, intent):
    assert weights("bash", {"command": command}) == decided(intent)


def test_a_search_of_the_tree_that_found_only_configuration_is_read_by_it():
    assert weights("bash", {"command": "rg -l junit-jupiter"}, "pom.xml") == decided("Dependency")
    assert weights("bash", {"command": "rg -l --hidden singleQuote"}, ".prettierrc.js") == decided("Config")
    # found in code too: the name's uses (the pack signals and name rules decide)
    assert weights("bash", {"command": "rg -l singleQuote"}, ".prettierrc.js\nsrc/app.py") == {"Usage": 2.0}


def test_listings_of_configurations_by_what_they_configure():
    assert weights("bash", {"command": "ls *.sln*"}, "Polly.slnx") == decided("Path", SCOPE)
    assert weights("bash", {"command": "find . -name jest.config.js"}, "x/jest.config.js") == decided("Test", SCOPE)
    assert weights("bash", {"command": "find . -name mkdocs.yml"}, "support/mkdocs.yml") == decided("Config", SCOPE)


def test_release_markers_in_prose_are_the_ledger_and_xml_versions_are_versions():
    grep = {"pattern": "Unreleased", "glob": "*.md", "output_mode": "files_with_matches"}
    assert weights("grep", grep, "Found 2 files\nREADME.md\nCHANGELOG.md") == decided("Ledger", SCOPE)
    # found only in the change ledger: read by it
    assert weights("grep", {"pattern": "next-release", "glob": "*.md"}, "CHANGELOG.md:5") == decided("Ledger")
    assert weights("grep", {"pattern": "Welcome", "glob": "*.md"}, "README.md:1") == decided("Doc", SCOPE)
    assert weights("bash", {"command": "grep -rn --include=pom.xml '<version>2.14' ."}) == {"Version": SCOPE}
    assert weights("bash", {"command": "grep -rn 'define FMT_VERSION' include/fmt"}) == {"Version": SCOPE}


def test_a_missed_tool_configuration_names_where_the_project_configures_it():
    ws = workspace()

    def guess(tool: str, inp: dict[str, object], w: Workspace = ws) -> str | None:
        return wrong_guess(parse_call(tool, inp, "", False), w)

    assert guess("glob", {"pattern": "{jest,vitest}.config.*"}) == "Test"  # package.json's test script
    assert (
        guess(
            "bash", {"command": "find . -name 'setup.cfg' -o -name 'tox.ini'"}, workspace({"pyproject.toml": PYPROJECT})
        )
        == "Config"
    )  # the tools are configured in pyproject.toml
    assert guess("bash", {"command": "ls -a | grep -i -E 'flake8|ruff'"}) == "Config"
    assert guess("bash", {"command": "find . -name 'checkstyle*.xml' -o -name 'spotbugs*.xml'"}) is None
    assert guess("bash", {"command": "find . -name packages.config"}) == "Dependency"
    bare = workspace({"README.md": "# x\n", "src/app.py": "x = 1\n"})
    assert guess("glob", {"pattern": "{jest,vitest}.config.*"}, bare) is None  # nothing to name instead
    assert guess("bash", {"command": "find . -name packages.config"}, bare) is None
    assert (
        evidence.wrong_guess(
            parse_call("bash", {"command": "find . -name jest.config.js"}, "a/jest.config.js", False), ws
        )
        is None
    )
