"""The git include pre-check resolves an include path the way git (and the kernel) do, so the
file it ``stat``-s is the one git opens; each case here named a FIFO that ``git status`` blocked
on until its timeout (checked by hand, git 2.39) while the pre-check said ``None``."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
from pathlib import Path

import pytest
from dsh_sidecar.workspace import gitguard
from support.gitrepo import git

NOT_REGULAR = "repository config includes a file that is not a regular file ({})"


def workspace(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    fifo = root / "inc.fifo"
    os.mkfifo(fifo)
    return root, fifo


def test_a_user_home_path_is_expanded_as_git_expands_it(tmp_path):
    """``~user/…`` is that user's home (git's ``interpolate_path``), not a relative path."""
    root, fifo = workspace(tmp_path)
    me = pwd.getpwuid(os.getuid())
    if not os.path.isdir(me.pw_dir):
        pytest.skip("the current user's home folder does not exist")
    value = f"~{me.pw_name}/{os.path.relpath(fifo, me.pw_dir)}"
    (root / ".git" / "config").write_text(f"[include]\n\tpath = {value}\n")
    assert gitguard.include_refusal(root) == NOT_REGULAR.format(value)


@pytest.mark.parametrize("value", ["/proc/self/cwd/inc.fifo", "/dev/fd/1", "../via/inc.fifo"])
def test_a_path_through_proc_or_dev_is_refused(tmp_path, value):
    """``/proc/self/cwd`` is git's working folder (the workspace), ``/dev/fd/1`` its output
    pipe; the sidecar's ``stat`` of them answers for itself. ``via`` is a committed link to
    ``/proc/self/cwd``."""
    root, _ = workspace(tmp_path)
    os.symlink("/proc/self/cwd", root / "via")
    (root / ".git" / "config").write_text(f"[include]\n\tpath = {value}\n")
    assert (
        gitguard.include_refusal(root)
        == f"repository config includes a path through /proc, /sys or /dev, or past 40 links ({value})"
    )


def test_an_install_prefix_path_is_refused(tmp_path):
    root, _ = workspace(tmp_path)
    (root / ".git" / "config").write_text("[include]\n\tpath = %(prefix)/../dev/stdout\n")
    assert gitguard.include_refusal(root) == (
        "repository config includes a path under git's install prefix (%(prefix)/../dev/stdout)"
    )


def test_a_dotdot_after_a_folder_link_is_the_link_targets_parent(tmp_path):
    """``link/../more.cfg`` with ``link -> ../sub/deeper`` is ``sub/more.cfg`` to the kernel;
    read lexically it was ``.git/more.cfg`` (missing), and its FIFO include was never seen."""
    root, fifo = workspace(tmp_path)
    (root / "sub" / "deeper").mkdir(parents=True)
    os.symlink("../sub/deeper", root / ".git" / "link")
    (root / "sub" / "more.cfg").write_text(f"[include]\n\tpath = {fifo}\n")
    (root / ".git" / "config").write_text("[include]\n\tpath = link/../more.cfg\n")
    assert gitguard.include_refusal(root) == NOT_REGULAR.format(fifo)


def test_a_file_is_followed_at_its_shallowest_depth(tmp_path):
    """Git reads ``short.cfg`` -> ``x.cfg`` -> ``y.cfg`` -> FIFO (depth 4); ``x.cfg`` is also the
    end of a chain ten deep. Read depth first, that chain marked ``x.cfg`` seen at depth 10, its
    include ``y.cfg`` was past the bound, and the short path's ``x.cfg`` was skipped as seen."""
    root, fifo = workspace(tmp_path)
    cfg = root / "cfg"
    cfg.mkdir()
    (cfg / "y.cfg").write_text(f"[include]\n\tpath = {fifo}\n")
    (cfg / "x.cfg").write_text("[include]\n\tpath = y.cfg\n")
    (cfg / "short.cfg").write_text("[include]\n\tpath = x.cfg\n")
    for i in range(1, 10):
        (cfg / f"long{i}.cfg").write_text(f"[include]\n\tpath = {f'long{i + 1}.cfg' if i < 9 else 'x.cfg'}\n")
    (root / ".git" / "config").write_text("[include]\n\tpath = ../cfg/short.cfg\n\tpath = ../cfg/long1.cfg\n")
    assert gitguard.include_refusal(root) == NOT_REGULAR.format(fifo)


