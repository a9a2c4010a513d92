"""What a tool call does, read from the words of its name and of its input fields' keys.

Harnesses name the same few actions differently: a content search is Claude Code's ``Grep
{pattern}``, Cline's ``search_files {regex}``, Cursor's ``grep_search {query}``, SWE-agent's
``search_dir {search_term, dir}``, Rovo Dev's ``grep {content_pattern, path_glob}``. Rather than a
table of tool names, a call is read by construction (:func:`read_tool`):

* the **verb** of its name (:data:`VERB_WORDS`, over the words of ``mcp__srv__find-nodes``,
  ``getClassInfo``, ``run_terminal_cmd``…): search, find (files by name), list (a folder), read,
  edit, run — or a **symbol** lookup (:data:`SYMBOL_WORDS`: class, method, callers,
  references…, and whether it asks for the definition or for the uses);
* the **role** of each input field, composed from the words of its key (:func:`key_role` over
  :data:`KEY_WORDS`): ``content_pattern`` is a pattern of contents, ``path_glob`` a file-name
  glob, ``folder_path`` and ``target_directories`` scopes, ``file_paths`` files, ``class_name`` a
  symbol, ``line_ranges`` and ``view_range`` slices, ``initial_content`` a body, ``CommandLine``
  a command, ``case_sensitive: false`` a case-insensitive search. A few keys mean what the verb
  says (:data:`CONTEXT_ROLES`): a bare ``pattern``/``query`` is content for a search, a name for
  a file search, a symbol for a symbol lookup; a bare ``path`` is a scope for a search or a
  listing and the file of a read or a write.

The result is a :class:`ToolCall` in the query model's terms (``kind`` ``grep``, ``glob``,
``read``, ``bash``, ``write``, ``script`` or ``other``), from which ``parse_call`` builds the
``Query`` as for Claude Code's tools: a symbol lookup is the search for its definition (``class
X``, ``function m``) or for its name (callers, references); a folder listing is a ``glob`` of that
folder; a search tool that takes a file rather than a folder finds lines inside it (a read); an
editor's ``view`` reads a file or lists a folder (its result says which). Every table entry names
the harnesses known to use it, so ``bench/tool_roles.py`` can hold each agent family out of the
tables and see what it alone needed (``docs/SCHEME.md``, "Tool calls by role").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.suggester.parse.results import folder_listing
from dsh_sidecar.suggester.parse.words import TableMemo, name_words, singular

#: Longest value read from one field, characters.
MAX_FIELD_CHARS: Final = 4000
#: Most values read from a list field (``file_paths``, ``target_directories``), and most fields read.
MAX_LIST_VALUES: Final = 50
#: Deepest nesting of an edit tool's input searched for the files it writes
#: (``search_replace {edits: [{file_path}]}``, ``apply_patch {changes: [{path}]}``).
MAX_NESTING: Final = 3

# ---------------------------------------------------------------------------- the verbs of a name

#: A name word → the action it names, with the harnesses whose tool names use it. Precedence:
#: edit, run, a symbol lookup, then search, find, list, read (``find_and_replace_code`` edits;
#: ``search_file_content`` searches contents; ``file_search`` finds files by name). ``lsp``
#: marks the Language Server Protocol's own vocabulary, ``generic`` a common word no harness of
#: the corpus needs.
VERB_WORDS: Final[dict[str, tuple[str, str]]] = {
    # edit: the call changes files (learning only)
    "edit": ("edit", "claude-code cursor opencode swe-agent mini-swe-agent"),
    "write": ("edit", "claude-code gemini-cli cline opencode mini-swe-agent"),
    "replace": ("edit", "gemini-cli cline rovo-dev iswe serena"),
    "create": ("edit", "swe-agent rovo-dev openhands"),
    "insert": ("edit", "openhands swe-agent serena"),
    "delete": ("edit", "cursor rovo-dev"),
    "remove": ("edit", "generic"),
    "patch": ("edit", "codex"),
    "apply": ("edit", "codex"),
    "rename": ("edit", "lsp"),
    "move": ("edit", "generic"),
    "append": ("edit", "generic"),
    "update": ("edit", "generic"),
    "modify": ("edit", "generic"),
    "save": ("edit", "generic"),
    # run: a shell command line (or code) runs
    "bash": ("run", "claude-code opencode rovo-dev mini-swe-agent openhands"),
    "shell": ("run", "codex gemini-cli serena"),
    "exec": ("run", "codex"),
    "execute": ("run", "openhands cline serena"),
    "run": ("run", "cursor gemini-cli windsurf copilot"),
    "terminal": ("run", "cursor copilot zed"),
    "command": ("run", "cline windsurf"),
    "cmd": ("run", "cursor"),
    "sh": ("run", "generic"),
    "powershell": ("run", "generic"),
    # search: file contents
    "grep": ("search", "claude-code cursor opencode zed copilot windsurf rovo-dev"),
    "search": ("search", "cline cursor gemini-cli swe-agent copilot windsurf serena"),
    "rg": ("search", "generic"),
    "ripgrep": ("search", "generic"),
    "lookup": ("search", "generic"),
    # find: files by name
    "find": ("find", "swe-agent windsurf zed pando serena"),
    "glob": ("find", "claude-code gemini-cli opencode"),
    "locate": ("find", "generic"),
    # list: a folder
    "list": ("list", "cline cursor gemini-cli copilot opencode serena"),
    "ls": ("list", "claude-code"),
    "tree": ("list", "generic"),
    "expand": ("list", "rovo-dev"),
    "overview": ("list", "pando serena"),
    "explore": ("list", "generic"),
    # read: a file (or a symbol's source)
    "read": ("read", "claude-code cline cursor gemini-cli copilot opencode zed serena mini-swe-agent"),
    "view": ("read", "openhands swe-agent windsurf"),
    "open": ("read", "swe-agent rovo-dev"),
    "cat": ("read", "generic"),
    "show": ("read", "generic"),
    "get": ("read", "iswe pando serena"),
    "inspect": ("read", "rovo-dev"),
    "display": ("read", "generic"),
    "peek": ("read", "generic"),
}
#: Name words that make a find or a search one of files by name, not of contents
#: (``file_search``, ``find_file``, ``find_by_name``, ``find_path``), unless a content word says
#: otherwise (``search_file_content``).
FILE_NAME_WORDS: Final = frozenset({"file", "files", "filename", "filenames", "name", "path", "paths"})
CONTENT_WORDS: Final = frozenset({"content", "contents", "text", "code", "grep", "regex", "pattern", "string"})
#: Name words of a folder (``list_dir``, ``expand_folder``, ``list_directory``), and of a part of
#: a file (``expand_code_chunks``: a verb that lists a folder reads a file when its object is code).
FOLDER_WORDS: Final = frozenset({"dir", "dirs", "directory", "directories", "folder", "folders", "tree"})
PART_WORDS: Final = frozenset({"code", "chunk", "chunks", "line", "lines", "content", "contents", "source"})
#: Name words of tools that act outside the workspace (``WebSearch``, ``WebFetch``, a browser):
#: such a call is no search of the project whatever its fields say.
ELSEWHERE_WORDS: Final = frozenset({"web", "internet", "browser", "browse", "url", "http", "online", "google"})
#: Name words of a symbol lookup, and whether each asks for the definition (``True``) or for
#: the uses of the name (``False``): ``get_class_info`` and ``find-nodes`` ask where a name is
#: defined; ``get_symbol_info`` (occurrences), ``get_function_callers``, ``get_call_chain``,
#: ``find-references`` and ``list_code_usages`` ask where it is used. A word asking for uses wins.
SYMBOL_WORDS: Final[dict[str, tuple[bool, str]]] = {
    "class": (True, "iswe lsp"),
    "method": (True, "iswe lsp"),
    "function": (True, "iswe lsp"),
    "definition": (True, "cline lsp"),
    "declaration": (True, "lsp"),
    "node": (True, "pando"),
    "item": (True, "windsurf"),
    "symbol": (False, "iswe serena lsp"),
    "reference": (False, "pando lsp"),
    "referencing": (False, "serena"),
    "usage": (False, "copilot"),
    "caller": (False, "iswe"),
    "callee": (False, "generic"),
    "chain": (False, "iswe"),
    "hierarchy": (False, "iswe lsp"),
    "implementation": (False, "lsp"),
    "occurrence": (False, "generic"),
}
#: A symbol kind (a name word of the tool, a word of a symbol key or a value of a kind field;
#: LSP's ``SymbolKind`` names) → the definition keyword its search stands for
#: (``DEFINITION_KEYWORDS`` of ``patterns.py``).
KIND_KEYWORDS: Final = {
    "class": "class",
    "interface": "interface",
    "enum": "enum",
    "struct": "struct",
    "trait": "trait",
    "record": "record",
    "type": "type",
    "typealias": "type",
    "method": "function",
    "function": "function",
    "func": "function",
    "constructor": "function",
    "variable": "var",
    "constant": "const",
    "field": "var",
    "property": "var",
    "module": "module",
}

# ---------------------------------------------------------------------------- the roles of fields

#: A word of a field's key (keys are split like names: ``content_pattern``, ``SearchDirectory``,
#: ``symbolKinds``; a plural reads as its singular) → its class, with the harnesses whose fields
#: use it. A key's role is composed from its words (:func:`key_role`), so a field never seen is
#: read by the words it is made of.
KEY_WORDS: Final[dict[str, tuple[str, str]]] = {
    # what is searched for: a pattern, a regex, a query, a term
    "pattern": ("searched", "claude-code gemini-cli opencode windsurf cline rovo-dev serena"),
    "query": ("searched", "cursor copilot windsurf"),
    "q": ("searched", "pando"),
    "term": ("searched", "swe-agent"),
    "needle": ("searched", "generic"),
    "keyword": ("searched", "generic"),
    "expression": ("searched", "generic"),
    "regex": ("regex", "cline zed"),
    "regexp": ("regex", "copilot"),
    "substring": ("regex", "serena"),
    "search": ("searchverb", "swe-agent windsurf"),
    "grep": ("searchverb", "generic"),
    # which files: globs, exclusions
    "glob": ("glob", "claude-code zed rovo-dev serena"),
    "include": ("glob", "gemini-cli opencode cursor copilot windsurf zed"),
    "mask": ("glob", "serena"),
    "extension": ("glob", "windsurf"),
    "exclude": ("exclude", "cursor serena"),
    "ignore": ("exclude", "claude-code gemini-cli opencode"),
    # where: paths, folders, files
    "path": ("path", "claude-code cline gemini-cli copilot opencode zed openhands swe-agent rovo-dev windsurf serena"),
    "uri": ("path", "lsp"),
    "dir": ("folder", "swe-agent gemini-cli"),
    "directory": ("folder", "windsurf cursor"),
    "folder": ("folder", "rovo-dev"),
    "cwd": ("folder", "windsurf"),
    "scope": ("folder", "pando"),
    "file": ("file", "claude-code swe-agent cursor gemini-cli copilot opencode rovo-dev iswe windsurf"),
    "filename": ("filename", "swe-agent"),
    "notebook": ("file", "claude-code"),
    "target": ("target", "cursor pando"),
    # a symbol looked up: a name, LSP's symbol kinds
    "name": ("name", "swe-agent iswe pando copilot serena"),
    "identifier": ("name", "generic"),
    "symbol": ("symbol", "iswe copilot pando serena"),
    "class": ("symbol", "iswe lsp"),
    "method": ("symbol", "iswe lsp"),
    "function": ("symbol", "iswe lsp"),
    "interface": ("symbol", "lsp"),
    "struct": ("symbol", "lsp"),
    "enum": ("symbol", "lsp"),
    "kind": ("kind", "pando serena"),
    # a part of a file
    "line": ("slice", "swe-agent copilot windsurf zed cursor rovo-dev serena"),
    "range": ("slice", "openhands rovo-dev lsp"),
    "offset": ("slice", "claude-code gemini-cli opencode pando"),
    "limit": ("slice", "claude-code gemini-cli opencode"),
    # what runs, what is written
    "command": ("command", "claude-code codex openhands cline cursor gemini-cli opencode rovo-dev windsurf"),
    "cmd": ("command", "codex"),
    "code": ("code", "openhands"),
    "content": ("content", "claude-code gemini-cli cline opencode rovo-dev"),
    "text": ("content", "openhands"),
    "body": ("content", "serena"),
    # how: case, literal, output, options
    "case": ("case", "cursor zed copilot"),
    "sensitive": ("sensitive", "cursor zed"),
    "insensitive": ("insensitive", "windsurf"),
    "i": ("insensitive", "claude-code"),
    "fixed": ("fixed", "generic"),
    "literal": ("fixed", "generic"),
    "output": ("output", "claude-code"),
    "type": ("type", "claude-code"),
    "mode": ("option", "claude-code pando"),
    "max": ("option", "iswe pando"),
    "timeout": ("option", "mini-swe-agent rovo-dev"),
    "recursive": ("option", "cline serena"),
}
#: Roles the verb decides (:func:`_decide`): a bare pattern is content for a search, a name for
#: a file search, a symbol for a symbol lookup; a bare path a scope for a search or a listing,
#: the file of a read or a write; a bare name a file name or a symbol.
CONTEXT_ROLES: Final = ("ctx:pattern", "ctx:path", "ctx:name", "ctx:filename", "ctx:target")
#: An editor tool's ``command`` values (Anthropic's text editor, OpenHands' and SWE-agent's
#: ``str_replace_editor``): ``view`` reads, the others write.
EDITOR_COMMANDS: Final = frozenset({"view", "create", "str_replace", "insert", "undo_edit"})
_URL = LazyPattern(r"^[a-z][a-z0-9+.-]*://", re.I)
#: A symbol's name, qualified or not (``StringUtils``, ``org.x.Y``, ``A::b``, ``Cls#m``,
#: ``m(int, String)``).
_QUALIFIED_NAME = LazyPattern(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*(?:\([^()]{0,200}\))?$")


def key_role(key: str) -> tuple[str, tuple[str, ...]]:
    """``(role, the words that decided it)`` of an input field's key (``""``: none). Roles:
    ``content`` (a pattern searched in files), ``name`` (a file-name glob), ``extension``,
    ``exclude``, ``scope``, ``file``, ``symbol``, ``kind``, ``slice``, ``command``, ``code``,
    ``body``, ``case``/``casesensitive``, ``fixed``/``regexflag``, ``output``, ``rgtype``, and
    the verb's :data:`CONTEXT_ROLES`."""
    return _KEY_ROLES(key, (KEY_WORDS,))


