"""The trajectory corpus (corpus/trajectories, Corpus II): the converters' rules on exact inputs
(the shared shell rules of ``core``, each family's parser) and the committed data's format and
internal consistency."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from corpus.trajectories import auto_code_rover, codex, core, iswe, mini_swe_agent, polybench, rovo_dev

ROOT = Path(__file__).resolve().parents[3] / "corpus" / "trajectories"
convert = core  # the shell rules the mini-swe-agent converter was first written with

TRACKED = {"sympy/core/add.py", "sympy/printing/latex.py", "setup.py"}


def call(command: str, scratch: dict[str, str] | None = None) -> tuple[dict, str, list[str]]:
    tool, cls, _segs, writes = convert.tool_call(command, TRACKED, scratch)
    return tool, cls, writes


# --------------------------------------------------------------------------- mapping rules


@pytest.mark.parametrize(
    ("command", "tool_input", "cls"),
    [
        ("cat sympy/core/add.py", {"file_path": "sympy/core/add.py"}, "read"),
        ("cat -n /testbed/sympy/core/add.py", {"file_path": "sympy/core/add.py"}, "read"),
        (
            "nl -ba /testbed/sympy/core/add.py | sed -n '10,20p'",
            {"file_path": "sympy/core/add.py", "offset": 10, "limit": 11},
            "read",
        ),
        ("cd sympy/core && sed -n '5,9p' add.py", {"file_path": "sympy/core/add.py", "offset": 5, "limit": 5}, "read"),
        ("head -n 20 ./sympy/core/add.py", {"file_path": "sympy/core/add.py", "limit": 20}, "read"),
        ("sed -n '7p' sympy/core/add.py", {"file_path": "sympy/core/add.py", "offset": 7, "limit": 1}, "read"),
    ],
)
def test_pure_views_become_read_calls(command: str, tool_input: dict, cls: str) -> None:
    tool, got_cls, writes = call(command)
    assert tool == {"name": "read", "input": tool_input}
    assert got_cls == cls
    assert writes == []


@pytest.mark.parametrize(
    ("command", "cls"),
    [
        ('grep -rn "def latex" sympy/ | head -n 5', "search"),
        ("find . -name '*.py' | xargs grep -l Printable", "search"),
        ("echo sympy/core/add.py | xargs -n 1 grep -n Add", "search"),
        ("timeout 5s python3 -m pytest t", "run"),
        ('ls -R | grep ":$" | head -n 5 && ls -F', "search"),
        ('nl -ba sympy/printing/latex.py | grep -C 5 "def latex"', "search"),
        ("cat setup.py tox.ini", "read"),
        ("tail -n 5 sympy/core/add.py", "read"),
        ("python -m pytest sympy/core/tests/test_arit.py", "run"),
        ("/usr/bin/python3 reproduce.py", "run"),
        ("bin/test sympy/printing/tests/test_latex.py", "run"),
        ("pip install numpy", "run"),
        ("git diff", "other"),
        ("rm reproduce.py check.py", "other"),
        ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached", "other"),
        ("cat <<'EOF' > r.py\nprint(1)\nEOF\npython r.py", "edit"),
    ],
)
def test_other_commands_stay_bash_with_their_class(command: str, cls: str) -> None:
    tool, got_cls, _writes = call(command)
    assert tool == {"name": "bash", "input": {"command": command}}
    assert got_cls == cls


def test_heredoc_file_write_is_a_write_call_with_the_exact_content() -> None:
    tool, cls, writes = call("cat <<'EOF' > reproduce_issue.py\nfrom sympy import I\n  print(I)\nEOF")
    assert tool == {
        "name": "write",
        "input": {"file_path": "reproduce_issue.py", "content": "from sympy import I\n  print(I)\n"},
    }
    assert (cls, writes) == ("edit", ["reproduce_issue.py"])


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("sed -i 's/a/b/' sympy/core/add.py", "sympy/core/add.py"),
        ("cd /testbed/sympy && sed -i -e '3d' core/add.py", "sympy/core/add.py"),
        ("sed -i '1s/x/y/' setup.py && \\\nsed -i '2s/x/y/' setup.py", "setup.py"),
        ("patch sympy/printing/latex.py latex.py_patch", "sympy/printing/latex.py"),
        ("mv sympy/core/add.py_new sympy/core/add.py", "sympy/core/add.py"),
        ("python3 -c \"open('sympy/core/add.py', 'w').write('x')\"", "sympy/core/add.py"),
    ],
)
def test_single_file_edits_become_edit_calls_keeping_the_command(command: str, target: str) -> None:
    tool, cls, writes = call(command)
    assert tool == {"name": "edit", "input": {"file_path": target, "command": command}}
    assert (cls, writes) == ("edit", [target])


def test_an_edit_followed_by_a_view_stays_bash_but_is_an_edit() -> None:
    command = "sed -i 's/a/b/' sympy/core/add.py && sed -n '1,5p' sympy/core/add.py"
    tool, cls, writes = call(command)
    assert tool["name"] == "bash"
    assert (cls, writes) == ("edit", ["sympy/core/add.py"])


def test_running_a_script_written_earlier_is_the_edit_it_performs() -> None:
    scratch: dict[str, str] = {}
    script = "cat <<'EOF' > /tmp/fix.py\nsrc = open('sympy/core/add.py').read()\nopen('sympy/core/add.py', 'w').write(src)\nEOF"
    tool, cls, writes = call(script, scratch)
    assert tool["name"] == "bash" and writes == [] and cls == "edit"  # /tmp is outside the repository
    tool, cls, writes = call("python /tmp/fix.py", scratch)
    assert tool == {"name": "edit", "input": {"file_path": "sympy/core/add.py", "command": "python /tmp/fix.py"}}
    assert (cls, writes) == ("edit", ["sympy/core/add.py"])
    # a patch file written earlier, applied with git apply
    call("cat <<'EOF' > fix.diff\n--- a/setup.py\n+++ b/setup.py\n@@ -1 +1 @@\n-a\n+b\nEOF", scratch)
    assert call("git apply fix.diff", scratch)[0] == {
        "name": "edit",
        "input": {"file_path": "setup.py", "command": "git apply fix.diff"},
    }
    # a script that only reads is a run
    scratch["probe.py"] = "print(open('sympy/core/add.py').read())\n"
    assert call("python probe.py", scratch)[1:] == ("run", [])


def test_shell_comments_are_not_commands() -> None:
    assert convert.strip_comments('grep -n "#include" a#b.c # find it\nls') == 'grep -n "#include" a#b.c \nls'
    assert [s.words for s in convert.segments("# Revert the change\ncat sympy/core/add.py")] == [
        ["cat", "sympy/core/add.py"]
    ]
    tool, cls, _ = call("# look\ncat sympy/core/add.py")
    assert (tool["name"], cls) == ("read", "read")
    # blank lines and operators at line ends still separate commands
    segs = convert.segments("mkdir d\ncd d\n\n\ncat <<'EOF' > a.py\nx\nEOF\n\nls &&\n  cat a.py |\n  head")
    assert [(s.words, s.cwd, s.piped) for s in segs] == [
        (["mkdir", "d"], "", False),
        (["cat"], "d", False),
        (["ls"], "d", False),
        (["cat", "a.py"], "d", True),
        (["head"], "d", False),
    ]
    assert segs[1].out == ["a.py"] and segs[1].stdin == "x\n"


def test_viewed_files_and_grep_flags() -> None:
    seg = convert.segments
    assert convert.viewed_files(seg("grep -n foo sympy/core/add.py")[0]) == ["sympy/core/add.py"]
    assert convert.viewed_files(seg("grep -ln foo sympy/core/add.py")[0]) == []
    assert convert.viewed_files(seg("head -n 5 /testbed/setup.py")[0]) == ["setup.py"]
    assert convert.viewed_files(seg("cat /etc/passwd")[0]) == []
    assert convert.viewed_files(seg("git show HEAD:sympy/core/add.py")[0]) == ["sympy/core/add.py"]


def test_observations() -> None:
    assert mini_swe_agent.observation("<returncode>1</returncode>\n<output>\nboom\n</output>") == (True, "boom")
    assert mini_swe_agent.observation("<returncode>0</returncode>\n<output>\n</output>") == (False, "")
    long = (
        "<returncode>0</returncode>\n<warning>\ntoo long\n</warning><output_head>\nA\n</output_head>\n"
        "<elided_chars>\n1234 characters elided\n</elided_chars>\n<output_tail>\nZ\n</output_tail>"
    )
    assert mini_swe_agent.observation(long) == (False, "A\n[1234 characters elided]\nZ")
    timeout = (
        "The last command <command>pytest</command> timed out and has been killed.\n<output>\npartial\n</output>\n"
    )
    assert mini_swe_agent.observation(timeout) == (True, "partial")
    assert mini_swe_agent.observation("diff --git a/x b/x\n") == (False, "diff --git a/x b/x\n")


def test_rejected_replies_are_not_calls() -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "two\n```bash\nls\n```\n```bash\npwd\n```"},
        {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."},
        {"role": "assistant", "content": "THOUGHT: list\n\n```bash\nls -la\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\nsetup.py\n</output>"},
    ]
    assert mini_swe_agent.actions(messages) == ([("ls -la", False, "setup.py")], 1)


@pytest.mark.parametrize(
    ("text", "cwds", "hit"),
    [
        ("./sympy/core/add.py:12:    def _eval_is_zero", [""], True),
        ("/testbed/sympy/core/add.py", [""], True),
        ("--- a/sympy/core/add.py", [""], True),
        ("sympy/core/add.pyc", [""], False),
        ("mysympy/core/add.py", [""], False),
        ("add.py:3: x", ["sympy/core"], True),
        ("add.py:3: x", [""], False),
        ("add.py", ["sympy"], False),
    ],
)
def test_lists_path(text: str, cwds: list, hit: bool) -> None:
    assert convert.lists_path(text, "sympy/core/add.py", cwds) is hit


def test_a_plain_ls_lists_its_directory_by_bare_names() -> None:
    segs = convert.segments("ls -la sympy/core && ls -R sympy/printing")
    assert convert.listed_dirs(segs) == ["sympy/core"]
    assert convert.lists_path("-rw-r--r-- 1 root root 35840 add.py", "sympy/core/add.py", convert.listed_dirs(segs))
    assert not convert.lists_path("latex.py", "sympy/printing/latex.py", convert.listed_dirs(segs))


def test_gold_files_take_the_new_path_in_patch_order() -> None:
    patch = (
        "diff --git a/b.py b/b.py\n--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-x\n+y\n"
        "diff --git a/a/old.py b/a/new.py\nsimilarity index 90%\nrename from a/old.py\nrename to a/new.py\n"
    )
    assert convert.gold_files(patch) == ["b.py", "a/new.py"]
    assert convert.is_test_path("sympy/core/tests/test_add.py") and not convert.is_test_path("sympy/core/add.py")


def test_python_symbols() -> None:
    src = b"X = 1\nclass A:\n    def m(self):\n        pass\n\n@dec\ndef f():\n    y = 2\n"
    assert convert.python_symbols("p.py", src) == [
        ("X", "variable", "p.py", 1),
        ("A", "class", "p.py", 2),
        ("m", "method", "p.py", 3),
        ("f", "function", "p.py", 7),
    ]


# --------------------------------------------------------------------------- the families' parsers


def test_code_symbols_of_java_and_typescript():
    java = (
        b"package a;\npublic class A {\n  public A() {}\n  void m() {}\n  interface I { void n(); }\n}\nenum E { X }\n"
    )
    assert core.code_symbols("A.java", java) == [
        ("A", "class", "A.java", 2),
        ("A", "method", "A.java", 3),
        ("m", "method", "A.java", 4),
        ("I", "interface", "A.java", 5),
        ("n", "method", "A.java", 5),
        ("E", "enum", "A.java", 7),
    ]
    ts = b"export const X = 1;\nexport class C {\n  m() {}\n}\nfunction f() { const y = 2; }\ntype T = string;\n"
    assert core.code_symbols("a.ts", ts) == [
        ("X", "constant", "a.ts", 1),
        ("C", "class", "a.ts", 2),
        ("m", "method", "a.ts", 3),
        ("f", "function", "a.ts", 5),
        ("T", "type", "a.ts", 6),
    ]
    assert core.code_symbols("README.md", b"# x") == []
    assert core.language_of(["a.java", "b.ts", "c.ts"], "x") == "typescript"
    assert core.language_of(["a.java", "b.ts"], "x") == "java"  # a tie: the first
    assert core.language_of(["pom.xml"], "x") == "x"


def test_shell_rules_in_another_workdir():
    cls, segs, writes, _ = core.shell_call(
        "cd /workspace && grep -rn foo src | head && cat src/a.ts", {"src/a.ts"}, workdir="/workspace"
    )
    assert (cls, writes) == ("search", [])
    assert core.opens_of(segs, writes, {"src/a.ts"}) == ["src/a.ts"]
    assert core.shell_call("cd /workspace && mvn -q test | tail -5", set(), workdir="/workspace")[0] == "run"
    cls, segs, writes, _ = core.shell_call("cd lib && sed -i s/a/b/ x.js && ls sub", {"lib/x.js"}, workdir="/workspace")
    assert (cls, writes, core.dirs_of(segs)) == ("edit", ["lib/x.js"], ["lib", "lib/sub"])


@pytest.mark.parametrize(
    ("command", "cwd", "opens", "dirs"),
    [
        ("cd .. && cat testbed/sympy/core/add.py", "..", ["sympy/core/add.py"], []),
        ("cd .. && cd testbed && grep -n x setup.py && ls sympy/core", "", ["setup.py"], ["sympy/core"]),
        ("cd sympy && cd ../.. && head testbed/setup.py", "..", ["setup.py"], []),
        ("cd .. && grep -rn x other/setup.py", "..", [], []),  # beside the repository: outside
        ("cd /tmp && cat ../testbed/setup.py", "../tmp", ["setup.py"], []),
    ],
)
def test_a_cd_above_the_root_keeps_later_paths_that_lead_back_into_it(command, cwd, opens, dirs):
    """``cd ..`` from the repository root is a known folder above it, not an unknown one: a later
    path back into the repository (``testbed/x`` from ``/``) is read as the repository's, as the
    sidecar's own shell reader does (``suggester/paths.py``); a folder outside is no ``dirs``."""
    cls, segs, writes, _ = core.shell_call(command, TRACKED)
    assert (segs[-1].cwd, core.opens_of(segs, writes, TRACKED), core.dirs_of(segs)) == (cwd, opens, dirs)


