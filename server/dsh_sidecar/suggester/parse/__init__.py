"""The query model: what one tool call searches for, where, and what its result listed.

Every ``dsh/postExecute`` call becomes one frozen :class:`~.query.Query` (:func:`parse_call`):

* **tool inputs** — Claude Code's ``grep {pattern, path?, glob?, include?, type?, -i?,
  output_mode?}``, ``glob {pattern, path?}``, ``read {file_path|path}``, ``edit``/``write``
  (learning only), ``bash {command}`` where ``command`` is a string or a list (``["rg", "-n",
  "x"]``, as Codex sends it), and any other harness's tool read by the verb of its name and the
  roles of its fields' words (``roles.py``: SWE-agent's ``search_dir {search_term, dir}``, Rovo
  Dev's ``grep {content_pattern, path_glob}``, iSWE's ``get_class_info {class_name}`` as the
  search for ``class X``, OpenHands' ``execute_bash`` and ``str_replace_editor`` ``view`` of a
  file or a folder…);
* **shell** — a line's simple commands (``shell.py``: bashlex, here-documents, wrappers,
  ``cd``), each read by what it is (``commands.py``: grep and its kin, find, fd, ls, the file
  readers, git);
* **the result text** — the paths a search just listed, in each family's format (``results.py``);
* **a run that is no search** — its traceback frames (Python, pytest, Node, JVM), the Python
  script it writes or runs, the files it changes (``runs.py``).

From a pattern come its fixed parts, terms, literals and identifier (``patterns.py``). The
**languages** come from extensions (name patterns, ``--include``, ``-t``, files read or
searched). ``Query.text`` is what pack signals match (the same text the seed's probe read).
"""

from __future__ import annotations

import shlex
from typing import Any

from dsh_sidecar.suggester.parse.commands import GREP_NAMES, LISTING_NAMES, Reading, extend_new, read_command, recursive
from dsh_sidecar.suggester.parse.patterns import words_of
from dsh_sidecar.suggester.parse.query import Query
from dsh_sidecar.suggester.parse.results import result_paths
from dsh_sidecar.suggester.parse.roles import ToolCall, read_tool
from dsh_sidecar.suggester.parse.runs import (
    MAX_SCRIPT_CHARS,
    PATCHED,
    heredoc_script,
    inline_python,
    patched_paths,
    redirect_cwd,
    shell_writes,
    traceback_frames,
)
from dsh_sidecar.suggester.parse.shell import (
    MAX_SHELL_COMMANDS,
    SHELL_C,
    SHELLS,
    Command,
    Heredoc,
    clean_path,
    split_commands,
    split_heredocs,
    warm_shell_parser,
)
from dsh_sidecar.suggester.parse.tools import (
    MAX_INPUT_CHARS,
    QUESTION_TOOL,
    RG_TYPES,
    SCRIPT_CONTENT_KEYS,
    TEXT_EDITOR_TOOLS,
    TOOL_ALIASES,
    WRITE_TOOLS,
)
from dsh_sidecar.workspace.kinds import language_of

__all__ = ["PATCHED", "QUESTION_TOOL", "Query", "parse_call", "parse_question", "search_shaped", "warm_shell_parser"]


def parse_call(name: str, inp: dict[str, Any], result_text: str | None = None, is_error: bool = False) -> Query:
    """The :class:`Query` of one tool call (module docstring); ``name`` == ``QUESTION_TOOL``
    reads ``inp["query"]`` as a free-text question (:func:`parse_question`). Never raises."""
    tool = name.strip().lower() if isinstance(name, str) else ""
    if not isinstance(inp, dict):
        inp = {}
    if tool == QUESTION_TOOL:
        text = inp.get("query")
        return parse_question(text if isinstance(text, str) else "")
    if tool in TEXT_EDITOR_TOOLS:  # one tool, the `command` says which: `view` reads, the rest write
        if inp.get("command") != "view":
            return _write_call(inp, is_error)
        return _from_call(read_tool(tool, inp, result_text), result_text, is_error)
    if tool in WRITE_TOOLS or tool.endswith(("edit", "_write")):
        return _write_call(inp, is_error)
    alias = TOOL_ALIASES.get(tool)
    if alias == "bash":
        return _bash_call(inp, result_text, is_error)
    # a known tool reads as its canonical verb; any other by its name's words and its fields' roles
    return _from_call(read_tool(alias or name, inp, result_text), result_text, is_error)


def parse_question(text: str) -> Query:
    """The :class:`Query` of a free-text question (``"package version"``, ``"docs for retry"``,
    ``"LatexPrinter"``): its words are the terms, the whole text the pattern the pack signals
    read, no paths. Never raises."""
    text = _s(text).strip()
    if not text:
        return Query(QUESTION_TOOL, text=text, question=True)
    r = Reading(patterns=[text])
    r.add_pattern(text, "fixed")
    return Query(QUESTION_TOOL, text, r.patterns, r.terms, r.literals, commands=[QUESTION_TOOL], question=True)


def search_shaped(command: str | list[Any]) -> bool:
    """Whether a shell command (string or argv list) is search-class."""
    return parse_call("bash", {"command": command}).tool == "bash"