def _key_role(key: str) -> tuple[str, tuple[str, ...]]:
    words = [singular(w, KEY_WORDS) for w in name_words(key)]
    cls: dict[str, str] = {}
    for w in words:
        if w in KEY_WORDS:
            cls.setdefault(KEY_WORDS[w][0], w)
    head = KEY_WORDS[words[-1]][0] if words and words[-1] in KEY_WORDS else ""

    def has(*classes: str) -> bool:
        return any(c in cls for c in classes)

    def by(*classes: str) -> list[str]:
        return [cls[c] for c in classes if c in cls]

    rules: list[tuple[bool, str, tuple[str, ...]]] = [
        (has("insensitive") or (has("case") and "ignore" in words), "case", ("case", "insensitive")),
        (has("sensitive"), "casesensitive", ("case", "sensitive")),
        (has("exclude"), "exclude", ("exclude",)),
        (has("regex") and bool({"is", "use"} & set(words)), "regexflag", ("regex",)),
        (has("fixed"), "fixed", ("fixed",)),
        (has("output"), "output", ("output",)),
        (has("option"), "", ("option",)),
        (has("command"), "command", ("command",)),
        (words == ["code"] and has("code"), "code", ("code",)),
        (has("kind"), "kind", ("kind", "symbol")),
        (has("glob"), "extension" if cls.get("glob") == "extension" else "name", ("glob",)),
    ]
    if has("searched", "regex"):
        if has("file", "filename", "name", "path", "folder"):
            rules.append((True, "name", ("searched", "regex", "file", "filename", "name", "path", "folder")))
        elif has("content", "searchverb", "regex"):
            rules.append((True, "content", ("searched", "regex", "content", "searchverb")))
        rules.append((True, "ctx:pattern", ("searched",)))
    rules += [
        (has("name") and has("symbol"), "symbol", ("name", "symbol")),
        (has("name"), "ctx:filename" if has("file") else "ctx:name", ("name", "file")),
        (has("symbol"), "symbol", ("symbol",)),
        (has("slice"), "slice", ("slice",)),
        (head == "content", "body", ("content",)),
        (has("folder") or (has("searchverb") and has("path")), "scope", ("folder", "searchverb", "path")),
        (has("filename"), "ctx:filename", ("filename",)),
        (has("file"), "file", ("file",)),
        (has("path"), "ctx:path", ("path",)),
        (has("content"), "body", ("content",)),
        (has("target"), "ctx:target", ("target",)),
        (has("searchverb"), "ctx:pattern", ("searchverb",)),
        (words == ["type"] and has("type"), "rgtype", ("type",)),
    ]
    for hit, role, classes in rules:
        if hit:
            return role, tuple(by(*classes))
    return "", ()


