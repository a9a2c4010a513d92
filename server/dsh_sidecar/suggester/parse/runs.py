"""What a call that is no search tells: the traceback frames of a failed run, the Python
script it writes or runs, and the files it changes.

* :func:`traceback_frames` — Python, pytest and Node frames of a command's output, innermost first;
* :func:`script_names` — the imported names a Python script uses (``ast.parse``, never run);
  the script is a ``.py`` file a write tool writes, ``python -c CODE`` (:func:`inline_python`)
  or a here-document fed to ``python`` or written to a ``.py`` file (:func:`heredoc_script`);
* :func:`shell_writes` and :func:`patched_paths` — the files a shell line or a patch changes.
"""

from __future__ import annotations

import ast
import hashlib
import re
import shlex
import threading
import warnings
from collections import OrderedDict
from typing import Any, Final

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.recent import remember
from dsh_sidecar.suggester.parse.patterns import MIN_CHARS
from dsh_sidecar.suggester.parse.shell import Command, Heredoc, substituted_redirect_targets, unwrap
from dsh_sidecar.suggester.parse.tools import MAX_INPUT_CHARS, MAX_RESULT_CHARS

#: Python (``File "p.py", line 3, in f``, and a SyntaxError's location: :data:`_PY_SYNTAX`), pytest
#: (``p.py:3: in f``, and its innermost ``p.py:9: ValueError`` line: the error's name alone on the
#: line), Node (``at f (p.js:3:1)``: :data:`_NODE_FRAME`) and JVM (``at a.B.c(B.java:3)``:
#: :data:`_JVM_FRAME`) frames, a Windows drive (``C:\…``) or UNC share (``\\h\s\…``)
#: included; Python and pytest list the innermost frame last, Node and the JVM first. A warning's
#: ``p.py:9: DeprecationWarning: …`` line is no frame (libraries print them on every run, so
#: each run would be a note read by no one: docs/SCHEME.md, "Classification").
_PY_FRAME = LazyPattern(r'^[ \t]*File "([^"\n]{1,400})", line \d+, in ([\w<>.]{1,100})', re.M)
_PYTEST_FRAME = LazyPattern(
    r"^((?:[A-Za-z]:)?[\w./\\-]{1,400}\.py):\d+: (?:in ([\w<>.]{1,100})|([A-Z]\w{0,60}(?:Error|Exception)))$",
    re.M,
)
#: Where Python reports a file that does not compile: ``File "p.py", line 9`` without ``, in``,
#: then the source line and its caret, then ``SyntaxError``/``IndentationError``/``TabError`` (the
#: traceback module's format for a SyntaxError). The innermost place of all: the frames above it
#: are the import chain that reached the file, and the error's name is its "function".
_PY_SYNTAX = LazyPattern(
    r'^[ \t]*File "([^"\n]{1,400})", line \d+\n(?:[^\n]{0,2000}\n){0,4}?[ \t]*((?:Syntax|Indentation|Tab)Error)\b',
    re.M,
)
#: Node's frames: ``at f (p.js:3:1)``, ``at p.js:3:1``, ``at async f (…)``, ``at new C (…)``,
#: ``at C.m [as alias] (…)``, an ESM ``file:///…`` URL; any extension (a compiled ``.svelte`` or
#: ``.html`` component, ``.mjs``, ``.ts`` through ts-node). ``node:internal/…`` and
#: ``<anonymous>`` are no files.
_NODE_FRAME = LazyPattern(
    r"^[ \t]+at (?:async )?(?:new )?(?:([\w$.<>\[\]]{1,100})(?: \[as [^\]\n]{1,100}\])? )?\(?(?:file://)?"
    r"((?:[A-Za-z]:[\\/]|\\\\|/|\./|\w)[^\s():]{0,400}\.[A-Za-z]{1,10}):\d+:\d+\)?",
    re.M,
)
#: A JVM frame (Java, Kotlin, Scala, Groovy): ``at org.x.Foo.bar(Foo.java:42)``, ``at
#: org.x.Foo$Inner.lambda$run$0(Foo.java:7)``, with a module or class loader before it
#: (``java.base/java.lang.Thread.run(…)``, ``app//org.x.Y.m(…)``). It names the class and its
#: file's name, not a path: the frame's path is the package's folder and that name
#: (``org/x/Foo.java``), which the workspace's listing resolves (a source root before it).
_JVM_FRAME = LazyPattern(
    r"^[ \t]*at (?:[\w.$-]{0,100}//?)?([\w$.<>]{1,400})\(([\w$-]{1,200}\.(?:java|kt|kts|scala|groovy)):\d+\)",
    re.M,
)
#: Where a JVM trace names the exception that caused the one above it: its frames come after.
_CAUSED_BY = LazyPattern(r"^[ \t]*Caused by: ", re.M)
#: Most frames kept of one output.
MAX_FRAMES: Final = 100


