"""The suggester's listing tables kept between sessions (``suggester/tablecache.py``): a later
preparation of the same listing takes them back and gets what one pass over it makes; any change
of the listing, its kinds or the rules makes them again; a corrupt, forged, truncated, oversized
or symlinked file is refused (set aside when it is ours to judge) and the tables made from the
listing, never an error; a file past the size model is not written."""

from __future__ import annotations

import json
import os
import sys
from array import array
from pathlib import Path

import pytest
from dsh_sidecar.state import columns, files
from dsh_sidecar.suggester import prepared as prep
from dsh_sidecar.suggester import tablecache
from dsh_sidecar.suggester.tablecache import ListingTables, TablesCache, listing_digest
from dsh_sidecar.workspace.kinds import classify

FILES = sorted(
    [
        "README.md",
        "docs/conf.py",
        "docs/guide/index.md",
        "docs/guide/install.md",
        "docs/index.rst",
        "pyproject.toml",
        "src/pkg/__init__.py",
        "src/pkg/a.py",
        "src/pkg/b/__init__.py",
        "src/pkg/b/a.py",
        "src/pkg-extra.py",
        "tests/test_a.py",
        "uv.lock",
        "CHANGES",
    ]
)


def kinds_of(files: list[str]) -> dict[str, str]:
    return {f: classify(f) for f in files}


def tables(root: Path, files: list[str], kinds: dict[str, str], cache: TablesCache | None) -> dict:
    """Everything the preparation reads of the tables, in order (the folder table's key order is
    the order a lookup over folders answers in)."""
    index, roots, fact_of = prep.tables(root, list(files), kinds, None, cache)
    if cache is not None:
        cache.flush()  # as the suggester does once the preparation is in
    return {
        "by_name": list(index.by_name.items()),
        "by_dir": list(index.by_dir.items()),
        "names": index.names,
        "facts": list(index.facts.items()),
        "roots": roots,
        "fact_of": fact_of,
        "sorted": index._sorted,
    }


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def cache(tmp_path: Path, root: Path) -> TablesCache:
    return TablesCache(tmp_path / "cache" / "workspace", root)


