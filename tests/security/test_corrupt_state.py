"""Class 6: corrupt state is a cold start, never a failure (docs/SECURITY.md).

Every state file (bandit posteriors, suggester knowledge, workspace symbol cache) is planted
with each corruption; reading it must warn, start cold and set the file aside, and the
spawned sidecar must still answer ``initialize``, ``dsh/dismiss`` and ``dsh/status``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from dsh_sidecar.bandit.context import CLASSES
from dsh_sidecar.bandit.policy import ContextualPolicy
from dsh_sidecar.bandit.store import PosteriorStore
from dsh_sidecar.state.columns import digest as _digest
from dsh_sidecar.state.files import MAX_DEPTH, StateFile, check_document
from dsh_sidecar.suggester.knowledge import Knowledge
from dsh_sidecar.workspace.cache import CACHE_VERSION, SymbolCache, SymbolEntries
from dsh_sidecar.workspace.kindcache import KindCache
from support.rawrpc import RawServer

CORRUPTIONS: dict[str, bytes] = {
    "deep-list": b"[" * 50_000,
    "deep-list-closed": b"[" * 5_000 + b"]" * 5_000,
    "deep-dict": b'{"a":' * 3_000 + b"1" + b"}" * 3_000,
    "huge-int": b'{"version": 1, "rows": {"x": ' + b"9" * 400 + b"}}",
    "huge-int-array": b"[" + b"1" * 4_000 + b"]",
    "inf-literal": b'{"version": 1e400}',
    "nan": b'{"version": NaN}',
    "infinity": b'{"version": -Infinity}',
    "truncated": b'{"version": 1, "rows": {',
    "not-json": b"\x00\x01garbage\xff",
    "bad-utf8": b'{"version": "\xff\xfe"}',
    "empty": b"",
    "wrong-type": b'"a string"',
    "array": b"[1, 2, 3]",
    "null": b"null",
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_statefile_reads_every_corruption_as_cold_start_and_sets_it_aside(tmp_path, name):
    path = tmp_path / "s.json"
    path.write_bytes(CORRUPTIONS[name])

    def validate(doc):
        if not isinstance(doc, dict) or doc.get("version") != 1:
            raise ValueError("not ours")
        return doc

    f = StateFile(path, validate=validate)
    assert f.read() is None
    assert not path.exists()
    assert len(list(tmp_path.glob("s.json.corrupt-*"))) == 1
    assert f.warnings and "starting cold" in f.warnings[0]
    assert f.update(lambda cur: {"version": 1, "n": (cur or {}).get("n", 0) + 1}) == {"version": 1, "n": 1}
    assert f.read() == {"version": 1, "n": 1}


def test_a_validator_raising_anything_is_a_cold_start(tmp_path):
    path = tmp_path / "s.json"
    for exc in (RecursionError, OverflowError, AttributeError, IndexError, ZeroDivisionError):
        path.write_text("{}")

        def validate(doc, exc=exc):
            raise exc("boom")

        assert StateFile(path, validate=validate).read() is None
        assert not path.exists()


def test_bounds_of_check_document():
    ok = {"a": [1, 2.5, "x", None, True, {"b": 2**63 - 1}]}
    assert check_document(ok) is ok
    nested: list = []
    cur = nested
    for _ in range(MAX_DEPTH + 1):
        cur.append([])
        cur = cur[0]
    for bad in ({"a": 2**63}, {"a": float("inf")}, {"a": float("nan")}, nested):
        with pytest.raises(ValueError):
            check_document(bad)


def test_set_aside_copies_are_bounded(tmp_path):
    path = tmp_path / "s.json"
    for i in range(6):
        path.write_bytes(b"[")
        aside = tmp_path / f"s.json.corrupt-{1000 + i}"
        aside.write_bytes(b"old")  # earlier copies
        StateFile(path).read()
    assert len(list(tmp_path.glob("s.json.corrupt-*"))) <= 3


@pytest.mark.parametrize("name", ["deep-list", "huge-int", "inf-literal", "truncated", "deep-dict"])
def test_posterior_store_loads_the_prior(tmp_path, name):
    f = tmp_path / "bandit" / "posteriors.json"
    f.parent.mkdir()
    f.write_bytes(CORRUPTIONS[name])
    store = PosteriorStore(tmp_path)
    policy = ContextualPolicy(CLASSES)
    before = json.dumps(policy.evidence, sort_keys=True, default=str)
    store.load(policy)
    assert json.dumps(policy.evidence, sort_keys=True, default=str) == before
    assert store.warnings and not f.exists()


def _knowledge_doc(exp: str) -> bytes:
    return (
        '{"schema":"dsh-search-suggester/knowledge","version":1,"workspaces":{"/w":'
        '{"rows":{},"dismissals":{"Doc":{"*":' + exp + "}}}}}"
    ).encode()


@pytest.mark.parametrize(
    "raw",
    [CORRUPTIONS["deep-list"], CORRUPTIONS["huge-int"], _knowledge_doc("9" * 400), _knowledge_doc("1e400")],
    ids=["deep", "huge-int", "huge-expiry", "inf-expiry"],
)
def test_knowledge_is_cold_and_dismiss_still_works(tmp_path, raw):
    path = tmp_path / "knowledge.json"
    path.write_bytes(raw)
    k = Knowledge(path, "/w", clock=lambda: 100.0)
    assert k.active_dismissals() == {}
    k.dismiss("Doc", "*", 200.0)
    assert k.active_dismissals() == {("Doc", "*"): 200.0}
    assert k.flush() is not False


def test_symbol_cache_corrupt_is_empty(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    cache = SymbolCache(tmp_path / "cache", root)
    cache.path.parent.mkdir(parents=True)
    for raw in (CORRUPTIONS["deep-list"], CORRUPTIONS["huge-int-array"], CORRUPTIONS["nan"], CORRUPTIONS["empty"]):
        cache.path.write_bytes(raw)
        assert len(cache.load(10)) == 0


def _entry(defs: list[str], tokens: dict[str, int], generated: bool = False) -> tuple:
    return ((1, 2, 3), defs, tokens, generated)


GOOD = SymbolEntries.of([("a.py", _entry(["f"], {"f": 1, "x": 2}))])


def _forge(root: Path, entries: SymbolEntries, *, body: bytes | None = None, **head: object) -> bytes:
    """A cache file of ``entries`` (or of ``body``) whose head says ``head`` where given, with
    the right digest: a forged file, not a damaged one."""
    good = entries.encode(str(root.resolve()))
    line, rest = good.split(b"\n", 1)
    fields = {**json.loads(line), **head}
    body = rest if body is None else body
    fields["digest"] = _digest(body)
    text = json.dumps(fields, separators=(",", ":")).encode()
    return text + b" " * (-(len(text) + 1) % 8) + b"\n" + body


def _columns(**columns: object) -> SymbolEntries:
    out = SymbolEntries.of([("a.py", _entry(["f"], {"f": 1, "x": 2}))])
    out.encode("/")  # the inverted columns, from the good ones
    for name, value in columns.items():
        setattr(out, name, value)
    return out


#: A symbol cache in its own format, each part broken one way (the digest is right: a forged
#: file, not a damaged one).
BROKEN = {
    "duplicate path": lambda r: _forge(
        r, SymbolEntries.of([("a.py", _entry(["f"], {"x": 1})), ("a.py", _entry(["g"], {"y": 1}))])
    ),
    "generated 2": lambda r: _forge(r, _columns(generated=[2])),
    "more tokens than counted": lambda r: _forge(r, _columns(ntokens=[1])),
    "fewer names than counted": lambda r: _forge(r, _columns(ndefs=[2])),
    "more files declared": lambda r: _forge(r, GOOD, files=2),
    "fewer postings declared": lambda r: _forge(r, GOOD, postings=1),
    "negative count": lambda r: _forge(r, GOOD, defs=-1),
    "count a bool": lambda r: _forge(r, GOOD, files=True),
    "count a float": lambda r: _forge(r, GOOD, vocab=2.0),
    "strings not declared": lambda r: _forge(r, GOOD, strings=None),
    "string section too short": lambda r: _forge(r, GOOD, strings=[4, 1, 2]),
    "more strings than counted": lambda r: _forge(r, _columns(vocab=["f", "x", "y"]), vocab=2),
    "body one byte short": lambda r: _forge(r, GOOD, body=GOOD.encode(str(r.resolve())).split(b"\n", 1)[1][:-1]),
    "head a list": lambda r: b"[1, 2]" + b" " + b"\n",
    "head past 4 KiB": lambda r: b" " * 5000 + b"\n",
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_symbol_cache_with_broken_columns_is_set_aside(tmp_path, name):
    root = tmp_path / "ws"
    root.mkdir()
    cache = SymbolCache(tmp_path / "cache", root)
    cache.path.parent.mkdir(parents=True)
    cache.path.write_bytes(_forge(root, GOOD))
    assert cache.load(10).paths == ["a.py"]  # the well-formed file, for contrast
    cache.path.write_bytes(BROKEN[name](root))
    assert len(cache.load(10)) == 0
    assert list(cache.path.parent.glob(cache.path.name + ".corrupt-*"))
    assert "starting cold" in (cache.file.warnings or [""])[0]


def test_symbol_cache_digest_and_head_are_checked(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    cache = SymbolCache(tmp_path / "cache", root)
    cache.path.parent.mkdir(parents=True)
    good = GOOD.encode(str(root.resolve()))
    cache.path.write_bytes(good)
    loaded = cache.load(10)
    assert loaded.paths == ["a.py"] and loaded.entry(0) == ((1, 2, 3), ["f"], {"f": 1, "x": 2}, False)
    flipped = good.replace(b"x", b"y")  # one byte of the body changed after the digest was taken
    assert flipped != good
    for raw in (
        flipped,
        good[:-3],  # truncated
        _forge(tmp_path / "other", GOOD),  # another workspace's
        b'{"version": 99, "root": "x"}\n',  # a newer format
    ):
        cache.path.write_bytes(raw)
        assert len(cache.load(10)) == 0
    # an older format of ours, or another byte order, is only a cold start: nothing set aside
    for old in cache.path.parent.glob("*.corrupt-*"):
        old.unlink()
    for raw in (
        json.dumps({"version": CACHE_VERSION - 1, "root": str(root.resolve()), "digest": ""}).encode() + b"\n{}",
        _forge(root, GOOD, byteorder="big" if sys.byteorder == "little" else "little"),
    ):
        cache.path.write_bytes(raw)
        assert len(cache.load(10)) == 0 and cache.path.exists()
    assert not list(cache.path.parent.glob("*.corrupt-*"))


def test_kinds_cache_corrupt_or_tampered_is_a_classification(tmp_path, monkeypatch):
    from dsh_sidecar.workspace import kindcache

    root = tmp_path / "ws"
    root.mkdir()
    files = ["a.py", "docs/b.md", "tests/test_c.py"]
    cache = KindCache(tmp_path / "cache", root)
    assert cache.save(files, ["source", "doc", "test"])
    good = cache.path.read_bytes()
    assert cache.load(files) == ["source", "doc", "test"]
    assert cache.load([*files, "d.py"]) is None and cache.load(["a.py", "docs/b.md", "tests/x.py"]) is None
    head, body = good.split(b"\n", 1)
    forged = json.loads(head)
    for raw in (
        *(CORRUPTIONS[name] for name in ("deep-list", "nan", "not-json", "empty", "truncated")),
        head + b"\n" + body.replace(b"6", b"5"),  # a kind changed after the digest was taken
        json.dumps({**forged, "digest": _digest(b'"609"')}).encode() + b'\n"609"',  # 9: no kind
        json.dumps({**forged, "digest": _digest(b"[6, 4, 3]")}).encode() + b"\n[6, 4, 3]",  # not a string
        json.dumps({**forged, "root": "/elsewhere"}).encode() + b"\n" + body,
    ):
        cache.path.write_bytes(raw)
        assert cache.load(files) is None
        assert not cache.path.exists()  # set aside
    cache.path.write_bytes(good)
    monkeypatch.setattr(kindcache, "rules_digest", lambda: "other rules")
    assert cache.load(files) is None and cache.path.exists()  # kept: only another version's


def _plant_everything(home: Path) -> list[Path]:
    files = [home / "bandit" / "posteriors.json", home / "search-suggester" / "knowledge.json"]
    for f, raw in zip(files, (CORRUPTIONS["deep-list"], CORRUPTIONS["huge-int"])):
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(raw)
    return files


def test_sidecar_with_corrupt_state_initializes_dismisses_and_reports(tmp_path, dsh_home, workspace):
    planted = _plant_everything(dsh_home)
    server = RawServer(dsh_home, cwd=workspace, forked=True)
    try:
        server.initialize({"suggester": {"enabled": True}}, root=workspace)
        reply = server.request("dsh/dismiss", {"family": "Doc"})
        assert "result" in reply, reply
        assert reply["result"]["record"] == "dismissed Doc *"
        assert "result" in server.request("dsh/status")
        assert server.shutdown() == 0
    finally:
        server.close()
    for f in planted:
        assert list(f.parent.glob(f.name + ".corrupt-*")), f
    err = server.stderr_bytes.decode("utf-8", "replace")
    assert "starting cold" in err
    assert "Traceback" not in err


def test_files_set_aside_in_the_same_second_keep_distinct_names_and_stay_bounded(tmp_path, monkeypatch):
    """Two corrupt files set aside within one second: each copy keeps its own name (the second
    does not overwrite the first), and only the newest ``KEEP_CORRUPT`` copies are kept, by the
    order they were set aside (not their files' own times)."""
    from dsh_sidecar.state import files

    monkeypatch.setattr(files.time, "time", lambda: 1_700_000_000.5)
    path = tmp_path / "s.json"
    for i in range(2):
        path.write_bytes(b"[corrupt %d" % i)
        assert StateFile(path).read() is None
    aside = sorted(tmp_path.glob("s.json.corrupt-*"))
    assert [(p.name, p.read_bytes()) for p in aside] == [
        ("s.json.corrupt-1700000000", b"[corrupt 0"),
        ("s.json.corrupt-1700000000-1", b"[corrupt 1"),
    ]
    for i in range(2, 6):
        path.write_bytes(b"[corrupt %d" % i)
        os.utime(path, (1_000, 1_000))  # an old file: its own time is not when it was set aside
        assert StateFile(path).read() is None
    assert sorted(p.read_bytes() for p in tmp_path.glob("s.json.corrupt-*")) == [
        b"[corrupt 3",
        b"[corrupt 4",
        b"[corrupt 5",
    ]


def test_a_copy_set_aside_after_the_clock_went_back_is_kept(tmp_path, monkeypatch):
    """Copies named from a later second (the clock stepped back since, or another machine's
    clock on a shared folder) never make the copy just set aside the one deleted: it is the
    evidence of this corruption; the oldest of the others go."""
    from dsh_sidecar.state import files

    path = tmp_path / "s.json"
    for second in (1_800_000_000, 1_800_000_001, 1_800_000_002):
        (tmp_path / f"s.json.corrupt-{second}").write_bytes(b"[later %d" % second)
    monkeypatch.setattr(files.time, "time", lambda: 1_700_000_000.5)
    path.write_bytes(b"[now")
    assert StateFile(path).read() is None
    assert sorted(p.name for p in tmp_path.glob("s.json.corrupt-*")) == [
        "s.json.corrupt-1700000000",
        "s.json.corrupt-1800000001",
        "s.json.corrupt-1800000002",
    ]
    assert (tmp_path / "s.json.corrupt-1700000000").read_bytes() == b"[now"


def test_a_burst_of_set_asides_in_one_second_stays_bounded_and_overwrites_no_copy(tmp_path, monkeypatch):
    """150 corrupt files set aside within one second (a file corrupted again at every update):
    at most ``KEEP_CORRUPT`` copies stay, each holding the bytes it was set aside with (none
    overwritten by a later one); past ``MAX_ASIDE_NAMES`` names in that second a corrupt file is
    not moved aside and the read says so (still a cold start). The warnings, which ``dsh/status``
    lists, keep only the newest ``KEEP_WARNINGS``: one a set-aside grew without bound."""
    from dsh_sidecar.state import files

    monkeypatch.setattr(files.time, "time", lambda: 1_700_000_000.5)
    path = tmp_path / "s.json"
    state = StateFile(path)
    for i in range(150):
        path.write_bytes(b"[corrupt %d" % i)
        assert state.read() is None
    aside = {p.name: p.read_bytes() for p in tmp_path.glob("s.json.corrupt-*")}
    assert aside == {
        "s.json.corrupt-1700000000-97": b"[corrupt 97",
        "s.json.corrupt-1700000000-98": b"[corrupt 98",
        "s.json.corrupt-1700000000-99": b"[corrupt 99",
    }
    assert path.read_bytes() == b"[corrupt 149"  # left in place, never written over by a set-aside
    assert state.warnings is not None and len(state.warnings) == files.KEEP_WARNINGS
    assert state.warnings[-1] == (
        f"state file {path} is corrupt or not ours (JSONDecodeError) and could not be moved aside (no free name);"
        " starting cold"
    )
    monkeypatch.setattr(files.time, "time", lambda: 1_700_000_001.5)  # the next second: names again
    assert state.read() is None
    assert sorted(p.name for p in tmp_path.glob("s.json.corrupt-*")) == [
        "s.json.corrupt-1700000000-98",
        "s.json.corrupt-1700000000-99",
        "s.json.corrupt-1700000001",
    ]
    assert (tmp_path / "s.json.corrupt-1700000001").read_bytes() == b"[corrupt 149"
