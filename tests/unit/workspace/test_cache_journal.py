"""The caches kept current by the incremental path (``workspace/journal.py``,
``GraphBuilder._keep``): after a session that changed files, the next one takes every file from
the symbol cache and its journal, its kinds from the kind cache, and (outside git) finds nothing
to apply in its walk after ready; a forged or torn journal is set aside, never trusted."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from dsh_sidecar.workspace import GraphBuilder, journal, symbolpass
from dsh_sidecar.workspace.cache import SymbolCache
from dsh_sidecar.workspace.journal import SymbolJournal
from support.gitrepo import git
from support.trees import write_tree

FILES = {f"pkg/m{i}.py": f"def f{i}(x):\n    return f{i - 1}(x) + shared_{i % 3}\n" for i in range(12)}
FILES["docs/guide.md"] = "# Guide\n"


def _session(ws: Path, home: Path) -> GraphBuilder:
    b = GraphBuilder(ws, cache_dir=home)
    b.start()
    assert b.wait(60)
    return b


def _tables(index: Any) -> tuple:
    files = sorted(index._file_defs)
    tokens = {p: sorted(index.tokens_of(p)) for p in files}
    return dict(index.refs), index.defs, index._file_defs, index.lengths, index.generated, tokens


def _edit_during(session: GraphBuilder, ws: Path) -> None:
    """One file changed, one deleted, one added, notified as watched-file changes; the session
    then writes what they did to its caches (``wait_kept``) and ends."""
    (ws / "pkg/m1.py").write_text("def f1(y):\n    return renamed(y)\n")
    (ws / "pkg/m2.py").unlink()
    (ws / "pkg/new.py").write_text("def brand_new():\n    return f1(0)\n")
    session.refresh(["pkg/m1.py", "pkg/m2.py", "pkg/new.py"])
    assert session.wait(30) and session.wait_kept(30)
    session.close()


def _checkout(ws: Path) -> None:
    write_tree(ws, FILES)
    git(ws, "init", "-q")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "tree", date="2026-01-01T00:00:00")


@pytest.mark.parametrize("checkout", [False, True], ids=["walked", "git"])
def test_the_session_after_one_with_changes_parses_nothing(tmp_path: Path, checkout: bool) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    _checkout(ws) if checkout else write_tree(ws, FILES)
    _session(ws, home)  # cold: every cache written
    during = _session(ws, home)
    assert during.graph.stats["parsers"] == {"cache": 12}
    _edit_during(during, ws)
    assert during.keeps == 1 and SymbolCache(home, ws).journal.path.is_file()

    after = _session(ws, home)
    stats = after.graph.stats
    # before the journal: the changed files parsed again ({"cache": 10, "tree-sitter": 2}) and
    # the whole cache written; the kinds classified again (a path came and went)
    assert stats["parsers"] == {"cache": 12} and stats["cacheHits"] == 12 and stats["cacheSaved"] is False
    assert after.graph.classified is None
    # the kept listing is the tree as the changes left it: nothing to apply; but git still lists
    # pkg/m2.py (deleted, not staged), which the watched deletion took out: listed again, as a
    # fresh build lists it
    assert after.verified_walk is not None and after.verified_walk[1] == (1 if checkout else 0)
    assert after.graph.files == _session(ws, tmp_path / "fresh-home").graph.files
    fresh = _session(ws, tmp_path / "other-home")
    assert _tables(after.graph.symbols) == _tables(fresh.graph.symbols)
    assert after.definitions("f2") == [] and after.usages("renamed") == ["pkg/m1.py"]
    assert after.definitions("brand_new") == ["pkg/new.py"]


@pytest.mark.parametrize("checkout", [False, True], ids=["walked", "git"])
def test_a_file_changed_again_after_its_entry_was_journalled_is_read_again(tmp_path: Path, checkout: bool) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    _checkout(ws) if checkout else write_tree(ws, FILES)
    _session(ws, home)
    _edit_during(_session(ws, home), ws)
    (ws / "pkg/m1.py").write_text("def f1(z):\n    return again(z)\n")  # not notified: a session away
    after = _session(ws, home)
    # ready from the kept listing (a walk's, or git's), then its listing after ready (a walk, or
    # git's with a stat a file) finds the file changed and applies it (and git's pkg/m2.py, above)
    assert after.graph.stats["parsers"] == {"cache": 12} and after.verified_walk[1] == (2 if checkout else 1)
    assert after.usages("again") == ["pkg/m1.py"] and after.usages("renamed") == []
    after.close()
    assert after.wait_kept(30)
    again = _session(ws, home)
    assert again.graph.stats["parsers"] == {"cache": 12} and again.graph.stats["cacheSaved"] is False
    assert again.usages("again") == ["pkg/m1.py"]


def test_a_journal_past_its_compaction_size_makes_the_next_session_write_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    _session(ws, home)
    _edit_during(_session(ws, home), ws)
    monkeypatch.setattr(symbolpass, "COMPACT_AT", 2)  # the journal holds 3 files
    after = _session(ws, home)
    assert after.graph.stats["parsers"] == {"cache": 12} and after.graph.stats["cacheSaved"] is True
    assert not after.cache.journal.path.exists()
    assert _session(ws, home).graph.stats["cacheSaved"] is False


def test_more_changes_than_a_journal_holds_are_not_journalled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    _session(ws, home)
    monkeypatch.setattr(journal, "MAX_FILES", 2)
    _edit_during(_session(ws, home), ws)
    assert not SymbolCache(home, ws).journal.path.exists()
    after = _session(ws, home)  # parses the changed files, as before the journal
    assert after.graph.stats["parsers"] == {"cache": 10, "tree-sitter": 2}
    assert after.usages("renamed") == ["pkg/m1.py"]


def _rewrite(path: Path, body: bytes, head: dict[str, Any] | None = None) -> None:
    """The journal at ``path`` with ``body`` (its digest made to match) and its head's fields."""
    old = json.loads(path.read_bytes().split(b"\n", 1)[0])
    new = {**old, "digest": hashlib.blake2b(body, digest_size=20).hexdigest(), **(head or {})}
    path.write_bytes(json.dumps(new).encode() + b"\n" + body)
    os.chmod(path, 0o600)