def test_a_file_written_in_a_folder_outside_is_kept_by_its_absolute_path():
    """``cd /tmp && cat > fix.py <<EOF`` then ``python /tmp/fix.py``: the script written by a bare
    name outside the repository is found again by its absolute path (its edit targets read)."""
    scratch: dict[str, str] = {}
    core.shell_call("cd /tmp && cat > fix.py <<'EOF'\nopen('/testbed/setup.py', 'w')\nEOF", TRACKED, scratch)
    assert scratch == {"/tmp/fix.py": "open('/testbed/setup.py', 'w')\n"}
    assert core.shell_call("python /tmp/fix.py", TRACKED, scratch)[2] == ["setup.py"]


ROVO_LOG = "\n".join(
    [
        "#" * 8,
        "PHASE 1",
        "=" * 120,
        "USER PROMPT:",
        "Resolve the following problem statement:",
        "<problem_statement>",
        "Empty string breaks convertPrimitive",
        "</problem_statement>",
        "=" * 120,
        "TOOL CALL (grep)",
        "content_pattern: convertPrimitive",
        "path_glob: '**/*.java'",
        "",
        "=" * 120,
        "TOOL RETURN (grep)",
        "```",
        "src/main/java/a/ClassHelper.java:267:    public static Object convertPrimitive(...",
        "=" * 120 + " inside a result, not a separator",
        "```",
        "=" * 120,
        "TOOL CALL (open_files)",
        "file_paths:",
        "- src/main/java/a/ClassHelper.java",
        "- ./src/main/java/a/Missing.java",
        "=" * 120,
        "TOOL RETURN (open_files)",
        "```",
        "['Successfully opened src/main/java/a/ClassHelper.java:...",
        "```",
        "=" * 120,
        "TOOL CALL (find_and_replace_code)",
        "file_path: src/main/java/a/ClassHelper.java",
        "find: a",
        "replace: b",
        "=" * 120,
        "TOOL RETURN (find_and_replace_code)",
        "```",
        "Successfully replaced code",
        "```",
        "=" * 120,
        "TOOL CALL (bash)",
        "command: cd /workspace && cat src/main/java/a/ClassHelper.java | head -5",
        "=" * 120,
        "TOOL RETURN (bash)",
        "```",
        "package a;",
        "```",
    ]
)


