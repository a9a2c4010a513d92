"""Class 2: the guard's plain-path shortcut never skips a link (docs/SECURITY.md).

:func:`fsguard.read_bytes` reads ``/proc/self/fd/<n>`` to judge where an open led only when the
open could have followed a link: a path whose ``lstat`` says no link is opened by ``openat2``
with ``RESOLVE_NO_SYMLINKS`` as well as ``RESOLVE_BENEATH``, so the kernel refuses any link on
the way (a folder that is a link, a file swapped for a link since the ``lstat``) and the guard's
own path judges it. Each link planted here leads into ``.git`` or out of the tree — as the last
component, as a folder on the way, as a chain — and must be refused with its reason, whichever
way the guard opens; links that stay inside are still read, and a plain file is read without
the judgement's ``readlink``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dsh_sidecar.workspace import fsguard

SECRET = b"[core]\n\tfsmonitor = TOP-SECRET-GIT-CONFIG\n"
OUTSIDE = b"TOP-SECRET-OUTSIDE-THE-WORKSPACE\n"
GOOD = b"def good_function():\n    return 1\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A workspace with a ``.git`` folder, a file outside it, and links of every shape."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_bytes(OUTSIDE)
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_bytes(SECRET)
    (root / "src").mkdir()
    (root / "src" / "good.py").write_bytes(GOOD)
    os.symlink("good.py", root / "src" / "alias.py")  # stays inside
    os.symlink("src", root / "lib")  # a folder link that stays inside
    os.symlink(".git/config", root / "into_git.txt")  # file link into .git
    os.symlink("../.git/config", root / "src" / "cfg.txt")  # from a subfolder
    os.symlink("chain_b.txt", root / "chain_a.txt")  # a chain into .git
    os.symlink(".git/config", root / "chain_b.txt")
    os.symlink(".git", root / "gitlink")  # a folder link into .git, on the way
    os.symlink("fb", root / "fa")  # a chain of folder links into .git
    os.symlink(".git", root / "fb")
    os.symlink("../.git", root / "src" / "deep")  # a folder link into .git, deeper
    os.symlink("out_mid.txt", root / "out_chain.txt")  # a chain out of the tree
    os.symlink("../outside/secret.py", root / "out_mid.txt")
    os.symlink(outside, root / "outdir")  # a folder link out, on the way
    os.symlink("../outdir", root / "src" / "outlink")  # a chain of folder links out
    return root


REFUSED = [
    ("into_git.txt", "git-folder"),
    ("src/cfg.txt", "git-folder"),
    ("chain_a.txt", "git-folder"),
    ("chain_b.txt", "git-folder"),
    ("gitlink/config", "git-folder"),
    ("fa/config", "git-folder"),
    ("src/deep/config", "git-folder"),
    ("out_chain.txt", "outside"),
    ("out_mid.txt", "outside"),
    ("outdir/secret.py", "outside"),
    ("src/outlink/secret.py", "outside"),
]


@pytest.fixture(params=["openat2", "o_path"])
def opener(request, monkeypatch, tree):
    """Each way the guard opens a file (``openat2`` where the kernel has it, else ``O_PATH``)."""
    if request.param == "o_path":
        monkeypatch.setattr(fsguard._OPENAT2, "usable", False)
    elif not fsguard._OPENAT2.usable or fsguard._OPENAT2.open(fsguard.real_root(str(tree)), "src/good.py") is None:
        pytest.skip("this kernel has no openat2")
    return request.param


@pytest.mark.parametrize(("rel", "reason"), REFUSED)
def test_every_link_into_git_or_out_is_refused_with_its_reason(tree, opener, rel, reason):
    with pytest.raises(fsguard.Refused) as info:
        fsguard.read_bytes(tree, rel)
    assert info.value.reason == reason
    assert fsguard.read_or_none(tree, rel) is None
    with fsguard.FolderReader(tree) as reader:
        assert reader.read(rel) is None


@pytest.mark.parametrize("rel", ["into_git.txt", "chain_a.txt", "out_chain.txt"])
def test_a_file_swapped_for_a_link_after_its_lstat_is_still_judged(tree, opener, monkeypatch, rel):
    """The ``lstat`` said a regular file (the link came after it): the open with no link on the
    way refuses it, and the guard's own path judges where it leads."""
    real_lstat = os.lstat
    full = os.path.join(tree, rel)
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: os.stat(path) if path == full else real_lstat(path, *a, **k))
    with pytest.raises(fsguard.Refused) as info:
        fsguard.read_bytes(tree, rel)
    assert info.value.reason in ("git-folder", "outside")


