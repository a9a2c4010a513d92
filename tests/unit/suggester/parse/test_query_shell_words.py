"""The shell parse entry point of the query model (``suggester/parse/shell.py``: ``shell_words``):
plain lines take the ``shlex.split`` fast path and must give exactly the words bashlex gives
(the answers of a call never depend on which path parsed it); every other line goes through
bashlex; parses are cached per distinct line."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from dsh_sidecar.suggester.parse import parse_call, shell, tools
from dsh_sidecar.suggester.parse.shell import (
    _bashlex_commands,
    _plain_commands,
    _plain_words,
    shell_words,
    split_commands,
)
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
    "grep x" + " " * 64 + "> out.txt",  # a long run of blanks before what is not plain (read once, not split every way)
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
    expected = _bashlex_commands(line) or shell._shlex_commands(line)
    assert shell_words(line) == tuple(tuple(w) for w in expected)


PLAIN_LISTS = [
    "grep -rn foo . | head",
    "ls -R | grep -n ':' | head -n 20",
    'cat xarray/core/utils.py | grep -A 10 "def is_duck_array"',
    "nl -ba x.py | sed -n '/def f/,/return/p'",
    "cd src && grep -rn needle .",
    "git status; git diff",
    "make || make clean",
    "echo done && git add -A && git diff --cached",
    "a|b&&c||d;e",
    "ls a\nls b",  # a newline ends a command as ';' does
    "git status\ngit diff\n",  # the text's last newline too
    "ls a\n\n  ls b | head",
]

NOT_PLAIN_LISTS = [
    "grep x |",  # trailing operator
    "; grep x",  # empty command
    "grep x ;; ls",
    "grep x & ls",  # background
    "grep x |& head",
    "ls | FOO=1 grep x",  # assignment
    "ls; if true",  # reserved word first
    "ls | grep 'a' | grep \"b\"",  # both quote kinds in the line
    "ls | grep $HOME",  # expansion
    "ls | grep x > out",  # redirection
    "ls |\ngrep x",  # a newline after an operator continues the command
    "ls a;\nls b",  # an empty command between ';' and the newline
    "\nls a",  # an empty first command
]


@pytest.mark.parametrize("line", PLAIN_LISTS)
def test_plain_lists_take_the_fast_path_with_bashlex_words(line: str) -> None:
    commands = _plain_commands(line)
    assert commands is not None and len(commands) > 1
    assert _bashlex_commands(line) == commands
    assert shell_words(line) == tuple(tuple(w) for w in commands)


@pytest.mark.parametrize("line", NOT_PLAIN_LISTS)
def test_other_lists_are_parsed_by_bashlex_or_its_fallback(line: str) -> None:
    assert _plain_commands(line) is None
    expected = _bashlex_commands(line) or shell._shlex_commands(line)
    assert shell_words(line) == tuple(tuple(w) for w in expected)


def test_exact_commands_of_a_plain_pipeline() -> None:
    assert shell_words('cat a.py | grep -n "def where" && echo ok') == (
        ("cat", "a.py"),
        ("grep", "-n", "def where"),
        ("echo", "ok"),
    )


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


_LIST_ALPHABET = "ab_Z09 -='\"|&;\t\n"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_LIST_ALPHABET, max_size=40) | st.text(alphabet=_ALPHABET, max_size=40))
def test_fast_path_commands_equal_bashlex_commands(line: str) -> None:
    commands = _plain_commands(line)
    if commands is not None:
        assert _bashlex_commands(line) == commands


def test_repeated_lines_are_parsed_once() -> None:
    shell_words.cache_clear()
    line = "grep -rn 'cached line' src | head"
    first = shell_words(line)
    assert shell_words(line) is first
    info = shell_words.cache_info()
    assert (info.hits, info.misses, info.maxsize) == (1, 1, shell.PARSE_CACHE_SIZE)


def test_split_commands_hands_out_fresh_word_lists() -> None:
    line = "cd src && grep -rn needle ."
    one = split_commands(line)
    two = split_commands(line)
    assert [(c.name, c.args, c.cwd) for c in one] == [("grep", ["-rn", "needle", "."], "src")]
    one[0].args.append("mutated")
    assert two[0].args == ["-rn", "needle", "."]
    assert split_commands(line)[0].args == ["-rn", "needle", "."]


@pytest.mark.slow
def test_bashlex_is_imported_by_the_first_line_that_needs_it():
    """In a fresh interpreter: building the sidecar's modules and parsing plain lines never
    imports bashlex (its grammar tables cost a spawned sidecar ~1 G instructions)."""
    code = textwrap.dedent(
        """
        import sys
        import dsh_sidecar.sidecar
        from dsh_sidecar.suggester.parse.shell import shell_words
        print("bashlex" in sys.modules)
        print(shell_words("grep -rn foo ."), "bashlex" in sys.modules)
        print(shell_words("ls src | head -3"), "bashlex" in sys.modules)
        print(shell_words("ls src | head -3 > out"), "bashlex" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.splitlines() == [
        "False",
        "(('grep', '-rn', 'foo', '.'),) False",
        "(('ls', 'src'), ('head', '-3')) False",  # a plain pipeline: no bashlex
        "(('ls', 'src'), ('head', '-3')) True",
    ]


def _spy_bashlex(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import bashlex

    calls: list[str] = []
    real = bashlex.parse
    monkeypatch.setattr(bashlex, "parse", lambda line, *a, **k: calls.append(line) or real(line, *a, **k))
    shell_words.cache_clear()
    return calls


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        (";".join(["a$b"] * 50), ";".join(["a$b"] * 50)),  # 50 commands: all of it
        ("|".join(["a$b"] * 51), "|".join(["a$b"] * 50)),  # cut before the 50th separator
        ("echo $(a)" + " x" * 300, "echo $(a)" + " x" * 245),  # cut after the 250th token
        ("echo " + "$(" * 8 + "x" + ")" * 8, "echo " + "$(" * 8 + "x" + ")" * 8),
        ("echo " + "$(" * 9 + "x" + ")" * 9, None),
        ("cat " + "<(" * 9 + "x" + ")" * 9, None),
        ("echo " + "${a:-" * 9 + "x" + "}" * 9, None),
        ("(((((((((a)))))))))", None),
        ("(a) (b) (c) (d) (e) (f) (g) (h) (i) (j) | grep x", "(a) (b) (c) (d) (e) (f) (g) (h) (i) (j) | grep x"),
    ],
)
def test_bashlex_parses_a_line_only_within_its_cost_bounds(monkeypatch, line: str, parsed: str | None) -> None:
    """A line is read up to its :data:`shell.MAX_SHELL_TOKENS`-th token or its
    :data:`shell.MAX_SHELL_COMMANDS`-th command, and past
    :data:`shell.MAX_SHELL_NESTING` levels it never reaches bashlex (whose cost grows faster than
    both: 50 nested ``$(`` took 16 ms, 2,000 pipeline stages 82 ms); its words are then the
    ``shlex`` fallback's."""
    calls = _spy_bashlex(monkeypatch)
    words = shell_words(line)
    assert calls == ([parsed] if parsed is not None else [])
    if parsed is None:
        assert words == tuple(tuple(w) for w in shell._shlex_commands(line))
    if line.startswith(("a$b;", "a$b|")):
        assert words == (("a$b",),) * 50


