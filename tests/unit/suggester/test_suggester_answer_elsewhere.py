"""Project questions whose answer the call did not show: a search inside a manifest that points
elsewhere for it names where it points (``filters.pointed_to``), and a search scoped to a docs
folder the workspace does not have names the docs it has (``evidence.wrong_guess``, the
``docs-home`` fact). Small generated trees of each ecosystem, the real sidecar (its workspace
graph and content index), exact notes and ledger lines."""

from __future__ import annotations

import pytest
from dsh_sidecar.config import parse_config
from dsh_sidecar.sidecar import Sidecar
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.filters import pointed_to
from dsh_sidecar.workspace.facts import is_docs_home
from support.suggester import answer_in_own_session
from support.trees import write_tree

HATCH = """[project]
name = "pkg"
dynamic = ["version"]

[tool.hatch.version]
path = "pkg/__about__.py"
"""
TOWNCRIER = """[project]
name = "pkg"
version = "1.0"

[tool.towncrier]
filename = "CHANGES.md"
template = "changes.d/template.md"
directory = "changes.d"
"""
GEMSPEC = """version = File.read(File.expand_path('VERSION', __dir__)).strip

Gem::Specification.new 'gem', version do |s|
  s.authors = ['ann']
end
"""
CMAKE = """cmake_minimum_required(VERSION 3.8)
file(READ include/lib/base.h header)
string(REGEX MATCH "LIB_VERSION ([0-9]+)" _ "${header}")
project(LIB VERSION ${CMAKE_MATCH_1})
"""
STATIC = '[project]\nname = "pkg"\nversion = "1.0"\n'

#: Per ecosystem: the tree, then one call (tool, input, result text) and the note (intent,
#: targets; None: silence) with the ledger's last line.
CASES = {
    "hatch dynamic version": (
        {
            "pyproject.toml": HATCH,
            "pkg/__init__.py": "",
            "pkg/__about__.py": '__version__ = "1.0"\n',
            "README.md": "# p\n",
        },
        ("bash", {"command": "grep -n -A2 'tool.hatch.version' pyproject.toml"}, "5\n6"),
        ("Version", ["pkg/__about__.py"]),
    ),
    "gemspec reading VERSION": (
        {"gem.gemspec": GEMSPEC, "VERSION": "1.2.3\n", "lib/gem.rb": "module Gem2; end\n", "README.md": "# g\n"},
        ("bash", {"command": "grep -n 'version' gem.gemspec"}, "1\n3"),
        ("Version", ["VERSION"]),
    ),
    "CMake reading a header": (
        {
            "CMakeLists.txt": CMAKE,
            "include/lib/base.h": "#define LIB_VERSION 120201\n",
            "src/lib.cc": "int f() { return 1; }\n",
            "README.md": "# l\n",
        },
        ("bash", {"command": "grep -n 'VERSION' CMakeLists.txt"}, "1\n3\n4"),
        ("Version", ["include/lib/base.h"]),
    ),
    "towncrier changelog and template": (
        {
            "pyproject.toml": TOWNCRIER,
            "CHANGES.md": "# Changes\n\n## 1.0 (2024-01-01)\n",
            "changes.d/template.md": "{% for x in y %}\n",
            "pkg/__init__.py": "",
            "README.md": "# p\n",
        },
        ("bash", {"command": "grep -n towncrier pyproject.toml"}, "5"),
        ("Ledger", ["CHANGES.md", "changes.d/template.md"]),
    ),
    "a static version: the manifest is the answer, the call showed it": (
        {"pyproject.toml": STATIC, "pkg/__init__.py": "", "README.md": "# p\n"},
        ("bash", {"command": "grep -n '^version' pyproject.toml"}, "3"),
        None,
    ),
    "a docs folder guessed wrong, the docs live in doc/ (MkDocs)": (
        {
            "mkdocs.yml": "site_name: x\ndocs_dir: doc\n",
            "doc/index.md": "# x\n",
            "doc/api.md": "# api\n",
            "doc/usage.md": "# usage\n",
            "README.md": "# x\n",
            "src/x.c": "int x;\n",
        },
        ("bash", {"command": "ls docs/ 2>/dev/null || ls"}, "README.md\ndoc\nmkdocs.yml\nsrc"),
        ("Doc", ["doc/index.md"]),
    ),
    "SWE-agent search_dir in a docs folder that does not exist": (
        {"README.md": "# x\n", "src/main/java/x/A.java": "class A {}\n", "pom.xml": "<project/>\n"},
        ("search_dir", {"search_term": "safelist", "dir": "docs"}, "Directory docs not found"),
        ("Doc", ["README.md"]),
    ),
}


