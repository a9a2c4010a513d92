"""The symbol cache's size model and its structural pre-check (``workspace/cache.py``): a
real-sized repository's cache is written and read back; a forged cache whose head promises more
than the listing allows is refused before anything is decoded, and the index is built again."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from dsh_sidecar.workspace import GraphBuilder
from dsh_sidecar.workspace import cache as cache_mod
from dsh_sidecar.workspace.cache import (
    BASE_BYTES,
    CEILING_BYTES,
    PER_FILE_BYTES,
    SymbolCache,
    SymbolEntries,
    max_cache_bytes,
    strings_bound,
)
from support.trees import write_tree

#: The cap of the previous format, which real repositories of over ~20k files passed.
OLD_CAP = 64 * 1024 * 1024


def test_the_size_model_scales_with_the_files_up_to_its_ceiling() -> None:
    assert max_cache_bytes(0) == BASE_BYTES == 1024 * 1024
    assert max_cache_bytes(10_000) == BASE_BYTES + 10_000 * PER_FILE_BYTES == 1024 * 1024 + 80_000 * 1024
    assert max_cache_bytes(50_000) == CEILING_BYTES == 256 * 1024 * 1024
    assert max_cache_bytes(10**7) == CEILING_BYTES


def _identifier(rng: random.Random) -> str:
    parts = rng.choice([1, 2, 2, 3])
    words = ["get", "set", "user", "request", "handler", "config", "value", "index", "parse", "token", "buffer"]
    name = "_".join(rng.choice(words) for _ in range(parts))
    return name + str(rng.randrange(10_000)) if rng.random() < 0.5 else name.title().replace("_", "")


def realistic_entries(files: int, seed: int = 7) -> SymbolEntries:
    """Entries shaped like a real repository's (measured 2.7–3.6 KB a file in the previous JSON
    format): 150 distinct identifier tokens a file (60 of the 300 every file uses, 90 of a
    shared vocabulary of 60k), one in seven used more than once, 20 definitions, paths a few
    folders deep, one file in 500 generated."""
    rng = random.Random(seed)
    vocab = list(dict.fromkeys(_identifier(rng) for _ in range(62_000)))
    common, rest = vocab[:300], vocab[300:]
    entries = []
    for i in range(files):
        at, far = (i * 7) % 240, (i * 131) % (len(rest) - 90)
        names = common[at : at + 60] + rest[far : far + 90]
        tokens = {t: 1 + (k % 7 == 0) * ((i + k) % 39) for k, t in enumerate(names)}
        path = f"src/component_{i % 97:02d}/module_{i // 97:04d}/file_{i}.py"
        stat = (1_700_000_000_000_000_000 + i, 4000 + i, 10_000 + i)
        entries.append((path, (stat, names[60:80], tokens, i % 500 == 0)))
    return SymbolEntries.of(entries)


def test_a_real_sized_repository_cache_is_written_and_read_back(tmp_path: Path) -> None:
    """24k files shaped like a real repository's: past the previous format's 64 MiB (which left
    such repositories without a warm start), within the size model, and read back whole."""
    files = 24_000
    entries = realistic_entries(files)
    # what the previous format (JSON columns) would have taken: each token as a quoted string
    # and its count, each name quoted, each path quoted, five integers a file
    old_bytes = sum(len(entries.vocab[t]) + 3 + 3 for t in entries.tokens)
    old_bytes += sum(len(d) + 3 for d in entries.defs) + sum(len(p) + 3 for p in entries.paths) + files * 40
    assert old_bytes > OLD_CAP
    cache = SymbolCache(tmp_path / "cache", tmp_path / "ws")
    assert cache.save(entries)
    size = cache.path.stat().st_size
    assert size <= max_cache_bytes(files) and size > OLD_CAP  # ~2.8 KB a file: both layouts of the postings
    back = cache.load(files)
    assert back.paths == entries.paths and back.vocab == entries.vocab and back.defs == entries.defs
    for column in ("mtime", "size", "ino", "generated", "ndefs", "ntokens", "tokens", "counts"):
        assert list(getattr(back, column)) == list(getattr(entries, column)), column
    assert back.entry(123) == entries.entry(123) and back.entry(files - 1) == entries.entry(files - 1)
    assert cache.load(files // 4).paths == []  # read for a listing far smaller: refused


def test_a_small_repository_with_a_large_vocabulary_starts_warm(tmp_path: Path) -> None:
    """Two files using 1,400 distinct names between them (a ``six``-like module: 680 strings a
    file), the shape of half the real checkouts' caches, which a per-file bound alone refused
    as forged: each session set the cache aside and indexed from scratch."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    write_tree(
        ws,
        {
            "one.py": "".join(f"def name_{i}():\n    return other_{i}\n" for i in range(350)),
            "two.py": "".join(f"def word_{i}():\n    return thing_{i}\n" for i in range(350)),
        },
    )
    first = GraphBuilder(ws, cache_dir=home)
    first.start()
    assert first.wait(60) and first.graph.stats["cacheSaved"] is True
    again = GraphBuilder(ws, cache_dir=home)
    again.start()
    assert again.wait(60) and again.graph.stats["cacheHits"] == 2
    assert again.definitions("word_349") == ["two.py"]
    assert list(home.glob("*.corrupt-*")) == []


