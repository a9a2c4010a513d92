"""Class 2: only regular files inside the workspace are read (docs/SECURITY.md).

A hostile tree is planted (symlinks to ``/proc/self/fd/0``, to a FIFO, to ``/dev/zero``, loops,
links that leave the workspace; FIFOs and sockets in the tree; a FIFO ``.gitignore`` and pack).
Every read must return at once — each call runs in a thread with a deadline, so a block is a
failure, not a hung test run — and nothing outside the workspace is ever returned.
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest
import regex
from dsh_sidecar.suggester.candidates import FileIndex, _content_matches
from dsh_sidecar.suggester.packs import PackError, read_pack_file
from dsh_sidecar.workspace import fsguard
from dsh_sidecar.workspace.files import list_files, walk_files
from dsh_sidecar.workspace.graph import WorkspaceGraph
from support.gitrepo import git
from support.rawrpc import RawServer
from support.secutil import finishes, threads, wait_built
from support.waiting import wait_until

SECRET = "TOP-SECRET-OUTSIDE-THE-WORKSPACE"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.py").write_text(f"def leaked():\n    return '{SECRET}'\n")
    return folder


@pytest.fixture
def hostile(tmp_path: Path, outside: Path) -> Path:
    """A workspace holding one good file and every kind of trap."""
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "good.py").write_text("def good_function():\n    return 1\n")
    os.symlink("good.py", root / "src" / "alias.py")  # stays inside: followed
    os.symlink("/proc/self/fd/0", root / "stdin.py")
    os.symlink("/proc/self/fd/1", root / "stdout.py")
    os.symlink("/proc/self/fd/2", root / "stderr.py")
    os.symlink("/dev/zero", root / "zero.py")
    os.symlink("/dev/urandom", root / "random.py")
    os.symlink("/proc/self/environ", root / "environ.py")
    os.mkfifo(root / "fifo.py")
    os.symlink("fifo.py", root / "to_fifo.py")
    os.symlink("loop_b.py", root / "loop_a.py")
    os.symlink("loop_a.py", root / "loop_b.py")
    os.symlink("self.py", root / "self.py")
    os.symlink(outside / "secret.py", root / "escape.py")
    os.symlink("../outside/secret.py", root / "escape_rel.py")
    os.symlink(outside, root / "outdir")  # a folder that leaves
    os.symlink("src/../../outside/secret.py", root / "escape_dotdot.py")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / "sock.py"))
    sock.close()
    return root


TRAPS = [
    "stdin.py",
    "stdout.py",
    "stderr.py",
    "zero.py",
    "random.py",
    "environ.py",
    "fifo.py",
    "to_fifo.py",
    "loop_a.py",
    "self.py",
    "escape.py",
    "escape_rel.py",
    "outdir/secret.py",
    "escape_dotdot.py",
    "sock.py",
]


# ---------------------------------------------------------------- the guard itself


@pytest.mark.parametrize("rel", TRAPS)
def test_every_trap_is_refused_at_once(hostile, rel):
    with pytest.raises(OSError) as info:
        finishes(lambda: fsguard.read_bytes(hostile, rel))
    assert SECRET not in str(info.value)


@pytest.mark.parametrize(
    ("rel", "reason"),
    [
        ("fifo.py", "not-regular"),
        ("to_fifo.py", "not-regular"),
        ("zero.py", "not-regular"),
        ("sock.py", "not-regular"),
        ("loop_a.py", "loop"),
        ("self.py", "loop"),
        ("escape.py", "outside"),
        ("outdir/secret.py", "outside"),
        ("environ.py", "pseudo-fs"),
        ("../outside/secret.py", "path"),
        ("/etc/passwd", "path"),
        ("src/../../outside/secret.py", "path"),
        ("src\0x.py", "path"),
    ],
)
def test_refusal_reasons(hostile, rel, reason):
    with pytest.raises(fsguard.Refused) as info:
        fsguard.read_bytes(hostile, rel)
    assert info.value.reason == reason


@pytest.fixture(params=["openat2", "o_path"])
def opener(request, monkeypatch):
    """Each way the guard opens a file: the kernel's ``openat2`` with ``RESOLVE_BENEATH`` where it
    exists, and the ``O_PATH`` + ``/proc/self/fd`` path (older kernels, and every refusal)."""
    if request.param == "o_path":
        monkeypatch.setattr(fsguard._OPENAT2, "usable", False)
    elif not fsguard._OPENAT2.usable or fsguard._OPENAT2.open(fsguard.real_root(str(Path.cwd())), ".") is None:
        pytest.skip("this kernel has no openat2")
    return request.param


@pytest.mark.skipif(not (getattr(os, "O_PATH", 0) and os.path.isdir("/proc/self/fd")), reason="needs Linux O_PATH")
@pytest.mark.parametrize("rel", ["escape.py", "escape_rel.py", "escape_dotdot.py", "outdir/secret.py", "environ.py"])
def test_a_link_out_of_the_workspace_is_refused_before_its_target_is_opened_for_reading(
    hostile, monkeypatch, rel, opener
):
    """Its real path is judged by the kernel during the open (``openat2``, ``RESOLVE_BENEATH``:
    the open fails, nothing is opened) or on an ``O_PATH`` descriptor (which reads nothing): no
    open for reading ever names the target, and a link that stays inside is read through the
    same inode."""
    opened: list[tuple[str, int]] = []
    beneath: list[int] = []
    real_open = os.open
    monkeypatch.setattr(
        os, "open", lambda path, flags, *a: opened.append((str(path), flags)) or real_open(path, flags, *a)
    )
    if opener == "openat2":
        real_call = fsguard._OPENAT2._call
        assert real_call is not None

        def call(*args):
            fd = real_call(*args)
            beneath.append(fd)
            return fd

        monkeypatch.setattr(fsguard._OPENAT2, "_call", call)
    with pytest.raises(fsguard.Refused):
        fsguard.read_bytes(hostile, rel)
    assert opened and all(flags & os.O_PATH for _, flags in opened), opened
    if opener == "openat2":
        assert beneath == [-1]  # the kernel refused the resolution itself
    opened.clear()
    beneath.clear()
    assert fsguard.read_bytes(hostile, "src/alias.py").startswith(b"def good_function")
    if opener == "openat2":
        assert len(beneath) == 1 and beneath[0] >= 0 and all(flags & os.O_PATH for _, flags in opened)
    else:
        assert [bool(flags & os.O_PATH) for _, flags in opened] == [True, False]
        assert opened[1][0].startswith("/proc/self/fd/")


@pytest.mark.parametrize("rel", TRAPS)
def test_every_trap_is_refused_either_way(hostile, rel, opener):
    with pytest.raises(OSError) as info:
        finishes(lambda: fsguard.read_bytes(hostile, rel))
    assert SECRET not in str(info.value)
    assert fsguard.read_bytes(hostile, "src/alias.py") == fsguard.read_bytes(hostile, "src/good.py")


def test_regular_files_and_links_that_stay_inside_are_read(hostile):
    assert fsguard.read_bytes(hostile, "src/good.py") == b"def good_function():\n    return 1\n"
    assert fsguard.read_bytes(hostile, "src/alias.py") == fsguard.read_bytes(hostile, "src/good.py")


def test_a_workspace_reached_through_a_symlinked_root_still_reads(hostile, tmp_path):
    link = tmp_path / "link-to-ws"
    os.symlink(hostile, link)
    assert fsguard.read_text(link, "src/good.py").startswith("def good_function")
    with pytest.raises(fsguard.Refused):
        fsguard.read_bytes(link, "escape.py")


def test_size_cap(hostile):
    (hostile / "big.py").write_bytes(b"x" * 1001)
    with pytest.raises(fsguard.Refused) as info:
        fsguard.read_bytes(hostile, "big.py", max_bytes=1000)
    assert info.value.reason == "too-large"
    assert len(fsguard.read_bytes(hostile, "big.py", max_bytes=1001)) == 1001


def test_read_or_none_swallows_every_refusal(hostile):
    for rel in TRAPS:
        assert finishes(lambda rel=rel: fsguard.read_or_none(hostile, rel)) is None


# ---------------------------------------------------------------- the folder reader of a pass

ODD_PATHS = ["src/good.py", "src/alias.py", "missing.py", "src/missing.py", "src", "src/", "", "a//b.py", "big.py"]


@pytest.mark.parametrize("rel", TRAPS + ODD_PATHS + ["../outside/secret.py", "/etc/passwd", "src\0x.py"])
def test_the_folder_reader_answers_as_read_or_none_with_the_same_refusals(hostile, rel, opener):
    """A pass's reader (content index, symbol pass) gives every path the answer of
    ``read_or_none`` and counts the same refusal, without blocking, either way the guard opens."""
    (hostile / "big.py").write_bytes(b"x" * 1001)
    fsguard.REFUSED.clear()
    expected = finishes(lambda: fsguard.read_or_none(hostile, rel, 1000))
    refused = dict(fsguard.REFUSED)
    fsguard.REFUSED.clear()
    with fsguard.FolderReader(hostile, 1000) as reader:
        assert finishes(lambda: reader.read(rel)) == expected
        assert dict(fsguard.REFUSED) == refused
        # only the head asked for is read; a file over the cap is refused all the same
        assert finishes(lambda: reader.read(rel, 12)) == (expected[:12] if expected is not None else None)
    assert expected is None or SECRET.encode() not in expected


@pytest.mark.skipif(not (getattr(os, "O_PATH", 0) and os.path.isdir("/proc/self/fd")), reason="needs Linux O_PATH")
def test_the_folder_reader_opens_for_reading_only_regular_files_it_stat_ed_in_their_folder(hostile, monkeypatch):
    """Each file is stat'ed in its folder (no link followed) before any open; only a regular
    file is opened there (``O_NOFOLLOW``), and everything else goes to ``read_bytes``."""
    if fsguard._OPENAT2.open_folder(fsguard.real_root(str(hostile)), "src") is None:
        pytest.skip("this kernel has no openat2")
    opened: list[tuple[str, int]] = []
    real_open = os.open

    def spy(path, flags, *a, dir_fd=None, **k):
        if dir_fd is not None:
            opened.append((str(path), flags))
        return real_open(path, flags, *a, dir_fd=dir_fd, **k)

    monkeypatch.setattr(os, "open", spy)
    with fsguard.FolderReader(hostile) as reader:
        for rel in [*TRAPS, "src/good.py", "src/alias.py"]:
            finishes(lambda rel=rel: reader.read(rel))
    assert opened == [("good.py", fsguard._FILE_FLAGS)]
    assert fsguard._FILE_FLAGS & os.O_NOFOLLOW and fsguard._FILE_FLAGS & os.O_NONBLOCK


def test_the_folder_reader_reads_no_folder_swapped_for_a_link_out(hostile, outside):
    """A folder replaced by a symlink out of the workspace after the reader met it: the
    reader's descriptor names the folder it opened (now moved, inside), and a name only the
    outside folder has goes to ``read_bytes``, which refuses it."""
    with fsguard.FolderReader(hostile) as reader:
        assert reader.read("src/good.py") == b"def good_function():\n    return 1\n"
        (hostile / "src").rename(hostile / "moved")
        os.symlink(outside, hostile / "src")
        assert finishes(lambda: reader.read("src/secret.py")) is None
    with fsguard.FolderReader(hostile) as reader:
        assert finishes(lambda: reader.read("src/secret.py")) is None


def test_the_folder_reader_keeps_a_bounded_number_of_folders_open(tmp_path):
    root = tmp_path / "ws"
    for i in range(3 * fsguard._READER_FOLDERS):
        (root / f"d{i}").mkdir(parents=True)
        (root / f"d{i}" / "f.py").write_text(f"x = {i}\n")
    before = len(os.listdir("/proc/self/fd"))
    with fsguard.FolderReader(root) as reader:
        for i in range(3 * fsguard._READER_FOLDERS):
            assert reader.read(f"d{i}/f.py") == f"x = {i}\n".encode()
            assert len(os.listdir("/proc/self/fd")) <= before + fsguard._READER_FOLDERS + 1
    assert len(os.listdir("/proc/self/fd")) <= before + 1  # (the root's O_PATH descriptor, kept)


# ---------------------------------------------------------------- every reader of the sidecar


def test_walk_lists_no_fifo_or_socket_and_follows_no_folder_link(hostile):
    files = {rel for rel, _ in finishes(lambda: walk_files(hostile))}
    assert "fifo.py" not in files and "sock.py" not in files
    assert not any(f.startswith("outdir/") for f in files)
    assert "src/good.py" in files


def test_symbol_index_reads_only_the_good_files(hostile):
    graph = finishes(lambda: WorkspaceGraph.build(hostile))
    assert graph.symbols is not None
    assert sorted(graph.definitions("good_function")) == ["src/alias.py", "src/good.py"]
    assert graph.definitions("leaked") == []
    assert graph.usages(SECRET.replace("-", "_")) == []


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_committed_symlinks_in_a_git_checkout_are_not_followed_out(hostile):
    git(hostile, "init", "-q")
    git(hostile, "add", "src", *[t for t in TRAPS if "/" not in t and t not in ("fifo.py", "sock.py")])
    git(hostile, "commit", "-qm", "traps")
    graph = finishes(lambda: WorkspaceGraph.build(hostile))
    assert graph.time_source == "git"
    assert "escape.py" in graph.files and "stdin.py" in graph.files  # listed, never read
    assert graph.definitions("leaked") == []
    assert graph.definitions("good_function")
    # a refresh of the changed traps reads them again: still refused, still quick
    finishes(lambda: graph.refresh(TRAPS))
    assert graph.definitions("leaked") == []


def test_a_fifo_gitignore_does_not_block_the_walk_or_the_refresh(hostile):
    os.mkfifo(hostile / ".gitignore")
    os.mkfifo(hostile / "src" / ".gitignore")
    files = {rel for rel, _ in finishes(lambda: walk_files(hostile))}
    assert "src/good.py" in files
    graph = finishes(lambda: WorkspaceGraph.build(hostile))
    (hostile / "src" / "new.py").write_text("def fresh():\n    pass\n")
    finishes(lambda: graph.refresh(["src/new.py"]))
    assert graph.exists("src/new.py")


def test_a_gitignore_symlinked_out_is_not_read(hostile, outside):
    (outside / "ignore-everything").write_text("*\n")
    os.symlink(outside / "ignore-everything", hostile / ".gitignore")
    files = {rel for rel, _ in walk_files(hostile)}
    assert "src/good.py" in files  # the outside file's "*" was not applied


def test_content_probe_never_reads_outside(hostile):
    index = FileIndex(hostile.resolve(), TRAPS + ["src/good.py"])
    secret = regex.compile("TOP-SECRET")
    for rel in TRAPS:
        assert finishes(lambda rel=rel: _content_matches(index, rel, secret)) is False
    assert _content_matches(index, "src/good.py", regex.compile("good_function")) is True


@pytest.mark.parametrize("trap", ["fifo", "outside", "device"])
def test_repo_pack_traps_are_refused_without_blocking(hostile, outside, trap):
    dsh = hostile / ".dsh"
    dsh.mkdir()
    if trap == "fifo":
        os.mkfifo(dsh / "pack.yml")
    elif trap == "outside":
        (outside / "pack.yml").write_text("id: evil\n")
        os.symlink(outside / "pack.yml", dsh / "pack.yml")
    else:
        os.symlink("/dev/zero", dsh / "pack.yml")
    with pytest.raises(PackError):
        finishes(lambda: read_pack_file(dsh / "pack.yml", "repo", hostile))


# ---------------------------------------------------------------- the spawned sidecar


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_sidecar_on_a_hostile_checkout_keeps_answering_and_leaks_no_thread(hostile, dsh_home):
    git(hostile, "init", "-q")
    git(hostile, "add", "src", *[t for t in TRAPS if "/" not in t and t not in ("fifo.py", "sock.py")])
    git(hostile, "commit", "-qm", "traps")
    server = RawServer(dsh_home, cwd=hostile)
    try:
        server.initialize({"suggester": {"enabled": True}}, root=hostile)
        graph = wait_built(server)
        assert graph["symbols"] >= 1
        base = threads(server.pid)
        for _ in range(40):
            server.notify("dsh/toolsChanged", {})
        reply = server.request(
            "dsh/postExecute",
            {"sessionId": "s", "turn": 1, "tool": {"name": "grep", "input": {"pattern": "good_function"}}},
        )
        assert "result" in reply, reply
        wait_built(server)
        # right after the build 8 threads were counted against 5 + 2 at load 23 (threads still
        # ending): the count is waited for; a leaked thread never brings it back under the bound
        wait_until(lambda: threads(server.pid) <= base + 2, "the sidecar's thread count back near its idle one")
        for _ in range(3):  # requests still flow: stdin was never read by the index
            assert "result" in server.request("dsh/status")
    finally:
        server.close()
    assert SECRET.encode() not in server.stdout_bytes


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_both_git_listings_and_the_walk_agree_on_a_hostile_checkout(hostile, outside):
    """Symlinks to folders (committed or untracked; leaving the workspace or staying in it) are
    no files: git lists them (index mode 120000, an untracked link), the walk does not; both git
    listings (the suggester's and the graph's) leave them out as the walk does. Links to files,
    dangling links and loops stay listed by all three (reading them is judged by the guard)."""
    os.symlink("/etc", hostile / "etclink")
    os.symlink("src", hostile / "srclink")
    os.symlink("good.py", hostile / "src" / "alias_untracked.py")
    os.symlink("missing.py", hostile / "dangling.py")
    git(hostile, "init", "-q")
    git(hostile, "add", "src/good.py", "src/alias.py", "etclink", "srclink", "escape.py", "loop_a.py", "loop_b.py")
    git(hostile, "commit", "-qm", "traps")
    os.symlink(outside, hostile / "outdir_untracked")
    os.symlink("/usr", hostile / "usrlink")
    walked = sorted(rel for rel, _ in finishes(lambda: walk_files(hostile)))
    listed = finishes(lambda: list_files(hostile))
    graph = finishes(lambda: WorkspaceGraph.build_files(hostile))
    assert graph.time_source == "git"
    links = {"etclink", "srclink", "outdir", "outdir_untracked", "usrlink"}
    assert links.isdisjoint(walked)
    assert {"src/alias.py", "src/alias_untracked.py", "dangling.py", "loop_a.py", "escape.py"} <= set(walked)
    assert listed == walked
    assert graph.files == walked