_KEY_ROLES: Final = TableMemo(_key_role)


# ---------------------------------------------------------------------------- the reading


@dataclass
class ToolCall:
    """A tool call in the query model's terms: ``kind`` (``grep``, ``glob``, ``read``,
    ``bash``, ``write``, ``script``, ``other``) and what its fields said. ``used`` lists the
    table entries the reading relied on (``verb:search``, ``key:pattern``, ``symbol:class``…),
    for the leave-one-agent-family-out check."""

    kind: str
    patterns: list[str] = field(default_factory=list)
    fixed: bool = False
    names: list[str] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    symbol: str = ""
    keyword: str = ""  # the definition keyword of a symbol lookup that asks for a definition
    command: str | list[Any] | None = None
    body: str | None = None
    code: str = ""
    partial: bool = False
    flags: set[str] = field(default_factory=set)
    rg_type: str = ""
    listing: bool = False
    used: list[str] = field(default_factory=list)


class _Fields:
    """An input's fields by role (each key read once by :func:`key_role`), indexed by role in
    the same pass: a reading asks for several roles' values, each a lookup, not a scan."""

    def __init__(self, inp: dict[str, Any], used: list[str]) -> None:
        self.items: list[tuple[str, str, Any]] = []  # (key, role, value)
        self.by_role: dict[str, list[tuple[str, Any]]] = {}  # role -> its (key, value), in input order
        self.used = used
        for k, v in list(inp.items())[:MAX_LIST_VALUES]:
            if isinstance(k, str):
                role, words = key_role(k)
                if role:
                    self.items.append((k, role, v))
                    self.by_role.setdefault(role, []).append((k, v))
                    used.extend(f"key:{w}" for w in words)

    def has(self, *roles: str) -> bool:
        return any(r in self.by_role for r in roles)

    def values(self, *roles: str) -> list[str]:
        """The string values of the fields of these roles, in the order given."""
        out: list[str] = []
        by_role = self.by_role
        for role in roles:
            for _, v in by_role.get(role, ()):
                out += ["*." + s.lstrip("*.") for s in _strings(v)] if role == "extension" else _strings(v)
        return out

    def raw(self, role: str) -> Any:
        found = self.by_role.get(role)
        return found[0][1] if found else None

    def key_of(self, role: str) -> str:
        found = self.by_role.get(role)
        return found[0][0] if found else ""


