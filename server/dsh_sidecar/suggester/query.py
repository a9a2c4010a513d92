"""The query model: what one tool call searches for, where, and what its result listed.

Every ``dsh/postExecute`` call becomes one :class:`Query` (:func:`parse_call`):

* **tool inputs** — ``grep {pattern, path?, glob?, include?, type?, -i?, output_mode?}``,
  ``glob {pattern, path?}``, ``read {file_path|path}``, ``edit``/``write`` (learning only),
  ``bash {command}`` where ``command`` is a string or a list (``["rg", "-n", "x"]``, as Codex
  sends it); tool names are case-insensitive and a few aliases are known (:data:`TOOL_ALIASES`);
* **shell** — parsed with ``bashlex`` (pipelines, lists, ``$(…)``, ``for`` loops) with
  here-document bodies taken out (:func:`split_heredocs`; a body written to a ``.py`` file or fed
  to ``python`` is a script), falling back to ``shlex`` with punctuation splitting when bashlex
  refuses the line or it nests deeper than :data:`MAX_SHELL_NESTING`; a line is read up to its
  :data:`MAX_SHELL_TOKENS`-th token, a command up to :data:`MAX_COMMAND_ARGS` words. Each simple
  command is
  read by what it is: ``rg``/``grep``/``egrep``/``fgrep``/``ag``/``ack``/``git grep`` (pattern,
  ``-e``, ``-i``/``-l``/``-n``/``-w``/``-F``/``-E``/``-P``, ``--include``/``-g``/``--glob``,
  ``-t``/``--type``, paths, ``--`` pathspecs), ``find`` (roots, ``-name``/``-iname``/``-path``/
  ``-ipath``/``-regex``, ``-exec CMD {} ;``), ``fd`` (pattern, ``-e``, ``-g``, path), ``ls``/
  ``tree`` (paths, globs), ``cat``/``head``/``tail``/``less``/``bat``/``nl``/``wc`` (files read),
  ``sed -n`` (script, files read), ``awk`` (program's ``/regex/``, files read), ``jq`` (the
  filter's keys, files read), ``git ls-files``/``git log``/``git show``/``git blame``; wrappers
  (``xargs``, ``sudo``, ``env``, ``time``, ``timeout N``, ``nice``, ``command``) are looked
  through, and ``cd DIR &&`` makes later relative paths relative to ``DIR``;
* **the result text** — the paths a search just listed (:func:`result_paths`): ripgrep/grep
  ``path:line:`` and ``path:`` lines, "Found N files" lists, find/fd/glob output, one path a line.

From a pattern come its **fixed parts** (:func:`fixed_parts`: the literal runs of a regex in
the dialect of the tool — ERE/PCRE for ``rg``/``grep -E``/``-P`` and the grep tool, BRE for
plain ``grep``, none for ``-F``), the **terms** (identifiers of at least :data:`MIN_CHARS`
characters, stop words dropped), the **literals** (fixed parts holding a space or punctuation
and at least :data:`MIN_LITERAL_CHARS` characters: message strings), and the **identifier**
(:func:`identifier`: the name after a definition keyword, else the most identifier-like term).
The **languages** come from extensions (name patterns, ``--include``, ``-t``, files read or
searched). :attr:`Query.text` is what pack signals match (the same text the seed's probe read).
"""

from __future__ import annotations

import ast
import copy
import functools
import re
import shlex
import threading
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

#: Shortest identifier looked up (shorter tokens are noise: ``id``, ``db``…).
MIN_CHARS: Final = 3
#: Longest identifier looked up.
MAX_CHARS: Final = 100
#: Shortest literal (message-like fixed part) kept, characters.
MIN_LITERAL_CHARS: Final = 8
#: Longest input looked at, characters (signals read the head of a huge input).
MAX_INPUT_CHARS: Final = 4000
#: Longest result text scanned for paths, characters.
MAX_RESULT_CHARS: Final = 20_000
#: Most result paths kept (first seen first).
MAX_RESULT_PATHS: Final = 200

#: The pseudo tool name of a free-text question (MCP ``where_is`` with ``query``): not a valid
#: MCP/harness tool name (``<``, ``>``), so no agent's tool call is read as a question.
QUESTION_TOOL: Final = "<question>"
#: Tool names that only teach (never trigger a note): a note after an edit is too late.
WRITE_TOOLS: Final = frozenset(
    {"edit", "write", "multiedit", "rawwrite", "raw_write", "notebookedit", "apply_patch", "str_replace", "create"}
)
#: Aliases of the four search-class tools.
TOOL_ALIASES: Final = {
    "grep": "grep",
    "search": "grep",
    "rg": "grep",
    "ripgrep": "grep",
    "glob": "glob",
    "find": "glob",
    "ls": "glob",
    "list": "glob",
    "read": "read",
    "view": "read",
    "cat": "read",
    "open": "read",
    "bash": "bash",
    "shell": "bash",
    "exec": "bash",
    "run": "bash",
    "exec_command": "bash",
    "local_shell": "bash",
}
#: Shell commands that search or list (a bash call with one of them is search-class).
SEARCH_COMMANDS: Final = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "fdfind", "ls", "locate", "tree", "git grep"}
    | {"git ls-files", "git log"}
)
#: Shell commands that read files (their file arguments are reads).
READ_COMMANDS: Final = frozenset(
    {"cat", "head", "tail", "less", "more", "bat", "batcat", "nl", "wc", "sed", "awk", "jq", "yq", "tac", "view"}
)
#: Wrappers whose arguments are another command.
WRAPPERS: Final = frozenset({"xargs", "sudo", "env", "time", "timeout", "nice", "command", "exec", "nohup", "stdbuf"})

#: Options taking a value, per command family (a value is skipped with its option).
_GREP_VALUE_OPTS: Final = frozenset(
    {"-A", "-B", "-C", "-m", "-f", "-d", "-D", "--max-count", "--context", "--after-context", "--before-context"}
    | {"--include", "--exclude", "--exclude-dir", "--color", "--colour", "--label", "--binary-files", "-e", "--regexp"}
)
_RG_VALUE_OPTS: Final = frozenset(
    {"-A", "-B", "-C", "-m", "-g", "-t", "-T", "-f", "-e", "-E", "-j", "-M", "-r", "--glob", "--iglob", "--type"}
    | {"--type-not", "--max-count", "--context", "--after-context", "--before-context", "--max-depth", "--color"}
    | {"--colors", "--encoding", "--replace", "--max-columns", "--regexp", "--file", "--threads", "--sort", "--sortr"}
    | {"--type-add", "--max-filesize", "--path-separator", "-d", "--ignore-file", "--pre", "--engine"}
)
_FD_VALUE_OPTS: Final = frozenset(
    {"-e", "--extension", "-t", "--type", "-d", "--max-depth", "--min-depth", "-E", "--exclude", "-x", "-X"}
    | {"--exec", "--exec-batch", "-j", "--threads", "-S", "--size", "--changed-within", "--changed-before", "-c"}
    | {"--color", "--base-directory", "--search-path", "-o", "--owner"}
)
_HEAD_VALUE_OPTS: Final = frozenset({"-n", "-c", "--lines", "--bytes"})

#: ripgrep ``-t``/``--type`` names → language.
RG_TYPES: Final = {
    "py": "python",
    "python": "python",
    "js": "javascript",
    "ts": "typescript",
    "typescript": "typescript",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "kotlin": "kotlin",
    "ruby": "ruby",
    "rb": "ruby",
    "cs": "csharp",
    "csharp": "csharp",
    "cpp": "cpp",
    "c": "c",
    "php": "php",
    "swift": "swift",
    "md": "markdown",
    "markdown": "markdown",
    "rst": "rst",
    "toml": "toml",
    "yaml": "yaml",
    "json": "json",
    "sh": "shell",
}
#: File extension → language.
LANGUAGE_OF_EXTENSION: Final = {
    ".py": "python",
    ".pyi": "python",
    ".pyx": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".rb": "ruby",
    ".cs": "csharp",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".php": "php",
    ".swift": "swift",
    ".scala": "scala",
    ".md": "markdown",
    ".rst": "rst",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".sh": "shell",
}
#: Languages whose files are code (the symbol index's languages and kin).
CODE_LANGUAGES: Final = frozenset(
    {"python", "javascript", "typescript", "go", "rust", "java", "kotlin", "ruby", "csharp", "c", "cpp", "php"}
    | {"swift", "scala", "shell"}
)

