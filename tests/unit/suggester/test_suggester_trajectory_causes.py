"""The general causes found on the recorded agent runs (docs/corpus.md, "What moved the
trajectory figures"): tracebacks of failing runs, words and names searched in the project's
code folders, modules found by name, greps that filter a command's output, and the project
names a script the agent writes uses."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest
from dsh_sidecar.suggester import Suggester
from dsh_sidecar.suggester.parse import parse_call
from dsh_sidecar.suggester.parse.runs import MAX_SCRIPT_ATOMS, MAX_SCRIPT_CHARS, script_names, traceback_frames
from dsh_sidecar.suggester.paths import WorkspacePaths
from dsh_sidecar.workspace import WorkspaceGraph
from support.suggester import ledger_messages, make_suggester, post

TRACEBACK = """Traceback (most recent call last):
  File "/testbed/repro.py", line 3, in <module>
    checkout(cart, 10)
  File "/testbed/src/shopcart/api.py", line 12, in checkout
    total = apply_discount(cart, coupon_percent)
  File "/testbed/src/shopcart/pricing.py", line 11, in apply_discount
    return cart.total_cents() * (100 - percent) // 100
  File "/usr/lib/python3.11/functools.py", line 9, in wrapper
TypeError: unsupported operand type(s)
"""


def make(root: Path, home: Path) -> tuple[Suggester, list[str]]:
    """A suggester on ``root``'s workspace graph, its targets prepared; the targets a note names
    are what is tested, so the per-note confidence's bar is 0 (``test_suggester_confidence.py``)."""
    return make_suggester(root, home, WorkspaceGraph.build(root), warm=True, minConfidence=0)


def evidence_of(s, session="s"):
    """The session's evidence (``suggester/session.py``) as the next call of it would see it."""
    return s.noise.session(session).evidence


def test_traceback_frames_of_python_pytest_and_node():
    assert traceback_frames(TRACEBACK) == [
        ("/usr/lib/python3.11/functools.py", "wrapper"),
        ("/testbed/src/shopcart/pricing.py", "apply_discount"),
        ("/testbed/src/shopcart/api.py", "checkout"),
        ("/testbed/repro.py", "<module>"),
    ]
    pytest_out = (
        "tests/test_pricing.py:8: in test_discount\n    assert x\nsrc/shopcart/pricing.py:11: in apply_discount\n"
        "    return f(x)\nsrc/shopcart/cart.py:33: ZeroDivisionError\n"
    )
    assert traceback_frames(pytest_out) == [
        ("src/shopcart/cart.py", "ZeroDivisionError"),
        ("src/shopcart/pricing.py", "apply_discount"),
        ("tests/test_pricing.py", "test_discount"),
    ]
    # a warning line, or an error line with a message, is no frame
    assert traceback_frames("/w/src/pkg/mod.py:12: DeprecationWarning: old\n/w/a.py:3: ValueError: x\n") == []
    node = "TypeError: x\n    at parse (/app/src/parse.ts:3:9)\n    at /app/src/main.js:1:2\n"
    assert traceback_frames(node) == [("/app/src/parse.ts", "parse"), ("/app/src/main.js", "<anonymous>")]
    assert traceback_frames("all 3 tests passed") == []
    # only the output of a command that is no search is read for frames
    assert parse_call("bash", {"command": "python repro.py"}, TRACEBACK, True).frames[1] == (
        "/testbed/src/shopcart/pricing.py",
        "apply_discount",
    )
    assert parse_call("bash", {"command": "grep -rn apply_discount src"}, TRACEBACK).frames == []


SYNTAX_ERROR = """Traceback (most recent call last):
  File "/testbed/repro.py", line 1, in <module>
    from shopcart import api
  File "/testbed/src/shopcart/__init__.py", line 2, in <module>
    from .api import checkout
  File "/testbed/src/shopcart/pricing.py", line 11
    return cart.total_cents() * (100 - percent // 100
           ^
SyntaxError: '(' was never closed
"""


def test_a_file_that_does_not_compile_is_the_innermost_frame(shopcart, dsh_home):
    """Python prints a SyntaxError's place as ``File "p.py", line N`` without ``, in f``, after
    the import chain that reached it: that file leads the note (IndentationError and TabError
    are SyntaxErrors printed the same way)."""
    assert traceback_frames(SYNTAX_ERROR) == [
        ("/testbed/src/shopcart/pricing.py", "SyntaxError"),
        ("/testbed/src/shopcart/__init__.py", "<module>"),
        ("/testbed/repro.py", "<module>"),
    ]
    indent = '  File "/w/a.py", line 3\n    return x\n    ^\nIndentationError: expected an indented block\n'
    assert traceback_frames(indent) == [("/w/a.py", "IndentationError")]
    # the location line alone, or followed by another error, is no frame
    assert traceback_frames('  File "/w/a.py", line 3\n    x = 1\nValueError: no\n') == []
    s, lines = make(shopcart, dsh_home)
    # the file that does not compile is the failing code path's only frame (the package's
    # `__init__.py` and the script run at import: plumbing); the output shows it already
    assert post(s, "bash", {"command": "python repro.py"}, SYNTAX_ERROR, is_error=True) == []
    assert ledger_messages(lines)[-1] == "suppressed echo Symbol"
    # the session's evidence keeps it: a later search defining or using a name there ranks it
    assert list(evidence_of(s).frames) == ["src/shopcart/pricing.py"]


