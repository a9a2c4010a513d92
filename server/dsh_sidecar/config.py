"""The sidecar's one validated config: ``{router, bandit, suggester, state}``.

It arrives as ``initializationOptions`` (or a ``--config`` file for the CLI); each block is
validated by its core's own model, and a bad value raises a
:class:`~dsh_sidecar.errors.ConfigError` naming the key (``router.timeoutMs``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from dsh_sidecar.bandit import BanditConfig, parse_bandit_config
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.router import RouterConfig, parse_router_config
from dsh_sidecar.state.config import StateConfig, parse_state_config
from dsh_sidecar.suggester import SuggesterConfig, parse_suggester_config

#: The top-level blocks of the config.
BLOCKS: Final = ("router", "bandit", "suggester", "state")
#: Largest config file read by the CLI, bytes.
MAX_CONFIG_FILE_BYTES: Final = 1024 * 1024


@dataclass
class SidecarConfig:
    """The whole config, every block validated."""

    router: RouterConfig = field(default_factory=lambda: parse_router_config(None))
    bandit: BanditConfig = field(default_factory=lambda: parse_bandit_config(None))
    suggester: SuggesterConfig = field(default_factory=lambda: parse_suggester_config(None))
    state: StateConfig = field(default_factory=lambda: parse_state_config(None))


def parse_config(raw: Any) -> SidecarConfig:
    """Validate ``{router?, bandit?, suggester?, state?}`` (``None`` = defaults).

    Raises :class:`ConfigError` naming the first bad key (an unknown top-level key included).
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError("initializationOptions", "must be an object with router, bandit and suggester blocks")
    for key in raw:
        if key not in BLOCKS:
            raise ConfigError(str(key), f"unknown key (expected one of: {', '.join(BLOCKS)})")
    return SidecarConfig(
        router=parse_router_config(raw.get("router")),
        bandit=parse_bandit_config(raw.get("bandit")),
        suggester=parse_suggester_config(raw.get("suggester")),
        state=parse_state_config(raw.get("state")),
    )


def load_config_file(path: Path) -> SidecarConfig:
    """Read a YAML or JSON config file and validate it. Raises :class:`ConfigError`."""
    try:
        if path.stat().st_size > MAX_CONFIG_FILE_BYTES:
            raise ConfigError(str(path), "config file larger than 1 MiB")
        text = path.read_text("utf-8")
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read ({exc.strerror})") from None
    try:
        raw = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        raise ConfigError(str(path), "not valid YAML/JSON") from None
    return parse_config(raw)


def dsh_home(env: Mapping[str, str] | None = None) -> Path:
    """``$DSH_HOME``, default ``~/.dsh`` (DESIGN.md, "State")."""
    env = os.environ if env is None else env
    value = env.get("DSH_HOME", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".dsh"