def traceback_frames(text: str) -> list[tuple[str, str]]:
    """``(path, function)`` of the traceback frames in a command's output, innermost first
    (paths as printed: absolute ones are mapped to the workspace by the caller; a JVM frame's
    path is its package's folder and file name, ``org/x/Foo.java``). Reads the last
    :data:`MAX_RESULT_CHARS` characters (a traceback ends the output). A JVM trace's root cause
    (its last ``Caused by:``) leads."""
    text = text[-MAX_RESULT_CHARS:]
    out: list[tuple[str, str]] = []
    # each pattern is scanned only when the text holds the words every match of it holds (most
    # outputs hold no frame: a substring test is a fraction of a line-by-line regex scan)
    python = 'File "' in text
    py = [(m.start(), m.group(1), m.group(2)) for m in _PY_FRAME.finditer(text)] if python else []
    if ".py:" in text:  # pytest's frames (`p.py:3: in f`) and its innermost line (`p.py:9: ValueError`)
        py += [(m.start(), m.group(1), m.group(2) or m.group(3)) for m in _PYTEST_FRAME.finditer(text)]
    if python:
        py += [(m.start(), m.group(1), m.group(2)) for m in _PY_SYNTAX.finditer(text)]
    for _, path, func in sorted(py, reverse=True):
        out.append((path, func))
    if "at " not in text:  # no Node nor JVM frame
        return out[:MAX_FRAMES]
    for m in _NODE_FRAME.finditer(text):
        if not m.group(2).startswith("node:"):
            out.append((m.group(2), (m.group(1) or "").rsplit(".", 1)[-1] or "<anonymous>"))
    out += jvm_frames(text)
    return out[:MAX_FRAMES]


def jvm_frames(text: str) -> list[tuple[str, str]]:
    """``(package folder/file name, method)`` of the JVM frames in ``text``: the last
    ``Caused by:`` block's first, then the blocks before it; innermost first in each."""
    starts = [0, *(m.start() for m in _CAUSED_BY.finditer(text))]
    blocks = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]
    out: list[tuple[str, str]] = []
    for block in reversed(blocks):
        for m in _JVM_FRAME.finditer(block):
            qualified, file_name = m.group(1), m.group(2)
            owner, _, method = qualified.rpartition(".")
            package = owner.rpartition(".")[0]
            folder = package.replace(".", "/")
            out.append((f"{folder}/{file_name}" if folder else file_name, method or qualified))
            if len(out) >= MAX_FRAMES:
                return out
    return out


#: Longest script read, characters: a longer text is a module, not a script (what the recorded
#: runs need: docs/SCHEME.md, "The query model's bounds").
MAX_SCRIPT_CHARS: Final = 4096
#: Most atoms (``\w+`` runs and single other non-space characters: names, numbers, operators,
#: brackets, quotes) a script may have to be parsed: what Python's parser and the tree walk
#: cost grows with the tree's nodes, not with the characters (4 KiB of ``a;a;…``, ``''+''+…``
#: or ``[*'',…]`` took 3–14 ms where a real 4 KiB script took 2), and atoms bound the nodes;
#: at this bound the costliest hostile text (``a;`` repeated) parses in about 1.8 ms (what the
#: recorded runs need: docs/SCHEME.md, "The query model's bounds").
#: Counting stops at the bound (one C regex pass).
MAX_SCRIPT_ATOMS: Final = 1000
_ATOM = LazyPattern(r"\w+|[^\w\s]")
#: What one non-ASCII character of an atom weighs: the parser normalises every non-ASCII name
#: (NFKC), so 990 one-letter non-ASCII names cost 5.4 ms where 1,000 ASCII atoms cost 2.
NON_ASCII_ATOMS: Final = 3
#: ``ast.parse`` warns (``SyntaxWarning``/``DeprecationWarning``: an invalid escape ``'\q'``)
#: by printing the script's own text to stderr; warnings filters are process-wide, so the
#: parses that silence them take this lock.
_PARSE_LOCK = threading.Lock()
#: Scripts whose :func:`script_names` are kept, by the digest of their text (a few hundred
#: bytes each at most: ``MAX_SCRIPT_NAMES`` pairs).
SCRIPT_NAMES_KEPT: Final = 64
_NAMES_KEPT: OrderedDict[bytes, tuple[tuple[str, str], ...]] = OrderedDict()
_NAMES_LOCK = threading.Lock()
#: Most names one script yields.
MAX_SCRIPT_NAMES: Final = 20
_PYTHON_NAME = LazyPattern(r"^python(?:\d+(?:\.\d+)*)?$")
#: A python option word that ends in ``-c``: flags without a value (``-B``, ``-u``, ``-I``,
#: ``-E``, ``-O``…) then ``c``, the code the rest of the word or the next word.
_PYTHON_FLAGS_THEN_C = LazyPattern(r"^-[bBdEhiIOPqsSuvx]*c")


