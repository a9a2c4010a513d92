"""A file change costs what it changes: the suggester's prepared view follows a batch of changed
files (``Suggester.workspace_changed``, ``prepared.apply_change``) to exactly what a full
preparation over the new listing gives, copy on write (the view a call holds never changes), with
the cached symbol lookups of the batch's names and paths dropped and the ``contains`` checks of
unchanged files not read again."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_protocol import PostExecuteParams
from dsh_sidecar.suggester import Suggester, parse_suggester_config
from dsh_sidecar.suggester import prepared as prep
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.workspace import WorkspaceGraph
from dsh_sidecar.workspace.projection import WorkspaceChange, _Batch
from support.suggester import copy_workspace


@pytest.fixture
def shopcart(tmp_path: Path) -> Path:
    dest = copy_workspace(tmp_path, "shopcart")
    (dest / "package.json").write_text('{"name": "shop", "version": "1.0.0"}\n')  # a `contains` candidate
    return dest


def view(p: prep.PreparedTargets) -> dict:
    """Everything a call reads of a prepared view, comparable."""
    index = p.index

    def table(t: dict[str, list[Target]]) -> dict:
        return {k: [(x.path, x.reason, round(x.score, 6)) for x in v] for k, v in t.items() if v}

    return {
        "files": list(index.files),
        "sorted": list(index._sorted),
        "set": set(index.file_set),
        "kinds": dict(index.kinds),
        "facts": {k: list(v) for k, v in index.facts.items() if v},
        "by_name": {k: sorted(v) for k, v in index.by_name.items()},
        "by_dir": {k: sorted(v) for k, v in index.by_dir.items()},
        "names": list(index.names),
        "depth": index.depth,
        "targets": table(p.targets),
        "fallback": table(p.fallback),
        "test_tree": table(p.test_tree),
        "fact_of": dict(p.fact_of),
        "docs_roots": set(p.docs_roots),
    }


class Workspace:
    """A real graph of ``root`` and a suggester following it change by change."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self.graph = WorkspaceGraph.build(root)
        self.s = Suggester(
            root, parse_suggester_config({"enabled": True}), home, workspace=lambda: self.graph, background=True
        )
        self.s.start()
        assert self.s.prepare(self.graph)

    def change(self, *paths: str) -> WorkspaceChange:
        batch = _Batch()
        batch.graph(self.graph.apply(list(paths)))
        return batch.event()

    def full(self) -> dict:
        fresh, _ = prep.prepare(self.root, self.s.rows, list(self.graph.files), dict(self.graph.kind_map()), None)
        return view(fresh)


def test_each_kind_of_change_gives_what_a_full_preparation_gives(shopcart, dsh_home):
    ws = Workspace(shopcart, dsh_home)
    steps = [
        (
            "a new module",
            lambda r: (r / "src" / "shopcart" / "orders.py").write_text("def order():\n    pass\n"),
            "src/shopcart/orders.py",
        ),
        (
            "a module edited",
            lambda r: (r / "src" / "shopcart" / "cart.py").write_text("class Cart:\n    pass\n"),
            "src/shopcart/cart.py",
        ),
        ("a module removed", lambda r: (r / "src" / "shopcart" / "settings.py").unlink(), "src/shopcart/settings.py"),
        ("a manifest edited", lambda r: (r / "package.json").write_text('{"name": "shop"}\n'), "package.json"),
        ("a changelog added", lambda r: (r / "src" / "HISTORY").write_text("1.0\n"), "src/HISTORY"),
        (
            "a test added",
            lambda r: (r / "tests" / "test_orders.py").write_text("def test_x():\n    pass\n"),
            "tests/test_orders.py",
        ),
        ("a workflow removed", lambda r: (r / ".github" / "workflows" / "ci.yml").unlink(), ".github/workflows/ci.yml"),
        (
            "a deep new folder",
            lambda r: ((r / "a" / "b" / "c").mkdir(parents=True), (r / "a" / "b" / "c" / "d.py").write_text("x = 1\n")),
            "a/b/c/d.py",
        ),
    ]
    for what, make, path in steps:
        held = ws.s.prepared
        before = view(held)
        make(shopcart)
        assert ws.s.workspace_changed(ws.change(path)), what
        assert ws.s.prepared is not held, what
        assert view(held) == before, f"{what}: the view a call holds changed"  # copy on write
        assert view(ws.s.prepared) == ws.full(), what