FORGED = {
    "torn": None,
    "not a mapping": b"[1, 2]",
    "unsafe path": b'{"../outside.py": null}',
    "absolute path": b'{"/etc/passwd.py": null}',
    "bool stat": b'{"pkg/m1.py": [true, 1, 1, false, [], {}]}',
    "negative size": b'{"pkg/m1.py": [1, -1, 1, false, [], {}]}',
    "count past 32 bits": b'{"pkg/m1.py": [1, 1, 1, false, [], {"x": 4294967296}]}',
    "zero count": b'{"pkg/m1.py": [1, 1, 1, false, [], {"x": 0}]}',
    "name with a NUL": b'{"pkg/m1.py": [1, 1, 1, false, ["a\\u0000b"], {}]}',
    "empty token": b'{"pkg/m1.py": [1, 1, 1, false, [], {"": 1}]}',
    "generated not a bool": b'{"pkg/m1.py": [1, 1, 1, 1, [], {}]}',
    "short entry": b'{"pkg/m1.py": [1, 1, 1]}',
    "nested": b"[" * 100_000,
    "non-finite": b'{"pkg/m1.py": [NaN, 1, 1, false, [], {}]}',
}


@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_forged_or_torn_journal_is_set_aside_and_the_files_parsed(tmp_path: Path, case: str) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    _session(ws, home)
    _edit_during(_session(ws, home), ws)
    path = SymbolCache(home, ws).journal.path
    if FORGED[case] is None:
        path.write_bytes(path.read_bytes()[:-7])  # torn: the digest no longer matches
    else:
        _rewrite(path, FORGED[case])
    after = _session(ws, home)
    assert list(home.glob("*.journal.json.corrupt-*"))
    assert after.graph.stats["parsers"] == {"cache": 10, "tree-sitter": 2}
    fresh = _session(ws, tmp_path / "other-home")
    assert _tables(after.graph.symbols) == _tables(fresh.graph.symbols)