#: The files of a patch: Codex ``apply_patch`` headers and unified-diff ``+++ b/`` lines.
#: The path is the rest of the line, stripped in Python: a lazy ``(.+?)\s*$`` backtracks over
#: every space of a line (19 KB of spaces took 1.4 s).
_PATCH_FILE = LazyPattern(r"^(?:\*\*\* (?:Add|Update|Delete) File: |\+\+\+ (?:b/)?)([^\n]*)", re.M)
#: A shell redirection's target (``> f``, ``>> f``, ``1> f``, ``&> f``, ``&>> f``, ``>| f``,
#: quoted or not: group 1, 2 or 3; not ``2>&1``, ``>&-``, here-strings, ``<>``), or what the
#: shell reads as no redirection, met first (no group): a comment (``# > f``), an escaped character
#: (``\>``, and ``don\'t``'s quote, which opens none), a quoted word (a ``>`` inside quotes,
#: ``grep '<Version>'``, ``$'a > b'``, is part of the word; one left open runs to the line's end,
#: as the shell reads it, so no quote is scanned twice). No match starts inside a run of digits
#: (a 4,000-digit word would be scanned once a digit: 106 ms).
_REDIRECT = LazyPattern(
    r"(?:^|(?<=[\s;&|()]))#[^\n]*|\\.|\$'(?:[^'\\\n]|\\.)*+'?"
    r"|'[^'\n]*'?|\"(?:[^\"\\\n]|\\.)*+\"?"
    r"|(?<![<>\d])(?:&|\d+)?>>?\|?[ \t]*(?!&)(?:'([^'\n]*)'|\"([^\"\n]*)\"|([^\s;&|<>()'\"`]+))"
)
#: ``sed``/``perl`` option words that edit in place: ``-i``, ``-i.bak``, ``-Ei``, ``-ri``,
#: ``--in-place``; perl's ``-pi``, ``-0pi``, ``-0777 -pi`` (switches without a value, then ``i``).
_SED_IN_PLACE = LazyPattern(r"^(?:-[nrEsuzl]*i|--in-place)")
_PERL_IN_PLACE = LazyPattern(r"^-[0-7lnpaswTtU]*i")  # one class: a nested repeat of -0… backtracked exponentially
#: Commands that write their last operand (``cp a b``, ``mv a b``, ``install a b``) or every
#: operand (``tee a b``).
_COPY_COMMANDS: Final = frozenset({"cp", "mv", "install"})
#: ``git apply``/``patch`` options that only look: they change nothing.
_DRY_RUN: Final = frozenset({"--check", "--dry-run", "--stat", "--numstat", "--summary", "-h", "--help"})
#: ``Query.writes`` of a command that applies a patch (which files, it does not say).
PATCHED: Final = "*"


def patched_paths(inp: dict[str, Any]) -> list[str]:
    """The files a patch input (``input``/``patch``/``diff``) names, at most 50."""
    text = next((inp[k] for k in ("input", "patch", "diff") if isinstance(inp.get(k), str)), "")
    # `diff -u` puts a tab and a timestamp after the path
    out = [m.group(1).split("\t", 1)[0].strip() for m in _PATCH_FILE.finditer(text[:MAX_RESULT_CHARS])]
    return [p for p in dict.fromkeys(out) if p and p != "/dev/null"][:50]


def in_place(cmd: Command) -> bool:
    """Whether ``cmd`` edits its file operands in place (``sed -i``, ``perl -pi``)."""
    return (cmd.name == "sed" and any(_SED_IN_PLACE.match(a) for a in cmd.args)) or (
        cmd.name == "perl" and any(_PERL_IN_PLACE.match(a) for a in cmd.args)
    )


