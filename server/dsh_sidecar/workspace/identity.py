"""The identity of a repository: what learned state is keyed by, so a moved or re-cloned
checkout keeps its knowledge and two clones of one project on two machines share it.

:func:`repository_identity` is, first match wins (the order and spellings the suggester's
issue 12 uses for the knowledge file, so both keys agree):

1. ``remote:<host>/<path>``: the URL of the ``origin`` remote (else ``upstream``, else the
   first remote) in ``<root>/.git/config``, read as data, normalised and lower-cased: no scheme,
   user, password or port, no trailing ``.git`` or ``/`` (``git@github.com:Owner/Repo.git`` and
   ``https://user:token@GitHub.com/Owner/Repo`` are both ``remote:github.com/owner/repo``);
   a local remote (a path) names a folder, not a project, and is skipped;
2. ``root:<sha>``: the root commit of ``HEAD`` (the smallest, where history has several),
   asked of git through the hardened runner (:mod:`.gitcmd`: nothing the repository configures
   runs), at most :data:`GIT_TIMEOUT_S`; only for a ``.git`` *folder* inside the root;
3. ``path:<resolved root>`` otherwise (no ``.git`` folder, a ``.git`` *file* pointing
   elsewhere as worktrees and submodules have, anything unreadable).

The workspace is untrusted: ``.git/config`` is read at most :data:`MAX_CONFIG_BYTES`, only
when it is a regular file inside the root (a symlink out is ignored); nothing here raises.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from dsh_sidecar.workspace.gitcmd import GitError
from dsh_sidecar.workspace.gitcmd import run as run_git

#: Longest wait for git's answer, seconds (a huge history: the remote or the path instead).
GIT_TIMEOUT_S: Final = 2.0
#: Largest ``.git/config`` read, bytes.
MAX_CONFIG_BYTES: Final = 64 * 1024
#: Longest identity kept, characters.
MAX_IDENTITY_CHARS: Final = 1024

_SECTION = re.compile(r'^\s*\[\s*remote\s+"((?:[^"\\]|\\.)*)"\s*\]\s*$')
_ANY_SECTION = re.compile(r"^\s*\[")
_URL = re.compile(r"^\s*url\s*=\s*(.*?)\s*$", re.IGNORECASE)
_SCP = re.compile(r"^(?:[^@/\s]+@)?([^:/\s]+):(?!//)(.+)$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def normalise_remote(url: str) -> str | None:
    """``<host>/<path>`` of a git remote URL (see the module docstring), ``None`` if not one."""
    url = url.strip().strip('"')
    if not url or _CONTROL.search(url):
        return None
    if "://" in url:
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").lower()
            port = parts.port
        except ValueError:
            return None
        path = parts.path
        if port and parts.scheme not in ("ssh", "git+ssh"):
            host = f"{host}:{port}"
    else:
        m = _SCP.match(url)
        if m is None:
            return None  # a local path: not an identity shared between machines
        host, path = m.group(1).lower(), m.group(2)
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")]
    path = path.rstrip("/")
    if not host or not path:
        return None
    return f"{host}/{path}".lower()[:MAX_IDENTITY_CHARS]


def _read_config(root: Path) -> str | None:
    git = root / ".git"
    config = git / "config"
    try:
        if not stat.S_ISDIR(os.lstat(git).st_mode):
            return None  # a gitdir file points outside the workspace
        st = os.lstat(config)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_CONFIG_BYTES:
            return None
        fd = os.open(config, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            return fh.read(MAX_CONFIG_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


def remote_url(config_text: str) -> str | None:
    """The ``origin`` remote's URL in a git config text, else ``upstream``'s, else the first remote's."""
    remotes: list[tuple[str, str]] = []
    current: str | None = None
    for line in config_text.splitlines():
        m = _SECTION.match(line)
        if m:
            current = m.group(1)
            continue
        if _ANY_SECTION.match(line):
            current = None
            continue
        if current is not None:
            u = _URL.match(line)
            if u and all(name != current for name, _ in remotes):
                remotes.append((current, u.group(1)))
    for preferred in ("origin", "upstream"):
        for name, url in remotes:
            if name == preferred:
                return url
    return remotes[0][1] if remotes else None


def root_commit(root: Path) -> str | None:
    """The (oldest) root commit of ``root``'s ``HEAD``, or ``None`` (not a checkout folder, no
    commit, git missing, slow or failing)."""
    try:
        if not stat.S_ISDIR(os.lstat(root / ".git").st_mode):
            return None
        out = run_git(root, ["rev-list", "--max-parents=0", "HEAD"], timeout=GIT_TIMEOUT_S).stdout
    except (OSError, GitError):
        return None
    shas = sorted(line for line in out.decode("ascii", "replace").split() if _SHA.fullmatch(line))
    return shas[0] if shas else None


def repository_identity(root: Path) -> str:
    """``remote:<host>/<path>``, ``root:<sha>`` or ``path:<resolved root>`` (module
    docstring). Never raises."""
    text = _read_config(root)
    if text is not None:
        url = remote_url(text)
        remote = normalise_remote(url) if url else None
        if remote:
            return f"remote:{remote}"
    sha = root_commit(root)
    if sha is not None:
        return f"root:{sha}"
    try:
        resolved = root.resolve()
    except (OSError, RuntimeError):
        resolved = root.absolute()
    return f"path:{resolved.as_posix()}"[:MAX_IDENTITY_CHARS]
