"""What one file read costs a pass over a listing, counted in system calls (``capped.read_capped``,
``workspace/fsguard.FolderReader``): a small regular file is read in one ``read`` (its stat sizes
it, and a read short of the byte past that size is the end); a file that grew or a read cut short
is read on, within the cap, as before."""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path

import pytest
from dsh_sidecar import capped
from dsh_sidecar.capped import read_capped
from dsh_sidecar.workspace import fsguard


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes asked of each ``os.read``."""
    asked: list[int] = []
    real = os.read

    def spy(fd: int, n: int) -> bytes:
        asked.append(n)
        return real(fd, n)

    monkeypatch.setattr(capped.os, "read", spy)
    return asked


def opened(path: Path) -> int:
    return os.open(path, os.O_RDONLY)


def test_a_regular_file_is_read_in_one_read_sized_by_its_stat(tmp_path: Path, reads: list[int]) -> None:
    data = bytes(range(256)) * 20
    (tmp_path / "f.py").write_bytes(data)
    fd = opened(tmp_path / "f.py")
    try:
        assert read_capped(fd, 1 << 20, len(data)) == data
    finally:
        os.close(fd)
    assert reads == [len(data) + 1]


def test_an_empty_file_is_one_read(tmp_path: Path, reads: list[int]) -> None:
    (tmp_path / "e.py").write_bytes(b"")
    fd = opened(tmp_path / "e.py")
    try:
        assert read_capped(fd, 100, 0) == b""
    finally:
        os.close(fd)
    assert reads == [1]


def test_a_file_longer_than_its_stat_said_is_read_on_to_its_end(tmp_path: Path, reads: list[int]) -> None:
    data = b"x" * 5000
    (tmp_path / "grew.py").write_bytes(data)
    fd = opened(tmp_path / "grew.py")
    try:
        assert read_capped(fd, 1 << 20, 10) == data  # it grew after the stat
    finally:
        os.close(fd)
    assert reads == [11, (1 << 20) + 1 - 11]  # the stat's size and a byte, then the rest within the cap


def test_a_file_that_grew_past_the_cap_is_refused(tmp_path: Path, reads: list[int]) -> None:
    (tmp_path / "big.py").write_bytes(b"x" * 5000)
    fd = opened(tmp_path / "big.py")
    try:
        assert read_capped(fd, 100, 10) is None
    finally:
        os.close(fd)
    assert sum(reads) == 101  # never more than the cap and one byte


def test_a_read_cut_short_of_the_stat_reads_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[int]
) -> None:
    """A file system that gives fewer bytes than asked before the end (FUSE, a signal): only a
    read that brought all the stat promised ends the file early."""
    data = b"0123456789" * 3
    (tmp_path / "slow.py").write_bytes(data)
    spy = capped.os.read
    monkeypatch.setattr(capped.os, "read", lambda fd, n: spy(fd, min(n, 7)))
    fd = opened(tmp_path / "slow.py")
    try:
        assert read_capped(fd, 1 << 20, len(data)) == data
    finally:
        os.close(fd)
    assert reads == [7] * 5  # 7 + 7 + 7 + 7, then 2 of 7 asked: all the stat said, and short


def test_the_folder_reader_costs_a_file_its_stat_open_fstat_one_read_and_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass's reader opens each folder once and makes five system calls a file, the pre-open
    ``fstatat`` (only a regular file is opened, docs/SECURITY.md class 2) among them."""
    if fsguard._OPENAT2.open_folder(fsguard.real_root(str(tmp_path)), "") is None:
        pytest.skip("this kernel has no openat2")
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        for i in range(5):
            (tmp_path / folder / f"m{i}.py").write_text(f"x = {i}\n" * (i + 1))
    calls: Counter[str] = Counter()  # this thread's (another test's leftover thread may read files too)
    files: set[int] = set()  # the descriptors of files opened in a folder (not the folders' own)
    me = threading.get_ident()
    real = {name: getattr(os, name) for name in ("stat", "open", "fstat", "read", "close")}

    def opener(path: str, flags: int, *a: object, dir_fd: int | None = None, **k: object) -> int:
        fd = real["open"](path, flags, *a, dir_fd=dir_fd, **k)
        if dir_fd is not None and threading.get_ident() == me:
            calls["open"] += 1
            files.add(fd)
        return fd

    def closer(fd: int) -> None:
        if fd in files:
            calls["close"] += 1
            files.discard(fd)
        real["close"](fd)

    def counted(name: str) -> object:
        def spy(*a: object, **k: object) -> object:
            calls[name] += threading.get_ident() == me
            return real[name](*a, **k)  # type: ignore[operator]

        return spy

    monkeypatch.setattr(os, "open", opener)
    monkeypatch.setattr(os, "close", closer)
    for name in ("stat", "fstat", "read"):
        monkeypatch.setattr(os, name, counted(name))
    folders = fsguard._OPENAT2.open_folder
    opened_folders: list[str] = []

    def open_folder(base: str, rel: str) -> int | None:
        opened_folders.append(rel)
        return folders(base, rel)

    monkeypatch.setattr(fsguard._OPENAT2, "open_folder", open_folder)
    with fsguard.FolderReader(tmp_path) as reader:
        for folder in ("a", "b"):
            for i in range(5):
                assert reader.read(f"{folder}/m{i}.py") == (f"x = {i}\n" * (i + 1)).encode()
        assert reader.read("a/m0.py", 3) == b"x ="  # a folder met before: its descriptor kept
        calls_in_pass = dict(calls)
    assert opened_folders == ["a", "b"]
    assert calls_in_pass == {"stat": 11, "open": 11, "fstat": 11, "read": 11, "close": 11}


def _reference_words(text: str, limit: int) -> str:
    """``facts.text_words`` as written before the lower-case shortcut: every word camel-split."""
    from dsh_sidecar.workspace.facts import _CAMEL, STOP_WORDS, WORD

    seen: dict[str, None] = {}
    for w in WORD.findall(text):
        lw = w.lower()
        if lw in STOP_WORDS or lw in seen:
            continue
        seen[lw] = None
        pieces = _CAMEL.split(w)
        if len(pieces) > 1:
            for p in pieces:
                lp = p.lower()
                if len(lp) >= 3 and lp not in STOP_WORDS:
                    seen.setdefault(lp, None)
        if len(seen) >= limit:
            break
    return " ".join(seen)


def _reference_path(path: str) -> str:
    from dsh_sidecar.workspace.facts import _CAMEL, _SPLIT_PATH

    out: list[str] = []
    for part in _SPLIT_PATH.split(path):
        if part:
            pieces = _CAMEL.split(part)
            out.append(part.lower())
            if len(pieces) > 1:
                out.extend(p.lower() for p in pieces if p)
    return " ".join(dict.fromkeys(out))


def test_the_words_of_paths_and_texts_split_camel_case_only_where_a_capital_is() -> None:
    """A part with no capital letter is not run through the camelCase split (it cannot split):
    the words are those of splitting every part, on names and texts in any case and script."""
    import random

    from dsh_sidecar.workspace.facts import path_words, text_words

    rng = random.Random(7)
    alphabet = "abcXYZ019_-./ ÉéßİıΣσ\tHTTPServerhttpServer"
    samples = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    samples += ["src/HttpClient/retry_policy.py", "HTTPServer", "parseJSONFile getURL x_Y", "İstanbul ÉCOLE école"]
    for s in samples:
        path = s.strip("/").replace("//", "/")
        assert path_words(path) == _reference_path(path), path
        assert text_words(s, 5) == _reference_words(s, 5), s
        assert text_words(s) == _reference_words(s, 4000), s
