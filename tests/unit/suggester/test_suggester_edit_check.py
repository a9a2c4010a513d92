"""A shell line that edits a file in place and searches that same file checks its own edit
(``suppressed editing``), and one that searches and reads only paths outside the workspace asks
nothing of it (``suppressed outside``); neither silences a question the line asks of the
workspace's files: an in-place edit's own operand is no search of it, and a read inside counts.
(``triggers/search.py``, ``paths.py``)."""

from __future__ import annotations

import pytest
from support.suggester import ledger_messages, make_suggester, post
from support.trees import copy_fixture

#: The question the line asks, answered on its own (the fixture's version lives in the package).
QUESTION = ("grep -rn __version__ src", "suggest Version 0.99 1 targets src/demo_pkg/__init__.py")


@pytest.fixture
def pyproj(tmp_path, dsh_home):
    root = tmp_path / "pyproj"
    copy_fixture("pyproj", root)
    return make_suggester(root, dsh_home, warm=True)


def _decisions(s, lines, command: str, session: str) -> tuple[int, list[str]]:
    before = len(lines)
    notes = post(s, "Bash", {"command": command}, "", session=session)
    return len(notes), [m for m in ledger_messages(lines[before:]) if m.startswith(("suggest", "suppressed"))]


@pytest.mark.parametrize(
    "edit",
    [
        "sed -i 's/x/y/' README.md; ",  # a doc page edited, then a question about the code
        "sed -i s/a/b/ docs/index.md && ",
        "perl -pi -e 's/a/b/' README.md && ",
    ],
)
def test_an_in_place_edit_of_another_file_does_not_silence_the_lines_question(pyproj, edit):
    s, lines = pyproj
    command, line = QUESTION
    assert _decisions(s, lines, command, "alone") == (1, [line])
    assert _decisions(s, lines, edit + command, "edited") == (1, [line])


def test_an_in_place_edit_checked_by_a_search_of_that_file_is_still_suppressed(pyproj):
    s, lines = pyproj
    command = "sed -i 's/__version__ = .*/__version__ = \"2\"/' src/demo_pkg/__init__.py && grep -rn __version__ src/demo_pkg/__init__.py"
    assert _decisions(s, lines, command, "check") == (0, ["suppressed editing Version"])


@pytest.mark.parametrize(
    ("command", "text", "line"),
    [
        # a search of a file outside, then a read of a file the workspace lacks (a wrong guess
        # of where the dependencies are declared): named where they are, as the search alone
        # of that missing file is (`grep -rn dependencies setup.py`)
        (
            "grep -rn dependencies /tmp/setup.py; cat setup.cfg",
            "cat: setup.cfg: No such file or directory",
            (1, ["suggest Dependency 0.77 1 targets pyproject.toml"]),
        ),
        (
            "grep -rn dependencies /tmp/x; cat setup.py",
            "cat: setup.py: No such file or directory",
            (1, ["suggest Dependency 0.92 1 targets pyproject.toml"]),
        ),
        ("grep -rn __version__ /tmp/notes.txt; grep -rn __version__ src", "", (1, [QUESTION[1]])),
        # only outside: the read too
        ("grep -rn dependencies /tmp/x; cat /tmp/setup.cfg", "", (0, ["suppressed outside Dependency"])),
    ],
)
def test_a_search_outside_silences_a_line_only_when_all_it_reads_is_outside(pyproj, command, text, line):
    s, lines = pyproj
    before = len(lines)
    notes = post(s, "Bash", {"command": command}, text, is_error=bool(text), session="s")
    decided = [m for m in ledger_messages(lines[before:]) if m.startswith(("suggest", "suppressed"))]
    assert (len(notes), decided) == line
