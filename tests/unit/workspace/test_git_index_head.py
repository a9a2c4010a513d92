"""The head of git's index (``gitguard.index_entries``): the entry count a listing of the checkout
is judged against (``gitguard.listing_refusal``), read from its first 12 bytes only; a head git
would refuse (signature, version, more entries than the file holds) counts as unknown."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from dsh_sidecar.workspace import gitguard, recency
from support.gitrepo import git
from support.trees import write_tree


def _checkout(ws: Path, files: int = 3) -> None:
    write_tree(ws, {f"m{i}.py": f"x = {i}\n" for i in range(files)})
    git(ws, "init", "-q")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "tree")


def _write_index(ws: Path, head: bytes, body: bytes) -> None:
    (ws / ".git" / "index").write_bytes(head + body)


def test_a_checkouts_entries_are_its_heads_count(tmp_path: Path) -> None:
    _checkout(tmp_path, 3)
    assert gitguard.index_entries(tmp_path) == 3
    (tmp_path / ".git" / "index").unlink()  # no index: git tracks nothing
    assert gitguard.index_entries(tmp_path) == 0
    assert gitguard.index_entries(tmp_path / "nowhere") is None


def test_a_split_index_counts_its_shared_entries(tmp_path: Path) -> None:
    _checkout(tmp_path, 5)
    git(tmp_path, "update-index", "--split-index")
    write_tree(tmp_path, {"m9.py": "x = 9\n"})
    git(tmp_path, "add", "m9.py")
    shared = list((tmp_path / ".git").glob("sharedindex.*"))
    assert shared
    # How git splits the 6 entries between the two files depends on its racy-clean timestamps
    # (an entry as new as the index is written again in the split part), so the expected count
    # is read from the files' own heads: the split part's plus the largest shared one's.
    split_part = _head_count(tmp_path / ".git" / "index")
    assert gitguard.index_entries(tmp_path) == split_part + max(map(_head_count, shared))
    assert gitguard.index_entries(tmp_path) >= 6  # never fewer than the tracked files
    assert gitguard.listing_refusal(tmp_path, 6, 6) is None


def _head_count(path: Path) -> int:
    signature, _version, entries = struct.unpack(">4sII", path.read_bytes()[:12])
    assert signature == b"DIRC"
    return int(entries)


@pytest.mark.parametrize(
    ("head", "body"),
    [
        (b"DIRX" + struct.pack(">II", 2, 1), bytes(200)),  # signature
        (b"DIRC" + struct.pack(">II", 5, 1), bytes(200)),  # a version git does not read
        (b"DIRC" + struct.pack(">II", 2, 2**31), os.urandom(1 << 20)),  # more entries than 1 MiB holds
        (b"DIRC" + struct.pack(">II", 2, 4), bytes(200)),  # 4 entries need 248 bytes
        (b"DIRC", b""),  # a torn head
    ],
)
def test_a_head_git_refuses_is_unknown(tmp_path: Path, head: bytes, body: bytes) -> None:
    _checkout(tmp_path)
    _write_index(tmp_path, head, body)
    assert gitguard.index_entries(tmp_path) is None
    assert gitguard.listing_refusal(tmp_path, 3) == "git's index head is not one git reads"


def test_an_index_that_is_no_regular_file_is_unknown_and_never_opened_for_reading(tmp_path: Path) -> None:
    _checkout(tmp_path)
    index = tmp_path / ".git" / "index"
    index.unlink()
    os.mkfifo(index)  # a blocking open would hang: opened O_NONBLOCK, refused by its mode
    assert gitguard.index_entries(tmp_path) is None
    index.unlink()
    index.symlink_to("/dev/zero")
    assert gitguard.index_entries(tmp_path) is None


def test_gits_listing_with_more_entries_than_the_head_is_not_used(tmp_path: Path) -> None:
    """``ls-files`` lists the index it reads: more rows than the head read after it names means
    that answer is not this index's (the caller walks the folder)."""
    _checkout(tmp_path, 3)
    rows = b"".join(b"100644 %s 0\tm%d.py\0" % (b"e" * 40, i) for i in range(4))
    assert recency.listing(tmp_path, {"tracked": rows, "untracked": b""}) is None
    three = b"".join(b"100644 %s 0\tm%d.py\0" % (b"e" * 40, i) for i in range(3))
    assert recency.listing(tmp_path, {"tracked": three, "untracked": b"new.py\0"}) == (
        ["m0.py", "m1.py", "m2.py", "new.py"],
        ["new.py"],
    )
    assert recency.git_files(tmp_path) == ["m0.py", "m1.py", "m2.py"]
