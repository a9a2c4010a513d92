"""Shell lines → simple commands: the parse of a bash call's ``command``.

``bashlex`` reads pipelines, lists, ``$(…)`` and ``for`` loops, with here-document bodies taken
out first (:func:`split_heredocs`); ``shlex`` with punctuation splitting is the fallback when
bashlex refuses the line or it nests deeper than :data:`MAX_SHELL_NESTING`; a plain line, or a
plain list or pipeline of them, is split without either, into ``shlex.split``'s words
(:func:`shell_words`). A line is read up to its
:data:`MAX_SHELL_TOKENS`-th token, a command up to :data:`MAX_COMMAND_ARGS` words. Wrappers
(``xargs``, ``sudo``, ``env``, ``time``, ``timeout N``, ``nice``, ``command``) are looked
through, and ``cd DIR &&`` makes later relative paths relative to ``DIR``
(:func:`split_commands`).
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass
from typing import Any, Final

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.suggester.parse.budget import install as install_budget
from dsh_sidecar.suggester.parse.budget import parse_bounded
from dsh_sidecar.suggester.parse.tools import WRAPPERS


@dataclass
class Command:
    """One simple shell command: ``name`` (basename; ``git grep`` etc. for git) and its words."""

    name: str
    args: list[str]
    cwd: str = ""  # the folder a preceding ``cd`` moved to ('' = the workspace root)
    #: its file operands are the previous command's output (``find … | xargs grep X``,
    #: ``find … -exec grep X {} +``): given none, it still reads files, not a pipe
    fed_files: bool = False


#: Most shell tokens (words, a quoted part being part of its word, runs of ``; & | ( ) < > ` ``, and
#: each newline outside quotes, outside here-document bodies) a line may have to be parsed by
#: bashlex. A newline is a token to bashlex too: 4,000 of them, uncounted, took 25-44 ms a line,
#: 50 times a 4,000-character ``python -c`` script's cost. Its parse grows faster
#: than them (4 KB of ``a|a|…`` took 82 ms, 2,000 plain words 35 ms, 400 tokens of ``ab;ab;…``
#: 12 ms; what the recorded runs need: docs/SCHEME.md, "The query model's bounds"). A line
#: past the bound is read up to its bound-th token (:func:`_shell_head`).
MAX_SHELL_TOKENS: Final = 250
#: Deepest nesting of ``(``/``{`` (``$(…)``, ``<(…)``, subshells, ``${…}``) bashlex may parse:
#: its cost grows with the square of it (50 nested ``$(`` in 156 bytes took 16 ms, 400 hit
#: Python's recursion limit after 77 ms; the recorded lines nest 1 deep at most). A line nesting
#: deeper is split by the ``shlex`` fallback (linear), which loses only what bashlex adds (the
#: commands inside ``$(…)``, compound commands).
MAX_SHELL_NESTING: Final = 8
#: A shell token: a word (its quoted parts in it; a quote still open at the end of the text — a
#: line cut at ``MAX_INPUT_CHARS`` — runs to the end), a run of operator characters, a newline
#: (outside a quote: one inside is part of its word), or any other character.
_SHELL_TOKEN = re.compile(
    r"""(?:[^\s;&|()<>`'"\\]|\\.|'[^']*(?:'|\Z)|"(?:[^"\\]|\\.)*(?:"|\\?\Z))+|[;&|()<>`]+|\n|\S"""
)
#: What nests in a line: a bracket outside quotes, and inside double quotes only ``$(``/``${``
#: (a command or parameter substitution, which bashlex parses again) and closing brackets;
#: single-quoted text is data (``node -e "… { … }"``, ``awk '{…}'`` nest nothing), and so is a
#: comment (``# it's`` opens no quote).
_NEST_PART = re.compile(r"""(?:^|(?<=[\s;&|()]))#[^\n]*|'[^']*(?P<sq>')?|"(?:[^"\\]|\\.)*(?P<dq>")?|\\.|[(){}]""", re.M)
_NEST_IN_DOUBLE = re.compile(r"\$[({]|[)}]")
#: Most simple commands of a line read (:func:`parse_call` reads the first 50; bashlex's cost
#: grows fastest with them: 125 of ``a;a;…`` took 6 ms): the head ends before the separator
#: (``;``, ``|``, ``&&``, ``||``, ``&``, ``|&``, a newline) that would start the next one.
MAX_SHELL_COMMANDS: Final = 50
_SEPARATORS: Final = frozenset({";", "|", "&&", "||", "&", "|&", "\n"})
#: A here-document (``<<EOF``, ``<<-EOF``, ``<<'EOF'``, ``<< "EOF"``; not a ``<<<`` here-string):
#: its delimiter, the rest of the line it starts on, then its body, the lines up to the delimiter
#: alone on a line (after tabs: ``<<-``) or the end of the text. A delimiter starts with a letter
#: or ``_`` (``1<<2`` is a shift). The delimiter and the rest of its line are read once
#: (possessive): a start that no line end follows matches to the end of the text (its line-end
#: group empty) and is left as it is (:func:`split_heredocs`), where trying every length of a
#: long delimiter, each time reading on for a line end, was quadratic (``<<`` and 4,000
#: letters: 0.3-0.7 s); no later start can have a line end after it either.
_HEREDOC = re.compile(
    r"(?<![<\w])<<-?[ \t]*(['\"]?)([A-Za-z_]\w*+)\1([^\n]*+)(\n|\Z)(.*?)(?:(^\t*\2[ \t]*(?:\n|\Z))|\Z)",
    re.S | re.M,
)


@dataclass(frozen=True)
class Heredoc:
    """One here-document of a shell line: ``command``, the text of the simple command it is the
    input of, from its start line (``cat <<'EOF' > repro.py``, ``python3 - <<EOF``), its
    ``body`` (the lines between, the delimiter lines left out), and whether its delimiter line
    ``closed`` it (else the body runs to the end of a text that may have been cut)."""

    command: str
    body: str
    closed: bool = True


def split_heredocs(line: str) -> tuple[str, tuple[Heredoc, ...]]:
    """``line`` with every here-document's body taken out, and those documents. The line keeps
    each document's start and an unquoted delimiter line (``cat <<EOF > f`` then ``EOF``), so it
    is still a valid line whose words and redirections are the original's: a body is data (its
    ``>`` or ``grep`` are no redirection nor command), and bashlex refuses a quoted delimiter
    (``<<'EOF'``, the form agents write; idank/bashlex#99).
    Linear in the length (the body's lazy scan stops at the delimiter line)."""
    if "<<" not in line:
        return line, ()
    docs: list[Heredoc] = []

    def cut(m: re.Match[str]) -> str:
        if not m.group(4):  # no line end after the start: no document (the rest of the text)
            return m.group()
        start = line.rfind("\n", 0, m.start()) + 1
        before = re.split(r"&&|\|\||[;|&]", line[start : m.start()])[-1]
        after = re.split(r"&&|\|\||[;|&]", m.group(3))[0]
        docs.append(Heredoc(f"{before}<<{m.group(2)}{after}".strip(), m.group(5), m.group(6) is not None))
        return f"<<{m.group(2)}{m.group(3)}\n{m.group(2)}\n"

    return _HEREDOC.sub(cut, line), tuple(docs)


def _shell_head(command: str) -> tuple[str, bool]:
    """``(head, deep)``: ``command`` (here-document bodies already out: :func:`split_heredocs`)
    up to the end of its :data:`MAX_SHELL_TOKENS`-th token or the start of its
    :data:`MAX_SHELL_COMMANDS`-th separator (all of it when shorter), with the quote it leaves
    open closed (a line cut inside a quoted script, ``python -c "…``, is read as the script so
    far), and whether that head nests deeper than :data:`MAX_SHELL_NESTING`
    (:data:`_NEST_PART`: brackets inside quotes do not nest, but ``$(`` inside double quotes
    does). What a line's parse costs is then bounded whatever its length; the commands past the
    head are not read (the first 50 of a line are). Linear in the length."""
    end = len(command)
    separators = 0
    for n, m in enumerate(_SHELL_TOKEN.finditer(command), 1):
        if m.group() in _SEPARATORS:
            separators += 1
            if separators == MAX_SHELL_COMMANDS:
                end = m.start()
                break
        if n == MAX_SHELL_TOKENS:
            end = m.end()
            break
    head = command[:end]
    depth = 0
    open_quote: re.Match[str] | None = None
    for m in _NEST_PART.finditer(head):
        part = m.group()
        open_quote = None
        if part[0] == '"':
            open_quote = m if m.group("dq") is None else None
            brackets = [b.group()[-1] for b in _NEST_IN_DOUBLE.finditer(part)]
        elif part[0] == "'":
            open_quote = m if m.group("sq") is None else None
            continue
        elif part[0] in "\\#":
            continue
        else:
            brackets = [part]
        for b in brackets:
            if b in "({":
                depth += 1
                if depth > MAX_SHELL_NESTING:
                    return head, True
            elif depth:
                depth -= 1
    if open_quote is not None:  # the text ends inside this quote (a lone backslash after it is dropped)
        head = head[: open_quote.end()] + open_quote.group()[0]
    return head, False


def _bashlex_commands(command: str) -> list[list[str]] | None:
    """Simple commands of ``command`` as word lists (``$(…)`` inner commands included), with
    ``&&``/``;``/``|`` boundaries as ``[';']`` separators; ``None`` when bashlex refuses it.
    bashlex is imported here, on the first line that needs it (its import, its parse tables read
    from this package rather than built, ``lalr.py``: ~10 ms of CPU that a plain one-command
    line never needs), and parses under a work budget it cannot exceed (``budget.parse_bounded``:
    a line that would make it loop, or work past the budget, is refused like a line it cannot
    parse)."""
    try:
        trees = parse_bounded(command)
    except Exception:  # bashlex raises its own errors and sometimes others on odd input
        return None
    out: list[list[str]] = []

    def walk(node: Any) -> None:
        kind = getattr(node, "kind", "")
        if kind == "command":
            words: list[str] = []
            for part in node.parts:
                if part.kind == "word":
                    words.append(_word_text(part, command))
                    for sub in getattr(part, "parts", ()):
                        walk(sub)
            if words:
                out.append(words)
            return
        if kind in ("commandsubstitution", "processsubstitution"):
            walk(node.command)
            return
        for attr in ("parts", "list"):
            for child in getattr(node, attr, None) or ():
                walk(child)
        inner = getattr(node, "command", None)
        if inner is not None and kind not in ("command",):
            walk(inner)

    for tree in trees:
        walk(tree)
    return out


#: bashlex's types of a redirection that writes its target (``>&`` only when its target is a word:
#: ``>&2`` duplicates a descriptor, ``>&file`` writes ``file``).
_WRITING_REDIRECTS: Final = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})


