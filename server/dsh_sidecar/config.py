"""The sidecar's one validated config: ``{router, bandit, suggester, state}``.

It arrives as ``initializationOptions`` (or a ``--config`` file for the CLI); each block is
validated by its core's own model, and a bad value raises a
:class:`~dsh_sidecar.errors.ConfigError` naming the key (``router.timeoutMs``).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal, get_args

from pydantic import Field

from dsh_sidecar.bandit.config import BanditConfig, parse_bandit_config
from dsh_sidecar.capped import read_capped
from dsh_sidecar.configmodel import ConfigModel, json_problem, load_yaml, parse_block, yaml_problem
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.paths import dsh_home
from dsh_sidecar.router.config import RouterConfig, parse_router_config
from dsh_sidecar.state.config import StateConfig, parse_state_config
from dsh_sidecar.suggester.config import SuggesterConfig, parse_suggester_config

__all__ = ["BLOCKS", "SidecarConfig", "dsh_home", "load_config_file", "parse_config", "read_config_file"]

#: The top-level blocks of the config.
BLOCKS: Final = ("router", "bandit", "suggester", "state")
#: The values of ``logMessages`` (see :attr:`SidecarConfig.log_messages`).
LogMessages = Literal["all", "decisions", "none"]
LOG_MESSAGES: Final = get_args(LogMessages)
#: Top-level scalar settings.
SETTINGS: Final = ("logMessages",)
#: Largest config file read by the CLI, bytes.
MAX_CONFIG_FILE_BYTES: Final = 1024 * 1024


class SidecarConfig(ConfigModel):
    """The whole config, every block validated by its core's parser (:func:`parse_config`)."""

    router: RouterConfig = Field(default_factory=lambda: parse_router_config(None))
    """The search router: which providers, in which order, with which limits."""
    bandit: BanditConfig = Field(default_factory=lambda: parse_bandit_config(None))
    """The strategy bandit: quick or thorough per search, learned by Thompson sampling."""
    suggester: SuggesterConfig = Field(default_factory=lambda: parse_suggester_config(None))
    """The search suggester: notes telling the agent where a thing lives in the repository."""
    state: StateConfig = Field(default_factory=lambda: parse_state_config(None))
    """Where durable and shared state lives: files under $DSH_HOME (default) or a Redis/Valkey store."""
    log_messages: LogMessages = "all"
    """Which log lines are also sent to the client as window/logMessage: all (the ledger lines and the [bandit-search] lines, DESIGN.md), decisions (the [bandit-search] lines only) or none (stderr and the ledger file only)."""


def parse_config(raw: Any) -> SidecarConfig:
    """Validate ``{router?, bandit?, suggester?, state?}`` (``None`` = defaults).

    Raises :class:`ConfigError` naming the first bad key (an unknown top-level key included).
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError("initializationOptions", "must be an object with router, bandit and suggester blocks")
    for key in raw:
        if key not in BLOCKS + SETTINGS:
            raise ConfigError(str(key), f"unknown key (expected one of: {', '.join(BLOCKS + SETTINGS)})")
    settings = parse_block(SidecarConfig, {k: raw[k] for k in SETTINGS if k in raw}, "")
    return settings.model_copy(
        update={
            "router": parse_router_config(raw.get("router")),
            "bandit": parse_bandit_config(raw.get("bandit")),
            "suggester": parse_suggester_config(raw.get("suggester")),
            "state": parse_state_config(raw.get("state")),
        }
    )


def overlay_config(config: SidecarConfig, raw: Any) -> SidecarConfig:
    """``config`` with the blocks of ``raw`` (a ``workspace/didChangeConfiguration`` payload,
    whole or under ``dsh``) in place of its own, validated. Raises :class:`ConfigError`."""
    if isinstance(raw, Mapping) and "dsh" in raw and isinstance(raw["dsh"], Mapping):
        raw = raw["dsh"]
    merged = {
        "router": config.router.model_dump(by_alias=True, exclude_unset=True),
        "bandit": config.bandit.model_dump(by_alias=True, exclude_unset=True),
        "suggester": config.suggester.model_dump(by_alias=True, exclude_unset=True),
        "state": config.state.model_dump(by_alias=True, exclude_unset=True),
        "logMessages": config.log_messages,
    }
    if not isinstance(raw, Mapping):
        raise ConfigError("settings", "must be an object")
    for key, block in raw.items():
        merged[key] = block
    return parse_config(merged)


def load_config_file(path: Path) -> SidecarConfig:
    """Read a YAML or JSON config file and validate it. Raises :class:`ConfigError`."""
    return parse_config(read_config_file(path))


def read_config_file(path: Path) -> Any:
    """The raw ``{router?, bandit?, suggester?}`` document of a YAML or JSON file (``.json``:
    JSON, anything else: YAML), validated once so that a bad file fails before it is used.
    Raises :class:`ConfigError` naming the file or the key, never a value.

    Every command reads its config through here, so the path is untrusted the same way in
    each (``serve``, ``query``, ``mcp --config``/``$DSH_SEARCH_CONFIG``…): it is opened
    without waiting (``O_NONBLOCK``: a FIFO with no writer does not block), must be a regular
    file by ``fstat`` of the opened descriptor (a FIFO, ``/dev/zero``, a folder are refused
    before any read) and at most :data:`MAX_CONFIG_FILE_BYTES` are read (a file that grows
    while read cannot grow memory past it)."""
    text = _read_config_text(path)
    import yaml  # only for a --config file, not on the serve path

    try:
        # load_yaml refuses a document nested past libyaml's bound at once (the pure-Python
        # loader recursed for 1.2 s over 100,000 "[")
        raw = json.loads(text) if path.suffix == ".json" else load_yaml(text)
    except yaml.MarkedYAMLError as exc:
        if "nesting depth" in (exc.problem or ""):
            raise ConfigError(str(path), "nested too deeply") from None
        raise ConfigError(str(path), yaml_problem(exc)) from None
    except RecursionError:
        raise ConfigError(str(path), "nested too deeply") from None
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError(str(path), json_problem(exc) if path.suffix == ".json" else "not valid YAML") from None
    try:
        parse_config(raw)
    except RecursionError:
        raise ConfigError(str(path), "nested too deeply") from None
    return raw


#: Flags of a config file's open: no wait on a FIFO, no controlling terminal (a symlink is
#: followed: a user's config is often one, into a dotfiles checkout).
_CONFIG_OPEN_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)


def _read_config_text(path: Path) -> str:
    """The text of the config file ``path`` (see :func:`read_config_file` for the guards).
    Raises :class:`ConfigError` naming the file."""
    try:
        fd = os.open(path, _CONFIG_OPEN_FLAGS)
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read ({exc.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ConfigError(str(path), "cannot read (Is a directory)")
        if not stat.S_ISREG(mode):
            raise ConfigError(str(path), "not a regular file")
        data = read_capped(fd, MAX_CONFIG_FILE_BYTES)
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read ({exc.strerror})") from None
    finally:
        os.close(fd)
    if data is None:
        raise ConfigError(str(path), "config file larger than 1 MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(str(path), "not UTF-8 text") from None
