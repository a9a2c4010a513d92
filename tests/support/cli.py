"""Running ``dsh-search`` as a user does: the real console script in a process of its own
(forked from the tests' ``cli`` zygote, :func:`forked_cli`, or spawned, :func:`cli`), its stdout a
pipe or a 100-column pseudo-terminal, with an environment that does not leak the host's provider
keys or terminal settings."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios
from pathlib import Path

from support.sidecar import clean_env, forked

#: Environment variables that change how Rich renders; removed so the host's shell does not leak in.
RENDER_VARS = ("NO_COLOR", "FORCE_COLOR", "COLORTERM", "CLICOLOR", "CLICOLOR_FORCE", "TTY_COMPATIBLE", "COLUMNS")
#: Bound of one CLI run, seconds (a hang fails, a slow machine does not).
RUN_TIMEOUT_S = 120


def cli() -> list[str]:
    """The venv's ``dsh-search`` console script (else ``python -m dsh_sidecar``), spawned: for the
    tests of what a process start does (a closed stdout, signals, ``PYTHON*`` settings)."""
    script = Path(sys.executable).parent / "dsh-search"
    return [str(script)] if script.exists() else [sys.executable, "-m", "dsh_sidecar"]


#: Environment variables the interpreter reads once, at its start: a run whose environment sets
#: one of them differently from this process is spawned, not forked.
START_VARS = (
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "LC_ALL",
    "LC_CTYPE",
    "LANG",
)


def forked_cli(env: dict[str, str]) -> list[str]:
    """:func:`cli` forked from the tests' ``cli`` zygote (:mod:`support.forkserver`: the
    sidecar's imports done, Typer and Rich imported by each child under its own environment):
    the same command on the same fds, without ~0.25 s of imports each run. Spawned instead when
    ``env`` changes what an interpreter reads at its start (:data:`START_VARS`)."""
    if any(env.get(k) != os.environ.get(k) for k in START_VARS) or len(cli()) != 1:
        return cli()
    return forked(cli(), kind="cli")


def env_for(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """:func:`clean_env` without the render variables, on a 100×40 xterm, plus ``extra``."""
    env = {k: v for k, v in clean_env(home).items() if k not in RENDER_VARS}
    env.update({"TERM": "xterm-256color", "COLUMNS": "100", "LINES": "40"})
    env.update(extra or {})
    return env


def run(
    args: list[str], env: dict[str, str], cwd: Path, tty: bool = False, spawn: bool = False
) -> tuple[int, str, str]:
    """Run the CLI (:func:`forked_cli`, or spawned with ``spawn``); with ``tty`` its stdout is a
    100-column pseudo-terminal (stderr stays a pipe)."""
    command = (cli() if spawn else forked_cli(env)) + args
    if not tty:
        p = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        return p.returncode, p.stdout, p.stderr
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    proc = subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    err = proc.stderr.read().decode() if proc.stderr else ""
    rc = proc.wait(timeout=RUN_TIMEOUT_S)
    return rc, b"".join(chunks).decode().replace("\r\n", "\n"), err


def relhome(tmp_path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """``DSH_HOME=home`` relative to ``cwd=tmp_path``: the printed paths are the same every run."""
    return env_for(tmp_path, {"DSH_HOME": "home", **(extra or {})})
