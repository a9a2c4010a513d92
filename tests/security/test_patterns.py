"""Class 3: untrusted patterns are linear-time (docs/SECURITY.md).

Globs from packs and lines from ``.gitignore`` files are matched by RE2 (``workspace/wildmatch``).
The shapes below need exponential time in a backtracking engine on a long name of ``a``s (a
folder name may be 255 bytes); every call runs under a deadline, so a hang fails the test.
"""

from __future__ import annotations

import os
from pathlib import Path

import pathspec
import pytest
from dsh_sidecar.suggester.candidates import FileIndex
from dsh_sidecar.workspace.files import walk_files
from dsh_sidecar.workspace.graph import WorkspaceGraph
from dsh_sidecar.workspace.wildmatch import glob_spec, ignore_matcher, ignore_spec
from support.rawrpc import RawServer
from support.secutil import finishes, finishes_in_child

LONG = "a" * 250  # within NAME_MAX (255)

EVIL = [
    "*a*a*a*a*a*a*a*a*a*ab/*",
    "*a*a*a*a*a*a*a*a*a*ab",
    "**/*a*a*a*a*a*a*a*a*a*a*c",
    "?*a?*a?*a?*a?*a?*a?*a?*a?*ab",
    "[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*b",
    "/*a*a*a*a*a*a*a*a*a*ab/",
    "!*a*a*a*a*a*a*a*a*a*ab",
]


@pytest.mark.parametrize("line", EVIL)
def test_evil_lines_match_a_long_name_at_once(line):
    spec = ignore_spec(["*.pyc", line])
    match = ignore_matcher(spec)
    for rel in (LONG, LONG + "/x", f"{LONG}/{LONG}/x.py", "d/" + LONG):
        finishes_in_child(lambda rel=rel: (spec.match_file(rel), match(rel)), timeout=10)


def test_answers_are_gitwildmatch_answers():
    lines = ["*.pyc", "/build/", "docs/**/draft-*", "!keep.pyc", "tmp/", "#comment", "a?c"]
    spec = ignore_spec(lines)
    reference = pathspec.GitIgnoreSpec.from_lines(lines, backend="simple")
    paths = ["x.pyc", "keep.pyc", "sub/keep.pyc", "build/a", "src/build/a", "docs/a/b/draft-1.md"]
    paths += ["docs/draft-x", "tmp/y", "a/tmp/y", "abc", "a/c", "#comment", "src/x.py"]
    assert [spec.match_file(p) for p in paths] == [reference.match_file(p) for p in paths]
    assert [p for p in paths if spec.match_file(p)] == [
        "x.pyc",
        "build/a",
        "docs/a/b/draft-1.md",
        "docs/draft-x",
        "tmp/y",
        "a/tmp/y",
        "abc",
    ]
    plain = ignore_matcher(ignore_spec(["*.log", "out/"]))
    assert (plain("a/b.log"), plain("out/x"), plain("src/out.py")) == (True, True, False)


def test_a_malformed_line_is_dropped_and_the_rest_still_apply():
    spec = ignore_spec(["*.pyc", "[z-a]", "***/x[", "/build/"])
    assert spec.match_file("a.pyc") and spec.match_file("build/x")
    assert not spec.match_file("src/x.py")


def test_overlong_and_too_many_lines_are_bounded():
    spec = ignore_spec(["x" * 100_000, "*.pyc"])
    assert spec.match_file("a.pyc")
    finishes(lambda: ignore_spec(["*.tmp"] * 50_000), timeout=20)


def _tree_with_long_names(root: Path) -> None:
    deep = root / LONG / LONG
    deep.mkdir(parents=True)
    (deep / "mod.py").write_text("def deep_thing():\n    pass\n")
    (root / "ok.py").write_text("x = 1\n")


@pytest.mark.parametrize("where", ["root", "nested"])
def test_walk_with_an_evil_gitignore_finishes(tmp_path, where):
    _tree_with_long_names(tmp_path)
    folder = tmp_path if where == "root" else tmp_path / LONG
    (folder / ".gitignore").write_text("\n".join(EVIL[:-1]) + "\n")
    finishes_in_child(lambda: walk_files(tmp_path), timeout=10)
    assert "ok.py" in [rel for rel, _ in walk_files(tmp_path)]


def test_graph_refresh_with_an_evil_root_gitignore_finishes(tmp_path):
    _tree_with_long_names(tmp_path)
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*ab/*\n")
    finishes_in_child(lambda: WorkspaceGraph.build(tmp_path), timeout=20)
    graph = WorkspaceGraph.build(tmp_path)
    (tmp_path / LONG / "new.py").write_text("y = 2\n")
    finishes_in_child(lambda: graph.refresh([f"{LONG}/new.py", f"{LONG}/{LONG}/mod.py"]), timeout=10)
    graph.refresh([f"{LONG}/new.py"])
    assert graph.exists(f"{LONG}/new.py")


@pytest.mark.parametrize("pattern", EVIL[:-1] + ["**/" + "*a" * 12 + "b/**"])
def test_pack_glob_candidates_resolve_at_once(tmp_path, pattern):
    files = [f"{LONG}/{LONG}/mod.py", f"{LONG}/x.py", "ok.py", f"src/{LONG}b/y.py"]
    index = FileIndex(tmp_path, files)
    finishes_in_child(lambda: index.glob(pattern), timeout=10)
    assert glob_spec("src/*/y.py").match_file(f"src/{LONG}b/y.py")


def test_sidecar_initialize_with_evil_gitignore_and_pack_answers(tmp_path, dsh_home):
    ws = tmp_path / "ws"
    ws.mkdir()
    _tree_with_long_names(ws)
    (ws / "README.md").write_text("# x\n")
    (ws / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*ab/*\n")
    (ws / ".dsh").mkdir()
    candidates = ",\n".join(
        f"      - {{path: '{p}', prior: 1.0, reason: a trap}}" for p in EVIL[:-1] + [f"{LONG}/*a*a*a*a*a*a*ab"]
    )
    (ws / ".dsh" / "pack.yml").write_text(
        "id: evil\nintents:\n  Doc:\n    signals:\n      - {pattern: 'docs', weight: 3}\n"
        f"    candidates:\n{candidates.replace(',', '')}\n"
    )
    server = RawServer(dsh_home, cwd=ws, forked=True)
    try:
        server.initialize({"suggester": {"enabled": True}}, root=ws)
        reply = server.request(
            "dsh/postExecute",
            {"sessionId": "s", "turn": 1, "tool": {"name": "grep", "input": {"pattern": "docs"}}},
            timeout=20,
        )
        assert "result" in reply, reply
        changes = [{"uri": (ws / LONG / f"n{i}.py").as_uri(), "type": 1} for i in range(3)]
        server.notify("workspace/didChangeWatchedFiles", {"changes": changes})
        assert "result" in server.request("dsh/status", timeout=10)
    finally:
        server.close()
    assert os.path.isdir(ws / LONG)