def read_tool(name: str, inp: dict[str, Any], result_text: str | None = None) -> ToolCall:
    """The :class:`ToolCall` of a tool's ``name`` and ``inp`` (module docstring); its
    ``result_text`` tells a folder view from a file view. Never raises."""
    names, verb_set, verb_used, elsewhere = _NAMES(name, (VERB_WORDS, SYMBOL_WORDS, ELSEWHERE_WORDS))
    if elsewhere:
        return ToolCall("other", used=list(elsewhere))
    words, verbs, used = list(names), set(verb_set), list(verb_used)  # copies: the memo's are shared
    fields = _Fields(inp if isinstance(inp, dict) else {}, used)
    call = _decide(words, verbs, fields, inp if isinstance(inp, dict) else {}, result_text)
    call.used = used
    return call


def _name_reading(name: str) -> tuple[tuple[str, ...], frozenset[str], tuple[str, ...], tuple[str, ...]]:
    """A tool name's words, verbs, the ``verb:`` entries they used and its ``elsewhere:`` words."""
    words = [singular(w, {**VERB_WORDS, **SYMBOL_WORDS}) for w in name_words(name)]
    elsewhere = tuple(f"elsewhere:{w}" for w in words if w in ELSEWHERE_WORDS)
    verbs = frozenset(VERB_WORDS[w][0] for w in words if w in VERB_WORDS)
    return tuple(words), verbs, tuple(f"verb:{w}" for w in words if w in VERB_WORDS), elsewhere


