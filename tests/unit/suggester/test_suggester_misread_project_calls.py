"""Calls that only look like project questions (Config, Doc): what the command does to the file
decides, not the words it carries. A shell line that edits a manifest and greps its own edit
(``sed -i … pom.xml && grep … pom.xml``) and a build run whose only search filters a file outside
the workspace ask nothing about where the configuration lives (``suppressed editing`` /
``suppressed outside``); Python's ``\"\"\"`` searched in one code file walks that file's
docstrings, a code name made of doc words (``prepare_docstring``) is a code name, and a search
inside a package named like a docs tool (``sphinx/``) asks about that code: none is a Doc
question. An ``UPPER_SNAKE`` name a search of the tree found nowhere, or a symbol lookup asked
for, is no environment variable (no Config note). Two small trees shaped like real ones (a Maven
project with CI workflows; a Python package named like a docs tool, with a README and doc
pages), the real sidecar (its workspace graph and content index), exact notes and ledger lines."""

from __future__ import annotations

import pytest
from support.suggester import note_texts_in_own_session, sidecar_on_tree

POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.example</groupId>
  <artifactId>broker</artifactId>
  <version>1.0.0-SNAPSHOT</version>
  <properties>
    <maven.compiler.release>7</maven.compiler.release>
  </properties>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.11.0</version>
      </plugin>
    </plugins>
  </build>
