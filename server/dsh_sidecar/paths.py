"""Where the sidecar keeps things, from the environment (standard library only).

Three places, split as uv, ruff and gh split theirs (DESIGN.md, "State"):

* **state** — what was learned and must survive: ``$DSH_HOME`` (default ``~/.dsh``): the
  bandit's posteriors and decision log, the suggester's ledger and knowledge, the fleet
  identities, and ``run/`` (one status file per running server, :mod:`dsh_sidecar.runstate`).
* **cache** — what can be rebuilt at any time and may be deleted (``dsh-search cache clean``):
  ``$DSH_CACHE_DIR``, else ``$XDG_CACHE_HOME/dsh-search``, else ``~/.cache/dsh-search`` (the
  XDG base directory default, which uv and ruff use on macOS too): the per-repository
  workspace indexes (``workspace/``: symbol cache, content FTS5 index) and the offline docs
  index (``docs/``).
* **config** — what the user wrote: ``$XDG_CONFIG_HOME/dsh-search/config.yml``, else
  ``~/.config/dsh-search/config.yml`` (:mod:`dsh_sidecar.discovery`).

Indexes written by older versions under ``$DSH_HOME/workspace/`` are never read again; ``dsh-search
cache prune`` removes them (:data:`LEGACY_INDEX`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

#: Overrides the cache directory (like ``UV_CACHE_DIR``).
CACHE_ENV: Final = "DSH_CACHE_DIR"
#: The application's folder name under the XDG cache and config homes.
APP_DIR: Final = "dsh-search"
#: Sub-folder of the cache holding the per-repository workspace indexes.
WORKSPACE_CACHE: Final = "workspace"
#: Sub-folder of the cache holding the offline docs index (:mod:`dsh_sidecar.router.localdocs`).
DOCS_CACHE: Final = "docs"
#: Sub-folder of ``$DSH_HOME`` holding the running servers' status files.
RUN_DIR: Final = "run"
#: The name of a workspace index written before the cache directory existed, under
#: ``$DSH_HOME/workspace/``: ``<slug>-<12 hex>.json`` (symbol cache) or
#: ``<slug>-<12 hex>.content.sqlite`` with its SQLite side files. Other files there (the fleet
#: identities) are state and never match.
LEGACY_INDEX: Final = re.compile(r"^[a-z0-9-]+-[0-9a-f]{12}(?:\.json|\.content\.sqlite(?:-wal|-shm|-journal)?)$")


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _home(env: Mapping[str, str]) -> Path:
    value = env.get("HOME", "").strip()
    return Path(value) if value else Path.home()


def dsh_home(env: Mapping[str, str] | None = None) -> Path:
    """``$DSH_HOME``, default ``~/.dsh`` (DESIGN.md, "State")."""
    env = _env(env)
    value = env.get("DSH_HOME", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".dsh"


def cache_home(env: Mapping[str, str] | None = None) -> Path:
    """The cache directory: ``$DSH_CACHE_DIR``, else ``$XDG_CACHE_HOME/dsh-search`` (an absolute
    path only, as the XDG spec says), else ``~/.cache/dsh-search``."""
    env = _env(env)
    explicit = env.get(CACHE_ENV, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = env.get("XDG_CACHE_HOME", "").strip()
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / APP_DIR
    return _home(env) / ".cache" / APP_DIR


def config_home(env: Mapping[str, str] | None = None) -> Path:
    """The user's config folder: ``$XDG_CONFIG_HOME/dsh-search`` (absolute only), else
    ``~/.config/dsh-search``."""
    env = _env(env)
    xdg = env.get("XDG_CONFIG_HOME", "").strip()
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / APP_DIR
    return _home(env) / ".config" / APP_DIR


def workspace_cache(env: Mapping[str, str] | None = None) -> Path:
    """Where the per-repository workspace indexes live (:data:`WORKSPACE_CACHE` of the cache)."""
    return cache_home(env) / WORKSPACE_CACHE


def docs_cache(env: Mapping[str, str] | None = None) -> Path:
    """Where the offline docs index lives (:data:`DOCS_CACHE` of the cache)."""
    return cache_home(env) / DOCS_CACHE


def run_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$DSH_HOME/run``: the running servers' status files."""
    return dsh_home(env) / RUN_DIR