@pytest.mark.parametrize("head", [{"base": "0" * 40}, {"root": "/elsewhere"}, {"version": 99}])
def test_a_journal_of_another_cache_or_workspace_is_not_taken(tmp_path: Path, head: dict[str, Any]) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    _session(ws, home)
    _edit_during(_session(ws, home), ws)
    path = SymbolCache(home, ws).journal.path
    _rewrite(path, path.read_bytes().split(b"\n", 1)[1], head)
    after = _session(ws, home)
    assert after.graph.stats["parsers"] == {"cache": 10, "tree-sitter": 2}
    assert after.usages("renamed") == ["pkg/m1.py"]


def test_a_journal_entry_for_a_file_as_it_is_now_is_taken_as_written(tmp_path: Path) -> None:
    """What a forged journal within the format can do: give a file names it does not have, only
    while the file keeps the stat written beside them (the same as a forged cache)."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    _session(ws, home)
    cache = SymbolCache(home, ws)
    base = cache.load(12).digest
    st = (ws / "pkg/m5.py").stat()
    SymbolJournal(cache.journal.path, cache.root).save(
        base, {"pkg/m5.py": ((st.st_mtime_ns, st.st_size, st.st_ino), ["planted"], {"planted": 1}, False)}
    )
    after = _session(ws, home)
    assert after.definitions("planted") == ["pkg/m5.py"] and after.definitions("f5") == []
    (ws / "pkg/m5.py").write_text("def f5(x):\n    return 5\n")  # the file changes: parsed
    assert _session(ws, home).definitions("planted") == []


def test_a_journal_entry_of_a_file_no_longer_listed_is_written_into_the_cache_once(tmp_path: Path) -> None:
    """A journal the pass cannot take whole (here an entry of a file deleted between sessions)
    sends that session off the mapping; it writes the cache (the journal emptied), so the next
    one maps it again (before, every later session took each entry one by one)."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    _checkout(ws)
    _session(ws, home)
    during = _session(ws, home)
    (ws / "pkg/new.py").write_text("def brand_new():\n    return 0\n")
    during.refresh(["pkg/new.py"])
    assert during.wait(30) and during.wait_kept(30)
    during.close()
    (ws / "pkg/new.py").unlink()  # journalled with an entry, now gone
    during.listing_cache.clear()  # no kept listing: git lists the tree as it is before ready
    after = _session(ws, home)
    assert after.graph.stats["cacheSaved"] is True and not after.cache.journal.path.exists()
    assert after.definitions("brand_new") == []
    again = _session(ws, home)
    assert again.graph.stats["parsers"] == {"cache": 12} and again.graph.stats["cacheSaved"] is False


def test_a_file_added_past_a_cut_pass_keeps_the_next_session_on_the_mapping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cut pass reads the newest files: one added pushes the oldest past the cut. The session
    after takes every file of its pass from the cache and the journal and leaves the pushed-out
    entry out of the index, as a fresh build does, without writing the cache (before, that one
    entry held beyond the pass sent it off the mapping and wrote the whole cache)."""
    from dsh_sidecar.workspace import graph as graph_module

    monkeypatch.setattr(graph_module, "MAX_SYMBOL_FILES", 10)
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(ws, FILES)
    for i in range(12):
        os.utime(ws / f"pkg/m{i}.py", (1_700_000_000 + 100 * i,) * 2)
    _session(ws, home)
    during = _session(ws, home)
    assert during.graph.stats["symbolsTruncated"] is True and during.definitions("f2") == ["pkg/m2.py"]
    (ws / "pkg/new.py").write_text("def brand_new():\n    return f1(0)\n")
    during.refresh(["pkg/new.py"])
    assert during.wait(30) and during.wait_kept(30)
    during.close()

    after = _session(ws, home)
    stats = after.graph.stats
    assert stats["cacheSaved"] is False and stats["parsers"] == {"cache": 10} and stats["symbolsTruncated"] is True
    fresh = _session(ws, tmp_path / "fresh-home")
    assert _tables(after.graph.symbols) == _tables(fresh.graph.symbols)
    assert after.definitions("f2") == [] and after.definitions("brand_new") == ["pkg/new.py"]
    again = _session(ws, home)
    assert again.graph.stats["cacheSaved"] is False and _tables(again.graph.symbols) == _tables(fresh.graph.symbols)
