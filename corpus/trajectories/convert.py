"""Recorded mini-swe-agent runs on SWE-bench Verified → ``dsh/postExecute`` sequences (data files).

Reads three kinds of local git directories (bare snapshots; nothing is fetched here):

* the trajectories: ``gruckion/mini-swe-agent`` at :data:`SOURCE_COMMIT`, folder :data:`SOURCE_DIR`
  (one ``<instance>/<instance>.traj.json`` per SWE-bench Verified instance, mini-swe-agent 1.15.0,
  format ``mini-swe-agent-1``);
* the instance records (``repo``, ``base_commit``, ``patch`` = the SWE-bench gold patch):
  ``lukacf/mcp-the-force-swebench`` at :data:`DATASET_COMMIT`, file :data:`DATASET_PATH` (500 rows,
  the SWE-bench Verified test split; checked against each trajectory's task text, the upstream
  repository and ``git apply --check`` below);
* the upstream repositories (``--upstream '/mirrors/{owner}+{name}/repo'``), for the tracked path
  list and the symbols at each base commit.

Writes into ``--out`` (default: this folder):

* ``index.jsonl``: one line per trace ``{id, instance, repo, commit, model, source, gold, calls,
  firstEdit, firstOpen, ownSearchHit}``;
* ``<id>.jsonl``: one line per call ``{i, class, params}``, ``params`` being the
  ``dsh/postExecute`` params ``{sessionId, turn: 1, callId: "<id>-<i>", tool: {name, input},
  result: {isError, text}}`` (text cut to :data:`MAX_RESULT_CHARS` characters);
* ``paths/<owner>__<name>@<commit>.txt``: the tracked paths at the base commit, one a line;
* ``symbols/<owner>__<name>@<commit>.tsv``: ``name, kind, path, line`` of the Python definitions
  (tree-sitter-python) in the gold files and the files the agent opened or edited.

The mapping rules (one agent action → one tool call; which tool; which class; what counts as
opening a file, the first edit and a listed gold path) are in ``README.md`` next to this file and
implemented below. The output is deterministic: same inputs → same bytes.

    python corpus/trajectories/convert.py --source /mirror/gruckion+mini-swe-agent/repo \
        --dataset /mirror/lukacf+mcp-the-force-swebench/repo --upstream '/mirror/{owner}+{name}/repo'

Exit code 0 on success; 1 with a message on stderr when an input is missing or inconsistent
(a base commit absent upstream, a gold patch that does not apply, a task text that differs).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import posixpath
import re
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

SOURCE_REPO = "gruckion/mini-swe-agent"
SOURCE_COMMIT = "d12a71affd95403b036b2bdbd827349b77bfffb9"
SOURCE_DIR = "swebench_results/20251118_gemini-3-pro-74pct/trajs"
DATASET_REPO = "lukacf/mcp-the-force-swebench"
DATASET_COMMIT = "62ffb5c8288dc0f885835d0e626996132dc50909"
DATASET_PATH = "runner/swe_bench_instances.jsonl"

#: Traces taken per repository. django/django, scikit-learn/scikit-learn and matplotlib/matplotlib
#: are absent: their snapshots are over the 500 MiB fetch limit, so no path list can be made.
QUOTA: dict[str, int] = {
    "sympy/sympy": 12,
    "sphinx-doc/sphinx": 10,
    "astropy/astropy": 7,
    "pydata/xarray": 7,
    "pytest-dev/pytest": 7,
    "pylint-dev/pylint": 5,
}
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
    targets, the heredoc / here-string fed to it, the cwd it runs in (repo-relative, ``""`` =
    root, ``None`` = outside the repository) and whether its stdout goes into a pipe."""

    words: list[str]
    out: list[str] = field(default_factory=list)
    stdin: str | None = None
    cwd: str | None = ""
    piped: bool = False
    stdin_file: str | None = None


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


def norm_path(path: str, cwd: str | None) -> str | None:
    """A path operand as a repository-relative path, or ``None`` when outside the repository."""
    if not path or path == "-":
        return None
    if path.startswith("/"):
        if path == WORKDIR:
            return ""
        if not path.startswith(WORKDIR + "/"):
            return None
        full = path[len(WORKDIR) + 1 :]
    else:
        if cwd is None:
            return None
        full = posixpath.join(cwd, path) if cwd else path
    full = posixpath.normpath(full)
    if full == ".":
        return ""
    if full.startswith(".."):
        return None
    return full


def scratch_key(path: str | None, cwd: str | None) -> str:
    """Key of a written file in the per-run scratch map: its repository-relative path, else the
    absolute path as written (``/tmp/fix.py``), else ``""``."""
    if not path:
        return ""
    rel = norm_path(path, cwd)
    if rel is not None:
        return rel
    return posixpath.normpath(path) if path.startswith("/") else ""


