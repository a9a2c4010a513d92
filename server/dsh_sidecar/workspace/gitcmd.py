"""The one way the sidecar runs ``git``: hardened so that nothing a repository configures runs.

The workspace is untrusted (``docs/SECURITY.md``, class 1). Its ``.git/config`` (and any file an
``[include]``/``[includeIf]`` pulls in, and ``config.worktree``) may name programs that git runs
on its own: ``core.fsmonitor`` (run by ``ls-files``/``status``), hooks (``post-index-change``,
via ``core.hooksPath`` or ``.git/hooks``), pagers (``core.pager``, ``pager.<cmd>``), external
diff and textconv drivers, clean/smudge/process filters (``status`` cleans a stat-dirty file to
compare it), ``gpg.program`` (``log.showSignature``), credential helpers, ``core.askPass``,
``core.sshCommand``/``core.gitProxy``/``remote.*.uploadpack`` (a lazy fetch of a partial
clone), ``core.alternateRefsCommand``. Git has no switch that ignores the repository's config,
so every invocation here is built the way git-aware tools that run in untrusted folders do it
(shell prompts, IDEs; Justin Steven's 2022 ``core.fsmonitor`` write-up lists the traps):

* **Command-line config wins over repository config.** Overrides go in through
  ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>`` (git ≥ 2.31; command
  scope, the highest precedence, and no quoting problem with ``=`` in subsection names):
  :data:`FIXED_OVERRIDES` (fsmonitor off, hooks at ``/dev/null``, pager ``cat``, no askpass,
  no credential helper, no ssh/proxy command, every transport protocol ``never``, signatures
  off and ``gpg.program`` harmless, attributes and excludes files ``/dev/null``, no mailmap,
  bare repositories only when
  named, no auto gc/maintenance) plus, per repository, an empty value for every program-valued
  key that its config defines under a name we cannot know in advance (``filter.<driver>.*``,
  ``diff.<driver>.command/textconv``, ``merge.<driver>.driver``, ``pager.*``,
  ``credential.<url>.helper``, ``remote.<name>.uploadpack/receivepack/proxy/vcs``; and
  ``protocol.<name>.allow``, which beats ``protocol.allow``, gets ``never``): those are
  listed first with ``git config --list --name-only`` (which follows includes and runs
  nothing). A repository defining more than :data:`MAX_DYNAMIC_KEYS` of them is not run at all
  (the caller walks the folder instead).
* **Nothing inherited steers git.** Every ``GIT_*`` variable of the sidecar's environment is
  dropped (``GIT_DIR``, ``GIT_CONFIG_PARAMETERS``, ``GIT_EXTERNAL_DIFF``, ``GIT_SSH_COMMAND``…);
  ``GIT_CONFIG_NOSYSTEM=1`` and ``GIT_CONFIG_GLOBAL=/dev/null`` drop the system and user files
  too (deterministic output, and no ``safe.directory = *`` from them: git's own ownership check
  stays on as a second fence — a checkout owned by another user is not listed by git, the
  caller walks it). ``GIT_PAGER=cat``, ``PAGER=cat``, ``--no-pager``; ``GIT_TERMINAL_PROMPT=0``
  and empty ``GIT_ASKPASS``/``SSH_ASKPASS`` (git then never prompts nor consults
  ``core.askPass``); ``GIT_OPTIONAL_LOCKS=0`` (``status`` does not take or write the index
  lock, so no ``post-index-change`` and no race with the agent's own git);
  ``GIT_NO_LAZY_FETCH=1``, ``GIT_PROTOCOL_FROM_USER=0``, ``GIT_NO_REPLACE_OBJECTS=1``;
  ``LC_ALL=C``.
* **The repository is named, never discovered.** ``--git-dir=<root>/.git --work-tree=<root>``
  (a repository's ``core.worktree`` cannot move the tree elsewhere; no parent repository is
  found; ``safe.bareRepository=explicit``).
* **The process is bounded.** stdin is ``/dev/null``, stderr is discarded, the child runs in its
  own session (a timeout kills its whole process group), ``timeout`` seconds
  (:data:`DEFAULT_TIMEOUT_S`), stdout capped at :data:`MAX_OUTPUT_BYTES` (more → failure).

Tests: ``tests/security/test_git_config.py`` plants each vector in ``.git/config`` (and via
``[include] path=``) as a program that would write a marker file; the marker never appears.
"""

