"""The query model: what one tool call searches for, where, and what its result listed.

Every ``dsh/postExecute`` call becomes one frozen :class:`~.query.Query` (:func:`parse_call`):

* **tool inputs** — ``grep {pattern, path?, glob?, include?, type?, -i?, output_mode?}``,
  ``glob {pattern, path?}``, ``read {file_path|path}``, ``edit``/``write`` (learning only),
  ``bash {command}`` where ``command`` is a string or a list (``["rg", "-n", "x"]``, as Codex
  sends it); tool names are case-insensitive and a few aliases are known
  (``tools.TOOL_ALIASES``);
* **shell** — a line's simple commands (``shell.py``: bashlex, here-documents, wrappers,
  ``cd``), each read by what it is (``commands.py``: grep and its kin, find, fd, ls, the file
  readers, git);
* **the result text** — the paths a search just listed (``results.py``);
* **a run that is no search** — its traceback frames, the Python script it writes or runs,
  the files it changes (``runs.py``).

From a pattern come its fixed parts, terms, literals and identifier (``patterns.py``). The
**languages** come from extensions (name patterns, ``--include``, ``-t``, files read or
searched). ``Query.text`` is what pack signals match (the same text the seed's probe read).
"""

from __future__ import annotations

import shlex
from typing import Any

from dsh_sidecar.suggester.parse.commands import GREP_NAMES, LISTING_NAMES, Reading, read_command, recursive
from dsh_sidecar.suggester.parse.query import Query
from dsh_sidecar.suggester.parse.results import result_paths
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
    tool = name.strip().lower()
    if tool == QUESTION_TOOL:
        text = inp.get("query")
        return parse_question(text if isinstance(text, str) else "")
    if tool in TEXT_EDITOR_TOOLS:  # one tool, the `command` says which: `view` reads, the rest write
        tool = "read" if inp.get("command") == "view" else "write"
    if tool in WRITE_TOOLS or tool.endswith(("edit", "_write")):
        return _write_call(inp, is_error)
    tool = TOOL_ALIASES.get(tool, "other")
    if tool == "grep":
        return _searched("grep", *_grep_tool(inp), ["grep"], result_text, is_error)
    if tool == "glob":
        return _searched("glob", *_glob_tool(inp), ["glob"], result_text, is_error)
    if tool == "read":
        return _searched("read", *_read_tool(inp), ["read"], result_text, is_error)
    if tool == "bash":
        return _bash_call(inp, result_text, is_error)
    return Query(tool, is_error=is_error)


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
        **more,
    )


def _searched(
    tool: str, text: str, r: Reading, commands: list[str], result_text: str | None, is_error: bool, **more: Any
) -> Query:
    """A search-class call: its reading plus the languages its paths imply, whether it is a
    listing, and the paths its result listed (none for a read or a failure)."""
    for p in r.name_patterns + r.reads + r.scope:
        lang = language_of(p)
        if lang:
            r.languages.add(lang)
    listing = False
    if tool in ("glob", "bash") and result_text is not None and not is_error:
        listing = bool(set(commands) & LISTING_NAMES) or tool == "glob"
    listed: list[str] = []
    if not is_error:
        found = result_paths(result_text)
        listed = [p for p in found if p not in r.reads] if tool != "read" else []
    return _query(tool, text, r, commands, is_error, result_paths=listed, listing=listing, **more)


def _write_call(inp: dict[str, Any], is_error: bool) -> Query:
    """A write tool: the file it writes (a patch names its files inside: ``apply_patch``) and,
    for a ``.py`` file given whole, its text as a script."""
    path = _first_path(inp)
    reads = [clean_path(path)] if path else [clean_path(p) for p in patched_paths(inp)]
    body = next((inp[k] for k in SCRIPT_CONTENT_KEYS if isinstance(inp.get(k), str)), None)
    if body is not None and path.lower().endswith(".py") and len(body) <= MAX_SCRIPT_CHARS:
        return Query("write", path, reads=reads, is_error=is_error, script_code=body, script_path=path)
    return Query("write", path, reads=reads, is_error=is_error)


