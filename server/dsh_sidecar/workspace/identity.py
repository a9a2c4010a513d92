"""Which repository a workspace is, independent of where it is checked out.

What the suggester learns (and what a fleet shares) is keyed by this identity, not by the
absolute path, so a moved or re-cloned repository keeps its knowledge (docs/SCHEME.md, "Learning").

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

That third answer names a folder of one machine, not content: two unrelated projects with no
remote and no commit at the same path on two machines (CI runners, containers built from one
image) would share it. What leaves the machine is therefore :func:`fleet_identity`: the first
two answers as they are (the same remote or the same root commit *is* the same project), and
for a repository with no history ``local:<random id>``, minted once per machine, folder and
folder inode and kept in ``$DSH_HOME/workspace/identities.json`` (:func:`local_identity`):
the sidecars of one machine on one folder share it; another machine, another ``$DSH_HOME``,
or the folder deleted and made anew get another, so nothing learned of one is shown to
another. The suggester's knowledge file (already per machine) keeps the ``path:`` key.

Never raises: an unreadable or hostile ``.git`` (huge file, binary junk, a symlink out, a
``gitdir:`` pointer) only moves the answer down the list.
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.state.files import StateFile
from dsh_sidecar.workspace import fsguard, gitcmd, gitconfig, gitguard, prefetch

log = logging.getLogger(__name__)

#: Largest git config (or ``.git`` pointer) file read, bytes; a bigger one is not read.
MAX_CONFIG_BYTES: Final = 256 * 1024
#: Seconds the root-commit query may take.
GIT_TIMEOUT_S: Final = 5.0
#: Remote names tried first, in order (then the others by name).
PREFERRED_REMOTES: Final = ("origin", "upstream")

#: Folders remembered in ``identities.json`` (the least recently minted are forgotten past it).
MAX_LOCAL_IDENTITIES: Final = 1000
#: The file of minted local identities under ``$DSH_HOME``.
LOCAL_IDENTITIES: Final = Path("workspace") / "identities.json"

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
    ``remote:<host>/<path>``, ``root:<sha>`` or ``path:<absolute path>``. Never raises. One
    worked out early (``prefetch.py``) is taken when fresh."""
    return prefetch.take(("identity", str(root)), identify, root)


def identify(root: Path) -> str:
    """:func:`repository_identity` worked out now."""
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


_TOKEN = re.compile(r"^[0-9a-f]{32}$")


def _local_doc(data: Any) -> dict[str, str]:
    if not isinstance(data, dict) or not isinstance(data.get("folders"), dict):
        raise ValueError("not an identities file")
    return {k: v for k, v in data["folders"].items() if isinstance(k, str) and isinstance(v, str) and _TOKEN.match(v)}


def local_identity(root: Path, home: Path) -> str:
    """``local:<32 hex>``: the identity of the history-less repository at ``root`` on this
    machine, minted at random the first time and kept in ``home/workspace/identities.json``
    under the folder's path, device and inode (a folder deleted and made anew at the same
    path is another folder). When the file cannot be written, a fresh id for this process
    only: never one another folder could have. Never raises."""
    try:
        resolved = root.resolve()
        st = os.stat(resolved)
        folder = f"{resolved.as_posix()}\0{st.st_dev}:{st.st_ino}"
    except OSError:
        return f"local:{uuid.uuid4().hex}"
    state = StateFile(home / LOCAL_IDENTITIES, validate=_local_doc, max_bytes=1024 * 1024)
    minted: list[str] = []

    def merge(current: dict[str, str] | None) -> dict[str, Any]:
        folders = dict(current or {})
        token = folders.pop(folder, None) or uuid.uuid4().hex
        folders[folder] = token  # most recently used last: the oldest are forgotten first
        minted.append(token)
        return {"folders": dict(list(folders.items())[-MAX_LOCAL_IDENTITIES:])}

    try:
        known = state.read() or {}
        if folder in known:
            return f"local:{known[folder]}"
        state.update(merge)
    except Exception as exc:  # an unwritable $DSH_HOME: this process's own id, shared with nobody
        log.warning("workspace identity: cannot keep it in %s (%s); using one for this process", home, exc)
        return f"local:{uuid.uuid4().hex}"
    return f"local:{minted[-1]}"


def fleet_identity(identity: str, root: Path, home: Path) -> str:
    """What a shared store keys the repository at ``root`` by: ``identity`` (from
    :func:`repository_identity`) when it names content (``remote:``, ``root:``), else the
    machine's :func:`local_identity` of the folder (a path is not content)."""
    if identity.startswith(("remote:", "root:")):
        return identity
    return local_identity(root, home)