def test_a_newline_is_a_token_and_a_separator_of_the_head(monkeypatch) -> None:
    """bashlex reads each newline outside quotes as a token that ends a command: the head counts
    it towards :data:`shell.MAX_SHELL_TOKENS` (250) and :data:`shell.MAX_SHELL_COMMANDS` (50), so
    4,000 newlines reach bashlex as 49 (they were not counted: all 4,000 did, 50 times a
    4,000-character script's cost). A newline inside quotes is part of its word."""
    assert shell._shell_head("\n" * 4000) == ("\n" * 49, False)
    assert shell._shell_head("ls" + "\n" * 4000 + "ls") == ("ls" + "\n" * 49, False)
    # 1 + 200 words, the newline the 202nd token: 48 words after it make 250
    line = "echo" + " x" * 200 + "\n" + " y" * 100
    assert shell._shell_head(line) == ("echo" + " x" * 200 + "\n" + " y" * 48, False)
    assert len(list(shell._SHELL_TOKEN.finditer(shell._shell_head(line)[0]))) == 250
    quoted = 'echo "a\nb"' + " x" * 300  # two tokens, then 248 words
    assert shell._shell_head(quoted) == ('echo "a\nb"' + " x" * 248, False)
    calls = _spy_bashlex(monkeypatch)
    assert shell_words("\n" * 4000) == ()
    assert calls == ["\n" * 49]