def substituted_redirect_targets(command: str) -> list[str]:
    """The files written by redirections inside the command substitutions (``$(…)``, backquotes)
    of a line whose double quotes hold one: ``echo "$(date > f)"`` writes ``f``. The line's own
    redirections are read from its text (``runs.shell_writes``), where a double-quoted word is
    data; a substitution inside one is a command whose redirections bashlex's tree holds. Empty
    when the line has no such quote or bashlex refuses it (under its work budget)."""
    if '"' not in command or ">" not in command or ("$(" not in command and "`" not in command):
        return []
    try:
        trees = parse_bounded(command)
    except Exception:  # bashlex raises its own errors and sometimes others on odd input
        return []
    out: list[str] = []

    def walk(node: Any, inside: bool) -> None:
        kind = getattr(node, "kind", "")
        if kind == "redirect" and inside and node.type in _WRITING_REDIRECTS and hasattr(node.output, "word"):
            out.append(str(node.output.word))
        inside = inside or kind == "commandsubstitution"
        for attr in ("parts", "list"):
            for child in getattr(node, attr, None) or ():
                walk(child, inside)
        inner = getattr(node, "command", None)
        if inner is not None and hasattr(inner, "kind"):
            walk(inner, inside)

    for tree in trees:
        walk(tree, False)
    return out


