"""Class 1: no program or setting from the workspace executes (docs/SECURITY.md).

Each vector is planted in a real checkout as a program that would append to a marker file.
Every test first shows the vector is live (plain ``git`` runs the program: a *control*), then
that the sidecar's git (``workspace/gitcmd.py``, and the listing/recency scans built on it)
never runs it. The end-to-end tests plant ``core.fsmonitor`` under a spawned sidecar.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import pty
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from dsh_sidecar.workspace import gitcmd, gitguard
from dsh_sidecar.workspace.files import list_files
from dsh_sidecar.workspace.graph import WorkspaceGraph
from dsh_sidecar.workspace.recency import git_scan
from support.rawrpc import RawServer

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ID = ["-c", "user.email=t@example.invalid", "-c", "user.name=t", "-c", "commit.gpgsign=false"]


def plain_git(root: Path, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> None:
    """Plain git as a user would run it (the control), with global/system config ignored."""
    full = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, **(env or {})}
    subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True, env=full, timeout=30)


class Repo:
    """A committed checkout at ``root`` with an ``evil`` program that appends to ``marker``."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "ws"
        self.root.mkdir()
        self.marker = tmp / "MARKER"
        self.evil = tmp / "evil.sh"
        self.evil.write_text(f'#!/bin/sh\necho "$0 $*" >> {self.marker}\nexit 1\n')
        self.evil.chmod(0o755)
        (self.root / "app.py").write_text("def main():\n    return 1\n")
        (self.root / "lib.py").write_text("X = 1\n")
        plain_git(self.root, "init", "-q")
        plain_git(self.root, "add", ".")
        plain_git(self.root, *ID, "commit", "-qm", "init")
        assert (self.root / ".git" / "HEAD").exists()

    def config(self, text: str, file: Path | None = None) -> None:
        with open(file or self.root / ".git" / "config", "a") as fh:
            fh.write(text)

    def fired(self) -> bool:
        return self.marker.exists()

    def reset(self) -> None:
        self.marker.unlink(missing_ok=True)

    def stat_dirty(self) -> None:
        """Give every tracked file a new mtime (same content) so that git must re-read it."""
        later = time.time() + 5
        for name in ("app.py", "lib.py"):
            os.utime(self.root / name, (later, later))


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path)


def sidecar_scans(repo: Repo) -> None:
    """Everything the sidecar does with git on a workspace."""
    assert "app.py" in list_files(repo.root)
    scan = git_scan(repo.root)
    assert scan is not None and "app.py" in scan[0]
    assert WorkspaceGraph.build_files(repo.root).time_source == "git"


def hardened(repo: Repo, *args: str) -> None:
    with contextlib.suppress(gitcmd.GitError):
        gitcmd.run(repo.root, args)


def only_plain_git_runs_it(
    repo: Repo, plain: tuple[str, ...], *runs: tuple[str, ...], control: str = "control"
) -> None:
    """Plain ``git <plain>`` runs the planted program (the live control, ``control`` names it);
    the sidecar's scan and each hardened ``git <run>`` of ``runs`` do not."""
    plain_git(repo.root, *plain)
    assert repo.fired(), control
    repo.reset()
    sidecar_scans(repo)
    for args in runs:
        hardened(repo, *args)
    assert not repo.fired()


# ---------------------------------------------------------------- fsmonitor and includes


def test_fsmonitor_in_git_config_never_runs(repo):
    repo.config(f"[core]\n\tfsmonitor = {repo.evil}\n")
    only_plain_git_runs_it(repo, ("ls-files",), ("status",), control="control: plain git ls-files runs core.fsmonitor")


def test_fsmonitor_pulled_in_by_include_path_never_runs(repo):
    inc = repo.root / "innocent.cfg"  # a committed-looking file in the workspace
    inc.write_text(f"[core]\n\tfsmonitor = {repo.evil}\n")
    repo.config("[include]\n\tpath = ../innocent.cfg\n")
    only_plain_git_runs_it(repo, ("status",))


