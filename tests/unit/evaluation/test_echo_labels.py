"""The labelled calls read with the help-not-agreement rule (``evaluation/labels.py``): a label
expecting only files its own call showed (listed, opened or searched inside; five or fewer)
expects silence; one whose files it showed in part expects the others; every other label stays
as it was labelled. And the ``opens`` the corpus builder stores per call, for every tool form
of the labelled corpus (``corpus/intents/build.py``, the trajectories' shell reader)."""

from __future__ import annotations

import pytest
from dsh_sidecar.evaluation.labels import echo_aware, session_aware
from dsh_sidecar.evaluation.trace import TraceError, TraceLine, read_trace

from corpus.intents import build

FILES = ["src/lib.rs", "src/context.rs", "tests/test_a.rs", "tests/test_b.rs"] + [f"src/m{i}.rs" for i in range(6)]


def line(
    tool: str,
    inp: dict,
    text: str | None,
    intent: str | None,
    targets: tuple[str, ...],
    opens: tuple[str, ...] = (),
    dirs: tuple[str, ...] = (),
) -> TraceLine:
    params = {"sessionId": "s", "turn": 1, "tool": {"name": tool, "input": inp}}
    if text is not None:
        params["result"] = {"isError": False, "text": text}
    return TraceLine(params, intent, targets, opens, dirs)


def test_a_label_expecting_only_what_its_call_listed_expects_silence():
    trace = [
        # the grep listed the one file the label expects: an echo
        line("Grep", {"pattern": "pub trait Context", "path": "src"}, "src/lib.rs:616", "Symbol", ("src/lib.rs",)),
        # bare names relative to the call's path
        line("Grep", {"pattern": "x", "path": "tests"}, "test_a.rs\ntest_b.rs", "Test", ("tests/test_a.rs",)),
        # the label expects a file the listing did not show: kept
        line("Grep", {"pattern": "Context"}, "src/lib.rs:3", "Symbol", ("src/context.rs",)),
        # one of two expected files not shown: the label expects that one (what a note adds)
        line("Grep", {"pattern": "y"}, "src/lib.rs:1", "Usage", ("src/lib.rs", "src/context.rs")),
        # a listing of six files or more is no echo: a note may rank it
        line("Grep", {"pattern": "z"}, "\n".join(f"src/m{i}.rs:1" for i in range(6)), "Usage", ("src/m0.rs",)),
        # no result text, and a silence label: as labelled
        line("Grep", {"pattern": "w"}, None, "Symbol", ("src/lib.rs",)),
        line("Read", {"file_path": "src/lib.rs"}, "", None, ()),
    ]
    out = echo_aware(trace, FILES)
    assert [(t.intent, t.targets) for t in out] == [
        (None, ()),
        (None, ()),
        ("Symbol", ("src/context.rs",)),
        ("Usage", ("src/context.rs",)),
        ("Usage", ("src/m0.rs",)),
        ("Symbol", ("src/lib.rs",)),
        (None, ()),
    ]
    assert [t.params for t in out] == [t.params for t in trace]


def test_the_files_a_call_opened_or_searched_inside_count_as_shown():
    trace = [
        # a Read of the expected file (no listing at all): an echo
        line("Read", {"file_path": "src/lib.rs"}, "", "Symbol", ("src/lib.rs",), ("src/lib.rs",)),
        # grep inside one file, no path lines in the result: an echo
        line("bash", {"command": "grep -n x src/lib.rs"}, "", "Config", ("src/lib.rs",), ("src/lib.rs",)),
        # opened one of the two expected files: the other one stays expected
        line("bash", {"command": "cat src/lib.rs"}, "", "Version", ("src/lib.rs", "src/context.rs"), ("src/lib.rs",)),
        # opened a file the label does not expect: as labelled
        line("bash", {"command": "cat src/m1.rs"}, "", "Version", ("src/context.rs",), ("src/m1.rs",)),
        # listed one file and opened another: both shown, the label expected both
        line(
            "bash",
            {"command": "ls src; cat src/m1.rs"},
            "src/lib.rs",
            "Doc",
            ("src/lib.rs", "src/m1.rs"),
            ("src/m1.rs",),
        ),
        # a listing of six plus one opened file: seven shown, nothing was echoed
        line(
            "bash",
            {"command": "x"},
            "\n".join(f"src/m{i}.rs" for i in range(6)),
            "Test",
            ("src/lib.rs",),
            ("src/lib.rs",),
        ),
    ]
    out = echo_aware(trace, FILES)
    assert [(t.intent, t.targets) for t in out] == [
        (None, ()),
        (None, ()),
        ("Version", ("src/context.rs",)),
        ("Version", ("src/context.rs",)),
        (None, ()),
        ("Test", ("src/lib.rs",)),
    ]
    assert [t.opens for t in out] == [t.opens for t in trace]


