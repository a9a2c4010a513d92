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
