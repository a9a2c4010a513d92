"""A workspace name in what the model reads is escaped, never shortened: a terminal sequence in
a file name shows as its escape (the name quoted), so the note cannot point at another, plain
path that may exist (``src/pkg/\\x1b[31mretry\\x1b[0m.py`` is not ``src/pkg/retry.py``)."""

from __future__ import annotations

from dsh_sidecar.escape import display_name
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.notes import make_note

EVIL = "src/pkg/\x1b[31mretry\x1b[0m.py"
SHOWN = "src/pkg/\\x1b[31mretry\\x1b[0m.py"


def test_a_terminal_sequence_in_a_name_is_escaped_not_stripped():
    assert display_name(EVIL) == f'"{SHOWN}"'
    assert display_name("src/pkg/retry.py") == "src/pkg/retry.py"
    note = make_note("Symbol", None, [Target(EVIL, "defines retry", 1.0)])
    assert note.text == f"search-suggester: in this repository, look here for symbol:\n- {SHOWN} — defines retry"
    assert note.source.summary == f"Symbol: {SHOWN}"
    assert note.source.targets == [EVIL]  # the exact name, for a harness that opens it
    assert note.source.display_targets == [f'"{SHOWN}"']
    assert "\x1b" not in note.text + note.source.summary


JAVA = "src/main/java/org/apache/commons/configuration2/tree/xpath/"
JAVA_NAMES = [
    "XPathExpressionEngine",
    "ConfigurationNodePointerFactory",
    "ConfigurationNodeIteratorChildren",
    "ConfigurationNodeIteratorAttribute",
    "ConfigurationAttributePointer",
]


def test_deep_paths_of_one_folder_are_all_listed_the_later_ones_by_name():
    """Five files of one deep Java package: whole paths fit four lines in the 600 characters;
    the note lists all five, each after the first by its name and ``(same folder as above)``
    (never a shortened path), with the exact paths in ``targets``."""
    targets = [Target(f"{JAVA}{n}.java", "defines the searched name", 1.0, "definitions") for n in JAVA_NAMES]
    note = make_note("Symbol", None, targets)
    assert note.text == "\n".join(
        [
            "search-suggester: in this repository, look here for the definition of the searched name:",
            f"- {JAVA}XPathExpressionEngine.java — defines the searched name",
            *(f"- {n}.java (same folder as above) — defines the searched name" for n in JAVA_NAMES[1:]),
        ]
    )
    assert note.source.targets == [t.path for t in targets]
    assert note.source.display_targets == [t.path for t in targets]


def test_whole_paths_stay_when_they_fit_or_a_name_reads_like_the_short_form():
    few = [Target(f"{JAVA}{n}.java", "defines the searched name", 1.0, "definitions") for n in JAVA_NAMES[:3]]
    assert "same folder" not in make_note("Symbol", None, few).text
    other = [Target(f"src/main/java/org/x{i}/{'Y' * 40}{i}.java", "defines the searched name", 1.0) for i in range(5)]
    assert "same folder" not in make_note("Symbol", None, other).text  # no line above in its folder
    reason = "defines the searched name"
    odd = [Target(f"{JAVA}{n}.java", reason, 1.0) for n in JAVA_NAMES]
    odd.insert(1, Target("x (same folder as above)", reason, 1.0))  # a file of that name, at the top
    note = make_note("Symbol", None, odd)
    assert note.text.count("same folder") == 1  # only that file's own name
    assert note.source.targets == [t.path for t in odd[:4]]


def test_a_name_holding_the_words_anywhere_keeps_whole_paths():
    """A file whose name holds ``(same folder as above)`` anywhere, in any case or spacing,
    keeps the note to whole paths: its line would otherwise read like a short-form line of
    another file (``- x.java (same folder as above) — y``: an ``x.java`` beside the line above)."""
    reason = "defines the searched name"
    for name in (
        "x.java (same folder as above) — y.java",
        "x (same folder as above).java",
        "x.java (Same Folder\u00a0as  above)",
    ):
        odd = [Target(f"{JAVA}{n}.java", reason, 1.0) for n in JAVA_NAMES]
        odd.insert(1, Target(f"{JAVA}{name}", reason, 1.0))
        note = make_note("Symbol", None, odd)
        assert "(same folder as above) —" not in note.text.replace(name, ""), name
        assert note.source.targets == [t.path for t in odd[:4]], name