def test_rovo_dev_log():
    assert rovo_dev.problem_statement(ROVO_LOG) == "Empty string breaks convertPrimitive"
    got = rovo_dev.calls_of(ROVO_LOG)
    assert [(n, a) for n, a, _ in got] == [
        ("grep", {"content_pattern": "convertPrimitive", "path_glob": "**/*.java"}),
        ("open_files", {"file_paths": ["src/main/java/a/ClassHelper.java", "./src/main/java/a/Missing.java"]}),
        ("find_and_replace_code", {"file_path": "src/main/java/a/ClassHelper.java", "find": "a", "replace": "b"}),
        ("bash", {"command": "cd /workspace && cat src/main/java/a/ClassHelper.java | head -5"}),
    ]
    assert got[0][2] == (
        "src/main/java/a/ClassHelper.java:267:    public static Object convertPrimitive(...\n"
        + "=" * 120
        + " inside a result, not a separator"
    )
    tracked = {"src/main/java/a/ClassHelper.java"}
    calls = [rovo_dev.to_call(n, a, t, tracked, {}) for n, a, t in got]
    assert [(c.cls, c.opens, c.writes) for c in calls] == [
        ("search", [], []),
        ("read", ["src/main/java/a/ClassHelper.java"], []),  # Missing.java is no repository file
        ("edit", ["src/main/java/a/ClassHelper.java"], ["src/main/java/a/ClassHelper.java"]),
        ("read", ["src/main/java/a/ClassHelper.java"], []),
    ]
    assert calls[0].tool == {"name": "grep", "input": got[0][1]}  # kept as the agent called it
    assert core.first_edit_of(calls, tracked) == 2


