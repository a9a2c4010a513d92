"""The workspace walk (``workspace/files.py``) never lists a folder outside the workspace, even
when a folder it has listed is swapped for a symlink before its subfolders are opened: the
subfolder's path then goes through the symlink, so the walk checks that the folder it opened
is the one it listed (device and inode), not only that the last component is no symlink."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from dsh_sidecar.workspace import files


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "sub" / "inside.py").write_text("x = 1\n")
    (root / "top.py").write_text("y = 2\n")
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "secret.py").write_text("TOKEN = 'outside'\n")
    return root, outside


def _swap_after(monkeypatch: pytest.MonkeyPatch, root: Path, prefix: str, victim: Path, target: Path) -> None:
    """Swap ``victim`` for a symlink to ``target`` once the folder at ``prefix`` is listed."""
    real = files._with_folder_ignores

    def listed(r, p, entries, lines, ignored):  # type: ignore[no-untyped-def]
        if p == prefix and not victim.is_symlink():
            shutil.rmtree(victim)
            os.symlink(target, victim)
        return real(r, p, entries, lines, ignored)

    monkeypatch.setattr(files, "_with_folder_ignores", listed)


def test_a_parent_swapped_for_a_symlink_after_its_listing_is_not_walked_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, outside = _tree(tmp_path)
    # pkg/ is listed (pkg/sub pushed), then pkg is swapped: root/pkg/sub now names outside/sub
    _swap_after(monkeypatch, root, "pkg/", root / "pkg", outside)
    assert sorted(rel for rel, _ in files.walk_files(root)) == ["top.py"]


def test_the_folder_itself_swapped_for_a_symlink_is_not_walked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, outside = _tree(tmp_path)
    _swap_after(monkeypatch, root, "", root / "pkg", outside)  # pkg pushed, then swapped
    assert sorted(rel for rel, _ in files.walk_files(root)) == ["top.py"]


def test_an_unswapped_tree_is_listed_whole(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    assert sorted(rel for rel, _ in files.walk_files(root)) == ["pkg/sub/inside.py", "top.py"]
