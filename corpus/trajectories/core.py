"""The shared core of the trajectory converters (``corpus/trajectories/``): git access, the shell
parser and the classification of an agent's commands, gold files, the index row and call line of
a trace, symbols of the files that matter, and the writer of the corpus files.

Each agent family has its own converter (``mini_swe_agent.py``, ``rovo_dev.py``, ``iswe.py``,
``codex.py``); ``convert.py`` runs them. The mapping rules are in ``README.md`` next to this file.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

#: Longest result text kept, characters (the issue's cut).
MAX_RESULT_CHARS = 2000
#: The agent's working directory in the SWE-bench images: the repository root.
WORKDIR = "/testbed"
CLASSES = ("search", "read", "edit", "run", "other")

GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}


class ConvertError(RuntimeError):
    """An input that is missing or inconsistent; the message says which."""


def git(git_dir: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
    """Output of ``git --git-dir=<git_dir> <args>`` with no system/global config and no fsmonitor.

    Raises :class:`ConvertError` on a non-zero exit."""
    cmd = ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", f"--git-dir={git_dir}", *args]
    proc = subprocess.run(cmd, input=stdin, capture_output=True, env=env or GIT_ENV, check=False)
    if proc.returncode != 0:
        raise ConvertError(f"{' '.join(cmd)}: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout


# --------------------------------------------------------------------------- shell parsing


@dataclass
class Segment:
    """One simple command of a shell line: its words (operators removed), output redirection
    targets, the heredoc / here-string fed to it, the cwd it runs in (relative to the workdir,
    ``""`` = root; ``..``-led when above or beside it: ``cd ..`` from the root is ``..``, ``cd
    /tmp`` is ``../tmp``; ``None`` = unknown) and whether its stdout goes into a pipe."""

    words: list[str]
    out: list[str] = field(default_factory=list)
    stdin: str | None = None
    cwd: str | None = ""
    piped: bool = False
    stdin_file: str | None = None
    workdir: str = WORKDIR


_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_OPERATORS = {"&&", "||", ";", "|", "&", "\n", "(", ")", ";;", "|&"}
_OPERATOR_CHARS = frozenset("();|&\n")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def split_heredocs(command: str) -> tuple[str, list[str]]:
    """``command`` without its heredoc bodies, and the bodies in order of appearance."""
    lines = command.split("\n")
    kept: list[str] = []
    bodies: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        kept.append(line)
        i += 1
        for m in _HEREDOC.finditer(line):
            delim, strip_tabs = m.group(3), m.group(1) == "-"
            body: list[str] = []
            while i < len(lines) and (lines[i].lstrip("\t") if strip_tabs else lines[i]).rstrip() != delim:
                body.append(lines[i])
                i += 1
            i += 1  # the delimiter line
            bodies.append("\n".join(body) + "\n")
    return "\n".join(kept), bodies


def strip_comments(text: str) -> str:
    """``text`` without its shell comments: an unquoted ``#`` at the start of a word up to the end
    of its line (quotes and backslash escapes are followed, so ``grep "#x"`` and ``a#b`` stay)."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            out.append(ch)
            if ch == "\\" and quote == '"' and i + 1 < len(text):
                out.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = ""
        elif ch == "\\" and i + 1 < len(text):
            out.append(text[i : i + 2])
            i += 1
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        elif ch == "#" and (i == 0 or text[i - 1] in " \t\n;&|("):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def tokens(command: str) -> list[str]:
    """Shell words and operators of ``command`` (POSIX quoting; newline is an operator).

    Falls back to whitespace splitting when the quoting is unbalanced."""
    lex = shlex.shlex(command, posix=True, punctuation_chars="();<>|&\n")
    lex.whitespace = " \t\r"
    lex.whitespace_split = True
    lex.commenters = ""
    try:
        return list(lex)
    except ValueError:
        return command.replace("\n", " \n ").split(" ")


def norm_path(path: str, cwd: str | None, workdir: str = WORKDIR) -> str | None:
    """A path operand as a repository-relative path, or ``None`` when outside the repository. A
    relative path that climbs above the root is resolved against the workdir, as the shell
    does: from ``cd ..``, ``testbed/x.py`` (``../testbed/x.py``) is ``x.py`` when the workdir is
    ``/testbed`` (the sidecar reads such a path back into the workspace the same way)."""
    full = walk_to(path, cwd, workdir)
    return None if full is None or outside(full) else full


def walk_to(path: str, cwd: str | None, workdir: str = WORKDIR) -> str | None:
    """Where ``path`` run in ``cwd`` points, relative to ``workdir`` (``""``: the root; led by
    ``..`` above or beside it, as :attr:`Segment.cwd`), or ``None`` when unknown."""
    if not path or path == "-":
        return None
    if path.startswith("/"):
        full = posixpath.relpath(posixpath.normpath(path), workdir)
    else:
        if cwd is None:
            return None
        full = posixpath.normpath(posixpath.join(cwd, path) if cwd else path)
        if outside(full):  # above the root: the workdir's own name may lead back into it
            full = posixpath.relpath(posixpath.normpath(posixpath.join(workdir, full)), workdir)
    return "" if full == "." else full


def outside(where: str) -> bool:
    """Whether a :func:`walk_to` answer is above or beside the root (``..``, ``../tmp``; not a
    name that starts with two dots, ``..foo``)."""
    return where == ".." or where.startswith("../")


def scratch_key(path: str | None, cwd: str | None, workdir: str = WORKDIR) -> str:
    """Key of a written file in the per-run scratch map: its repository-relative path, else its
    absolute path (``/tmp/fix.py``, also written as ``fix.py`` after ``cd /tmp``), else ``""``."""
    if not path:
        return ""
    where = walk_to(path, cwd, workdir)
    if where is None:
        return ""
    return posixpath.normpath(posixpath.join(workdir, where)) if outside(where) else where


def segments(command: str, workdir: str = WORKDIR) -> list[Segment]:
    """The simple commands of a shell line, with ``cd`` applied to the following ones."""
    text, bodies = split_heredocs(command)
    toks = tokens(strip_comments(text.replace("\\\n", " ")))  # backslash-newline: a line continuation
    segs: list[Segment] = []
    cur = Segment([], workdir=workdir)
    cwd: str | None = ""
    body_i = 0
    i = 0

    def close(piped: bool) -> None:
        nonlocal cur, cwd
        cur.piped = piped
        cur.cwd = cwd
        words = cur.words
        while words and _ASSIGNMENT.match(words[0]):
            words.pop(0)
        if words and words[0] == "cd":
            target = words[1] if len(words) > 1 else workdir
            cwd = walk_to(target, cwd, workdir)  # above the root too (``cd ..``): later paths may lead back
        elif words or cur.out:
            segs.append(cur)
        cur = Segment([], workdir=workdir)

    while i < len(toks):
        t = toks[i]
        if t in _OPERATORS or set(t) <= _OPERATOR_CHARS:  # shlex glues runs like "&&\n" or "\n\n"
            close(piped=t.strip("\n") in ("|", "|&"))
        elif t in ("<<", "<<-"):
            i += 1  # the delimiter word
            if body_i < len(bodies):
                cur.stdin = bodies[body_i]
                body_i += 1
        elif t == "<<<":
            i += 1
            cur.stdin = toks[i] if i < len(toks) else ""
        elif set(t) <= set("<>&") and ">" in t:
            if t.endswith("&") and i + 1 < len(toks) and toks[i + 1].isdigit():
                i += 1  # 2>&1: a descriptor copy
            elif i + 1 < len(toks):
                i += 1
                cur.out.append(toks[i])
            if cur.words and cur.words[-1].isdigit():
                cur.words.pop()  # the descriptor number before >
        elif t == "<":
            i += 1
            cur.stdin_file = toks[i] if i < len(toks) else None
        else:
            cur.words.append(t)
        i += 1
    close(piped=False)
    return segs


# --------------------------------------------------------------------------- classification

SEARCH_PROGRAMS = {"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "fdfind", "ls", "tree", "locate"}
VIEW_PROGRAMS = {"cat", "head", "tail", "nl", "less", "more", "bat", "sed", "awk", "jq", "yq", "view"}
RUN_PROGRAMS = {
    "python",
    "python3",
    "pytest",
    "py.test",
    "tox",
    "pip",
    "pip3",
    "make",
    "sphinx-build",
    "pylint",
    "pyreverse",
    "symilar",
    "epylint",
    "coverage",
    "nosetests",
    "bash",
    "sh",
    "conda",
    "isympy",
    "mypy",
    "flake8",
    "black",
    "isort",
    "pre-commit",
    "node",
    "timeout",
    # Java, JavaScript and TypeScript builds, tests and runtimes (the Corpus II families)
    "mvn",
    "gradle",
    "ant",
    "javac",
    "java",
    "npm",
    "npx",
    "yarn",
    "pnpm",
    "jest",
    "mocha",
    "tsc",
    "ts-node",
    "deno",
    "bun",
    "go",
    "cargo",
}
#: Programs whose output redirected to a file is that file's content (a write, not a run log).
WRITER_PROGRAMS = {"cat", "echo", "printf", "tee", "sed", "awk", "head", "tail"}
_PY_WRITE = re.compile(
    r"""open\([^)]*?,\s*(?:mode\s*=\s*)?['"][^'"]*[wax+]|\.write_text\(|\.write_bytes\(|\.writelines?\("""
)
_PY_LITERAL = re.compile(r"""(['"])([^'"\n]+?)\1""")


def program(seg: Segment) -> str:
    """The program a segment runs (basename; ``git grep`` → ``git-grep``)."""
    words = seg.words
    if not words:
        return ""
    head = words[0].rsplit("/", 1)[-1]
    wrapped: list[str] | None = None
    if head in ("sudo", "env", "time", "nohup"):
        wrapped = words[1:]
    elif head in ("xargs", "timeout"):
        rest = _operands(words[1:], {"-n", "-I", "-L", "-P", "-d", "-E", "-s", "-k", "--signal"})
        first = rest[1:2] if head == "timeout" else rest[:1]  # timeout DURATION COMMAND…
        if first:
            wrapped = words[words.index(first[0], 1) :]
    if wrapped:
        return program(Segment(wrapped, seg.out, seg.stdin, seg.cwd, seg.piped, seg.stdin_file, seg.workdir))
    if head == "git" and len(words) > 1:
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        return f"git-{sub}"
    if re.fullmatch(r"python[0-9.]*", head):
        return "python"
    return head


def python_code(seg: Segment) -> str | None:
    """The inline code a python segment runs (``-c`` argument or stdin script), else ``None``."""
    words = seg.words
    if "-c" in words:
        k = words.index("-c")
        return words[k + 1] if k + 1 < len(words) else ""
    rest = [w for w in words[1:] if not w.startswith("-")]
    if seg.stdin is not None and (not rest or rest[0] == "-"):
        return seg.stdin
    return None


def _operands(words: list[str], takes_arg: set[str]) -> list[str]:
    """Non-option words of a command line, skipping the arguments of the options in ``takes_arg``."""
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w == "--":
            continue
        if w.startswith("-") and len(w) > 1:
            if w in takes_arg:
                skip = True
            continue
        out.append(w)
    return out


def _script_targets(code: str, cwd: str | None, tracked: set[str], workdir: str = WORKDIR) -> list[str] | None:
    """Tracked paths named by string literals of a Python script that writes files (``None`` when
    the script has no write call): an over-approximation when it also reads other tracked files."""
    if not _PY_WRITE.search(code):
        return None
    lits = {m.group(2) for m in _PY_LITERAL.finditer(code)}
    return sorted({p for p in (norm_path(x, cwd, workdir) for x in lits) if p and p in tracked})


def edit_targets(seg: Segment, tracked: set[str], scratch: dict[str, str] | None = None) -> list[str] | None:
    """Repository-relative paths a segment writes (``[]`` when it writes a file outside the
    repository or one that cannot be named), or ``None`` when it is not a write.

    ``scratch`` maps files the agent wrote earlier in the run to their content, so that running
    a script written before (``python fix.py``) or applying a patch file (``patch F < p.diff``)
    counts as the write it performs."""
    scratch = scratch or {}
    prog = program(seg)
    words = seg.words
    cwd = seg.cwd

    def rel(ps: list[str]) -> list[str]:
        return [p for p in (norm_path(x, cwd, seg.workdir) for x in ps) if p]

    if prog in ("sed", "perl") and any(w == "-i" or w.startswith("-i") or w.startswith("-pi") for w in words[1:]):
        takes = {"-e", "-f"} if prog == "sed" else {"-e", "-E", "-M", "-m", "-I"}
        ops = _operands(words[1:], takes)
        explicit_script = any(w in ("-e", "-f") for w in words[1:]) if prog == "sed" else "-e" in words
        return rel(ops if explicit_script else ops[1:])
    writes_out = [o for o in seg.out if o not in ("/dev/null", "/dev/stdout", "/dev/stderr")]
    if prog == "tee":
        return rel(_operands(words[1:], set()) + writes_out)
    if writes_out and prog in WRITER_PROGRAMS:
        return rel(writes_out)
    if prog in ("mv", "cp", "touch", "truncate"):
        ops = _operands(words[1:], {"-s", "--size", "-t"})
        return rel(ops[-1:] if prog in ("mv", "cp") else ops)
    if prog in ("git-apply", "patch", "git-am"):
        args = words[2:] if prog.startswith("git-") else words[1:]
        ops = _operands(args, {"-i", "-o", "-d", "-p", "-F", "-z", "-B", "-V", "-D", "-r"})
        if prog == "patch" and ops:
            return rel(ops[:1])
        body = seg.stdin or ""
        src = ops[:1] if prog != "patch" else []
        if "-i" in words and words.index("-i") + 1 < len(words):
            src = [words[words.index("-i") + 1]]
        for f in src + ([seg.stdin_file] if seg.stdin_file else []):
            body += scratch.get(scratch_key(f, cwd, seg.workdir), "")
        found = re.findall(r"^\+\+\+ (?:b/)?(\S+)", body, re.M)
        return sorted({p for p in (norm_path(x, "", seg.workdir) for x in found) if p})
    if prog in ("git-checkout", "git-restore"):
        ops = _operands(words[2:], {"-b", "-B", "--source", "-s"})
        if "--" in words:
            ops = words[words.index("--") + 1 :]
        return [p for p in rel(ops) if p in tracked]
    if prog == "python":
        code = python_code(seg)
        if code is None and "-m" not in words:
            script = next((w for w in words[1:] if not w.startswith("-")), None)
            code = scratch.get(scratch_key(script, cwd, seg.workdir)) if script else None
        if code is not None:
            return _script_targets(code, cwd, tracked, seg.workdir)
    return None


def viewed_files(seg: Segment) -> list[str]:
    """Repository-relative files a view segment prints (cat/head/tail/nl/sed -n/awk/jq/yq/less/more,
    grep on explicit files without -l/-L/-c/-q, ``git show REV:path``); ``[]`` otherwise."""
    prog = program(seg)
    words = seg.words[1:]
    cwd = seg.cwd
    if prog in ("cat", "nl", "less", "more", "bat", "view"):
        ops = _operands(words, {"-b", "-s", "-w", "-v", "-i", "-n"} if prog == "nl" else set())
    elif prog in ("head", "tail"):
        ops = [w for w in _operands(words, {"-n", "-c"}) if not re.fullmatch(r"[+-]?\d+", w)]
    elif prog == "sed":
        if any(w.startswith("-i") for w in words):
            return []
        ops = _operands(words, {"-e", "-f", "-l"})
        if not any(w in ("-e", "-f") for w in words):
            ops = ops[1:]
    elif prog == "awk":
        ops = _operands(words, {"-F", "-v", "-f"})
        if "-f" not in words:
            ops = ops[1:]
    elif prog in ("jq", "yq"):
        if any(w in ("-n", "--null-input") for w in words):
            return []
        named = [i for i, w in enumerate(words) if w in ("--arg", "--argjson")]  # --arg NAME VALUE
        kept = [w for i, w in enumerate(words) if not any(0 <= i - k <= 2 for k in named)]
        ops = _operands(kept, {"-f", "--from-file", "--indent"})
        if not any(w in ("-f", "--from-file") for w in words):
            ops = ops[1:]  # the first operand is the filter
    elif prog in ("grep", "egrep", "fgrep", "rg"):
        flags = "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))
        if set(flags) & set("lLcq") or any(w in ("--files-with-matches", "--count", "--quiet") for w in words):
            return []
        ops = _operands(words, {"-e", "-f", "-m", "-A", "-B", "-C", "-g", "-t", "--glob", "--type"})
        if not any(w in ("-e", "-f") for w in words):
            ops = ops[1:]
    elif prog == "git-show":
        ops = [w.split(":", 1)[1] for w in words if ":" in w and not w.startswith("-")]
        return [p for p in (norm_path(x, "", seg.workdir) for x in ops) if p]
    else:
        return []
    return [p for p in (norm_path(x, cwd, seg.workdir) for x in ops if not set(x) & set("*?[")) if p]


def segment_class(seg: Segment, tracked: set[str], scratch: dict[str, str] | None = None) -> str:
    """``edit``, ``run``, ``search``, ``read`` or ``other`` for one segment (README: classes)."""
    if edit_targets(seg, tracked, scratch) is not None:
        return "edit"
    prog = program(seg)
    if prog in SEARCH_PROGRAMS or prog in ("git-grep", "git-ls-files"):
        return "search"
    if prog in VIEW_PROGRAMS or prog == "git-show":
        return "read"
    words = seg.words
    if not words:
        return "other"
    if prog in RUN_PROGRAMS or "/" in words[0] or words[0].endswith((".py", ".sh")):
        return "run"  # a named program, or an executable given by path (bin/test, ./runtests.py)
    return "other"


_PRIORITY = {"edit": 0, "run": 1, "search": 2, "read": 3, "other": 4}


def command_class(classes: list[str]) -> str:
    """The class of a whole command from its segments' classes: the first of edit > run > search >
    read > other (``other`` for an empty command)."""
    return min(classes, key=_PRIORITY.__getitem__) if classes else "other"


_SED_RANGE = re.compile(r"^(\d+)(?:,(\d+))?p$")


def read_input(segs: list[Segment]) -> dict[str, Any] | None:
    """``read`` tool input when the command is a pure view of one file, else ``None``.

    Pure views: ``cat [-n] F``, ``nl -ba F``, ``head [-n N] F``, ``sed -n 'a,bp' F``, and
    ``nl -ba F | sed -n 'a,bp'`` / ``cat -n F | sed -n 'a,bp'`` / ``cat F | head -n N``."""
    if not segs or any(s.out or s.stdin is not None for s in segs):
        return None

    def sed_range(seg: Segment) -> tuple[int, int] | None:
        ops = _operands(seg.words[1:], set())
        if program(seg) != "sed" or seg.words[1:2] != ["-n"] or len(seg.words) not in (3, 4):
            return None
        m = _SED_RANGE.match(ops[0].replace(" ", "")) if ops else None
        if not m:
            return None
        a = int(m.group(1))
        b = int(m.group(2) or a)
        return (a, b) if b >= a else None

    def head_n(seg: Segment, with_file: bool) -> int | None:
        w = seg.words[: len(seg.words) - 1] if with_file else seg.words
        if program(seg) != "head":
            return None
        if len(w) == 1:
            return 10
        if len(w) == 3 and w[1] == "-n" and w[2].isdigit():
            return int(w[2])
        if len(w) == 2 and re.fullmatch(r"-n?\d+", w[1]):
            return int(w[1].lstrip("-n"))
        return None

    first = segs[0]
    prog = program(first)
    files = viewed_files(first)
    if len(files) != 1 or len(_operands(first.words[1:], set())) > 2:
        return None
    path = files[0]
    plain = prog == "cat" and (len(first.words) == 2 or (len(first.words) == 3 and first.words[1] == "-n"))
    numbered = prog == "nl" and len(first.words) == 3 and first.words[1] == "-ba"
    if len(segs) == 1 and not first.piped:
        if plain or numbered:
            return {"file_path": path}
        n = head_n(first, with_file=True)
        if prog == "head" and n is not None:
            return {"file_path": path, "limit": n}
        if prog == "sed":
            r = sed_range(first)
            if r:
                return {"file_path": path, "offset": r[0], "limit": r[1] - r[0] + 1}
        return None
    if len(segs) == 2 and first.piped and (plain or numbered):
        r = sed_range(segs[1])
        if r:
            return {"file_path": path, "offset": r[0], "limit": r[1] - r[0] + 1}
        n = head_n(segs[1], with_file=False)
        if n is not None and len(segs[1].words) > 1:
            return {"file_path": path, "limit": n}
    return None


def shell_call(
    command: str, tracked: set[str], scratch: dict[str, str] | None = None, workdir: str = WORKDIR
) -> tuple[str, list[Segment], list[str], list[list[str] | None]]:
    """(class, segments, repository files written, each segment's write targets) of one shell
    command run in ``workdir`` (the repository root). ``scratch`` (files written by heredoc so
    far → content) is updated."""
    scratch = {} if scratch is None else scratch
    segs = segments(command, workdir)
    writes: list[str] = []
    classes: list[str] = []
    targets: list[list[str] | None] = []
    for s in segs:
        t = edit_targets(s, tracked, scratch)
        targets.append(t)
        classes.append(segment_class(s, tracked, scratch))
        if t:
            writes.extend(x for x in t if x not in writes)
        if s.stdin is not None and program(s) in ("cat", "tee"):
            for x in s.out + (_operands(s.words[1:], set()) if program(s) == "tee" else []):
                if scratch_key(x, s.cwd, workdir):
                    scratch[scratch_key(x, s.cwd, workdir)] = s.stdin
    return command_class(classes), segs, writes, targets


def tool_call(
    command: str, tracked: set[str], scratch: dict[str, str] | None = None
) -> tuple[dict[str, Any], str, list[Segment], list[str]]:
    """One mini-swe-agent command → (``{name, input}``, class, segments, repository files it writes).

    ``write`` for one ``cat > F <<EOF`` heredoc; ``edit`` (input ``{file_path, command}``) when every
    segment writes the same one file; ``read`` for a pure view (:func:`read_input`); else
    ``bash {command}``. ``scratch`` (files written by heredoc so far → content) is updated."""
    cls, segs, writes, targets = shell_call(command, tracked, scratch)
    if len(segs) == 1 and program(segs[0]) == "cat" and segs[0].stdin is not None:
        s = segs[0]
        if len(s.words) == 1 and len(s.out) == 1 and len(writes) == 1 and ">>" not in command.split("<<")[0]:
            return {"name": "write", "input": {"file_path": writes[0], "content": s.stdin}}, cls, segs, writes
    if segs and len(writes) == 1 and all(t == writes for t in targets):
        return {"name": "edit", "input": {"file_path": writes[0], "command": command}}, cls, segs, writes
    ri = read_input(segs)
    if ri is not None:
        return {"name": "read", "input": ri}, cls, segs, writes
    return {"name": "bash", "input": {"command": command}}, cls, segs, writes


def gold_files(patch: str) -> list[str]:
    """Files a unified diff changes (new path; old path for a deletion), in patch order."""
    files: list[str] = []
    for m in re.finditer(r"^diff --git a/(\S+) b/(\S+)$", patch, re.M):
        path = m.group(2)
        if path not in files:
            files.append(path)
    return files


def is_test_path(path: str) -> bool:
    """SWE-bench's test split rule: a path with a test/tests/testing/e2e directory or a test_/_test file."""
    parts = path.split("/")
    name = parts[-1]
    return (
        any(p in ("test", "tests", "testing", "e2e") for p in parts[:-1])
        or name.startswith("test_")
        or (name.endswith("_test.py"))
    )


def lists_path(text: str, path: str, cwds: list[str | None]) -> bool:
    """Whether ``text`` names ``path`` as a path (root-relative, ``./``/``/testbed/``/``a/`` prefixed,
    or relative to a cwd the command ran in), not as part of a longer name."""
    forms = {path}
    for c in cwds:
        if c and path.startswith(c + "/"):
            forms.add(path[len(c) + 1 :])
    for f in forms:
        if re.search(rf"(?<![\w.-]){re.escape(f)}(?![\w/-]|\.\w)", text):
            return True
    return False


def listed_dirs(segs: list[Segment]) -> list[str | None]:
    """Directories whose entries a plain ``ls D…`` (not ``-R``, ``-d``) prints by bare name, so that
    ``add.py`` in its output names ``D/add.py``."""
    dirs: list[str | None] = []
    for s in segs:
        if program(s) != "ls":
            continue
        flags = "".join(w[1:] for w in s.words[1:] if w.startswith("-") and not w.startswith("--"))
        if "R" in flags or "d" in flags:
            continue
        dirs.extend(norm_path(w, s.cwd, s.workdir) for w in _operands(s.words[1:], set()))
    return dirs


def cut(text: str) -> str:
    """At most :data:`MAX_RESULT_CHARS` characters (the head)."""
    return text[:MAX_RESULT_CHARS]


# --------------------------------------------------------------------------- symbols


def python_symbols(path: str, data: bytes) -> list[tuple[str, str, str, int]]:
    """``(name, kind, path, line)`` of the classes, functions, methods and module-level assigned
    names of one Python file (tree-sitter-python; 1-based lines). ``[]`` when the file does not parse."""
    import tree_sitter as ts
    import tree_sitter_python as tsp

    parser = ts.Parser(ts.Language(tsp.language()))
    tree = parser.parse(data)
    out: list[tuple[str, str, str, int]] = []

    def walk(node: Any, in_class: bool, depth: int) -> None:
        for child in node.children:
            kind = child.type
            target = child
            if kind == "decorated_definition":
                target = child.child_by_field_name("definition") or child
                kind = target.type
            if kind == "class_definition":
                name = target.child_by_field_name("name")
                if name is not None:
                    out.append((name.text.decode("utf-8", "replace"), "class", path, name.start_point[0] + 1))
                body = target.child_by_field_name("body")
                if body is not None:
                    walk(body, True, depth + 1)
            elif kind == "function_definition":
                name = target.child_by_field_name("name")
                if name is not None:
                    k = "method" if in_class else "function"
                    out.append((name.text.decode("utf-8", "replace"), k, path, name.start_point[0] + 1))
            elif kind == "expression_statement" and depth == 0:
                for sub in child.children:
                    if sub.type == "assignment":
                        left = sub.child_by_field_name("left")
                        names = [left] if left is not None and left.type == "identifier" else []
                        if left is not None and left.type == "pattern_list":
                            names = [n for n in left.children if n.type == "identifier"]
                        for n in names:
                            out.append((n.text.decode("utf-8", "replace"), "variable", path, n.start_point[0] + 1))
            elif kind in ("if_statement", "try_statement", "block", "else_clause", "except_clause", "elif_clause"):
                if depth == 0 or in_class:
                    walk(child, in_class, depth)

    walk(tree.root_node, False, 0)
    return out


#: tree-sitter node type → symbol kind (the kinds ``corpus/materialize.py`` writes back).
_JAVA_KINDS = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "class",
    "annotation_type_declaration": "interface",
    "method_declaration": "method",
    "constructor_declaration": "method",
}
_JS_KINDS = {
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "method_definition": "method",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "module",
}
#: File extension → (grammar module, language function, node kinds).
_GRAMMARS = {
    ".java": ("tree_sitter_java", "language", _JAVA_KINDS),
    ".js": ("tree_sitter_javascript", "language", _JS_KINDS),
    ".jsx": ("tree_sitter_javascript", "language", _JS_KINDS),
    ".mjs": ("tree_sitter_javascript", "language", _JS_KINDS),
    ".cjs": ("tree_sitter_javascript", "language", _JS_KINDS),
    ".ts": ("tree_sitter_typescript", "language_typescript", _JS_KINDS),
    ".mts": ("tree_sitter_typescript", "language_typescript", _JS_KINDS),
    ".cts": ("tree_sitter_typescript", "language_typescript", _JS_KINDS),
    ".tsx": ("tree_sitter_typescript", "language_tsx", _JS_KINDS),
}
_PARSERS: dict[str, Any] = {}


def code_symbols(path: str, data: bytes) -> list[tuple[str, str, str, int]]:
    """``(name, kind, path, line)`` of the definitions of one Java, JavaScript or TypeScript file
    (tree-sitter; classes, interfaces, enums, types, functions, methods, and top-level
    ``const``/``let``/``var`` names as ``constant``), or of a Python file (:func:`python_symbols`);
    ``[]`` for any other file."""
    if path.endswith(".py"):
        return python_symbols(path, data)
    ext = "." + path.rsplit(".", 1)[-1] if "." in path.rsplit("/", 1)[-1] else ""
    if ext not in _GRAMMARS:
        return []
    import importlib

    import tree_sitter as ts

    module, fn, kinds = _GRAMMARS[ext]
    if ext not in _PARSERS:
        _PARSERS[ext] = ts.Parser(ts.Language(getattr(importlib.import_module(module), fn)()))
    tree = _PARSERS[ext].parse(data)
    out: list[tuple[str, str, str, int]] = []

    def add(name_node: Any, kind: str) -> None:
        if name_node is not None:
            out.append((name_node.text.decode("utf-8", "replace"), kind, path, name_node.start_point[0] + 1))

    def walk(node: Any, top: bool) -> None:
        for child in node.children:
            t = child.type
            if t == "export_statement":
                walk(child, top)
                continue
            if t in kinds:
                add(child.child_by_field_name("name"), kinds[t])
            elif top and t in ("lexical_declaration", "variable_declaration"):
                for d in child.children:
                    if d.type == "variable_declarator":
                        name = d.child_by_field_name("name")
                        if name is not None and name.type == "identifier":
                            add(name, "constant")
            if child.child_count and t not in ("string", "template_string", "comment"):
                walk(child, False)

    walk(tree.root_node, True)
    return out


def tsv_field(value: str) -> str:
    """A TSV cell: tabs, newlines and backslashes escaped."""
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def check_patch_applies(git_dir: Path, commit: str, patch: str) -> None:
    """Raise :class:`ConvertError` unless ``patch`` applies cleanly to ``commit`` (index only)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**GIT_ENV, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(git_dir, "read-tree", commit, env=env)
        try:
            git(git_dir, "apply", "--check", "--cached", "-", stdin=patch.encode(), env=env)
        except ConvertError as exc:
            raise ConvertError(f"gold patch does not apply at {commit}: {exc}") from exc


def tracked_paths(git_dir: Path, commit: str) -> list[str]:
    """The paths tracked at ``commit`` (``git ls-tree -r -z``), sorted; names with a newline dropped."""
    raw = git(git_dir, "ls-tree", "-r", "-z", "--name-only", commit)
    return sorted(p for p in raw.decode("utf-8", "surrogateescape").split("\0") if p and "\n" not in p)


# --------------------------------------------------------------------------- traces

#: Languages of source files, by extension (a trace's ``language`` is its gold files' language).
LANGUAGES = {
    ".py": "python",
    ".java": "java",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
}


def language_of(paths: Iterable[str], default: str) -> str:
    """The language most of ``paths`` are written in (the first such path breaks a tie), or
    ``default`` when none is a source file of a known language."""
    counts: dict[str, int] = {}
    order: list[str] = []
    for p in paths:
        name = p.rsplit("/", 1)[-1]
        lang = LANGUAGES.get("." + name.rsplit(".", 1)[-1]) if "." in name else None
        if lang:
            counts[lang] = counts.get(lang, 0) + 1
            if lang not in order:
                order.append(lang)
    if not counts:
        return default
    return max(order, key=lambda k: (counts[k], -order.index(k)))


def rel_path(path: str, workdir: str) -> str | None:
    """A path an agent wrote (repository-relative, ``./``-prefixed or absolute under ``workdir``)
    as a repository-relative path; ``None`` outside the repository."""
    return norm_path(path.strip(), "", workdir) or None


def dirs_of(segs: list[Segment]) -> list[str]:
    """The repository folders a shell command's bare names are relative to: the folders it ran
    in (``cd``) and the folders a plain ``ls`` listed (first seen first, the root left out)."""
    out: list[str] = []
    for d in [s.cwd for s in segs] + listed_dirs(segs):
        if d and not outside(d) and d not in out:  # a folder outside the repository is none of its
            out.append(d)
    return out


def opens_of(segs: list[Segment], writes: Iterable[str], tracked: set[str]) -> list[str]:
    """Repository files (tracked at the base commit) a shell command views as explicit operands or
    writes, in order, each once."""
    out: list[str] = []
    for s in segs:
        for p in viewed_files(s):
            if p in tracked and p not in out:
                out.append(p)
    for p in writes:
        if p in tracked and p not in out:
            out.append(p)
    return out


@dataclass
class Call:
    """One agent action as a ``dsh/postExecute`` call: the tool call, its class, its result,
    the repository files it opened or edited (``opens``), the folders its result's bare names are
    relative to (``dirs``) and the paths it wrote (``writes``, repository-relative; not stored)."""

    cls: str
    tool: dict[str, Any]
    is_error: bool
    text: str
    opens: list[str] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    #: The repository files the call printed (``opens`` without the files it only edited); the
    #: index's ``firstOpen`` counts these. ``None``: all of ``opens``.
    views: list[str] | None = None


@dataclass
class Trace:
    """One converted run: its index fields, calls and the files whose symbols matter."""

    id: str
    instance: str
    repo: str
    commit: str
    model: str
    source: dict[str, str]
    gold: list[str]
    family: str
    agent: str
    language: str
    task: str
    calls: list[Call]
    #: Legacy index values (the mini-swe-agent converter's own rules); computed when ``None``.
    first_edit: int | None = None
    own_search_hit: int | None = None
    legacy: bool = False

    @property
    def task_path(self) -> str:
        return f"tasks/{self.instance}.md"


def first_edit_of(calls: list[Call], tracked: set[str]) -> int | None:
    """The first call that writes a repository file (tracked at the base commit)."""
    return next((i for i, c in enumerate(calls) if any(p in tracked for p in c.writes)), None)


def own_search_hit_of(calls: list[Call], gold: list[str], tracked: set[str], first_edit: int | None) -> int | None:
    """The first call before ``first_edit`` whose result lists a gold file (the scorer's
    :func:`dsh_sidecar.evaluation.listed_files`, relative to the call's ``dirs``)."""
    from dsh_sidecar.evaluation import FileIndex, listed_files

    index = FileIndex(tracked)
    limit = len(calls) if first_edit is None else first_edit
    for i, c in enumerate(calls[:limit]):
        if set(listed_files(cut(c.text), index, c.dirs)) & set(gold):
            return i
    return None


def trace_files(t: Trace, tracked: set[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The index row and the call lines of a trace."""
    lines = []
    first_open: dict[str, int] = {}
    for i, c in enumerate(t.calls):
        lines.append(
            {
                "i": i,
                "class": c.cls,
                "params": {
                    "sessionId": t.id,
                    "turn": 1,
                    "callId": f"{t.id}-{i}",
                    "tool": c.tool,
                    "result": {"isError": c.is_error, "text": cut(c.text)},
                },
                "opens": c.opens,
                "dirs": c.dirs,
            }
        )
        views = c.opens if c.views is None else c.views
        for g in t.gold:
            if g in views and g not in first_open:
                first_open[g] = i
    if t.legacy:
        first_edit, own = t.first_edit, t.own_search_hit
    else:
        first_edit = first_edit_of(t.calls, tracked)
        own = own_search_hit_of(t.calls, t.gold, tracked, first_edit)
    row = {
        "id": t.id,
        "instance": t.instance,
        "repo": t.repo,
        "commit": t.commit,
        "model": t.model,
        "source": t.source,
        "gold": t.gold,
        "calls": len(t.calls),
        "firstEdit": first_edit,
        "firstOpen": {g: first_open[g] for g in t.gold if g in first_open},
        "ownSearchHit": own,
        "family": t.family,
        "agent": t.agent,
        "language": t.language,
        "task": t.task_path,
    }
    return row, lines


def touched_files(t: Trace, tracked: set[str]) -> set[str]:
    """Tracked files whose symbols matter: the gold files and every file the agent opened or wrote."""
    out = {g for g in t.gold if g in tracked}
    for c in t.calls:
        out.update(p for p in c.opens if p in tracked)
        out.update(p for p in c.writes if p in tracked)
    return out


def write_corpus(out: Path, traces: list[Trace], upstream: str, tasks: dict[str, str]) -> dict[str, int]:
    """Write every trace's ``<id>.jsonl``, ``index.jsonl``, the task texts ``tasks/<instance>.md``,
    and per repository@commit ``paths/…txt`` and ``symbols/…tsv`` (stale files removed first).
    ``upstream``: git dir template with ``{owner}`` and ``{name}``. Returns counts."""
    for sub, pattern in (("paths", "*.txt"), ("symbols", "*.tsv"), ("tasks", "*.md")):
        (out / sub).mkdir(parents=True, exist_ok=True)
        for stale in (out / sub).glob(pattern):
            stale.unlink()
    for stale in out.glob("**/*.jsonl"):
        if stale.parent == out or stale.parent.parent == out:
            stale.unlink()
    tracked_cache: dict[tuple[str, str], set[str]] = {}
    symbol_files: dict[tuple[str, str], set[str]] = {}
    index: list[dict[str, Any]] = []
    for t in traces:
        key = (t.repo, t.commit)
        owner, name = t.repo.split("/")
        up = Path(upstream.format(owner=owner, name=name))
        if key not in tracked_cache:
            paths = tracked_paths(up, t.commit)
            tracked_cache[key] = set(paths)
            (out / "paths" / f"{owner}__{name}@{t.commit}.txt").write_text("".join(p + "\n" for p in paths), "utf-8")
        tracked = tracked_cache[key]
        row, lines = trace_files(t, tracked)
        index.append(row)
        dest = out / f"{t.id}.jsonl"
        dest.parent.mkdir(parents=True, exist_ok=True)
        with open(dest, "w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        exts = (".py",) if t.legacy else (".py", *_GRAMMARS)
        symbol_files.setdefault(key, set()).update(p for p in touched_files(t, tracked) if p.endswith(exts))
    for instance, text in sorted(tasks.items()):
        (out / "tasks" / f"{instance}.md").write_text(text, "utf-8")
    for (repo, commit), files in sorted(symbol_files.items()):
        owner, name = repo.split("/")
        up = Path(upstream.format(owner=owner, name=name))
        rows: list[str] = []
        for path in sorted(files):
            data = git(up, "cat-file", "blob", f"{commit}:{path}")
            for sym in code_symbols(path, data):
                rows.append("\t".join([tsv_field(sym[0]), sym[1], tsv_field(sym[2]), str(sym[3])]) + "\n")
        (out / "symbols" / f"{owner}__{name}@{commit}.tsv").write_text("".join(rows), "utf-8")
    with open(out / "index.jsonl", "w", encoding="utf-8") as fh:
        for row in index:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return {"traces": len(index), "workspaces": len(tracked_cache), "tasks": len(tasks)}
