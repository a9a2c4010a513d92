"""A tool call's shell line is untrusted (the agent writes it, often from what it read in the
workspace): what its parse costs (``suggester/parse/shell.py``) is linear in its length. The
here-document pattern read a ``<<`` start that no line end followed by trying every length of its
delimiter, each time reading the rest of the text for a line end: a 4,000-character line (the
most of a command read), ``<<`` and a word, held the event loop 0.3-0.7 s, twice a call (the
query and the shell words both take the documents out); ``<<A `` repeated, 0.1-0.2 s. Run in a
forked child, so a regression fails instead of hanging the run."""

from __future__ import annotations

import pytest
from dsh_sidecar.suggester.parse.shell import Heredoc, split_heredocs
from support.secutil import finishes_in_child


@pytest.mark.parametrize(
    "line",
    [
        "<<" + "a" * 400_000,
        "cat <<-" + "EOF" * 130_000,
        "<<A " * 100_000,
        "x\n" + "cat <<E " * 50_000,
        "<<'" + "a" * 400_000,
    ],
    ids=["one-delimiter", "dash", "many-starts", "after-a-line", "open-quote"],
)
def test_a_document_start_without_a_line_end_is_read_once(line):
    finishes_in_child(lambda: split_heredocs(line), timeout=20)


def test_a_document_start_without_a_line_end_leaves_the_line_as_it_is():
    for line in ["cat <<EOF", "<<A <<B", "x\ncat <<EOF > f", "cat <<'EOF"]:
        assert split_heredocs(line) == (line, ())


def test_documents_are_still_taken_out():
    line = "cat <<'EOF' > repro.py && python3 repro.py\nimport x\nEOF\ncat <<A <<B\nbody\n"
    assert split_heredocs(line) == (
        "cat <<EOF > repro.py && python3 repro.py\nEOF\ncat <<A <<B\nA\n",
        (
            Heredoc("cat <<EOF > repro.py", "import x\n", True),
            Heredoc("cat <<A <<B", "body\n", False),
        ),
    )
