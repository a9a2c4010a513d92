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

import contextlib
import logging
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from dsh_sidecar.workspace.gitguard import include_refusal

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
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()


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