def test_bare_names_are_read_relative_to_the_folders_a_command_listed():
    files = FILES + [".github/workflows/ci.yml", ".github/workflows/release.yml"]
    trace = [
        line(
            "bash", {"command": "ls .github/workflows"}, "ci.yml\nrelease.yml", "Config", (".github/workflows/ci.yml",)
        ),
        line(
            "bash",
            {"command": "ls .github/workflows"},
            "ci.yml\nrelease.yml",
            "Config",
            (".github/workflows/ci.yml",),
            dirs=(".github/workflows",),
        ),
    ]
    assert [(t.intent, t.targets) for t in echo_aware(trace, files)] == [
        ("Config", (".github/workflows/ci.yml",)),
        (None, ()),
    ]


@pytest.mark.parametrize(
    ("command", "dirs"),
    [
        ("ls .github/workflows", [".github/workflows"]),
        (["ls", "src"], ["src"]),
        ("cd src && ls", ["src"]),
        ("ls -R src", []),
        ("grep -rl x src", []),
    ],
)
def test_the_builder_stores_the_folders_of_bare_names(command, dirs):
    assert build.dirs_of_call({"name": "bash", "input": {"command": command}}) == dirs
    assert build.dirs_of_call({"name": "Read", "input": {"file_path": "src"}}) == []


def test_read_trace_keeps_the_opens_of_a_line():
    raw = [
        '{"params": {"tool": {"name": "Read", "input": {}}}, "opens": ["a.py"], "dirs": ["d"], "expect": null}',
        '{"params": {"tool": {"name": "Grep", "input": {}}}, "expect": {"intent": "Symbol", "targets": ["b.py"]}}',
    ]
    assert [(t.intent, t.targets, t.opens, t.dirs) for t in read_trace(raw)] == [
        (None, (), ("a.py",), ("d",)),
        ("Symbol", ("b.py",), (), ()),
    ]
    with pytest.raises(TraceError, match="line 1: opens must be a list"):
        read_trace(['{"params": {}, "opens": "a.py", "expect": null}'])


TRACKED = {"pyproject.toml", "setup.py", "package.json", "src/a.py", "src/b.py", "docs/conf.py", "README.md"}


@pytest.mark.parametrize(
    ("name", "inp", "opens"),
    [
        # Claude Code
        ("Read", {"file_path": "pyproject.toml"}, ["pyproject.toml"]),
        ("Read", {"file_path": "./src/a.py", "offset": 3}, ["src/a.py"]),
        ("Read", {"file_path": "nope.py"}, []),
        ("Edit", {"file_path": "src/b.py"}, ["src/b.py"]),
        ("Write", {"file_path": "new.py"}, []),
        ("Grep", {"pattern": "x", "path": "setup.py"}, ["setup.py"]),
        ("Grep", {"pattern": "x", "path": "src"}, []),
        ("Glob", {"pattern": "**/*.py"}, []),
        # shell strings (bash, OpenHands execute_bash) and Codex list form
        ("bash", {"command": "grep -n version setup.py"}, ["setup.py"]),
        ("Bash", {"command": "cat package.json | head -5"}, ["package.json"]),
        ("bash", {"command": "grep -rln version src"}, []),
        ("bash", {"command": "cd src && sed -n 1,20p a.py"}, ["src/a.py"]),
        ("bash", {"command": "grep -l x src/a.py"}, []),
        ("execute_bash", {"command": "head -3 README.md; tail pyproject.toml"}, ["README.md", "pyproject.toml"]),
        ("shell", {"command": ["bash", "-lc", "cat docs/conf.py"]}, ["docs/conf.py"]),
        ("shell", {"command": ["rg", "-n", "requests", "setup.py", "pyproject.toml"]}, ["setup.py", "pyproject.toml"]),
        ("shell", {"command": ["ls", "src"]}, []),
        ("bash", {"command": "jq -r .version package.json"}, ["package.json"]),
        ("bash", {"command": "jq --arg k v '.[$k]' package.json"}, ["package.json"]),
        ("bash", {"command": "jq -n 1"}, []),
        # SWE-agent
        ("open", {"path": "src/a.py", "line_number": 3}, ["src/a.py"]),
        ("search_file", {"search_term": "x", "file": "setup.py"}, ["setup.py"]),
        ("search_dir", {"search_term": "x", "dir": "src"}, []),
        ("find_file", {"file_name": "a.py"}, []),
        # OpenHands str_replace_editor
        ("str_replace_editor", {"command": "view", "path": "src/a.py", "view_range": [1, 9]}, ["src/a.py"]),
        ("str_replace_editor", {"command": "view", "path": "src"}, []),
        ("str_replace_editor", {"command": "str_replace", "path": "src/b.py"}, ["src/b.py"]),
        # Codex apply_patch
        ("apply_patch", {"input": "*** Begin Patch\n*** Update File: src/a.py\n*** End Patch"}, ["src/a.py"]),
    ],
)
def test_the_builder_stores_what_each_tool_form_opens(name, inp, opens):
    assert build.opens_of_call({"name": name, "input": inp}, TRACKED) == opens


