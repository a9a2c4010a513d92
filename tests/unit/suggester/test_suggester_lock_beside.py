"""A manifest's dependency section asked about is answered by the lock file its tool writes
beside it (``suggester/lockfiles.py``, ``filters.locked``): ``grep -A8 '^dependencies'
pyproject.toml`` → ``uv.lock``; a question about one package stays an echo of the manifest.
Small generated trees of four ecosystems, the real sidecar, exact notes and ledger lines; and the
two pure functions."""

from __future__ import annotations

import pytest
from dsh_sidecar.suggester.lockfiles import asks_section, beside
from support.suggester import answer_in_own_session, sidecar_on_tree

PYTHON = {
    "pyproject.toml": '[project]\nname = "m"\nversion = "1.0"\ndependencies = ["httpx>=0.27"]\n'
    '\n[project.optional-dependencies]\ncli = ["click"]\n',
    "uv.lock": 'version = 1\n\n[[package]]\nname = "httpx"\nversion = "0.27.0"\n',
    "m/__init__.py": "",
}
NODE = {
    "package.json": '{"name": "w", "private": true, "workspaces": ["packages/*"],'
    ' "devDependencies": {"typescript": "^5.4.0"}}\n',
    "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
    "packages/a/package.json": '{"name": "a", "dependencies": {"left-pad": "^1.3.0"}}\n',
    "packages/a/index.js": "module.exports = 1\n",
}
RUST = {
    "Cargo.toml": '[package]\nname = "m"\nversion = "1.0.0"\n\n[dependencies]\nserde = "1"\n',
    "Cargo.lock": 'version = 3\n\n[[package]]\nname = "serde"\nversion = "1.0.200"\n',
    "src/lib.rs": "pub fn f() {}\n",
}
RUBY = {
    "Gemfile": 'source "https://rubygems.org"\ngem "rack"\n',
    "Gemfile.lock": "GEM\n  specs:\n    rack (3.0.0)\n",
    "lib/m.rb": "module M; end\n",
}

#: a Dependency question asked inside a manifest: the subject gate's score
K = "0.99"

#: (tree, the call: tool, input, result text, is_error; the note)
CASES = {
    "PEP 621 dependencies, uv": (
        PYTHON,
        ("bash", {"command": "grep -n -A8 '^dependencies' pyproject.toml"}, '4:dependencies = ["httpx>=0.27"]', False),
        [("Dependency", ["uv.lock"])],
    ),
    "optional dependencies table": (
        PYTHON,
        (
            "bash",
            {"command": "grep -n -A3 '^\\[project.optional-dependencies\\]' pyproject.toml"},
            '6:[project.optional-dependencies]\n7-cli = ["click"]',
            False,
        ),
        [("Dependency", ["uv.lock"])],
    ),
    "npm devDependencies, pnpm": (
        NODE,
        ("bash", {"command": "jq '.devDependencies | keys' package.json"}, '[\n  "typescript"\n]', False),
        [("Dependency", ["pnpm-lock.yaml"])],
    ),
    "Cargo dependencies": (
        RUST,
        ("bash", {"command": "grep -n -A5 '^\\[dependencies\\]' Cargo.toml"}, '5:[dependencies]\n6-serde = "1"', False),
        [("Dependency", ["Cargo.lock"])],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_dependency_section_asked_of_a_manifest_names_its_lock(tmp_path, case):
    tree, call, note = CASES[case]
    sc, lines = sidecar_on_tree(tmp_path, tree)
    try:
        notes, decided = answer_in_own_session(sc, lines, *call)
    finally:
        sc.shutdown()
    assert [(n.source.intent, n.source.targets) for n in notes] == note
    assert decided == [f"suggest Dependency {K} 1 targets {note[0][1][0]}"]


def test_one_package_asked_of_a_manifest_stays_an_echo(tmp_path):
    sc, lines = sidecar_on_tree(tmp_path, PYTHON)
    try:
        call = ("bash", {"command": "grep -n httpx pyproject.toml"}, '4:dependencies = ["httpx>=0.27"]', False)
        notes, decided = answer_in_own_session(sc, lines, *call)
    finally:
        sc.shutdown()
    assert notes == []
    assert decided == ["suppressed echo Dependency"]


def test_asks_section():
    assert asks_section(["dependencies"])
    assert asks_section(["project", "optional", "dependencies", "dependency", "groups"])
    assert asks_section(["devDependencies"])
    assert asks_section(["require", "dev"])
    assert not asks_section(["requests"])
    assert not asks_section(["dependencies", "httpx"])
    assert not asks_section(["project", "version"])
    assert not asks_section([])


def test_beside_reads_the_folder_and_those_above():
    targets = ["package.json", "pnpm-lock.yaml", "packages/a/yarn.lock", "uv.lock", "Gemfile.lock"]
    assert beside({"packages/a/package.json"}, targets) == ["pnpm-lock.yaml", "packages/a/yarn.lock"]
    assert beside({"package.json"}, targets) == ["pnpm-lock.yaml"]
    assert beside({"Gemfile"}, targets) == ["Gemfile.lock"]
    assert beside({"pyproject.toml"}, targets) == ["uv.lock"]
    assert beside({"setup.cfg"}, targets) == []
    assert beside({"pyproject.toml", "uv.lock"}, targets) == []  # shown already: never named back
