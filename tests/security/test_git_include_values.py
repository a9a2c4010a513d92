"""The git include pre-check reads ``path`` values as git does (config.c ``parse_value``): an
inline comment, quotes inside the value and a continuation line name the same FIFO to git, which
blocks on it while reading its config (checked by hand with git 2.x: ``git config --list`` hung on
each of the values below, and the pre-check said ``None``); and a config too large to pre-read
is refused, not skipped (padding would hide an include of ``/dev/zero`` past the bound)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from dsh_sidecar.workspace import gitconfig, gitguard


def repo_with_config(root: Path, text: str) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n" + text)
    return root


@pytest.mark.parametrize(
    "value",
    [
        "{fifo} ; a comment",
        "{fifo};x",
        '"{fifo}" # a comment',
        '"{head}"{tail}',
        "{head}\\\n{tail}",
        '{head}""{tail}',
    ],
)
def test_an_include_value_read_as_git_reads_it(tmp_path, value):
    fifo = tmp_path / "inc.fifo"
    os.mkfifo(fifo)
    text = value.format(fifo=fifo, head=str(fifo)[:-3], tail=str(fifo)[-3:])
    root = repo_with_config(tmp_path / "ws", f"[include]\n\tpath = {text}\n")
    refusal = gitguard.include_refusal(root)
    assert refusal == f"repository config includes a file that is not a regular file ({fifo})"


def test_config_values():
    assert gitconfig.value(' "a b" ; c') == "a b"
    assert gitconfig.value("a  b\t") == "a  b"
    assert gitconfig.value('"a;b"') == "a;b"
    assert gitconfig.value('a\\"b') == 'a"b'
    assert gitconfig.value("a\\tb") == "a\tb"
    assert gitconfig.value("a\\qb") is None  # git: bad config line
    assert gitconfig.value('"open') is None
    assert gitguard._include_paths("[include]\n\tpath = a\\\\\n[user]\n\tpath = b\n") == ["a\\"]


def test_a_config_too_large_to_pre_read_is_refused(tmp_path):
    root = repo_with_config(tmp_path, "[include]\n\tpath = /dev/zero\n" + "#" * gitguard.MAX_CONFIG_BYTES + "\n")
    assert (
        gitguard.include_refusal(root)
        == f"repository config file larger than {gitguard.MAX_CONFIG_BYTES} bytes (.git/config)"
    )
    small = repo_with_config(tmp_path / "small", "[include]\n\tpath = missing.cfg\n")
    assert gitguard.include_refusal(small) is None


@pytest.mark.parametrize("named", ["absolute", "relative"])
def test_a_gitdir_file_naming_a_folder_inside_the_workspace_is_pre_read(tmp_path, named):
    """``git init --separate-git-dir=<ws>/gd``: ``.git`` is a ``gitdir:`` file and git reads
    ``gd/config``; an include of a FIFO there blocked every git run until its timeout."""
    fifo = tmp_path / "inc.fifo"
    os.mkfifo(fifo)
    root = tmp_path / "ws"
    (root / "gd").mkdir(parents=True)
    (root / "gd" / "config").write_text(f"[include]\n\tpath = {fifo}\n")
    (root / ".git").write_text(f"gitdir: {root / 'gd' if named == 'absolute' else 'gd'}\n")
    assert gitguard.include_refusal(root) == f"repository config includes a file that is not a regular file ({fifo})"


def test_a_gitdir_file_naming_a_folder_outside_is_not_read(tmp_path):
    fifo = tmp_path / "inc.fifo"
    os.mkfifo(fifo)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "config").write_text(f"[include]\n\tpath = {fifo}\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".git").write_text("gitdir: ../outside\n")
    assert gitguard.include_refusal(root) is None  # outside the workspace: never read (git's timeout bounds it)


def test_a_backslash_ending_a_comment_does_not_hide_the_next_line(tmp_path):
    """Git ends a value's comment at the newline even after a backslash (config.c reads the
    comment to the end of the line), so an ``[include]`` on the next line is read and its FIFO
    opened; joining the lines first (as the first reader did) hid it from the pre-check."""
    fifo = tmp_path / "inc.fifo"
    os.mkfifo(fifo)
    root = repo_with_config(tmp_path / "ws", f"[core]\n\tbare = false ; note \\\n[include]\n\tpath = {fifo}\n")
    assert gitguard.include_refusal(root) == f"repository config includes a file that is not a regular file ({fifo})"
    # a backslash-newline inside a value (outside a comment) does continue it
    assert [e.value for e in gitconfig.entries('[a]\n\tk = "x \\\ny" z\\\n w\n')] == ["x y z w"]


def test_a_hostile_config_text_is_read_in_linear_time():
    """A header of one ``[`` and a megabyte of blanks took the first header pattern quadratic
    time (two ``\\s*`` around an optional name); each of these must be read at once (a bound of
    seconds, not a timing of the reader)."""
    import time

    for text in ("[" + " " * 1_000_000, '[a "' + "\\x" * 500_000, "[a]\nk=" + '"' * 1_000_000, "[\n" * 300_000):
        started = time.monotonic()
        gitconfig.entries(text)
        assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    "text",
    [
        b"\xef\xbb\xbf[include]\n\tpath = {fifo}\n",  # git skips a UTF-8 byte order mark
        b"[include]\n\tpath = {fifo}\\",  # a final backslash: git reads the end of the file as a newline
        b"[include]\n\tpath = {fifo}\0junk\n",  # git's value is a C string: it ends at the NUL
        b'[include "path\0"]\n\tx = {fifo}\n',  # so does the name: `include.path\0.x` is include.path
        b'[includeIf "gitdir:.git.path\0"]\n\tx = {fifo}\n',  # includeif.<gitdir:.git>.path
        b'[includeIf\r"gitdir:/"]\n\tpath = {fifo}\n',  # a lone CR is a blank before the quote
    ],
)
def test_a_config_git_reads_its_fifo_include_from_is_refused(tmp_path, text):
    """Each text makes git (2.39: ``git config --file F --list -z``) name ``include.path`` (or
    ``includeif.<cond>.path``) with the FIFO as its value; the pre-check read none of them."""
    fifo = tmp_path / "inc.fifo"
    os.mkfifo(fifo)
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    (tmp_path / "ws" / ".git" / "config").write_bytes(text.replace(b"{fifo}", os.fsencode(fifo)))
    assert gitguard.include_refusal(tmp_path / "ws") == (
        f"repository config includes a file that is not a regular file ({fifo})"
    )


GIT_TEXTS = [
    b'\xef\xbb\xbf[a "b"]\n\tk = v\n',
    b"[a]\n\tk = v\\",
    b"[a]\n\tk = x\0y\n",
    b'[remote "origin.url\0"]\n\tx = evil\n',
    b'[a\r"b"]\n\tk = v\n',
    b'[a \r "b"]\n\tk = v\r\n',
    b'[ "x"]\n\tk = v\n',
    b'[a.b "c"]\n\tk = v\n',
    b'[remote "my.fork"]\n\turl = u\n',
    b"[A.B]K=v\n",
    b'[a "q\\"\\\\"] k = " x " ; c\\\n',
    b"[a]\n\tk = a\\\r\n b\r\n\tbare\r\n",
    b"[a]\n\tk = \xff\xfe\n",
]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("text", GIT_TEXTS)
def test_entries_are_the_ones_git_lists(tmp_path, text):
    """Differential against real git: ``git config --file F --list -z`` prints ``name\\nvalue``
    (``name`` alone for a bare key) per entry; the reader gives the same names and values."""
    (tmp_path / "f").write_bytes(text)
    out = subprocess.run(
        ["git", "config", "--file", str(tmp_path / "f"), "--list", "-z"], capture_output=True, check=True
    ).stdout
    listed = [tuple(item.split(b"\n", 1)) for item in out.split(b"\0")[:-1]]
    ours = [
        (
            os.fsencode(".".join(p for p in (e.section, e.subsection, e.key) if p is not None)),
            *(() if e.value is None else (os.fsencode(e.value),)),
        )
        for e in gitconfig.entries(text.decode("utf-8", "surrogateescape"))
    ]
    assert ours == listed