def test_a_failing_run_names_the_project_frames_innermost_first(shopcart, dsh_home):
    s, lines = make(shopcart, dsh_home)
    # the output shows both project frames: naming them back would be an echo
    assert post(s, "bash", {"command": "python repro.py"}, TRACEBACK, is_error=True) == []
    assert ledger_messages(lines)[-1] == "suppressed echo Symbol"
    # what the failing run's own code path went through is the session's evidence, innermost
    # last (most recent): the agent's script (`<module>`) and the standard library are not
    assert list(evidence_of(s).frames) == ["src/shopcart/api.py", "src/shopcart/pricing.py"]
    # a search for a name: the frame that defines it leads, a test after the sources
    notes = post(s, "grep", {"pattern": "apply_discount"}, session="s")
    assert (notes[0].source.intent, notes[0].source.targets) == (
        "Usage",
        ["src/shopcart/pricing.py", "src/shopcart/api.py", "src/shopcart/__init__.py", "tests/test_pricing.py"],
    )
    # a traceback only through the tests and the standard library names nothing
    only_tests = '  File "/testbed/tests/test_pricing.py", line 8, in test_x\n  File "/usr/lib/x.py", line 1, in f\n'
    assert post(s, "bash", {"command": "pytest -x"}, only_tests, is_error=True, session="t") == []


def test_a_word_searched_in_a_code_folder_named_like_a_docs_tool_is_code(tmp_path, dsh_home):
    root = tmp_path / "sphinx-like"
    (root / "sphinx" / "directives").mkdir(parents=True)
    (root / "doc").mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "sphinx"\nversion = "1.0"\n')
    (root / "README.rst").write_text("Sphinx\n======\n")
    (root / "doc" / "index.rst").write_text("Docs\n====\n")
    (root / "sphinx" / "__init__.py").write_text("")
    (root / "sphinx" / "directives" / "__init__.py").write_text("")
    (root / "sphinx" / "directives" / "code.py").write_text(
        "class LiteralInclude:\n    pass\n\n\ndef setup(app):\n    app.add_directive('literalinclude', LiteralInclude)\n"
    )
    (root / "sphinx" / "config.py").write_text("rst_prolog = None\n")
    (root / "sphinx" / "parsers.py").write_text("from sphinx.config import rst_prolog\n")
    s, lines = make(root, dsh_home)
    hit = "sphinx/directives/code.py:    app.add_directive('literalinclude', LiteralInclude)"
    # each call's result already lists what a note would name (the ledger says what it was)
    assert post(s, "bash", {"command": 'grep -r "literalinclude" sphinx'}, hit) == []
    assert ledger_messages(lines)[-1] == "suppressed echo Symbol"
    # a name searched there: its uses, not the README (the pack's `sphinx` word names a docs tool)
    hits = "sphinx/config.py:rst_prolog = None\nsphinx/parsers.py:from sphinx.config import rst_prolog"
    assert post(s, "bash", {"command": 'grep -r "rst_prolog" sphinx'}, hits) == []
    assert ledger_messages(lines)[-1] == "suppressed answered Usage"
    # a module found by name
    assert post(s, "bash", {"command": "find . -name code.py"}, "./sphinx/directives/code.py", session="f") == []
    assert ledger_messages(lines)[-1] == "suppressed echo Symbol"
    # the same word searched in the docs stays a docs search (its page, listed, is the answer)
    assert post(s, "bash", {"command": 'grep -r "literalinclude" doc'}, "doc/index.rst:x", session="d") == []
    assert ledger_messages(lines)[-1] == "suppressed echo Doc"


def test_a_grep_filtering_a_commands_output_is_no_search():
    for command in ("pip list | grep sphinx", "python x.py | grep Error", "pip freeze | grep -i numpy | head"):
        assert parse_call("bash", {"command": command}).tool == "other", command
    for command, scope in (
        ("cat setup.py | grep version", ["setup.py"]),
        ("ls sphinx | grep util", ["sphinx"]),
        ("pip list | grep -r sphinx src", ["src"]),
    ):
        q = parse_call("bash", {"command": command})
        assert (q.tool, q.scope) == ("bash", scope), command
    assert parse_call("bash", {"command": "grep -rn foo | grep -v test"}).patterns == ["foo"]  # -v filters


