"""The shell parse entry point of the query model (``suggester/query.py``: ``shell_words``):
plain lines take the ``shlex.split`` fast path and must give exactly the words bashlex gives
(the answers of a call never depend on which path parsed it); every other line goes through
bashlex; parses are cached per distinct line."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from dsh_sidecar.suggester import query
from dsh_sidecar.suggester.query import _bashlex_commands, _plain_words, shell_words, split_commands
from hypothesis import given, settings
from hypothesis import strategies as st

PLAIN = [
    "grep -rn foo .",
    "rg -l resolve_color_default",
    "grep -rli 'retry timeout' --include=*.py src",
    'grep -n "def main" src/app.py',
    "find . -name '*.yaml' -path '*config*'",
    "git grep -n WSIReader",
    "ls .github/workflows",
    "sed -n 10,20p setup.cfg",
    "grep -rn --include='*_test.go' 'RegisterFlag(' .",
    "grep '' empty.txt",
    "grep -rnE 'retry|backoff' src",
    'grep -n "fn main() {" src/main.rs',
    "jq -r .version package.json",
]

NOT_PLAIN = [
    "grep -rn foo . | head",  # operator
    "cat $(git ls-files)",  # substitution
    "grep x > out.txt",  # redirection
    "FOO=1 make test",  # assignment
    "X+=1 y",  # append assignment
    "for f in a b; do grep x $f; done",  # compound
    "if true",  # reserved word first
    'grep -r "\\.pylint\\.d" .',  # escape
    "grep -n 'a\"b' x",  # both quote kinds
    "grep 'a<(b' x",  # bashlex refuses a quoted process substitution
    "grep 'a''b' x",  # two quoted parts in one word
    "grep foo # comment",
    "grep x ~/notes",
    "",
    "   ",
]


@pytest.mark.parametrize("line", PLAIN)
def test_plain_lines_take_the_fast_path_with_bashlex_words(line: str) -> None:
    words = _plain_words(line)
    assert words is not None
    assert _bashlex_commands(line) == [words]
    assert shell_words(line) == (tuple(words),)


@pytest.mark.parametrize("line", NOT_PLAIN)
def test_other_lines_are_parsed_by_bashlex_or_its_fallback(line: str) -> None:
    assert _plain_words(line) is None
    expected = _bashlex_commands(line) or query._shlex_commands(line)
    assert shell_words(line) == tuple(tuple(w) for w in expected)


def test_exact_words_of_a_plain_line() -> None:
    assert shell_words("grep -rli 'retry timeout' --include=*.py src") == (
        ("grep", "-rli", "retry timeout", "--include=*.py", "src"),
    )


def test_a_pipeline_keeps_its_commands_and_substitutions() -> None:
    assert shell_words("grep -rn foo . | head -3") == (("grep", "-rn", "foo", "."), ("head", "-3"))
    assert shell_words("cat $(git ls-files)") == (("git", "ls-files"), ("cat", "$(git ls-files)"))


_ALPHABET = "ab_Z09 \t\"'.,:/@%+=^*?[]-\\$`!#~;|&<>(){}"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=40))
def test_fast_path_words_equal_bashlex_words(line: str) -> None:
    words = _plain_words(line)
    if words is not None:
        assert _bashlex_commands(line) == [words]


def test_repeated_lines_are_parsed_once() -> None:
    shell_words.cache_clear()
    line = "grep -rn 'cached line' src | head"
    first = shell_words(line)
    assert shell_words(line) is first
    info = shell_words.cache_info()
    assert (info.hits, info.misses, info.maxsize) == (1, 1, query.PARSE_CACHE_SIZE)


def test_split_commands_hands_out_fresh_word_lists() -> None:
    line = "cd src && grep -rn needle ."
    one = split_commands(line)
    two = split_commands(line)
    assert [(c.name, c.args, c.cwd) for c in one] == [("grep", ["-rn", "needle", "."], "src")]
    one[0].args.append("mutated")
    assert two[0].args == ["-rn", "needle", "."]
    assert split_commands(line)[0].args == ["-rn", "needle", "."]


def test_bashlex_is_imported_by_the_first_line_that_needs_it():
    """In a fresh interpreter: building the sidecar's modules and parsing plain lines never
    imports bashlex (its grammar tables cost a spawned sidecar ~1 G instructions)."""
    code = textwrap.dedent(
        """
        import sys
        import dsh_sidecar.sidecar
        from dsh_sidecar.suggester.query import shell_words
        print("bashlex" in sys.modules)
        print(shell_words("grep -rn foo ."), "bashlex" in sys.modules)
        print(shell_words("ls src | head -3"), "bashlex" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.splitlines() == [
        "False",
        "(('grep', '-rn', 'foo', '.'),) False",
        "(('ls', 'src'), ('head', '-3')) True",
    ]