#: Keywords that introduce a definition in the mainstream languages.
DEFINITION_KEYWORDS: Final = (
    "class",
    "def",
    "fn",
    "func",
    "function",
    "struct",
    "interface",
    "trait",
    "enum",
    "type",
    "const",
    "impl",
    "module",
    "mod",
    "record",
    "protocol",
    "typealias",
    "object",
    "let",
    "var",
    "val",
)
_DEF = re.compile(
    r"\b(?:async\s+)?(?:export\s+)?(?:pub(?:\([^)]*\))?\s+)?(" + "|".join(DEFINITION_KEYWORDS) + r")(?:<[^>]*>)?\s+"
    r"(?:\([^)]*\)\s*)?(?:\*\s*)?([A-Za-z_][A-Za-z0-9_]*)"
)
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HUMP = re.compile(r"[a-z0-9][A-Z]")
#: Words never taken for an identifier (keywords, shell words, common English).
STOP_WORDS: Final = frozenset(DEFINITION_KEYWORDS) | frozenset(
    {
        "import",
        "from",
        "return",
        "self",
        "this",
        "async",
        "await",
        "pub",
        "new",
        "the",
        "and",
        "for",
        "not",
        "with",
        "None",
        "null",
        "nil",
        "true",
        "false",
        "True",
        "False",
        "grep",
        "git",
        "def",
        "public",
        "private",
        "static",
        "export",
        "default",
        "raise",
        "throw",
        "print",
    }
)


@dataclass
class Command:
    """One simple shell command: ``name`` (basename; ``git grep`` etc. for git) and its words."""

    name: str
    args: list[str]
    cwd: str = ""  # the folder a preceding ``cd`` moved to ('' = the workspace root)


@dataclass
class Query:
    """What one tool call asks (see the module docstring). Paths are as the call spelt them
    (``./`` stripped, ``cd`` applied); the caller makes absolute ones repo-relative."""

    tool: str  # grep | glob | read | bash (search class) | write (learning only) | other
    text: str = ""
    patterns: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    literals: list[str] = field(default_factory=list)
    name_patterns: list[str] = field(default_factory=list)
    scope: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    languages: set[str] = field(default_factory=set)
    result_paths: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # jq/yq filter keys (``.version`` → version)
    is_error: bool = False
    #: a listing (glob, find, fd, ls) whose result text was given: an empty result then means
    #: the thing looked for does not exist
    listing: bool = False
    #: the reads are slices (``head``, ``tail``, ``sed -n``, a Read with offset/limit), not whole files
    partial: bool = False
    #: ``(path, function)`` of each traceback frame in the output of a command that is no
    #: search (:func:`traceback_frames`), innermost first
    frames: list[tuple[str, str]] = field(default_factory=list)
    #: a free-text question (MCP ``where_is`` query, :data:`QUESTION_TOOL`), not a tool call:
    #: only code-shaped tokens are identifiers
    question: bool = False
    #: a Python script: the whole text of a ``.py`` file the call writes (``content``/
    #: ``file_text``/``contents``) or the code it runs inline (``python -c CODE``), at most
    #: :data:`MAX_SCRIPT_CHARS` (parsed only when asked: :attr:`script`)
    script_code: str = ""
    #: the file :attr:`script_code` is written to, as the call names it (``""``: run inline)
    script_path: str = ""
    #: files a shell command changes: ``sed -i``/``perl -i`` operands, ``>``/``>>`` targets;
    #: :data:`PATCHED` when it applies a patch (``git apply``, ``patch``: files unknown)
    writes: list[str] = field(default_factory=list)

    @property
    def search(self) -> bool:
        """Whether the call is search-class (may trigger a note)."""
        return self.tool in ("grep", "glob", "read", "bash", QUESTION_TOOL) and bool(self.text)

    @property
    def script(self) -> list[tuple[str, str]]:
        """``(module, name)`` of the imported names :attr:`script_code` uses
        (:func:`script_names`; parsed at each access, so the caller asks only when it will
        use them)."""
        return script_names(self.script_code) if self.script_code else []

    @property
    def query(self) -> str:
        """The first search pattern ('' when none)."""
        return self.patterns[0] if self.patterns else ""

    @property
    def paths(self) -> list[str]:
        """Files the call opens (reads, or the edited file of a write)."""
        return self.reads

    @property
    def identifier(self) -> str | None:
        """The identifier searched for (:func:`identifier` of the first pattern with one; of a
        question, its first code-shaped token — ``snake_case``, ``CamelCase``, dotted — or its
        only word)."""
        if self.question:
            return next((t for t in self.terms if _code_shaped(t)), self.terms[0] if len(self.terms) == 1 else None)
        for p in self.patterns:
            name = identifier(p)
            if name is not None:
                return name
        return None

    @property
    def definition_keyword(self) -> str | None:
        """The definition keyword of the first pattern (``class``, ``def``, ``func``…), if any."""
        for p in self.patterns:
            m = _DEF.search(_plain(p))
            if m and MIN_CHARS <= len(m.group(2)) <= MAX_CHARS:
                return m.group(1)
        return None

    def touched(self) -> list[str]:
        """Every path the call names: reads, scope and name patterns that are plain paths."""
        return self.reads + [s for s in self.scope if not _GLOB.search(s)]


_GLOB = re.compile(r"[*?\[]")
_GREP_NAMES: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
_LISTING_NAMES: Final = frozenset({"glob", "find", "fd", "fdfind", "ls", "tree", "git ls-files", "locate"})


# ---------------------------------------------------------------------------- regex → fixed parts


def fixed_parts(pattern: str, dialect: str = "ere") -> list[str]:
    """The literal runs of ``pattern`` (what any match must contain, per alternative).

    ``dialect``: ``ere`` (ERE/PCRE/Rust regex: ``| ( ) + ? { }`` are operators), ``bre`` (POSIX
    basic: ``\\| \\( \\) \\{ \\}`` are operators, ``+ ? | ( )`` literal), ``fixed`` (the whole
    pattern is one literal). Escapes of punctuation are literals (``\\.`` → ``.``); classes
    (``\\s``, ``\\w``, ``[…]``), ``.``, anchors and groups end a run; a quantified character is
    dropped from its run (``colou?r`` → ``colo``, ``r``). Runs are stripped; empty ones dropped.
    """
    if dialect == "fixed":
        return [pattern] if pattern.strip() else []
    runs: list[str] = []
    cur: list[str] = []
    i, n = 0, len(pattern)

    def cut() -> None:
        if cur:
            runs.append("".join(cur))
            cur.clear()

    ops = "|()+?{}*" if dialect == "ere" else "*"
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            d = pattern[i + 1]
            if dialect == "bre" and d in "|(){}+?":
                cut()
                if d == "{":
                    close = pattern.find("\\}", i)
                    i = close + 2 if close >= 0 else n
                    continue
                i += 2
                continue
            if d.isalnum():  # \s \w \d \b \n …: a class or an anchor
                cut()
                i += 2
                continue
            cur.append(d)
            i += 2
            continue
        if c == "[":
            cut()
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            close = pattern.find("]", j)
            i = close + 1 if close >= 0 else n
            continue
        if c in ".^$":
            cut()
            i += 1
            continue
        if c in ops or (dialect == "ere" and c in "*"):
            if c in "*+?" and cur:
                cur.pop()  # the quantified character is optional/repeated: not fixed
            if c == "{" and dialect == "ere":
                close = pattern.find("}", i)
                if close > i and re.fullmatch(r"\{\d*,?\d*\}", pattern[i : close + 1]):
                    if cur:
                        cur.pop()
                    cut()
                    i = close + 1
                    continue
            cut()
            i += 1
            continue
        cur.append(c)
        i += 1
    cut()
    return [r.strip() for r in runs if r.strip()]


def _plain(pattern: str) -> str:
    """``pattern`` with regex syntax turned into spaces (for keyword + name matching)."""
    return " ".join(fixed_parts(pattern[:1000], "ere")) or pattern[:1000]


