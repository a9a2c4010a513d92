"""Class 6: corrupt state is a cold start, never a failure (docs/SECURITY.md).

Every state file (bandit posteriors, suggester knowledge, workspace symbol cache) is planted
with each corruption; reading it must warn, start cold and set the file aside, and the
spawned sidecar must still answer ``initialize``, ``dsh/dismiss`` and ``dsh/status``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dsh_sidecar.bandit.context import CLASSES
from dsh_sidecar.bandit.policy import ContextualPolicy
from dsh_sidecar.bandit.store import PosteriorStore
from dsh_sidecar.state.files import MAX_DEPTH, StateFile, check_document
from dsh_sidecar.suggester.knowledge import Knowledge
from dsh_sidecar.workspace.cache import SymbolCache
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
    for raw in (CORRUPTIONS["deep-list"], CORRUPTIONS["huge-int-array"], CORRUPTIONS["nan"]):
        cache.path.write_bytes(raw)
        assert cache.load() == {}


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