def test_the_folder_a_grep_runs_in_is_no_operand():
    # a run's output filtered after a `cd` (test runners, builds, git status): no search
    for command in (
        'cd /workspace && npm test -- --grep "updateStage" 2>&1 | grep -E "(passing|failing)"',
        'cd /workspace && mvn compile -pl broker 2>&1 | grep -E "(ERROR|BUILD)" | head',
        "cd /workspace && git status --short | grep -v package-lock.json",
        "cd /repo && python x.py | rg Error",
    ):
        assert parse_call("bash", {"command": command}).tool == "other", command
    # a file read before it is what it searches, after a `cd` as without one
    q = parse_call("bash", {"command": "cd /testbed && nl -ba pkg/a.py | grep -C 20 merge_setting"})
    assert (q.tool, q.scope, q.reads) == ("bash", ["/testbed/pkg/a.py"], [])
    # with no pipe (or `-r`), the folder it runs in is still where it searches
    for command in ("cd /testbed && grep -rn foo", "cd /testbed && rg foo", "cd src && ls | grep foo"):
        q = parse_call("bash", {"command": command})
        assert q.tool == "bash" and q.scope[-1] in ("/testbed", "src"), command


WINDOWS_TRACEBACK = r"""Traceback (most recent call last):
  File "C:\Users\dev\work\shopcart\repro.py", line 3, in <module>
  File "c:\users\dev\work\shopcart\src\shopcart\api.py", line 12, in checkout
  File "\\build01\ci\shopcart\src\shopcart\pricing.py", line 11, in apply_discount
  File "C:\Python311\Lib\functools.py", line 9, in wrapper
TypeError: unsupported operand type(s)
"""


def test_windows_paths_in_a_traceback_map_to_the_workspace(shopcart, dsh_home):
    r"""A run on Windows prints drive (``C:\…``) and UNC (``\\host\share\…``) paths; they map by
    suffix like a container's ``/testbed`` paths, and the standard library still maps to nothing."""
    s, _ = make(shopcart, dsh_home)
    notes = post(s, "bash", {"command": "python repro.py"}, WINDOWS_TRACEBACK, is_error=True)
    assert notes[0].source.targets == ["src/shopcart/pricing.py", "src/shopcart/api.py"]
    node = "TypeError: x\n    at total (C:\\app\\src\\cart.ts:3:9)\n    at D:/app/src/main.js:1:2\n"
    node += "    at run (\\\\build01\\ci\\app\\src\\run.js:4:1)\n"
    assert traceback_frames(node) == [
        (r"C:\app\src\cart.ts", "total"),
        ("D:/app/src/main.js", "<anonymous>"),
        (r"\\build01\ci\app\src\run.js", "run"),
    ]
    # the checkout itself shared (``\\build01\shopcart``): the share is its root folder, not one above
    # it; a POSIX path written with ``//`` maps as it did before Windows paths were read
    shared = (
        "Traceback (most recent call last):\n"
        '  File "\\\\build01\\shopcart\\src\\shopcart\\api.py", line 12, in checkout\n'
        '  File "//work/shopcart/src/shopcart/pricing.py", line 11, in apply_discount\n'
        "TypeError: x\n"
    )
    notes = post(make(shopcart, dsh_home)[0], "bash", {"command": "python repro.py"}, shared, True, session="w")
    # the POSIX path is a workspace file the output shows (the evaluation's reading): not named back
    assert notes[0].source.targets == ["src/shopcart/api.py"]
    pytest_out = "C:\\w\\src\\shopcart\\pricing.py:11: in apply_discount\n    return f(x)\n"
    assert traceback_frames(pytest_out) == [(r"C:\w\src\shopcart\pricing.py", "apply_discount")]


