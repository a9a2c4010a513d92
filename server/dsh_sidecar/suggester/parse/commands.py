"""What one simple shell command searches, lists or reads: the per-command readers.

``rg``/``grep``/``egrep``/``fgrep``/``ag``/``ack``/``git grep`` (pattern, ``-e``, ``-i``/``-l``/
``-n``/``-w``/``-F``/``-E``/``-P``, ``--include``/``-g``/``--glob``, ``-t``/``--type``, paths,
``--`` pathspecs), ``find`` (roots, ``-name``/``-iname``/``-path``/``-ipath``/``-regex``,
``-exec CMD {} ;``), ``fd`` (pattern, ``-e``, ``-g``, path), ``ls``/``tree`` (paths, globs),
``cat``/``head``/``tail``/``less``/``bat``/``nl``/``wc`` (files read), ``sed -n`` (script, files
read), ``awk`` (program's ``/regex/``, files read), ``jq`` (the filter's keys, files read),
``git ls-files``/``git log``/``git show``/``git blame``.

Each reader fills a fresh :class:`Reading` for its command (:func:`read_command`); the call's
parse folds them in order (:meth:`Reading.merge`) and freezes the result into its ``Query``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from dsh_sidecar.suggester.parse.patterns import GLOB, MIN_CHARS, words_of
from dsh_sidecar.suggester.parse.runs import in_place
from dsh_sidecar.suggester.parse.shell import Command, clean_path
from dsh_sidecar.suggester.parse.tools import (
    FD_VALUE_OPTS,
    GREP_VALUE_OPTS,
    HEAD_VALUE_OPTS,
    READ_COMMANDS,
    RG_TYPES,
    RG_VALUE_OPTS,
)

#: The grep-like commands (``git grep`` is read as one too, but never filters a pipe).
GREP_NAMES: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
#: The commands (and tools) whose output is a listing of paths.
LISTING_NAMES: Final = frozenset({"glob", "find", "fd", "fdfind", "ls", "tree", "git ls-files", "locate"})
#: grep/rg long options that only set a flag.
_LONG_FLAGS: Final = {
    "--ignore-case": "i",
    "--smart-case": "i",
    "--files-with-matches": "l",
    "--files": "l",
    "--fixed-strings": "F",
    "--extended-regexp": "E",
    "--perl-regexp": "P",
    "--invert-match": "v",
    "--pcre2": "P",
    "--word-regexp": "w",
    "--line-number": "n",
    "--recursive": "r",
}


@dataclass
class Reading:
    """What commands said about the search, in the query model's terms (``Query``'s fields of
    the same names). A reader fills a fresh one; :meth:`merge` folds it into the call's."""

    patterns: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    literals: list[str] = field(default_factory=list)
    name_patterns: list[str] = field(default_factory=list)
    scope: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    languages: set[str] = field(default_factory=set)
    keys: list[str] = field(default_factory=list)
    #: the scope paths asked about by name, not searched within (``Query.entries``)
    entries: list[str] = field(default_factory=list)
    partial: bool = False
    #: a grep-like command given no file operand (its scope, if any, is only the folder it
    #: runs in): after a command that is no search it reads that command's output
    operandless: bool = False

    def merge(self, other: Reading) -> None:
        """Fold ``other`` (a later command's reading) into this one: terms, literals and keys
        once each, first seen first; the rest appended."""
        self.patterns.extend(other.patterns)
        extend_new(self.terms, other.terms)
        extend_new(self.literals, other.literals)
        self.name_patterns.extend(other.name_patterns)
        self.scope.extend(other.scope)
        self.entries.extend(other.entries)
        self.reads.extend(other.reads)
        self.flags |= other.flags
        self.languages |= other.languages
        extend_new(self.keys, other.keys)
        self.partial = self.partial or other.partial

    def add_pattern(self, pattern: str, dialect: str) -> None:
        """A searched pattern's terms and literals (``patterns.words_of`` in ``dialect``)."""
        terms, literals = words_of(pattern, dialect)
        extend_new(self.terms, terms)
        extend_new(self.literals, literals)