def test_fsmonitor_pulled_in_by_include_if_and_nested_include_never_runs(repo):
    (repo.root / ".git" / "a.cfg").write_text("[include]\n\tpath = b.cfg\n")
    (repo.root / ".git" / "b.cfg").write_text(f"[core]\n\tfsmonitor = {repo.evil}\n")
    repo.config('[includeIf "gitdir:**"]\n\tpath = a.cfg\n')
    only_plain_git_runs_it(repo, ("ls-files",))


def test_worktree_config_extension_fsmonitor_never_runs(repo):
    repo.config("[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n")
    (repo.root / ".git" / "config.worktree").write_text(f"[core]\n\tfsmonitor = {repo.evil}\n")
    only_plain_git_runs_it(repo, ("ls-files",))


def test_gitdir_file_pointing_at_an_evil_git_dir_never_runs(repo, tmp_path):
    other = tmp_path / "elsewhere.git"
    shutil.move(repo.root / ".git", other)
    (repo.root / ".git").write_text(f"gitdir: {other}\n")
    repo.config(f"[core]\n\tfsmonitor = {repo.evil}\n", other / "config")
    only_plain_git_runs_it(repo, ("ls-files",))


# ---------------------------------------------------------------- hooks


@pytest.mark.parametrize("where", ["hooks-dir", "hooksPath"])
def test_post_index_change_hook_never_runs(repo, tmp_path, where):
    if where == "hooks-dir":
        hooks = repo.root / ".git" / "hooks"
    else:
        hooks = tmp_path / "myhooks"
        repo.config(f"[core]\n\thooksPath = {hooks}\n")
    hooks.mkdir(exist_ok=True)
    shutil.copy(repo.evil, hooks / "post-index-change")
    (hooks / "post-index-change").chmod(0o755)
    repo.stat_dirty()
    plain_git(repo.root, "update-index", "--refresh")
    assert repo.fired(), "control: writing the index runs post-index-change"
    repo.reset()
    repo.stat_dirty()
    sidecar_scans(repo)
    hardened(repo, "update-index", "--refresh")  # even a command that writes the index
    assert not repo.fired()


# ---------------------------------------------------------------- pager


def _on_a_terminal(cmd: list[str], env: dict[str, str] | None, cwd: Path) -> None:
    main, sub = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=sub, stderr=sub, cwd=cwd, env=env)
    os.close(sub)
    try:
        while True:
            try:
                if not os.read(main, 4096):
                    break
            except OSError:
                break
    finally:
        os.close(main)
        proc.wait(timeout=30)


@pytest.mark.parametrize("key", ["core.pager", "pager.log"])
def test_pager_never_runs_even_on_a_terminal(repo, key):
    section, name = key.split(".")
    repo.config(f"[{section}]\n\t{name} = {repo.evil}\n")
    base = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    base.pop("GIT_PAGER", None)
    base.pop("PAGER", None)
    _on_a_terminal(["git", "log"], base, repo.root)
    assert repo.fired(), "control: git log on a terminal pages"
    repo.reset()
    _on_a_terminal(gitcmd.argv(repo.root, ["log"]), gitcmd.Git(repo.root).prepare(), repo.root)
    sidecar_scans(repo)
    assert not repo.fired()


# ---------------------------------------------------------------- diff drivers and filters


def test_external_diff_never_runs(repo):
    repo.config(f"[diff]\n\texternal = {repo.evil}\n")
    (repo.root / "app.py").write_text("changed\n")
    plain_git(repo.root, "diff")
    assert repo.fired(), "control"
    repo.reset()
    hardened(repo, "diff")
    hardened(repo, "log", "-p")
    sidecar_scans(repo)
    assert not repo.fired()


def test_textconv_driver_never_runs(repo):
    (repo.root / ".gitattributes").write_text("*.py diff=evil\n")
    repo.config(f'[diff "evil"]\n\ttextconv = {repo.evil}\n\tcommand = {repo.evil}\n')
    (repo.root / "app.py").write_text("changed\n")
    plain_git(repo.root, "diff")
    assert repo.fired(), "control"
    repo.reset()
    hardened(repo, "diff")
    hardened(repo, "diff", "--textconv")
    sidecar_scans(repo)
    assert not repo.fired()