def test_a_name_that_is_not_utf8_is_the_bytes_git_opens(tmp_path):
    root, _ = workspace(tmp_path)
    os.mkfifo(os.fsencode(root) + b"/inc\xff.fifo")
    (root / ".git" / "config").write_bytes(b"[include]\n\tpath = ../inc\xff.fifo\n")
    assert gitguard.include_refusal(root) == NOT_REGULAR.format("../inc\udcff.fifo")


def test_a_git_folder_linked_inside_the_workspace_is_pre_read(tmp_path):
    """``.git -> gitdata`` (a link to a folder in the workspace): git reads ``gitdata/config``."""
    root, fifo = workspace(tmp_path)
    os.rmdir(root / ".git")
    (root / "gitdata").mkdir()
    (root / "gitdata" / "config").write_text(f"[include]\n\tpath = {fifo}\n")
    os.symlink("gitdata", root / ".git")
    assert gitguard.include_refusal(root) == NOT_REGULAR.format(fifo)


def test_regular_includes_inside_and_missing_ones_still_run_git(tmp_path):
    root, _ = workspace(tmp_path)
    os.symlink("../cfgdir", root / ".git" / "cfglink")
    (root / "cfgdir").mkdir()
    (root / "cfgdir" / "a.cfg").write_text("[include]\n\tpath = b.cfg\n")
    (root / "cfgdir" / "b.cfg").write_text("[user]\n\temail = y\n")
    (root / ".git" / "extra.cfg").write_text("[user]\n\tname = x\n")
    (root / ".git" / "config").write_text(
        f"[include]\n\tpath = cfglink/a.cfg\n\tpath = extra.cfg\n\tpath = ~/missing.cfg\n\tpath = {tmp_path / 'gone'}\n"
    )
    assert gitguard.include_refusal(root) is None


@pytest.mark.parametrize("how", ["absolute", "home", "relative", "symlink", "nested"])
def test_a_regular_file_outside_the_workspace_is_never_included(tmp_path, monkeypatch, how):
    """Git opens every included file on every command: a workspace naming one of the user's
    files (``~/.aws/credentials``, ``/etc/shadow``) would have our git children read it, so
    that is a refusal (the tree is walked instead), in any spelling."""
    root, _ = workspace(tmp_path)
    secret = tmp_path / "home" / "secret.cfg"
    secret.parent.mkdir()
    secret.write_text("[user]\n\tname = x\n")
    monkeypatch.setenv("HOME", str(secret.parent))
    value = {
        "absolute": str(secret),
        "home": "~/secret.cfg",
        "relative": "../../home/secret.cfg",
        "symlink": "../inside.cfg",
        "nested": "../more.cfg",
    }[how]
    os.symlink(secret, root / "inside.cfg")
    (root / "more.cfg").write_text(f"[include]\n\tpath = {secret}\n")
    (root / ".git" / "config").write_text(f"[include]\n\tpath = {value}\n")
    shown = str(secret) if how == "nested" else value
    assert gitguard.include_refusal(root) == f"repository config includes a file outside the workspace ({shown})"


@pytest.mark.parametrize("how", ["worktree", "plain"])
def test_the_common_folder_a_commondir_file_names_is_pre_read(tmp_path, how):
    """A git folder holding ``commondir`` (a linked worktree's, gitrepository-layout(5)) has
    git read ``<commondir>/config``: a ``gitdir:`` file naming ``sub/.git/worktrees/x``, or a
    plain ``.git`` folder given a ``commondir`` of ``../sub/.git``, made git read the FIFO
    include of ``sub/.git/config``, which the pre-check never read."""
    root, fifo = workspace(tmp_path)
    (root / "sub" / ".git").mkdir(parents=True)
    (root / "sub" / ".git" / "config").write_text(f"[include]\n\tpath = {fifo}\n")
    if how == "worktree":
        os.rmdir(root / ".git")
        (root / "sub" / ".git" / "worktrees" / "x").mkdir(parents=True)
        (root / "sub" / ".git" / "worktrees" / "x" / "commondir").write_text("../..\n")
        (root / ".git").write_text("gitdir: sub/.git/worktrees/x\n")
    else:
        (root / ".git" / "commondir").write_text("../sub/.git\n")
    assert gitguard.include_refusal(root) == NOT_REGULAR.format(fifo)