def test_a_test_search_lists_the_test_modules_before_the_test_data_it_found(tmp_path, dsh_home):
    """Of the files a Test search lists, the test modules are "the tests"; the data files beside
    them (``tests/data/*.html``) come after, named for what they are (found by the search), not
    as tests."""
    root = tmp_path / "pkg-like"
    (root / "pkg" / "io" / "tests" / "data").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "1.0"\n')
    (root / "README.md").write_text("# pkg\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "io" / "html.py").write_text("def write_html(t):\n    return t\n")
    (root / "pkg" / "io" / "tests" / "__init__.py").write_text("")
    (root / "pkg" / "io" / "tests" / "test_html.py").write_text("def test_write():\n    assert True\n")
    for name in ("html.html", "html2.html"):
        (root / "pkg" / "io" / "tests" / "data" / name).write_text("<table></table>\n")
    s, lines = make(root, dsh_home)
    listed = "pkg/io/tests/data/html.html\npkg/io/tests/data/html2.html\npkg/io/tests/test_html.py"
    # the listing shows all three: a note would only repeat it
    assert post(s, "bash", {"command": 'find pkg/io/tests -name "*html*"'}, listed) == []
    assert ledger_messages(lines)[-1] == "suppressed echo Test"
    # a listing of six files or more is no echo: the note orders it, test modules first
    for name in ("a.html", "b.html", "c.html"):
        (root / "pkg" / "io" / "tests" / "data" / name).write_text("<table></table>\n")
    s, lines = make(root, dsh_home)
    six = listed + "".join(f"\npkg/io/tests/data/{n}" for n in ("a.html", "b.html", "c.html"))
    notes = post(s, "bash", {"command": 'find pkg/io/tests -name "*html*"'}, six, session="six")
    assert notes[0].source.targets[:2] == ["pkg/io/tests/test_html.py", "pkg/io/tests/data/html.html"]
    assert notes[0].text.splitlines()[1:3] == [
        "- pkg/io/tests/test_html.py — the tests",
        "- pkg/io/tests/data/html.html — where the search found it",
    ]


def test_a_listed_path_too_long_for_a_note_is_left_out_not_cut(tmp_path, dsh_home):
    """A note is at most 600 characters and each target keeps its reason: a listed path whose
    line cannot fit was cut to a prefix (no file of that name, no reason); it is left out, and a
    listing of nothing else makes no note."""
    root = tmp_path / "pkg-like"
    deep = root / "pkg" / "tests" / "data" / ("d" * 200) / ("d" * 200)
    deep.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "1.0"\n')
    (root / "README.md").write_text("# pkg\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "tests" / "test_html.py").write_text("def test_write():\n    assert True\n")
    (deep / ("f" * 150 + ".html")).write_text("<table></table>\n")
    long = (deep / ("f" * 150 + ".html")).relative_to(root).as_posix()
    for i in range(5):
        (root / "pkg" / "tests" / f"data{i}.html").write_text("<table></table>\n")
    s, lines = make(root, dsh_home)
    assert post(s, "bash", {"command": 'find pkg/tests -name "f*"'}, long, session="a") == []
    assert ledger_messages(lines)[-1] == "suppressed echo Test"  # it listed the one file: an echo anyway
    # a listing of seven (no echo): the long path is left out, the others are named whole
    others = "".join(f"\npkg/tests/data{i}.html" for i in range(5))
    notes = post(
        s, "bash", {"command": 'find pkg/tests -name "*"'}, f"{long}\npkg/tests/test_html.py{others}", session="b"
    )
    assert notes[0].source.targets == ["pkg/tests/test_html.py"] + [f"pkg/tests/data{i}.html" for i in range(3)]
    assert long not in notes[0].source.targets
    assert notes[0].text.splitlines()[1] == "- pkg/tests/test_html.py — the tests"


REPRO = """import shopcart as sc
from shopcart.pricing import apply_discount as discount

cart = sc.Cart()
print(discount(cart, 10), sc.api.checkout(cart))
"""


def test_script_names_are_the_imported_names_a_script_uses_in_order():
    assert script_names(REPRO) == [
        ("shopcart", "Cart"),
        ("shopcart.pricing", "apply_discount"),
        ("shopcart.api", "checkout"),
    ]
    # `import a.b` binds `a`; a dotted use names the module path; `*`, relative imports,
    # dunders and methods of objects name nothing
    code = "import os.path\nfrom . import x\nfrom m import *\nfrom m import __version__ as v\nos.path.join(v)\nx.y()\n"
    assert script_names(code) == [("os.path", "join")]
    # never run, only parsed: no Python, an oversized text, a nesting bomb or NUL bytes give []
    for bad in ("def (:", "import a\n" + "x" * MAX_SCRIPT_CHARS, "(" * 2000 + ")" * 2000, "import a\0", ""):
        assert script_names(bad) == []
    # a longer write is a module, not a script: not even kept
    assert parse_call("write", {"file_path": "m.py", "content": REPRO + "#" * MAX_SCRIPT_CHARS}).script_code == ""
    # the sources: a write of a .py file, `python -c`; not a write of another file, not a script file run
    write = parse_call("write", {"file_path": "repro.py", "content": REPRO})
    assert write.tool == "write" and write.script[0] == ("shopcart", "Cart")
    assert parse_call("create", {"path": "t.py", "file_text": REPRO}).script[0] == ("shopcart", "Cart")
    assert parse_call("write", {"file_path": "notes.md", "content": REPRO}).script == []
    inline = parse_call("bash", {"command": "cd /w && python3 -c 'import shopcart; shopcart.api.checkout(1)'"})
    assert inline.script == [("shopcart.api", "checkout")]
    assert parse_call("bash", {"command": "python repro.py"}).script == []
    assert parse_call("bash", {"command": ["python3.11", "-c", "from shopcart.cart import Cart; Cart()"]}).script == [
        ("shopcart.cart", "Cart")
    ]
    # a here-document written to a .py file or fed to python (98 of the 107 here-documents of the
    # recorded runs write a .py file: `cat <<'EOF' > repro.py`); not one written to another file
    heredoc = parse_call("bash", {"command": f"cd /w && cat <<'EOF' > repro.py\n{REPRO}EOF\npython repro.py"})
    assert (heredoc.tool, heredoc.script_path, heredoc.script[0]) == ("other", "/w/repro.py", ("shopcart", "Cart"))
    assert heredoc.writes == ["/w/repro.py"]  # the body's `>` and words are no redirection, no command
    assert heredoc.commands == ["cat", "python"]
    stdin = parse_call("bash", {"command": f'python3 - << "PY"\n{REPRO}PY'})
    assert (stdin.script_path, stdin.script[0]) == ("", ("shopcart", "Cart"))
    assert parse_call("bash", {"command": f"cat > r.py <<EOF\n{REPRO}EOF"}).script_path == "r.py"
    assert parse_call("bash", {"command": f"cat <<'EOF' > notes.md\n{REPRO}EOF"}).script_code == ""
    assert parse_call("bash", {"command": f"cat <<EOF > m.py\n{REPRO}{'#' * MAX_SCRIPT_CHARS}\nEOF"}).script_code == ""


def test_a_reproduction_script_names_where_the_project_names_it_uses_are_defined(shopcart, dsh_home):
    """An agent writes a script to reproduce what it was asked to fix; the definitions of the
    project names it uses are named, one file a name, in the order the script uses them (the
    defining module, not the package's re-export)."""
    s, lines = make(shopcart, dsh_home)
    notes = post(s, "write", {"file_path": "repro.py", "content": REPRO}, "")
    assert notes[0].source.intent == "Symbol"
    assert notes[0].source.targets == ["src/shopcart/cart.py", "src/shopcart/pricing.py", "src/shopcart/api.py"]
    assert notes[0].text == (
        "search-suggester: in this repository, look here for the definition of the searched name:\n"
        "- src/shopcart/cart.py — defines Cart\n"
        "- src/shopcart/pricing.py — defines apply_discount\n"
        "- src/shopcart/api.py — defines checkout"
    )
    assert ledger_messages(lines)[-1] == (
        "suggest Symbol 0.92 3 targets src/shopcart/cart.py,src/shopcart/pricing.py,src/shopcart/api.py"
    )
    # one script note a turn: a later script of the turn tries what the agent found meanwhile
    assert post(s, "write", {"file_path": "r2.py", "content": "from shopcart.api import checkout\ncheckout(1)\n"}) == []
    assert ledger_messages(lines)[-1] == "suppressed turn-cap Symbol"
    # the next turn may have one; running the same code inline then: one note per (intent, targets)
    assert post(s, "bash", {"command": ["python", "-c", REPRO]}, "", turn=2) == []
    assert ledger_messages(lines)[-1] == "suppressed dedupe Symbol"


def test_a_script_names_nothing_outside_the_project_or_of_the_package_itself(shopcart, dsh_home):
    s, lines = make(shopcart, dsh_home)
    # the standard library and installed packages are not this workspace's
    assert (
        post(s, "write", {"file_path": "r.py", "content": "import json\nimport numpy as np\njson.dumps(np.ones(3))\n"})
        == []
    )
    # a module of the package importing its siblings asks nothing
    sibling = "from shopcart.cart import Cart\n\ndef total(c: Cart) -> int:\n    return 0\n"
    assert post(s, "write", {"file_path": "src/shopcart/extra.py", "content": sibling}) == []
    assert post(s, "bash", {"command": f"cat <<'EOF' > src/shopcart/extra.py\n{sibling}EOF"}) == []
    # the best target read whole just before: the agent is there already
    post(s, "read", {"file_path": "src/shopcart/cart.py"}, "class Cart: ...")
    assert post(s, "write", {"file_path": "r2.py", "content": "from shopcart.cart import Cart\nCart()\n"}) == []
    assert ledger_messages(lines)[-1] == "suppressed recent Symbol"


def test_after_an_edit_of_the_workspace_a_script_checks_the_change_and_names_nothing(shopcart, dsh_home):
    """Once the session has edited a file of the workspace, the agent knows where it works: a
    script it writes then checks its own change. Rewriting its own new script is no such edit."""
    s, lines = make(shopcart, dsh_home)
    assert post(s, "write", {"file_path": "r.py", "content": "from shopcart.api import checkout\ncheckout(1)\n"}, "")
    (shopcart / "r.py").write_text("from shopcart.api import checkout\n")
    assert s.prepare(WorkspaceGraph.build(shopcart))  # the listing catches up with the agent's script
    assert s.prepared is not None and s.prepared.index.exists("r.py")
    again = "from shopcart.cart import Cart\nCart()\n"
    notes = post(s, "write", {"file_path": "r.py", "content": again}, "", turn=2)
    assert notes[0].source.targets == ["src/shopcart/cart.py"]
    post(s, "edit", {"file_path": "src/shopcart/pricing.py", "old_string": "a", "new_string": "b"}, "", turn=3)
    n = len(lines)
    assert (
        post(
            s,
            "write",
            {"file_path": "r3.py", "content": "from shopcart.pricing import apply_discount\napply_discount(1, 2)\n"},
            turn=3,
        )
        == []
    )
    assert lines[n:] == []  # a script after an edit is no question: no note and no ledger line
    # another session has edited nothing
    assert post(
        s, "write", {"file_path": "r4.py", "content": "import shopcart\nshopcart.apply_discount(1, 2)\n"}, session="u"
    )


def test_a_usage_search_that_lists_only_translation_catalogs_names_the_code_first(tmp_path, dsh_home):
    """The listed files that are code (``source``, ``test``) are where a name is used; a listed
    translation catalog or doc only holds its text: it comes after the symbol index's call sites,
    named for what it is (where the search found it)."""
    root = tmp_path / "proj"
    (root / "proj" / "locale" / "ko" / "LC_MESSAGES").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "1.0"\n')
    (root / "README.md").write_text("# proj\n")
    (root / "proj" / "__init__.py").write_text("")
    (root / "proj" / "config.py").write_text("class Config:\n    needs_extensions = {}\n")
    (root / "proj" / "extension.py").write_text(
        "def verify_needs_extensions(app, config):\n    for name in config.needs_extensions:\n        print(name)\n"
    )
    po = "proj/locale/ko/LC_MESSAGES/proj.po"
    (root / po).write_text('msgid "required by needs_extensions settings"\nmsgstr ""\n')
    s, lines = make(root, dsh_home)
    result = f'{po}:msgid "required by needs_extensions settings"\n'
    notes = post(s, "bash", {"command": 'grep -r "needs_extensions" proj'}, result)
    assert notes[0].source.intent == "Usage"
    # the catalog the search listed is not named back: the code it did not show is the note
    assert notes[0].source.targets == ["proj/extension.py", "proj/config.py"]
    assert po not in notes[0].text


def test_a_scripts_names_are_kept_by_its_text_within_a_bound(monkeypatch):
    """A script written, then run, is parsed once; the answer handed out is a fresh list; at most
    ``SCRIPT_NAMES_KEPT`` scripts are kept (the oldest dropped first)."""
    from dsh_sidecar.suggester.parse import runs

    monkeypatch.setattr(runs, "_NAMES_KEPT", type(runs._NAMES_KEPT)())
    parsed: list[str] = []
    real = runs._parsed
    monkeypatch.setattr(runs, "_parsed", lambda code: parsed.append(code) or real(code))
    first = script_names(REPRO)
    first.append(("mutated", "x"))
    assert script_names(REPRO) == [
        ("shopcart", "Cart"),
        ("shopcart.pricing", "apply_discount"),
        ("shopcart.api", "checkout"),
    ]
    assert parsed == [REPRO]
    others = [f"import shopcart\nshopcart.checkout_{i}()\n" for i in range(runs.SCRIPT_NAMES_KEPT)]
    for code in others:
        assert script_names(code) == [("shopcart", f"checkout_{others.index(code)}")]
    assert len(runs._NAMES_KEPT) == runs.SCRIPT_NAMES_KEPT
    script_names(others[-1])
    script_names(REPRO)  # dropped: parsed again
    assert parsed.count(REPRO) == 2 and parsed.count(others[-1]) == 1


def test_the_script_parse_walks_every_node_in_ast_walks_order():
    import ast

    from dsh_sidecar.suggester.parse.runs import _walk

    for code in (
        REPRO,
        "def f(a, *b, c=1, **d):\n    return [x for x in b if x]\n",
        "class A(B, metaclass=M):\n    x: int = 1\n",
    ):
        tree = ast.parse(code)
        assert [id(n) for n in _walk(tree)] == [id(n) for n in ast.walk(tree)]


def test_a_script_is_parsed_only_when_small_and_silently():
    """The parse's cost follows the tree's nodes: past MAX_SCRIPT_ATOMS atoms (names, and each
    operator, bracket and quote) a text is not parsed; the parser's own warnings (an invalid
    escape) never reach stderr."""
    head = "import shopcart\nshopcart.checkout()\n"  # 7 atoms
    assert MAX_SCRIPT_ATOMS == 1000
    assert script_names(head + "a;" * 496) == [("shopcart", "checkout")]  # 999 atoms
    # past the bound, the top-level statements before it are read (a long `python -c` script
    # still says what it imports and calls); one statement past the bound says nothing
    assert script_names(head + "a;" * 497) == [("shopcart", "checkout")]
    assert script_names("import shopcart; shopcart.checkout(" + "a," * 600 + ")") == []
    # literals and operators count; a non-ASCII name weighs 3 (the parser normalises it)
    for literal_heavy in ("\"'';" * 250, "''+" * 400, "[" + "*''," * 300 + "]", "''," * 400, "\ufb01\n" * 340):
        assert script_names(head + literal_heavy) == [("shopcart", "checkout")]  # what comes before the bound
        assert script_names("import shopcart\n" + literal_heavy + "\nshopcart.checkout()\n") == []
    assert script_names(head + "''+" * 300 + "''") == [("shopcart", "checkout")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert script_names("import shopcart\nx = '\\q\x1b]0;t\x07'\nshopcart.checkout()\n") == [
            ("shopcart", "checkout")
        ]
    assert caught == []
    # python's options with a value before -c, and -cCODE
    assert parse_call("bash", {"command": "python -W ignore -X dev -c 'import shopcart; shopcart.checkout()'"}).script
    assert parse_call("bash", {"command": ["python3", "-cimport shopcart; shopcart.checkout()"]}).script
    assert parse_call("bash", {"command": "python -m pytest -c setup.cfg"}).script_code == ""
    for inline in ("python -Bc 'import shopcart'", "python3 -u -c 'import shopcart'", "python -IcCODE"):
        assert parse_call("bash", {"command": inline}).script_code in ("import shopcart", "CODE")
    assert parse_call("bash", {"command": "python -- -c 'import shopcart'"}).script_code == ""


@pytest.mark.parametrize(
    "tool, inp, result",
    [
        ("str_replace_based_edit_tool", {"command": "str_replace", "path": "src/shopcart/pricing.py"}, ""),
        ("apply_patch", {"input": "*** Begin Patch\n*** Update File: src/shopcart/pricing.py\n*** End Patch"}, ""),
        ("bash", {"command": "sed -i 's/a/b/' src/shopcart/pricing.py"}, ""),
        ("bash", {"command": "cat > src/shopcart/pricing.py <<'EOF'\nx = 1\nEOF"}, ""),
        ("bash", {"command": "git apply fix.diff"}, ""),
        ("edit", {"file_path": "src//shopcart/../shopcart/pricing.py"}, ""),
        ("edit", {"file_path": "/testbed/src/shopcart/pricing.py"}, ""),
        ("bash", {"command": "sed -Ei 's/a/b/' src/shopcart/pricing.py"}, ""),
        ("bash", {"command": "sed --in-place=.bak 's/a/b/' src/shopcart/pricing.py"}, ""),
        ("bash", {"command": "perl -0pi -e 's/a/b/' src/shopcart/pricing.py"}, ""),
        ("bash", {"command": "printf 'x' &>> 'src/shopcart/pricing.py'"}, ""),
        ("bash", {"command": "cd src/shopcart && printf 'x' >| pricing.py"}, ""),
        ("bash", {"command": "python gen.py 1> src/shopcart/pricing.py"}, ""),
        ("bash", {"command": "cp /tmp/p.py src/shopcart/pricing.py"}, ""),
        ("bash", {"command": "printf 'x' | tee -a src/shopcart/pricing.py"}, ""),
        ("bash", {"command": "git -C . apply fix.diff"}, ""),
        ("bash", {"command": "cd /testbed && printf 'x' > src/shopcart/pricing.py"}, ""),
        ("bash", {"command": "cd /testbed/src && cp /tmp/p.py shopcart/pricing.py"}, ""),
        ("bash", {"command": "find src -name pricing.py -exec sed -i 's/a/b/' {} +"}, ""),
        ("bash", {"command": "grep -rl total src | xargs sed -i 's/a/b/'"}, ""),
        (
            "apply_patch",
            {"input": "--- a/src/shopcart/pricing.py\t2024-01-01\n+++ b/src/shopcart/pricing.py\t2024-01-02\n"},
            "",
        ),
    ],
)
def test_every_way_of_editing_the_workspace_ends_the_script_notes(shopcart, dsh_home, tool, inp, result):
    s, lines = make(shopcart, dsh_home)
    post(s, tool, inp, result)
    assert post(s, "write", {"file_path": "r.py", "content": "from shopcart.api import checkout\ncheckout(1)\n"}) == []


def test_a_patch_names_its_files_without_the_line_ends_spaces():
    patch = "*** Begin Patch\n*** Update File: src/a.py   \n*** Add File: b.py\t\n--- a/c.py\n+++ b/c.py \n"
    assert parse_call("apply_patch", {"input": patch}).reads == ["src/a.py", "b.py", "c.py"]
    # a header padded with spaces is read once, not once a space (bench/attacks.py times it)
    assert parse_call("apply_patch", {"input": "+++ a" + " " * 19_000 + "b"}).reads == ["a" + " " * 19_000 + "b"]


@pytest.mark.parametrize(
    "command",
    [
        "git apply --check fix.diff",
        "patch --dry-run -p1 < fix.diff",
        "printf 'x' > /tmp/x/README.md",
        "python -c 'print(1)' 2>/dev/null",
        "cp src/shopcart/pricing.py /tmp/pricing.py",
        "cp README.md /tmp/README.md",
        "printf 'x' > /etc/README.md",
        "cd src && printf 'x' > ../../README.md",
        "git apply -h",
        "perl -" + "0" * 40 + " x",  # no -i; and read in linear time (a nested repeat was exponential)
        "echo " + "9" * 3990 + " x",  # a digit run is scanned once for redirections, not once a digit
    ],
)
def test_a_command_that_only_looks_or_writes_elsewhere_is_no_edit(shopcart, dsh_home, command):
    s, _ = make(shopcart, dsh_home)
    post(s, "bash", {"command": command}, "")
    notes = post(s, "write", {"file_path": "r.py", "content": "from shopcart.api import checkout\ncheckout(1)\n"})
    assert notes[0].source.targets == ["src/shopcart/api.py"]


def test_a_cd_to_the_workspace_by_its_absolute_path_then_an_edit_is_an_edit(shopcart, dsh_home):
    s, _ = make(shopcart, dsh_home)
    post(s, "bash", {"command": f"cd {shopcart}/src/shopcart && sed -i s/a/b/ pricing.py"}, "")
    assert post(s, "write", {"file_path": "r.py", "content": "from shopcart.api import checkout\ncheckout(1)\n"}) == []


def test_a_failed_shell_line_still_edited_and_a_new_subpackage_asks_nothing(shopcart, dsh_home):
    s, _ = make(shopcart, dsh_home)
    # the edit ran; what failed is the run after it
    post(s, "bash", {"command": "sed -i 's/a/b/' src/shopcart/pricing.py && python r.py"}, "exit 1", is_error=True)
    assert post(s, "write", {"file_path": "r.py", "content": "from shopcart.api import checkout\ncheckout(1)\n"}) == []
    s, _ = make(shopcart, dsh_home)
    sibling = "from shopcart.cart import Cart\n\ndef total(c: Cart) -> int:\n    return 0\n"
    assert post(s, "write", {"file_path": "/testbed/src/shopcart/extras/mod.py", "content": sibling}) == []


def test_a_failed_edit_or_a_view_is_no_edit_and_a_container_sibling_asks_nothing(shopcart, dsh_home):
    s, _ = make(shopcart, dsh_home)
    post(s, "edit", {"file_path": "src/shopcart/pricing.py"}, "File has not been read yet", is_error=True)
    post(s, "str_replace_based_edit_tool", {"command": "view", "path": "src/shopcart/cart.py"}, "class Cart")
    # a new module of the package, written through a container path, imports its siblings
    sibling = "from shopcart.cart import Cart\n\ndef total(c: Cart) -> int:\n    return 0\n"
    assert post(s, "write", {"file_path": "/testbed/src/shopcart/extra.py", "content": sibling}) == []
    notes = post(s, "write", {"file_path": "r.py", "content": "from shopcart.api import checkout\ncheckout(1)\n"})
    assert notes[0].source.targets == ["src/shopcart/api.py"]


def test_a_script_never_names_a_file_that_is_no_longer_a_regular_file(shopcart, dsh_home):
    s, _ = make(shopcart, dsh_home)
    pricing = shopcart / "src" / "shopcart" / "pricing.py"
    pricing.unlink()
    os.mkfifo(pricing)
    code = "from shopcart.pricing import apply_discount\nfrom shopcart.api import checkout\napply_discount(1, 2)\ncheckout(1)\n"
    assert post(s, "write", {"file_path": "r.py", "content": code})[0].source.targets == ["src/shopcart/api.py"]


def test_a_usage_search_names_the_definition_its_listing_lacks_not_the_listing(tmp_path, dsh_home):
    root = tmp_path / "proj"
    for d in ("proj", "docs/examples", "tests/data"):
        (root / d).mkdir(parents=True)
    (root / "README.md").write_text("# proj\nfrobnicate_value\n")
    (root / "proj" / "__init__.py").write_text("")
    (root / "proj" / "core.py").write_text("def frobnicate_value(x):\n    return x\n")
    (root / "docs" / "examples" / "ex.py").write_text("from proj.core import frobnicate_value\nfrobnicate_value(1)\n")
    (root / "tests" / "data" / "expected.txt").write_text("frobnicate_value 1\n")
    s, _ = make(root, dsh_home)
    listed = "docs/examples/ex.py\ntests/data/expected.txt\nREADME.md\n"
    notes = post(s, "bash", {"command": "grep -rln frobnicate_value ."}, listed)
    # the three listed files are not named back; the definition the listing lacks is the note
    assert (notes[0].source.intent, notes[0].source.targets) == ("Usage", ["proj/core.py"])
    assert notes[0].text.splitlines()[1:] == ["- proj/core.py — defines frobnicate_value"]


def test_a_search_after_a_cd_to_the_root_by_its_absolute_path_is_the_same_search(shopcart, dsh_home):
    """``cd <root> && grep … src`` searches the workspace's ``src`` (its scope was once
    ``<root minus its leading slash>/src``, a folder of no workspace); after ``cd /elsewhere``
    the scope is outside and left out. (The root is a folder whose path names no test: pack
    signals read the command's whole text, and pytest's tmp_path is ``…/pytest-…/test_…``.)"""
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="dsh-ws-")) / "shop"
    shutil.copytree(shopcart, root)
    s, lines = make(root, dsh_home)
    shopcart = root
    plain = post(s, "bash", {"command": "grep -rn 'def apply_discount' src/shopcart"}, "", session="a")
    moved = post(
        s, "bash", {"command": f"cd {shopcart} && grep -rn 'def apply_discount' src/shopcart"}, "", session="b"
    )
    assert plain and [(n.text, n.source.targets) for n in moved] == [(n.text, n.source.targets) for n in plain]
    q = parse_call("bash", {"command": "cd /elsewhere && grep -rn 'def apply_discount' src/shopcart"})
    assert WorkspacePaths(s.root, None).relative(q).scope == []
    shutil.rmtree(root.parent)