def segments(command: str) -> list[Segment]:
    """The simple commands of a shell line, with ``cd`` applied to the following ones."""
    text, bodies = split_heredocs(command)
    toks = tokens(strip_comments(text.replace("\\\n", " ")))  # backslash-newline: a line continuation
    segs: list[Segment] = []
    cur = Segment([])
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
            target = words[1] if len(words) > 1 else WORKDIR
            cwd = norm_path(target, cwd) if cwd is not None or target.startswith("/") else None
        elif words or cur.out:
            segs.append(cur)
        cur = Segment([])

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
VIEW_PROGRAMS = {"cat", "head", "tail", "nl", "less", "more", "bat", "sed", "awk", "view"}
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
        return program(Segment(wrapped, seg.out, seg.stdin, seg.cwd, seg.piped, seg.stdin_file))
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


def _script_targets(code: str, cwd: str | None, tracked: set[str]) -> list[str] | None:
    """Tracked paths named by string literals of a Python script that writes files (``None`` when
    the script has no write call): an over-approximation when it also reads other tracked files."""
    if not _PY_WRITE.search(code):
        return None
    lits = {m.group(2) for m in _PY_LITERAL.finditer(code)}
    return sorted({p for p in (norm_path(x, cwd) for x in lits) if p and p in tracked})


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
        return [p for p in (norm_path(x, cwd) for x in ps) if p]

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
            body += scratch.get(scratch_key(f, cwd), "")
        found = re.findall(r"^\+\+\+ (?:b/)?(\S+)", body, re.M)
        return sorted({p for p in (norm_path(x, "") for x in found) if p})
    if prog in ("git-checkout", "git-restore"):
        ops = _operands(words[2:], {"-b", "-B", "--source", "-s"})
        if "--" in words:
            ops = words[words.index("--") + 1 :]
        return [p for p in rel(ops) if p in tracked]
    if prog == "python":
        code = python_code(seg)
        if code is None and "-m" not in words:
            script = next((w for w in words[1:] if not w.startswith("-")), None)
            code = scratch.get(scratch_key(script, cwd)) if script else None
        if code is not None:
            return _script_targets(code, cwd, tracked)
    return None