def test_iswe_calls_and_edits():
    assert iswe.parse_call('get_method_info(method_name="ClassHelper.convertPrimitive")') == (
        "get_method_info",
        {"method_name": "ClassHelper.convertPrimitive"},
    )
    assert iswe.parse_call("get_call_chain('f', max_chains=3)") == ("get_call_chain", {"arg0": "f", "max_chains": 3})
    assert iswe.parse_call("get_class_info(class_name=x)") is None  # not a literal
    run = {
        "localization": {
            "localization_instance_config": {"model": {"name": "m1"}},
            "trajectory": [
                {"role": "user", "content": "x\n--- BEGIN ISSUE ---\nBoom\n--- END ISSUE ---\n"},
                {"role": "assistant", "content": '<execute_tool>\nget_file_info(file_path="a/B.java")\n'},
                {"role": "user", "content": "--- Observation ---\nDefined in file: a/B.java\n"},
                {"role": "assistant", "content": '<execute_tool>\nget_class_info(class_name="a.B")\n</execute_tool>'},
                {"role": "user", "content": "--- Observation ---\nDefinition starts at line: 3\n"},
            ],
        },
        "editing": {
            "trajectory": [
                {
                    "role": "assistant",
                    "content": "### a/B.java\n<<<<<<< SEARCH\nint x;\n=======\nint y;\n>>>>>>> REPLACE\n",
                },
                {"role": "user", "content": "Your edit does not follow the required format."},
                {
                    "role": "assistant",
                    "content": "```java\n### a/B.java\n<<<<<<< SEARCH\nint x;\n=======\nint y;\n>>>>>>> REPLACE\n```",
                },
                {"role": "user", "content": "Success! The edit was applied and here is the patch:"},
            ]
        },
    }
    assert iswe.issue_text(run) == "Boom" and iswe.model_of(run) == "m1"
    calls = iswe.calls_of(run, {"a/B.java"})
    assert [(c.cls, c.tool["name"], c.opens, c.writes, c.is_error) for c in calls] == [
        ("read", "get_file_info", ["a/B.java"], [], False),
        ("search", "get_class_info", [], [], False),
        ("edit", "search_replace", [], [], True),  # refused by the harness: nothing written
        ("edit", "search_replace", ["a/B.java"], ["a/B.java"], False),
    ]
    assert calls[0].text == "Defined in file: a/B.java\n"
    assert calls[3].tool["input"] == {"edits": [{"file_path": "a/B.java", "search": "int x;", "replace": "int y;"}]}