def test_a_change_that_may_move_the_docs_roots_asks_for_a_full_preparation(shopcart, dsh_home):
    ws = Workspace(shopcart, dsh_home)
    (shopcart / "docs" / "guide.md").write_text("# guide\n")
    assert not ws.s.workspace_changed(ws.change("docs/guide.md"))
    assert not ws.s.workspace_changed(WorkspaceChange(full=True))


def test_content_facts_of_the_batch_are_followed(shopcart, dsh_home):
    ws = Workspace(shopcart, dsh_home)
    (shopcart / "src" / "shopcart" / "__init__.py").write_text('__version__ = "2.0"\n')
    change = ws.change("src/shopcart/__init__.py")
    with_facts = WorkspaceChange(
        modified=change.modified,
        kinds=change.kinds,
        facts={"src/shopcart/__init__.py": frozenset({"version-module"})},
        names=change.names,
    )
    assert ws.s.workspace_changed(with_facts)
    p = ws.s.prepared
    assert p is not None
    assert "src/shopcart/__init__.py" in p.index.with_kind("version-module")
    assert "version-module" in p.fact_of["src/shopcart/__init__.py"]
    assert [t.path for t in p.targets["Version"]][:1] == ["src/shopcart/__init__.py"]
    # a later change of another file keeps the facts read from this one's contents
    (shopcart / "src" / "shopcart" / "api.py").write_text("def checkout():\n    pass\n")
    assert ws.s.workspace_changed(ws.change("src/shopcart/api.py"))
    assert "version-module" in ws.s.prepared.fact_of["src/shopcart/__init__.py"]


def test_cached_symbol_lookups_of_the_batch_are_dropped(shopcart, dsh_home):
    ws = Workspace(shopcart, dsh_home)
    call = PostExecuteParams.model_validate(
        {"sessionId": "s", "turn": 1, "tool": {"name": "grep", "input": {"pattern": "class Cart"}}}
    )
    assert ws.s.post_execute(call)[0].source.targets[0] == "src/shopcart/cart.py"
    other = PostExecuteParams.model_validate(
        {"sessionId": "t", "turn": 1, "tool": {"name": "grep", "input": {"pattern": "def apply_discount"}}}
    )
    ws.s.post_execute(other)
    cached = {key[1] for key in ws.s.prepared.symbols}
    assert {"Cart", "apply_discount"} <= cached
    (shopcart / "src" / "shopcart" / "cart.py").write_text("def nothing():\n    pass\n")
    (shopcart / "src" / "shopcart" / "basket.py").write_text("class Cart:\n    pass\n")
    assert ws.s.workspace_changed(ws.change("src/shopcart/cart.py", "src/shopcart/basket.py"))
    assert {key[1] for key in ws.s.prepared.symbols} == {"apply_discount"}  # Cart moved: dropped
    again = PostExecuteParams.model_validate(
        {"sessionId": "u", "turn": 1, "tool": {"name": "grep", "input": {"pattern": "class Cart"}}}
    )
    assert ws.s.post_execute(again)[0].source.targets[0] == "src/shopcart/basket.py"


def test_contains_checks_read_only_the_changed_files(shopcart, dsh_home, monkeypatch):
    ws = Workspace(shopcart, dsh_home)
    (shopcart / "packages" / "a").mkdir(parents=True)
    (shopcart / "packages" / "b").mkdir(parents=True)
    (shopcart / "packages" / "a" / "package.json").write_text('{"version": "1.0.0"}\n')
    (shopcart / "packages" / "b" / "package.json").write_text('{"version": "1.0.0"}\n')
    assert ws.s.workspace_changed(ws.change("packages/a/package.json", "packages/b/package.json"))
    from dsh_sidecar.suggester import candidates

    reads: list[str] = []
    real = candidates.fsguard.read_text

    def counting(root, rel, limit):
        reads.append(rel)
        return real(root, rel, limit)

    monkeypatch.setattr(candidates.fsguard, "read_text", counting)
    (shopcart / "packages" / "b" / "package.json").write_text('{"name": "b"}\n')
    assert ws.s.workspace_changed(ws.change("packages/b/package.json"))
    assert set(reads) == {"packages/b/package.json"}
    assert view(ws.s.prepared) == ws.full()


