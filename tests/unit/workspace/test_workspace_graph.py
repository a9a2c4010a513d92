"""The workspace graph projection: kinds, recency, symbols, refresh, scores, background build."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from dsh_sidecar.workspace import (
    FileNode,
    GraphBuilder,
    WorkspaceGraph,
    classify,
)
from dsh_sidecar.workspace.cache import SymbolCache, SymbolEntries
from dsh_sidecar.workspace.graph import recency_score
from dsh_sidecar.workspace.kinds import SOURCE_EXTENSIONS
from dsh_sidecar.workspace.symbols import extension
from support.gitrepo import git
from support.trees import write_tree


def commit(root: Path, files: dict[str, str], message: str, date: str) -> None:
    """Write ``files`` and commit everything at ``date`` (author and committer)."""
    write_tree(root, files)
    git(root, "add", ".")
    git(root, "commit", "-qm", message, date=date)


# ---------------------------------------------------------------------- kinds


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("pyproject.toml", "manifest"),
        ("package.json", "manifest"),
        ("crates/core/Cargo.toml", "manifest"),
        ("go.mod", "manifest"),
        ("requirements-dev.txt", "manifest"),
        ("Cargo.lock", "lock"),
        ("poetry.lock", "lock"),
        ("package-lock.json", "lock"),
        ("go.sum", "lock"),
        ("pnpm-lock.yaml", "lock"),
        ("tests/test_api.py", "test"),
        ("src/pkg/test_util.py", "test"),
        ("pkg/server_test.go", "test"),
        ("web/app.spec.ts", "test"),
        ("web/app.test.jsx", "test"),
        ("tests/data/config.yaml", "test"),
        ("conftest.py", "test"),
        ("README.md", "doc"),
        ("docs/conf.py", "doc"),
        ("guide.rst", "doc"),
        ("LICENSE", "doc"),
        ("CODEOWNERS", "doc"),
        (".github/workflows/ci.yml", "config"),
        ("setup.toml", "config"),
        ("mkdocs.yml", "config"),
        ("tox.ini", "config"),
        (".gitignore", "config"),
        ("Dockerfile", "config"),
        ("tsconfig.json", "config"),
        ("src/app.py", "source"),
        ("main.go", "source"),
        ("src/lib.rs", "source"),
        ("src/App.java", "source"),
        ("dist/bundle.js", "generated"),
        ("build/lib/x.py", "generated"),
        ("static/app.min.js", "generated"),
        ("api/service_pb2.py", "generated"),
        ("api/service.pb.go", "generated"),
        ("assets/logo.png", "other"),
    ],
)
def test_classify(path: str, kind: str) -> None:
    assert classify(path) == kind


# ---------------------------------------------------------------------- nodes and recency


def test_recency_from_git_history_with_controlled_dates(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    commit(tmp_path, {"old.py": "a = 1\n", "README.md": "# r\n"}, "one", "2020-01-01T00:00:00Z")
    commit(tmp_path, {"mid.py": "b = 2\n"}, "two", "2021-01-01T00:00:00Z")
    commit(tmp_path, {"new.py": "c = 3\n", "old.py": "a = 10\n"}, "three", "2022-01-01T00:00:00Z")

    g = WorkspaceGraph.build(tmp_path)
    assert g.time_source == "git"
    assert g.files == ["README.md", "mid.py", "new.py", "old.py"]
    assert g.node("new.py") == FileNode("new.py", "source", 0, 0)
    assert g.node("old.py").recency_rank == 0  # touched again in the newest commit
    assert g.node("mid.py").recency_rank == 1
    assert g.node("README.md") == FileNode("README.md", "doc", 0, 2)
    assert g.node("nope.py") is None


def test_untracked_file_is_newest(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    commit(tmp_path, {"a.py": "x = 1\n", ".gitignore": "*.log\n"}, "one", "2020-01-01T00:00:00Z")
    write_tree(tmp_path, {"b.py": "y = 2\n", "debug.log": "noise\n"})
    g = WorkspaceGraph.build(tmp_path)
    assert g.exists("b.py") and not g.exists("debug.log")
    assert g.node("b.py").recency_rank == 0
    assert g.node("a.py").recency_rank == 1


def test_gitignore_honoured_without_git(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            ".gitignore": "secret/\n*.tmp\n",
            "app.py": "def run():\n    pass\n",
            "secret/key.py": "def leaked():\n    pass\n",
            "scratch.tmp": "x",
            "node_modules/dep/index.js": "function dep() {}\n",
        },
    )
    g = WorkspaceGraph.build(tmp_path)
    assert g.time_source == "mtime"
    assert g.files == [".gitignore", "app.py"]
    assert g.definitions("leaked") == []
    assert g.definitions("run") == ["app.py"]


def test_nested_gitignore_honoured_without_git(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            ".gitignore": "*.tmp\n",
            "pkg/.gitignore": "cache/\n/local.py\n!keep.tmp\n",
            "pkg/cache/x.py": "",
            "pkg/sub/cache/y.py": "",
            "pkg/local.py": "",
            "pkg/sub/local.py": "",
            "pkg/keep.tmp": "",
            "pkg/drop.tmp": "",
            "cache/top.py": "",
        },
    )
    g = WorkspaceGraph.build(tmp_path, symbols=False)
    assert g.files == [".gitignore", "cache/top.py", "pkg/.gitignore", "pkg/keep.tmp", "pkg/sub/local.py"]


def test_a_refresh_admits_only_what_the_walk_lists(tmp_path: Path) -> None:
    """A path a batch names is admitted as the walk would list it: the nested ``.gitignore``
    files and a ``.gitignore`` written since the graph was made are honoured (the root's alone
    were, read once)."""
    tree = {
        ".gitignore": "*.tmp\n",
        "pkg/.gitignore": "cache/\n/local.py\n!keep.tmp\n",
        "pkg/app.py": "",
        "cache/top.py": "",
    }
    write_tree(tmp_path, tree)
    g = WorkspaceGraph.build(tmp_path, symbols=False)
    g.refresh([".gitignore"])  # the root's rules read once before the rules change
    made = {
        "pkg/cache/x.py": "",
        "pkg/sub/cache/y.py": "",
        "pkg/local.py": "",
        "pkg/sub/local.py": "",
        "pkg/keep.tmp": "",
        "pkg/drop.tmp": "",
        "node_modules/m.js": "",
        "docs/.gitignore": "*.log\n",
        "docs/run.log": "",
        ".gitignore": "*.tmp\nout/\n",
        "out/made.py": "",
    }
    write_tree(tmp_path, made)
    g.refresh(list(made))
    assert g.files == WorkspaceGraph.build(tmp_path, symbols=False).files
    assert g.files == [
        ".gitignore",
        "cache/top.py",
        "docs/.gitignore",
        "pkg/.gitignore",
        "pkg/app.py",
        "pkg/keep.tmp",
        "pkg/sub/local.py",
    ]


def test_walk_recency_from_mtime(tmp_path: Path) -> None:
    write_tree(tmp_path, {"old.py": "", "mid.md": "", "new.toml": ""})
    for rel, t in (("old.py", 1_000_000), ("mid.md", 2_000_000), ("new.toml", 3_000_000)):
        os.utime(tmp_path / rel, (t, t))
    g = WorkspaceGraph.build(tmp_path, symbols=False)
    assert [g.node(f).recency_rank for f in ("new.toml", "mid.md", "old.py")] == [0, 1, 2]


def test_modified_tracked_file_is_newest(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    commit(tmp_path, {"a.py": "x = 1\n", "b.py": "y = 1\n"}, "one", "2020-01-01T00:00:00Z")
    write_tree(tmp_path, {"b.py": "y = 2\n"})
    os.utime(tmp_path / "b.py", (2_000_000_000, 2_000_000_000))
    g = WorkspaceGraph.build(tmp_path, symbols=False)
    assert g.time_source == "git"
    assert g.node("b.py").recency_rank == 0 and g.node("a.py").recency_rank == 1
    assert not (tmp_path / ".git" / "index.lock").exists()


def test_100k_file_listing(tmp_path: Path) -> None:
    """The file-level graph of a synthetic 100k-file listing (no files written: the filesystem
    part is measured by bench/workspace.py)."""
    kinds = [
        "src/p{d}/m{i}.py",
        "tests/p{d}/test_m{i}.py",
        "docs/p{d}/page{i}.md",
        "config/p{d}/s{i}.yaml",
        "dist/p{d}/b{i}.js",
    ]
    files = [kinds[d % 5].format(d=d, i=i) for d in range(2_000) for i in range(50)]
    times = {f: float(i % 1000 + 1) for i, f in enumerate(files)}
    g = WorkspaceGraph.from_listing(tmp_path, files + ["pyproject.toml", "uv.lock"], times)
    assert len(g.files) == 100_002
    assert {k: len(g.by_kind(k)) for k in ("source", "test", "doc", "config", "generated", "manifest", "lock")} == {
        "source": 20_000,
        "test": 20_000,
        "doc": 20_000,
        "config": 20_000,
        "generated": 20_000,
        "manifest": 1,
        "lock": 1,
    }
    assert g.node("src/p0/m0.py") == FileNode("src/p0/m0.py", "source", 2, 999)
    assert g.node("pyproject.toml").recency_rank == 1000  # no time: the oldest
    assert g.proof("tests/p1/test_m7.py", ["test"]) > g.proof("tests/p1/test_m7.py", ["doc"]) > 0.0
    assert g.exists("dist/p4/b49.js")


def test_the_symbol_pass_reads_source_and_test_files_with_a_code_extension_newest_first(tmp_path: Path) -> None:
    """The files the symbol pass reads (made in C loops): source and test files whose name has a
    code extension after a dot that does not start the name, newest first, path order within a
    time."""
    files = [
        "a.b/Makefile",  # the last dot is in a folder's name
        ".py",  # a name that is its extension only, at the root
        "pkg/.py",  # and in a folder
        "pkg/.hidden.py",  # a dot starts it, another one comes later
        "pkg/Mod.PY",  # an extension in capitals
        "pkg/b.py",
        "pkg/a.py",
        "tests/data.json",  # a test file with no code extension
        "tests/test_x.py",
        "README",
        "docs/conf.py",  # code, of another kind
    ]
    times = {"pkg/b.py": 3.0, "pkg/a.py": 3.0, "tests/test_x.py": 5.0, "pkg/Mod.PY": 1.0, "pkg/.hidden.py": 2.0}
    g = WorkspaceGraph.from_listing(tmp_path, files, times)
    todo, more = g._symbol_todo()
    assert [g.files[i] for i in todo] == ["tests/test_x.py", "pkg/a.py", "pkg/b.py", "pkg/.hidden.py", "pkg/Mod.PY"]
    assert not more
    expected = [f for f in g.files if g.kind_map()[f] in ("source", "test") and extension(f) in SOURCE_EXTENSIONS]
    assert sorted(g.files[i] for i in todo) == sorted(expected)


def test_listing_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dsh_sidecar.workspace.graph.MAX_FILES", 10)
    g = WorkspaceGraph.from_listing(tmp_path, [f"f{i:02d}.py" for i in range(20)], {})
    assert g.files == [f"f{i:02d}.py" for i in range(10)]


def test_depth_and_by_kind(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": "", "a/b/c/d.py": "", "tests/test_x.py": "", "docs/i.md": ""})
    g = WorkspaceGraph.build(tmp_path, symbols=False)
    assert g.node("a/b/c/d.py").depth == 3
    assert g.node("pyproject.toml").depth == 0
    assert g.by_kind("manifest") == ["pyproject.toml"]
    assert g.by_kind("test") == ["tests/test_x.py"]
    assert g.by_kind("doc") == ["docs/i.md"]
    assert g.by_kind("lock") == []
    assert g.symbols is None
    assert g.definitions("anything") == [] and g.usages("anything") == []


# ---------------------------------------------------------------------- symbols

POLYGLOT = {
    "py/session.py": "class Session:\n    def merge_setting(self):\n        pass\n\nMAX_RETRIES = 3\n",
    "py/use.py": "from py.session import Session\n\ns = Session()\ns2 = Session()\n",
    "py/other.py": "import session\nx = session.Session\n",
    "js/util.js": "export function formatDate(d) { return d }\nexport const PI = 3.14;\nclass Widget { render() {} }\n",
    "js/app.js": "import { formatDate } from './util';\nformatDate(new Date());\n",
    "ts/types.ts": "export interface Shape { area(): number }\nexport type Id = string;\nexport enum Color { Red }\n",
    "ts/main.ts": "import { Shape, Color } from './types';\nconst s: Shape = null as any;\n",
    "go/runes.go": "package text\n\nconst Limit = 10\n\ntype Buffer struct{}\n\ntype Reader interface{}\n\nfunc TruncateRunes(s string) string { return s }\n\nfunc (b *Buffer) Flush() {}\n",
    "go/runes_test.go": 'package text\n\nfunc TestTruncate(t *T) { TruncateRunes("x") }\n',
    "rs/lib.rs": "pub struct Parser {}\npub enum Token { A }\npub trait Visit {}\npub fn parse_all() {}\nconst MAX: u32 = 1;\nmacro_rules! shout { () => {} }\n",
    "rs/main.rs": "use lib::Parser;\nfn main() { let p = Parser {}; parse_all(); }\n",
    "java/Store.java": "public class Store { public void save() {} }\ninterface Repo {}\nenum Mode { A }\n",
    "rb/thing.rb": "class Thing\n  def call\n  end\nend\n",
}


@pytest.fixture
def poly(tmp_path: Path) -> WorkspaceGraph:
    write_tree(tmp_path, POLYGLOT)
    return WorkspaceGraph.build(tmp_path)


@pytest.mark.parametrize(
    ("name", "files"),
    [
        ("Session", ["py/session.py"]),
        ("merge_setting", ["py/session.py"]),
        ("MAX_RETRIES", ["py/session.py"]),
        ("formatDate", ["js/util.js"]),
        ("PI", ["js/util.js"]),
        ("Widget", ["js/util.js"]),
        ("render", ["js/util.js"]),
        ("Shape", ["ts/types.ts"]),
        ("Id", ["ts/types.ts"]),
        ("Color", ["ts/types.ts"]),
        ("TruncateRunes", ["go/runes.go"]),
        ("Buffer", ["go/runes.go"]),
        ("Reader", ["go/runes.go"]),
        ("Limit", ["go/runes.go"]),
        ("Flush", ["go/runes.go"]),
        ("TestTruncate", ["go/runes_test.go"]),
        ("Parser", ["rs/lib.rs"]),
        ("Token", ["rs/lib.rs"]),
        ("Visit", ["rs/lib.rs"]),
        ("parse_all", ["rs/lib.rs"]),
        ("MAX", ["rs/lib.rs"]),
        ("shout", ["rs/lib.rs"]),
        ("Store", ["java/Store.java"]),
        ("save", ["java/Store.java"]),
        ("Repo", ["java/Store.java"]),
        ("Mode", ["java/Store.java"]),
        ("Thing", ["rb/thing.rb"]),  # regex fallback
        ("p", []),  # a local variable (Rust `let p`) is not a definition
        ("nonexistent", []),
    ],
)
def test_definitions_across_languages(poly: WorkspaceGraph, name: str, files: list[str]) -> None:
    assert poly.definitions(name) == files


def test_usages_exclude_definitions_and_rank_by_count(poly: WorkspaceGraph) -> None:
    assert poly.usages("Session") == ["py/use.py", "py/other.py"]  # 3 mentions before 1
    assert poly.usages("Session", limit=1) == ["py/use.py"]
    assert poly.usages("TruncateRunes") == ["go/runes_test.go"]
    assert poly.usages("formatDate") == ["js/app.js"]
    assert poly.usages("Parser") == ["rs/main.rs"]
    assert poly.usages("nonexistent") == []


def test_parsers_used(poly: WorkspaceGraph) -> None:
    assert poly.stats["parsers"] == {"tree-sitter": 12, "regex": 1}


def test_generated_marker_relabels_and_skips(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "gen.go": "// Code generated by protoc. DO NOT EDIT.\npackage x\nfunc Gen() {}\n",
            "x.go": "package x\nfunc Real() {}\n",
        },
    )
    write_tree(
        tmp_path,
        {
            "doc.py": '"""Files whose head says @generated or DO NOT EDIT are skipped."""\ndef real():\n    pass\n',
            "pb_like.py": "# Generated by the protocol buffer compiler.  DO NOT EDIT!\nclass Msg:\n    pass\n",
        },
    )
    g = WorkspaceGraph.build(tmp_path)
    assert g.node("doc.py").kind == "source" and g.definitions("real") == ["doc.py"]
    assert g.node("pb_like.py").kind == "generated" and g.definitions("Msg") == []
    assert g.node("gen.go").kind == "generated"
    assert g.definitions("Gen") == []
    assert g.definitions("Real") == ["x.go"]
    assert g.by_kind("generated") == ["gen.go", "pb_like.py"]


def test_big_file_not_indexed(tmp_path: Path) -> None:
    write_tree(tmp_path, {"big.py": "def huge():\n    pass\n" + "# x\n" * 200_000})
    g = WorkspaceGraph.build(tmp_path)
    assert g.exists("big.py")
    assert g.definitions("huge") == []


# ---------------------------------------------------------------------- refresh


def test_refresh_after_change_add_and_delete(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "def alpha():\n    pass\n", "b.py": "alpha()\n", ".gitignore": "ignored/\n"})
    g = WorkspaceGraph.build(tmp_path)
    assert g.definitions("alpha") == ["a.py"] and g.usages("alpha") == ["b.py"]

    write_tree(
        tmp_path,
        {
            "a.py": "def beta():\n    pass\n",
            "c.py": "def alpha():\n    pass\nalpha()\n",
            "ignored/x.py": "def alpha():\n    pass\n",
        },
    )
    (tmp_path / "b.py").unlink()
    assert g.refresh(["a.py", str(tmp_path / "c.py"), "b.py", "ignored/x.py", "../outside.py"]) is g
    assert g.definitions("alpha") == ["c.py"]
    assert g.definitions("beta") == ["a.py"]
    assert g.usages("alpha") == []
    assert not g.exists("b.py") and not g.exists("ignored/x.py")
    assert g.files == [".gitignore", "a.py", "c.py"]
    assert g.node("c.py").recency_rank == 0 and g.node("a.py").recency_rank == 0
    g.refresh(["./.gitignore", "/not/under/root.py"])
    assert g.files == [".gitignore", "a.py", "c.py"]


def test_full_refresh_rebuilds(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "def alpha():\n    pass\n"})
    g = WorkspaceGraph.build(tmp_path)
    write_tree(tmp_path, {"z.py": "def zeta():\n    pass\n"})
    g.refresh(None)
    assert g.files == ["a.py", "z.py"]
    assert g.definitions("zeta") == ["z.py"]


# ---------------------------------------------------------------------- scores


def test_proof_and_scope(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    commit(tmp_path, {"pyproject.toml": "", "old/a/b/c.py": ""}, "one", "2020-01-01T00:00:00Z")
    write_tree(tmp_path, {"pyproject.toml": "[project]\n"})
    git(tmp_path, "commit", "-qam", "two", date="2021-01-01T00:00:00Z")
    g = WorkspaceGraph.build(tmp_path, symbols=False)
    assert g.proof("missing.toml", ["manifest"]) == 0.0
    assert g.proof("pyproject.toml", ["manifest"]) == pytest.approx(1.0)  # 0.4 + 0.4 + 0.2·1
    assert g.proof("pyproject.toml", ["test"]) == pytest.approx(0.6)
    assert g.proof("pyproject.toml") == pytest.approx(1.0)
    assert g.proof("old/a/b/c.py", ["source"]) == pytest.approx(0.4 + 0.4 + 0.2 * 0.5)  # rank 1
    assert recency_score(0) == 1.0 and recency_score(1) == 0.5 and recency_score(3) == pytest.approx(1 / 3)


def test_missing_root_is_empty(tmp_path: Path) -> None:
    g = WorkspaceGraph.build(tmp_path / "nope")
    assert g.files == [] and g.definitions("x") == []


# ---------------------------------------------------------------------- background builder


def test_builder_builds_in_background_with_progress(tmp_path: Path) -> None:
    write_tree(tmp_path, {f"m{i}.py": f"def f{i}():\n    pass\n" for i in range(30)})
    seen: list[tuple[int, int]] = []
    ready = threading.Event()
    b = GraphBuilder(
        tmp_path, progress=lambda d, t: seen.append((d, t)), on_ready=lambda g: ready.set(), progress_min_files=30
    )
    b.start()
    assert b.wait(30)
    assert ready.is_set()
    assert b.graph is not None and len(b.graph) == 30
    assert b.graph.definitions("f7") == ["m7.py"]
    assert seen[0] == (0, 30) and seen[-1] == (30, 30)
    assert all(d2 >= d1 for (d1, _), (d2, _) in zip(seen, seen[1:]))


def test_builder_reports_no_progress_below_threshold(tmp_path: Path) -> None:
    write_tree(tmp_path, {f"m{i}.py": "x = 1\n" for i in range(30)})
    seen: list[tuple[int, int]] = []
    b = GraphBuilder(tmp_path, progress=lambda d, t: seen.append((d, t)), progress_min_files=31)
    b.start()
    assert b.wait(30)
    assert seen == [] and b.status()["state"] == "ready" and b.status()["files"] == 30


def test_builder_live_lookups(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/a/b/core.py": "def alpha():\n    pass\n", "use.py": "alpha()\n"})
    b = GraphBuilder(tmp_path)
    assert b.status()["state"] == "pending"
    assert b.definitions("alpha") == [] and b.exists("use.py") is None
    b.start()
    assert b.wait(30)
    assert b.ready and b.status()["state"] == "ready"
    assert b.definitions("alpha") == ["pkg/a/b/core.py"]
    assert b.usages("alpha") == ["use.py"]
    assert b.exists("use.py") is True and b.exists("nope.py") is False
    assert b.node("use.py").kind == "source"


def test_builder_queues_changes_during_build_and_rebuilds(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "def alpha():\n    pass\n"})
    b = GraphBuilder(tmp_path)
    b.refresh(["a.py"])  # before any graph: queued, not lost, no crash
    b.start()
    assert b.wait(30)
    write_tree(tmp_path, {"b.py": "def beta():\n    pass\n"})
    b.refresh(["b.py"])  # applied in a worker thread, never on the caller's
    assert b.wait(30)
    assert b.graph.definitions("beta") == ["b.py"]
    write_tree(tmp_path, {"c.py": "def gamma():\n    pass\n"})
    b.rebuild()
    assert b.wait(30)
    assert b.graph.definitions("gamma") == ["c.py"]


def test_a_change_queued_while_the_finished_build_winds_down_is_applied(tmp_path: Path) -> None:
    """The build has published its graph (and taken the changes queued so far) but its worker
    has not ended yet: a change queued then goes to the refresh thread, not to the build."""
    write_tree(tmp_path, {"a.py": "def alpha():\n    pass\n"})
    b = GraphBuilder(tmp_path)
    b.start()
    assert b.wait(30)
    b._worker = True  # the window between the build's publication and its worker's end
    write_tree(tmp_path, {"b.py": "def beta():\n    pass\n"})
    b.refresh(["b.py"])
    assert b.wait(30)
    assert b.graph.definitions("beta") == ["b.py"]
    b._worker = False
    b.close()


def test_builder_many_changes_rebuild_in_background(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dsh_sidecar.workspace.builder.MAX_INLINE_REFRESH", 2)
    write_tree(tmp_path, {"a.py": "def alpha():\n    pass\n"})
    b = GraphBuilder(tmp_path)
    b.start()
    assert b.wait(30)
    first = b.graph
    write_tree(tmp_path, {f"n{i}.py": f"def new{i}():\n    pass\n" for i in range(3)})
    b.refresh([f"n{i}.py" for i in range(3)])
    assert b.wait(30)
    assert b.graph is not first  # rebuilt, not patched in place
    assert b.definitions("new2") == ["n2.py"]


def test_changes_queued_during_a_build_are_held_once_each_and_bounded(tmp_path: Path) -> None:
    """A client repeating the same batch while the graph is built queues each path once (the
    queue held every copy: 20,000 notifications of the same 100 paths during a build of a big
    tree took a real server to 338 MiB); past :data:`MAX_INLINE_REFRESH` distinct paths the
    queue is dropped for a full build, as one batch that large is."""
    write_tree(tmp_path, {"a.py": "def alpha():\n    pass\n"})
    b = GraphBuilder(tmp_path)  # not started: no graph yet, every change is queued
    same = [f"s{i}.py" for i in range(100)]
    for _ in range(1000):
        b.refresh(same)
    assert list(b._pending) == same
    b.refresh([f"d{i}.py" for i in range(100)])
    assert len(b._pending) == 200
    assert b.graph is None and not b._worker  # nothing built yet: the queue waits for a build
    b.refresh(["d100.py"])  # the 201st distinct path: a full build instead, the queue dropped
    assert len(b._pending) == 0
    assert b.wait(30)
    assert b.graph is not None and b.definitions("alpha") == ["a.py"]
    b.close()


def test_a_full_build_asked_for_during_a_build_follows_it_instead_of_restarting_it(tmp_path: Path) -> None:
    """A rebuild or a batch too large to apply (a branch switch) while a build runs is one more
    build once that one has published its graph, not a cancel and restart of it: a client
    sending a 201-path batch every 0.5 s kept a real serve on pallets/flask from ever being
    ready (60 s, 90 batches, load 29)."""
    write_tree(tmp_path, {"a.py": "def alpha():\n    pass\n"})
    b = GraphBuilder(tmp_path)
    held, run, generations = threading.Event(), b._run, []

    def held_run(gen, cancel) -> None:  # each build holds until the test lets it go
        generations.append(gen)
        held.wait(30)
        run(gen, cancel)

    b._run = held_run  # type: ignore[method-assign]
    b.start()
    first = b._generation
    write_tree(tmp_path, {"b.py": "def beta():\n    pass\n"})
    for _ in range(5):
        b.refresh(None)
        b.refresh([f"n{i}.py" for i in range(201)])
    assert b._generation == first  # the running build was not cancelled
    held.set()
    assert b.wait(30)
    assert generations == [first, first + 1]  # it published, then one more build, once
    assert b.definitions("beta") == ["b.py"] and b.definitions("alpha") == ["a.py"]
    b.close()


def test_a_full_build_asked_for_during_a_build_that_fails_still_runs(tmp_path: Path) -> None:
    """A rebuild (``dsh/toolsChanged``, a branch switch's large batch) asked for while a build
    runs waits for that build to publish; a build that fails publishes nothing. Before, the
    build asked for was then dropped: no graph at all after a failed first build, until some
    later change (the builder idle, ``wait`` true). Now it runs once the failed one ends."""
    write_tree(tmp_path, {"a.py": "def alpha():\n    pass\n"})
    b = GraphBuilder(tmp_path)
    held, run, generations = threading.Event(), b._run, []
    build_files = WorkspaceGraph.build_files

    def held_run(gen, cancel) -> None:  # the first build holds until the test lets it go, then fails
        generations.append(gen)
        held.wait(30)
        run(gen, cancel)

    def failing_once(*args, **kwargs):
        if len(generations) == 1:
            raise OSError("a folder could not be read")
        return build_files(*args, **kwargs)

    b._run = held_run  # type: ignore[method-assign]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(WorkspaceGraph, "build_files", staticmethod(failing_once))
        b.start()
        first = b._generation
        write_tree(tmp_path, {"b.py": "def beta():\n    pass\n"})
        b.refresh(None)
        assert b._generation == first  # the running build was not cancelled
        held.set()
        assert b.wait(30)
    assert generations == [first, first + 1]  # it failed, then the build asked for ran
    assert b.error is None
    assert b.definitions("beta") == ["b.py"] and b.definitions("alpha") == ["a.py"]
    b.close()


def test_changes_queued_during_a_rebuild_that_fails_are_applied(tmp_path: Path) -> None:
    """A rebuild that fails keeps the graph answered from; the changes queued while it ran are
    then applied to that graph. Before, they waited for the next change to arrive."""
    write_tree(tmp_path, {"a.py": "def alpha():\n    pass\n"})
    b = GraphBuilder(tmp_path)
    b.start()
    assert b.wait(30)
    held, started, run = threading.Event(), threading.Event(), b._run

    def failing_run(gen, cancel) -> None:
        started.set()
        held.wait(30)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(WorkspaceGraph, "build_files", staticmethod(_unreadable))
            run(gen, cancel)

    b._run = failing_run  # type: ignore[method-assign]
    b.start()
    assert started.wait(30)
    write_tree(tmp_path, {"b.py": "def beta():\n    pass\n"})
    b.refresh(["b.py"])
    held.set()
    assert b.wait(30)
    assert b.error == "a folder could not be read"
    assert b.definitions("beta") == ["b.py"] and b.definitions("alpha") == ["a.py"]
    b.close()


def _unreadable(*_args, **_kwargs):
    raise OSError("a folder could not be read")


def test_builder_without_root_is_inert() -> None:
    b = GraphBuilder(None)
    b.start()
    assert b.wait(0) and b.graph is None


# ---------------------------------------------------------------------- symbol cache


def test_symbol_cache_reuses_unchanged_files(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, {"a.py": "def alpha():\n    pass\n", "b.py": "alpha()\n", "c.go": "package c\nfunc Gamma() {}\n"})
    b = GraphBuilder(ws, cache_dir=home)
    b.start()
    assert b.wait(30)
    assert b.graph.stats["parsers"] == {"tree-sitter": 3} and b.graph.stats["cacheSaved"] is True
    cache_file = b.cache.path
    assert cache_file.parent == home and cache_file.name.startswith("ws-") and cache_file.suffix == ".json"
    assert cache_file.stat().st_mode & 0o777 == 0o600

    write_tree(ws, {"a.py": "def alpha2():\n    pass\n"})  # size changes
    b.listing_cache.clear()  # walked before ready: no listing kept (listingcache.py; test_listing_cache.py)
    b2 = GraphBuilder(ws, cache_dir=home)
    b2.start()
    assert b2.wait(30)
    assert b2.graph.stats["parsers"] == {"cache": 2, "tree-sitter": 1}
    assert b2.graph.stats["cacheHits"] == 2
    assert b2.definitions("alpha2") == ["a.py"] and b2.definitions("alpha") == []
    assert b2.definitions("Gamma") == ["c.go"] and b2.usages("alpha") == ["b.py"]

    b3 = GraphBuilder(ws, cache_dir=home)  # nothing changed: all from the cache, not rewritten
    b3.start()
    assert b3.wait(30)
    assert b3.graph.stats["parsers"] == {"cache": 3} and b3.graph.stats["cacheSaved"] is False


def test_corrupt_symbol_cache_is_set_aside(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, {"a.py": "def alpha():\n    pass\n"})
    b = GraphBuilder(ws, cache_dir=home)
    home.mkdir()
    b.cache.path.write_text("{not json")
    b.start()
    assert b.wait(30)
    assert b.definitions("alpha") == ["a.py"]
    assert list(home.glob("*.corrupt-*"))
    assert b.graph.stats["cacheSaved"] is True


def test_foreign_symbol_cache_is_ignored(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, {"a.py": "def alpha():\n    pass\n"})
    b = GraphBuilder(ws, cache_dir=home)
    st = os.stat(ws / "a.py")
    planted = SymbolEntries.of([("a.py", ((st.st_mtime_ns, st.st_size, st.st_ino), ["planted"], {}, False))])
    elsewhere = SymbolCache(tmp_path / "other-cache", tmp_path / "elsewhere")
    assert elsewhere.save(planted)  # a well-formed cache of another workspace, at this one's path
    home.mkdir()
    b.cache.path.write_bytes(elsewhere.path.read_bytes())
    b.start()
    assert b.wait(30)
    assert b.definitions("planted") == [] and b.definitions("alpha") == ["a.py"]


def test_a_file_replaced_with_the_same_size_and_mtime_is_parsed_again(tmp_path: Path) -> None:
    """The inode tells a file put in place of another (a checkout, a rename) from the one the
    cache entry was made from, when its size and mtime are the same."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, {"a.py": "def alpha():\n    pass\n", "b.py": "x = 1\n"})
    b = GraphBuilder(ws, cache_dir=home)
    b.start()
    assert b.wait(30) and b.definitions("alpha") == ["a.py"]
    st = os.stat(ws / "a.py")
    (ws / "new.py").write_text("def omega():\n    pass\n")  # as long as the old text
    os.utime(ws / "new.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(ws / "new.py", ws / "a.py")
    now = os.stat(ws / "a.py")
    assert (now.st_size, now.st_mtime_ns) == (st.st_size, st.st_mtime_ns) and now.st_ino != st.st_ino
    b.listing_cache.clear()  # walked before ready: no listing kept (listingcache.py; test_listing_cache.py)
    b2 = GraphBuilder(ws, cache_dir=home)
    b2.start()
    assert b2.wait(30)
    assert b2.definitions("omega") == ["a.py"] and b2.definitions("alpha") == []
    assert b2.graph.stats["parsers"] == {"cache": 1, "tree-sitter": 1} and b2.graph.stats["cacheSaved"] is True


def test_an_index_read_back_whole_is_the_parsed_one(tmp_path: Path) -> None:
    """A later session on an unchanged tree builds its index from the cache's columns at once:
    the same definitions, usages, per-file tables and file lengths (BM25's document lengths) as
    the session that parsed the files."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    files = {
        f"pkg/m{i}.py": f"from pkg import m{i - 1}\ndef f{i}(x):\n    return f{i - 1}(x) + g{i % 3}\n"
        for i in range(40)
    }
    files["pkg/gen.py"] = "# Code generated by a tool. DO NOT EDIT.\ndef hidden():\n    pass\n"
    files["lib/a.go"] = "package a\nfunc Alpha() {}\nfunc Beta() { Alpha() }\n"
    write_tree(ws, files)
    cold = GraphBuilder(ws, cache_dir=home)
    cold.start()
    assert cold.wait(30) and cold.graph.stats["cacheHits"] == 0
    warm = GraphBuilder(ws, cache_dir=home)
    warm.start()
    assert warm.wait(30)
    assert warm.graph.stats["cacheHits"] == 42 and warm.graph.stats["parsers"] == {"cache": 41}
    a, b = cold.graph.symbols, warm.graph.symbols
    assert (a.defs, a.refs, a._file_defs, a.generated, a.lengths) == (
        b.defs,
        b.refs,
        b._file_defs,
        b.generated,
        b.lengths,
    )
    assert {p: a.tokens_of(p) for p in files} == {p: b.tokens_of(p) for p in files}
    assert b.lengths["lib/a.go"] == 6  # package, func ×2, Alpha ×2, Beta (tokens of 2+ characters)
    assert warm.graph.node("pkg/gen.py").kind == "generated" and warm.usages("f3") == cold.usages("f3")


# ---------------------------------------------------------------------- ignore matcher

IGNORE_PATHS = [
    "a.log",
    "x/a.log",
    "build/",
    "build/x.py",
    "x/build/y.py",
    "buildx/y.py",
    "local.py",
    "x/local.py",
    "a/b",
    "a/x/y/b",
    "a/b/c.py",
    "ab",
    "docs/a.md",
    "deep/er/file.txt",
    ".env",
    "x/.env",
    "node/cache/",
    "cache.py",
]


@pytest.mark.parametrize(
    "lines",
    [
        ["*.log", "build/", "/local.py", "a/**/b", ".env"],
        ["cache/", "*.txt", "docs/*.md"],
        ["*.log", "!keep.log"],  # a negation: the spec itself is used
        ["[ab]", "?.py", "**/er/"],
    ],
)
def test_ignore_matcher_agrees_with_pathspec(lines: list[str]) -> None:
    import pathspec
    from dsh_sidecar.workspace.files import ignore_matcher

    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    matcher = ignore_matcher(spec)
    assert [matcher(p) for p in IGNORE_PATHS] == [spec.match_file(p) for p in IGNORE_PATHS]


def test_apply_says_what_changed_and_ranks_follow_without_a_rerank(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "def alpha():\n    pass\n", "b.py": "alpha()\n", "c.md": "# c\n", "d.md": "# d\n"})
    for i, name in enumerate(("a.py", "b.py", "c.md", "d.md")):  # four distinct times, d newest
        os.utime(tmp_path / name, (1_000_000 + i, 1_000_000 + i))
    g = WorkspaceGraph.build(tmp_path)
    assert [g.node(f).recency_rank for f in ("d.md", "c.md", "b.py", "a.py")] == [0, 1, 2, 3]
    write_tree(tmp_path, {"a.py": "def omega():\n    pass\n", "e.py": "# generated by x. DO NOT EDIT\n"})
    (tmp_path / "c.md").unlink()
    delta = g.apply(["a.py", "c.md", "e.py", "nowhere.py"])
    assert delta.added == {"e.py"} and delta.removed == {"c.md"} and delta.modified == {"a.py"}
    assert delta.kinds == {"e.py": "generated"} and delta.names == {"alpha", "omega"}
    assert delta.paths == {"a.py", "c.md", "e.py"}
    # dense ranks as a rebuild would give them: the touched files share the newest time, c.md's
    # time left with it (b.py moves up a rank), d.md and b.py follow
    assert [g.node(f).recency_rank for f in ("a.py", "e.py", "d.md", "b.py")] == [0, 0, 1, 2]
    assert g.files == ["a.py", "b.py", "d.md", "e.py"] and g.by_kind("doc") == ["d.md"]
    assert g.definitions("omega") == ["a.py"] and g.definitions("alpha") == []
    assert g.apply(["a.py"]).modified == {"a.py"} and g.apply(["nowhere.py"]).paths == frozenset()


def test_truncated_symbol_index_is_cached_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dsh_sidecar.workspace.graph as graph_module

    monkeypatch.setattr(graph_module, "MAX_SYMBOL_FILES", 2)
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, {f"m{i}.py": f"def f{i}():\n    pass\n" for i in range(4)})
    b = GraphBuilder(ws, cache_dir=home)
    b.start()
    assert b.wait(30)
    stats = b.graph.stats
    assert stats["symbolsTruncated"] is True and stats["symbolFiles"] == 2 and stats["cacheSaved"] is True
    b2 = GraphBuilder(ws, cache_dir=home)  # a later session on the unchanged tree parses nothing
    b2.start()
    assert b2.wait(30)
    stats = b2.graph.stats
    assert stats["cacheHits"] == 2 and stats["parsers"] == {"cache": 2} and stats["cacheSaved"] is False


def test_a_burst_of_notifications_is_one_batch(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "x = 1\n"})
    batches: list[object] = []
    b = GraphBuilder(tmp_path, on_change=lambda graph, delta: batches.append(delta))
    b.start()
    assert b.wait(30)
    for i in range(5):
        write_tree(tmp_path, {f"n{i}.py": "y = 2\n"})
        b.refresh([f"n{i}.py"])
    assert b.wait(30)
    assert len(batches) == 1 and batches[0].added == {f"n{i}.py" for i in range(5)}
    assert b.refreshes == 1


def test_the_kinds_of_an_unchanged_listing_come_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dsh_sidecar.workspace.graph as graph_module
    from dsh_sidecar.workspace.kinds import classify

    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, {"a.py": "def alpha():\n    pass\n", "tests/test_a.py": "", "README.md": "", "pyproject.toml": ""})
    calls: list[str] = []
    monkeypatch.setattr(graph_module, "classify", lambda p: calls.append(p) or classify(p))

    def build() -> GraphBuilder:
        b = GraphBuilder(ws, cache_dir=home)
        b.start()
        assert b.wait(30)
        return b

    first = build()
    assert sorted(calls) == sorted(first.graph.files) and first.kind_cache.path.stat().st_mode & 0o777 == 0o600
    kinds = dict(first.graph.kind_map())
    calls.clear()
    second = build()  # the same listing: no path classified
    assert calls == [] and second.graph.kind_map() == kinds and second.graph.node("tests/test_a.py").kind == "test"
    (ws / "docs").mkdir()
    (ws / "docs" / "b.md").write_text("")
    second.listing_cache.clear()  # walked before ready: no listing kept (listingcache.py; test_listing_cache.py)
    third = build()  # another listing: every path classified, the file written anew
    assert len(calls) == 5 and third.graph.node("docs/b.md").kind == "doc"
    calls.clear()
    build()
    assert calls == []


def test_a_folder_swapped_for_a_symlink_mid_session_lists_nothing_through_it(tmp_path):
    """As the walk (which never goes through a symlinked folder): a change under a folder the
    work tree replaced by a symlink, told by absolute path (an editor's watcher) or relative,
    drops what was listed under it and never adds a file through it (a link out of the
    workspace would list another tree's names)."""
    ws, out = tmp_path / "ws", tmp_path / "out"
    write_tree(ws, {"src/a.py": "def a():\n    pass\n", "main.py": "x = 1\n", "notes.md": "n\n"})
    write_tree(out, {"a.py": "SECRET = 1\n", "b.py": "def leaked():\n    pass\n"})
    g = WorkspaceGraph.build(ws, symbols=True)
    assert g.files == ["main.py", "notes.md", "src/a.py"]
    (ws / "src" / "a.py").unlink()
    (ws / "src").rmdir()
    (ws / "src").symlink_to(out, target_is_directory=True)
    delta = g.apply([str(ws / "src" / "a.py"), str(ws / "src" / "b.py"), str(ws / "src")])
    assert delta.removed == {"src/a.py"} and delta.added == frozenset()
    delta = g.apply(["src/a.py", "src/b.py"])
    assert delta.paths == frozenset()
    assert g.files == ["main.py", "notes.md"]
    assert g.definitions("leaked") == []
    assert WorkspaceGraph.build(ws).files == g.files  # what a new walk lists


def test_a_changed_path_the_system_cannot_stat_is_no_file_and_the_batch_still_applies(tmp_path):
    """A path longer than the system takes (ENAMETOOLONG: a client's URI, a watcher in a very
    deep tree) is no file: the other paths of its batch are applied (the whole batch raised and
    the builder kept the previous graph)."""
    write_tree(tmp_path, {"a.py": "def a():\n    pass\n"})
    g = WorkspaceGraph.build(tmp_path, symbols=True)
    (tmp_path / "b.py").write_text("def b():\n    pass\n")
    delta = g.apply(["a/" * 3000 + "x.py", str(tmp_path / ("y" * 5000)), "b.py"])
    assert delta.added == {"b.py"} and g.files == ["a.py", "b.py"]
