"""The workspace's caches keep serving when their file cannot be written or removed: a write that
fails is ``False`` and one warning ``<what> not written: <error>`` on the cache's own logger; a
removal that fails is a debug note ``<what> not removed: <error>``. One owner does it for every
cache (``StateFile.replace_or_warn`` / ``remove_or_note``); these are its callers' exact texts."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from dsh_sidecar.state.files import StateFile
from dsh_sidecar.workspace.journal import SymbolJournal
from dsh_sidecar.workspace.kindcache import KindCache
from dsh_sidecar.workspace.listingcache import ListingCache, walk_listing


def blocked(tmp_path: Path) -> Path:
    """A cache folder that cannot be made: a regular file stands where it would be."""
    (tmp_path / "cache").write_text("not a folder")
    return tmp_path / "cache"


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("def alpha():\n    pass\n")
    return root


def records(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str, str]]:
    return [(r.name, r.levelname, r.getMessage()) for r in caplog.records]


def test_each_cache_that_cannot_be_written_warns_once_in_its_own_words(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="dsh_sidecar")
    root, cache = tree(tmp_path), blocked(tmp_path)
    stats, stamps = walk_listing(root)
    assert ListingCache(cache, root).save(stats, stamps) is False
    assert KindCache(cache, root).save(["pkg/a.py"], ["source"]) is False
    assert SymbolJournal(cache / "x.journal.json", str(root)).save("base", {"pkg/a.py": None}) is False
    got = records(caplog)
    assert [(name, level) for name, level, _ in got] == [
        ("dsh_sidecar.workspace.listingcache", "WARNING"),
        ("dsh_sidecar.workspace.kindcache", "WARNING"),
        ("dsh_sidecar.workspace.journal", "WARNING"),
    ]
    prefixes = [
        "workspace listing not written: ",
        "workspace kinds not written: ",
        "workspace symbol journal not written: ",
    ]
    for (_, _, message), prefix in zip(got, prefixes, strict=True):
        assert message.startswith(prefix) and len(message) > len(prefix), message


def test_a_cache_that_cannot_be_removed_is_noted_and_kept(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="dsh_sidecar")
    root = tree(tmp_path)
    listing = ListingCache(tmp_path / "cache", root)
    journal = SymbolJournal(tmp_path / "cache" / "x.journal.json", str(root))
    for path in (listing.path, journal.path):
        path.mkdir(parents=True)  # a folder where the file would be: unlink fails
    listing.clear()
    journal.clear()
    assert listing.path.is_dir() and journal.path.is_dir()
    assert [(name, level, message.split(": ")[0]) for name, level, message in records(caplog)] == [
        ("dsh_sidecar.workspace.listingcache", "DEBUG", "workspace listing not removed"),
        ("dsh_sidecar.workspace.journal", "DEBUG", "workspace symbol journal not removed"),
    ]


def test_the_owner_writes_removes_and_reports_each_outcome(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="t")
    logger = logging.getLogger("t")
    file = StateFile(tmp_path / "state" / "doc.bin")
    assert file.replace_or_warn(b"one", "the doc", logger) is True
    assert file.path.read_bytes() == b"one" and (file.path.stat().st_mode & 0o777) == 0o600
    file.remove_or_note("the doc", logger)
    file.remove_or_note("the doc", logger)  # absent already: nothing to note
    assert not file.path.exists()
    assert caplog.records == []
    stuck = StateFile(blocked(tmp_path) / "doc.bin")
    assert stuck.replace_or_warn(b"two", "the doc", logger) is False
    assert [(r.levelname, r.getMessage().split(": ")[0]) for r in caplog.records] == [
        ("WARNING", "the doc not written")
    ]