def test_auto_code_rover_searches_and_patches():
    acr = auto_code_rover
    messages = [
        {"role": "system", "content": "You are a software developer maintaining a large project."},
        {"role": "user", "content": "<issue>Boom\n```\nx\n```\n</issue>"},
        {"role": "assistant", "content": 'search_class("RST")'},
        {
            "role": "user",
            "content": 'Result of search_class("RST"):\nFound 1 classes with name RST in the codebase.\n'
            "Search result 1: <file>a/rst.py</file> <class>RST</class>\n\n"
            'Result of search_method_in_file("write", "/usr/lib/a/ui.py"):\n'
            "Could not find file /usr/lib/a/ui.py in the codebase.\n\n"
            'Result of search_code("x = 1"):\nFound 2 snippets containing `x = 1` in the codebase.\n',
        },
        {"role": "user", "content": "Here are the code in buggy locations:\nFound 1 methods with name w in class RST."},
        {"role": "user", "content": "Write a patch for the issue, based on the retrieved context."},
        {
            "role": "assistant",
            "content": "# modification 1\n<file>a/rst.py</file>\n<original>x</original>\n<patched>y</patched>",
        },
        {"role": "user", "content": "Your edit could not be applied to the program. None of the edits can match."},
        {"role": "assistant", "content": "I am unable to modify external codebases."},
        {"role": "user", "content": "Your edit could not be applied to the program. No edits can be parsed."},
        {
            "role": "assistant",
            "content": "```python\n<file>/work/repo/a/rst.py</file>\n<original>def w(self):</original>\n"
            "<patched>def w(self, rows=None):</patched>\n```",
        },
        {
            "role": "user",
            "content": "Extracted a patch. Since validation is disabled, you should validation the patch later on.",
        },
    ]
    assert acr.issue_text(messages) == "Boom\n```\nx\n```\n"
    calls = acr.calls_of(messages, "/work/repo", {"a/rst.py"})
    assert [(c.cls, c.tool["name"], c.tool["input"], c.is_error, c.opens, c.writes) for c in calls[:3]] == [
        ("search", "search_class", {"class_name": "RST"}, False, [], []),
        ("search", "search_method_in_file", {"method_name": "write", "file_name": "/usr/lib/a/ui.py"}, True, [], []),
        ("search", "search_code", {"code_str": "x = 1"}, False, [], []),
    ]
    # a block's text runs to the line break before the next block's header
    assert (
        calls[0].text
        == "Found 1 classes with name RST in the codebase.\nSearch result 1: <file>a/rst.py</file> <class>RST</class>\n"
    )
    assert calls[2].text == "Found 2 snippets containing `x = 1` in the codebase.\n"
    # the harness's bug-location code is no call; a reply with no modification is none either
    assert [(c.cls, c.tool["name"], c.is_error, c.opens, c.writes) for c in calls[3:]] == [
        ("edit", "write_patch", True, [], []),
        ("edit", "write_patch", False, ["a/rst.py"], ["a/rst.py"]),
    ]
    assert calls[4].tool["input"] == {
        "modifications": [
            {"file_path": "/work/repo/a/rst.py", "original": "def w(self):", "patched": "def w(self, rows=None):"}
        ]
    }
    assert calls[4].text.startswith("Extracted a patch")
    assert core.first_edit_of(calls, {"a/rst.py"}) == 4
    # an unknown API or one with more arguments than its signature is kept as the agent wrote it, class other
    for raw in ('get_code_around_line("a.py", 3)', 'search_class("A", "b.py")', "search_class(x)"):
        c = acr.search_call(raw, "t")
        assert (c.cls, c.tool) == ("other", {"name": "api_call", "input": {"raw": raw}})