from __future__ import annotations

import collections
import logging
import os
import selectors
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from dsh_sidecar.workspace import fsguard, gitconfig

log = logging.getLogger(__name__)

#: Seconds one git command may run before its process group is killed.
DEFAULT_TIMEOUT_S: Final = 10.0
#: Largest stdout accepted from one git command, bytes (250k paths of ~100 bytes fit).
MAX_OUTPUT_BYTES: Final = 64 * 1024 * 1024
#: Most repository-defined program keys neutralised; a config with more is not run.
MAX_DYNAMIC_KEYS: Final = 500

#: Config set on the command scope of every invocation (module docstring).
FIXED_OVERRIDES: Final[tuple[tuple[str, str], ...]] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.askPass", ""),
    ("core.sshCommand", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.attributesFile", "/dev/null"),
    # a FIFO named by the repository's excludesFile, or a FIFO .mailmap (log reads it since
    # git 2.29), held ls-files --others / log until the timeout; an outside file steered them
    ("core.excludesFile", "/dev/null"),
    ("log.mailmap", "false"),
    ("core.untrackedCache", "false"),
    ("core.quotePath", "false"),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    *((f"protocol.{name}.allow", "never") for name in ("file", "ext", "ssh", "git", "http", "https", "fd")),
    ("diff.external", ""),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("color.ui", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("safe.bareRepository", "explicit"),
    ("status.showUntrackedFiles", "normal"),
    ("diff.ignoreSubmodules", "all"),  # never enter a submodule: its config is not listed here
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
)

#: ``(section, last key part)`` pairs of program-valued keys with a free subsection name.
_DYNAMIC: Final = {
    "filter": ("clean", "smudge", "process"),
    "diff": ("command", "textconv"),
    "merge": ("driver",),
    "credential": ("helper",),
    "remote": ("uploadpack", "receivepack", "proxy", "vcs"),
}
#: Fixed environment of every invocation (module docstring).
_ENV: Final = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_ATTR_NOSYSTEM": "1",
    "LC_ALL": "C",
}


class GitError(Exception):
    """A git command could not run, failed, timed out or said too much (``str`` says which)."""


@dataclass(frozen=True, slots=True)
class GitResult:
    """The stdout bytes of a git command that exited 0."""

    stdout: bytes


def is_checkout(root: Path) -> bool:
    """Whether ``root/.git`` exists (a folder, or a ``gitdir:`` file); never follows more."""
    try:
        os.lstat(root / ".git")
    except OSError:
        return False
    return True


def _dynamic_keys(names: bytes) -> list[tuple[str, str]]:
    """``(key, neutral value)`` for each program-valued (or transport-allowing) key named in
    ``git config --list --name-only -z`` output."""
    out: list[tuple[str, str]] = []
    for raw in names.decode("utf-8", "replace").split("\0"):
        name = raw.strip()
        first, _, rest = name.partition(".")
        section = first.lower()
        last = rest.rpartition(".")[2].lower()
        if section == "pager":
            out.append((name, ""))
        elif section == "protocol" and "." in rest and last == "allow":
            out.append((name, "never"))  # protocol.<name>.allow beats protocol.allow
        elif section in _DYNAMIC and "." in rest and last in _DYNAMIC[section]:
            out.append((name, ""))
    return list(dict.fromkeys(out))


