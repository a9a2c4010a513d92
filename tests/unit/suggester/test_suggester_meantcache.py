"""The missing-path tables kept between sessions (``meantcache.py``): taken back equal to a
build, and a corrupt, forged or foreign file built again, never read as tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dsh_sidecar.state import columns
from dsh_sidecar.suggester import meantcache
from dsh_sidecar.suggester.fileindex import FileIndex
from dsh_sidecar.suggester.meant import files_meant, folders_meant
from dsh_sidecar.suggester.meantcache import MeantCache
from dsh_sidecar.suggester.meanttables import HEAVY, MeantTables, key_hash

from bench.meant_lookups import synthetic

FILES = sorted(
    {
        *synthetic(600, seed=5),
        *(f"pkg{i}/index.js" for i in range(HEAVY + 3)),
        *(f"a{i}/tests/t{i}_test.py" for i in range(HEAVY + 1)),
    }
)


def _rows(t: MeantTables) -> dict[str, object]:
    digests = {
        side: {k: (d.ranked, d.orders, d.folders, list(d.starts)) for k, d in getattr(t, side).items()}
        for side in ("name_digests", "folder_digests")
    }
    return {
        "by_stem": t.by_stem.rows(),
        "by_core": t.by_core.rows(),
        "by_folder": t.by_folder.rows(),
        "dirs": t.dirs,
        **digests,
    }


def _built(tmp_path: Path, files: list[str] = FILES) -> tuple[FileIndex, MeantCache]:
    cache = MeantCache.of(tmp_path / "cache", tmp_path / "ws")
    (tmp_path / "cache").mkdir(exist_ok=True)
    ix = FileIndex(tmp_path / "ws", files)
    ix.meant_cache = cache
    ix.build_meant()
    return ix, cache


def test_a_kept_table_equals_a_built_one(tmp_path):
    first, cache = _built(tmp_path)
    assert cache.last == "miss" and cache.path.is_file()
    again, cache = _built(tmp_path)
    assert cache.last == "hit"
    fresh = MeantTables.of(again.by_name, again.by_dir, again.by_name)
    assert _rows(again.meant) == _rows(fresh) == _rows(first.meant)
    assert again.meant.name_digests.keys() == {"index.js"}
    assert again.meant.folder_digests.keys() == {"tests"}
    assert files_meant("lib/x/index.js", again) == files_meant("lib/x/index.js", first)
    assert folders_meant("test", again) == folders_meant("test", first) != []
    # another listing: built again, the file replaced
    other, cache = _built(tmp_path, [*FILES, "new/place/index.js"])
    assert cache.last == "miss"
    assert _rows(other.meant) == _rows(MeantTables.of(other.by_name, other.by_dir, other.by_name))


def _forge(path: Path, edit) -> None:
    """Rewrite the kept file with ``edit(head, ints, folders)`` applied and a digest made anew
    (what a forger can do: the file then passes every check of its form)."""
    raw = path.read_bytes()
    head, end = columns.head_of(raw)
    body = columns.body_of(raw, end)
    n, c, f = head["names"], head["cores"], head["folders"]
    numeric = [("q", n), ("I", n), ("q", c), ("I", c), ("q", f)]
    ints, texts = columns.decode(body, numeric, [f], columns.check_layout(head, body, numeric, [f]))
    ints = [list(col) for col in ints]
    folders = texts[0]
    edit(head, ints, folders)
    sections = [columns.column_bytes(code, col) for (code, _), col in zip(numeric, ints)]
    keep = {k: v for k, v in head.items() if k not in ("byteorder", "digest", "strings")}
    keep["folders"] = len(folders)
    path.write_bytes(columns.encode(keep, sections, [folders]))


def _swap_names(head, ints, folders):
    ints[1][0], ints[1][1] = ints[1][1], ints[1][0]  # two basenames under each other's key


def _drop_folder(head, ints, folders):
    del folders[0], ints[4][0]


def _stranger_folder(head, ints, folders):
    folders[0] = "not/listed"
    ints[4][0] = key_hash("listed")


def _hash_moved(head, ints, folders):
    ints[0][3] = ints[0][2]  # a hash that is not its key's


def _name_twice(head, ints, folders):
    ints[1][1] = ints[1][0]


def _test_name_twice(head, ints, folders):
    ints[3][1] = ints[3][0]


@pytest.mark.parametrize(
    "edit", [_swap_names, _drop_folder, _stranger_folder, _hash_moved, _name_twice, _test_name_twice]
)
def test_a_forged_file_is_built_again(tmp_path, edit):
    built, cache = _built(tmp_path)
    _forge(cache.path, edit)
    again, cache = _built(tmp_path)
    assert cache.last == "miss"  # refused, set aside, built and written again
    assert _rows(again.meant) == _rows(built.meant)
    assert _built(tmp_path)[1].last == "hit"


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[: len(raw) // 2],  # cut short
        lambda raw: raw[:-9] + bytes([raw[-9] ^ 1]) + raw[-8:],  # a bit flipped: the digest
        lambda raw: b"{}" + raw,  # not the format
        lambda raw: raw.replace(b'"version":1', b'"version":9', 1),  # another version
        lambda raw: b"",
    ],
    ids=["cut", "flipped", "garbage", "version", "empty"],
)
def test_a_corrupt_or_foreign_file_is_built_again(tmp_path, damage):
    built, cache = _built(tmp_path)
    cache.path.write_bytes(damage(cache.path.read_bytes()))
    again, cache = _built(tmp_path)
    assert cache.last == "miss"
    assert _rows(again.meant) == _rows(built.meant)


def test_a_file_past_its_size_model_is_not_read(tmp_path, monkeypatch):
    built, cache = _built(tmp_path)
    monkeypatch.setattr(meantcache, "PER_FOLDER_BYTES", 0)
    monkeypatch.setattr(meantcache, "PER_NAME_BYTES", 0)
    monkeypatch.setattr(meantcache, "BASE_BYTES", 64)
    again, cache = _built(tmp_path)
    assert cache.last == "unwritten"  # read refused (too large), built, not written (too large)
    assert _rows(again.meant) == _rows(built.meant)


def test_the_head_names_its_counts(tmp_path):
    built, cache = _built(tmp_path)
    head, _ = columns.head_of(cache.path.read_bytes())
    assert (head["version"], head["names"], head["folders"]) == (
        1,
        len(built.by_name),
        len(built.meant.by_folder.items),
    )
    assert head["cores"] == len(built.meant.by_core.items)
    assert json.loads(json.dumps(head)) == head


def test_a_file_rewritten_unchanged_is_taken_back(tmp_path):
    # (the forger's rewrite itself keeps a valid file: the edits above are what is refused)
    built, cache = _built(tmp_path)
    _forge(cache.path, lambda head, ints, folders: None)
    again, cache = _built(tmp_path)
    assert cache.last == "hit"
    assert _rows(again.meant) == _rows(built.meant)