_NAMES: Final = TableMemo(_name_reading)


def _decide(
    words: list[str], verbs: set[str], fields: _Fields, inp: dict[str, Any], result_text: str | None
) -> ToolCall:
    """The call's kind, by precedence: an editor's command, edit, run, a symbol lookup, a
    content search, a file-name search, a folder listing, a read."""
    command = fields.raw("command")
    if isinstance(command, str) and command in EDITOR_COMMANDS and fields.values("ctx:path"):
        fields.used.append("editor:command")
        return _editor(command, fields, result_text)
    if "edit" in verbs:
        return _write(fields, inp)
    if "run" in verbs or (command is not None and not verbs):
        return _run(command, words, fields)
    symbol_words = [w for w in words if w in SYMBOL_WORDS]
    if symbol_words or fields.has("symbol"):
        call = _symbol(words, symbol_words, fields)
        if call is not None:
            return call
    content = fields.values("content")
    names = fields.values("name", "extension")
    file_search = (
        bool(verbs & {"search", "find"}) and bool(set(words) & FILE_NAME_WORDS) and not (set(words) & CONTENT_WORDS)
    )
    if "find" in verbs or file_search:
        names = fields.values("ctx:pattern", "ctx:name", "ctx:filename") + names  # a find's pattern names files
    elif "search" in verbs or content:
        content += fields.values("ctx:pattern")
    if content:
        if not fields.values("scope", "ctx:path"):
            inside = fields.values("file")
            if inside:  # a search tool that takes a file (not a folder) finds lines in it: a read
                fields.used.append("search:inside-file")
                return ToolCall("read", files=inside, partial=True)
        return _grep(content, names, fields)
    if names:
        return ToolCall("glob", names=names, scopes=_scopes(fields), listing=True)
    return _listing_or_read(words, verbs, fields)