def environment(overrides: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """The child environment: the sidecar's without any ``GIT_*`` variable, plus the fixed
    hardening variables and ``GIT_CONFIG_COUNT`` entries for :data:`FIXED_OVERRIDES` then
    ``overrides`` (later entries win)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(_ENV)
    pairs = [*FIXED_OVERRIDES, *overrides]
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for i, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def argv(root: Path, args: Sequence[str]) -> list[str]:
    """``git --no-pager --git-dir=<root>/.git --work-tree=<root> <args>``."""
    return ["git", "--no-pager", f"--git-dir={root / '.git'}", f"--work-tree={root}", *args]


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except OSError:
        pass


def _collect(proc: subprocess.Popen[bytes], deadline: float, max_bytes: int) -> bytes:
    """Read ``proc``'s stdout until EOF; raises :class:`GitError` past ``deadline`` or
    ``max_bytes`` (the process group is killed)."""
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                _kill(proc)
                raise GitError("timed out")
            if not sel.select(left):
                continue
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                break
            size += len(chunk)
            if size > max_bytes:
                _kill(proc)
                raise GitError(f"more than {max_bytes} bytes of output")
            chunks.append(chunk)
    try:
        proc.wait(timeout=max(0.05, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise GitError("timed out") from None
    return b"".join(chunks)


#: Largest config file :func:`include_refusal` reads (a larger one is refused, not skipped).
MAX_CONFIG_BYTES: Final = 1 << 20
#: Deepest ``[include]`` chain followed by :func:`include_refusal` (git's own limit is 10).
MAX_INCLUDE_DEPTH: Final = 10
#: Most include paths :func:`include_refusal` examines in all (more is a refusal: a real
#: configuration has a handful; a hostile one could make each file include the others).
MAX_INCLUDES: Final = 1000
#: Most bytes of config text :func:`include_refusal` reads in all (more is a refusal: each
#: megabyte costs a fraction of a second to read, and a thousand included files would be minutes).
MAX_CONFIG_TOTAL_BYTES: Final = 2 * MAX_CONFIG_BYTES


def _include_paths(text: str) -> list[str]:
    """The ``path`` values of the ``[include]``/``[includeIf "…"]`` sections of a git config
    text (git-config(1) "Includes"; read as git reads them: ``workspace/gitconfig.py``)."""
    return [
        e.value
        for e in gitconfig.entries(text)
        if e.section in ("include", "includeif") and e.key == "path" and e.value
    ]


def _physical(path: str, hops: int = 40, steps: int = 4096) -> str | None:
    """The absolute ``path`` as the kernel resolves it: each symlink read (``readlink``) and
    followed, ``..`` after a link taken from the link target's parent, as ``open`` does; no
    file is opened. ``None`` when the walk passes ``/proc``, ``/sys`` or ``/dev`` (what git
    would open there is its own: ``/proc/self/cwd`` is its working folder, ``/dev/stdout`` its
    output pipe, which this process cannot ``stat`` for it), follows more than ``hops`` links
    (the kernel's ``ELOOP`` bound) or takes more than ``steps`` components (a bound on the
    ``readlink`` calls: a real path has a few dozen)."""
    todo = path.split("/")[::-1]
    cur = ""
    while todo:
        steps -= 1
        if steps < 0:
            return None
        part = todo.pop()
        if part in ("", "."):
            continue
        if part == "..":
            cur = cur.rpartition("/")[0]
            continue
        nxt = f"{cur}/{part}"
        if (nxt + "/").startswith(fsguard.FORBIDDEN_PREFIXES):
            return None
        try:
            link = os.readlink(nxt)
        except OSError:  # not a link, or missing (the stat that follows says so)
            cur = nxt
            continue
        hops -= 1
        if hops < 0:
            return None
        todo.extend(link.split("/")[::-1])
        if link.startswith("/"):
            cur = ""
    return cur or "/"


#: Most entries of a git folder :func:`_special_entry` looks at (its own files come first; past
#: the bound the rest, loose objects mostly, is left to git's timeout).
MAX_GIT_DIR_ENTRIES: Final = 20_000


def _blocking_entry(start: str, limit: int, checked: Callable[[str], bool], skip: str = "") -> tuple[str, str] | None:
    """The first entry under the folder ``start`` (breadth first; folder links not walked; an
    entry named ``skip`` neither looked at nor walked) whose name ``checked`` accepts and that
    git could block on: ``(path, "special")`` for a FIFO or a device once its links are
    followed, ``(path, "link")`` for a link through ``/proc``, ``/sys`` or ``/dev`` (or past 256
    components: a bound on the work per link); ``("", "bound")`` once more than ``limit``
    entries were looked at without one; ``None`` when there is none. Nothing is opened."""
    todo = collections.deque([start])
    count = 0
    while todo:
        try:
            with os.scandir(todo.popleft()) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            count += 1
            if count > limit:
                return "", "bound"
            if entry.name == skip:
                continue
            if not checked(entry.name):
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                continue
            target = _physical(entry.path, steps=256) if entry.is_symlink() else entry.path
            if target is None:
                return entry.path, "link"
            try:
                mode = os.stat(target).st_mode
            except OSError:
                continue  # a dangling link: git finds nothing there
            if stat.S_ISDIR(mode):
                if not entry.is_symlink():
                    todo.append(entry.path)
            elif stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                return entry.path, "special"  # (a socket, git's fsmonitor daemon's, fails to open at once)
    return None


def _special_entry(real_base: str, git_dir: str) -> str | None:
    """The first entry of the git folder ``git_dir`` (at most :data:`MAX_GIT_DIR_ENTRIES`) that
    git could block on (:func:`_blocking_entry`); ``None`` when there is none, or when the
    folder is not inside the workspace (not read)."""
    real = _physical(git_dir)
    if real is None or fsguard.relative(real_base, real) is None:
        return None
    hit = _blocking_entry(real, MAX_GIT_DIR_ENTRIES, lambda _name: True)
    return hit[0] if hit is not None and hit[1] != "bound" else None  # past the bound: git's timeout


def _commondir(real_base: str, git_dir: str) -> str | None:
    """The common folder git uses for ``git_dir`` when it holds a ``commondir`` file (a linked
    worktree's git folder, gitrepository-layout(5); relative to ``git_dir``), else ``None``; the
    file is read only inside the workspace."""
    real = _physical(os.path.join(git_dir, "commondir"))
    inner = fsguard.relative(real_base, real) if real is not None else None
    raw = fsguard.read_or_none(real_base, inner, 4096) if inner is not None else None
    named = raw.decode("utf-8", "surrogateescape").strip() if raw is not None else ""
    return os.path.join(git_dir, named) if named else None


def include_refusal(root: Path) -> str | None:
    """Why git must not be run in ``root`` because of what its config includes, else ``None``.

    Git opens every ``[include]``/``[includeIf]`` ``path`` while it reads its config, for any
    command: a FIFO (or device, socket, folder) named there would block or fail each git run
    until its timeout. The repository's ``config`` and ``config.worktree`` are read (guarded,
    inside the workspace only: the ``.git`` folder, or the folder a ``gitdir:`` file names when
    it is inside the workspace, and the ``config`` of the common folder its ``commondir`` file
    names; a config file git reads through ``/proc``, ``/sys`` or ``/dev`` is refused). Those
    git folders are scanned first (:func:`_special_entry`): git opens ``config``, ``HEAD``,
    ``index``, ``packed-refs``… on every command, and one that is a FIFO blocks it just the
    same. Each included path is resolved as the kernel resolves git's (:func:`_physical`) and
    ``stat``-ed, never opened: one that exists and is no regular file, or is a regular file
    outside both the workspace and the git folders (``~/.aws/credentials``, ``/etc/shadow``: git
    would read it for us), is a refusal; a regular file inside the workspace has its own includes
    followed, breadth first so each file at its shallowest
    depth, up to :data:`MAX_INCLUDE_DEPTH` deep; a config file over :data:`MAX_CONFIG_BYTES` is
    itself a refusal). Paths are expanded as git's ``interpolate_path``: ``~/`` is the user's
    home, ``~user/`` that user's, a relative path is relative to the folder of the including
    file as git names it (git-config(1) "Includes"); a ``%(prefix)/`` path (git's install
    prefix) and one through ``/proc``, ``/sys`` or ``/dev`` are refused. Never raises."""
    try:
        base = os.path.abspath(root)
        real_base = fsguard.real_root(base)
        git_dir = os.path.join(base, ".git")
        if not os.path.isdir(git_dir):
            # a `gitdir: <folder>` file (a submodule, `--separate-git-dir`): its config is
            # pre-read when that folder is inside the workspace; one outside is not read
            raw = fsguard.read_or_none(root, ".git", 4096)
            text = raw.decode("utf-8", "replace").strip() if raw is not None else ""
            if not text.startswith("gitdir:"):
                return None
            git_dir = os.path.join(base, text[len("gitdir:") :].strip())
        # (the path git names a config file by, depth); read where it physically is
        queue = collections.deque([(os.path.join(git_dir, "config"), 0), (os.path.join(git_dir, "config.worktree"), 0)])
        common = _commondir(real_base, git_dir)
        if common is not None:  # a worktree's git folder: git reads the common folder's config
            queue.appendleft((os.path.join(common, "config"), 0))
        for folder in dict.fromkeys(f for f in (git_dir, common) if f is not None):
            special = _special_entry(real_base, folder)
            if special is not None:
                return f"repository git folder holds a FIFO or device ({special})"
        # where an included file may be: the workspace, and the git folders git reads it from
        # (a linked worktree's are outside it: they are the repository's own)
        allowed = [real_base, *(p for p in (_physical(f) for f in (git_dir, common) if f is not None) if p)]
        seen: set[tuple[str, str]] = set()
        examined = total = 0
        while queue:
            named, depth = queue.popleft()
            real = _physical(named)
            if real is None:
                return f"repository config is read through /proc, /sys or /dev, or past 40 links ({named})"
            inner = fsguard.relative(real_base, real)
            # the folder its relative includes resolve from, as the kernel resolves it: one
            # file named in many spellings (`./x`, `././x`) is read once
            key = (real, _physical(os.path.dirname(named)) or "")
            if inner is None or key in seen or depth > MAX_INCLUDE_DEPTH:
                continue  # outside the workspace: not read (git's timeout bounds it)
            seen.add(key)
            try:
                data = fsguard.read_bytes(real_base, inner, MAX_CONFIG_BYTES)
            except fsguard.Refused as exc:
                if exc.reason == "too-large":  # what it includes past the bound is unknown: refused
                    return f"repository config file larger than {MAX_CONFIG_BYTES} bytes ({inner})"
                continue
            except OSError:
                continue
            total += len(data)
            if total > MAX_CONFIG_TOTAL_BYTES:
                return f"repository config files larger than {MAX_CONFIG_TOTAL_BYTES} bytes in all"
            # surrogateescape: a non-UTF-8 name stays the bytes git opens
            for value in _include_paths(data.decode("utf-8", "surrogateescape")):
                examined += 1
                if examined > MAX_INCLUDES:
                    return f"repository config includes more than {MAX_INCLUDES} paths"
                if value.startswith("%(prefix)/"):
                    return f"repository config includes a path under git's install prefix ({value})"
                expanded = os.path.expanduser(value) if value.startswith("~") else value
                target = expanded if os.path.isabs(expanded) else os.path.dirname(named) + "/" + expanded
                resolved = _physical(target)
                if resolved is None:
                    return f"repository config includes a path through /proc, /sys or /dev, or past 40 links ({value})"
                try:
                    st = os.stat(resolved)
                except OSError:
                    continue  # git skips a missing include
                if not stat.S_ISREG(st.st_mode):
                    return f"repository config includes a file that is not a regular file ({value})"
                if not any(fsguard.relative(folder, resolved) is not None for folder in allowed):
                    # git would open it for every command: a workspace must not make our
                    # children read the user's files (`path = ~/.aws/credentials`, `/etc/shadow`)
                    return f"repository config includes a file outside the workspace ({value})"
                queue.append((target, depth + 1))
    except Exception:  # a pre-check never fails the caller: git's own timeout still bounds it
        log.debug("git include pre-check failed", exc_info=True)
    return None


#: Most work-tree entries :func:`worktree_refusal` looks at; past the bound the tree is refused
#: (walked instead): above the listing's own bound (``files.MAX_FILES``).
MAX_WORKTREE_ENTRIES: Final = 300_000
#: Work-tree files git opens in every folder it walks: ``ls-files --others --exclude-standard``
#: each ``.gitignore``; ``status`` each ``.gitattributes`` of a folder holding a file whose
#: index entry is stat-dirty (a fresh commit, a touched file).
WORKTREE_GIT_FILES: Final = frozenset({".gitignore", ".gitattributes"})


def worktree_refusal(root: Path) -> str | None:
    """Why git must not list or check ``root``'s work tree, else ``None``: a ``.gitignore`` or
    ``.gitattributes`` in it that git would block on (a FIFO or a device, once links are
    followed; a link through ``/proc``, ``/sys`` or ``/dev``): one held each ``ls-files
    --others`` or ``status`` run until its timeout (10 s; git 2.39). Also a tree of more than
    :data:`MAX_WORKTREE_ENTRIES` entries (what lies past the bound is unknown). Git folders
    (``.git``) and linked folders are not walked, and ignored folders are walked too (git
    skips them: the check is conservative; a refusal costs git's recency, the walk lists the
    same files). Nothing is opened; never raises."""
    try:
        hit = _blocking_entry(os.path.abspath(root), MAX_WORKTREE_ENTRIES, WORKTREE_GIT_FILES.__contains__, ".git")
    except Exception:  # a pre-check never fails the caller: git's own timeout still bounds it
        log.debug("git work-tree pre-check failed", exc_info=True)
        return None
    if hit is None:
        return None
    path, kind = hit
    if kind == "bound":
        return f"work tree has more than {MAX_WORKTREE_ENTRIES} entries"
    rel = os.path.relpath(path, root).encode("utf-8", "backslashreplace").decode("utf-8")
    name = os.path.basename(path)
    if kind == "link":
        return f"work-tree {name} is read through /proc, /sys or /dev, or past 40 links ({rel})"
    return f"work tree holds a {name} that is a FIFO or device ({rel})"


def can_list(root: Path) -> bool:
    """Whether git may list and check ``root``'s work tree (``ls-files --others``, ``status``):
    it is a checkout (:func:`is_checkout`) holding nothing git would block on
    (:func:`worktree_refusal`; a refusal is logged). ``False``: the caller walks the folder."""
    if not is_checkout(root):
        return False
    refusal = worktree_refusal(root)
    if refusal is not None:
        log.info("git not run over the work tree of %s (%s); walking the folder", root, refusal)
        return False
    return True


class Git:
    """Hardened git for one workspace ``root`` (rules in the module docstring).

    :meth:`prepare` lists the repository's program-valued keys once (one ``git config`` run);
    :meth:`run` and :meth:`start` use them. Thread-safe once prepared.
    """

    def __init__(self, root: Path, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.root = Path(os.path.abspath(root))
        self.timeout = timeout
        self._env: dict[str, str] | None = None

    def prepare(self) -> dict[str, str]:
        """The environment for this repository's commands (computed once).

        Raises :class:`GitError` when git is missing, the config cannot be listed, it
        defines more than :data:`MAX_DYNAMIC_KEYS` program keys, or it includes a file that
        is not a regular file (:func:`include_refusal`)."""
        if self._env is not None:
            return self._env
        refusal = include_refusal(self.root)
        if refusal is not None:
            raise GitError(refusal)
        base = environment()
        names = self._exec(["config", "--list", "--name-only", "-z"], base, allow_fail=True)
        keys = _dynamic_keys(names) if names is not None else []
        if len(keys) > MAX_DYNAMIC_KEYS:
            raise GitError(f"repository config defines {len(keys)} program keys (> {MAX_DYNAMIC_KEYS})")
        self._env = environment(keys)
        return self._env

    def _popen(self, args: Sequence[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(
                argv(self.root, args),
                cwd=self.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise GitError(f"cannot start git ({exc.strerror})") from None

    def _exec(self, args: Sequence[str], env: dict[str, str], *, allow_fail: bool = False) -> bytes | None:
        proc = self._popen(args, env)
        try:
            out = _collect(proc, time.monotonic() + self.timeout, MAX_OUTPUT_BYTES)
        finally:
            if proc.poll() is None:
                _kill(proc)
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        if proc.returncode != 0:
            if allow_fail:
                return None
            raise GitError(f"git {args[0]} exited {proc.returncode}")
        return out

    def run(self, args: Sequence[str]) -> GitResult:
        """Run ``git <args>`` in the workspace; the stdout of a zero exit.

        Raises :class:`GitError` (not started, non-zero exit, timeout, output cap)."""
        out = self._exec(args, self.prepare())
        assert out is not None
        return GitResult(out)

    def run_many(self, commands: Mapping[str, Sequence[str]]) -> dict[str, bytes | None]:
        """Run several git commands side by side (one shared deadline): ``{key: stdout}``,
        ``None`` for a command that failed, timed out or hit the output cap. Raises
        :class:`GitError` only when :meth:`prepare` does."""
        env = self.prepare()
        deadline = time.monotonic() + self.timeout
        procs: dict[str, subprocess.Popen[bytes]] = {}
        outs: dict[str, bytes | None] = {key: None for key in commands}
        try:
            for key, args in commands.items():
                try:
                    procs[key] = self._popen(args, env)
                except GitError:
                    continue
            readers: dict[str, bytes | None] = {}

            # Pipes of side-by-side children must be drained together, or one that fills its
            # pipe blocks while we wait on another: read them in threads bounded by the deadline.
            def drain(key: str, proc: subprocess.Popen[bytes]) -> None:
                try:
                    readers[key] = _collect(proc, deadline, MAX_OUTPUT_BYTES)
                except GitError:
                    readers[key] = None

            threads = [threading.Thread(target=drain, args=kv, daemon=True) for kv in procs.items()]
            for t in threads:
                t.start()
            for t in threads:
                t.join(max(0.0, deadline - time.monotonic()) + 1.0)
            for key, proc in procs.items():
                data = readers.get(key)
                outs[key] = data if data is not None and proc.returncode == 0 else None
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    _kill(proc)
                    proc.wait()
                if proc.stdout is not None:
                    proc.stdout.close()
        return outs


def run(root: Path, args: Sequence[str], timeout: float = DEFAULT_TIMEOUT_S) -> GitResult:
    """``Git(root, timeout).run(args)``."""
    return Git(root, timeout).run(args)


def version(git: str = "git", timeout: float = 5.0) -> str:
    """``git --version`` without the leading ``git version`` (``dsh-search doctor``), run with
    the same hardened environment from ``/`` (no repository is near). Raises :class:`GitError`."""
    try:
        proc = subprocess.run(
            [git, "--no-pager", "--version"],
            cwd="/",
            env=environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"{git} does not run ({type(exc).__name__})") from None
    return proc.stdout.decode("utf-8", "replace").strip().removeprefix("git version ").strip() or "unknown version"