def test_a_later_preparation_of_the_same_listing_takes_the_tables_back(
    root: Path, cache: TablesCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    kinds = kinds_of(FILES)
    fresh = tables(root, FILES, kinds, None)
    assert tables(root, FILES, kinds, cache) == fresh and cache.last == "miss"
    assert cache.path.name.endswith(".tables.bin") and cache.path.stat().st_mode & 0o777 == 0o600
    monkeypatch.setattr(prep, "listing_tables", lambda *a: pytest.fail("made again from an unchanged listing"))
    again = TablesCache(cache.path.parent, root)  # a later session
    assert tables(root, FILES, kinds, again) == fresh and again.last == "hit"
    assert fresh["roots"] == frozenset({"docs"}) and ("docs-home", ["docs/index.rst"]) in fresh["facts"]


@pytest.mark.parametrize(
    "files",
    [["setup.py", "src/a.py"], ["README.md"], ["a"], ["docs/guide/page.md", "docs/img.png"], []],
    ids=["no docs", "a readme only", "one file", "docs pages, no home", "empty"],
)
def test_a_listing_with_empty_groups_is_taken_back_too(root: Path, cache: TablesCache, files: list[str]) -> None:
    """Most repositories have no docs pages: their ``docs-page``/``docs-home`` groups are empty
    lists, which must come back as written, not be refused as forged (set aside every start)."""
    kinds = kinds_of(files)
    fresh = tables(root, files, kinds, None)
    assert tables(root, files, kinds, cache) == fresh and cache.last == "miss"
    again = TablesCache(cache.path.parent, root)
    assert tables(root, files, kinds, again) == fresh and again.last == "hit"
    assert not list(cache.path.parent.glob("*.corrupt-*"))


CHANGES = {
    "a file added": lambda f, k: (f + ["src/pkg/c.py"], {**k, "src/pkg/c.py": "source"}),
    "a file removed": lambda f, k: ([p for p in f if p != "src/pkg/a.py"], k),
    "a file renamed": lambda f, k: (
        sorted(p.replace("b/a.py", "b/z.py") for p in f),
        kinds_of(sorted(p.replace("b/a.py", "b/z.py") for p in f)),
    ),
    "a kind changed": lambda f, k: (f, {**k, "src/pkg/a.py": "generated"}),
    "a kind missing": lambda f, k: (f, {p: v for p, v in k.items() if p != "CHANGES"}),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_any_change_of_the_listing_or_its_kinds_makes_them_again(root: Path, cache: TablesCache, change: str) -> None:
    tables(root, FILES, kinds_of(FILES), cache)
    files, kinds = CHANGES[change](list(FILES), kinds_of(FILES))
    assert listing_digest(files, kinds) != listing_digest(FILES, kinds_of(FILES))
    fresh = tables(root, files, kinds, None)
    assert tables(root, files, kinds, cache) == fresh and cache.last == "miss"  # made and written anew
    assert not list(cache.path.parent.glob("*.corrupt-*"))  # another listing is no corruption
    assert tables(root, files, kinds, cache) == fresh and cache.last == "hit"


def test_other_rules_make_them_again(root: Path, cache: TablesCache, monkeypatch: pytest.MonkeyPatch) -> None:
    kinds = kinds_of(FILES)
    tables(root, FILES, kinds, cache)
    monkeypatch.setattr(tablecache, "rules_digest", lambda: "other rules")
    assert tables(root, FILES, kinds, cache) == tables(root, FILES, kinds, None) and cache.last == "miss"


def test_the_rules_digest_is_of_the_code_that_makes_the_tables() -> None:
    import hashlib

    from dsh_sidecar.workspace import facts, manifests

    h = hashlib.blake2b(digest_size=20)
    h.update(Path(prep.__file__).read_bytes())
    h.update(Path(facts.__file__).read_bytes())
    # the name-level facts read manifests.LINT_NAMES and VERSION_TOOL_NAMES: a new lint
    # configuration's name there must not be answered from tables the old names made
    h.update(Path(manifests.__file__).read_bytes())
    assert tablecache.rules_digest() == h.hexdigest()


# ---------------------------------------------------------------------------- forged files


def _good(root: Path) -> tuple[dict, list[bytes], list[list[str]]]:
    """The head, integer columns and strings of the real file of :data:`FILES`."""
    raw = tablecache.encode(str(root.resolve()), FILES, listing_digest(FILES, kinds_of(FILES)), _made())
    head, end = columns.head_of(raw)
    body = columns.body_of(raw, end)
    counts = [len(FILES), head["names"], len(FILES), head["dirs"], head["members"], head["groups"]]
    ints, texts = columns.decode(
        body, [("I", n) for n in counts], [head["names"], head["dirs"], head["groups"], head["roots"]], head["strings"]
    )
    return head, [bytes(c) for c in ints], texts


def _made() -> ListingTables:
    return prep.listing_tables(list(FILES), kinds_of(FILES))


def _forge(root: Path, *, head: dict | None = None, ints: dict[int, list[int]] | None = None, strings=None) -> bytes:
    """A file whose head, columns (by position) or strings say what is given, with the right
    digest: a forged file, not a damaged one."""
    good_head, good_ints, good_strings = _good(root)
    body_ints = [array("I", ints[k]).tobytes() if ints and k in ints else c for k, c in enumerate(good_ints)]
    fields = {k: v for k, v in good_head.items() if k not in ("byteorder", "digest", "strings")}
    raw = columns.encode(fields, body_ints, strings if strings is not None else good_strings)
    if head:
        line, body = raw.split(b"\n", 1)
        text = json.dumps({**json.loads(line), **head}, separators=(",", ":")).encode()
        raw = text + b" " * (-(len(text) + 1) % 8) + b"\n" + body
    return raw


def _flip(raw: bytes) -> bytes:
    at = len(raw) - 20
    return raw[:at] + bytes([raw[at] ^ 1]) + raw[at + 1 :]


N = len(FILES)

#: Files ours to judge, each broken one way: refused and set aside.
BROKEN = {
    "truncated": lambda r: _forge(r)[:-9],
    "a byte flipped": lambda r: _flip(_forge(r)),
    "garbage": lambda r: bytes(range(256)) * 16,
    "empty": lambda r: b"",
    "head a list": lambda r: b"[1, 2]      \n",
    "head past 4 KiB": lambda r: b" " * 5000 + b"\n",
    "head nested deeply": lambda r: b"[" * 4000 + b"\n",
    "head with NaN": lambda r: _forge(r, head={"files": float("nan")}),
    "another workspace": lambda r: _forge(r, head={"root": "/elsewhere"}),
    "a newer format": lambda r: _forge(r, head={"version": tablecache.VERSION + 1}),
    "negative count": lambda r: _forge(r, head={"names": -1}),
    "count a bool": lambda r: _forge(r, head={"roots": True}),
    "count a float": lambda r: _forge(r, head={"dirs": 3.0}),
    "files not the listing's": lambda r: _forge(r, head={"files": N + 1}),
    "more names than files": lambda r: _forge(r, head={"names": N + 1}),
    "too many groups": lambda r: _forge(r, head={"groups": tablecache.MAX_GROUPS + 1}),
    "too many members": lambda r: _forge(r, head={"members": tablecache.MEMBERS_PER_FILE * N + 1}),
    "more roots than folders": lambda r: _forge(r, head={"roots": 10_000}),
    "sections past the body": lambda r: _forge(r, head={"members": 1}),
    "a position past the listing": lambda r: _forge(r, ints={0: [N + 5] + list(range(1, N))}),
    "group sizes not adding up": lambda r: _forge(r, ints={3: [N] + [0] * (_good(r)[0]["dirs"] - 1)}),
    "an empty group": lambda r: _forge(r, ints={1: [0, 2] + [1] * (_good(r)[0]["names"] - 2)}),
    "a name twice": lambda r: _forge(r, strings=[["README.md"] * _good(r)[0]["names"], *_good(r)[2][1:]]),
    "fewer strings than counted": lambda r: _forge(r, strings=[_good(r)[2][0][:-1] + ["a\0b"], *_good(r)[2][1:]]),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_or_forged_file_is_set_aside_and_the_tables_made(root: Path, cache: TablesCache, name: str) -> None:
    kinds = kinds_of(FILES)
    fresh = tables(root, FILES, kinds, None)
    cache.path.parent.mkdir(parents=True)
    cache.path.write_bytes(_forge(root))
    assert tables(root, FILES, kinds, cache) == fresh and cache.last == "hit"  # the well-formed one, for contrast
    cache.path.write_bytes(BROKEN[name](root))
    assert tables(root, FILES, kinds, cache) == fresh and cache.last == "miss"
    assert list(cache.path.parent.glob(cache.path.name + ".corrupt-*")), name
    assert "starting cold" in (cache.file.warnings or [""])[0]
    assert tables(root, FILES, kinds, TablesCache(cache.path.parent, root)) == fresh  # the one written anew
    assert TablesCache(cache.path.parent, root).load(FILES, kinds)[0] is not None


@pytest.mark.parametrize("name", ["an older format", "another byte order"])
def test_an_older_format_or_another_byte_order_is_made_again_not_set_aside(
    root: Path, cache: TablesCache, name: str
) -> None:
    kinds = kinds_of(FILES)
    cache.path.parent.mkdir(parents=True)
    other = "big" if sys.byteorder == "little" else "little"
    head = {"version": tablecache.VERSION - 1} if name == "an older format" else {"byteorder": other}
    cache.path.write_bytes(_forge(root, head=head))
    assert tables(root, FILES, kinds, cache) == tables(root, FILES, kinds, None) and cache.last == "miss"
    assert not list(cache.path.parent.glob("*.corrupt-*"))


def test_a_symlink_a_fifo_a_folder_or_an_oversized_file_is_never_read(
    tmp_path: Path, root: Path, cache: TablesCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    kinds = kinds_of(FILES)
    fresh = tables(root, FILES, kinds, None)
    cache.path.parent.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.bin"
    elsewhere.write_bytes(_forge(root))  # a good file, outside the cache folder
    parsed: list[int] = []
    real = tablecache._reader
    monkeypatch.setattr(tablecache, "_reader", lambda *a: lambda raw: parsed.append(1) or real(*a)(raw))
    for make in (
        lambda p: p.symlink_to(elsewhere),
        lambda p: p.symlink_to("/dev/zero"),
        lambda p: os.mkfifo(p),
        lambda p: p.mkdir(),
        lambda p: p.write_bytes(_forge(root) + b"\0" * tablecache.max_bytes(N)),  # past the size model
    ):
        make(cache.path)
        assert tables(root, FILES, kinds, cache) == fresh and cache.last in ("miss", "unwritten")
        assert parsed == []  # refused before a byte was parsed
        for p in cache.path.parent.iterdir():
            if p.is_dir() and not p.is_symlink():
                p.rmdir()
            else:
                p.unlink()
    assert elsewhere.read_bytes() == _forge(root)  # what a symlink named was never written through


def test_a_file_past_the_size_model_is_not_written(
    root: Path, cache: TablesCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tablecache, "BASE_BYTES", 64)
    monkeypatch.setattr(tablecache, "PER_FILE_BYTES", 8)
    kinds = kinds_of(FILES)
    assert tables(root, FILES, kinds, cache) == tables(root, FILES, kinds, None)
    assert cache.last == "unwritten" and not cache.path.exists()
    assert tablecache.max_bytes(N) == 64 + 8 * N


def test_an_unwritable_cache_folder_is_only_a_slower_preparation(tmp_path: Path, root: Path) -> None:
    (tmp_path / "cache").write_text("a file where the folder goes")
    cache = TablesCache(tmp_path / "cache" / "workspace", root)
    kinds = kinds_of(FILES)
    assert tables(root, FILES, kinds, cache) == tables(root, FILES, kinds, None) and cache.last == "unwritten"


def test_the_size_model() -> None:
    assert tablecache.max_bytes(0) == tablecache.BASE_BYTES == 1024 * 1024
    assert tablecache.max_bytes(100_000) == 1024 * 1024 + 256 * 100_000


def test_the_suggester_writes_a_miss_once_its_targets_are_in_and_a_later_session_takes_it_back(
    tmp_path: Path, dsh_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh_sidecar.suggester import Suggester, parse_suggester_config
    from dsh_sidecar.workspace import WorkspaceGraph
    from support.suggester import copy_workspace

    ws = copy_workspace(tmp_path, "shopcart")
    graph = WorkspaceGraph.build(ws)
    folder = tmp_path / "cache" / "workspace"
    sessions: list[Suggester] = []
    in_at_write: list[bool] = []
    real_write = files.atomic_write_bytes
    cache_path = TablesCache(folder, ws).path

    def write(path: Path, data: bytes, mode: int = 0o600) -> None:
        if path == cache_path:  # the tables cache's write (the knowledge file is written too)
            in_at_write.append(sessions[-1].prepared is not None)
        real_write(path, data, mode)

    def session() -> Suggester:
        s = Suggester(
            ws,
            parse_suggester_config({"enabled": True}),
            dsh_home,
            workspace=lambda: graph,
            background=True,
            tables_cache=TablesCache(folder, ws),
        )
        sessions.append(s)
        s.start()
        assert s.prepare(graph)
        return s

    monkeypatch.setattr(files, "atomic_write_bytes", write)
    one = session()
    assert one.status()["tablesCache"] == "miss" and TablesCache(folder, ws).path.exists()
    assert in_at_write == [True]  # the file written once the targets were swapped in, not before
    monkeypatch.setattr(prep, "listing_tables", lambda *a: pytest.fail("made again from an unchanged listing"))
    two = session()
    assert two.status()["tablesCache"] == "hit" and in_at_write == [True]  # nothing written again
    assert two.prepared is not None and one.prepared is not None
    assert list(two.prepared.index.by_dir.items()) == list(one.prepared.index.by_dir.items())
    assert {k: [t.path for t in v] for k, v in two.prepared.targets.items()} == {
        k: [t.path for t in v] for k, v in one.prepared.targets.items()
    }