def _run(command: Any, words: list[str], fields: _Fields) -> ToolCall:
    """A call that runs something: a shell command, a Python snippet, or something else."""
    if isinstance(command, (str, list)):
        return ToolCall("bash", command=command[:MAX_FIELD_CHARS] if isinstance(command, str) else command)
    code = next(iter(fields.values("code")), "")
    if code and {"python", "ipython"} & set(words):
        fields.used.append("run:python-code")
        return ToolCall("script", code=code)
    return ToolCall("other")


def _listing_or_read(words: list[str], verbs: set[str], fields: _Fields) -> ToolCall:
    """A call that names no content and no file names: a folder listing, a read, or something else."""
    part = verbs == {"list"} and bool(set(words) & PART_WORDS) and not set(words) & FOLDER_WORDS
    listing = ("list" in verbs and not part) or ("find" in verbs and "read" not in verbs)
    if listing or (set(words) & FOLDER_WORDS and not verbs & {"read", "edit"}):
        return ToolCall("glob", scopes=_scopes(fields) or [""], listing=True)
    if "read" in verbs or part or fields.has("file"):
        files = fields.values("file", "ctx:path", "ctx:target", "ctx:filename")
        if files:
            # a slice, or a pattern that narrows what is shown (``inspect_code {patterns}``)
            partial = any(r in ("slice", "ctx:pattern") and v is not None for _, r, v in fields.items)
            return ToolCall("read", files=files, partial=partial)
    return ToolCall("other")


def _grep(content: list[str], names: list[str], fields: _Fields) -> ToolCall:
    """A content search: its pattern (literal when the key names a term, not a pattern or a
    regex), globs, scopes, case and output flags, ripgrep type."""
    call = ToolCall("grep", patterns=content[:1], names=names, scopes=_scopes(fields))
    key = fields.key_of("content") or fields.key_of("ctx:pattern")
    call.fixed = bool(set(key_words(key)) & LITERAL_WORDS)
    for _, r, v in fields.items:
        if (r == "case" and v is True) or (r == "casesensitive" and v is False):
            call.flags.add("i")
        elif (r == "fixed" and v is True) or (r == "regexflag" and v is False):
            call.fixed = True
        elif r == "output" and v == "files_with_matches":
            call.flags.add("l")
    if not fields.has("output"):
        call.flags.add("l")  # a search tool without an output mode lists files (Grep's default)
    call.rg_type = next(iter(fields.values("rgtype")), "")
    return call


#: Key words of a literal text searched as written (``search_term``: ``Safelist.relaxed()``
#: looks for those characters), not a pattern.
LITERAL_WORDS: Final = frozenset({"term", "needle", "keyword", "string", "text", "literal"})


_KEY_WORDS: Final = TableMemo(lambda key: tuple(singular(w, KEY_WORDS) for w in name_words(key)))


def key_words(key: str) -> tuple[str, ...]:
    """A key's words, plurals as their singular."""
    return _KEY_WORDS(key, (KEY_WORDS,))