</project>
"""
BUILD_YML = """name: build
on: [push]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: mvn -B verify
"""
JAVA_TREE = {
    "pom.xml": POM,
    ".github/workflows/build.yml": BUILD_YML,
    ".github/workflows/codeql.yml": "name: codeql\non: [push]\njobs:\n  a:\n    runs-on: ubuntu-latest\n",
    "README.md": "# broker\n",
    "src/main/java/org/example/broker/PullHandler.java": (
        "package org.example.broker;\n\npublic class PullHandler {\n"
        '    public static final String PROPERTY_POP_CK = "POP_CK";\n\n'
        "    public String handle(String request) {\n        return request + PROPERTY_POP_CK;\n    }\n}\n"
    ),
    "src/main/java/org/example/broker/PopService.java": (
        "package org.example.broker;\n\npublic class PopService {\n"
        "    public String pop() {\n        return PullHandler.PROPERTY_POP_CK;\n    }\n}\n"
    ),
    "src/test/java/org/example/broker/PullHandlerTest.java": (
        "package org.example.broker;\n\npublic class PullHandlerTest {\n}\n"
    ),
}
PYPROJECT = """[project]
name = "sphinx"
version = "4.0.0"
dependencies = ["docutils>=0.14"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""
PYTHON_TREE = {
    "pyproject.toml": PYPROJECT,
    "README.rst": "Sphinx\n======\n",
    "doc/index.rst": "Welcome\n=======\n",
    "doc/usage/quickstart.rst": "Quickstart\n==========\n",
    "sphinx/__init__.py": '"""The Sphinx documentation toolchain."""\n\n__version__ = "4.0.0"\n',
    "sphinx/domains/__init__.py": "",
    "sphinx/domains/python.py": (
        '"""The Python domain."""\n\n\ndef type_to_xref(text):\n    """Convert a type string."""\n'
        "    reftype = 'obj'\n    return reftype\n"
    ),
    "sphinx/util/__init__.py": "",
    "sphinx/util/docstrings.py": (
        '"""Utilities for docstring processing."""\n\n\ndef prepare_docstring(s):\n'
        '    """Convert a docstring into lines."""\n    return s.splitlines()\n'
    ),
    "sphinx/ext/__init__.py": "",
    "sphinx/ext/autodoc.py": (
        '"""Autodoc."""\n\nfrom sphinx.util.docstrings import prepare_docstring\n\n\n'
        "def get_doc(obj):\n    return prepare_docstring(obj.__doc__)\n"
    ),
    "tests/test_autodoc.py": "from sphinx.ext.autodoc import get_doc\n\n\ndef test_get_doc():\n    assert get_doc\n",
}

#: One call each (tool, input, result text, is-error), the note's text (None: silence) and the
#: ledger's line (None: no decision line, the call asks for no intent).
JAVA_CASES = {
    "a manifest edited in place, then grepped to check the edit": (
        (
            "bash",
            {
                "command": "cd /workspace && sed -i 's/<maven.compiler.release>7</<maven.compiler.release>11</g'"
                ' pom.xml && grep "maven.compiler.release" pom.xml'
            },
            "    <maven.compiler.release>11</maven.compiler.release>",
            False,
        ),
        None,
        "suppressed editing Config",
    ),
    "a build run whose grep filters a file outside the workspace": (
        (
            "bash",
            {
                "command": 'cd /workspace && grep -v "module-info.java" /tmp/sources.txt > /tmp/sources2.txt'
                " && javac --release 11 -d /tmp/classes -cp /root/.m2/repository/com/google/errorprone/"
                "error_prone_annotations/2.18.0/error_prone_annotations-2.18.0.jar @/tmp/sources2.txt 2>&1 | head -30"
            },
            "error: cannot access module-info",
            False,
        ),
        None,
        None,  # its one grep is inverted (-v): it searches for nothing, so no intent is weighed
    ),
    "an UPPER_SNAKE name a search of the tree found nowhere": (
        ("Grep", {"pattern": "ILLEGAL_POLLING_TIME"}, "No matches found", False),
        None,
        "abstained no-companions Usage 0.80",
    ),
    "a symbol lookup of a constant": (
        (
            "get_symbol_info",
            {"symbol_name": "PROPERTY_POP_CK"},
            'Found 2 matches for "PROPERTY_POP_CK" in ./.\n'
            "src/main/java/org/example/broker/PullHandler.java (Line 4): public static final String PROPERTY_POP_CK",
            False,
        ),
        None,
        "suppressed low-confidence Usage",
    ),
}
PYTHON_CASES = {
    "the docstring quote searched in one code file": (
        (
            "bash",
            {"command": 'grep -n \'"""\' sphinx/domains/python.py | grep -A 1 5'},
            '5:    """Convert a type string."""',
            False,
        ),
        None,
        None,
    ),
    "a code name made of doc words, searched in one code file": (
        (
            "bash",
            {"command": 'grep "prepare_docstring" sphinx/ext/autodoc.py | head -n 5'},
            "from sphinx.util.docstrings import prepare_docstring\n    return prepare_docstring(obj.__doc__)",
            False,
        ),
        None,
        "suppressed answered Usage",
    ),
    "a word searched in a code file of a package named like a docs tool": (
        (
            "bash",
            {"command": 'grep -n "type" sphinx/domains/python.py | head -n 20'},
            '4:def type_to_xref(text):\n5:    """Convert a type string."""\n6:    reftype = \'obj\'',
            False,
        ),
        None,
        None,
    ),
    "a message searched in a package named like a docs tool, found nowhere": (
        ("bash", {"command": 'grep -r "toctree contains reference to nonexisting document" sphinx'}, "", False),
        None,
        None,
    ),
}


@pytest.fixture(scope="module")
def java(tmp_path_factory):
    sc, lines = sidecar_on_tree(tmp_path_factory.mktemp("misread-java"), JAVA_TREE)
    yield sc, lines
    sc.shutdown()


@pytest.fixture(scope="module")
def python(tmp_path_factory):
    sc, lines = sidecar_on_tree(tmp_path_factory.mktemp("misread-python"), PYTHON_TREE)
    yield sc, lines
    sc.shutdown()


@pytest.mark.parametrize(("call", "note", "line"), JAVA_CASES.values(), ids=JAVA_CASES.keys())
def test_an_edit_a_build_run_or_a_constant_is_no_config_question(java, call, note, line):
    notes, ledger = note_texts_in_own_session(java, call)
    assert notes == ([note] if note is not None else [])
    assert ledger == ([line] if line is not None else [])


@pytest.mark.parametrize(("call", "note", "line"), PYTHON_CASES.values(), ids=PYTHON_CASES.keys())
def test_docstrings_and_a_docs_tool_named_package_are_no_doc_question(python, call, note, line):
    notes, ledger = note_texts_in_own_session(python, call)
    assert notes == ([note] if note is not None else [])
    assert ledger == ([line] if line is not None else [])
