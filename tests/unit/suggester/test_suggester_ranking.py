"""A note adds information or stays silent: what a call showed (``suggester/shown.py``), the
session's evidence (``suggester/session.py``) and the ranking of a note's targets against it
(``suggester/ranking.py``), with exact values; then the ledger lines end to end."""

from __future__ import annotations

import re
from pathlib import Path

from dsh_protocol import PostExecuteParams
from dsh_sidecar.suggester import Suggester, parse_suggester_config
from dsh_sidecar.suggester.candidates import FileIndex, Target
from dsh_sidecar.suggester.parse import parse_call
from dsh_sidecar.suggester.ranking import (
    WEIGHTS,
    Scorer,
    answered_definition,
    answered_in_files,
    answered_usage,
    choose,
    in_scope,
    package_folder,
    stem_words,
)
from dsh_sidecar.suggester.session import MAX_RECENT, SessionEvidence
from dsh_sidecar.suggester.shown import ECHO_MAX_FILES, RANK_MIN_FILES, listed_files
from dsh_sidecar.suggester.triggers.traceback import installed, plumbing
from dsh_sidecar.workspace import WorkspaceGraph
from support.trees import copy_fixture

FILES = [
    "README.md",
    "pkg/__init__.py",
    "pkg/core.py",
    "pkg/util.py",
    "pkg/io/html.py",
    "tests/test_core.py",
    "x.py",
]


def index(files=FILES) -> FileIndex:
    return FileIndex(Path("/ws"), files)


# ---------------------------------------------------------------- what a call showed


def test_a_result_shows_the_workspace_files_its_paths_name():
    idx = index()
    text = "\n".join(
        [
            "./pkg/core.py:3:def run():",  # ./ removed
            "diff --git a/pkg/util.py b/pkg/util.py",  # a diff's a/ and b/
            '  File "/testbed/pkg/io/html.py", line 9, in write',  # a container's root
            "/mnt/w/repo/tests/test_core.py:1:x",  # the longest workspace path ending it
            "/usr/lib/x.py",  # one part under a folder of no workspace: not the root x.py
            "pkg/core.pyc",  # never part of a longer name
        ]
    )
    assert listed_files(text, idx, "/ws/") == ["pkg/core.py", "pkg/util.py", "pkg/io/html.py", "tests/test_core.py"]
    # the workspace root as printed, and bare names relative to a searched folder or a header
    assert listed_files("/ws/README.md\n", idx, "/ws/") == ["README.md"]
    assert listed_files("core.py\nutil.py\n", idx, "/ws/", ["pkg"]) == ["pkg/core.py", "pkg/util.py"]
    assert listed_files("./pkg/io:\nhtml.py\n", idx, "/ws/") == ["pkg/io/html.py"]
    assert listed_files("core.py\n", idx, "/ws/") == []  # no folder to be relative to
    assert (ECHO_MAX_FILES, RANK_MIN_FILES) == (5, 10)


def test_a_name_repeated_under_another_header_is_that_headers_file():
    idx = FileIndex(Path("/ws"), ["a/x.py", "b/x.py", "b/y.py"])
    # ``ls -R``: the same bare name under two folder headers names two files (a header's trailing
    # blanks allowed); before any header, with no searched folder, it names none
    text = "x.py\na:\nx.py\nx.py\n\nb:  \nx.py\ny.py\nx.py\n"
    assert listed_files(text, idx, "/ws/") == ["a/x.py", "b/x.py", "b/y.py"]
    # the searched folder is tried before the header; a name with a folder in it is joined whole
    assert listed_files("x.py\nb:\nx.py\n../b/y.py\n", idx, "/ws/", ["a"]) == ["a/x.py", "b/y.py"]


# ---------------------------------------------------------------- the session's evidence