def _word_text(part: Any, command: str) -> str:
    r"""bashlex's text of a word, except where it drops a backslash inside double quotes that
    escapes nothing the shell escapes there (``"def reframe\b"``: the shell, and ``grep``,
    get ``def reframe\b``; bashlex gave ``def reframeb``, a name nothing defines): such a
    word is read again from its source by ``shlex``, which keeps that backslash as POSIX
    says."""
    word = str(part.word)
    pos = getattr(part, "pos", None)
    if not pos:
        return word
    raw = command[pos[0] : pos[1]]
    if "\\" not in raw or '"' not in raw:
        return word
    try:
        again = shlex.split(raw)
    except ValueError:
        return word
    # shlex keeps ``\$`` and ``\``` inside double quotes, where the shell drops the backslash
    return again[0].replace("\\$", "$").replace("\\`", "`") if len(again) == 1 else word


def warm_shell_parser() -> None:
    """Import bashlex now (a long-lived server's preparation thread), so the first shell line
    that needs it does not pay its import (~10 ms with its tables read, ``lalr.py``; 0.1-0.25 s
    when a bashlex of another grammar builds them) and put the budget's guards into it."""
    install_budget()


def _shlex_commands(command: str) -> list[list[str]]:
    """The fallback splitter: ``shlex`` with punctuation characters, split on ``; & | ( )``."""
    lex = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
    lex.whitespace_split = True
    out: list[list[str]] = [[]]
    try:
        for tok in lex:
            if tok and set(tok) <= set(";&|()<>"):
                if out[-1]:
                    out.append([])
                continue
            out[-1].append(tok)
    except ValueError:  # unbalanced quotes: split on whitespace as a last resort
        return [w for w in [re.split(r"\s+", s.strip()) for s in re.split(r"\|\||&&|[|;]", command)] if w and w[0]]
    return [c for c in out if c]