def _grep_tool(inp: dict[str, Any]) -> tuple[str, Reading]:
    """The grep tool's input: pattern, glob/include, type, path, case and output mode."""
    r = Reading()
    pattern = next((_s(inp.get(k)) for k in ("pattern", "query", "regex") if isinstance(inp.get(k), str)), "")
    parts = [pattern, _s(inp.get("glob")), _s(inp.get("path")), _s(inp.get("include"))]
    if pattern:
        r.patterns.append(pattern)
        r.add_pattern(pattern, "fixed" if inp.get("fixed_strings") or inp.get("literal") else "ere")
    for key in ("glob", "include"):
        if _s(inp.get(key)):
            r.name_patterns.append(_s(inp.get(key)))
    if _s(inp.get("type")):
        lang = RG_TYPES.get(_s(inp.get("type")))
        if lang:
            r.languages.add(lang)
    if _s(inp.get("path")):
        r.scope.append(clean_path(_s(inp.get("path"))))
    if inp.get("-i") is True or inp.get("case_insensitive") is True or inp.get("ignore_case") is True:
        r.flags.add("i")
    if inp.get("output_mode") == "files_with_matches" or "output_mode" not in inp:
        r.flags.add("l")
    return " ".join(p for p in parts if p), r


def _glob_tool(inp: dict[str, Any]) -> tuple[str, Reading]:
    """The glob tool's input: pattern and path."""
    r = Reading()
    pattern = _s(inp.get("pattern"))
    if pattern:
        r.name_patterns.append(pattern)
    if _s(inp.get("path")):
        r.scope.append(clean_path(_s(inp.get("path"))))
    return " ".join(p for p in [pattern, _s(inp.get("path"))] if p), r


def _read_tool(inp: dict[str, Any]) -> tuple[str, Reading]:
    """The read tool's input: the file, and whether it reads a slice (offset, limit, range)."""
    path = _first_path(inp)
    r = Reading(reads=[clean_path(path)] if path else [])
    r.partial = any(inp.get(k) is not None for k in ("offset", "limit", "view_range", "start_line"))
    return path, r


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
    r, names, search = _fold(commands)
    if search:
        return _searched("bash", text, r, names, result_text, is_error, writes=writes)
    frames = traceback_frames(result_text) if result_text else []
    code, path = _script_of(commands, heredocs)
    return _query("other", text, r, names, is_error, writes=writes, frames=frames, script_code=code, script_path=path)


def _fold(commands: list[Command]) -> tuple[Reading, list[str], bool]:
    """Read each simple command in order: ``(what they said, their names, whether any is a
    search)``. A grep without file operands and without ``-r`` after a command that is no
    search (``pip list | grep sphinx``, ``python x.py | grep Error``) filters that command's
    output, not the workspace: it says nothing. ``cat F | grep P``: the grep searches ``F``
    (``F`` is its scope, not a file read)."""
    draft = Reading()
    names: list[str] = []
    search = False
    prev_found: bool | None = None  # whether the previous command was search-class
    for cmd in commands:
        names.append(cmd.name)
        before = list(draft.reads)
        reading, found = read_command(cmd, draft)
        filters_output = cmd.name in GREP_NAMES and prev_found is False
        if filters_output and found and not reading.scope and not reading.reads and not recursive(cmd):
            found = False
        else:
            draft.merge(reading)
        prev_found = found
        if found and cmd.name in GREP_NAMES and not draft.scope and before and draft.reads == before:
            draft.scope.extend(before)
            draft.reads.clear()
        search |= found
    return draft, names, search


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
        words = [str(w) for w in raw if isinstance(w, (str, int, float))][:200]
        if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in SHELLS and words[1] in SHELL_C:
            return words[2][:MAX_INPUT_CHARS], words[2][:MAX_INPUT_CHARS]
        return shlex.join(words)[:MAX_INPUT_CHARS], words
    text = _s(raw)
    return text, text