def test_codex_items():
    tracked = {"src/a.ts"}
    cmd = {
        "type": "command_execution",
        "command": "/bin/bash -lc 'grep -RIn foo src'",
        "aggregated_output": "src/a.ts:1:foo",
        "exit_code": 0,
    }
    c = codex.to_call(cmd, tracked, {})
    assert (c.cls, c.tool, c.is_error) == (
        "search",
        {"name": "shell", "input": {"command": ["/bin/bash", "-lc", "grep -RIn foo src"]}},
        False,
    )
    mcp = {
        "type": "mcp_tool_call",
        "server": "px",
        "tool": "get-content",
        "arguments": {"target": "src/a.ts"},
        "result": {"content": [{"type": "text", "text": "ok"}]},
    }
    c = codex.to_call(mcp, tracked, {})
    assert (c.cls, c.tool["name"], c.text, c.opens) == ("read", "mcp__px__get-content", "ok", ["src/a.ts"])
    fc = {"type": "file_change", "changes": [{"path": "/testbed/src/a.ts", "kind": "update"}], "status": "completed"}
    c = codex.to_call(fc, tracked, {})
    assert (c.cls, c.writes, c.opens) == ("edit", ["src/a.ts"], ["src/a.ts"])
    assert codex.to_call({"type": "reasoning", "text": "hm"}, tracked, {}) is None
    failed = {**cmd, "exit_code": 127, "aggregated_output": "rg: command not found"}
    assert codex.to_call(failed, tracked, {}).is_error is True


def test_polybench_checks():
    assert polybench.is_test_path("gson/src/test/java/a/BTest.java")
    assert polybench.is_test_path("src/__tests__/x.js") and polybench.is_test_path("lib/a.test.ts")
    assert polybench.is_test_path("tests/markdown/jsfmt.spec.js") and polybench.is_test_path("keras/ops/nn_test.py")
    assert not polybench.is_test_path("gson/src/main/java/a/B.java") and not polybench.is_test_path("src/testing.js")
    patch = (
        "diff --git a/x.py b/x.py\nindex 1234567..89abcde 100644\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n"
        "--- a removed line that looks like a header\n+y\n"
        "diff --git a/n.py b/n.py\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/n.py\n"
    )
    assert polybench.old_paths(patch) == {"x.py", "/dev/null"}
    assert polybench.preimages(patch) == [("x.py", "1234567")]
    assert polybench.retrieval({"x.py", "/dev/null"}, {"x.py"}) == (0.5, 1.0)
    assert polybench.retrieval({"x.py"}, set()) == (0.0, 0.0)
    assert polybench.same_task("Title\n\nbody  text " + "z" * 400, "Resolve:\n Title body text " + "z" * 400)
    assert not polybench.same_task("Title", "Other")


