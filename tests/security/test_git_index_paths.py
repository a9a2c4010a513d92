"""Class 1 (docs/SECURITY.md): the index is the workspace's, and git lists what it holds.

A forged ``.git/index`` (git checks paths when they are added, not when the index is read)
makes ``ls-files --stage`` list ``../../etc/passwd``, ``/etc/shadow`` or ``.git/config``: paths
no walk of the folder can give, which a note would name as this repository's files. The
listing keeps only paths inside the work tree, as git itself would write them; names with a
newline, a tab, quotes or bytes that are not UTF-8 stay listed (they are files here)."""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from dsh_sidecar.workspace.files import list_files
from dsh_sidecar.workspace.recency import scan

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}

OUTSIDE = [
    b"../../../../etc/passwd",
    b"/etc/shadow",
    b"ok/../../x",
    b"./a.py",
    b"a//b.py",
    b"dir/",
    b"x/./y",
    b".git/config",
    b"sub/.GIT/HEAD",
]
INSIDE = [b"a.py", b"sub\nline.py", b"t\tab.py", b'q"uote.py', b"caf\xe9.py", b".gitignore", b"x/.github/o.yml"]


def forged_index(root: Path, names: list[bytes]) -> None:
    """A version-2 index (``Documentation/gitformat-index.txt``) of ``names``, all the blob of
    ``a.py``, mode 100644."""
    blob = subprocess.run(["git", "hash-object", "a.py"], cwd=root, env=ENV, capture_output=True, check=True)
    sha = bytes.fromhex(blob.stdout.decode().strip())
    body = b""
    for name in sorted(names):
        entry = struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 3) + sha + struct.pack(">H", len(name)) + name
        body += entry + b"\0" * (8 - len(entry) % 8)
    data = b"DIRC" + struct.pack(">II", 2, len(names)) + body
    (root / ".git" / "index").write_bytes(data + hashlib.sha1(data).digest())


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, env=ENV, check=True)
    (root / "a.py").write_text("hi\n")
    forged_index(root, OUTSIDE + INSIDE)
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, env=ENV, capture_output=True, check=True)
    assert set(OUTSIDE) <= set(listed.stdout.split(b"\0"))  # the control: git lists them all
    return root


def test_a_forged_index_lists_no_path_outside_the_work_tree(checkout: Path) -> None:
    inside = sorted(n.decode("utf-8", "replace") for n in INSIDE)
    assert list_files(checkout) == inside
    scanned = scan(checkout)
    assert scanned is not None and sorted(scanned[0]) == inside


@pytest.mark.parametrize("ignored", [False, True], ids=["untracked", "ignored"])
@pytest.mark.parametrize("link", ["src", "src/deep"])
def test_a_symlink_replacing_a_tracked_folder_lists_nothing_through_it(
    tmp_path: Path, link: str, ignored: bool
) -> None:
    """A tracked folder replaced in the work tree by a symlink to ``/etc``: the index still
    names ``src/passwd``, which now resolves to ``/etc/passwd``; the walk does not enter a
    symlinked folder, and neither listing names a path through it, also when ``.gitignore``
    ignores the link (git then lists it nowhere: only the index's paths under it)."""
    from dsh_sidecar.workspace.files import walk_files

    root = tmp_path / "ws"
    (root / "src" / "deep").mkdir(parents=True)
    for rel in ("src/passwd", "src/deep/passwd", "keep.py"):
        (root / rel).write_text("x\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=root, env=ENV, check=True, capture_output=True)
    shutil.rmtree(root / link)
    os.symlink("/etc", root / link)
    if ignored:
        (root / ".gitignore").write_text(f"/{link}\n")
    walked = sorted(rel for rel, _ in walk_files(root, mtimes=True))
    assert list_files(root) == walked
    scanned = scan(root)
    assert scanned is not None and sorted(scanned[0]) == walked
    assert "keep.py" in walked and not any(p.startswith(link + "/") for p in walked)
    untracked = subprocess.run(["git", "ls-files", "-o", "--exclude-standard"], cwd=root, env=ENV, capture_output=True)
    assert (link in untracked.stdout.decode().split()) is not ignored  # the control: git lists an ignored link nowhere