def _query(tool: str, text: str, r: Reading, commands: list[str], is_error: bool, **more: Any) -> Query:
    """Freeze a reading into the call's :class:`Query`."""
    return Query(
        tool,
        text,
        r.patterns,
        r.terms,
        r.literals,
        r.name_patterns,
        r.scope,
        r.reads,
        r.flags,
        r.languages,
        commands=commands,
        keys=r.keys,
        is_error=is_error,
        partial=r.partial,
        entries=r.entries,
        **more,
    )


def _searched(
    tool: str,
    text: str,
    r: Reading,
    commands: list[str],
    result_text: str | None,
    is_error: bool,
    content_search: bool = False,
    **more: Any,
) -> Query:
    """A search-class call: its reading plus the languages its paths imply, whether it is a
    listing (a line whose grep searches files, ``content_search``, is none: its listing
    commands only look around), and the paths its result listed (none for a read or a failure)."""
    for p in r.name_patterns + r.reads + r.scope:
        lang = language_of(p)
        if lang:
            r.languages.add(lang)
    listing = False
    if tool in ("glob", "bash") and result_text is not None and not is_error:
        listing = (bool(set(commands) & LISTING_NAMES) and not content_search) or tool == "glob"
    listed: list[str] = []
    if not is_error and tool != "read":  # a read's result is the file's text: it lists nothing
        listed = [p for p in result_paths(result_text) if p not in r.reads]
    matched = bool(result_text and result_text.strip()) and not is_error
    return _query(tool, text, r, commands, is_error, result_paths=listed, listing=listing, matched=matched, **more)


def _write_call(inp: dict[str, Any], is_error: bool) -> Query:
    """A write tool: the file it writes (a patch names its files inside: ``apply_patch``; an
    edit list its files: ``edits: [{file_path}]``) and, for a ``.py`` file given whole, its
    text as a script."""
    path = _first_path(inp)
    files = [path] if path else patched_paths(inp) or read_tool("edit", inp).files
    body = next((inp[k] for k in SCRIPT_CONTENT_KEYS if isinstance(inp.get(k), str)), None)
    return _written(path, [clean_path(f) for f in files], body, is_error)


def _written(path: str, reads: list[str], body: str | None, is_error: bool) -> Query:
    if body is not None and path.lower().endswith(".py") and len(body) <= MAX_SCRIPT_CHARS:
        return Query("write", path, reads=reads, is_error=is_error, script_code=body, script_path=path)
    return Query("write", path, reads=reads, is_error=is_error)


def _from_call(call: ToolCall, result_text: str | None, is_error: bool) -> Query:
    """The :class:`Query` of a call read by its roles (``roles.read_tool``): a search (a
    symbol lookup is the search for its definition or its name), a file-name search or a
    folder listing, a read, a shell line, a write, an inline script."""
    if call.kind == "bash" and call.command is not None:
        return _bash_call({"command": call.command}, result_text, is_error)
    if call.kind == "write":
        path = call.files[0] if call.files else ""
        body = call.body if isinstance(call.body, str) else None
        return _written(path, [clean_path(f) for f in call.files], body, is_error)
    if call.kind == "script":
        code = call.code if len(call.code) <= MAX_SCRIPT_CHARS else ""
        return Query("other", call.code[:MAX_INPUT_CHARS], is_error=is_error, script_code=code)
    if call.kind == "grep":
        dialect = "fixed" if call.fixed else "ere"
        terms: list[str] = []
        literals: list[str] = []
        for p in call.patterns:
            found_terms, found_literals = words_of(p, dialect)
            extend_new(terms, found_terms)
            extend_new(literals, found_literals)
        lang = RG_TYPES.get(call.rg_type)
        text = " ".join(call.patterns + call.names + call.scopes)
        return _tool_query(
            "grep",
            text,
            ["grep"],
            result_text,
            is_error,
            patterns=list(call.patterns),
            terms=terms,
            literals=literals,
            names=list(call.names),
            scope=[clean_path(s) for s in call.scopes],
            flags=set(call.flags),
            languages={lang} if lang else set(),
            lookup=bool(call.symbol),
        )
    if call.kind == "glob":
        text = " ".join(call.names + [s for s in call.scopes if s])
        scope = [clean_path(s) for s in call.scopes if s]
        commands = ["glob" if call.names else "ls"]
        return _tool_query("glob", text, commands, result_text, is_error, names=list(call.names), scope=scope)
    if call.kind == "read":
        reads = [clean_path(f) for f in call.files]
        return _tool_query("read", call.files[0], ["read"], result_text, is_error, reads=reads, partial=call.partial)
    return Query("other", is_error=is_error)