def sess(session: str, tool: str, inp: dict, text: str | None, intent, targets, opens=()) -> TraceLine:
    t = line(tool, inp, text, intent, targets, opens)
    return TraceLine({**t.params, "sessionId": session}, t.intent, t.targets, t.opens, t.dirs)


def test_the_session_aware_reading_subtracts_what_earlier_calls_of_the_session_showed():
    trace = [
        # an earlier call opens src/lib.rs: a later label expecting it in that session expects silence
        sess("a", "Read", {"file_path": "src/lib.rs"}, "", None, (), ("src/lib.rs",)),
        sess("a", "Grep", {"pattern": "p"}, "tests/test_a.rs:1", "Symbol", ("src/lib.rs",)),
        # ... and a label expecting it and another file expects the other file
        sess("a", "Grep", {"pattern": "q"}, "", "Usage", ("src/lib.rs", "src/context.rs")),
        # another session had not seen it: the label stands
        sess("b", "Grep", {"pattern": "p"}, "tests/test_a.rs:1", "Symbol", ("src/lib.rs",)),
        # an earlier listing of six files or more counts, however many it listed
        sess("c", "Grep", {"pattern": "z"}, "\n".join(f"src/m{i}.rs:1" for i in range(6)), None, ()),
        sess("c", "Grep", {"pattern": "m0"}, "", "Symbol", ("src/m0.rs",)),
        # while the triggering call's own listing of six or more is one a note may rank
        sess("d", "Grep", {"pattern": "z"}, "\n".join(f"src/m{i}.rs:1" for i in range(6)), "Usage", ("src/m0.rs",)),
        # the triggering call's own listing of five or fewer: the echo-aware rule
        sess("e", "Grep", {"pattern": "y"}, "src/lib.rs:1", "Symbol", ("src/lib.rs",)),
    ]
    out = session_aware(trace, FILES)
    assert [(t.intent, t.targets) for t in out] == [
        (None, ()),
        (None, ()),
        ("Usage", ("src/context.rs",)),
        ("Symbol", ("src/lib.rs",)),
        (None, ()),
        (None, ()),
        ("Usage", ("src/m0.rs",)),
        (None, ()),
    ]
    # the echo-aware reading of the same trace reads each call alone
    assert [(t.intent, t.targets) for t in echo_aware(trace, FILES)][1:4] == [
        ("Symbol", ("src/lib.rs",)),
        ("Usage", ("src/lib.rs", "src/context.rs")),
        ("Symbol", ("src/lib.rs",)),
    ]


def test_an_owner_label_expecting_a_licence_expects_the_ownership_files_or_silence():
    owned = [*FILES, "LICENSE-MIT", "COPYING", "Cargo.toml", ".github/CODEOWNERS", "AUTHORS.md", "tests/AUTHORS"]
    bare = [*FILES, "LICENSE", "Cargo.toml"]
    trace = [
        sess(
            "a",
            "Grep",
            {"pattern": "authors", "path": "Cargo.toml"},
            "",
            "Owner",
            ("Cargo.toml", "LICENSE-MIT"),
            ("Cargo.toml",),
        ),
        sess("b", "Grep", {"pattern": "Copyright"}, "", "Owner", ("COPYING",)),
        # not a licence: as labelled; nor an Owner label
        sess("c", "Grep", {"pattern": "x"}, "", "Owner", ("tests/test_a.rs",)),
        sess("d", "Grep", {"pattern": "license"}, "", "Doc", ("LICENSE-MIT",)),
    ]
    assert [(t.intent, t.targets) for t in session_aware(trace, owned)] == [
        # the manifest the call searched inside is an echo; the licence reads as the ownership
        # files at the root and in .github/ (not a test fixture's AUTHORS)
        ("Owner", (".github/CODEOWNERS", "AUTHORS.md")),
        ("Owner", (".github/CODEOWNERS", "AUTHORS.md")),
        ("Owner", ("tests/test_a.rs",)),
        ("Doc", ("LICENSE-MIT",)),
    ]
    trace = [sess("a", "Grep", {"pattern": "Copyright"}, "", "Owner", ("LICENSE",))]
    assert [(t.intent, t.targets) for t in session_aware(trace, bare)] == [(None, ())]
    # an ownership file an earlier call of the session showed is an echo too
    trace = [
        sess("a", "Read", {"file_path": "AUTHORS.md"}, "", None, (), ("AUTHORS.md",)),
        sess("a", "Grep", {"pattern": "Copyright"}, "", "Owner", ("COPYING",)),
    ]
    assert [(t.intent, t.targets) for t in session_aware(trace, owned)][1] == ("Owner", (".github/CODEOWNERS",))