#: Distinct command strings whose parse is kept (``shell_words``): agents and harnesses repeat
#: the same lines (``git status``, ``ls``, a re-run grep); a parse is a few kB, so ~2 MB at most.
PARSE_CACHE_SIZE: Final = 1024
#: A line of words made of these characters, each word holding at most one quoted part (of
#: one kind of quote in the whole line), has no expansion, redirection, operator, comment, escape
#: or newline: bashlex's words are then exactly POSIX ``shlex.split``'s (quotes removed). (Two
#: quoted parts in one word, or a quote inside the other kind, bashlex reads differently: such
#: lines keep its words.)
_PLAIN_CHARS = r"[A-Za-z0-9_.,:/@%+=^*?\[\]-]*"
_QUOTED_CHARS = r"[A-Za-z0-9_.,:/@%+=^*?\[\] \t(){}|&;#~-]*"
_PLAIN_WORD = rf"{_PLAIN_CHARS}(?:'{_QUOTED_CHARS}'{_PLAIN_CHARS}|\"{_QUOTED_CHARS}\"{_PLAIN_CHARS})?"
_PLAIN_LINE = re.compile(rf"[ \t]*(?:{_PLAIN_WORD}[ \t]+)*(?:{_PLAIN_WORD})?")
#: First words bash reads as syntax (reserved words, ``[[``), or as an assignment: such lines
#: go to bashlex even when their characters are plain.
_SYNTAX_HEAD = frozenset(
    "if then else elif fi case esac for select while until do done in function time coproc [[ ]]".split()
)


#: The patterns only the plain paths use are compiled on first use (``lazyre``): a start that
#: parses no shell line does not pay for them.
_ASSIGNMENT = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
#: One command of a plain list (``_PLAIN_LINE`` matched from a position, not whole) and what may
#: follow it: a list or pipeline operator, or the end of the line.
_PLAIN_SEGMENT = _PLAIN_LINE
_PLAIN_OPERATOR = LazyPattern(r"\|\||&&|[|;]|\n+")
#: A plain word's parts: the characters before its quoted part, the quoted text (single or
#: double quotes), the characters after it.
_PLAIN_WORD_PARTS = LazyPattern(rf"({_PLAIN_CHARS})(?:'({_QUOTED_CHARS})'|\"({_QUOTED_CHARS})\")?({_PLAIN_CHARS})")


def _plain_words(command: str) -> list[str] | None:
    """The words of a one-command line with nothing for bashlex to resolve (see
    ``_PLAIN_LINE``), ``shlex.split``'s (:func:`_segment_words`; ``str.split``'s when the line
    has no quote: its characters hold no escape, comment or other blank than space and tab);
    ``None`` when the line needs the full parse."""
    # the pattern's first match, whole: ``fullmatch`` would try every split of a run of blanks
    # between words before refusing a line (exponential in the run's length); the first match
    # reaches the end exactly when some match does
    whole = _PLAIN_LINE.match(command)
    assert whole is not None  # it matches the empty text
    if whole.end() != len(command) or ('"' in command and "'" in command):
        return None
    return _segment_words(command)