def terms_of(parts: Iterable[str]) -> list[str]:
    """Identifier-like tokens of ``parts`` (≥ :data:`MIN_CHARS`, stop words dropped), in order, once each."""
    out: dict[str, None] = {}
    for part in parts:
        for t in _TOKEN.findall(part):
            if MIN_CHARS <= len(t) <= MAX_CHARS and t not in STOP_WORDS and not t.isdigit():
                out.setdefault(t, None)
    return list(out)


def literals_of(parts: Iterable[str]) -> list[str]:
    """Message-like fixed parts: at least :data:`MIN_LITERAL_CHARS` characters with a space
    (``"connection refused"``, ``"could not find %s"``)."""
    out = []
    for p in parts:
        words = [t for t in _TOKEN.findall(p) if t not in STOP_WORDS]
        if len(p) >= MIN_LITERAL_CHARS and " " in p.strip() and len(words) >= 2:
            out.append(p)
    return out


def identifier(pattern: str) -> str | None:
    """The identifier ``pattern`` searches for, or ``None`` when it names none: the name after
    a definition keyword (``class Session`` → ``Session``), else the first token with an
    underscore or an inner capital, else the first term."""
    if not pattern:
        return None
    text = _plain(pattern)
    m = _DEF.search(text)
    if m and MIN_CHARS <= len(m.group(2)) <= MAX_CHARS and m.group(2) not in STOP_WORDS:
        return m.group(2)
    tokens = terms_of([text])
    for t in tokens:
        if "_" in t.strip("_") or _HUMP.search(t):
            return t
    return tokens[0] if tokens else None


def language_of(path: str) -> str | None:
    """The language a path or name pattern implies by its extension (``*.py`` → python)."""
    name = path.rsplit("/", 1)[-1]
    m = re.search(r"(\.[A-Za-z0-9]+)\}?$", name)
    if m is None:
        return None
    return LANGUAGE_OF_EXTENSION.get(m.group(1).lower())


# ---------------------------------------------------------------------------- shell


