"""The listing tables' journal (``suggester/tablejournal.py``): the paths a session added and
removed, laid over the tables file of the listing it started from, give the next session exactly
what one pass over its listing makes (key order included) without that pass; a listing changed
while no session ran, a crash between the tables' write and the journal's, a corrupt, forged or
stale journal make the tables again (never wrong ones, never an error); the journal is bounded
and compacted."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from dsh_sidecar.state import columns
from dsh_sidecar.suggester import prepared as prep
from dsh_sidecar.suggester import tablejournal
from dsh_sidecar.suggester.fileindex import FileIndex
from dsh_sidecar.suggester.tablecache import TablesCache
from dsh_sidecar.workspace.kinds import classify
from dsh_sidecar.workspace.projection import WorkspaceChange

BASE = sorted(
    [
        "CHANGES",
        "Makefile",
        "README.md",
        "docs/conf.py",
        "docs/index.rst",
        "pyproject.toml",
        "src/pkg/__init__.py",
        "src/pkg/a.py",
        "src/pkg/b/__init__.py",
        "src/pkg/b/a.py",
        "src/pkg/b/c.js",
        "src/pkg/conftest.py",
        "src/pkg-extra.py",
        "tests/conftest.py",
        "tests/test_a.py",
        "uv.lock",
        "web/app.ts",
        "web/package.json",
    ]
)


def kinds_of(files: list[str]) -> dict[str, str]:
    return {f: classify(f) for f in files}


def view(root: Path, files: list[str], kinds: dict[str, str], cache: TablesCache | None) -> tuple[dict, FileIndex]:
    """Everything the preparation reads of the tables, in order, and the file index."""
    index, roots, fact_of = prep.tables(root, list(files), kinds, None, cache)
    if cache is not None:
        cache.flush()
    seen = {
        "by_name": list(index.by_name.items()),
        "by_dir": list(index.by_dir.items()),
        "names": index.names,
        "facts": sorted(index.facts.items()),
        "roots": roots,
        "fact_of": fact_of,
    }
    return seen, index


def change(before: FileIndex, added: dict[str, str], removed: set[str], kinds: dict[str, str] | None = None):
    return WorkspaceChange(added=frozenset(added), removed=frozenset(removed), kinds={**added, **(kinds or {})}), before


def session(tmp_path: Path, root: Path, files: list[str], kinds: dict[str, str]) -> tuple[TablesCache, dict, FileIndex]:
    cache = TablesCache(tmp_path / "cache" / "workspace", root)
    seen, index = view(root, files, kinds, cache)
    return cache, seen, index


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def _after(files: list[str], kinds: dict[str, str], added: dict[str, str], removed: set[str]):
    now = sorted((set(files) - removed) | set(added))
    return now, {**{p: k for p, k in kinds.items() if p not in removed}, **added}


def test_a_session_after_one_that_added_and_removed_files_lays_the_journal_over_the_tables(
    tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kinds = kinds_of(BASE)
    one, _, index = session(tmp_path, root, BASE, kinds)
    assert one.last == "miss"
    # a new first file of a folder and of a name, a new folder and name, a folder's and a
    # name's only file gone, a path whose kind changed, a file of a name that stays
    added = {"a.py": "source", "src/pkg/0.py": "source", "lib/new/mod.go": "source", "tests/test_z.py": "test"}
    removed = {"src/pkg/b/c.js", "src/pkg/conftest.py", "Makefile"}
    one.note(index, WorkspaceChange(added=frozenset(added), removed=frozenset(removed), kinds=added))
    one.note(index, WorkspaceChange(modified=frozenset({"uv.lock"}), kinds={"uv.lock": "generated"}))
    files, now = _after(BASE, kinds, added, removed)
    now["uv.lock"] = "generated"
    fresh, _ = view(root, files, now, None)
    written = []
    monkeypatch.setattr(prep, "listing_tables", lambda *a: written.append(a) or pytest.fail("made again"))
    two, seen, _ = session(tmp_path, root, files, now)
    assert two.last == "journal" and seen == fresh and not written
    assert two.entries == {
        "a.py": (None, True),
        "lib/new/mod.go": (None, True),
        "src/pkg/0.py": (None, True),
        "tests/test_z.py": (None, True),
        "src/pkg/b/c.js": (kinds["src/pkg/b/c.js"], False),
        "src/pkg/conftest.py": (kinds["src/pkg/conftest.py"], False),
        "Makefile": (kinds["Makefile"], False),
        "uv.lock": (kinds["uv.lock"], True),
    }
    three, again, _ = session(tmp_path, root, files, now)  # the journal stays until compacted
    assert three.last == "journal" and again == fresh


def test_a_path_added_then_removed_is_forgotten_and_one_removed_then_added_is_the_base_s() -> None:
    entries: tablejournal.Entries = {}
    tablejournal.note(entries, {"new.py"}, {})
    tablejournal.note(entries, set(), {"old.py": "source"})
    tablejournal.note(entries, set(), {"new.py": "source"})
    tablejournal.note(entries, {"old.py"}, {})
    tablejournal.note(entries, {"kind.py"}, {"kind.py": "source"})
    tablejournal.note(entries, {"kind.py"}, {"kind.py": "test"})
    assert entries == {"old.py": ("source", True), "kind.py": ("source", True)}


@pytest.mark.parametrize("seed", range(12))
def test_random_batches_over_a_larger_listing_give_what_one_pass_makes(tmp_path: Path, root: Path, seed: int) -> None:
    rng = random.Random(seed)
    folders = ["", "src", "src/a", "src/a/b", "lib", "tests", "tests/unit", "web", "web/ui"]
    names = ["__init__.py", "a.py", "b.py", "conftest.py", "test_x.py", "x.ts", "x.go", "Makefile", "setup.cfg"]
    pool = sorted({f"{d}/{n}".lstrip("/") for d in folders for n in names} | {f"src/m{i}.py" for i in range(40)})
    files = sorted(rng.sample(pool, 60))
    kinds = kinds_of(files)
    cache, _, index = session(tmp_path, root, files, kinds)
    for _ in range(3):  # three batches in one session
        gone = set(rng.sample(files, 6))
        new = {p: classify(p) for p in rng.sample([p for p in pool if p not in files], 6)}
        batch = WorkspaceChange(added=frozenset(new), removed=frozenset(gone), kinds=new)
        cache.note(index, batch)
        index = index.with_changes(batch.added, batch.removed, batch.kinds, batch.modified)
        files, kinds = _after(files, kinds, new, gone)
    fresh, _ = view(root, files, kinds, None)
    later, seen, _ = session(tmp_path, root, files, kinds)
    assert later.last == "journal" and seen == fresh


def test_a_listing_changed_while_no_session_ran_makes_the_tables_again(tmp_path: Path, root: Path) -> None:
    kinds = kinds_of(BASE)
    one, _, index = session(tmp_path, root, BASE, kinds)
    one.note(index, WorkspaceChange(added=frozenset({"src/new.py"}), kinds={"src/new.py": "source"}))
    files, now = _after(BASE, kinds, {"src/new.py": "source", "src/offline.py": "source"}, {"CHANGES"})
    fresh, _ = view(root, files, now, None)
    two, seen, _ = session(tmp_path, root, files, now)
    assert two.last == "miss" and seen == fresh  # made from the listing, and written for it
    assert not two.journal.file.path.exists()  # the journal of the file replaced, removed
    three, again, _ = session(tmp_path, root, files, now)
    assert three.last == "hit" and again == fresh


def test_a_crash_between_the_tables_write_and_the_journal_s_is_no_wrong_table(tmp_path: Path, root: Path) -> None:
    kinds = kinds_of(BASE)
    one, _, index = session(tmp_path, root, BASE, kinds)
    added = {"src/new.py": "source"}
    one.note(index, WorkspaceChange(added=frozenset(added), kinds=added))
    stale = one.journal.file.path.read_bytes()
    files, now = _after(BASE, kinds, added, set())
    # a later session wrote the tables of the new listing and stopped before removing the journal
    (tmp_path / "again").mkdir()
    writer = TablesCache(tmp_path / "cache" / "workspace", root)
    writer.load(files, now)
    writer.save(files, *_digest_and_tables(files, now))
    writer.flush()
    one.journal.file.path.write_bytes(stale)
    fresh, _ = view(root, files, now, None)
    two, seen, _ = session(tmp_path, root, files, now)
    assert two.last == "hit" and seen == fresh  # the journal's base is not the file's: not laid over


def _digest_and_tables(files: list[str], kinds: dict[str, str]):
    from dsh_sidecar.suggester.tablecache import listing_digest

    return listing_digest(files, kinds), prep.listing_tables(files, kinds)


def _journal(cache: TablesCache, head: dict, body: object) -> None:
    raw = json.dumps(body).encode()
    head = {"version": 1, "root": cache.root, "digest": columns.digest(raw), **head}
    cache.journal.file.path.write_bytes(json.dumps(head).encode() + b"\n" + raw)


FORGED = {
    "not JSON": lambda c, b: c.journal.file.path.write_bytes(b"\x00\xff garbage"),
    "a wrong digest": lambda c, b: c.journal.file.path.write_bytes(
        json.dumps({"version": 1, "root": c.root, "base": b, "digest": "0" * 40}).encode() + b'\n{"x.py":[null,true]}'
    ),
    "a base that is not a digest": lambda c, b: _journal(c, {"base": 7}, {"src/new.py": [None, True]}),
    "another base": lambda c, b: _journal(c, {"base": "a" * 40}, {"src/new.py": [None, True]}),
    "a path out of the tree": lambda c, b: _journal(c, {"base": b}, {"../x.py": [None, True]}),
    "an entry of three": lambda c, b: _journal(c, {"base": b}, {"src/new.py": [None, True, 1]}),
    "a kind that is a number": lambda c, b: _journal(c, {"base": b}, {"src/new.py": [3, True]}),
    "an entry saying nothing": lambda c, b: _journal(c, {"base": b}, {"src/new.py": [None, False]}),
    "a path added that is not listed": lambda c, b: _journal(c, {"base": b}, {"src/ghost.py": [None, True]}),
    "a path removed that is listed": lambda c, b: _journal(c, {"base": b}, {"CHANGES": ["other", False]}),
    "a path removed under another kind": lambda c, b: _journal(
        c, {"base": b}, {"src/new.py": [None, True], "gone.py": ["test", False]}
    ),
    "a docs path": lambda c, b: _journal(c, {"base": b}, {"src/new.py": [None, True], "docs/x.md": ["docs", False]}),
    "too many paths": lambda c, b: _journal(c, {"base": b}, {f"p{i}.py": [None, True] for i in range(513)}),
    "a list": lambda c, b: _journal(c, {"base": b}, [["src/new.py", None, True]]),
}


@pytest.mark.parametrize("name", sorted(FORGED))
def test_a_corrupt_forged_or_stale_journal_makes_the_tables_again(tmp_path: Path, root: Path, name: str) -> None:
    kinds = kinds_of(BASE)
    one, _, _ = session(tmp_path, root, BASE, kinds)
    base = one.base
    FORGED[name](one, base)
    files, now = _after(BASE, kinds, {"src/new.py": "source"}, set())
    fresh, _ = view(root, files, now, None)
    two, seen, _ = session(tmp_path, root, files, now)
    assert two.last == "miss" and seen == fresh and not two.entries
    three, again, _ = session(tmp_path, root, files, now)
    assert three.last == "hit" and again == fresh


def test_a_journal_past_its_bound_is_dropped_and_one_past_compaction_written_whole(tmp_path: Path, root: Path) -> None:
    kinds = kinds_of(BASE)
    one, _, index = session(tmp_path, root, BASE, kinds)
    added = {f"src/gen/m{i:03}.py": "source" for i in range(tablejournal.COMPACT_AT + 1)}
    one.note(index, WorkspaceChange(added=frozenset(added), kinds=added))
    assert one.journal.file.path.exists()
    files, now = _after(BASE, kinds, added, set())
    fresh, _ = view(root, files, now, None)
    two, seen, _ = session(tmp_path, root, files, now)
    assert two.last == "journal" and seen == fresh and two.entries == {}
    assert not two.journal.file.path.exists()  # written whole for this listing, the journal gone
    three, again, index = session(tmp_path, root, files, now)
    assert three.last == "hit" and again == fresh
    many = {f"src/more/m{i:03}.py": "source" for i in range(tablejournal.MAX_FILES + 1)}
    three.note(index, WorkspaceChange(added=frozenset(many), kinds=many))
    assert not three.journal.file.path.exists() and three.base == "" and three.entries == {}
    three.note(index, WorkspaceChange(added=frozenset({"x.py"}), kinds={"x.py": "source"}))
    assert not three.journal.file.path.exists()  # nothing journalled until a file is written again