def test_a_git_folder_named_through_proc_is_refused(tmp_path):
    """``gitdir: /proc/self/cwd/sub/.git`` is the workspace's ``sub/.git`` to git (its working
    folder is the workspace), outside it to a lexical check, so its config was never read."""
    root, _ = workspace(tmp_path)
    os.rmdir(root / ".git")
    (root / ".git").write_text("gitdir: /proc/self/cwd/sub/.git\n")
    assert gitguard.include_refusal(root) == (
        "repository config is read through /proc, /sys or /dev, or past 40 links (/proc/self/cwd/sub/.git/config)"
    )


@pytest.mark.parametrize("name", ["config", "HEAD", "index", "packed-refs", "commondir", "refs/heads/main"])
def test_a_fifo_git_opens_in_its_own_folder_is_refused(tmp_path, name):
    """Git opens its folder's ``config``, ``HEAD``, ``index``, ``packed-refs``, ``commondir``
    and the branch ``HEAD`` names on every ``status``: each one as a FIFO blocked git until its
    timeout (``config`` too, which the pre-check skipped as not regular)."""
    root, _ = workspace(tmp_path)
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / name).unlink(missing_ok=True)
    os.mkfifo(root / ".git" / name)
    assert gitguard.include_refusal(root) == (f"repository git folder holds a FIFO or device ({root / '.git' / name})")


def test_a_real_git_folder_is_scanned_and_passes(tmp_path, monkeypatch):
    """A repository made by git itself (refs, hooks samples, objects) holds nothing special."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.txt").write_text("a\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "x")
    assert gitguard.include_refusal(root) is None
    # a socket (git's fsmonitor daemon's) fails to open at once: no refusal (bound by a short
    # relative name, AF_UNIX paths are at most 107 bytes)
    monkeypatch.chdir(root / ".git")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind("fsmonitor--daemon.ipc")
        assert gitguard.include_refusal(root) is None


def test_one_file_named_many_ways_is_read_once(tmp_path):
    """``x.cfg`` including itself as ``./x.cfg``, ``././x.cfg``…: each spelling is the same file
    resolved from the same folder, read once (keyed by the spelling, the reads grew as
    600 ** depth and the pre-check never returned)."""
    root, _ = workspace(tmp_path)
    (root / ".git" / "x.cfg").write_text("".join(f"[include]path={'./' * i}x.cfg\n" for i in range(1, 600)))
    (root / ".git" / "config").write_text("[include]\n\tpath = x.cfg\n")
    assert gitguard.include_refusal(root) is None


def test_includes_past_the_bounds_are_refused(tmp_path):
    """More include paths than :data:`gitguard.MAX_INCLUDES`, or more config text than
    :data:`gitguard.MAX_CONFIG_TOTAL_BYTES` in all, is a refusal, not minutes of reading."""
    root, _ = workspace(tmp_path)
    many = "".join(f"[include]path=missing{i}.cfg\n" for i in range(gitguard.MAX_INCLUDES + 1))
    (root / ".git" / "config").write_text(many)
    assert gitguard.include_refusal(root) == f"repository config includes more than {gitguard.MAX_INCLUDES} paths"
    pad = "#" * (gitguard.MAX_CONFIG_BYTES - 100) + "\n"
    for i in range(3):
        (root / ".git" / f"big{i}.cfg").write_text(pad)
    (root / ".git" / "config").write_text("".join(f"[include]path=big{i}.cfg\n" for i in range(3)))
    assert gitguard.include_refusal(root) == (
        f"repository config files larger than {gitguard.MAX_CONFIG_TOTAL_BYTES} bytes in all"
    )


def test_a_link_chain_is_followed_within_bounds(tmp_path):
    """A chain of 41 links (the kernel's ``ELOOP`` bound is 40), or a path of more components
    than a real one has, is refused at once rather than walked a ``readlink`` at a time."""
    root, _ = workspace(tmp_path)
    for i in range(41):
        os.symlink(f"l{i + 1}", root / f"l{i}")
    (root / "l41").write_text("[user]\n\tname = x\n")
    (root / ".git" / "config").write_text("[include]\n\tpath = ../l0\n")
    assert gitguard.include_refusal(root) == (
        "repository config includes a path through /proc, /sys or /dev, or past 40 links (../l0)"
    )
    deep = "a/" * 5000 + "x.cfg"
    (root / ".git" / "config").write_text(f"[include]\n\tpath = {deep}\n")
    assert gitguard.include_refusal(root) == (
        f"repository config includes a path through /proc, /sys or /dev, or past 40 links ({deep})"
    )