def test_a_plain_list_is_cut_at_the_same_bound_without_bashlex(monkeypatch) -> None:
    """A plain list past :data:`shell.MAX_SHELL_COMMANDS` commands is cut where bashlex's
    would be, and split without it."""
    calls = _spy_bashlex(monkeypatch)
    assert shell_words("|".join(["ab"] * 51)) == (("ab",),) * 50
    assert shell_words(";".join(["ab"] * 50)) == (("ab",),) * 50
    assert calls == []
    # a plain line of more tokens than the bound is read up to its bound-th token, as any line
    assert shell_words("grep 'a b'" + " x" * 300) == (("grep", "a b") + ("x",) * 248,)


def test_one_command_lines_are_split_without_bashlex(monkeypatch) -> None:
    """Lines of one plain command each (800 × ``ls x``, joined by newlines) are a plain list:
    split without bashlex, cut at :data:`shell.MAX_SHELL_COMMANDS` as any list. Before, bashlex
    parsed the head, one parser a command (8-12 ms a line on a quiet machine)."""
    calls = _spy_bashlex(monkeypatch)
    assert shell_words("\n".join(["ls x"] * 800)) == (("ls", "x"),) * 50
    assert shell_words("\n".join(["ls x"] * 20) + "\n") == (("ls", "x"),) * 20
    assert calls == []


def test_bashlex_reads_a_line_without_its_here_document_bodies(monkeypatch) -> None:
    """A body is data: bashlex gets the line with each body out and its delimiter unquoted
    (bashlex refuses ``<<'EOF'``, idank/bashlex#99, and the fallback then read the body's lines
    as commands), so 600 words of body neither count towards the token bound nor make commands."""
    calls = _spy_bashlex(monkeypatch)
    body = "\n".join(["x = 1; y = 2 | grep z > out"] * 100)
    line = f"cat <<'EOF' > notes.txt\n{body}\nEOF\ngrep -rn needle src"
    assert shell_words(line) == (("cat",), ("grep", "-rn", "needle", "src"))
    assert calls == ["cat <<EOF > notes.txt\nEOF\ngrep -rn needle src"]
    assert shell._shell_head("echo" + " x" * 300)[0] == "echo" + " x" * 249


@pytest.mark.parametrize(
    ("line", "kept", "docs"),
    [
        (
            "cat <<'EOF' > r.py\nimport a\nEOF\npython r.py",
            "cat <<EOF > r.py\nEOF\npython r.py",
            [("cat <<EOF > r.py", "import a\n")],
        ),
        ('cat > r.py << "PY"\na > b\nPY', "cat > r.py <<PY\nPY\n", [("cat > r.py <<PY", "a > b\n")]),
        ("python3 - <<-EOF\n\tx\n\tEOF\n", "python3 - <<EOF\nEOF\n", [("python3 - <<EOF", "\tx\n")]),
        ("cd s && cat <<EOF | grep x && ls\nb\nEOF", "cd s && cat <<EOF | grep x && ls\nEOF\n", [("cat <<EOF", "b\n")]),
        ("cat <<EOF > f\nno end", "cat <<EOF > f\nEOF\n", [("cat <<EOF > f", "no end")]),
        ("cat <<< 'here string'", "cat <<< 'here string'", []),
        ("echo $((1<<2))", "echo $((1<<2))", []),
        ("grep -rn '<<' src", "grep -rn '<<' src", []),
    ],
)
def test_split_heredocs_takes_each_body_out_and_keeps_a_valid_line(line: str, kept: str, docs: list) -> None:
    out, found = shell.split_heredocs(line)
    assert out == kept
    assert [(d.command, d.body) for d in found] == docs
    assert [d.closed for d in found] == [line != "cat <<EOF > f\nno end" for _ in docs]