def extend_new(into: list[str], items: Iterable[str]) -> None:
    for item in items:
        if item not in into:
            into.append(item)


def read_command(cmd: Command, so_far: Reading) -> tuple[Reading, bool]:
    """What ``cmd`` says (``so_far``: what the commands before it said), and whether it is
    search-class."""
    r = Reading()
    name = cmd.name
    if name in ("grep", "egrep", "fgrep", "git grep", "rg", "ag", "ack"):
        _read_grep(cmd, r, rg=name in ("rg", "ag", "ack"))
        return r, True
    if name == "find":
        _read_find(cmd, r, so_far)
        return r, True
    if name in ("fd", "fdfind"):
        _read_fd(cmd, r)
        return r, True
    if name in ("ls", "tree", "exa", "eza"):
        _read_ls(cmd, r)
        return r, True
    if name == "locate":
        r.name_patterns.extend(w for w in cmd.args if not w.startswith("-"))
        return r, True
    if name in READ_COMMANDS:
        _read_files(cmd, r)
        return r, bool(r.reads) or bool(so_far.keys) or bool(r.keys)
    if name.startswith("git "):
        _read_git(cmd, r)
        named = bool(r.reads or r.scope or r.name_patterns)
        return r, name in ("git ls-files", "git log", "git show", "git blame") and (named or name == "git ls-files")
    return r, False


def recursive(cmd: Command) -> bool:
    """Whether a grep-like command searches folders without being given one (``grep -r``;
    ``rg``/``ag``/``ack`` read their input when piped, so they count as not recursive here)."""
    if cmd.name not in ("grep", "egrep", "fgrep"):
        return False
    return any(
        a in ("--recursive", "--dereference-recursive")
        or (a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a))
        for a in cmd.args
    )


# ---------------------------------------------------------------------------- grep and its kin


@dataclass
class _GrepWords:
    """A grep line's words by role: ``-e`` patterns, positional words, ``--`` pathspecs, flags."""

    explicit: list[str] = field(default_factory=list)
    positional: list[str] = field(default_factory=list)
    pathspecs: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)


def _read_grep(cmd: Command, r: Reading, rg: bool) -> None:
    """grep/egrep/fgrep/rg/ag/ack/git grep: options, pattern(s), paths."""
    words = _grep_words(cmd.args, rg, r, git=cmd.name == "git grep")
    if words.explicit:
        patterns, paths = words.explicit, words.positional
    else:
        patterns, paths = words.positional[:1], words.positional[1:]
    flags = words.flags
    if cmd.name == "fgrep":
        flags.add("F")
    if cmd.name == "egrep":
        flags.add("E")
    if rg and "E" in flags:
        flags.discard("E")
    r.flags |= {f for f in flags if f in "ilnwFEPr"}
    dialect = _grep_dialect(cmd.name, rg, flags)
    # an inverted match (`-v`) keeps the lines without its pattern: what it filters out is not
    # what the call looks for (`grep -rn parse src | grep -v test`)
    for p in patterns if "v" not in flags else ():
        r.patterns.append(p)
        r.add_pattern(p, dialect)
    by_name = cmd.name in ("grep", "egrep", "fgrep") and not recursive(cmd)  # each operand a file to read
    for p in paths + words.pathspecs:
        if GLOB.search(p):  # a shell glob (`httpx/*.py`, `*.md`) or a git pathspec names files
            r.name_patterns.append(clean_path(p.lstrip(":"), cmd.cwd))
        else:
            r.scope.append(clean_path(p, cmd.cwd))
            if by_name and p in paths:
                r.entries.append(r.scope[-1])
    if not paths and not words.pathspecs:
        r.operandless = True
        if cmd.cwd:
            r.scope.append(cmd.cwd)


def _grep_dialect(name: str, rg: bool, flags: set[str]) -> str:
    """The regex dialect of a grep line: ``fixed`` (``-F``), ``ere`` or ``bre``."""
    if "F" in flags:
        return "fixed"
    if name == "git grep" and not flags & {"E", "P"}:
        return "bre"
    return "ere" if rg or name in ("ag", "ack", "egrep") or flags & {"E", "P"} else "bre"


