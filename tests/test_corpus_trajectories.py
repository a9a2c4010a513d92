"""The trajectory corpus (corpus/trajectories): the mapping rules of convert.py on exact
commands, and the committed data's format and internal consistency (issue 11, item 2)."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "corpus" / "trajectories"
_spec = importlib.util.spec_from_file_location("traj_convert", ROOT / "convert.py")
convert = importlib.util.module_from_spec(_spec)
sys.modules["traj_convert"] = convert
_spec.loader.exec_module(convert)

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
    assert convert.observation("<returncode>1</returncode>\n<output>\nboom\n</output>") == (True, "boom")
    assert convert.observation("<returncode>0</returncode>\n<output>\n</output>") == (False, "")
    long = (
        "<returncode>0</returncode>\n<warning>\ntoo long\n</warning><output_head>\nA\n</output_head>\n"
        "<elided_chars>\n1234 characters elided\n</elided_chars>\n<output_tail>\nZ\n</output_tail>"
    )
    assert convert.observation(long) == (False, "A\n[1234 characters elided]\nZ")
    timeout = (
        "The last command <command>pytest</command> timed out and has been killed.\n<output>\npartial\n</output>\n"
    )
    assert convert.observation(timeout) == (True, "partial")
    assert convert.observation("diff --git a/x b/x\n") == (False, "diff --git a/x b/x\n")


def test_rejected_replies_are_not_calls() -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "two\n```bash\nls\n```\n```bash\npwd\n```"},
        {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."},
        {"role": "assistant", "content": "THOUGHT: list\n\n```bash\nls -la\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\nsetup.py\n</output>"},
    ]
    assert convert.actions(messages) == ([("ls -la", False, "setup.py")], 1)


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
]


def load_calls(trace_id: str) -> list[dict]:
    return [json.loads(line) for line in (ROOT / f"{trace_id}.jsonl").read_text("utf-8").splitlines()]


def test_index_counts() -> None:
    assert len(INDEX) == 48
    assert Counter(e["repo"] for e in INDEX) == {
        "sympy/sympy": 12,
        "sphinx-doc/sphinx": 10,
        "astropy/astropy": 7,
        "pydata/xarray": 7,
        "pytest-dev/pytest": 7,
        "pylint-dev/pylint": 5,
    }
    assert {e["model"] for e in INDEX} == {"google/gemini-3-pro-preview"}
    assert sum(e["calls"] for e in INDEX) == 1993
    calls = [c for e in INDEX for c in load_calls(e["id"])]
    assert Counter(c["class"] for c in calls) == {"edit": 479, "run": 475, "search": 463, "read": 435, "other": 141}
    assert Counter(c["params"]["tool"]["name"] for c in calls) == {"bash": 1240, "read": 403, "write": 206, "edit": 144}
    assert len({e["id"] for e in INDEX}) == 48
    assert sorted(p.name for p in ROOT.glob("*.jsonl")) == sorted([f"{e['id']}.jsonl" for e in INDEX] + ["index.jsonl"])


@pytest.mark.parametrize("entry", INDEX, ids=[e["id"] for e in INDEX])
def test_trace_is_consistent(entry: dict) -> None:
    assert list(entry) == INDEX_KEYS
    assert entry["instance"] == entry["id"]
    assert len(entry["commit"]) == 40
    assert entry["source"] == {
        "repo": convert.SOURCE_REPO,
        "path": f"{convert.SOURCE_DIR}/{entry['id']}/{entry['id']}.traj.json",
        "commit": convert.SOURCE_COMMIT,
    }
    owner, name = entry["repo"].split("/")
    key = f"{owner}__{name}@{entry['commit']}"
    paths = set((ROOT / "paths" / f"{key}.txt").read_text("utf-8").splitlines())
    assert set(entry["gold"]) <= paths
    symbols = [row.split("\t") for row in (ROOT / "symbols" / f"{key}.tsv").read_text("utf-8").splitlines()]
    assert all(len(r) == 4 and r[1] in ("class", "function", "method", "variable") and r[3].isdigit() for r in symbols)
    assert {g for g in entry["gold"] if g.endswith(".py")} <= {r[2] for r in symbols}

    calls = load_calls(entry["id"])
    assert len(calls) == entry["calls"]
    for i, c in enumerate(calls):
        assert list(c) == ["i", "class", "params"] and c["i"] == i and c["class"] in convert.CLASSES
        p = c["params"]
        assert list(p) == ["sessionId", "turn", "callId", "tool", "result"]
        assert (p["sessionId"], p["turn"], p["callId"]) == (entry["id"], 1, f"{entry['id']}-{i}")
        assert list(p["result"]) == ["isError", "text"] and isinstance(p["result"]["isError"], bool)
        assert len(p["result"]["text"]) <= convert.MAX_RESULT_CHARS
        tool = p["tool"]
        assert tool["name"] in ("bash", "read", "edit", "write")
        if tool["name"] == "bash":
            assert list(tool["input"]) == ["command"]
        elif tool["name"] != "read":
            assert tool["input"]["file_path"] and set(tool["input"]) in (
                {"file_path", "command"},
                {"file_path", "content"},
            )
    assert "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in calls[-1]["params"]["tool"]["input"]["command"]

    first_edit = entry["firstEdit"]
    assert first_edit is not None and calls[first_edit]["class"] == "edit"
    for g, i in entry["firstOpen"].items():
        tool = calls[i]["params"]["tool"]
        assert g in entry["gold"] and (tool["input"].get("file_path") == g or g.rsplit("/", 1)[-1] in json.dumps(tool))
        earlier = [c for c in calls[:i] if c["params"]["tool"] == {"name": "read", "input": {"file_path": g}}]
        assert earlier == []
    hit = entry["ownSearchHit"]
    if hit is not None:
        assert hit < first_edit
        text = calls[hit]["params"]["result"]["text"]
        assert any(g.rsplit("/", 1)[-1] in text for g in entry["gold"])


def test_own_search_baseline() -> None:
    hits = [e for e in INDEX if e["ownSearchHit"] is not None]
    assert len(hits) == 40
    assert Counter(e["repo"] for e in hits) == {
        "sympy/sympy": 8,
        "sphinx-doc/sphinx": 9,
        "astropy/astropy": 7,
        "pydata/xarray": 5,
        "pytest-dev/pytest": 7,
        "pylint-dev/pylint": 4,
    }
    assert sum(1 for e in INDEX if e["firstOpen"]) == 48
