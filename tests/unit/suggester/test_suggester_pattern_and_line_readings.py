"""A search read as its tool means it. A grep pattern that alternates code names (ERE
``a|b`` as Rovo Dev's ``grep`` tool and ``rg`` read it, BRE ``a\\|b`` as plain ``grep`` does) or
spells a dotted name with the dot escaped (``Byte\\.MAX_VALUE``) searches those names, as the
single name would be searched; a shell line whose grep searches files is a content search even
when it also lists (``ls -R | grep ":$" | head && grep -rn "def f" pkg``) or greps the files a
``find`` found (through ``xargs`` or ``-exec``), not a listing.
Two small trees (a two-module Maven project, a Python package), the real sidecar (its
workspace graph and content index), exact notes and ledger lines."""

from __future__ import annotations

import pytest
from dsh_sidecar.suggester import evidence
from dsh_sidecar.suggester.parse import parse_call
from support.suggester import note_texts_in_own_session, sidecar_on_tree

CONFIG = "store/src/main/java/org/example/store/MessageStoreConfig.java"
JAVA_TREE = {
    "README.md": "# store\n",
    "pom.xml": "<project><modelVersion>4.0.0</modelVersion><artifactId>store</artifactId></project>\n",
    CONFIG: (
        "package org.example.store;\n\npublic class MessageStoreConfig {\n    private String storePathRootDir;\n\n"
        "    public String getStorePathRootDir() {\n        return storePathRootDir;\n    }\n\n"
        "    public void setStorePathRootDir(String dir) {\n        this.storePathRootDir = dir;\n    }\n}\n"
    ),
    "store/src/main/java/org/example/store/DefaultMessageStore.java": (
        "package org.example.store;\n\npublic class DefaultMessageStore {\n"
        "    private final MessageStoreConfig config = new MessageStoreConfig();\n\n"
        "    public String root() {\n        return config.getStorePathRootDir();\n    }\n\n"
        "    public boolean tooLong(String topic) {\n        return topic.length() > Byte.MAX_VALUE;\n    }\n}\n"
    ),
    "broker/src/main/java/org/example/broker/BrokerStartup.java": (
        "package org.example.broker;\n\nimport org.example.store.MessageStoreConfig;\n\npublic class BrokerStartup {\n"
        "    public static void configure(MessageStoreConfig c, String dir) {\n        c.setStorePathRootDir(dir);\n"
        "    }\n}\n"
    ),
    "broker/src/main/java/org/example/broker/TopicValidator.java": (
        "package org.example.broker;\n\npublic class TopicValidator {\n    public static boolean valid(String topic) {\n"
        "        return topic.length() <= Byte.MAX_VALUE;\n    }\n}\n"
    ),
    "broker/src/test/java/org/example/broker/BrokerStartupTest.java": (
        "package org.example.broker;\n\npublic class BrokerStartupTest {\n}\n"
    ),
}
PYTHON_TREE = {
    "README.md": "# polys\n",
    "pyproject.toml": '[project]\nname = "polys"\nversion = "1.0"\n',
    "polys/__init__.py": "",
    "polys/polytools.py": "from polys.rings import clear_denoms\n\n\ndef simplify(p):\n    return clear_denoms(p)\n",
    "polys/rings.py": 'def clear_denoms(p):\n    """Clear denominators."""\n    return p\n',
    "polys/tests/__init__.py": "",
    "polys/tests/test_rings.py": (
        "from polys.rings import clear_denoms\n\n\ndef test_clear_denoms():\n    assert clear_denoms(1) == 1\n"
    ),
}
STARTUP_HIT = "broker/src/main/java/org/example/broker/BrokerStartup.java:7:        c.setStorePathRootDir(dir);"
DEFINED_THERE = (
    "search-suggester: in this repository, look here for the definition of the searched name:\n"
    f"- {CONFIG} — defines setStorePathRootDir"
)