#: Most shell tokens (words, a quoted part being part of its word, and runs of ``; & | ( ) < > ` ``,
#: outside here-document bodies) a
#: line may have to be parsed by bashlex. Its parse grows faster than them (4 KB of ``a|a|…``
#: took 82 ms, 2,000 plain words 35 ms, 400 tokens of ``ab;ab;…`` 12 ms); the 1,384 lines of the
#: 48 recorded agent runs (corpus/trajectories) have at most 212 (median 9). A line past
#: the bound is read up to its bound-th token (:func:`_shell_head`).
MAX_SHELL_TOKENS: Final = 250
#: Deepest nesting of ``(``/``{`` (``$(…)``, ``<(…)``, subshells, ``${…}``) bashlex may parse:
#: its cost grows with the square of it (50 nested ``$(`` in 156 bytes took 16 ms, 400 hit
#: Python's recursion limit after 77 ms). The recorded lines nest at most 1 deep. A line nesting
#: deeper is split by the ``shlex`` fallback (linear), which loses only what bashlex adds (the
#: commands inside ``$(…)``, compound commands).
MAX_SHELL_NESTING: Final = 8
_SHELL_TOKEN = re.compile(r"""(?:[^\s;&|()<>`'"\\]|\\.|'[^']*'|"(?:[^"\\]|\\.)*")+|[;&|()<>`]+|\S""")
_NESTING = re.compile(r"[(){}]")
#: Most simple commands of a line read (:func:`parse_call` reads the first 50; bashlex's cost
#: grows fastest with them: 125 of ``a;a;…`` took 6 ms): the head ends before the separator
#: (``;``, ``|``, ``&&``, ``||``, ``&``, ``|&``) that would start the next one. The recorded
#: lines have at most 6 commands.
MAX_SHELL_COMMANDS: Final = 50
_SEPARATORS: Final = frozenset({";", "|", "&&", "||", "&", "|&"})
#: A here-document (``<<EOF``, ``<<-EOF``, ``<<'EOF'``, ``<< "EOF"``; not a ``<<<`` here-string):
#: its delimiter, the rest of the line it starts on, then its body, the lines up to the delimiter
#: alone on a line (after tabs: ``<<-``) or the end of the text. A delimiter starts with a letter
#: or ``_`` (``1<<2`` is a shift).
_HEREDOC = re.compile(
    r"(?<![<\w])<<-?[ \t]*(['\"]?)([A-Za-z_]\w*)\1([^\n]*)\n(.*?)(?:(^\t*\2[ \t]*(?:\n|\Z))|\Z)", re.S | re.M
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
    (``<<'EOF'``, the form agents write: 79 of the 1,384 recorded lines; idank/bashlex#99).
    Linear in the length (the body's lazy scan stops at the delimiter line)."""
    if "<<" not in line:
        return line, ()
    docs: list[Heredoc] = []

    def cut(m: re.Match[str]) -> str:
        start = line.rfind("\n", 0, m.start()) + 1
        before = re.split(r"&&|\|\||[;|&]", line[start : m.start()])[-1]
        after = re.split(r"&&|\|\||[;|&]", m.group(3))[0]
        docs.append(Heredoc(f"{before}<<{m.group(2)}{after}".strip(), m.group(4), m.group(5) is not None))
        return f"<<{m.group(2)}{m.group(3)}\n{m.group(2)}\n"

    return _HEREDOC.sub(cut, line), tuple(docs)


def _shell_head(command: str) -> tuple[str, bool]:
    """``(head, deep)``: ``command`` (here-document bodies already out: :func:`split_heredocs`)
    up to the end of its :data:`MAX_SHELL_TOKENS`-th token or the start of its
    :data:`MAX_SHELL_COMMANDS`-th separator (all of it when shorter: every recorded line), and whether that head nests deeper than :data:`MAX_SHELL_NESTING` (quotes are
    not tracked: a bracket inside quotes counts, which only errs towards the fallback). What a
    line's parse costs is then bounded whatever its length; the commands past the head are not
    read (the first 50 of a line are). Linear in the length."""
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
    for m in _NESTING.finditer(head):
        if m.group() in "({":
            depth += 1
            if depth > MAX_SHELL_NESTING:
                return head, True
        elif depth:
            depth -= 1
    return head, False


def _bashlex_commands(command: str) -> list[list[str]] | None:
    """Simple commands of ``command`` as word lists (``$(…)`` inner commands included), with
    ``&&``/``;``/``|`` boundaries as ``[';']`` separators; ``None`` when bashlex refuses it.
    bashlex is imported here, on the first line that needs it (its parser module builds its
    grammar tables at import: ~50 ms of CPU that a plain one-command line never needs)."""
    import bashlex

    try:
        trees = bashlex.parse(command)
    except Exception:  # bashlex raises its own errors and sometimes others on odd input
        return None
    out: list[list[str]] = []

    def walk(node: Any) -> None:
        kind = getattr(node, "kind", "")
        if kind == "command":
            words: list[str] = []
            for part in node.parts:
                if part.kind == "word":
                    words.append(part.word)
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


def warm_shell_parser() -> None:
    """Import bashlex now (a long-lived server's preparation thread), so the first shell line
    that needs it does not pay the ~100 ms its grammar tables take to build."""
    import bashlex  # noqa: F401


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


def _plain_words(command: str) -> list[str] | None:
    """The words of a one-command line with nothing for bashlex to resolve (see
    ``_PLAIN_LINE``), by ``shlex.split``; ``None`` when the line needs the full parse."""
    if not _PLAIN_LINE.fullmatch(command) or ('"' in command and "'" in command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:  # an unbalanced quote: bashlex (and its fallback) decide
        return None
    if not words or words[0] in _SYNTAX_HEAD or re.match(r"^[A-Za-z_][A-Za-z0-9_]*\+?=", words[0]):
        return None
    return words


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def shell_words(command: str) -> tuple[tuple[str, ...], ...]:
    """The simple commands of a shell line as word tuples (``;``/``&&``/``|`` split,
    ``$(…)`` inner commands included): a plain line by ``shlex.split`` (the same words bashlex
    gives it, at a tenth of the cost), any other by ``bashlex`` with here-document bodies taken
    out and the line cut after :data:`MAX_SHELL_TOKENS` tokens (:func:`_shell_head`), falling back
    to the ``shlex`` splitter when bashlex refuses it or it nests too deep. Pure function of ``command``; the last
    ``PARSE_CACHE_SIZE`` distinct lines are cached (an LRU: a repeated line costs a lookup)."""
    head, deep = _shell_head(split_heredocs(command)[0])
    plain = _plain_words(head)
    if plain is not None:
        return (tuple(plain),)
    words = None if deep else _bashlex_commands(head)
    return tuple(tuple(w) for w in (words or _shlex_commands(head)))


def split_commands(command: str | list[Any]) -> list[Command]:
    """The simple commands of a shell line or an argv list, wrappers looked through, ``cd``
    applied to later commands, ``find -exec`` inner commands added after their ``find``."""
    if isinstance(command, list):
        argvs = [[str(w) for w in command if isinstance(w, (str, int, float))]]
        if len(argvs[0]) >= 3 and argvs[0][0].rsplit("/", 1)[-1] in _SHELLS and argvs[0][1] in _SHELL_C:
            return split_commands(argvs[0][2])
    else:
        argvs = [list(words) for words in shell_words(command)]
    out: list[Command] = []
    cwd = ""
    for words in argvs:
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]  # VAR=value prefixes
        words = _unwrap(words)
        if not words:
            continue
        head = words[0].rsplit("/", 1)[-1]
        if head == "cd":
            target = next((w for w in words[1:] if not w.startswith("-")), "")
            cwd = "" if target in ("", "~") else _join(cwd, target)
            continue
        if head == "git" and len(words) > 1:
            i = 1  # git's own options before the subcommand; -C/-c and the like take a value
            while i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in _GIT_VALUE_OPTIONS else 1
            if i < len(words):
                head = "git " + words[i]
                words = words[i:]
        elif head in _SHELLS and len(words) >= 3 and words[1] in _SHELL_C:
            out.extend(split_commands(words[2]))
            continue
        out.append(Command(head, words[1 : 1 + MAX_COMMAND_ARGS], cwd))
        if head == "find" and "-exec" in words:
            i = words.index("-exec")
            inner = [w for w in words[i + 1 :] if w not in ("{}", ";", "\\;", "+")]
            inner = _unwrap(inner)
            if inner:
                out.append(Command(inner[0].rsplit("/", 1)[-1], inner[1 : 1 + MAX_COMMAND_ARGS], cwd))
    return out


#: Most words read after a command's name: each operand costs its reader and the suggester a few
#: µs (2,000 operands of ``grep``/``ls``, which 4,000 characters allow, took 12 ms a call); the
#: 1,765 simple commands of the recorded agent runs have at most 13.
MAX_COMMAND_ARGS: Final = 100
#: Shells whose ``-c`` line is read as the command itself (``["bash", "-lc", "grep …"]``, as
#: Codex sends it), and the option words that run it (login and interactive flags before ``c``).
_SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash"})
_SHELL_C: Final = frozenset({"-c", "-lc", "-ic", "-lic", "-ilc"})
#: git's options that take the next word as their value (``git -C sub apply``).
_GIT_VALUE_OPTIONS: Final = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})


def _unwrap(words: list[str]) -> list[str]:
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
    """``path`` joined to the folder a ``cd`` moved to, normalised (``.``, ``..``; a ``..`` stops
    at the top): absolute when either is (``cd /testbed && grep x src`` searches ``/testbed/src``,
    which the suggester makes root-relative when it is under the root and drops otherwise)."""
    path = path.strip()
    if path.startswith("/"):
        return path
    parts = [p for p in (cwd + "/" + path).split("/") if p and p != "."]
    out: list[str] = []
    for p in parts:
        if p == ".." and out:
            out.pop()
        elif p != "..":
            out.append(p)
    return ("/" if cwd.startswith("/") else "") + "/".join(out)


def _clean_path(path: str, cwd: str = "") -> str:
    p = path.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    if p in (".", ""):
        return cwd
    return _join(cwd, p) if cwd and not p.startswith("/") else p.rstrip("/") if len(p) > 1 else p


def _short_flags(word: str) -> set[str]:
    return set(word[1:]) if re.fullmatch(r"-[A-Za-z]+", word) else set()


def _read_grep(cmd: Command, q: Query, rg: bool) -> None:
    """grep/egrep/fgrep/rg/ag/ack/git grep: options, pattern(s), paths."""
    values = _RG_VALUE_OPTS if rg else _GREP_VALUE_OPTS
    explicit: list[str] = []
    positional: list[str] = []
    flags: set[str] = set()
    args = cmd.args
    i = 0
    after_dashdash = False
    pathspecs: list[str] = []
    while i < len(args):
        w = args[i]
        if after_dashdash:
            pathspecs.append(w)
            i += 1
            continue
        if w == "--":
            after_dashdash = True
            i += 1
            continue
        if w.startswith("--"):
            name, eq, val = w.partition("=")
            if not eq and name in values and i + 1 < len(args):
                val = args[i + 1]
                i += 1
            if name in ("--regexp",):
                explicit.append(val)
            elif name in ("--include", "--glob", "--iglob") or (name == "--type" and not rg):
                q.name_patterns.append(val)
            elif name == "--type":
                lang = RG_TYPES.get(val)
                if lang:
                    q.languages.add(lang)
            elif name in ("--ignore-case", "--smart-case"):
                flags.add("i")
            elif name in ("--files-with-matches", "--files"):
                flags.add("l")
            elif name == "--fixed-strings":
                flags.add("F")
            elif name in ("--extended-regexp",):
                flags.add("E")
            elif name in ("--perl-regexp", "--pcre2"):
                flags.add("P")
            elif name == "--word-regexp":
                flags.add("w")
            elif name == "--line-number":
                flags.add("n")
            elif name == "--recursive":
                flags.add("r")
            i += 1
            continue
        if w.startswith("-") and len(w) > 1 and not w[1].isdigit():
            # short options, possibly combined (-rni) and with a glued value (-A3, -eFOO, -g*.py)
            j = 1
            while j < len(w):
                c = w[j]
                opt = "-" + c
                if opt in values:
                    val = w[j + 1 :]
                    if not val and i + 1 < len(args):
                        val = args[i + 1]
                        i += 1
                    if c == "e":
                        explicit.append(val)
                    elif c == "g" and rg:
                        q.name_patterns.append(val)
                    elif c == "t" and rg:
                        lang = RG_TYPES.get(val)
                        if lang:
                            q.languages.add(lang)
                    elif c == "E" and rg:
                        pass  # rg -E is --encoding
                    break
                flags.add(c)
                j += 1
            i += 1
            continue
        positional.append(w)
        i += 1
    if explicit:
        patterns, paths = explicit, positional
    else:
        patterns, paths = positional[:1], positional[1:]
    if cmd.name == "fgrep":
        flags.add("F")
    if cmd.name == "egrep":
        flags.add("E")
    if rg and "E" in flags:
        flags.discard("E")
    q.flags |= {f for f in flags if f in "ilnwFEPr"}
    dialect = (
        "fixed"
        if "F" in flags
        else ("ere" if rg or cmd.name in ("ag", "ack", "egrep") or flags & {"E", "P"} else "bre")
    )
    if cmd.name == "git grep" and not flags & {"E", "P", "F"}:
        dialect = "bre"
    for p in patterns:
        q.patterns.append(p)
        _add_pattern(q, p, dialect)
    for p in paths + pathspecs:
        if _GLOB.search(p):  # a shell glob (`httpx/*.py`, `*.md`) or a git pathspec names files
            q.name_patterns.append(_clean_path(p.lstrip(":"), cmd.cwd))
        else:
            q.scope.append(_clean_path(p, cmd.cwd))
    if not paths and not pathspecs and cmd.cwd:
        q.scope.append(cmd.cwd)


def _add_pattern(q: Query, pattern: str, dialect: str) -> None:
    parts = fixed_parts(pattern, dialect)
    for t in terms_of(parts):
        if t not in q.terms:
            q.terms.append(t)
    for lit in literals_of(parts):
        if lit not in q.literals:
            q.literals.append(lit)


def _read_find(cmd: Command, q: Query) -> None:
    args = cmd.args
    i = 0
    while i < len(args) and not args[i].startswith(("-", "(", "!")):
        q.scope.append(_clean_path(args[i], cmd.cwd))
        i += 1
    while i < len(args):
        w = args[i]
        if w in ("-not", "!", "-prune") and i + 2 < len(args) and args[i + 1].startswith("-"):
            i += 3  # an exclusion (-not -path './node_modules/*') names nothing searched for
            continue
        if w in ("-path", "-ipath", "-name", "-iname") and i + 2 < len(args) and args[i + 2] == "-prune":
            i += 3  # -path ./node_modules -prune: an exclusion too
            continue
        if w in ("-name", "-iname", "-path", "-ipath", "-wholename", "-regex", "-iregex") and i + 1 < len(args):
            val = args[i + 1]
            if w in ("-regex", "-iregex"):
                q.patterns.append(val)
                _add_pattern(q, val, "ere")
            else:
                q.name_patterns.append(val)
            if w.startswith("-i"):
                q.flags.add("i")
            i += 2
            continue
        if w == "-exec":
            break
        i += 1
    if not q.scope and cmd.cwd:
        q.scope.append(cmd.cwd)


def _read_fd(cmd: Command, q: Query) -> None:
    positional: list[str] = []
    glob_mode = False
    args = cmd.args
    i = 0
    while i < len(args):
        w = args[i]
        name, eq, val = w.partition("=")
        if name in ("-e", "--extension"):
            if not eq and i + 1 < len(args):
                val = args[i + 1]
                i += 1
            q.name_patterns.append("*." + val.lstrip("."))
        elif name in ("-g", "--glob"):
            glob_mode = True
        elif name in ("-i", "--ignore-case"):
            q.flags.add("i")
        elif name in _FD_VALUE_OPTS:
            if not eq:
                i += 1
        elif not w.startswith("-"):
            positional.append(w)
        i += 1
    if positional:
        pat = positional[0]
        if glob_mode or _GLOB.search(pat):
            q.name_patterns.append(pat)
        else:
            q.patterns.append(pat)
            _add_pattern(q, pat, "ere")
    for p in positional[1:]:
        q.scope.append(_clean_path(p, cmd.cwd))


def _read_ls(cmd: Command, q: Query) -> None:
    for w in cmd.args:
        if w.startswith("-"):
            continue
        if _GLOB.search(w):
            q.name_patterns.append(_clean_path(w, cmd.cwd))
        else:
            q.scope.append(_clean_path(w, cmd.cwd))
    if not any(not w.startswith("-") for w in cmd.args) and cmd.cwd:
        q.scope.append(cmd.cwd)


def _read_files(cmd: Command, q: Query) -> None:
    """cat/head/tail/nl/wc/less/bat/sed/awk/jq/yq: the file arguments are reads."""
    if cmd.name in ("head", "tail", "sed", "wc"):
        q.partial = True
    args = cmd.args
    positional: list[str] = []
    i = 0
    script_given = False
    while i < len(args):
        w = args[i]
        if cmd.name in ("head", "tail") and w in _HEAD_VALUE_OPTS:
            i += 2
            continue
        if cmd.name == "sed" and w in ("-e", "--expression"):
            script_given = True
            i += 2
            continue
        if cmd.name == "awk" and w in ("-F", "-v", "-f"):
            i += 2
            continue
        if cmd.name in ("jq", "yq") and w in ("--arg", "--argjson", "--slurpfile", "--rawfile"):
            i += 3
            continue
        if w.startswith("-") and len(w) > 1:
            i += 1
            continue
        positional.append(w)
        i += 1
    if cmd.name in ("sed", "awk", "jq", "yq") and not script_given and positional:
        program, positional = positional[0], positional[1:]
        if cmd.name == "awk":
            for m in re.finditer(r"/((?:[^/\\]|\\.)+)/", program):
                q.patterns.append(m.group(1))
                _add_pattern(q, m.group(1), "ere")
        elif cmd.name in ("jq", "yq"):
            for key in re.findall(r"\.([A-Za-z_][A-Za-z0-9_-]*)", program):
                if key not in q.keys:
                    q.keys.append(key)
                if len(key) >= MIN_CHARS and key not in q.terms:
                    q.terms.append(key)
    for p in positional:
        if p in ("-", "{}") or p.startswith("$"):
            continue
        if cmd.name in ("jq", "yq", "awk"):
            q.scope.append(_clean_path(p, cmd.cwd))  # a query of the file, not a read of it
        else:
            q.reads.append(_clean_path(p, cmd.cwd))


def _read_git(cmd: Command, q: Query) -> None:
    args = [a for a in cmd.args if not a.startswith("-")]
    if cmd.name == "git ls-files":
        for a in args:
            (q.name_patterns if _GLOB.search(a) else q.scope).append(_clean_path(a, cmd.cwd))
    elif cmd.name in ("git show", "git blame", "git log", "git diff"):
        for a in cmd.args[cmd.args.index("--") + 1 :] if "--" in cmd.args else args:
            if ":" in a and cmd.name == "git show":
                a = a.split(":", 1)[1]
            if "/" in a or "." in a:
                (q.reads if cmd.name in ("git show", "git blame") else q.scope).append(_clean_path(a, cmd.cwd))


def read_command(cmd: Command, q: Query) -> bool:
    """Fold one simple command into ``q``; ``True`` when it is search-class."""
    name = cmd.name
    if name in ("grep", "egrep", "fgrep", "git grep", "rg", "ag", "ack"):
        _read_grep(cmd, q, rg=name in ("rg", "ag", "ack"))
        return True
    if name == "find":
        _read_find(cmd, q)
        return True
    if name in ("fd", "fdfind"):
        _read_fd(cmd, q)
        return True
    if name in ("ls", "tree", "exa", "eza"):
        _read_ls(cmd, q)
        return True
    if name == "locate":
        for w in cmd.args:
            if not w.startswith("-"):
                q.name_patterns.append(w)
        return True
    if name in READ_COMMANDS:
        before = len(q.reads)
        _read_files(cmd, q)
        return len(q.reads) > before or bool(q.keys)
    if name.startswith("git "):
        sizes = (len(q.reads), len(q.scope), len(q.name_patterns))
        _read_git(cmd, q)
        return name in ("git ls-files", "git log", "git show", "git blame") and (
            (len(q.reads), len(q.scope), len(q.name_patterns)) != sizes or name in ("git ls-files",)
        )
    return False


# ---------------------------------------------------------------------------- results


_HIT_LINE = re.compile(r"^(?P<path>[^\s:][^:\n]*?)(?::(?P<line>\d+))?[:-](?:\d+[:-])?")
_PATH_LIKE = re.compile(r"^[\w.@+~/-][\w./@+~ -]*$")
_BARE_NAME = re.compile(r"^[A-Za-z][\w.+-]{1,63}$")
_HAS_EXT_OR_DIR = re.compile(r"(?:^|/)[^/]*\.[A-Za-z0-9]{1,12}$|/")


def result_paths(text: str | None, max_paths: int = MAX_RESULT_PATHS) -> list[str]:
    """Paths listed in a search's result text, first seen first, ``./`` stripped.

    Understood: ``Found N files`` lists and one-path-a-line output (glob, find, fd, ``rg -l``),
    ``path:line:text`` / ``path:text`` / ``path-line-text`` hit lines (rg, grep -rn, git grep),
    and ripgrep's heading mode (a path line followed by ``line:text`` lines). A line is taken as
    a path only when it looks like one (a folder separator or an extension, no spaces at its
    ends, no ``://``); headers, counts and code are skipped."""
    if not text:
        return []
    out: dict[str, None] = {}
    for raw in text[:MAX_RESULT_CHARS].splitlines():
        line = raw.strip()
        if not line or line.startswith(("Found ", "No files", "No matches", "--", "(")) or "://" in line:
            continue
        path = None
        if _PATH_LIKE.match(line) and " " not in line and (_HAS_EXT_OR_DIR.search(line) or _BARE_NAME.match(line)):
            path = line  # a bare name (LICENSE, Makefile) only means something if the file exists
        else:
            m = _HIT_LINE.match(line)
            if m and (m.group("line") or ":" in line):
                cand = m.group("path").strip()
                if _PATH_LIKE.match(cand) and _HAS_EXT_OR_DIR.search(cand) and " " not in cand:
                    path = cand
        if path is None:
            continue
        while path.startswith("./"):
            path = path[2:]
        path = path.rstrip("/")
        if path and not re.fullmatch(r"[\d.]+", path):
            out.setdefault(path, None)
            if len(out) >= max_paths:
                break
    return list(out)


# ---------------------------------------------------------------------------- the call


def _s(value: Any) -> str:
    return value[:MAX_INPUT_CHARS] if isinstance(value, str) else ""


def _first_path(inp: dict[str, Any]) -> str:
    for key in ("file_path", "path", "filePath", "filename", "file", "notebook_path", "target_file"):
        if isinstance(inp.get(key), str):
            return inp[key][:MAX_INPUT_CHARS]
    return ""


def _bash_text(inp: dict[str, Any]) -> tuple[str, str | list[Any]]:
    """(signal text, command as given) of a bash input (``command``/``cmd``, string or list)."""
    raw = inp.get("command", inp.get("cmd"))
    if isinstance(raw, list):
        words = [str(w) for w in raw if isinstance(w, (str, int, float))][:200]
        if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in _SHELLS and words[1] in _SHELL_C:
            return words[2][:MAX_INPUT_CHARS], words[2][:MAX_INPUT_CHARS]
        return shlex.join(words)[:MAX_INPUT_CHARS], words
    text = _s(raw)
    return text, text


#: Python (``File "p.py", line 3, in f``, and a SyntaxError's location: :data:`_PY_SYNTAX`), pytest
#: (``p.py:3: in f``, and its innermost ``p.py:9: ValueError`` line: the error's name alone on the
#: line) and Node (``at f (p.js:3:1)``) frames, a Windows drive (``C:\…``) or UNC share (``\\h\s\…``)
#: included; Python and pytest list the innermost frame last, Node first. A warning's
#: ``p.py:9: DeprecationWarning: …`` line is no frame (libraries print them on every run: on the
#: tune trajectories they made a note of every run, read by no one).
_PY_FRAME = re.compile(r'^[ \t]*File "([^"\n]{1,400})", line \d+, in ([\w<>.]{1,100})', re.M)
_PYTEST_FRAME = re.compile(
    r"^((?:[A-Za-z]:)?[\w./\\-]{1,400}\.py):\d+: (?:in ([\w<>.]{1,100})|([A-Z]\w{0,60}(?:Error|Exception)))$",
    re.M,
)
#: Where Python reports a file that does not compile: ``File "p.py", line 9`` without ``, in``,
#: then the source line and its caret, then ``SyntaxError``/``IndentationError``/``TabError`` (the
#: traceback module's format for a SyntaxError). The innermost place of all: the frames above it
#: are the import chain that reached the file, and the error's name is its "function".
_PY_SYNTAX = re.compile(
    r'^[ \t]*File "([^"\n]{1,400})", line \d+\n(?:[^\n]{0,2000}\n){0,4}?[ \t]*((?:Syntax|Indentation|Tab)Error)\b',
    re.M,
)
_NODE_FRAME = re.compile(
    r"^[ \t]+at (?:([\w$.<>]{1,100}) )?\(?((?:[A-Za-z]:[\\/]|\\\\|/|\./|\w)[^\s():]{0,400}\.[cm]?[jt]sx?):\d+:\d+\)?",
    re.M,
)
#: Most frames kept of one output.
MAX_FRAMES: Final = 100


def traceback_frames(text: str) -> list[tuple[str, str]]:
    """``(path, function)`` of the traceback frames in a command's output, innermost first
    (paths as printed: absolute ones are mapped to the workspace by the caller). Reads the
    last :data:`MAX_RESULT_CHARS` characters (a traceback ends the output)."""
    text = text[-MAX_RESULT_CHARS:]
    out: list[tuple[str, str]] = []
    py = [(m.start(), m.group(1), m.group(2)) for m in _PY_FRAME.finditer(text)]
    # pytest's frames (`p.py:3: in f`) and its innermost line (`p.py:9: ValueError`)
    py += [(m.start(), m.group(1), m.group(2) or m.group(3)) for m in _PYTEST_FRAME.finditer(text)]
    py += [(m.start(), m.group(1), m.group(2)) for m in _PY_SYNTAX.finditer(text)]
    for _, path, func in sorted(py, reverse=True):
        out.append((path, func))
    for m in _NODE_FRAME.finditer(text):
        out.append((m.group(2), (m.group(1) or "").rsplit(".", 1)[-1] or "<anonymous>"))
    return out[:MAX_FRAMES]


#: Input keys holding the whole text a write tool puts in a file (Claude Code's ``Write``
#: ``content``, the Anthropic text editor tool's ``create`` ``file_text``, ``contents``).
SCRIPT_CONTENT_KEYS: Final = ("content", "file_text", "contents")
#: Longest script read, characters: of the 187 ``.py`` files written in the 48 recorded agent
#: runs (corpus/trajectories) the median is 538 characters, the 95th percentile 2,370 and
#: only the largest longer than this. A longer text is a module, not a script.
MAX_SCRIPT_CHARS: Final = 4096
#: Most atoms (``\w+`` runs and single other non-space characters: names, numbers, operators,
#: brackets, quotes) a script may have to be parsed: what Python's parser and the tree walk
#: cost grows with the tree's nodes, not with the characters (4 KiB of ``a;a;…``, ``''+''+…``
#: or ``[*'',…]`` took 3–14 ms where a real 4 KiB script took 2), and atoms bound the nodes.
#: The 236 scripts of at most 4,096 characters in the recorded runs (``.py`` writes and
#: ``python -c``) have at most 962 (median 113); at this bound the costliest hostile text
#: (``a;`` repeated) parses in about 1.8 ms. Counting stops at the bound (one C regex pass).
MAX_SCRIPT_ATOMS: Final = 1000
_ATOM = re.compile(r"\w+|[^\w\s]")
#: What one non-ASCII character of an atom weighs: the parser normalises every non-ASCII name
#: (NFKC), so 990 one-letter non-ASCII names cost 5.4 ms where 1,000 ASCII atoms cost 2.
NON_ASCII_ATOMS: Final = 3
#: ``ast.parse`` warns (``SyntaxWarning``/``DeprecationWarning``: an invalid escape ``'\q'``)
#: by printing the script's own text to stderr; warnings filters are process-wide, so the
#: parses that silence them take this lock.
_PARSE_LOCK = threading.Lock()
#: Most names one script yields.
MAX_SCRIPT_NAMES: Final = 20
_PYTHON_NAME = re.compile(r"^python(?:\d+(?:\.\d+)*)?$")
#: A python option word that ends in ``-c``: flags without a value (``-B``, ``-u``, ``-I``,
#: ``-E``, ``-O``…) then ``c``, the code the rest of the word or the next word.
_PYTHON_FLAGS_THEN_C = re.compile(r"^-[bBdEhiIOPqsSuvx]*c")


#: The text editor tools that view and write under one name (Anthropic's
#: ``str_replace_based_edit_tool``, ``str_replace_editor``): ``command`` is ``view`` (a read)
#: or ``create``/``str_replace``/``insert``/``undo_edit`` (a write).
TEXT_EDITOR_TOOLS: Final = frozenset({"str_replace_based_edit_tool", "str_replace_editor", "text_editor"})
#: The files of a patch: Codex ``apply_patch`` headers and unified-diff ``+++ b/`` lines.
#: The path is the rest of the line, stripped in Python: a lazy ``(.+?)\s*$`` backtracks over
#: every space of a line (19 KB of spaces took 1.4 s).
_PATCH_FILE = re.compile(r"^(?:\*\*\* (?:Add|Update|Delete) File: |\+\+\+ (?:b/)?)([^\n]*)", re.M)
#: A shell redirection's target (``> f``, ``>> f``, ``1> f``, ``&> f``, ``&>> f``, ``>| f``,
#: quoted or not; not ``2>&1``, ``>&-``, here-strings, ``<>``). No match starts inside a run of
#: digits (a 4,000-digit word would be scanned once a digit: 106 ms).
_REDIRECT = re.compile(r"(?<![<>\d])(?:&|\d+)?>>?\|?[ \t]*(?!&)(?:'([^'\n]*)'|\"([^\"\n]*)\"|([^\s;&|<>()'\"]+))")
#: ``sed``/``perl`` option words that edit in place: ``-i``, ``-i.bak``, ``-Ei``, ``-ri``,
#: ``--in-place``; perl's ``-pi``, ``-0pi``, ``-0777 -pi`` (switches without a value, then ``i``).
_SED_IN_PLACE = re.compile(r"^(?:-[nrEsuzl]*i|--in-place)")
_PERL_IN_PLACE = re.compile(r"^-[0-7lnpaswTtU]*i")  # one class: a nested repeat of -0… backtracked exponentially
#: Commands that write their last operand (``cp a b``, ``mv a b``, ``install a b``) or every
#: operand (``tee a b``).
_COPY_COMMANDS: Final = frozenset({"cp", "mv", "install"})
#: ``git apply``/``patch`` options that only look: they change nothing.
_DRY_RUN: Final = frozenset({"--check", "--dry-run", "--stat", "--numstat", "--summary", "-h", "--help"})
#: ``Query.writes`` of a command that applies a patch (which files, it does not say).
PATCHED: Final = "*"


def _patched_paths(inp: dict[str, Any]) -> list[str]:
    """The files a patch input (``input``/``patch``/``diff``) names, at most 50."""
    text = next((inp[k] for k in ("input", "patch", "diff") if isinstance(inp.get(k), str)), "")
    # `diff -u` puts a tab and a timestamp after the path
    out = [m.group(1).split("\t", 1)[0].strip() for m in _PATCH_FILE.finditer(text[:MAX_RESULT_CHARS])]
    return [p for p in dict.fromkeys(out) if p and p != "/dev/null"][:50]


def _shell_writes(commands: list[Command], line: str) -> list[str]:
    """What a shell line changes (``Query.writes``): the file operands of ``sed -i`` and
    ``perl -i`` (:data:`_SED_IN_PLACE`, :data:`_PERL_IN_PLACE`; the first word, the script,
    left out), the targets of ``cp``/``mv``/``install`` and ``tee``, the targets of
    redirections (:data:`_REDIRECT`, read from the line's text: a quoted ``>`` can count too,
    which only errs towards "edited"), :data:`PATCHED` for ``git apply``/``git am``/``patch``
    unless they only check (:data:`_DRY_RUN`). Paths after a ``cd`` are joined to its folder."""
    out: list[str] = []
    for cmd in commands:
        words = [a for a in cmd.args if not a.startswith("-")]
        if (cmd.name == "sed" and any(_SED_IN_PLACE.match(a) for a in cmd.args)) or (
            cmd.name == "perl" and any(_PERL_IN_PLACE.match(a) for a in cmd.args)
        ):
            files = [w for w in words[1:] if w not in ("{}", ";", "+")]
            # no file named: `find … -exec sed -i … {} +`, `… | xargs sed -i …` edit files the
            # line does not say, like a patch
            out += [_write_target(w, cmd.cwd) for w in files] if files else [PATCHED]
        elif cmd.name in _COPY_COMMANDS and len(words) >= 2:
            out.append(_write_target(words[-1], cmd.cwd))
        elif cmd.name == "tee":
            out += [_write_target(w, cmd.cwd) for w in words]
        elif cmd.name in ("git apply", "patch", "git am") and not _DRY_RUN & set(cmd.args):
            out.append(PATCHED)
    targets = (next(g for g in m.groups() if g is not None) for m in _REDIRECT.finditer(line[:MAX_INPUT_CHARS]))
    cwd = _redirect_cwd(commands)
    out += [_write_target(t, cwd) for t in targets if t and not t.startswith("/dev/")]
    return [p for p in dict.fromkeys(out) if p][:50]


def _write_target(path: str, cwd: str) -> str:
    """A written path joined to the folder a ``cd`` moved to, as it is: absolute when that
    folder is (``cd /testbed && echo x > f`` writes ``/testbed/f``), its ``..`` kept (unlike
    :func:`_join`, which stops them at the root), so that the suggester's ``_written_path``,
    which normalises every written path, finds ``cd src && … > ../../f`` outside the workspace."""
    p = path.strip()
    return f"{cwd.rstrip('/')}/{p}" if p and cwd and not p.startswith("/") else p


def _redirect_cwd(commands: list[Command]) -> str:
    """The folder redirections of a line are taken in: the last ``cd``'s (a line that moves to
    one folder and writes there, ``cd src && echo x > f``); the root when none moved."""
    return commands[-1].cwd if commands else ""


def _inline_python(cmd: Command) -> str | None:
    """The code of ``python -c CODE`` (``python3``, ``python3.11``…), else ``None``."""
    if not _PYTHON_NAME.match(cmd.name):
        return None
    args = cmd.args
    skip = False
    for i, a in enumerate(args):
        if skip:  # the value of -W / -X
            skip = False
            continue
        flags = _PYTHON_FLAGS_THEN_C.match(a)
        if flags is not None:  # -c, -Bc, -uc, -cCODE, -IcCODE
            rest = a[flags.end() :]
            return rest if rest else (args[i + 1] if i + 1 < len(args) else None)
        if a in ("-W", "-X"):
            skip = True
            continue
        if not a.startswith("-") or a in ("-m", "-", "--") or a.startswith("-m"):
            return None  # a script file, a module or stdin runs, not inline code
    return None


def _heredoc_script(heredocs: tuple[Heredoc, ...], cwd: str) -> tuple[str, str]:
    """``(code, path)`` of the first here-document that is a Python script: the input of
    ``python`` (``python3 - <<'EOF'``: path ``""``) or written to a ``.py`` file
    (``cat <<'EOF' > repro.py``, ``cat > repro.py <<EOF``: 98 of the 107 here-documents in the
    recorded agent runs are such writes, a reproduction script as often as not), at most
    :data:`MAX_SCRIPT_CHARS` and closed (a body that runs to the end of the input may have been
    cut at :data:`MAX_INPUT_CHARS`); ``("", "")`` when none is."""
    for doc in heredocs:
        if not doc.closed or len(doc.body) > MAX_SCRIPT_CHARS:
            continue
        try:
            words = shlex.split(doc.command)
        except ValueError:
            words = doc.command.split()
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]
        words = _unwrap(words)
        if words and _PYTHON_NAME.match(words[0].rsplit("/", 1)[-1]):
            return doc.body, ""
        for m in _REDIRECT.finditer(doc.command):
            target = next(g for g in m.groups() if g is not None)
            if target.lower().endswith(".py"):
                return doc.body, _write_target(target, cwd)
    return "", ""