@pytest.mark.parametrize(("files", "tool_call", "expected"), CASES.values(), ids=CASES.keys())
def test_a_project_question_names_what_the_call_did_not_show(tmp_path, files, tool_call, expected):
    root = write_tree(tmp_path / "ws", files)
    lines: list[str] = []
    env = {"DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    sidecar = Sidecar(parse_config({"suggester": {"enabled": True}}), root, env, log_sink=lines.append)
    try:
        assert sidecar.wait_for_graph(60)
        name, inp, text = tool_call
        notes, ledger = answer_in_own_session(sidecar, lines, name, inp, text, text.startswith("Directory "))
        got = [(n.source.intent, n.source.targets) for n in notes]
    finally:
        sidecar.shutdown()
    if expected is None:
        assert got == []
        assert ledger[-1] == "suppressed echo Version"
    else:
        assert got == [expected]
        assert ledger[-1].startswith(f"suggest {expected[0]} ")


class Points:
    """A content index that knows only which files manifests point to."""

    def __init__(self, points: dict[str, tuple[tuple[str, str], ...]]) -> None:
        self.points = points

    def points_of(self, path: str) -> tuple[tuple[str, str], ...]:
        return self.points.get(path, ())


def targets(*paths: str) -> list[Target]:
    return [Target(p, "r", 1.0) for p in paths]


def test_pointed_to_names_only_what_a_shown_manifest_points_to_for_the_intent():
    content = Points(
        {
            "pyproject.toml": (("version-declared", "pkg/_version.py"), ("changelog", "CHANGES.md")),
            "sub/pyproject.toml": (("version-declared", "sub/v.py"),),
        }
    )
    got = pointed_to("Version", targets("pyproject.toml", "setup.py", "pkg/_version.py"), {"pyproject.toml"}, content)  # type: ignore[arg-type]
    assert [t.path for t in got] == ["pkg/_version.py"]
    # the Ledger's pointers, not the Version's
    got = pointed_to("Ledger", targets("pyproject.toml", "CHANGES.md", "pkg/_version.py"), {"pyproject.toml"}, content)  # type: ignore[arg-type]
    assert [t.path for t in got] == ["CHANGES.md"]
    # the call did not show the best target: the ranking decides
    assert pointed_to("Version", targets("setup.py", "pkg/_version.py"), {"pyproject.toml"}, content) == []  # type: ignore[arg-type]
    # nothing shown, or a broad listing of six files
    assert pointed_to("Version", targets("pyproject.toml", "pkg/_version.py"), set(), content) == []  # type: ignore[arg-type]
    six = {"pyproject.toml"} | {f"m{i}.py" for i in range(5)}
    assert pointed_to("Version", targets("pyproject.toml", "pkg/_version.py"), six, content) == []  # type: ignore[arg-type]
    # no pointer of this intent, or an intent without pointers, or a pointed file already shown
    assert pointed_to("Owner", targets("pyproject.toml", "pkg/_version.py"), {"pyproject.toml"}, content) == []  # type: ignore[arg-type]
    shown = {"pyproject.toml", "pkg/_version.py"}
    assert pointed_to("Version", targets("pyproject.toml", "pkg/_version.py"), shown, content) == []  # type: ignore[arg-type]
    assert pointed_to("Version", targets("pyproject.toml"), {"pyproject.toml"}, None) == []


@pytest.mark.parametrize(
    ("path", "home"),
    [
        ("doc/index.md", True),
        ("docs/README.rst", True),
        ("website/index.mdx", True),
        ("doc/api.md", False),
        ("doc/sub/index.md", False),
        ("index.md", False),
    ],
)
def test_a_docs_home_is_the_index_or_readme_page_of_a_docs_root(path, home):
    assert is_docs_home(path, {"doc", "docs", "website"}) is home


#: A Go module whose ``doc`` folder is a package of code (cobra's documentation generators),
#: beside a documentation site of web pages in ``site/``.
GO_DOC_PACKAGE = {
    "go.mod": "module example.com/cli\n\ngo 1.21\n",
    "command.go": "package cli\n\nfunc Run() {}\n",
    "doc/md_docs.go": "package doc\n\n// GenMarkdownTree writes the pages.\nfunc GenMarkdownTree() error { return nil }\n",
    "doc/man_docs.go": "package doc\n\nfunc GenManTree() error { return nil }\n",
    "doc/util.go": "package doc\n\nfunc hasSeeAlso() bool { return false }\n",
    "site/content/docgen/md.md": "# Markdown docs\n\nUse GenMarkdownTree to write the pages.\n",
    "site/content/index.md": "# cli\n",
    "README.md": "# cli\n",
    "CONTRIBUTING.md": "# Contributing\n",
}
#: A docs folder that holds a web site and no doc page (a demo app): still no documentation.
WEB_DOCS = {
    "package.json": '{"name": "lib"}\n',
    "src/index.ts": "export const x = 1;\n",
    "docs/index.html": "<html></html>\n",
    "docs/src/app.tsx": "export const App = () => null;\n",
    "README.md": "# lib\n",
}


@pytest.mark.parametrize(
    ("files", "tool_call", "note", "ledger"),
    [
        # a definition searched in a code package named `doc`, found in code: a Symbol question
        # (the call showed the definition: answered), never the documentation
        (
            GO_DOC_PACKAGE,
            (
                "bash",
                {"command": "grep -rn 'func GenMarkdownTree' doc/"},
                "doc/md_docs.go:4:func GenMarkdownTree() error {",
            ),
            None,
            "suppressed answered Symbol",
        ),
        # the package listed: code, not a docs folder without pages — no README named
        (GO_DOC_PACKAGE, ("bash", {"command": "ls doc/"}, "man_docs.go\nmd_docs.go\nutil.go"), None, None),
        # a docs folder listed with a web site and no page: the README, as before
        (WEB_DOCS, ("bash", {"command": "ls docs/"}, "index.html\nsrc"), ("Doc", ["README.md"]), "suggest Doc"),
    ],
    ids=["definition in a doc package", "doc package listed", "docs site listed"],
)
def test_a_folder_named_doc_that_holds_code_is_searched_for_its_code(tmp_path, files, tool_call, note, ledger):
    root = write_tree(tmp_path / "ws", files)
    lines: list[str] = []
    env = {"DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    sidecar = Sidecar(parse_config({"suggester": {"enabled": True}}), root, env, log_sink=lines.append)
    try:
        assert sidecar.wait_for_graph(60)
        name, inp, text = tool_call
        notes, decided = answer_in_own_session(sidecar, lines, name, inp, text, False)
        got = [(n.source.intent, n.source.targets) for n in notes]
    finally:
        sidecar.shutdown()
    assert got == ([note] if note else [])
    assert not any(m.startswith("suggest Doc") for m in decided) or note is not None
    if ledger is not None:
        assert decided and decided[-1].startswith(ledger)


@pytest.mark.parametrize(
    ("command", "error", "note"),
    [
        # `ls` of configuration files none of which exists: the tool is configured elsewhere
        ("ls ruff.toml .ruff.toml 2>&1", True, ("Config", ["pyproject.toml"])),
        # the same look as a `find -name` that found nothing
        ("find . -name ruff.toml -o -name .ruff.toml", False, ("Config", ["pyproject.toml"])),
        # one of the files listed exists: no wrong guess
        ("ls ruff.toml README.md 2>&1", True, None),
    ],
    ids=["ls of missing files", "find that found nothing", "ls of one existing file"],
)
def test_a_tool_configuration_looked_for_by_name_and_missing_is_where_the_tool_is_configured(
    tmp_path, command, error, note
):
    files = {
        "pyproject.toml": '[project]\nname = "pkg"\nversion = "1.0"\n\n[tool.ruff]\nline-length = 100\n',
        "pkg/__init__.py": "",
        "README.md": "# pkg\n",
    }
    root = write_tree(tmp_path / "ws", files)
    env = {"DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    lines: list[str] = []
    sidecar = Sidecar(parse_config({"suggester": {"enabled": True}}), root, env, log_sink=lines.append)
    try:
        assert sidecar.wait_for_graph(60)
        notes, _ = answer_in_own_session(sidecar, lines, "bash", {"command": command}, "", error)
        got = [(n.source.intent, n.source.targets) for n in notes]
    finally:
        sidecar.shutdown()
    assert got == ([note] if note else [])
