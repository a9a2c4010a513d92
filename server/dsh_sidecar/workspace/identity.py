"""Which repository a workspace is, independent of where it is checked out.

What the suggester learns (and what a fleet shares) is keyed by this identity, not by the
absolute path, so a moved or re-cloned repository keeps its knowledge (issue 12, item 5).

:func:`repository_identity` answers, in this order:

1. ``remote:<host>/<path>`` — the normalised URL of the ``origin`` remote (else ``upstream``,
   else the first remote by name), read **as data** from ``.git/config`` through ``fsguard``
   (never through ``git config``, never following ``[include]``; a ``gitdir:`` pointer's
   folder lies outside the workspace and is not read): scheme, user name, password/token, port
   and a trailing ``.git`` or ``/`` are dropped and the rest lower-cased, so
   ``git@github.com:Owner/Repo.git``, ``https://tok@github.com/owner/repo`` and
   ``ssh://git@github.com:22/owner/repo.git`` are all ``remote:github.com/owner/repo``. A
   local remote (a path or ``file://``) is not an identity (it names a folder, not a project);
2. ``root:<sha>`` — the root commit of ``HEAD`` (the smallest when there are several), from
   one read-only ``git rev-list --max-parents=0 HEAD`` through ``workspace/gitcmd.py``;
3. ``path:<resolved absolute path>`` — not a repository, or nothing above answered.

Never raises: an unreadable or hostile ``.git`` (huge file, binary junk, a symlink out, a
``gitdir:`` pointer) only moves the answer down the list.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from dsh_sidecar.workspace import fsguard, gitcmd, gitconfig, gitguard

#: Largest git config (or ``.git`` pointer) file read, bytes; a bigger one is not read.
MAX_CONFIG_BYTES: Final = 256 * 1024
#: Seconds the root-commit query may take.
GIT_TIMEOUT_S: Final = 5.0
#: Remote names tried first, in order (then the others by name).
PREFERRED_REMOTES: Final = ("origin", "upstream")

_SCP_LIKE = re.compile(r"^(?:[^@/\s]+@)?(?P<host>[^:/\s]+):(?!//)(?P<path>.+)$")
_URL = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^@/]*@)?(?P<host>[^/:?#]+)(?::\d*)?(?P<path>/[^?#]*)?")
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


def _read_small(root: Path, rel: str) -> str | None:
    """The text of the workspace file ``rel`` if it is a regular file of at most
    :data:`MAX_CONFIG_BYTES` inside the workspace (read through ``fsguard``), else ``None``."""
    data = fsguard.read_or_none(root, rel, MAX_CONFIG_BYTES)
    if data is None or b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def config_text(root: Path) -> str | None:
    """The text of ``root/.git/config``, or ``None``: a ``.git`` that is a ``gitdir:`` pointer
    (a worktree or submodule) names a folder outside the workspace, which is never read — the
    root commit answers for those."""
    try:
        if not (root / ".git").is_dir():
            return None
    except OSError:
        return None
    return _read_small(root, ".git/config")


def normalize_remote_url(url: str) -> str | None:
    """``host/path`` of a remote URL, lower-cased, without scheme, credentials, port, a
    trailing ``.git`` or ``/``; ``None`` for a local path, ``file://`` URL or garbage."""
    url = url.strip().strip('"').strip()
    if not url or any(c.isspace() for c in url) or len(url) > 2048:
        return None
    m = _URL.match(url.lower()) if "://" in url else None
    if m is not None:
        if m.group("scheme") == "file":
            return None
        host, path = m.group("host"), m.group("path") or ""
    else:
        if url.startswith(("/", ".", "~")) or re.match(r"^[A-Za-z]:[\\/]", url):
            return None  # a local path (or a Windows drive), not a project's address
        s = _SCP_LIKE.match(url)
        if s is None:
            return None
        host, path = s.group("host").lower(), s.group("path").lower()
    path = path.strip("/")
    while path.endswith(".git"):
        path = path[:-4].rstrip("/")
    path = re.sub(r"/+", "/", path)
    if not host or not path or ".." in path.split("/"):
        return None
    return f"{host}/{path}"


def remote_urls(config_text: str) -> dict[str, str]:
    """``{remote name: url}`` from a git config file's text (``[remote "x"] url = …``, read
    as git reads it: ``workspace/gitconfig.py``; the first ``url`` of a remote, as git fetches
    from). ``{}`` when there is none. Includes are not followed."""
    out: dict[str, str] = {}
    for e in gitconfig.entries(config_text):
        if e.section == "remote" and e.subsection is not None and e.key == "url" and e.value:
            out.setdefault(e.subsection, e.value)
    return out


def remote_identity(root: Path) -> str | None:
    """``remote:<host>/<path>`` of the preferred remote with a non-local URL, or ``None``."""
    text = config_text(root)
    if not text:
        return None
    urls = remote_urls(text)
    order = [n for n in PREFERRED_REMOTES if n in urls] + sorted(n for n in urls if n not in PREFERRED_REMOTES)
    for name in order:
        norm = normalize_remote_url(urls[name])
        if norm is not None:
            return f"remote:{norm}"
    return None


def _git_root_commits(root: Path) -> list[str]:
    """The root commits of ``HEAD`` (one read-only ``git rev-list`` through the hardened git
    runner, ``workspace/gitcmd.py``: nothing the repository configures runs)."""
    try:
        out = gitcmd.run(root, ["rev-list", "--max-parents=0", "HEAD"], timeout=GIT_TIMEOUT_S)
    except gitcmd.GitError:
        return []
    return [line for line in out.stdout.decode("ascii", "replace").split() if _SHA.match(line)]


def root_commit_identity(root: Path) -> str | None:
    """``root:<sha>`` (the smallest root commit of ``HEAD``), or ``None``."""
    if not gitguard.is_checkout(root):
        return None
    roots = _git_root_commits(root)
    return f"root:{min(roots)}" if roots else None


def repository_identity(root: Path) -> str:
    """The identity of the repository at ``root`` (rules in the module docstring):
    ``remote:<host>/<path>``, ``root:<sha>`` or ``path:<absolute path>``. Never raises."""
    try:
        resolved = root.resolve()
    except OSError:
        resolved = root.absolute()
    for answer in (remote_identity, root_commit_identity):
        try:
            found = answer(resolved)
        except Exception:  # untrusted .git content: a surprise only moves the answer down
            found = None
        if found:
            return found
    return f"path:{resolved.as_posix()}"