def script_names(code: str) -> list[tuple[str, str]]:
    """``(module, name)`` of the imported names a Python script uses, in the order of their
    first use, at most :data:`MAX_SCRIPT_NAMES`: ``from a.b import c`` then ``c(…)`` gives
    ``("a.b", "c")``; ``import a.b as m`` (or ``import a.b``) then ``m.f(…)`` (``a.b.f``) gives
    ``("a.b", "f")``. Relative and ``*`` imports, dunder names and methods of objects are left
    out (nothing says where those live), and so are names shorter than :data:`MIN_CHARS`
    (``x``, ``I``, ``ZZ``: symbols and constants a script imports to build its input). The text
    is parsed with :func:`ast.parse` (never run; its warnings silenced, :data:`_PARSE_LOCK`);
    ``[]`` when it is longer than :data:`MAX_SCRIPT_CHARS`, has more than
    :data:`MAX_SCRIPT_ATOMS` atoms, imports nothing or is no Python. Never raises."""
    if not isinstance(code, str) or not code.strip() or len(code) > MAX_SCRIPT_CHARS or "import" not in code:
        return []
    atoms = 0
    for m in _ATOM.finditer(code):
        atoms += 1 if m.group().isascii() else NON_ASCII_ATOMS * len(m.group())
        if atoms > MAX_SCRIPT_ATOMS:
            return []
    try:
        with _PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
        nodes = list(ast.walk(tree))
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return []
    names: dict[str, tuple[str, str]] = {}  # local name → (module, imported name)
    modules: dict[str, str] = {}  # local name → module
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    modules[alias.asname] = alias.name
                else:
                    top = alias.name.split(".", 1)[0]
                    modules[top] = top
    if not names and not modules:
        return []
    inner = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
    uses: list[tuple[int, int, str, str]] = []
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
            module, name = names[node.id]
            uses.append((node.lineno, node.col_offset, module, name))
        elif isinstance(node, ast.Attribute) and id(node) not in inner:
            chain = [node.attr]
            base: ast.expr = node.value
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id in modules:
                parts = [modules[base.id], *reversed(chain)]
                uses.append((node.lineno, node.col_offset, ".".join(parts[:-1]), parts[-1]))
    out: dict[tuple[str, str], None] = {}
    for *_, module, name in sorted(uses):
        if not name.startswith("__") and len(name) >= MIN_CHARS and len(out) < MAX_SCRIPT_NAMES:
            out[(module, name)] = None
    return list(out)