def _grep_words(args: list[str], rg: bool, r: Reading, git: bool = False) -> _GrepWords:
    """Sort a grep line's words (name patterns and ``--type`` languages go to ``r``). ``--``
    ends the options: for ``git grep`` the pathspecs follow it, for the others the pattern
    (unless ``-e`` gave it) and the files (``grep -rn -- -x src``)."""
    values = RG_VALUE_OPTS if rg else GREP_VALUE_OPTS
    out = _GrepWords()
    i = 0
    while i < len(args):
        w = args[i]
        if w == "--":
            (out.pathspecs if git else out.positional).extend(args[i + 1 :])
            break
        if w.startswith("--"):
            i = _long_option(args, i, values, rg, r, out)
        elif w.startswith("-") and len(w) > 1 and not w[1].isdigit():
            i = _short_options(args, i, values, rg, r, out)
        else:
            out.positional.append(w)
        i += 1
    return out


def _long_option(args: list[str], i: int, values: frozenset[str], rg: bool, r: Reading, out: _GrepWords) -> int:
    """Read ``--name[=value]`` at ``i``; return the index of the last word it takes."""
    name, eq, val = args[i].partition("=")
    if not eq and name in values and i + 1 < len(args):
        val = args[i + 1]
        i += 1
    if name == "--regexp":
        out.explicit.append(val)
    elif name in ("--include", "--glob", "--iglob") or (name == "--type" and not rg):
        r.name_patterns.append(val)
    elif name == "--type":
        lang = RG_TYPES.get(val)
        if lang:
            r.languages.add(lang)
    elif name in _LONG_FLAGS:
        out.flags.add(_LONG_FLAGS[name])
    return i


def _short_options(args: list[str], i: int, values: frozenset[str], rg: bool, r: Reading, out: _GrepWords) -> int:
    """Read short options at ``i``, possibly combined (``-rni``) and with a glued value (``-A3``,
    ``-eFOO``, ``-g*.py``); return the index of the last word they take."""
    w = args[i]
    for j in range(1, len(w)):
        c = w[j]
        if "-" + c in values:
            val = w[j + 1 :]
            if not val and i + 1 < len(args):
                val = args[i + 1]
                i += 1
            if c == "e":
                out.explicit.append(val)
            elif c == "g" and rg:
                r.name_patterns.append(val)
            elif c == "t" and rg:
                lang = RG_TYPES.get(val)
                if lang:
                    r.languages.add(lang)
            # rg -E is --encoding: its value is skipped like any other
            break
        out.flags.add(c)
    return i


# ---------------------------------------------------------------------------- listings and reads


def _read_find(cmd: Command, r: Reading, so_far: Reading) -> None:
    """find: the roots, the name/path tests (exclusions left out), ``-regex``."""
    args = cmd.args
    i = 0
    while i < len(args) and not args[i].startswith(("-", "(", "!")):
        r.scope.append(clean_path(args[i], cmd.cwd))
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
                r.patterns.append(val)
                r.add_pattern(val, "ere")
            else:
                r.name_patterns.append(val)
            if w.startswith("-i"):
                r.flags.add("i")
            i += 2
            continue
        if w == "-exec":
            break
        i += 1
    if not so_far.scope and not r.scope and cmd.cwd:
        r.scope.append(cmd.cwd)


def _read_fd(cmd: Command, r: Reading) -> None:
    """fd/fdfind: the pattern (a glob with ``-g``), ``-e`` extensions, the search paths."""
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
            r.name_patterns.append("*." + val.lstrip("."))
        elif name in ("-g", "--glob"):
            glob_mode = True
        elif name in ("-i", "--ignore-case"):
            r.flags.add("i")
        elif name in FD_VALUE_OPTS:
            if not eq:
                i += 1
        elif not w.startswith("-"):
            positional.append(w)
        i += 1
    if positional:
        pat = positional[0]
        if glob_mode or GLOB.search(pat):
            r.name_patterns.append(pat)
        else:
            r.patterns.append(pat)
            r.add_pattern(pat, "ere")
    for p in positional[1:]:
        r.scope.append(clean_path(p, cmd.cwd))