def test_a_cache_past_the_strings_bound_is_not_written(tmp_path: Path) -> None:
    """What the reader would refuse is never written (no write, set-aside and rebuild each session)."""
    entries = SymbolEntries.of([("a.py", ((1, 1, 1), ["f"], {"f": 1}, False))])
    entries.vocab += [f"t{i}" for i in range(strings_bound(1))]
    cache = SymbolCache(tmp_path / "cache", tmp_path / "ws")
    assert cache.save(entries) is False and not cache.path.exists()


def _forged_many_files(root: Path) -> bytes:
    """100k files (a consistent file, digest and all) for a workspace of three."""
    entries = SymbolEntries.of((f"f{i}.py", ((i, 1, i), [], {}, False)) for i in range(100_000))
    return entries.encode(str(root.resolve()))


def _forged_many_strings(root: Path) -> bytes:
    """One file and a vocabulary of 200k strings no file uses."""
    entries = SymbolEntries.of([("a.py", ((1, 1, 1), ["f"], {"f": 1}, False))])
    entries.vocab += [f"t{i}" for i in range(200_000)]
    return entries.encode(str(root.resolve()))


def _forged_too_big(root: Path) -> bytes:
    """A head line and more bytes than the size model allows the listing."""
    return _forged_many_files(root)[:200] + b"\0" * max_cache_bytes(2 * 3 + 1024)


@pytest.mark.parametrize("forge", [_forged_many_files, _forged_many_strings, _forged_too_big])
def test_a_forged_cache_is_refused_before_decoding_and_the_index_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forge
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (ws / name).write_text(f"def {name[0]}_fn():\n    pass\n")
    decoded: list[int] = []
    real_decode = cache_mod._decode
    monkeypatch.setattr(cache_mod, "_decode", lambda *a: decoded.append(1) or real_decode(*a))
    b = GraphBuilder(ws, cache_dir=home)
    home.mkdir()
    b.cache.path.write_bytes(forge(ws))
    b.start()
    assert b.wait(60)
    assert decoded == []  # refused on its head and size alone
    stats = b.graph.stats
    assert stats["cacheHits"] == 0 and stats["parsers"] == {"tree-sitter": 3} and stats["cacheSaved"] is True
    assert b.definitions("b_fn") == ["b.py"]
    assert list(home.glob("*.json.corrupt-*"))
    again = GraphBuilder(ws, cache_dir=home)  # the rewritten cache is the real one
    again.start()
    assert again.wait(60) and again.graph.stats["cacheHits"] == 3 and decoded == [1]


def test_a_name_the_format_cannot_hold_is_left_out(tmp_path: Path) -> None:
    cache = SymbolCache(tmp_path / "cache", tmp_path / "ws")
    assert cache.save(SymbolEntries.of([("a.py", ((1, 2, 3), ["ok", "bad\0name"], {"ok": 2}, False))]))
    assert cache.load(1).entry(0) == ((1, 2, 3), ["ok"], {"ok": 2}, False)


def _built(ws: Path, home: Path) -> GraphBuilder:
    b = GraphBuilder(ws, cache_dir=home)
    b.start()
    assert b.wait(60)
    return b


def _tables(index) -> tuple:
    files = sorted(index._file_defs)
    tokens = {p: sorted(index.tokens_of(p)) for p in files}
    return dict(index.refs), index.defs, index._file_defs, index.lengths, index.generated, tokens