@pytest.mark.parametrize("kind", ["clean", "process"])
def test_clean_and_process_filters_never_run(repo, kind):
    (repo.root / ".gitattributes").write_text("*.py filter=Evil.Driver\n")
    repo.config(f'[filter "Evil.Driver"]\n\t{kind} = {repo.evil}\n\trequired = true\n')
    repo.stat_dirty()
    plain_git(repo.root, "status")
    assert repo.fired(), "control: status cleans a stat-dirty file to compare it"
    repo.reset()
    repo.stat_dirty()
    sidecar_scans(repo)
    hardened(repo, "status")
    hardened(repo, "diff")
    assert not repo.fired()


def test_filter_defined_in_an_included_file_never_runs(repo):
    (repo.root / ".gitattributes").write_text("*.py filter=inc\n")
    (repo.root / "x.cfg").write_text(f'[filter "inc"]\n\tclean = {repo.evil}\n')
    repo.config("[include]\n\tpath = ../x.cfg\n")
    repo.stat_dirty()
    plain_git(repo.root, "status")
    assert repo.fired(), "control"
    repo.reset()
    repo.stat_dirty()
    sidecar_scans(repo)
    assert not repo.fired()


# ---------------------------------------------------------------- signatures


def test_gpg_program_never_runs_for_show_signature(repo):
    tree = subprocess.run(
        ["git", "rev-parse", "HEAD^{tree}"], cwd=repo.root, capture_output=True, text=True
    ).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo.root, capture_output=True, text=True).stdout.strip()
    body = (
        f"tree {tree}\nparent {head}\nauthor t <t@e> 1700000000 +0000\ncommitter t <t@e> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n AAAA\n -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    oid = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=repo.root,
        input=body,
        capture_output=True,
        text=True,
    ).stdout.strip()
    plain_git(repo.root, "update-ref", "HEAD", oid)
    repo.config(f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {repo.evil}\n")
    only_plain_git_runs_it(repo, ("log",), ("log",), control="control: git log verifies the signature with gpg.program")


# ---------------------------------------------------------------- transports, credentials, prompts


def test_ssh_command_never_runs_even_with_ssh_allowed_in_repo_config(repo):
    repo.config(
        f'[core]\n\tsshCommand = {repo.evil}\n[protocol "ssh"]\n\tallow = always\n'
        '[remote "origin"]\n\turl = ssh://git@example.invalid/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
    )
    plain_git(repo.root, "fetch", "origin")
    assert repo.fired(), "control"
    repo.reset()
    hardened(repo, "fetch", "origin")
    hardened(repo, "ls-remote", "origin")
    assert not repo.fired()


def test_ext_transport_and_upload_pack_never_run(repo, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    plain_git(other, "init", "-q")
    repo.config(
        '[protocol "ext"]\n\tallow = always\n[protocol]\n\tallow = always\n'
        f'[remote "ext"]\n\turl = ext::{repo.evil} %S\n'
        f'[remote "local"]\n\turl = {other}\n\tuploadpack = {repo.evil}\n'
    )
    plain_git(repo.root, "fetch", "ext")
    assert repo.fired(), "control: ext:: runs its command"
    repo.reset()
    plain_git(repo.root, "fetch", "local")
    assert repo.fired(), "control: a local fetch runs remote.<name>.uploadpack"
    repo.reset()
    for remote in ("ext", "local"):
        hardened(repo, "fetch", remote)
        hardened(repo, "ls-remote", remote)
    assert not repo.fired()


class _AuthHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's API
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="x"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def auth_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AuthHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/repo.git"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("key", ["credential.helper", "core.askPass", "credential-url.helper"])
def test_credential_helper_and_askpass_never_run(repo, auth_server, key):
    if key == "credential-url.helper":
        base = auth_server.rsplit("/", 1)[0]
        repo.config(f'[credential "{base}"]\n\thelper = !{repo.evil}\n')
    else:
        section, name = key.split(".")
        value = f"!{repo.evil}" if section == "credential" else str(repo.evil)
        repo.config(f"[{section}]\n\t{name} = {value}\n")
    repo.config(f'[remote "origin"]\n\turl = {auth_server}\n')
    plain_git(repo.root, "ls-remote", "origin", env={"GIT_TERMINAL_PROMPT": "0"})
    assert repo.fired(), "control: a 401 asks the helper / askpass"
    repo.reset()
    hardened(repo, "ls-remote", "origin")
    hardened(repo, "fetch", "origin")
    assert not repo.fired()


# ---------------------------------------------------------------- the environment and the tree


def test_inherited_git_environment_never_steers_git(repo, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plain_git(elsewhere, "init", "-q")
    (elsewhere / "secret.txt").write_text("x")
    plain_git(elsewhere, "add", ".")
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(elsewhere))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{repo.evil}'")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(repo.evil))
    files = list_files(repo.root)
    assert files == ["app.py", "lib.py"]
    (repo.root / "app.py").write_text("changed\n")
    hardened(repo, "diff")
    sidecar_scans(repo)
    assert not repo.fired()


def test_core_worktree_cannot_move_the_listing_outside_the_workspace(repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.txt").write_text("not the workspace's")
    repo.config(f"[core]\n\tworktree = {outside}\n")
    files = list_files(repo.root)
    assert "private.txt" not in files
    assert files == ["app.py", "lib.py"]


def test_environment_sets_every_hardening_variable():
    env = gitcmd.environment([("filter.x.clean", "")])
    assert env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["GIT_CONFIG_GLOBAL"] == os.devnull
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["GIT_ASKPASS"] == "" and env["SSH_ASKPASS"] == ""
    assert env["GIT_OPTIONAL_LOCKS"] == "0"
    pairs = {env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"] for i in range(int(env["GIT_CONFIG_COUNT"]))}
    assert pairs["core.fsmonitor"] == "false"
    assert pairs["core.hooksPath"] == "/dev/null"
    assert pairs["protocol.allow"] == "never"
    assert pairs["filter.x.clean"] == ""


def test_too_many_program_keys_means_no_git_at_all(repo):
    repo.config("".join(f'[filter "f{i}"]\n\tclean = {repo.evil}\n' for i in range(gitcmd.MAX_DYNAMIC_KEYS + 1)))
    with pytest.raises(gitcmd.GitError):
        gitcmd.run(repo.root, ["ls-files"])
    assert git_scan(repo.root) is None
    assert list_files(repo.root) == ["app.py", "lib.py"]  # the walk
    assert not repo.fired()


def test_a_hanging_git_is_killed_at_the_timeout(repo, tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text("#!/bin/sh\nexec sleep 30\n")
    (fake / "git").chmod(0o755)
    old = os.environ["PATH"]
    os.environ["PATH"] = f"{fake}:{old}"
    try:
        t0 = time.monotonic()
        with pytest.raises(gitcmd.GitError, match="timed out"):
            gitcmd.Git(repo.root, timeout=0.5).run(["ls-files"])
        assert time.monotonic() - t0 < 10
    finally:
        os.environ["PATH"] = old


def test_no_git_invocation_outside_gitcmd():
    """Every ``git`` the sidecar starts goes through ``gitcmd``: no other module of the server
    starts a process."""
    server = Path(gitcmd.__file__).parents[1]
    offenders = []
    for path in server.rglob("*.py"):
        if path.name == "gitcmd.py":
            continue
        text = path.read_text("utf-8")
        if "subprocess" in text or "os.system" in text or "os.exec" in text or "create_subprocess" in text:
            offenders.append(str(path.relative_to(server)))
    assert offenders == []


# ---------------------------------------------------------------- end to end


def _evil_workspace(repo: Repo) -> None:
    hooks = repo.marker.parent / "hooks"
    repo.config(f"[core]\n\tfsmonitor = {repo.evil}\n\thooksPath = {hooks}\n")
    hooks.mkdir()
    shutil.copy(repo.evil, hooks / "post-index-change")
    repo.stat_dirty()


def test_sidecar_initialize_on_an_fsmonitor_workspace_runs_nothing(repo, dsh_home):
    _evil_workspace(repo)
    server = RawServer(dsh_home, cwd=repo.root, forked=True)
    try:
        server.initialize({"suggester": {"enabled": True}}, root=repo.root)
        status = server.request("dsh/status")["result"]
        deadline = time.monotonic() + 30
        while status["suggester"]["graph"].get("files") is None and time.monotonic() < deadline:
            time.sleep(0.05)
            status = server.request("dsh/status")["result"]
        assert status["suggester"]["graph"]["files"] == 2
        assert status["suggester"]["graph"]["recencySource"] == "git"
    finally:
        server.close()
    assert not repo.fired()


def test_sidecar_with_suggester_off_and_a_large_change_runs_nothing(repo, dsh_home):
    _evil_workspace(repo)
    server = RawServer(dsh_home, cwd=repo.root, forked=True)
    try:
        server.initialize({"suggester": {"enabled": False}}, root=repo.root)
        changes = [{"uri": (repo.root / f"f{i}.py").as_uri(), "type": 1} for i in range(500)]
        server.notify("workspace/didChangeWatchedFiles", {"changes": changes})
        status = server.request("dsh/status")["result"]
        deadline = time.monotonic() + 30
        while status["suggester"]["graph"].get("files") is None and time.monotonic() < deadline:
            time.sleep(0.05)  # poll: the rebuild runs in the background
            status = server.request("dsh/status")["result"]
        assert status["suggester"]["graph"]["files"] == 2  # the build ran, through git
        assert status["suggester"]["graph"]["recencySource"] == "git"
    finally:
        server.close()
    assert not repo.fired()


def test_include_paths_of_a_config_text():
    text = (
        '[core]\n\tbare = false\n[include]\n\tpath = a.cfg\n[includeIf "gitdir:/x/"]\n\tpath = "b c.cfg"\n'
        "[user]\n\tpath = not-an-include\n[Include] PATH=~/d.cfg\n"
    )
    assert gitguard._include_paths(text) == ["a.cfg", "b c.cfg", "~/d.cfg"]


@pytest.mark.parametrize("how", ["direct", "includeIf", "nested", "symlink"])
def test_a_config_that_includes_a_fifo_is_refused_before_git_runs(tmp_path, how):
    """Git opens an included FIFO while reading its config and blocks until its timeout, on
    every command; the pre-check refuses such a repository at once and the listing walks it."""
    repo = Repo(tmp_path)
    os.mkfifo(tmp_path / "inc.fifo")
    if how == "direct":
        repo.config(f"[include]\n\tpath = {tmp_path / 'inc.fifo'}\n")
    elif how == "includeIf":
        repo.config('[includeIf "gitdir:/"]\n\tpath = "../../inc.fifo"\n')
    elif how == "nested":  # a regular included file in the workspace that includes the FIFO
        (repo.root / "more.cfg").write_text(f"[include]\n\tpath = {tmp_path / 'inc.fifo'}\n")
        repo.config("[include]\n\tpath = ../more.cfg\n")
    else:
        os.symlink(tmp_path / "inc.fifo", repo.root / "inc.cfg")
        repo.config("[include]\n\tpath = ../inc.cfg\n")
    assert gitguard.include_refusal(repo.root) is not None
    with pytest.raises(gitcmd.GitError, match="includes a file that is not a regular file"):
        gitcmd.Git(repo.root, timeout=60).prepare()
    assert {"app.py", "lib.py"} <= set(list_files(repo.root))  # walked instead


def test_a_config_that_includes_regular_or_missing_files_still_runs_git(tmp_path):
    repo = Repo(tmp_path)
    (repo.root / "inc.cfg").write_text("[user]\n\tname = x\n")
    repo.config(f"[include]\n\tpath = {repo.root / 'inc.cfg'}\n[include]\n\tpath = missing.cfg\n")
    assert gitguard.include_refusal(repo.root) is None
    assert b"app.py" in gitcmd.Git(repo.root).run(["ls-files", "-z"]).stdout


def test_a_config_that_includes_a_file_outside_the_workspace_is_walked_not_run(tmp_path):
    """``[include] path = <a file of the user's>``: git would read it on every command, so git
    is not run at all and the tree is walked (the listing is the same files)."""
    repo = Repo(tmp_path)
    (tmp_path / "private.cfg").write_text("[user]\n\tname = x\n")
    repo.config(f"[include]\n\tpath = {tmp_path / 'private.cfg'}\n")
    with pytest.raises(gitcmd.GitError, match="includes a file outside the workspace"):
        gitcmd.Git(repo.root, timeout=60).prepare()
    assert {"app.py", "lib.py"} <= set(list_files(repo.root))
