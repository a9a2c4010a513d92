"""A wrong guess after the session was shown where the intent lives: ``cat go.sum`` where there is
none, after a listing showed ``go.mod``, would name ``go.mod`` back — the agent was shown it, so
the note is held back as ``suppressed seen <Intent>`` (``filters.apply``, the wrong-guess
trigger's ``seen_suppresses``). A session that was not shown the best target still gets the note.
Small generated trees of four ecosystems, the real sidecar, one session of calls, exact notes and
ledger lines; and :meth:`SessionEvidence.shown_before` itself."""

from __future__ import annotations

import pytest
from dsh_protocol import PostExecuteParams
from dsh_sidecar.suggester.session import MAX_SEEN, SessionEvidence
from support.suggester import ledger_messages, sidecar_on_tree

GO = {"go.mod": "module example.com/m\n\ngo 1.22\n\nrequire golang.org/x/text v0.14.0\n", "m.go": "package m\n"}
RUST = {
    "Cargo.toml": '[package]\nname = "m"\nversion = "1.0.0"\n\n[dependencies]\nserde = "1"\n',
    "src/lib.rs": "pub fn f() {}\n",
}
PYTHON = {
    "pyproject.toml": '[project]\nname = "m"\nversion = "1.0"\ndependencies = ["httpx>=0.27"]\n',
    "m/__init__.py": "",
}
DOTNET = {
    "Directory.Packages.props": (
        '<Project>\n  <ItemGroup>\n    <PackageVersion Include="xunit" Version="2.9.0" />\n  </ItemGroup>\n</Project>\n'
    ),
    "src/M/M.csproj": '<Project Sdk="Microsoft.NET.Sdk">\n</Project>\n',
    "src/M/M.cs": "namespace M;\npublic class C {}\n",
}

#: (tree, the wrong guess: tool, input, result text, is_error; its note when the session was not
#: shown the best target)
GUESSES = {
    "go.sum read": (
        GO,
        ("bash", {"command": "cat go.sum"}, "cat: go.sum: No such file or directory", True),
        ("Dependency", ["go.mod"]),
    ),
    "Cargo.lock listed": (
        RUST,
        ("bash", {"command": "ls Cargo.lock"}, "ls: cannot access 'Cargo.lock': No such file or directory", True),
        ("Dependency", ["Cargo.toml"]),
    ),
    "setup.py read": (
        PYTHON,
        ("bash", {"command": "cat setup.py"}, "cat: setup.py: No such file or directory", True),
        ("Dependency", ["pyproject.toml"]),
    ),
    "packages.config found nowhere": (
        DOTNET,
        ("bash", {"command": "find . -name packages.config -o -name paket.dependencies"}, "", False),
        ("Dependency", ["Directory.Packages.props"]),
    ),
}

#: an earlier call that showed each tree's root (the best target among its files)
ROOT_LISTING = {
    "go.sum read": "go.mod\nm.go",
    "Cargo.lock listed": "Cargo.toml\nsrc",
    "setup.py read": "m\npyproject.toml",
    "packages.config found nowhere": "Directory.Packages.props\nsrc",
}


def _params(session: str, name: str, inp: dict, text: str, is_error: bool) -> PostExecuteParams:
    return PostExecuteParams.model_validate(
        {
            "sessionId": session,
            "turn": 1,
            "tool": {"name": name, "input": inp},
            "result": {"isError": is_error, "text": text},
            "waitMs": 30_000,
        }
    )


def _session(tmp_path, tree: dict[str, str], calls: list[tuple[str, dict, str, bool]]):
    """The notes ``(intent, targets)`` and the decision lines of the last of ``calls``, all made
    in one session of a real sidecar over ``tree``."""
    sc, lines = sidecar_on_tree(tmp_path, tree)
    try:
        for name, inp, text, is_error in calls[:-1]:
            sc.post_execute(_params("one", name, inp, text, is_error))
        before = len(lines)
        notes = sc.post_execute(_params("one", *calls[-1])).additional_contexts
        messages = ledger_messages([ln.split("] ", 1)[-1] for ln in lines[before:]])
    finally:
        sc.shutdown()
    decided = [m for m in messages if m.startswith(("suggest", "suppressed", "abstained"))]
    return [(n.source.intent, n.source.targets) for n in notes], decided


@pytest.mark.parametrize("case", list(GUESSES))
def test_a_wrong_guess_names_the_best_target_to_a_session_not_shown_it(tmp_path, case):
    tree, guess, note = GUESSES[case]
    got, decided = _session(tmp_path, tree, [guess])
    assert got == [note]
    assert decided[-1].startswith(f"suggest {note[0]} ")


@pytest.mark.parametrize("case", list(GUESSES))
def test_a_wrong_guess_after_the_session_was_shown_the_best_target_is_suppressed_seen(tmp_path, case):
    tree, guess, note = GUESSES[case]
    listing = ("bash", {"command": "ls"}, ROOT_LISTING[case], False)
    got, decided = _session(tmp_path, tree, [listing, guess])
    assert got == []
    assert decided == [f"suppressed seen {note[0]}"]


def test_a_wrong_guess_after_a_listing_of_other_files_still_names_the_manifest(tmp_path):
    # the earlier call showed the code only: go.mod is news to the session
    listing = ("bash", {"command": "ls *.go"}, "m.go", False)
    got, decided = _session(tmp_path, GO, [listing, GUESSES["go.sum read"][1]])
    assert got == [("Dependency", ["go.mod"])]
    assert decided[-1].startswith("suggest Dependency ")


def test_a_search_is_not_held_back_by_what_the_session_was_shown(tmp_path):
    # the rule is the wrong guess's: a search inside the manifest after a listing showed it is
    # decided as before (its own output answered it: an echo)
    listing = ("bash", {"command": "ls"}, "go.mod\nm.go", False)
    search = ("bash", {"command": "grep -n require go.mod"}, "5:require golang.org/x/text v0.14.0", False)
    _, decided = _session(tmp_path, GO, [listing, search])
    assert decided == ["suppressed echo Dependency"]


def test_shown_before_counts_earlier_calls_only():
    ev = SessionEvidence()
    ev.showed(["a.py"])
    assert not ev.shown_before("a.py")  # shown by the call being decided, not before it
    ev.showed(["a.py", "b.py"])
    assert ev.shown_before("a.py")
    assert not ev.shown_before("b.py")
    ev.showed([])
    assert ev.shown_before("a.py") and ev.shown_before("b.py")
    assert not ev.shown_before("c.py")


def test_shown_before_is_bounded_by_the_seen_files():
    ev = SessionEvidence()
    ev.showed([f"f{i}.py" for i in range(MAX_SEEN + 10)])
    ev.showed(["f0.py", f"f{MAX_SEEN + 5}.py"])
    assert len(ev.seen) == MAX_SEEN
    assert ev.shown_before("f0.py")
    assert not ev.shown_before(f"f{MAX_SEEN + 5}.py")  # never remembered: not counted as shown