def test_changes_after_a_warm_start_give_the_index_a_fresh_parse_gives(tmp_path: Path) -> None:
    """A later session's index keeps its usages in the cache's columns until asked; files
    changed, removed, added and changed again on top of it leave the same tables as parsing the
    final tree from scratch, whichever tables were asked for before the changes."""
    ws = tmp_path / "ws"
    files = {
        f"pkg/m{i}.py": f"import shared\ndef f{i}(x):\n    return shared.g{i % 4}(x) + f{i - 1}(x)\n" for i in range(30)
    }
    files["pkg/shared.py"] = "def g0(x):\n    return x\ng1 = g2 = g3 = g0\n"
    files["gen.py"] = "# @generated by a tool\nhidden = 1\n"
    write_tree(ws, files)
    _built(ws, tmp_path / "home")
    warm = _built(ws, tmp_path / "home")
    index = warm.graph.symbols
    assert type(index.refs).__name__ == "CachedPostings" and warm.graph.stats["cacheHits"] == 32
    assert index.refs.get("f3") == {"pkg/m3.py": 1, "pkg/m4.py": 1}  # asked before the changes
    assert len(index.refs._live) == 1  # only that table was made
    (ws / "pkg/m3.py").write_text("def f3(y):\n    return y\n")  # changed: f2 and shared no more
    (ws / "pkg/m29.py").unlink()  # removed: the one file with f29
    (ws / "pkg/new.py").write_text("import shared\ndef fresh():\n    return shared.g1(f3(1))\n")  # added
    warm.graph.apply(["pkg/m3.py", "pkg/m29.py", "pkg/new.py"])
    (ws / "pkg/m3.py").write_text("def f3(y):\n    return shared.g0(y)\n")  # changed again
    warm.graph.apply(["pkg/m3.py"])
    fresh = _built(ws, tmp_path / "other-home")
    assert fresh.graph.stats["cacheHits"] == 0
    assert _tables(index) == _tables(fresh.graph.symbols)
    assert warm.usages("g0") == fresh.usages("g0") and warm.definitions("fresh") == ["pkg/new.py"]
    assert "f29" not in index.refs and "fresh" in index.refs and len(index.refs) == len(fresh.graph.symbols.refs)


def test_a_forged_position_past_the_columns_gives_empty_tables(tmp_path: Path) -> None:
    """Positions are not checked one by one when a cache is read (that would cost a pass over
    every posting of a warm start): one past the vocabulary or the files reads as nothing."""
    entries = SymbolEntries.of([("a.py", ((1, 2, 3), ["f"], {"f": 1, "x": 2}, False))])
    entries.encode("/")  # the inverted columns
    entries.tokens, entries.pfiles = [0, 5], [0, 7]
    cache = SymbolCache(tmp_path / "cache", tmp_path / "ws")
    assert cache.save(entries)
    back = cache.load(1)
    assert back.entry(0) == ((1, 2, 3), ["f"], {}, False)
    index = back.index()
    assert index.defs == {"f": {"a.py"}} and index.refs.get("f") == {"a.py": 1} and index.refs.get("x") is None
    assert index.tokens_of("a.py") == ()
    index.remove("a.py")
    assert "a.py" not in index._file_defs and index.defs == {}