def _segment_words(command: str) -> list[str] | None:
    """The words of a line ``_PLAIN_LINE`` matches whole (one kind of quote at most), ``None``
    when bash reads its first word as syntax or an assignment. Its words are ``shlex.split``'s:
    each word its parts with the quotes of its one quoted part removed (no escape, no
    expansion: the characters hold none)."""
    if '"' in command or "'" in command:
        words = [
            m.group(1) + (m.group(2) or m.group(3) or "") + m.group(4)
            for m in _PLAIN_WORD_PARTS.finditer(command)
            if m.end() > m.start()
        ]
    else:
        words = command.split()
    if not words or words[0] in _SYNTAX_HEAD or _ASSIGNMENT.match(words[0]):
        return None
    return words


def _plain_commands(command: str) -> list[list[str]] | None:
    """The commands of a plain list or pipeline: plain one-command lines (:func:`_plain_words`)
    joined by ``|``, ``||``, ``&&``, ``;`` or newlines outside quotes (``cat f | grep -n "def x"``,
    ``cd src && ls``, ``ls a`` and ``ls b`` on two lines, the text's last newline included), each
    one's words; ``None`` for any other line (an empty command, a trailing operator, ``&``, ``|&``:
    bashlex decides). bashlex gives such a line's commands the same words, in the same order, as
    each gets alone (a newline ends a command as ``;`` does: 800 one-command lines were parsed
    by bashlex, one parser a command, 8-12 ms)."""
    if '"' in command and "'" in command:
        return None
    out: list[list[str]] = []
    pos, end = 0, len(command)
    while True:
        m = _PLAIN_SEGMENT.match(command, pos)
        assert m is not None  # it matches the empty text
        words = _segment_words(m.group())
        if words is None:
            return None
        out.append(words)
        pos = m.end()
        if pos == end:
            return out
        op = _PLAIN_OPERATOR.match(command, pos)
        if op is None:
            return None
        pos = op.end()
        if pos == end and op.group()[0] == "\n":  # the text's last newline ends its last command
            return out


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def shell_words(command: str) -> tuple[tuple[str, ...], ...]:
    """The simple commands of a shell line as word tuples (``;``/``&&``/``|`` split,
    ``$(…)`` inner commands included): a plain line, or plain commands joined by ``|``, ``||``,
    ``&&``, ``;`` (:func:`_plain_commands`), by ``shlex.split`` (the same words bashlex gives
    it, at a tenth of the cost), any other by ``bashlex`` with here-document bodies taken
    out and the line cut after :data:`MAX_SHELL_TOKENS` tokens (:func:`_shell_head`), falling back
    to the ``shlex`` splitter when bashlex refuses it or it nests too deep. Pure function of ``command``; the last
    ``PARSE_CACHE_SIZE`` distinct lines are cached (an LRU: a repeated line costs a lookup)."""
    line = split_heredocs(command)[0]
    # fewer tokens and separators than the head's bounds, and a plain line closes its quotes:
    # its head is the whole line
    seps = line.count(";") + line.count("|") + line.count("&") + line.count("\n")
    short = len(line) < MAX_SHELL_TOKENS and seps < MAX_SHELL_COMMANDS
    plain = _plain_commands(line) if short else None
    if plain is not None:
        return tuple(tuple(words) for words in plain)
    head, deep = _shell_head(line)
    if not short or head != line:  # (the same line was read above: not plain)
        plain = _plain_commands(head)
        if plain is not None:
            return tuple(tuple(words) for words in plain)
    words = None if deep else _bashlex_commands(head)
    return tuple(tuple(w) for w in (words or _shlex_commands(head)))