# --------------------------------------------------------------------------- committed data

INDEX = [json.loads(line) for line in (ROOT / "index.jsonl").read_text("utf-8").splitlines()]
INDEX_KEYS = [
    "id",
    "instance",
    "repo",
    "commit",
    "model",
    "source",
    "gold",
    "calls",
    "firstEdit",
    "firstOpen",
    "ownSearchHit",
    "family",
    "agent",
    "language",
    "task",
]
#: The Corpus I traces (mini-swe-agent, the first 48): ids and figures kept as they were.
CORPUS_I = {
    "sympy/sympy": 12,
    "sphinx-doc/sphinx": 10,
    "astropy/astropy": 7,
    "pydata/xarray": 7,
    "pytest-dev/pytest": 7,
    "pylint-dev/pylint": 5,
}
SOURCES = {
    "mini-swe-agent": (mini_swe_agent.SOURCE_REPO, mini_swe_agent.SOURCE_COMMIT),
    "rovo-dev": (polybench.PB_REPO, polybench.SUBMISSION_COMMIT),
    "iswe": (polybench.PB_REPO, polybench.SUBMISSION_COMMIT),
    "codex": (polybench.PB_REPO, codex.SOURCE_COMMIT),
    "auto-code-rover": (auto_code_rover.SOURCE_REPO, auto_code_rover.SOURCE_COMMIT),
}


def load_calls(trace_id: str) -> list[dict]:
    return [json.loads(line) for line in (ROOT / f"{trace_id}.jsonl").read_text("utf-8").splitlines()]


def test_index_counts() -> None:
    assert len(INDEX) == 438 and len({e["id"] for e in INDEX}) == 438
    assert Counter(e["family"] for e in INDEX) == {
        "mini-swe-agent": 93,
        "rovo-dev": 179,
        "iswe": 54,
        "codex": 5,
        "auto-code-rover": 107,
    }
    assert Counter(e["language"] for e in INDEX) == {"python": 227, "java": 108, "javascript": 56, "typescript": 47}
    repos = Counter(e["repo"] for e in INDEX)
    assert len(repos) == 20 and repos["sveltejs/svelte"] == 46 and repos["pallets/flask"] == 1
    mini = [e for e in INDEX if e["family"] == "mini-swe-agent"]
    assert Counter(e["repo"] for e in mini) == mini_swe_agent.QUOTA
    acr = [e for e in INDEX if e["family"] == "auto-code-rover"]  # every Lite instance of its repositories but one
    assert Counter(e["repo"] for e in acr) == {
        "sympy/sympy": 77,
        "sphinx-doc/sphinx": 16,
        "astropy/astropy": 6,
        "pydata/xarray": 4,
        "mwaskom/seaborn": 4,
    }
    assert sum(e["calls"] for e in INDEX) == 13028 and sum(e["calls"] for e in acr) == 615
    assert sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("**/*.jsonl")) == sorted(
        [f"{e['id']}.jsonl" for e in INDEX] + ["index.jsonl"]
    )
    assert sorted(p.name for p in (ROOT / "tasks").iterdir()) == sorted({f"{e['instance']}.md" for e in INDEX})


def test_corpus_i_is_kept() -> None:
    """The first 48 mini-swe-agent traces (Corpus I) are the same runs with the same figures."""
    legacy = [e for e in INDEX if e["family"] == "mini-swe-agent" and "/" not in e["id"]]
    firsts: dict[str, list[dict]] = {}
    for e in legacy:
        firsts.setdefault(e["repo"], []).append(e)
    kept = [e for repo, n in CORPUS_I.items() for e in firsts[repo][:n]]
    assert len(kept) == 48
    assert sum(e["calls"] for e in kept) == 1993
    assert sum(1 for e in kept if e["ownSearchHit"] is not None) == 40
    calls = [c for e in kept for c in load_calls(e["id"])]
    assert Counter(c["class"] for c in calls) == {"edit": 479, "run": 475, "search": 463, "read": 435, "other": 141}
    assert Counter(c["params"]["tool"]["name"] for c in calls) == {"bash": 1240, "read": 403, "write": 206, "edit": 144}