#: One call each (tool, input, result text, is-error), the note's text (None: silence) and the
#: ledger's line (None: no decision line, the call asks for no intent).
JAVA_CASES = {
    "two names alternated (ERE), the grep tool scoped by a path glob": (
        (
            "grep",
            {"content_pattern": "setStorePathRootDir|getStorePathRootDir", "path_glob": "**/broker/**/*.java"},
            STARTUP_HIT,
            False,
        ),
        DEFINED_THERE,
        f"suggest Usage 0.80 1 targets {CONFIG}",
    ),
    "two names alternated (ERE), the grep tool over the whole tree": (
        (
            "grep",
            {"content_pattern": "setStorePathRootDir|getStorePathRootDir"},
            STARTUP_HIT + "\nstore/src/main/java/org/example/store/DefaultMessageStore.java:7:"
            "        return config.getStorePathRootDir();",
            False,
        ),
        DEFINED_THERE,
        f"suggest Usage 0.80 1 targets {CONFIG}",
    ),
    "a dotted name with its dot escaped": (
        (
            "grep",
            {"content_pattern": "Byte\\.MAX_VALUE", "path_glob": "**/broker/**/*.java"},
            "broker/src/main/java/org/example/broker/TopicValidator.java:5:        return topic.length() <= Byte.MAX_VALUE;",
            False,
        ),
        None,
        "suppressed low-confidence Usage",
    ),
    # scoped to a folder, the uses it printed answer a search of names there: as the single name
    "two names alternated (BRE) in a folder, as one name there": (
        ("bash", {"command": 'grep -rn "setStorePathRootDir\\|getStorePathRootDir" broker'}, STARTUP_HIT, False),
        None,
        "suppressed answered Usage",
    ),
    "one name in a folder": (
        ("bash", {"command": 'grep -rn "setStorePathRootDir" broker'}, STARTUP_HIT, False),
        None,
        "suppressed answered Usage",
    ),
}
LISTED = ".:\n./polys:\n./polys/tests:"
CLEAR_DENOMS_NOTE = (
    "search-suggester: in this repository, look here for the definition and the uses of the searched name:\n"
    "- polys/rings.py — defines clear_denoms\n- polys/tests/test_rings.py — uses clear_denoms\n"
    "- polys/polytools.py — uses clear_denoms"
)
CLEAR_DENOMS_LINE = "suggest Symbol 0.97 3 targets polys/rings.py,polys/tests/test_rings.py,polys/polytools.py"
PYTHON_CASES = {
    "a listing, then a definition searched in the tests (found nowhere there)": (
        (
            "bash",
            {"command": 'ls -R | grep ":$" | head -n 5 && grep -rn "def clear_denoms" polys/tests'},
            LISTED,
            False,
        ),
        CLEAR_DENOMS_NOTE,
        CLEAR_DENOMS_LINE,
    ),
    "the files a find found, searched through xargs": (
        ("bash", {"command": 'find polys/tests -name "*.py" | xargs grep -n "def clear_denoms"'}, "", False),
        CLEAR_DENOMS_NOTE,
        CLEAR_DENOMS_LINE,
    ),
    "the files a find found, searched through -exec": (
        ("bash", {"command": 'find polys/tests -name "*.py" -exec grep -n "def clear_denoms" {} +'}, "", False),
        CLEAR_DENOMS_NOTE,
        CLEAR_DENOMS_LINE,
    ),
    "the listing alone": (
        ("bash", {"command": 'ls -R | grep ":$" | head -n 5'}, LISTED, False),
        None,
        None,
    ),
}


@pytest.fixture(scope="module")
def java(tmp_path_factory):
    sc, lines = sidecar_on_tree(tmp_path_factory.mktemp("readings-java"), JAVA_TREE)
    yield sc, lines
    sc.shutdown()


@pytest.fixture(scope="module")
def python(tmp_path_factory):
    sc, lines = sidecar_on_tree(tmp_path_factory.mktemp("readings-python"), PYTHON_TREE)
    yield sc, lines
    sc.shutdown()


@pytest.mark.parametrize(("call", "note", "line"), JAVA_CASES.values(), ids=JAVA_CASES.keys())
def test_alternated_and_escaped_names_are_searched_names(java, call, note, line):
    notes, ledger = note_texts_in_own_session(java, call)
    assert notes == ([note] if note is not None else [])
    assert ledger == ([line] if line is not None else [])


@pytest.mark.parametrize(("call", "note", "line"), PYTHON_CASES.values(), ids=PYTHON_CASES.keys())
def test_a_line_that_lists_and_greps_files_is_a_content_search(python, call, note, line):
    notes, ledger = note_texts_in_own_session(python, call)
    assert notes == ([note] if note is not None else [])
    assert ledger == ([line] if line is not None else [])


@pytest.mark.parametrize(
    ("pattern", "weights"),
    [
        ("escapeHalfMessage|putHalfMessage", {"Usage": 2.0}),
        ("(getMinOffset|getMaxOffset)", {"Usage": 2.0}),
        ("setDataStorePath\\|getDataStorePath", {"Usage": 2.0}),
        ("Code\\.BAD_REQUEST", {"Usage": 2.0}),
        ("\\<storePathRootDir\\>", {"Usage": 2.0}),
        ("lastIndexOf.*\\.", {}),  # a name and a regex: no name alone
        ("Code\\.", {}),
        ("storePath|", {}),  # an empty alternative matches everything
        ("store path|set_path", {}),
    ],
)
def test_which_patterns_name_code(pattern, weights):
    q = parse_call("grep", {"content_pattern": pattern}, None, False)
    assert evidence.rules(q) == weights


@pytest.mark.parametrize(
    ("command", "listing"),
    [
        ('ls -R | grep ":$" | head -n 5', True),
        ('ls -R | grep ":$" | head -n 5 && grep -r "def clear_denoms" polys', False),
        ("ls -la && grep -n simplify polys/polytools.py", False),
        ('find polys -name "*.py"', True),
        ('find polys -name "*.py" | grep rings', True),  # the grep filters the listing
        ('find polys -name "*.py" | xargs grep -l clear_denoms', False),
        ('find polys -name "*.py" -exec grep -l clear_denoms {} +', False),
    ],
)
def test_a_listing_is_a_line_whose_greps_search_no_files(command, listing):
    assert parse_call("bash", {"command": command}, "polys/rings.py\n", False).listing is listing