def _symbol(words: list[str], symbol_words: list[str], fields: _Fields) -> ToolCall | None:
    """A symbol lookup as the search it stands for: ``class X``/``function m`` when it asks for
    a definition, the bare name when it asks for uses; its scope node a scope."""
    name = next(iter(fields.values("symbol", "ctx:name", "ctx:pattern")), "")
    if not name:
        return None
    if not _QUALIFIED_NAME.match(name):  # free text (a full-text query of a symbol tool): searched as given
        return ToolCall("grep", patterns=[name], scopes=_scopes(fields), flags={"l"})
    fields.used.extend(f"symbol:{w}" for w in symbol_words)
    definition = bool(symbol_words) and all(SYMBOL_WORDS[w][0] for w in symbol_words)
    qualified = name.replace("::", ".").replace("#", ".")
    short = re.sub(r"\(.*$", "", qualified).rsplit(".", 1)[-1].strip() or qualified
    keyword = ""
    if definition:
        kinds = [w for w in words if w in KIND_KEYWORDS]
        kinds += [w for k, r, _ in fields.items if r == "symbol" for w in key_words(k) if w in KIND_KEYWORDS]
        kind_value = fields.raw("kind")
        kinds += [str(v).lower() for v in (kind_value if isinstance(kind_value, list) else [kind_value]) if v]
        keyword = next((KIND_KEYWORDS[k] for k in kinds if k in KIND_KEYWORDS), "function")
    patterns = [f"{keyword} {short}" if keyword else short]
    owner = re.sub(r"\(.*$", "", qualified).split(".")[-2:-1]
    if keyword == "function" and owner and owner[0][:1].isupper():
        # a method is defined inside its class: ``ClassHelper.convertPrimitive`` is looked up as
        # its class (one file), not as every definition of ``convertPrimitive``
        patterns.insert(0, f"class {owner[0]}")
    return ToolCall("grep", patterns=patterns, scopes=_scopes(fields), symbol=qualified, keyword=keyword, flags={"l"})


def _editor(command: str, fields: _Fields, result_text: str | None) -> ToolCall:
    """An editor tool: ``view`` of a file is a read, of a folder a listing (its result says
    so); any other command writes the file."""
    path = fields.values("ctx:path")[:1]
    if command != "view":
        body = fields.raw("body")
        return ToolCall("write", files=path, body=body if isinstance(body, str) else None)
    if folder_listing(result_text) or (path and path[0].endswith("/")):
        fields.used.append("editor:folder-view")
        return ToolCall("glob", scopes=path, listing=True)
    return ToolCall("read", files=path, partial=fields.has("slice"))


def _write(fields: _Fields, inp: dict[str, Any]) -> ToolCall:
    """An edit tool: the files it writes (nested edit lists included), and a body given whole."""
    files = fields.values("file", "ctx:path", "ctx:target", "ctx:filename") or _nested_files(inp, 0)
    body = fields.raw("body")
    return ToolCall("write", files=files, body=body if isinstance(body, str) else None)


def _nested_files(value: Any, depth: int) -> list[str]:
    """File values inside lists and objects of an edit's input (``edits: [{file_path}]``)."""
    if depth > MAX_NESTING:
        return []
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in list(value.items())[:MAX_LIST_VALUES]:
            role = key_role(k)[0] if isinstance(k, str) else ""
            if role in ("file", "ctx:path", "ctx:filename") and isinstance(v, str):
                out.append(v[:MAX_FIELD_CHARS])
            elif isinstance(v, (list, dict)):
                out += _nested_files(v, depth + 1)
    elif isinstance(value, list):
        for v in value[:MAX_LIST_VALUES]:
            out += _nested_files(v, depth + 1)
    return list(dict.fromkeys(out))[:MAX_LIST_VALUES]


# ---------------------------------------------------------------------------- field values


def _strings(value: Any) -> list[str]:
    """A field's string values: a string, or the strings of a list; URLs left out."""
    items = value[:MAX_LIST_VALUES] if isinstance(value, list) else [value]
    return [s[:MAX_FIELD_CHARS] for s in items if isinstance(s, str) and s.strip() and not _URL.match(s)]


def _scopes(fields: _Fields) -> list[str]:
    """What a search or a listing searches in: scope fields, then a bare path, then file fields."""
    return fields.values("scope", "ctx:path", "file")