@pytest.mark.parametrize("rel", ["src/good.py", "src/alias.py", "lib/good.py", "lib/alias.py"])
def test_links_that_stay_inside_are_read(tree, opener, rel):
    assert fsguard.read_bytes(tree, rel) == GOOD


def test_a_plain_file_is_read_without_reading_its_descriptor_path_and_a_link_is_judged(tree, opener, monkeypatch):
    """Only what an open could have followed is judged: a plain path opened by ``openat2`` with
    no link on the way has nothing to judge (no ``/proc/self/fd`` read); a link is judged."""
    links: list[str] = []
    real_readlink = os.readlink
    monkeypatch.setattr(os, "readlink", lambda path, *a, **k: links.append(str(path)) or real_readlink(path, *a, **k))
    assert fsguard.read_bytes(tree, "src/good.py") == GOOD
    if opener == "openat2":
        assert links == []
    links.clear()
    assert fsguard.read_bytes(tree, "src/alias.py") == GOOD
    assert links and all(p.startswith("/proc/self/fd/") for p in links)


@pytest.fixture
def selfish(tree: Path) -> Path:
    """The tree with a folder link to its own root (``self -> .``) and one to a subfolder."""
    os.symlink(".", tree / "self")
    os.symlink("..", tree / "src" / "up")
    return tree


@pytest.mark.parametrize("rel", ["self/.git/config", "src/up/.git/config", "self/self/.git/config"])
def test_git_folder_reached_through_a_link_on_the_way_is_refused(selfish, opener, rel):
    """A spelling with ``.git`` in it that reaches git's folder through a link on the way is a
    link into git's folder, not git's own read. Before, any path with a ``.git`` part counted as
    naming git's folder itself, so ``self/.git/config`` was read."""
    with pytest.raises(fsguard.Refused) as info:
        fsguard.read_bytes(selfish, rel)
    assert info.value.reason == "git-folder"
    with fsguard.FolderReader(selfish) as reader:
        assert reader.read(rel) is None


@pytest.mark.parametrize("rel", [".git/config", "./.git/config", ".//.git/config", "./././.git/config"])
def test_git_folder_spelt_so_is_still_git_s_own_read(selfish, opener, rel):
    assert fsguard.read_bytes(selfish, rel) == SECRET


@pytest.mark.parametrize(
    ("rel", "names"),
    [
        (".git/config", True),
        ("./.git/config", True),
        ("self/.git/config", True),
        ("src/../.git/config", True),
        ("src/up/../../.git/HEAD", True),
        (".git/../src/good.py", False),
        ("src/.gitignore", False),
        (".GIT/notes.txt", False),
    ],
)
def test_names_git_folder_judges_the_normalised_path(rel, names):
    assert fsguard.names_git_folder(rel) is names


@pytest.mark.parametrize(
    "rel", [".git/config", "./.git/config", "self/.git/config", "src/up/.git/config", "src/../.git/config"]
)
def test_no_surface_names_a_file_of_git_s_folder_however_spelt(selfish, rel):
    """``resolves_inside`` (what a note, the task lead or ``where_is`` may name): a traceback
    frame or a free-text path is no listing's, and names git's folder in any spelling. Before,
    ``.git/config``, ``./.git/config`` and ``self/.git/config`` resolved "inside"."""
    assert not fsguard.resolves_inside(selfish, rel)
    assert fsguard.resolves_inside(selfish, "self/src/good.py")


@pytest.mark.parametrize(
    "rel",
    [rel for rel, _ in REFUSED]
    + ["src/good.py", "src/alias.py", "lib/good.py", "self/src/good.py", "self/.git/config", "./.git/config"]
    + ["src/missing.py", "outdir", "src"],
)
def test_asked_again_a_path_gets_the_same_answer(selfish, opener, rel):
    """``resolves_inside_now`` (a note's targets asked again, one ``openat2`` for a path with
    no link on the way) answers as ``resolves_inside`` does, for every shape of link."""
    assert fsguard.resolves_inside_now(selfish, rel) is fsguard.resolves_inside(selfish, rel)