def test_every_recorded_agent_line_is_within_the_shell_bounds() -> None:
    """The shell lines of the recorded mini-swe-agent runs (corpus/trajectories, its top-level
    traces: the bounds' justification), cut as parse_call cuts them, all reach bashlex whole."""
    import json
    from pathlib import Path

    lines = []
    for trace in sorted((Path(__file__).parents[4] / "corpus" / "trajectories").glob("*__*.jsonl")):
        for row in trace.read_text().splitlines():
            command = json.loads(row)["params"]["tool"]["input"].get("command")
            if isinstance(command, str):
                lines.append(command[: tools.MAX_INPUT_CHARS])
    assert len(lines) == 2708  # 93 runs (Corpus II; the first 48, Corpus I, had 1,384)
    heads = [(line, shell._shell_head(line)) for line in (shell.split_heredocs(line)[0] for line in lines)]
    assert [line for line, (head, deep) in heads if head != line or deep] == []


def test_a_command_keeps_at_most_its_first_hundred_operands() -> None:
    """Each operand costs its reader and the suggester a few µs (2,000 took 12 ms a call):
    :data:`shell.MAX_COMMAND_ARGS` are read, in order, for a plain line and a parsed one."""
    for line in ("grep x" + " a%d" * 300, "cd s && grep x" + " a%d" * 300):
        (grep,) = [c for c in split_commands(line % tuple(range(300))) if c.name == "grep"]
        assert grep.args == ["x", *(f"a{i}" for i in range(99))]


@pytest.mark.parametrize(
    ("line", "scope"),
    [
        ("cd /testbed && grep -rn foo src", ["/testbed/src"]),  # was testbed/src: the root's
        ("cd /w/sub && grep -rn foo ../src", ["/w/src"]),
        ("cd / && grep -rn foo etc", ["/etc"]),  # was etc: the workspace's
        ("cd / && cd w && grep -rn foo src", ["/w/src"]),
        ("cd src && grep -rn foo ../../lib", ["../lib"]),  # relative: the root's parent's lib, not the root's
        ("cd ~ && grep -rn foo src", ["src"]),
    ],
)
def test_a_cd_to_an_absolute_folder_keeps_the_search_scope_absolute(line: str, scope: list[str]) -> None:
    """The suggester makes an absolute scope under the workspace root relative and drops any
    other, so the joined path must stay absolute to mean what the shell searched."""
    assert parse_call("bash", {"command": line}).scope == scope


@pytest.mark.parametrize("flag", ["-c", "-lc", "-ic", "-lic"])
def test_a_shell_c_argv_is_read_as_its_line_with_its_redirections(flag: str) -> None:
    """``["bash", "-lic", LINE]`` (Codex sends argv lists) is LINE: its commands, its
    redirections' targets and its here-document scripts, for every login/interactive flag."""
    q = parse_call("bash", {"command": ["bash", flag, "echo x > notes.txt && grep -rn foo src"]})
    assert (q.tool, q.writes, q.scope) == ("bash", ["notes.txt"], ["src"])
    q = parse_call("bash", {"command": ["/bin/sh", flag, "cat <<'EOF' > r.py\nimport six\nsix.moves\nEOF"]})
    assert (q.script_path, q.script) == ("r.py", [("six", "moves")])


def test_a_backslash_inside_double_quotes_is_kept_where_the_shell_keeps_it():
    """``grep -rn "def reframe\\b"``: the shell passes ``def reframe\\b`` (a word boundary) to
    grep; bashlex dropped the backslash (``reframeb``, a name nothing defines, so the call was
    silent). Escapes the shell does honour inside double quotes still go."""
    cases = {
        'grep -rn "def reframe\\b" server': ("reframe", ["def reframe\\b"]),
        'rg -n "class StrategyBandit\\b"': ("StrategyBandit", ["class StrategyBandit\\b"]),
        'grep -rn "\\\\bfoo" .': ("foo", ["\\bfoo"]),
        'grep -rn "a\\"b" .': (None, ['a"b']),
        'grep -n "x\\$y\\b" f': (None, ["x$y\\b"]),
        "grep -rn def\\ reframe server": ("reframe", ["def reframe"]),
    }
    for command, (identifier, patterns) in cases.items():
        q = parse_call("bash", {"command": command})
        assert (q.identifier, q.patterns) == (identifier, patterns), command