@pytest.mark.parametrize("entry", INDEX, ids=[e["id"] for e in INDEX])
def test_trace_is_consistent(entry: dict) -> None:
    assert list(entry) == INDEX_KEYS
    assert entry["family"] in SOURCES and entry["language"] in ("python", "java", "javascript", "typescript")
    assert entry["id"] == (
        entry["instance"] if entry["family"] == "mini-swe-agent" else f"{entry['family']}/{entry['instance']}"
    )
    assert len(entry["commit"]) == 40
    assert (entry["source"]["repo"], entry["source"]["commit"]) == SOURCES[entry["family"]]
    assert entry["task"] == f"tasks/{entry['instance']}.md" and (ROOT / entry["task"]).read_text("utf-8").strip()
    owner, name = entry["repo"].split("/")
    key = f"{owner}__{name}@{entry['commit']}"
    paths = set((ROOT / "paths" / f"{key}.txt").read_text("utf-8").splitlines())
    assert set(entry["gold"]) & paths  # a gold file the patch adds (a changelog entry) is not tracked yet
    symbols = [row.split("\t") for row in (ROOT / "symbols" / f"{key}.tsv").read_text("utf-8").splitlines()]
    kinds = ("class", "function", "method", "variable", "interface", "enum", "type", "module", "constant")
    assert all(len(r) == 4 and r[1] in kinds and r[3].isdigit() for r in symbols)
    assert {g for g in entry["gold"] if g.endswith((".py", ".java")) and g in paths} <= {r[2] for r in symbols}

    calls = load_calls(entry["id"])
    assert len(calls) == entry["calls"]
    for i, c in enumerate(calls):
        assert list(c) == ["i", "class", "params", "opens", "dirs"] and c["i"] == i and c["class"] in core.CLASSES
        p = c["params"]
        assert list(p) == ["sessionId", "turn", "callId", "tool", "result"]
        assert (p["sessionId"], p["turn"], p["callId"]) == (entry["id"], 1, f"{entry['id']}-{i}")
        assert list(p["result"]) == ["isError", "text"] and isinstance(p["result"]["isError"], bool)
        assert len(p["result"]["text"]) <= core.MAX_RESULT_CHARS
        assert set(c["opens"]) <= paths and all(d and not d.startswith("/") for d in c["dirs"])
    first_edit = entry["firstEdit"]
    if first_edit is None:  # an AutoCodeRover run whose every patch was refused: it wrote nothing
        assert entry["family"] == "auto-code-rover" and not any(c["opens"] for c in calls)
        first_edit = len(calls)
    assert first_edit == len(calls) or calls[first_edit]["class"] == "edit"
    for g, i in entry["firstOpen"].items():
        assert g in entry["gold"] and g in calls[i]["opens"]
    hit = entry["ownSearchHit"]
    if hit is not None:
        assert hit < first_edit
        text = calls[hit]["params"]["result"]["text"]
        assert any(g.rsplit("/", 1)[-1] in text for g in entry["gold"])
    if entry["family"] == "mini-swe-agent":
        assert entry["source"]["path"] == f"{mini_swe_agent.SOURCE_DIR}/{entry['id']}/{entry['id']}.traj.json"
        assert {c["params"]["tool"]["name"] for c in calls} <= {"bash", "read", "edit", "write"}
        assert "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in calls[-1]["params"]["tool"]["input"]["command"]
    if entry["family"] == "auto-code-rover":
        folder = rf"{re.escape(auto_code_rover.SOURCE_DIR)}/[a-z_]+/{re.escape(entry['instance'])}_2024-04-0\d_[\d-]+"
        assert re.fullmatch(folder, entry["source"]["path"]) and entry["language"] == "python"
        names = {c["params"]["tool"]["name"] for c in calls}
        assert names <= {*auto_code_rover.SIGNATURES, auto_code_rover.WRITE_TOOL}
        assert all((c["class"] == "edit") == (c["params"]["tool"]["name"] == "write_patch") for c in calls)


def test_own_search_baseline() -> None:
    hits = Counter(e["family"] for e in INDEX if e["ownSearchHit"] is not None)
    assert hits == {"mini-swe-agent": 67, "rovo-dev": 171, "iswe": 52, "codex": 5, "auto-code-rover": 86}
    assert sum(1 for e in INDEX if e["firstOpen"]) == 319