def split_commands(command: str | list[Any]) -> list[Command]:
    """The simple commands of a shell line or an argv list, wrappers looked through, ``cd``
    applied to later commands, ``find -exec`` inner commands added after their ``find``."""
    if isinstance(command, list):
        argvs = [[str(w) for w in command if isinstance(w, (str, int, float))]]
        if len(argvs[0]) >= 3 and argvs[0][0].rsplit("/", 1)[-1] in SHELLS and argvs[0][1] in SHELL_C:
            return split_commands(argvs[0][2])
    else:
        argvs = [list(words) for words in shell_words(command)]
    out: list[Command] = []
    cwd = previous = ""
    for words in argvs:
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]  # VAR=value prefixes
        bare = unwrap(words)
        fed = any(w.rsplit("/", 1)[-1] == "xargs" for w in words[: len(words) - len(bare)])
        words = bare
        if not words:
            continue
        head = words[0].rsplit("/", 1)[-1]
        if head == "cd":
            target = next((w for w in words[1:] if not w.startswith("-") or w == "-"), "")
            if target == "-":  # back to the folder before the last cd
                cwd, previous = previous, cwd
            else:
                cwd, previous = "" if target in ("", "~") else _join(cwd, target), cwd
            continue
        if head == "git" and len(words) > 1:
            i = 1  # git's own options before the subcommand; -C/-c and the like take a value
            while i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in _GIT_VALUE_OPTIONS else 1
            if i < len(words):
                head = "git " + words[i]
                words = words[i:]
        elif head in SHELLS and len(words) >= 3 and words[1] in SHELL_C:
            out.extend(split_commands(words[2]))
            continue
        out.append(Command(head, words[1 : 1 + MAX_COMMAND_ARGS], cwd, fed))
        if head == "find" and "-exec" in words:
            i = words.index("-exec")
            inner = [w for w in words[i + 1 :] if w not in ("{}", ";", "\\;", "+")]
            inner = unwrap(inner)
            if inner:
                out.append(Command(inner[0].rsplit("/", 1)[-1], inner[1 : 1 + MAX_COMMAND_ARGS], cwd, True))
    return out


#: Most words read after a command's name: each operand costs its reader and the suggester a few
#: µs (2,000 operands of ``grep``/``ls``, which 4,000 characters allow, took 12 ms a call;
#: what the recorded runs need: docs/SCHEME.md, "The query model's bounds").
MAX_COMMAND_ARGS: Final = 100
#: Shells whose ``-c`` line is read as the command itself (``["bash", "-lc", "grep …"]``, as
#: Codex sends it), and the option words that run it (login and interactive flags before ``c``).
SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash"})
SHELL_C: Final = frozenset({"-c", "-lc", "-ic", "-lic", "-ilc"})
#: git's options that take the next word as their value (``git -C sub apply``).
_GIT_VALUE_OPTIONS: Final = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})


def unwrap(words: list[str]) -> list[str]:
    """Drop wrappers (``xargs -0 grep …`` → ``grep …``; ``timeout 5 rg …`` → ``rg …``)."""
    while words and words[0].rsplit("/", 1)[-1] in WRAPPERS:
        head = words[0].rsplit("/", 1)[-1]
        words = words[1:]
        while words and (words[0].startswith("-") or (head == "timeout" and re.fullmatch(r"[\d.]+[smhd]?", words[0]))):
            opt = words[0]
            words = words[1:]
            if head == "xargs" and opt in ("-I", "-n", "-P", "-L", "-d", "-s", "-E") and words:
                words = words[1:]
        while head == "env" and words and "=" in words[0]:
            words = words[1:]
    return words


def _join(cwd: str, path: str) -> str:
    """``path`` joined to the folder a ``cd`` moved to, normalised (``.``, ``..``): absolute when
    either is (``cd /testbed && grep x src`` searches ``/testbed/src``, which the suggester makes
    root-relative when it is under the root and drops otherwise; a ``..`` stops at ``/``); a
    relative one keeps the ``..`` that climb above the workspace root (``cd .. && grep x repo/src``
    searches ``../repo/src``, the root's own ``src`` when the root is ``repo``: the suggester maps
    it, ``WorkspacePaths.relative``)."""
    path = path.strip()
    if path.startswith("/"):
        return path
    absolute = cwd.startswith("/")
    parts = [p for p in (cwd + "/" + path).split("/") if p and p != "."]
    out: list[str] = []
    for p in parts:
        if p != "..":
            out.append(p)
        elif out and out[-1] != "..":
            out.pop()
        elif not absolute:
            out.append(p)
    return ("/" if absolute else "") + "/".join(out)


def clean_path(path: str, cwd: str = "") -> str:
    """A path as a command names it, ``./`` and a trailing ``/`` stripped, joined to ``cwd``."""
    p = path.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    if p in (".", ""):
        return cwd
    return _join(cwd, p) if cwd and not p.startswith("/") else p.rstrip("/") if len(p) > 1 else p