def test_the_session_evidence_is_bounded_and_most_recent_last():
    ev = SessionEvidence()
    ev.showed(["a.py", "b.py"])
    ev.showed(["c.py"])
    assert ev.current == frozenset({"c.py"}) and ev.seen == {"a.py", "b.py", "c.py"}
    for i in range(MAX_RECENT + 3):
        ev.opened_files([f"f{i}.py"])
    assert len(ev.opened) == MAX_RECENT and ev.opened[-1] == f"f{MAX_RECENT + 2}.py"
    ev.opened_files(["f5.py"], edit=True)  # again: moved to the recent end, once
    assert list(ev.opened).count("f5.py") == 1 and ev.opened[-1] == "f5.py" and list(ev.edited) == ["f5.py"]
    ev.searched("merge_setting", ["Merge", "setting"])
    assert list(ev.names) == ["merge_setting"] and list(ev.terms) == ["merge", "setting"]
    ev.failed_in(["pkg/core.py", "pkg/util.py"])  # innermost first
    assert list(ev.frames) == ["pkg/util.py", "pkg/core.py"]  # innermost most recent


def test_import_plumbing_frames_are_not_the_code_path():
    assert [plumbing(f) for f in ("<module>", "<module>...", "...", "apply", "SyntaxError", "<listcomp>")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    assert [
        installed(p) for p in (".venv/lib/python3.11/site-packages/django/db/models/base.py", "web/node_modules/x/i.js")
    ] == [
        True,
        True,
    ]
    assert [installed(p) for p in ("src/pkg/vendored.py", "site-packages.py", "pkg/core.py")] == [False, False, False]


def test_the_agents_own_script_and_installed_code_are_no_frames(tmp_path, dsh_home):
    root = tmp_path / "shop"
    copy_fixture("shopcart", root)
    lib = root / ".venv" / "lib" / "python3.11" / "site-packages" / "attr"
    lib.mkdir(parents=True)
    (lib / "_make.py").write_text("def attrs(): pass\n")
    s, lines = make(root, dsh_home)
    # the agent writes its reproduction script (a file the session created) and runs it
    assert post(s, "write", {"file_path": "repro.py", "content": "def main():\n    pass\n"}, "") == []
    (root / "repro.py").write_text("def main():\n    pass\n")
    trace = "".join(
        f'  File "/testbed/{p}", line 1, in {f}\n'
        for p, f in (
            ("repro.py", "main"),
            ("src/shopcart/api.py", "checkout"),
            (".venv/lib/python3.11/site-packages/attr/_make.py", "attrs"),
        )
    )
    post(s, "bash", {"command": "python repro.py"}, "Traceback (most recent call last):\n" + trace + "TypeError: x\n")
    assert list(s.noise.session("s").evidence.frames) == ["src/shopcart/api.py"]


# ---------------------------------------------------------------- support and ranking


class Symbols:
    def __init__(self, defs: dict[str, set[str]]) -> None:
        self.defs = defs

    def defined_in(self, path: str) -> frozenset[str]:
        return frozenset(self.defs.get(path, ()))


class View:
    """The part of ``ports.WorkspaceView`` the ranking reads: the symbol index."""

    def __init__(self, defs: dict[str, set[str]]) -> None:
        self.symbols = Symbols(defs)


def targets(*paths: str) -> list[Target]:
    return [Target(p, "r", 1.0) for p in paths]


def paths(chosen) -> list[str] | str:
    return chosen if isinstance(chosen, str) else [t.path for t in chosen]


def test_file_names_and_jvm_neighbours():
    assert stem_words("src/HttpClient.java") == {"http", "client", "httpclient"}
    assert stem_words("pkg/retry_policy.py") == {"retry", "policy", "retry_policy"}
    assert stem_words("a/io.py") == set()  # shorter than three letters
    assert package_folder("m/src/main/java/org/x/A.java") == "m/src/*/org/x"
    assert package_folder("m/src/test/java/org/x/ATest.java") == "m/src/*/org/x"
    assert package_folder("src/test/kotlin/org/x/B.kt") == "src/*/org/x"
    assert package_folder("src/x/y.ts") == "src/x"
    assert package_folder("y.py") == ""


def test_support_adds_the_evidence_of_each_kind():
    q = parse_call("grep", {"pattern": "def merge_setting"})
    ev = SessionEvidence()
    ev.searched("Session", [])
    ev.failed_in(["pkg/sessions.py"])
    ev.opened_files(["pkg/adapters.py"])
    view = View({"pkg/sessions.py": {"merge_setting", "Session"}, "pkg/models.py": {"Session"}})
    s = Scorer(q, ev, view)
    # defines the searched name (3) + a frame (2) + named like a searched word ("sessions"? no:
    # "session" is a word, the stem's words are "sessions") + near the opened adapters (0.5)
    assert s.support("pkg/sessions.py") == WEIGHTS.defines_searched + WEIGHTS.frame + WEIGHTS.near == 5.5
    assert s.support("pkg/models.py") == WEIGHTS.defines_earlier + WEIGHTS.near == 1.5
    assert s.support("pkg/session.py") == WEIGHTS.named + WEIGHTS.near == 1.5
    assert s.support("other/x.py") == 0.0


def test_a_small_listing_is_never_named_back():
    q = parse_call("grep", {"pattern": "def merge_setting"})
    ev = SessionEvidence()
    ev.showed(["pkg/a.py", "pkg/b.py"])
    assert paths(choose(targets("pkg/a.py", "pkg/b.py"), q, "Symbol", ev, None)) == "echo"
    # what it did not show stays, best supported first
    view = View({"pkg/c.py": {"merge_setting"}})
    chosen = choose(targets("pkg/a.py", "pkg/d.py", "pkg/c.py"), q, "Symbol", ev, view)
    assert paths(chosen) == ["pkg/c.py", "pkg/d.py"]
    # the best target shown: the agent is there; only sources it did not show may follow
    found = targets("pkg/a.py", "tests/test_c.py", "pkg/d.py")
    assert paths(choose(found, q, "Symbol", ev, view)) == ["pkg/d.py"]
    assert paths(choose(targets("pkg/a.py", "CHANGES", "NEWS"), q, "Ledger", ev, view)) == "echo"
    # a project intent whose best target was not shown: the rest, in the manifests' order
    assert paths(choose(targets("NEWS", "pkg/a.py", "CHANGES"), q, "Ledger", ev, view)) == ["NEWS", "CHANGES"]


def test_a_definition_search_that_printed_the_definition_was_answered():
    view = View({"pkg/a.py": {"merge_setting"}, "pkg/c.py": {"Session"}})
    ev = SessionEvidence()
    ev.showed(["pkg/a.py", "pkg/b.py"])
    found = targets("pkg/a.py", "pkg/c.py", "pkg/d.py")
    for q in (
        parse_call("grep", {"pattern": "def merge_setting", "path": "pkg"}, "Found 1 file\npkg/a.py"),
        parse_call("bash", {"command": "rg -n 'def merge_setting' pkg/"}, "pkg/a.py:3:def merge_setting(a, b):"),
        parse_call("search_dir", {"search_term": "def merge_setting", "dir": "pkg"}, "pkg/a.py (1 matches)"),
    ):
        assert q.definition_keyword == "def" and not q.lookup and q.result_paths == ["pkg/a.py"]
        assert answered_definition(q, "Symbol", ev.current, view)
        assert paths(choose(found, q, "Symbol", ev, view)) == "answered"
    # its hits are definitions whatever the index says (`impl X for Y`, a C++ class the
    # index missed); a hit-less output over files the index says define it answers as well
    impl = parse_call("grep", {"pattern": "impl Context for Option", "path": "src"}, "Found 1 file\nsrc/context.rs")
    assert answered_definition(impl, "Symbol", frozenset({"src/context.rs"}), None)
    in_file = parse_call("bash", {"command": "grep -n 'def merge_setting' pkg/a.py"}, "3")
    assert in_file.result_paths == [] and answered_definition(in_file, "Symbol", frozenset({"pkg/a.py"}), view)
    # ... but a search that printed nothing (or only files defining something else) did not:
    # the definition is elsewhere and a note naming it is what the agent lacks
    silent = parse_call("bash", {"command": "grep -n 'def merge_setting' pkg/a.py"}, "")
    assert not answered_definition(silent, "Symbol", frozenset({"pkg/a.py"}), view)
    q = parse_call("grep", {"pattern": "def merge_setting"}, "3")
    assert paths(choose(found, q, "Symbol", ev, View({"pkg/c.py": {"merge_setting"}}))) == ["pkg/c.py", "pkg/d.py"]
    # a bare name asks where it is used as much as where it is defined
    bare = parse_call("grep", {"pattern": "merge_setting"}, "Found 1 file\npkg/a.py")
    assert not answered_definition(bare, "Symbol", ev.current, view)
    assert paths(choose(found, bare, "Symbol", ev, view)) == ["pkg/c.py", "pkg/d.py"]
    # a symbol lookup answers with the symbol itself: what is around it may follow
    lookup = parse_call("get_class_info", {"class_name": "Session"}, "pkg/c.py\nclass Session:")
    assert lookup.lookup and lookup.definition_keyword == "class"
    ev.showed(["pkg/c.py"])
    assert not answered_definition(lookup, "Symbol", ev.current, view)
    assert paths(choose(targets("pkg/c.py", "pkg/d.py"), lookup, "Symbol", ev, view)) == ["pkg/d.py"]
    assert not answered_definition(q, "Usage", frozenset({"pkg/a.py"}), view)


def test_a_usage_search_that_printed_its_hits_was_answered():
    ev = SessionEvidence()
    ev.showed(["tests/test_core.py"])
    found = targets("pkg/core.py", "tests/test_util.py", "pkg/util.py")
    listed = parse_call("bash", {"command": "grep -rln merge_setting tests/"}, "tests/test_core.py")
    assert answered_usage(listed, "Usage", ev.current)
    assert paths(choose(found, listed, "Usage", ev, None)) == "answered"
    # lines of the file it searched inside: a read of that file
    in_file = parse_call("bash", {"command": "grep -n merge_setting tests/test_core.py"}, "12\n40")
    assert answered_usage(in_file, "Usage", ev.current)
    # nothing printed: the uses are elsewhere; a symbol lookup of callers is no text search
    for q in (
        parse_call("bash", {"command": "grep -n merge_setting tests/test_core.py"}, ""),
        parse_call("get_function_callers", {"function_name": "merge_setting"}, "tests/test_core.py"),
    ):
        assert not answered_usage(q, "Usage", ev.current)
    assert not answered_usage(listed, "Symbol", ev.current)
    # the whole repository (no folder, or the root) may have printed only part of its hits;
    # hits only in catalogs or docs say nothing of the code
    for q in (
        parse_call("grep", {"pattern": "merge_setting"}, "Found 1 file\ntests/test_core.py"),
        parse_call("bash", {"command": "grep -rln merge_setting ."}, "tests/test_core.py"),
    ):
        assert not answered_usage(q, "Usage", ev.current)
    ev.showed(["pkg/locale/ko.po"])
    catalog = parse_call("bash", {"command": "grep -rln merge_setting pkg"}, "pkg/locale/ko.po")
    assert not answered_usage(catalog, "Usage", ev.current)


def test_a_usage_search_in_a_folder_names_uses_in_that_folder():
    ev = SessionEvidence()
    ev.showed(["tests/test_core.py"])
    found = targets("pkg/core.py", "tests/test_util.py", "pkg/util.py")
    in_tests = parse_call("bash", {"command": "grep -rln merge_setting tests/"})
    assert paths(in_scope(found, in_tests, ev.current)) == ["tests/test_util.py"]
    assert paths(choose(found, in_tests, "Usage", ev, None)) == ["tests/test_util.py"]
    # every use inside the folder was shown: nothing left to name
    assert paths(choose(targets("pkg/core.py", "pkg/util.py"), in_tests, "Usage", ev, None)) == "answered"
    # the field that scopes a tool's search means the same (Claude Code `path`, SWE-agent `dir`)
    for q in (
        parse_call("grep", {"pattern": "merge_setting", "path": "tests"}),
        parse_call("search_dir", {"search_term": "merge_setting", "dir": "tests"}),
    ):
        assert paths(choose(found, q, "Usage", ev, None)) == ["tests/test_util.py"]
    # no folder (or the root) is the whole repository: nothing is out of scope
    for q in (
        parse_call("grep", {"pattern": "merge_setting"}),
        parse_call("bash", {"command": "grep -rn merge_setting ."}),
    ):
        assert paths(in_scope(found, q, ev.current)) == [t.path for t in found]
    # a file searched inside is what it shows, no folder: the others stay
    in_file = parse_call("bash", {"command": "grep -n merge_setting tests/test_core.py"})
    assert paths(in_scope(found, in_file, ev.current)) == [t.path for t in found]


def test_a_search_confined_to_files_that_printed_hits_was_answered():
    ev = SessionEvidence()
    ev.showed(["pkg/core.py"])
    found = targets("pkg/util.py", "pkg/io/html.py")
    phrase = parse_call("bash", {"command": "grep -n 'x = merge_setting(' pkg/core.py"}, "12:x = merge_setting(a)")
    piped = parse_call("bash", {"command": "cat pkg/core.py | grep merge_setting"}, "x = merge_setting(a)")
    tool = parse_call("grep", {"content_pattern": "merge_setting", "path_glob": "pkg/core.py"}, "pkg/core.py:12:x")
    for q in (phrase, piped):
        assert answered_in_files(q, ev.current), q.text
        assert paths(choose(found, q, "Symbol", ev, None)) == "answered"
        assert paths(choose(found, q, "Usage", ev, None)) == "answered"
    assert not tool.scope or answered_in_files(tool, ev.current)
    # the tool cut its output mid-path: the fragment is no other file its hits name
    cut = parse_call(
        "bash", {"command": "grep -Hn merge_setting pkg/core.py"}, "pkg/core.py:12:x = merge_setting(a)\npkg/co..."
    )
    assert answered_in_files(cut, ev.current)
    assert paths(choose(found, cut, "Symbol", ev, None)) == "answered"
    # nothing printed: what it looked for is elsewhere, and the note names it
    empty = parse_call("bash", {"command": "grep -n merge_setting pkg/core.py"}, "")
    assert not answered_in_files(empty, ev.current)
    assert paths(choose(found, empty, "Symbol", ev, None)) == ["pkg/util.py", "pkg/io/html.py"]
    # a folder (not a file it printed lines of), a hit in a file it did not show, a lookup
    for q in (
        parse_call("bash", {"command": "grep -rn merge_setting pkg"}, "pkg/core.py:12:x"),
        parse_call("bash", {"command": "grep -n merge_setting pkg/core.py pkg/util.py"}, "pkg/util.py:3:x"),
        parse_call("get_class_info", {"class_name": "merge_setting"}, "pkg/core.py"),
    ):
        assert not answered_in_files(q, ev.current), q.text
    # a project question asked in a code file keeps its own rule (its answer lies elsewhere)
    assert paths(choose(targets("README.md"), phrase, "Doc", ev, None)) == ["README.md"]


def test_a_broad_listing_is_ranked_or_silent():
    q = parse_call("grep", {"pattern": "merge_setting"})
    listed = [f"pkg/m{i}.py" for i in range(RANK_MIN_FILES)]
    ev = SessionEvidence()
    ev.showed(listed)
    # nothing in the session singles a file out: the first lines of a listing are no ranking
    assert paths(choose(targets(*listed), q, "Usage", ev, None)) == "unranked"
    # the file defining the searched name leads, whatever its place in the listing
    view = View({"pkg/m7.py": {"merge_setting"}})
    assert paths(choose(targets(*listed), q, "Usage", ev, view))[:2] == ["pkg/m7.py", "pkg/m0.py"]
    # a listing of nine is no broad one: its order stays without support
    ev.showed(listed[:9])
    assert paths(choose(targets(*listed[:9]), q, "Usage", ev, None)) == listed[:9]


def test_sources_before_tests_unless_the_call_is_about_tests():
    view = View({"tests/test_core.py": {"run"}, "pkg/core.py": {"run"}})
    ev = SessionEvidence()
    q = parse_call("grep", {"pattern": "def run"})
    found = targets("tests/test_core.py", "pkg/core.py")
    assert paths(choose(found, q, "Symbol", ev, view)) == ["pkg/core.py", "tests/test_core.py"]
    in_tests = parse_call("bash", {"command": "grep -rn 'def run' tests"})
    assert paths(choose(found, in_tests, "Symbol", ev, view)) == ["tests/test_core.py", "pkg/core.py"]
    assert paths(choose(found, q, "Test", ev, view)) == ["tests/test_core.py", "pkg/core.py"]
    # a Maven/Gradle layout: the test source set is a test folder, the main one is not
    java = targets("m/src/test/java/org/x/CacheTest.java", "m/src/main/java/org/x/Cache.java")
    in_main = parse_call("bash", {"command": "grep -rn evict m/src/main/java"})
    in_test = parse_call("bash", {"command": "grep -rn evict m/src/test/java"})
    assert paths(choose(java, in_main, "Usage", ev, None)) == [java[1].path, java[0].path]
    assert paths(choose(java, in_test, "Usage", ev, None)) == [java[0].path, java[1].path]


def test_a_java_class_is_near_the_test_the_agent_opened():
    ev = SessionEvidence()
    ev.opened_files(["core/src/test/java/org/x/CacheTest.java"])
    q = parse_call("grep", {"pattern": "evict"})
    found = targets("core/src/main/java/org/y/Other.java", "core/src/main/java/org/x/Cache.java")
    chosen = choose(found, q, "Usage", ev, None)
    assert paths(chosen) == ["core/src/main/java/org/x/Cache.java", "core/src/main/java/org/y/Other.java"]


# ---------------------------------------------------------------- the ledger, end to end


def make(root: Path, home: Path) -> tuple[Suggester, list[str]]:
    lines: list[str] = []
    graph = WorkspaceGraph.build(root)
    s = Suggester(root, parse_suggester_config({"enabled": True}), home, sink=lines.append, workspace=lambda: graph)
    s.warm()
    return s, lines


def post(s, name, inp, text, session="s", turn=1):
    return s.post_execute(
        PostExecuteParams(
            session_id=session, turn=turn, tool={"name": name, "input": inp}, result={"isError": False, "text": text}
        )
    )


def messages(lines):
    return [re.sub(r"^\[[^\]]+\] ", "", line) for line in lines]


def test_echo_answered_and_unranked_ledger_lines(tmp_path, dsh_home):
    root = tmp_path / "shop"
    copy_fixture("shopcart", root)
    for i in range(10):
        (root / "src" / "shopcart" / f"view{i}.py").write_text("from shopcart.pricing import apply_discount\n")
    s, lines = make(root, dsh_home)
    # the search listed the one file it looks for: the note would repeat it
    assert post(s, "bash", {"command": "find src -name pricing.py"}, "src/shopcart/pricing.py") == []
    assert messages(lines)[-1] == "suppressed echo Symbol"
    # a listing of the ten views using a name nothing in the session points into: silent
    views = "\n".join(f"src/shopcart/view{i}.py:1:from shopcart.pricing import x" for i in range(10))
    assert post(s, "bash", {"command": "grep -rn 'import x' src"}, views, session="u") == []
    assert messages(lines)[-1] == "suppressed unranked Usage"
    # the same listing for apply_discount: the definition (not listed) leads the note
    views = "\n".join(f"src/shopcart/view{i}.py:1:from shopcart.pricing import apply_discount" for i in range(10))
    notes = post(s, "bash", {"command": "grep -rn apply_discount src"}, views, session="v")
    assert notes[0].source.targets[0] == "src/shopcart/pricing.py"
    assert messages(lines)[-1].startswith("suggest Usage 0.96 5 targets src/shopcart/pricing.py,")
    # the definition searched for and printed: where it is defined was the question
    found = "src/shopcart/pricing.py:9:def apply_discount(cart: Cart, percent: int) -> int:"
    assert post(s, "bash", {"command": "grep -rn 'def apply_discount' src"}, found, session="w") == []
    assert messages(lines)[-1] == "suppressed answered Symbol"


def test_a_search_scoped_to_a_top_level_folder_is_decided_as_the_unscoped_one(tmp_path, dsh_home):
    root = tmp_path / "shop"
    copy_fixture("shopcart", root)
    s, lines = make(root, dsh_home)
    decided = []
    for i, command in enumerate(
        ("grep -rn apply_discount .", "grep -rn apply_discount src", "grep -rn apply_discount src/shopcart")
    ):
        notes = post(s, "bash", {"command": command}, "", session=f"s{i}")
        decided.append((messages(lines)[-1], [n.source.targets for n in notes]))
    assert decided[0] == decided[1] == decided[2]
    assert decided[0][0].startswith("suggest Usage ")
