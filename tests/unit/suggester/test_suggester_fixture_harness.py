"""A test tree's fixtures listed: the note names the test module that runs them
(``suggester/harness.py``). Small generated trees (a trybuild crate, a Go ``testdata`` folder),
the real sidecar (its workspace graph and content index), exact notes and ledger lines; and
the pure readings of the call and of the folder."""

from __future__ import annotations

import pytest
from dsh_sidecar.suggester import harness
from dsh_sidecar.suggester.parse import parse_call
from support.suggester import answer_in_own_session, sidecar_on_tree

TRYBUILD = {
    "Cargo.toml": '[package]\nname = "err"\nversion = "1.0.0"\n',
    "src/lib.rs": "pub fn f() {}\n",
    "tests/compiletest.rs": '#[test]\nfn ui() {\n    let t = trybuild::TestCases::new();\n    t.compile_fail("tests/ui/*.rs");\n}\n',
    "tests/test_context.rs": "#[test]\nfn context() {}\n",
    "tests/test_macros.rs": "#[test]\nfn macros() {}\n",
    "tests/ui/no-impl.rs": "fn main() {}\n",
    "tests/ui/no-impl.stderr": "error[E0599]\n",
    "tests/ui/must-use.rs": "fn main() {}\n",
    "tests/ui/must-use.stderr": "error: unused\n",
    "tests/ui/empty-ensure.rs": "fn main() {}\n",
    "tests/ui/empty-ensure.stderr": "error\n",
    "README.md": "# err\n",
}
UI_LISTING = "\n".join(sorted(p.rsplit("/", 1)[1] for p in TRYBUILD if p.startswith("tests/ui/")))
GO_TESTDATA = {
    "go.mod": "module example.com/cfg\n\ngo 1.21\n",
    "parse.go": "package cfg\n\nfunc Parse() {}\n",
    "parse_test.go": 'package cfg\n\nimport "os"\n\nfunc TestParse() { os.ReadFile("testdata/golden/a.txt") }\n',
    "other_test.go": "package cfg\n\nfunc TestOther() {}\n",
    "testdata/golden/a.txt": "a\n",
    "testdata/golden/b.txt": "b\n",
    "README.md": "# cfg\n",
}

#: The tree, one call (tool, input, result text), the note (intent, targets; None: no note)
#: and the ledger's last line.
CASES = {
    "trybuild's ui folder: the compile test that runs it": (
        TRYBUILD,
        ("bash", {"command": "ls tests/ui/"}, UI_LISTING),
        ("Test", ["tests/compiletest.rs"]),
        "suggest Test 0.95 1 targets tests/compiletest.rs",
    ),
    "Go golden files: the _test.go file that reads them": (
        GO_TESTDATA,
        ("bash", {"command": "ls testdata/golden"}, "a.txt\nb.txt"),
        ("Test", ["parse_test.go"]),
        "suggest Test 0.97 1 targets parse_test.go",
    ),
    "the ui folder listed with ls -la: the same harness": (
        TRYBUILD,
        ("bash", {"command": "ls -la tests/ui"}, UI_LISTING),
        ("Test", ["tests/compiletest.rs"]),
        "suggest Test 0.95 1 targets tests/compiletest.rs",
    ),
    "fixtures no test module names: no note (the fixtures are never named back)": (
        {**GO_TESTDATA, "parse_test.go": "package cfg\n\nfunc TestParse() {}\n"},
        ("bash", {"command": "ls testdata/golden"}, "a.txt\nb.txt"),
        None,
        "abstained no-companions Test 0.97",
    ),
    "a test folder that holds test modules: a look at the tests, no harness asked": (
        TRYBUILD,
        ("bash", {"command": "ls tests/"}, "compiletest.rs\ntest_context.rs\ntest_macros.rs\nui"),
        None,
        None,
    ),
}


@pytest.mark.parametrize(("tree", "tool_call", "expected", "last"), CASES.values(), ids=CASES.keys())
def test_a_fixtures_listing_names_the_harness_that_runs_it(tmp_path, tree, tool_call, expected, last):
    sidecar, lines = sidecar_on_tree(tmp_path, tree)
    try:
        name, inp, text = tool_call
        notes, ledger = answer_in_own_session(sidecar, lines, name, inp, text, False)
        got = [(n.source.intent, n.source.targets) for n in notes]
    finally:
        sidecar.shutdown()
    assert got == ([expected] if expected else [])
    if last is not None:
        assert ledger[-1] == last


@pytest.mark.parametrize(
    ("command", "result", "folder"),
    [
        ("ls tests/ui/", "a.rs\na.stderr", "tests/ui"),
        ("ls test_suite/tests/ui", "a.rs\na.stderr", "test_suite/tests/ui"),
        ("ls pkg/testdata/golden", "a.txt", "pkg/testdata/golden"),
        # the root of a test tree, or a folder of test modules: the tests themselves
        ("ls tests/", "a.rs\nui", None),
        ("ls tests/functional/cli", "test_a.py\nconftest.py", None),
        ("ls packages/react/test/browser", "mounting.test.tsx\nutils.ts", None),
        # not inside a test tree, a filter, or nothing listed
        ("ls src/ui", "a.rs", None),
        ("ls tests/ui | grep stderr", "a.stderr", None),
        ("ls tests/ui", "", None),
        ("ls tests/ui tests/other", "a.rs", None),
    ],
)
def test_a_fixtures_listing_is_one_folder_inside_a_test_tree_without_test_modules(command, result, folder):
    q = parse_call("bash", {"command": command}, result)
    assert harness.listed_folder(q) == folder


def test_the_harness_writes_the_folder_from_its_test_root_on():
    assert harness.literal_of("tests/ui") == "tests/ui"
    assert harness.literal_of("test_suite/tests/ui") == "tests/ui"
    assert harness.literal_of("pkg/testdata/golden/v2") == "testdata/golden/v2"


class Index:
    def __init__(self, tests: list[str]) -> None:
        self.tests = tests

    def with_kind(self, kind: str) -> list[str]:
        return self.tests if kind == "test-module" else []


class Texts:
    """A content index that knows the text of a few files and records which it read."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self.read: list[str] = []

    def files_containing(self, paths, literal, limit=5):
        out = []
        for i, p in enumerate(paths):
            if i >= limit * 4 or len(out) >= limit:
                break
            self.read.append(p)
            if literal.lower() in self.texts.get(p, "").lower():
                out.append(p)
        return out


def test_the_harness_is_read_from_the_closest_test_modules_outside_the_folder_and_bounded():
    tests = [f"tests/t{i:02}.rs" for i in range(30)] + ["tests/ui/a.rs", "other/tests/x.rs", "tests/data/fx.rs"]
    texts = {"tests/t03.rs": 't.compile_fail("tests/ui/*.rs")', "tests/ui/a.rs": "tests/ui"}
    content = Texts(texts)
    got = harness.harness("tests/ui", Index(tests), content)  # type: ignore[arg-type]
    assert got == ["tests/t03.rs"]
    # the folder's own files and fixtures are never read; at most MAX_READ files are
    assert content.read == [f"tests/t{i:02}.rs" for i in range(harness.MAX_READ)]
    assert harness.harness("tests/ui", Index(tests), None) == []