def _read_ls(cmd: Command, r: Reading) -> None:
    """ls/tree: the folders listed, the globs. An ``ls`` operand is asked about by name (the
    entry itself, a file or a folder: :attr:`Reading.entries`) unless it is spelt as a folder
    (a trailing ``/``) or listed recursively (``-R``); ``tree`` lists inside its operands."""
    by_name = cmd.name != "tree" and not any(
        w == "--recursive" or (w.startswith("-") and not w.startswith("--") and "R" in w) for w in cmd.args
    )
    for w in cmd.args:
        if w.startswith("-"):
            continue
        if GLOB.search(w):
            r.name_patterns.append(clean_path(w, cmd.cwd))
        else:
            r.scope.append(clean_path(w, cmd.cwd))
            if by_name and not w.endswith("/"):
                r.entries.append(r.scope[-1])
    if not any(not w.startswith("-") for w in cmd.args) and cmd.cwd:
        r.scope.append(cmd.cwd)


def _read_files(cmd: Command, r: Reading) -> None:
    """cat/head/tail/nl/wc/less/bat/sed/awk/jq/yq: the file arguments are reads (of ``jq``,
    ``yq`` and ``awk``: queries of the file, its scope). ``sed -i``/``perl -i`` read nothing:
    they print nothing of the file, they change it (``runs.shell_writes``)."""
    if in_place(cmd):
        return
    if cmd.name in ("head", "tail", "sed", "wc"):
        r.partial = True
    program, positional = _program_and_files(cmd)
    if program is not None and cmd.name == "awk":
        for m in re.finditer(r"/((?:[^/\\]|\\.)+)/", program):
            r.patterns.append(m.group(1))
            r.add_pattern(m.group(1), "ere")
    elif program is not None and cmd.name in ("jq", "yq"):
        for key in re.findall(r"\.([A-Za-z_][A-Za-z0-9_-]*)", program):
            extend_new(r.keys, [key])
            if len(key) >= MIN_CHARS:
                extend_new(r.terms, [key])
    for p in positional:
        if p in ("-", "{}") or p.startswith("$"):
            continue
        if cmd.name in ("jq", "yq", "awk"):
            r.scope.append(clean_path(p, cmd.cwd))  # a query of the file, not a read of it
        else:
            r.reads.append(clean_path(p, cmd.cwd))


def _program_and_files(cmd: Command) -> tuple[str | None, list[str]]:
    """A reading command's program (``sed``/``awk``/``jq``/``yq``: the first operand unless
    given by ``-e``) and its file operands, options and their values left out."""
    args = cmd.args
    positional: list[str] = []
    i = 0
    script_given = False
    while i < len(args):
        w = args[i]
        if cmd.name in ("head", "tail") and w in HEAD_VALUE_OPTS:
            i += 2
        elif cmd.name == "sed" and w in ("-e", "--expression"):
            script_given = True
            i += 2
        elif cmd.name == "awk" and w in ("-F", "-v", "-f"):
            i += 2
        elif cmd.name in ("jq", "yq") and w in ("--arg", "--argjson", "--slurpfile", "--rawfile"):
            i += 3
        else:
            if not (w.startswith("-") and len(w) > 1):
                positional.append(w)
            i += 1
    if cmd.name in ("sed", "awk", "jq", "yq") and not script_given and positional:
        return positional[0], positional[1:]
    return None, positional


def _read_git(cmd: Command, r: Reading) -> None:
    """git ls-files (paths, globs), git show/blame (files read), git log/diff (paths)."""
    args = [a for a in cmd.args if not a.startswith("-")]
    if cmd.name == "git ls-files":
        for a in args:
            (r.name_patterns if GLOB.search(a) else r.scope).append(clean_path(a, cmd.cwd))
    elif cmd.name in ("git show", "git blame", "git log", "git diff"):
        for a in cmd.args[cmd.args.index("--") + 1 :] if "--" in cmd.args else args:
            if ":" in a and cmd.name == "git show":
                a = a.split(":", 1)[1]
            if "/" in a or "." in a:
                (r.reads if cmd.name in ("git show", "git blame") else r.scope).append(clean_path(a, cmd.cwd))