def test_a_file_too_large_to_index_keeps_a_later_session_on_the_cache_columns(tmp_path: Path) -> None:
    """A code file over the size the pass reads is neither read nor cached: a later session on
    the unchanged tree still maps the whole cache (its usages in the columns), not one entry at
    a time."""
    from dsh_sidecar.workspace.symbols import MAX_FILE_BYTES

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("def alpha():\n    pass\n")
    (ws / "b.py").write_text("alpha()\n")
    (ws / "bundle.js").write_text("var x = 1;\n" * (MAX_FILE_BYTES // 10))
    cold = _built(ws, tmp_path / "home")
    assert cold.graph.stats["symbolFiles"] == 2 and cold.graph.stats["cacheSaved"] is True
    warm = _built(ws, tmp_path / "home")
    assert type(warm.graph.symbols.refs).__name__ == "CachedPostings"
    assert warm.graph.stats["cacheHits"] == 2 and warm.graph.stats["parsers"] == {"cache": 2}
    assert warm.usages("alpha") == ["b.py"] and not warm.graph.symbols.indexed("bundle.js")


def test_a_session_after_edits_maps_the_cache_and_parses_only_what_changed(tmp_path: Path) -> None:
    """Files changed, removed, added, grown past the size the pass reads or made generated
    between two sessions: the later one maps the cache, parses the changed files only, and ends
    with the index a fresh parse gives; the cache it writes (after publishing the index) makes
    the next session's a plain mapping."""
    from dsh_sidecar.workspace.symbols import MAX_FILE_BYTES

    ws = tmp_path / "ws"
    files = {f"pkg/m{i}.py": f"def f{i}(x):\n    return f{i - 1}(x) + shared_{i % 3}\n" for i in range(20)}
    write_tree(ws, files)
    first = _built(ws, tmp_path / "home")
    (ws / "pkg/m1.py").write_text("def f1(y):\n    return renamed(y)\n")
    (ws / "pkg/m2.py").unlink()
    (ws / "pkg/new.py").write_text("def brand_new():\n    return f1(0)\n")
    (ws / "pkg/m3.py").write_text("x = 1\n" * (MAX_FILE_BYTES // 6 + 1))
    (ws / "pkg/m4.py").write_text("# @generated by a tool\ndef f4(x):\n    pass\n")
    first.listing_cache.clear()  # walked before ready: no listing kept (listingcache.py; test_listing_cache.py)
    later = _built(ws, tmp_path / "home")
    stats = later.graph.stats
    assert stats["cacheHits"] == 16 and stats["parsers"] == {"cache": 16, "tree-sitter": 2}
    assert stats["cacheSaved"] is True
    assert type(later.graph.symbols.refs).__name__ == "CachedPostings"
    fresh = _built(ws, tmp_path / "other-home")
    assert _tables(later.graph.symbols) == _tables(fresh.graph.symbols)
    assert later.definitions("f2") == [] and later.usages("renamed") == ["pkg/m1.py"]
    assert later.graph.node("pkg/m4.py").kind == "generated" and not later.graph.symbols.indexed("pkg/m3.py")
    third = _built(ws, tmp_path / "home")
    assert third.graph.stats["cacheHits"] == 19 and third.graph.stats["cacheSaved"] is False
    assert _tables(third.graph.symbols) == _tables(fresh.graph.symbols)


def test_the_cache_write_after_a_build_is_not_part_of_the_build(tmp_path: Path, monkeypatch) -> None:
    """The symbol cache is written after the index is published, and that write (O(postings):
    seconds on a large tree that changed) does not hold readiness back: while it runs the
    builder is not building and answers from the whole index; ``wait`` still waits for it, and
    a build asked for meanwhile is building again."""
    import threading

    ws = tmp_path / "ws"
    write_tree(ws, {"a.py": "def alpha():\n    pass\n", "b.py": "alpha()\n"})
    entered, release = threading.Event(), threading.Event()
    real_save = SymbolCache.save

    def held_save(self: SymbolCache, entries: SymbolEntries) -> bool:
        entered.set()
        assert release.wait(30)
        return real_save(self, entries)

    monkeypatch.setattr(SymbolCache, "save", held_save)
    b = GraphBuilder(ws, cache_dir=tmp_path / "home")
    b.start()
    assert entered.wait(30)
    assert b.building is False and b.ready and b.definitions("alpha") == ["a.py"]
    assert b.wait(0.05) is False  # the write is still on its way
    b.start()  # a rebuild asked for while the write runs
    assert b.building is True
    release.set()
    assert b.wait(30) and b.building is False
    assert b.graph.stats["cacheHits"] == 2 and b.graph.stats["cacheSaved"] is False  # the first build wrote it


def test_a_tracked_file_deleted_from_a_checkout_keeps_later_sessions_on_the_mapping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git still lists a tracked file deleted from the work tree (no stat: never read nor
    cached); a later session on that tree maps the cache whole, not one entry at a time (it
    took each of them one by one before)."""
    from dsh_sidecar.workspace import symbolpass
    from support.gitrepo import git

    ws = tmp_path / "ws"
    write_tree(ws, {f"pkg/m{i}.py": f"def f{i}():\n    pass\n" for i in range(5)})
    git(ws, "init", "-q")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "tree", date="2026-01-01T00:00:00")
    (ws / "pkg/m2.py").unlink()
    _built(ws, tmp_path / "home")
    taken: list[str] = []
    real = symbolpass._take
    monkeypatch.setattr(symbolpass, "_take", lambda root, rel, *a: taken.append(rel) or real(root, rel, *a))
    later = _built(ws, tmp_path / "home")
    assert "pkg/m2.py" in later.graph.files and taken == []
    assert later.graph.stats["cacheHits"] == 4 and later.definitions("f2") == []