@pytest.mark.parametrize(
    ("line", "writes"),
    [
        # a `>` inside a quoted pattern is part of the word: nothing is written
        ("grep -rn '<Version>\\|<VersionPrefix>' --include=*.props . | head", []),
        ('grep -rn "a>b" src', []),
        # a quoted target is still a target, and a quote escaped inside double quotes stays inside
        ('echo "x>y" > "out file.txt"', ["out file.txt"]),
        ('echo "a \\" > b" >> log.txt', ["log.txt"]),
        ("echo hi > out.txt 2>&1", ["out.txt"]),
        ("cat <<'EOF' > f.py\nprint('a > b')\nEOF", ["f.py"]),
        # a quote left open runs to the line's end, as the shell reads it
        ("echo don't > a.txt", []),
    ],
)
def test_a_redirection_is_read_outside_quotes_only(line: str, writes: list[str]) -> None:
    """A shell line's written files (``Query.writes``) come from its redirections, never from a
    ``>`` inside a quoted word (a grep for ``<Version>`` wrote a file named ``\\``)."""
    assert parse_call("bash", {"command": line}).writes == writes


@pytest.mark.parametrize(
    ("line", "writes"),
    [
        # a quote escaped outside quotes is a character, not a quote: the redirection after it is read
        ("echo don\\'t > a.txt", ["a.txt"]),
        ('echo say \\"hi > b.txt', ["b.txt"]),
        # ANSI-C quoting: a quote escaped inside $'…' does not close it
        ("printf $'it\\'s\\n' > c.txt", ["c.txt"]),
        ("printf $'a > b' > d.txt", ["d.txt"]),
        # an escaped `>` is a character; a comment writes nothing
        ("echo a \\> b", []),
        ("echo x # > e.txt", []),
        ("echo x#y > f.txt", ["f.txt"]),
        # a command substitution's backquote ends the target
        ("echo `date > stamp.txt`", ["stamp.txt"]),
    ],
)
def test_a_redirection_is_read_as_the_shell_reads_escapes_and_comments(line: str, writes: list[str]) -> None:
    """What bash writes for a line whose quotes are escaped (``don\\'t``), ANSI-C quoted
    (``$'it\\'s'``), or that has a comment or an escaped ``>``: an escaped quote opened a quote
    that ran to the line's end and hid the redirection after it."""
    assert parse_call("bash", {"command": line}).writes == writes


@pytest.mark.parametrize(
    ("line", "writes"),
    [
        ('echo "$(date > f)"', ["f"]),
        ('echo "`date >> g`"', ["g"]),
        ('echo "x $(echo "$(ls 2> e.log)") y"', ["e.log"]),
        ('echo "$(make &> build.log)"', ["build.log"]),
        ('echo "$(make &>> build.log)"', ["build.log"]),
        ('echo "$(date >| h)"', ["h"]),
        ('stamp="$(date > when.txt)"', ["when.txt"]),
        ('cd src && echo "$(date > f)"', ["src/f"]),
        ('echo "$(date > f)" > g', ["g", "f"]),
        # a descriptor duplicated, a read, the null device, a single-quoted text: nothing written
        ('echo "$(make >&2)"', []),
        ('echo "$(cat < k)"', []),
        ('echo "$(date > /dev/null)"', []),
        ("echo '$(date > nope)'", []),
        ('echo "a > $(date)"', []),
    ],
)
def test_a_redirection_inside_a_command_substitution_inside_double_quotes_is_a_write(
    line: str, writes: list[str]
) -> None:
    """A double-quoted word is data to the line's redirection reader, but a command substitution
    inside one runs, redirections and all: ``echo "$(date > f)"`` writes ``f`` (it was not seen)."""
    assert parse_call("bash", {"command": line}).writes == writes


@pytest.mark.parametrize(
    ("line", "patterns"),
    [
        # the pipeline's search is the first grep's; the inverted one filters its lines
        ("grep -rn parse_url src | grep -v test", ["parse_url"]),
        ("grep -v foo setup.py", []),
        ("grep --invert-match foo x.py", []),
        ("grep -rvn foo .", []),
        ("rg -v foo", []),
        ("grep -rn foo .", ["foo"]),
    ],
)
def test_an_inverted_grep_searches_nothing_for_its_pattern(line: str, patterns: list[str]) -> None:
    """``grep -v X`` keeps the lines without X: X is what the call filters out, not what it
    looks for, so it is no searched pattern (nor a name the session searched)."""
    assert parse_call("bash", {"command": line}).patterns == patterns
