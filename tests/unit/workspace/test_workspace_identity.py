"""Repository identity (workspace/identity.py): remote URL, root commit, path — read as data."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from dsh_sidecar.workspace.identity import normalize_remote_url, remote_urls, repository_identity

GIT = shutil.which("git")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("git@github.com:Owner/Repo.git", "github.com/owner/repo"),
        ("https://github.com/owner/repo", "github.com/owner/repo"),
        ("https://github.com/owner/repo.git/", "github.com/owner/repo"),
        ("https://x-access-token:ghp_SECRET@github.com/owner/repo.git", "github.com/owner/repo"),
        ("ssh://git@github.com:22/owner/repo.git", "github.com/owner/repo"),
        ("git://gitlab.example.org/group/sub/project.git", "gitlab.example.org/group/sub/project"),
        ("gitlab.com:group//project", "gitlab.com/group/project"),
        ("/srv/git/project.git", None),
        ("../project", None),
        ("file:///srv/git/project.git", None),
        ("C:\\repos\\project", None),
        ("", None),
        ("https://github.com/", None),
        ("git@github.com:../../etc", None),
    ],
)
def test_normalize_remote_url(url, expected):
    assert normalize_remote_url(url) == expected


def test_remote_urls_reads_config_as_data():
    text = (
        '[core]\n\tfsmonitor = "touch /tmp/pwned"\n\thooksPath = /tmp\n'
        "[include]\n\tpath = /etc/passwd\n"
        '[remote "upstream"]\n\turl = https://github.com/up/proj.git\n'
        '[remote "origin"]\n\turl = git@github.com:me/proj.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
    )
    assert remote_urls(text) == {"upstream": "https://github.com/up/proj.git", "origin": "git@github.com:me/proj.git"}
    assert remote_urls("[[[ not a config") == {}


def test_remote_urls_are_read_with_git_syntax():
    """Quotes, escapes, inline comments, the old ``[remote.name]`` header, a subsection with an
    escaped quote and a continued line, as git reads them (a Python ini parser read several of
    these wrong: a quoted URL kept its quotes, an indented line became a continuation, a second
    ``url`` replaced the first, which is the one git fetches from)."""
    text = (
        '[remote "origin"]\n\turl = "git@github.com:me/proj.git" ; the fork\n'
        "\turl = https://mirror.example/me/proj.git\n"
        "[remote.Upstream]\n\turl=https://github.com/up/proj.git # upstream\n"
        '[remote "we\\"ird"] url = https://github.com/we/ird\\\n.git\n'
        "[remote]\n\turl = https://github.com/no/name.git\n"
        '[remote "bad"]\n\turl = https://x/\\q\n'
    )
    assert remote_urls(text) == {
        "origin": "git@github.com:me/proj.git",
        "upstream": "https://github.com/up/proj.git",
        'we"ird': "https://github.com/we/ird.git",
    }


def _write_config(root: Path, body: str) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / "config").write_text(body)


def test_origin_preferred_and_moved_clone_keeps_identity(tmp_path):
    a, b = tmp_path / "a" / "proj", tmp_path / "elsewhere" / "renamed"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    _write_config(
        a,
        '[remote "upstream"]\n url = https://github.com/up/proj\n[remote "origin"]\n url = git@github.com:Me/Proj.git\n',
    )
    _write_config(b, '[remote "origin"]\n url = https://token@github.com/me/proj.git\n')
    assert repository_identity(a) == "remote:github.com/me/proj"
    assert repository_identity(b) == "remote:github.com/me/proj"


def test_secret_never_in_identity(tmp_path):
    _write_config(tmp_path, '[remote "origin"]\n url = https://user:hunter2-token@git.example.com/team/app.git\n')
    ident = repository_identity(tmp_path)
    assert ident == "remote:git.example.com/team/app"
    assert "hunter2" not in ident


def test_not_a_repository_is_the_path(tmp_path):
    assert repository_identity(tmp_path) == f"path:{tmp_path.resolve().as_posix()}"


def test_hostile_git_pointer_and_huge_config(tmp_path):
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "config").write_text('[remote "origin"]\n url = https://github.com/not/mine\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").write_text(f"gitdir: {tmp_path / 'victim'}\n")  # no HEAD there: not a git folder
    assert repository_identity(ws).startswith("path:")
    ws2 = tmp_path / "ws2"
    ws2.mkdir()
    _write_config(ws2, '[remote "origin"]\n url = https://github.com/a/b\n' + "#" * 300_000)
    assert repository_identity(ws2).startswith(("path:", "root:"))
    ws3 = tmp_path / "ws3"
    ws3.mkdir()
    (ws3 / ".git").write_bytes(b"\xff\x00\x01garbage")
    assert repository_identity(ws3).startswith("path:")


def test_worktree_pointer_is_never_followed_outside_the_workspace(tmp_path):
    common = tmp_path / "main" / ".git"
    (common / "worktrees" / "wt").mkdir(parents=True)
    (common / "HEAD").write_text("ref: refs/heads/main\n")
    (common / "config").write_text('[remote "origin"]\n url = https://github.com/team/mono.git\n')
    (common / "worktrees" / "wt" / "HEAD").write_text("ref: refs/heads/wt\n")
    (common / "worktrees" / "wt" / "commondir").write_text("../..\n")
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {common / 'worktrees' / 'wt'}\n")
    # the config lies outside the workspace: not read; no commit either, so the path answers
    assert repository_identity(wt) == f"path:{wt.resolve().as_posix()}"


def test_config_symlinked_out_is_not_read(tmp_path):
    (tmp_path / "secret.cfg").write_text('[remote "origin"]\n url = https://github.com/not/mine\n')
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / ".git" / "config").symlink_to(tmp_path / "secret.cfg")
    assert "not/mine" not in repository_identity(ws)


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_root_commit_without_remote_survives_a_clone(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}

    def git(*args, cwd=src):
        return subprocess.run(
            ["git", *args], cwd=cwd, check=True, capture_output=True, env={**env, "PATH": "/usr/bin:/bin"}
        )

    git("init", "-q")
    (src / "a.txt").write_text("a\n")
    git("add", "a.txt")
    git("commit", "-q", "-m", "root")
    (src / "b.txt").write_text("b\n")
    git("add", "b.txt")
    git("commit", "-q", "-m", "second")
    root_sha = git("rev-list", "--max-parents=0", "HEAD").stdout.decode().strip()
    assert repository_identity(src) == f"root:{root_sha}"
    clone = tmp_path / "clone"
    git("clone", "-q", str(src), str(clone), cwd=tmp_path)  # its origin is a local path: not an identity
    assert repository_identity(clone) == f"root:{root_sha}"
