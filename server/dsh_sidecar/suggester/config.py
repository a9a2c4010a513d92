"""The ``suggester`` block of the sidecar config (the plan's SCHEME.md is ``docs/SCHEME.md``).

Volatile knobs hot-reload on ``workspace/didChangeConfiguration``; the structural ones
(``persistPath``, ``refreshOnBoot``) rebuild the core. ``indexPath`` is retired (superseded
by the graph projection) and accepted so old configs load.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dsh_sidecar.errors import ConfigError, config_error_from_pydantic

#: Knobs whose change rebuilds the core instead of hot-reloading (plan, "The configuration").
STRUCTURAL_KEYS: Final = frozenset({"persist_path", "refresh_on_boot"})


class SuggesterConfig(BaseModel):
    """Every suggester knob, with the plan's defaults. Durations in seconds, counts in calls."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    enabled: bool = False  # plan: "The plugin ships disabled"
    cooldown_calls: int = Field(default=3, ge=0, le=10_000, alias="cooldownCalls")
    max_notes_per_turn: int = Field(default=20, ge=0, le=100, alias="maxNotesPerTurn")
    recent_window: int = Field(default=30, ge=0, le=10_000, alias="recentWindow")
    max_targets: int = Field(default=5, ge=1, le=5, alias="maxTargets")
    bias: float = Field(default=-0.6, ge=-10, le=10)
    log_file: str | None = Field(default=None, alias="logFile")
    persist_path: str | None = Field(default=None, alias="persistPath")
    refresh_on_boot: bool = Field(default=True, alias="refreshOnBoot")
    index_path: str | None = Field(default=None, alias="indexPath")  # retired: accepted, ignored
    learn: bool = True
    seed: bool = True
    # issue 6: calls after a note within which a touched target counts as followed (not in the plan)
    learn_window: int = Field(default=10, ge=1, le=1000, alias="learnWindow")
    dismiss_ttl: int = Field(default=86_400, ge=0, alias="dismissTtl")
    section_mode: Literal["off", "sticky"] = Field(default="off", alias="sectionMode")
    section_ttl: int = Field(default=300, ge=0, alias="sectionTtl")
    builtin_packs: bool = Field(default=True, alias="builtinPacks")


def parse_suggester_config(raw: Any) -> SuggesterConfig:
    """Validate the ``suggester`` block (``None`` = defaults). Raises :class:`ConfigError`."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError("suggester", "must be an object")
    try:
        return SuggesterConfig.model_validate(raw)
    except ValidationError as exc:
        raise config_error_from_pydantic("suggester", exc) from None