def shell_writes(commands: list[Command], line: str) -> list[str]:
    """What a shell line changes (``Query.writes``): the file operands of ``sed -i`` and
    ``perl -i`` (:data:`_SED_IN_PLACE`, :data:`_PERL_IN_PLACE`; the first word, the script,
    left out), the targets of ``cp``/``mv``/``install`` and ``tee``, the targets of
    redirections (:data:`_REDIRECT`, read from the line's text, quoted words skipped, and
    those of the command substitutions inside double quotes, from bashlex's tree),
    :data:`PATCHED` for ``git apply``/``git am``/``patch``
    unless they only check (:data:`_DRY_RUN`). Paths after a ``cd`` are joined to its folder."""
    out: list[str] = []
    for cmd in commands:
        words = [a for a in cmd.args if not a.startswith("-")]
        if in_place(cmd):
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
    found = (m.groups() for m in _REDIRECT.finditer(line[:MAX_INPUT_CHARS]))
    targets = [next((g for g in groups if g is not None), "") for groups in found]
    targets += substituted_redirect_targets(line[:MAX_INPUT_CHARS])  # `echo "$(date > f)"`
    cwd = redirect_cwd(commands)
    out += [_write_target(t, cwd) for t in targets if t and not t.startswith("/dev/")]
    return [p for p in dict.fromkeys(out) if p][:50]


def _write_target(path: str, cwd: str) -> str:
    """A written path joined to the folder a ``cd`` moved to, as it is: absolute when that
    folder is (``cd /testbed && echo x > f`` writes ``/testbed/f``), its ``..`` kept (unlike
    ``shell._join``, which stops them at the root), so that ``WorkspacePaths.written_path``,
    which normalises every written path, finds ``cd src && … > ../../f`` outside the workspace."""
    p = path.strip()
    return f"{cwd.rstrip('/')}/{p}" if p and cwd and not p.startswith("/") else p


def redirect_cwd(commands: list[Command]) -> str:
    """The folder redirections of a line are taken in: the last ``cd``'s (a line that moves to
    one folder and writes there, ``cd src && echo x > f``); the root when none moved."""
    return commands[-1].cwd if commands else ""


def inline_python(cmd: Command) -> str | None:
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


def heredoc_script(heredocs: tuple[Heredoc, ...], cwd: str) -> tuple[str, str]:
    """``(code, path)`` of the first here-document that is a Python script: the input of
    ``python`` (``python3 - <<'EOF'``: path ``""``) or written to a ``.py`` file
    (``cat <<'EOF' > repro.py``, ``cat > repro.py <<EOF``: the usual way an agent writes a
    reproduction script), at most
    :data:`MAX_SCRIPT_CHARS` and closed (a body that runs to the end of the input may have been
    cut at :data:`MAX_INPUT_CHARS`: it was longer, a module rather than a script); ``("", "")``
    when none is."""
    for doc in heredocs:
        if not doc.closed or len(doc.body) > MAX_SCRIPT_CHARS:
            continue
        try:
            words = shlex.split(doc.command)
        except ValueError:
            words = doc.command.split()
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]
        words = unwrap(words)
        if words and _PYTHON_NAME.match(words[0].rsplit("/", 1)[-1]):
            return doc.body, ""
        for m in _REDIRECT.finditer(doc.command):
            target = next(g for g in m.groups() if g is not None)
            if target.lower().endswith(".py"):
                return doc.body, _write_target(target, cwd)
    return "", ""


#: The start of a line that starts a top-level statement (not indented, not a comment).
_TOP_LEVEL_LINE = LazyPattern(r"^(?=[^\s#])", re.M)


def _whole_statements(code: str, end: int) -> str:
    """``code`` before the last top-level statement that starts before ``end`` (that one may
    run past ``end``: a script cut there keeps the statements it has whole)."""
    start = 0
    for m in _TOP_LEVEL_LINE.finditer(code, 0, end):
        start = m.start()
    return code[:start]


def _within_atoms(code: str) -> str:
    """``code``, or its top-level statements before the one its :data:`MAX_SCRIPT_ATOMS`-th
    atom is in (a non-ASCII atom weighing :data:`NON_ASCII_ATOMS` a character)."""
    if code.isascii() and (len(code) <= MAX_SCRIPT_ATOMS or len(_ATOM.findall(code)) <= MAX_SCRIPT_ATOMS):
        return code  # every atom weighs 1 and has a character at least: within the bound
    atoms = 0
    for m in _ATOM.finditer(code):
        atoms += 1 if m.group().isascii() else NON_ASCII_ATOMS * len(m.group())
        if atoms > MAX_SCRIPT_ATOMS:
            return _whole_statements(code, m.start())  # read the statements within the bound
    return code


