"""The labelled calls read with the help-not-agreement rule (``evaluation/labels.py``): a label
expecting only files its own call listed (five or fewer) expects silence; every other label
stays as it was labelled."""

from __future__ import annotations

from dsh_sidecar.evaluation.labels import echo_aware
from dsh_sidecar.evaluation.trace import TraceLine

FILES = ["src/lib.rs", "src/context.rs", "tests/test_a.rs", "tests/test_b.rs"] + [f"src/m{i}.rs" for i in range(6)]


def line(tool: str, inp: dict, text: str | None, intent: str | None, targets: tuple[str, ...]) -> TraceLine:
    params = {"sessionId": "s", "turn": 1, "tool": {"name": tool, "input": inp}}
    if text is not None:
        params["result"] = {"isError": False, "text": text}
    return TraceLine(params, intent, targets)


def test_a_label_expecting_only_what_its_call_listed_expects_silence():
    trace = [
        # the grep listed the one file the label expects: an echo
        line("Grep", {"pattern": "pub trait Context", "path": "src"}, "src/lib.rs:616", "Symbol", ("src/lib.rs",)),
        # bare names relative to the call's path
        line("Grep", {"pattern": "x", "path": "tests"}, "test_a.rs\ntest_b.rs", "Test", ("tests/test_a.rs",)),
        # the label expects a file the listing did not show: kept
        line("Grep", {"pattern": "Context"}, "src/lib.rs:3", "Symbol", ("src/context.rs",)),
        # one of two expected files not shown: kept
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
        ("Usage", ("src/lib.rs", "src/context.rs")),
        ("Usage", ("src/m0.rs",)),
        ("Symbol", ("src/lib.rs",)),
        (None, ()),
    ]
    assert [t.params for t in out] == [t.params for t in trace]