def _recursive(cmd: Command) -> bool:
    """Whether a grep-like command searches folders without being given one (``grep -r``;
    ``rg``/``ag``/``ack`` read their input when piped, so they count as not recursive here)."""
    if cmd.name not in ("grep", "egrep", "fgrep"):
        return False
    return any(
        a in ("--recursive", "--dereference-recursive")
        or (a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a))
        for a in cmd.args
    )


def _code_shaped(token: str) -> bool:
    """Whether a word of a question is a code name: an underscore inside, an inner capital
    (``LatexPrinter``, ``getUser``) or a dotted/``::`` path."""
    return (
        "_" in token.strip("_")
        or bool(_HUMP.search(token))
        or "." in token
        or "::" in token
        or token != token.strip("_")
    )


def parse_question(text: str) -> Query:
    """The :class:`Query` of a free-text question (``"package version"``, ``"docs for retry"``,
    ``"LatexPrinter"``): its words are the terms, the whole text the pattern the pack signals
    read, no paths. Never raises."""
    text = _s(text).strip()
    q = Query(QUESTION_TOOL, text=text, question=True)
    if text:
        q.patterns.append(text)
        _add_pattern(q, text, "fixed")
        q.commands.append(QUESTION_TOOL)
    return q


def parse_call(name: str, inp: dict[str, Any], result_text: str | None = None, is_error: bool = False) -> Query:
    """The :class:`Query` of one tool call (see the module docstring); ``name`` ==
    :data:`QUESTION_TOOL` reads ``inp["query"]`` as a free-text question
    (:func:`parse_question`). Never raises."""
    tool = name.strip().lower()
    if tool == QUESTION_TOOL:
        text = inp.get("query")
        return parse_question(text if isinstance(text, str) else "")
    if tool in TEXT_EDITOR_TOOLS:  # one tool, the `command` says which: `view` reads, the rest write
        tool = "read" if inp.get("command") == "view" else "write"
    if tool in WRITE_TOOLS or tool.endswith(("edit", "_write")):
        path = _first_path(inp)
        q = Query("write", path, reads=[_clean_path(path)] if path else [], is_error=is_error)
        if not path:  # a patch names its files inside (apply_patch)
            q.reads = [_clean_path(p) for p in _patched_paths(inp)]
        body = next((inp[k] for k in SCRIPT_CONTENT_KEYS if isinstance(inp.get(k), str)), None)
        if body is not None and path.lower().endswith(".py") and len(body) <= MAX_SCRIPT_CHARS:
            q.script_code, q.script_path = body, path
        return q
    tool = TOOL_ALIASES.get(tool, "other")
    q = Query(tool, is_error=is_error)
    if tool == "grep":
        pattern = next((_s(inp.get(k)) for k in ("pattern", "query", "regex") if isinstance(inp.get(k), str)), "")
        parts = [pattern, _s(inp.get("glob")), _s(inp.get("path")), _s(inp.get("include"))]
        q.text = " ".join(p for p in parts if p)
        if pattern:
            q.patterns.append(pattern)
            _add_pattern(q, pattern, "fixed" if inp.get("fixed_strings") or inp.get("literal") else "ere")
        for key in ("glob", "include"):
            if _s(inp.get(key)):
                q.name_patterns.append(_s(inp.get(key)))
        if _s(inp.get("type")):
            lang = RG_TYPES.get(_s(inp.get("type")))
            if lang:
                q.languages.add(lang)
        if _s(inp.get("path")):
            q.scope.append(_clean_path(_s(inp.get("path"))))
        if inp.get("-i") is True or inp.get("case_insensitive") is True or inp.get("ignore_case") is True:
            q.flags.add("i")
        if inp.get("output_mode") == "files_with_matches" or "output_mode" not in inp:
            q.flags.add("l")
        q.commands.append("grep")
    elif tool == "glob":
        pattern = _s(inp.get("pattern"))
        q.text = " ".join(p for p in [pattern, _s(inp.get("path"))] if p)
        if pattern:
            q.name_patterns.append(pattern)
        if _s(inp.get("path")):
            q.scope.append(_clean_path(_s(inp.get("path"))))
        q.commands.append("glob")
    elif tool == "read":
        path = _first_path(inp)
        q.text = path
        if path:
            q.reads.append(_clean_path(path))
        q.partial = any(inp.get(k) is not None for k in ("offset", "limit", "view_range", "start_line"))
        q.commands.append("read")
    elif tool == "bash":
        text, command = _bash_text(inp)
        if not text:
            q.tool = "other"
            return q
        search = False
        try:
            commands = split_commands(command)[:MAX_SHELL_COMMANDS]
        except Exception:  # a shell line is untrusted text: a parser surprise is "not a search"
            commands = []
        prev_found: bool | None = None  # whether the previous command was search-class
        line, heredocs = split_heredocs(command) if isinstance(command, str) else ("", ())
        q.writes = _shell_writes(commands, line)
        for cmd in commands:
            q.commands.append(cmd.name)
            before = list(q.reads)
            snap = copy.deepcopy(q) if cmd.name in _GREP_NAMES and prev_found is False else None
            found = read_command(cmd, q)
            if snap is not None and found and q.scope == snap.scope and q.reads == snap.reads and not _recursive(cmd):
                # `pip list | grep sphinx`, `python x.py | grep Error`: a grep without operands
                # filters the output of a command that is no search, not the workspace
                snap.commands = q.commands
                q, found = snap, False
            prev_found = found
            if found and cmd.name in _GREP_NAMES and not q.scope and before and q.reads == before:
                # ``cat F | grep P``: the grep searches F (F is its scope, not a file read)
                q.scope.extend(before)
                q.reads.clear()
            search |= found
        if not search:
            q.tool = "other"
            q.text = text
            if result_text:
                q.frames = traceback_frames(result_text)
            inline = next((c for c in (_inline_python(cmd) for cmd in commands) if c is not None), None)
            if inline is not None and len(inline) <= MAX_SCRIPT_CHARS:
                q.script_code = inline
            elif heredocs:
                q.script_code, q.script_path = _heredoc_script(heredocs, _redirect_cwd(commands))
            return q
        q.text = text
    else:
        return q
    for p in q.name_patterns + q.reads + q.scope:
        lang = language_of(p)
        if lang:
            q.languages.add(lang)
    if tool in ("glob", "bash") and result_text is not None and not is_error:
        q.listing = bool(set(q.commands) & _LISTING_NAMES) or tool == "glob"
    if not is_error:
        listed = result_paths(result_text)
        q.result_paths = [p for p in listed if p not in q.reads] if tool != "read" else []
    return q


def search_shaped(command: str | list[Any]) -> bool:
    """Whether a shell command (string or argv list) is search-class."""
    return parse_call("bash", {"command": command}).tool == "bash"


def iter_identifiers(q: Query) -> Iterator[str]:
    """The identifier first, then the other terms (each once)."""
    first = q.identifier
    if first:
        yield first
    for t in q.terms:
        if t != first:
            yield t
