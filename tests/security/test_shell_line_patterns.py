"""A tool call's shell line is untrusted (the agent writes it, often from what it read in the
workspace): what its parse costs (``suggester/parse/shell.py``) is linear in its length. The
here-document pattern read a ``<<`` start that no line end followed by trying every length of its
delimiter, each time reading the rest of the text for a line end: a 4,000-character line (the
most of a command read), ``<<`` and a word, held the event loop 0.3-0.7 s, twice a call (the
query and the shell words both take the documents out); ``<<A `` repeated, 0.1-0.2 s. Run in a
forked child, so a regression fails instead of hanging the run."""

from __future__ import annotations

import pytest
from dsh_sidecar.suggester.parse import budget, shell
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


#: Command substitutions inside one double-quoted word: one shell token, so the head's token bound
#: (``shell.MAX_SHELL_TOKENS``) does not cut it and it nests one level only; bashlex starts a parser
#: for each (~0.3-0.5 ms each, ~5 units of the work budget): 1,600 of them fit the 8,192 units and
#: held the event loop 0.45-0.65 s a call.
SUBSTITUTIONS = {
    "backticks": 'python3 -c "' + "`*" * 1994 + '"',
    "dollar-paren": 'echo "' + "$(a)" * 998 + '"',
    "after-a-quote": "echo 'x' \"" + "`a`" * 1300 + '"',
}


@pytest.fixture
def started(monkeypatch) -> list[int]:
    """One entry for every bashlex parser started from here on (the guards installed first, then
    the count around them), with the shell words' cache emptied."""
    budget.install()
    from bashlex import parser

    counts: list[int] = []
    init = parser._parser.__init__

    def counted(self, *args, **kwargs):
        counts.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(parser._parser, "__init__", counted)
    shell.shell_words.cache_clear()
    return counts


@pytest.mark.parametrize("line", SUBSTITUTIONS.values(), ids=SUBSTITUTIONS.keys())
def test_a_line_starts_a_bounded_number_of_bashlex_parsers(line, started):
    words = shell.shell_words(line)
    assert len(started) <= budget.MAX_PARSERS + 1 == 65
    head = shell._shell_head(shell.split_heredocs(line)[0])[0]
    assert words == tuple(tuple(w) for w in shell._shlex_commands(head))  # refused: the fallback's words


def test_a_line_of_one_command_a_line_is_cut_at_its_fiftieth_newline(started):
    """A newline ends a command as ``;`` does: 2,000 one-line commands are read up to the
    separator that would start the 51st (``shell.MAX_SHELL_COMMANDS``), each line a command of
    its own, and a plain list's split reads them without any bashlex parser (they once started
    65 and were refused, the fallback's one command of 2,000 words; then 50, one a command)."""
    assert shell._shell_head("a\n" * 2000)[0] == "a\n" * 49 + "a"
    assert shell.shell_words("a\n" * 2000) == (("a",),) * 50
    assert started == []


def test_a_line_within_the_parser_bound_is_still_read_by_bashlex():
    line = 'echo "' + "$(a)" * 63 + '"'
    trees = budget.parse_bounded(line)
    assert len(trees) == 1
    with pytest.raises(budget.ParseRefused, match="parsers"):
        budget.parse_bounded('echo "' + "$(a)" * 64 + '"')
    assert shell.shell_words("cd src && ls $(dirname $(which python)) | head") == (
        ("cd", "src"),
        ("which", "python"),
        ("dirname", "$(which python)"),
        ("ls", "$(dirname $(which python))"),
        ("head",),
    )


#: One word of a shell call given as an argv list (``{"command": ["grep", "-rn", WORD, "."]}``):
#: a string command is read up to ``MAX_INPUT_CHARS`` (4,000), a list's words were read whole, and
#: the search rules' code-name test (``[A-Z]{2,}[a-z]``, tried at every position, each time to
#: the end of the word) was quadratic in it: 15 MB of capitals held serve's event loop for good
#: (``dsh/postExecute`` and a ``dsh/status`` after it unanswered for 290 s, load ~40).
ARGV_WORD = "A" * 2_000_000


@pytest.mark.parametrize(
    "command",
    [
        ["grep", "-rn", ARGV_WORD, "."],
        ["find", ".", "-name", ARGV_WORD, "-exec", "grep", ARGV_WORD, "{}", ";"],
        ["xargs", "grep", ARGV_WORD],
    ],
    ids=["grep", "find-exec", "xargs"],
)
def test_an_argv_lists_long_word_is_read_as_far_as_a_strings(command):
    from dsh_sidecar.suggester import evidence
    from dsh_sidecar.suggester.evidence.vocabulary import Workspace
    from dsh_sidecar.suggester.parse import parse_call

    def decide() -> None:
        q = parse_call("Bash", {"command": command}, "out")
        assert q.patterns == ["A" * 4000]
        evidence.weights(q, Workspace())

    finishes_in_child(decide, timeout=20)