def _tool_query(
    tool: str,
    text: str,
    commands: list[str],
    result_text: str | None,
    is_error: bool,
    *,
    patterns: list[str] | None = None,
    terms: list[str] | None = None,
    literals: list[str] | None = None,
    names: list[str] | None = None,
    scope: list[str] | None = None,
    reads: list[str] | None = None,
    flags: set[str] | None = None,
    languages: set[str] | None = None,
    partial: bool = False,
    lookup: bool = False,
) -> Query:
    """:func:`_searched` of a call read by its roles, its fields given straight (no
    :class:`Reading` to fill and freeze: a tool call is one reading, never a fold of several)."""
    names = names if names is not None else []
    scope = scope if scope is not None else []
    reads = reads if reads is not None else []
    languages = languages if languages is not None else set()
    for p in (*names, *reads, *scope):
        lang = language_of(p)
        if lang:
            languages.add(lang)
    listed: list[str] = []
    if not is_error and tool != "read":  # a read's result is the file's text: it lists nothing
        listed = [p for p in result_paths(result_text) if p not in reads]
    return Query(
        tool,
        text,
        patterns if patterns is not None else [],
        terms if terms is not None else [],
        literals if literals is not None else [],
        names,
        scope,
        reads,
        flags if flags is not None else set(),
        languages,
        result_paths=listed,
        commands=commands,
        is_error=is_error,
        partial=partial,
        # a glob whose result was given is a listing: an empty one says the files do not exist
        listing=tool == "glob" and result_text is not None and not is_error,
        lookup=lookup,
        matched=bool(result_text and result_text.strip()) and not is_error,
    )


def _bash_call(inp: dict[str, Any], result_text: str | None, is_error: bool) -> Query:
    """A shell line: search-class when one of its commands is; otherwise a run, whose output's
    traceback frames and whose Python script are kept."""
    text, command = _bash_text(inp)
    if not text:
        return Query("other", is_error=is_error)
    try:
        commands = split_commands(command)[:MAX_SHELL_COMMANDS]
    except Exception:  # a shell line is untrusted text: a parser surprise is "not a search"
        commands = []
    line, heredocs = split_heredocs(command) if isinstance(command, str) else ("", ())
    writes = shell_writes(commands, line)
    r, names, search, reads_files = _fold(commands)
    if search:
        return _searched("bash", text, r, names, result_text, is_error, writes=writes, content_search=reads_files)
    frames = traceback_frames(result_text) if result_text else []
    code, path = _script_of(commands, heredocs)
    return _query("other", text, r, names, is_error, writes=writes, frames=frames, script_code=code, script_path=path)


def _fold(commands: list[Command]) -> tuple[Reading, list[str], bool, bool]:
    """Read each simple command in order: ``(what they said, their names, whether any is a
    search, whether a grep searched files)`` (a grep given files or folders, ``-r``, or the files
    a ``find`` found through ``xargs`` or ``-exec``: a line that also lists, ``ls -R | head &&
    grep -r "def f" pkg``, ``find . -name "*.py" | xargs grep -l X``, searches the files' content). A grep without file operands and without ``-r`` after a command that is no
    search (``pip list | grep sphinx``, ``python x.py | grep Error``) filters that command's
    output, not the workspace: it says nothing — also after a ``cd`` (``cd /repo && npm test |
    grep failing``: the folder it runs in is no operand). ``cat F | grep P``: the grep searches ``F``
    (``F`` is its scope, not a file read, after a ``cd`` too)."""
    draft = Reading()
    names: list[str] = []
    search = content = False
    prev_found: bool | None = None  # whether the previous command was search-class
    for cmd in commands:
        names.append(cmd.name)
        before = list(draft.reads)
        reading, found = read_command(cmd, draft)
        filters_output = cmd.name in GREP_NAMES and prev_found is False
        if filters_output and found and reading.operandless and not recursive(cmd):
            found = False
        else:
            draft.merge(reading)
            content |= found and cmd.name in GREP_NAMES and (not reading.operandless or recursive(cmd) or cmd.fed_files)
        prev_found = found
        # the grep's scope is only the folder it runs in: it searches what was read before it
        piped = reading.operandless and not recursive(cmd) and draft.scope == reading.scope
        if found and cmd.name in GREP_NAMES and before and draft.reads == before and (not draft.scope or piped):
            draft.scope[:] = before
            draft.reads.clear()
        search |= found
    return draft, names, search, content


def _script_of(commands: list[Command], heredocs: tuple[Heredoc, ...]) -> tuple[str, str]:
    """``(code, path)`` of the Python script a run runs inline (``python -c``) or writes or
    feeds to ``python`` in a here-document; ``("", "")`` when none."""
    inline = next((c for c in (inline_python(cmd) for cmd in commands) if c is not None), None)
    if inline is not None and len(inline) <= MAX_SCRIPT_CHARS:
        return inline, ""
    if heredocs:
        return heredoc_script(heredocs, redirect_cwd(commands))
    return "", ""


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
        # each word as far as a string command is read (a list's words were read whole)
        words = [str(w)[:MAX_INPUT_CHARS] for w in raw if isinstance(w, (str, int, float))][:200]
        if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in SHELLS and words[1] in SHELL_C:
            return words[2][:MAX_INPUT_CHARS], words[2][:MAX_INPUT_CHARS]
        return shlex.join(words)[:MAX_INPUT_CHARS], words
    text = _s(raw)
    return text, text