def test_files_changed_follows_its_paths(shopcart, dsh_home):
    ws = Workspace(shopcart, dsh_home)
    (shopcart / "src" / "shopcart" / "orders.py").write_text("def order():\n    pass\n")
    ws.graph.apply(["src/shopcart/orders.py"])
    held = ws.s.prepared
    ws.s.files_changed(["src/shopcart/orders.py"])
    assert ws.s.prepared is not held and ws.s.prepared.index.exists("src/shopcart/orders.py")
    assert view(ws.s.prepared) == ws.full()


class _Content:
    """A content view with fixed facts (some of them on paths no longer listed)."""

    pending = False

    def __init__(self, facts: dict[str, list[str]]) -> None:
        self.facts = facts


def reference_tables(root: Path, files: list[str], kinds: dict[str, str], content: _Content | None) -> dict:
    """What the one-pass tables must be, from the rules one by one: the file index of the
    listing, every file under its kind, ``code`` and each fact ``facts_of`` gives it unread, the
    content index's facts of listed files, and the doc pages under ``docs_roots`` (a root's own
    index or README page also ``docs-home``)."""
    from dsh_sidecar.suggester.fileindex import FileIndex
    from dsh_sidecar.workspace.facts import DOC_EXTENSIONS, docs_roots, facts_of, kind_is_code

    index = FileIndex(root, files)
    roots = docs_roots(files)
    facts: dict[str, set[str]] = {}
    for f in files:
        kind = kinds.get(f, "other")
        for fact in {kind, *facts_of(f, kind, None), *(["code"] if kind_is_code(f) else [])}:
            facts.setdefault(fact, set()).add(f)
        page = f.lower().endswith(DOC_EXTENSIONS[:6]) and any(f.startswith(r + "/") for r in roots)
        if page and kind not in ("test", "generated"):
            facts.setdefault("docs-page", set()).add(f)
            folder, _, name = f.rpartition("/")
            if folder in roots and name.rsplit(".", 1)[0].lower() in ("index", "readme"):
                facts.setdefault("docs-home", set()).add(f)
    for fact, paths in (content.facts if content else {}).items():
        facts.setdefault(fact, set()).update(p for p in paths if p in kinds)
    kind_facts = {"source", "other", "config", "doc", "test", "manifest", "lock", "generated", "code"}
    fact_of: dict[str, set[str]] = {}
    for fact, paths in facts.items():
        if fact not in kind_facts:
            for p in paths:
                fact_of.setdefault(p, set()).add(fact)
    return {
        "by_name": {k: sorted(v) for k, v in index.by_name.items()},
        "by_dir": {k: sorted(v) for k, v in index.by_dir.items()},
        "names": index.names,
        "depth": index.depth,
        "sorted": index._sorted,
        "facts": {k: sorted(v) for k, v in facts.items() if v},
        "roots": roots,
        "fact_of": fact_of,
    }


@pytest.mark.parametrize("name", ["shopcart", "pyproj", "bare", "this repository"])
def test_one_pass_tables_are_the_rules_one_by_one(tmp_path: Path, name: str) -> None:
    from dsh_sidecar.workspace.files import list_files
    from dsh_sidecar.workspace.kinds import classify

    root = Path(__file__).resolve().parents[3] if name == "this repository" else copy_workspace(tmp_path, name)
    files = list_files(root) + ["docs/guide/a.md", "site/x.rst", "manual/conf.py", "tests/docs/b.md", "CHANGES"]
    files = sorted(set(files))
    kinds = {f: classify(f) for f in files}
    kinds[files[0]] = "generated"  # a kind the symbol pass gave, not the path's
    content = _Content({"version-module": [files[1], "gone.py"], "changelog": ["CHANGES", files[2]]})
    for facts in (None, content):
        index, roots, fact_of = prep.tables(root, list(files), kinds, facts)
        got = {
            "by_name": {k: sorted(v) for k, v in index.by_name.items()},
            "by_dir": {k: sorted(v) for k, v in index.by_dir.items()},
            "names": index.names,
            "depth": index.depth,
            "sorted": index._sorted,
            "facts": {k: list(v) for k, v in index.facts.items() if v},
            "roots": set(roots),
            "fact_of": {p: set(v) for p, v in fact_of.items()},
        }
        assert got == reference_tables(root, files, kinds, facts)
        assert index.files == files and index.file_set == set(files) and index.kinds is kinds
