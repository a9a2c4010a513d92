"""Class 2: a workspace whose ``.git`` is a link to a folder elsewhere in the tree, or a
``gitdir:`` pointer to one (``git init --separate-git-dir meta/repo.git``), keeps git's files
under a name with no ``.git`` part — git itself lists them as untracked. They are git's folder
all the same: no surface names them (``resolves_inside``, ``resolves_inside_now``, the file
index's ``inside_now``), no pass over the listing reads them (``FolderReader``: the config holds
the remote's URL, credentials and all) and a link into them is refused as one into ``.git``;
git's own pre-read by their real spelling (``gitguard``) stays. Before, ``meta/repo.git/config``
resolved "inside" and was read by the content pass. Git's own spelling through the root's ``.git`` (``.git/config``) is still read (the
workspace's identity), and named by nothing, as for a ``.git`` folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_sidecar.suggester.fileindex import FileIndex
from dsh_sidecar.workspace import fsguard

CONFIG = '[remote "origin"]\n\turl = https://user:TOKEN@example.com/r.git\n'
GIT_FILES = ["meta/repo.git/config", "meta/repo.git/HEAD", "meta/repo.git/refs/heads/main"]


@pytest.fixture(params=["link", "gitdir"])
def tree(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A tree whose git folder is ``meta/repo.git``, named by ``.git`` as a link or a pointer."""
    root = tmp_path / "ws"
    for rel, text in {
        "meta/repo.git/config": CONFIG,
        "meta/repo.git/HEAD": "ref: refs/heads/main\n",
        "meta/repo.git/refs/heads/main": "0" * 40 + "\n",
        "meta/notes.md": "# notes\n",
        "src/app.py": "def main(): pass\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if request.param == "link":
        (root / ".git").symlink_to("meta/repo.git")
    else:
        (root / ".git").write_text("gitdir: meta/repo.git\n")
    return root


@pytest.fixture(params=["openat2", "o_path"])
def opener(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tree: Path) -> str:
    """Each way the guard opens a file (``openat2`` where the kernel has it, else ``O_PATH``)."""
    if request.param == "o_path":
        monkeypatch.setattr(fsguard._OPENAT2, "usable", False)
    elif not fsguard._OPENAT2.usable or fsguard._OPENAT2.open(fsguard.real_root(str(tree)), "src/app.py") is None:
        pytest.skip("this kernel has no openat2")
    return str(request.param)


@pytest.mark.parametrize("rel", [*GIT_FILES, "./meta/repo.git/config", "meta//repo.git/config"])
def test_git_s_folder_under_another_name_is_named_by_no_surface_and_not_read(tree, opener, rel):
    assert not fsguard.resolves_inside(tree, rel)
    assert not fsguard.resolves_inside_now(tree, rel)
    with fsguard.FolderReader(tree) as reader:  # the passes over the listing (content, symbols)
        assert reader.read(rel) is None
    # git's own reads by the folder's real spelling stay (gitguard pre-reads its config for
    # includes that would block git); a link into it is refused as one into .git
    assert fsguard.read_or_none(tree, rel) is not None
    (tree / "alias.cfg").symlink_to(tree / "meta/repo.git/config")
    with pytest.raises(fsguard.Refused) as refused:
        fsguard.read_bytes(tree, "alias.cfg")
    assert refused.value.reason == "git-folder"


def test_the_file_index_names_none_of_it_and_the_rest_as_before(tree, opener):
    index = FileIndex(tree, [*GIT_FILES, "meta/notes.md", "src/app.py"])
    assert [rel for rel in index.files if index.inside_now(rel)] == ["meta/notes.md", "src/app.py"]
    assert [rel for rel in index.files if index.inside(rel)] == ["meta/notes.md", "src/app.py"]
    with fsguard.FolderReader(tree) as reader:
        assert reader.read("meta/notes.md") == b"# notes\n"


def test_git_s_own_spelling_through_the_root_s_git_is_read_and_named_by_nothing(tree, opener):
    if (tree / ".git").is_symlink():  # a pointer's folder is reached by git alone, never as .git/…
        assert fsguard.read_bytes(tree, ".git/config") == CONFIG.encode()
    assert not fsguard.resolves_inside(tree, ".git/config")
    assert not fsguard.resolves_inside_now(tree, ".git/config")


def test_a_pointer_out_of_the_tree_or_a_git_folder_changes_nothing(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / ".git").write_text(f"gitdir: {tmp_path / 'elsewhere.git'}\n")
    assert fsguard.git_folder_elsewhere(fsguard.real_root(str(root))) == ""
    (root / ".git").unlink()
    (root / ".git").mkdir()
    assert fsguard.git_folder_elsewhere(fsguard.real_root(str(root))) == ""
