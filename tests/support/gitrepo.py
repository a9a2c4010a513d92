"""Plain git for building test checkouts: the system and user config files ignored
(``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``), a fixed author and committer, and
optionally a fixed date, so a commit made in a test is the same on every machine."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: Author and committer of every test commit.
IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t"}
IDENTITY["GIT_COMMITTER_EMAIL"] = "t@example.com"


def git(root: Path, *args: str, date: str | None = None) -> str:
    """Run ``git -C root <args>`` (``date``: an ISO 8601 author and committer date) and return
    its stdout; raises ``subprocess.CalledProcessError`` when git fails."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, **IDENTITY}
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env, timeout=60)
    return done.stdout.decode("utf-8", "replace")
