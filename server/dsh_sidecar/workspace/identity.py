"""Which repository a workspace is, independent of where it is checked out.

What the suggester learns (and what a fleet shares) is keyed by this identity, not by the
absolute path, so a moved or re-cloned repository keeps its knowledge (issue 12, item 5).

:func:`repository_identity` answers, in this order:

1. ``remote:<host>/<path>`` — the normalised URL of the ``origin`` remote (else ``upstream``,
   else the first remote by name), read **as data** from the git config file (never through
   ``git config``, never following ``[include]``): scheme, user name, password/token, port
   and a trailing ``.git`` or ``/`` are dropped and the rest lower-cased, so
   ``git@github.com:Owner/Repo.git``, ``https://tok@github.com/owner/repo`` and
   ``ssh://git@github.com:22/owner/repo.git`` are all ``remote:github.com/owner/repo``. A
   local remote (a path or ``file://``) is not an identity (it names a folder, not a project);
2. ``root:<sha>`` — the root commit of ``HEAD`` (the smallest when there are several), from
   one read-only ``git rev-list --max-parents=0 HEAD`` (:func:`_git_root_commits`, the one
   place this module runs git);
3. ``path:<resolved absolute path>`` — not a repository, or nothing above answered.

Never raises: an unreadable or hostile ``.git`` (huge file, binary junk, a ``gitdir:`` file
pointing somewhere that is not a git folder) only moves the answer down the list.
"""

from __future__ import annotations

import configparser
import os
import re
import subprocess
from pathlib import Path
from typing import Final

#: Largest git config (or ``.git`` pointer) file read, bytes; a bigger one is not read.
MAX_CONFIG_BYTES: Final = 256 * 1024
#: Seconds the root-commit query may take.
GIT_TIMEOUT_S: Final = 5.0
#: Remote names tried first, in order (then the others by name).
PREFERRED_REMOTES: Final = ("origin", "upstream")

_SCP_LIKE = re.compile(r"^(?:[^@/\s]+@)?(?P<host>[^:/\s]+):(?!//)(?P<path>.+)$")
_URL = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^@/]*@)?(?P<host>[^/:?#]+)(?::\d*)?(?P<path>/[^?#]*)?")
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_REMOTE_SECTION = re.compile(r'^remote\s+"(?P<name>[^"]*)"$')


def _read_small(path: Path) -> str | None:
    """The text of a regular file of at most :data:`MAX_CONFIG_BYTES`, else ``None``.

    The one place this module opens a file (to be re-pointed at the security layer's guarded
    open once it lands)."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_CONFIG_BYTES:
            return None
        with open(path, "rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_CONFIG_BYTES or b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def git_dir(root: Path) -> Path | None:
    """The git folder holding ``root``'s config: ``root/.git``, or for a worktree/submodule
    the common folder a ``gitdir:`` pointer names (only when that folder has a ``HEAD`` file,
    so the pointer cannot make us read an arbitrary folder's ``config``)."""
    dot = root / ".git"
    try:
        if dot.is_dir():
            return dot
    except OSError:
        return None
    text = _read_small(dot)
    first = text.splitlines()[0] if text else ""
    raw = first[len("gitdir:") :].strip() if first.startswith("gitdir:") else ""
    if not raw:
        return None
    target = Path(raw)
    if not target.is_absolute():
        target = root / target
    try:
        target = target.resolve()
        if not (target / "HEAD").is_file():
            return None
    except OSError:
        return None
    common = _read_small(target / "commondir")
    if common:
        cdir = Path(common.strip().splitlines()[0])
        cdir = (target / cdir).resolve() if not cdir.is_absolute() else cdir
        try:
            if (cdir / "HEAD").is_file():
                return cdir
        except OSError:
            pass
    return target


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
    """``{remote name: url}`` from a git config file's text (``[remote "x"] url = …``);
    ``{}`` when it does not parse. Includes are not followed."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None, comment_prefixes=("#", ";"))
    try:
        parser.read_string(config_text)
    except (configparser.Error, ValueError):
        return {}
    out: dict[str, str] = {}
    for section in parser.sections():
        m = _REMOTE_SECTION.match(section.strip())
        if m is None:
            continue
        url = parser.get(section, "url", fallback=None)
        if url:
            out[m.group("name")] = url.split(" #", 1)[0].split(" ;", 1)[0].strip()
    return out


def remote_identity(root: Path) -> str | None:
    """``remote:<host>/<path>`` of the preferred remote with a non-local URL, or ``None``."""
    gdir = git_dir(root)
    if gdir is None:
        return None
    text = _read_small(gdir / "config")
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
    """The root commits of ``HEAD`` (read-only ``git rev-list``; no hooks, no fsmonitor, no
    pager, no system/global config). The one place this module runs git (to be re-pointed at
    the security layer's git wrapper once it lands)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat")
    try:
        out = subprocess.run(
            [
                "git",
                "--no-optional-locks",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.hooksPath=" + os.devnull,
                "-C",
                str(root),
                "rev-list",
                "--max-parents=0",
                "HEAD",
            ],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    return [line for line in out.stdout.decode("ascii", "replace").split() if _SHA.match(line)]


def root_commit_identity(root: Path) -> str | None:
    """``root:<sha>`` (the smallest root commit of ``HEAD``), or ``None``."""
    if git_dir(root) is None:
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