def viewed_files(seg: Segment) -> list[str]:
    """Repository-relative files a view segment prints (cat/head/tail/nl/sed -n/awk/less/more,
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
    elif prog in ("grep", "egrep", "fgrep", "rg"):
        flags = "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))
        if set(flags) & set("lLcq") or any(w in ("--files-with-matches", "--count", "--quiet") for w in words):
            return []
        ops = _operands(words, {"-e", "-f", "-m", "-A", "-B", "-C", "-g", "-t", "--glob", "--type"})
        if not any(w in ("-e", "-f") for w in words):
            ops = ops[1:]
    elif prog == "git-show":
        ops = [w.split(":", 1)[1] for w in words if ":" in w and not w.startswith("-")]
        return [p for p in (norm_path(x, "") for x in ops) if p]
    else:
        return []
    return [p for p in (norm_path(x, cwd) for x in ops if not set(x) & set("*?[")) if p]


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


def tool_call(
    command: str, tracked: set[str], scratch: dict[str, str] | None = None
) -> tuple[dict[str, Any], str, list[Segment], list[str]]:
    """One agent command → (``{name, input}``, class, segments, repository files it writes).

    ``write`` for one ``cat > F <<EOF`` heredoc; ``edit`` (input ``{file_path, command}``) when every
    segment writes the same one file; ``read`` for a pure view (:func:`read_input`); else
    ``bash {command}``. ``scratch`` (files written by heredoc so far → content) is updated."""
    scratch = {} if scratch is None else scratch
    segs = segments(command)
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
                if scratch_key(x, s.cwd):
                    scratch[scratch_key(x, s.cwd)] = s.stdin
    cls = command_class(classes)
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


# --------------------------------------------------------------------------- trajectories

_BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.S)
_RETURNCODE = re.compile(r"^<returncode>(-?\d+)</returncode>")
_ELIDED = re.compile(r"<elided_chars>\s*(\d+) characters elided\s*</elided_chars>")


def _between(text: str, tag: str) -> str | None:
    m = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return m.group(1) if m else None


def observation(text: str) -> tuple[bool, str]:
    """(isError, output text) of one environment message of mini-swe-agent 1.x.

    ``<returncode>N</returncode><output>…</output>`` → (N != 0, output); the long-output form
    (``<output_head>``/``<elided_chars>``/``<output_tail>``) → head + ``[N characters elided]`` +
    tail; a timeout notice → (True, the partial output); the final submission message (the
    ``git diff --cached`` of the submitted change, no wrapper) → (False, itself)."""
    m = _RETURNCODE.match(text)
    if m:
        err = int(m.group(1)) != 0
        out = _between(text, "output")
        if out is None:
            head = _between(text, "output_head") or ""
            tail = _between(text, "output_tail") or ""
            e = _ELIDED.search(text)
            out = f"{head}\n[{e.group(1) if e else '?'} characters elided]\n{tail}"
        return err, out
    if text.startswith("The last command <command>"):
        return True, _between(text, "output") or ""
    return False, text


def actions(messages: list[dict[str, Any]]) -> tuple[list[tuple[str, bool, str]], int]:
    """(command, isError, output) of each executed action, and the count of replies rejected for
    not holding exactly one bash block (no command ran for those)."""
    out: list[tuple[str, bool, str]] = []
    rejected = 0
    for k, msg in enumerate(messages):
        if msg.get("role") != "assistant":
            continue
        blocks = _BASH_BLOCK.findall(msg.get("content") or "")
        reply = messages[k + 1].get("content") or "" if k + 1 < len(messages) else ""
        if len(blocks) != 1 or reply.startswith("Please always provide EXACTLY ONE action"):
            rejected += 1
            continue
        err, text = observation(reply)
        out.append((blocks[0].strip(), err, text))
    return out, rejected


def model_of(messages: list[dict[str, Any]]) -> str:
    """The model that wrote the run (most frequent ``response.model``; an unprefixed name gets the
    ``google/`` prefix the same run used elsewhere)."""
    names = Counter()
    for m in messages:
        name = ((m.get("extra") or {}).get("response") or {}).get("model")
        if name:
            names[name if "/" in name else f"google/{name}" if name.startswith("gemini") else name] += 1
    return names.most_common(1)[0][0] if names else "unknown"


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
        dirs.extend(norm_path(w, s.cwd) for w in _operands(s.words[1:], set()))
    return dirs


def cut(text: str) -> str:
    """At most :data:`MAX_RESULT_CHARS` characters (the head)."""
    return text[:MAX_RESULT_CHARS]


def convert_trace(
    trace_id: str, row: dict[str, Any], traj: dict[str, Any], tracked: set[str]
) -> tuple[dict[str, Any], list[dict[str, Any]], set[str], int]:
    """(index entry, call lines, repository files opened or edited, rejected replies) of one run."""
    acts, rejected = actions(traj["messages"])
    gold = gold_files(row["patch"])
    calls: list[dict[str, Any]] = []
    first_edit: int | None = None
    first_open: dict[str, int] = {}
    own_hit: int | None = None
    touched: set[str] = set()
    scratch: dict[str, str] = {}
    for i, (command, err, text) in enumerate(acts):
        tool, cls, segs, writes = tool_call(command, tracked, scratch)
        text = cut(text)
        calls.append(
            {
                "i": i,
                "class": cls,
                "params": {
                    "sessionId": trace_id,
                    "turn": 1,
                    "callId": f"{trace_id}-{i}",
                    "tool": tool,
                    "result": {"isError": err, "text": text},
                },
            }
        )
        opened = {tool["input"]["file_path"]} if tool["name"] == "read" else set()
        for s in segs:
            opened.update(viewed_files(s))
        touched.update(p for p in opened | set(writes) if p in tracked)
        for g in gold:
            if g in opened and g not in first_open:
                first_open[g] = i
        if first_edit is None and own_hit is None:
            cwds = [s.cwd for s in segs] + listed_dirs(segs)
            if any(lists_path(text, g, cwds) for g in gold):
                own_hit = i
        if first_edit is None and any(p in tracked for p in writes):
            first_edit = i
            if own_hit == i:
                own_hit = None  # the hit must come before the first edit
    if own_hit is not None and first_edit is not None and own_hit >= first_edit:
        own_hit = None
    entry = {
        "id": trace_id,
        "instance": row["instance_id"],
        "repo": row["repo"],
        "commit": row["base_commit"],
        "model": model_of(traj["messages"]),
        "source": {
            "repo": SOURCE_REPO,
            "path": f"{SOURCE_DIR}/{trace_id}/{trace_id}.traj.json",
            "commit": SOURCE_COMMIT,
        },
        "gold": gold,
        "calls": len(calls),
        "firstEdit": first_edit,
        "firstOpen": {g: first_open[g] for g in gold if g in first_open},
        "ownSearchHit": own_hit,
    }
    return entry, calls, touched | set(gold), rejected


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


def tsv_field(value: str) -> str:
    """A TSV cell: tabs, newlines and backslashes escaped."""
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


# --------------------------------------------------------------------------- driver


def select(rows: list[dict[str, Any]], available: set[str]) -> list[dict[str, Any]]:
    """Per repository of :data:`QUOTA`, the first N instances (with a trajectory) in the order of
    the SHA-256 of their instance id: a fixed pseudo-random sample, independent of the outcome."""
    chosen: list[dict[str, Any]] = []
    for repo, n in QUOTA.items():
        mine = [r for r in rows if r["repo"] == repo and r["instance_id"] in available]
        mine.sort(key=lambda r: hashlib.sha256(r["instance_id"].encode()).hexdigest())
        chosen.extend(mine[:n])
    return chosen


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--source", required=True, type=Path, help=f"git dir of {SOURCE_REPO}")
    ap.add_argument("--dataset", required=True, type=Path, help=f"git dir of {DATASET_REPO}")
    ap.add_argument("--upstream", required=True, help="git dir template with {owner} and {name}")
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args(argv)
    try:
        return run(args)
    except ConvertError as exc:
        sys.stderr.write(f"convert: {exc}\n")
        return 1


def run(args: argparse.Namespace) -> int:
    rows = [json.loads(line) for line in git(args.dataset, "show", f"{DATASET_COMMIT}:{DATASET_PATH}").splitlines()]
    listing = git(args.source, "ls-tree", "-r", "--name-only", SOURCE_COMMIT, SOURCE_DIR + "/").decode()
    available = {p.split("/")[-2] for p in listing.splitlines() if p.endswith(".traj.json")}
    chosen = select(rows, available)
    out: Path = args.out
    for sub, ext in (("paths", "txt"), ("symbols", "tsv")):
        (out / sub).mkdir(parents=True, exist_ok=True)
        for stale in (out / sub).glob(f"*.{ext}"):
            stale.unlink()
    for stale in out.glob("*.jsonl"):
        stale.unlink()
    index: list[dict[str, Any]] = []
    stats = Counter()
    symbol_files: dict[tuple[str, str], set[str]] = {}
    for row in chosen:
        iid, repo, commit = row["instance_id"], row["repo"], row["base_commit"]
        owner, name = repo.split("/")
        up = Path(args.upstream.format(owner=owner, name=name))
        git(up, "cat-file", "-e", f"{commit}^{{commit}}")
        check_patch_applies(up, commit, row["patch"])
        gold = gold_files(row["patch"])
        if any(is_test_path(g) for g in gold):
            raise ConvertError(f"{iid}: the gold patch changes a test path: {gold}")
        paths = tracked_paths(up, commit)
        tracked = set(paths)
        missing = [g for g in gold if g not in tracked]
        if missing:
            stats["gold files added by the patch"] += len(missing)
        key = f"{owner}__{name}@{commit}"
        (out / "paths" / f"{key}.txt").write_text("".join(p + "\n" for p in paths), encoding="utf-8")
        raw = git(args.source, "show", f"{SOURCE_COMMIT}:{SOURCE_DIR}/{iid}/{iid}.traj.json")
        traj = json.loads(raw)
        task = traj["messages"][1]["content"]
        if row["problem_statement"].strip()[:300] not in task:
            raise ConvertError(f"{iid}: the dataset's problem statement is not the trajectory's task")
        entry, calls, touched, rejected = convert_trace(iid, row, traj, tracked)
        stats["rejected replies"] += rejected
        index.append(entry)
        with open(out / f"{iid}.jsonl", "w", encoding="utf-8") as fh:
            for c in calls:
                fh.write(json.dumps(c, ensure_ascii=False, sort_keys=False) + "\n")
        symbol_files.setdefault((repo, commit), set()).update(p for p in touched if p in tracked)
    for (repo, commit), files in sorted(symbol_files.items()):
        owner, name = repo.split("/")
        up = Path(args.upstream.format(owner=owner, name=name))
        lines: list[str] = []
        for path in sorted(files):
            if not path.endswith(".py"):
                continue
            data = git(up, "cat-file", "blob", f"{commit}:{path}")
            for sym in python_symbols(path, data):
                lines.append("\t".join([tsv_field(sym[0]), sym[1], tsv_field(sym[2]), str(sym[3])]) + "\n")
        (out / "symbols" / f"{owner}__{name}@{commit}.tsv").write_text("".join(lines), encoding="utf-8")
    with open(out / "index.jsonl", "w", encoding="utf-8") as fh:
        for e in index:
            fh.write(json.dumps(e, ensure_ascii=False) + "\n")
    sys.stderr.write(f"convert: {len(index)} traces; {dict(stats)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