#: The syntax nodes :func:`script_names` reads: imports, names and attributes.
_NAME_NODES: Final = (ast.Import, ast.ImportFrom, ast.Name, ast.Attribute)


def _parsed(code: str) -> list[ast.AST] | None:
    """The import, name and attribute nodes of ``code`` (:data:`_NAME_NODES`, in
    ``ast.walk``'s order); when it does not compile, those of its statements before
    the top-level one the error is in (a script cut at ``MAX_INPUT_CHARS``, or at its atom
    bound, ends inside a statement), tried once; ``None`` when neither parses."""
    for attempt in (0, 1):
        try:
            with _PARSE_LOCK, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(code)
            return [node for node in _walk(tree) if isinstance(node, _NAME_NODES)]
        except SyntaxError as exc:
            line = exc.lineno or 0
            if attempt or line < 1:
                return None
            starts = [0, *(m.end() for m in re.finditer("\n", code))]
            code = _whole_statements(code, starts[min(line, len(starts)) - 1] + 1)
        except (ValueError, RecursionError, MemoryError, OverflowError):
            return None
    return None


def _walk(tree: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(tree))``, the same nodes in the same (breadth-first) order, without its
    generators: a list read while it grows."""
    nodes = [tree]
    node_type = ast.AST
    for node in nodes:
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, node_type):
                nodes.append(value)
            elif isinstance(value, list):
                nodes.extend(item for item in value if isinstance(item, node_type))
    return nodes


def _imports(nodes: list[ast.AST]) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """What a script imports: local name → (module, imported name) of its ``from … import``s
    (absolute, not ``*``), and local name → module of its ``import``s."""
    names: dict[str, tuple[str, str]] = {}
    modules: dict[str, str] = {}
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
    return names, modules


def _uses(
    nodes: list[ast.AST], names: dict[str, tuple[str, str]], modules: dict[str, str]
) -> list[tuple[int, int, str, str]]:
    """``(line, column, module, name)`` of each use of an imported name or a module's attribute."""
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
    return uses


def script_names(code: str) -> list[tuple[str, str]]:
    """``(module, name)`` of the imported names a Python script uses, in the order of their
    first use, at most :data:`MAX_SCRIPT_NAMES`: ``from a.b import c`` then ``c(…)`` gives
    ``("a.b", "c")``; ``import a.b as m`` (or ``import a.b``) then ``m.f(…)`` (``a.b.f``) gives
    ``("a.b", "f")``. Relative and ``*`` imports, dunder names and methods of objects are left
    out (nothing says where those live), and so are names shorter than :data:`MIN_CHARS`
    (``x``, ``I``, ``ZZ``: symbols and constants a script imports to build its input). The text
    is parsed with :func:`ast.parse` (never run; its warnings silenced, :data:`_PARSE_LOCK`): of
    a script with more than :data:`MAX_SCRIPT_ATOMS` atoms, the top-level statements before the
    bound; of a script that does not compile (cut at ``MAX_INPUT_CHARS``), the statements
    before the error's (:func:`_parsed`). ``[]`` when it is longer than
    :data:`MAX_SCRIPT_CHARS`, imports nothing or is no Python. The answers of the last
    :data:`SCRIPT_NAMES_KEPT` scripts are kept by the digest of their text (a script is written,
    then run, then run again). Never raises."""
    if not isinstance(code, str) or not code.strip() or len(code) > MAX_SCRIPT_CHARS or "import" not in code:
        return []
    key = hashlib.blake2b(code.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _NAMES_LOCK:
        kept = _NAMES_KEPT.get(key)
        if kept is not None:
            _NAMES_KEPT.move_to_end(key)
    if kept is None:
        kept = tuple(_script_names(code))
        with _NAMES_LOCK:
            remember(_NAMES_KEPT, key, kept, SCRIPT_NAMES_KEPT)
    return list(kept)


def _script_names(code: str) -> list[tuple[str, str]]:
    """:func:`script_names` of a script within its bounds, parsed."""
    nodes = _parsed(_within_atoms(code))
    if nodes is None:
        return []
    names, modules = _imports(nodes)
    if not names and not modules:
        return []
    uses = _uses(nodes, names, modules)
    out: dict[tuple[str, str], None] = {}
    for *_, module, name in sorted(uses):
        if not name.startswith("__") and len(name) >= MIN_CHARS and len(out) < MAX_SCRIPT_NAMES:
            out[(module, name)] = None
    return list(out)
