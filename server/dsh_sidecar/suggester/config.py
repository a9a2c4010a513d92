"""The ``suggester`` block of the sidecar config (the plan's SCHEME.md is ``docs/SCHEME.md``).

Volatile knobs hot-reload on ``workspace/didChangeConfiguration``; the structural ones
(``persistPath``, ``refreshOnBoot``) rebuild the core. ``indexPath`` is retired (superseded
by the graph projection) and accepted so old configs load.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field

from dsh_sidecar.configmodel import ConfigModel, parse_block
from dsh_sidecar.suggester.gate import BIAS
from dsh_sidecar.suggester.thresholds import MIN_CONFIDENCE

#: Knobs whose change rebuilds the core instead of hot-reloading (plan, "The configuration").
STRUCTURAL_KEYS: Final = frozenset({"persist_path", "refresh_on_boot"})
#: Upper bound of the two lifetimes below, seconds (one year).
MAX_TTL_S: Final = 365 * 86_400


class SuggesterConfig(ConfigModel):
    """Every suggester knob, with the plan's defaults (the corpus-tuned ones say why in
    docs/SCHEME.md). Durations in seconds, counts in calls."""

    enabled: bool = False
    """The suggester runs at all (plan: "The plugin ships disabled"); ``dsh-search suggest`` and
    ``replay`` always run it."""
    cooldown_calls: int = Field(default=3, ge=0, le=10_000)
    """No second note of the same intent led by the same target about the same name within this
    many calls of a session (chosen on the corpus: docs/SCHEME.md, "Noise control")."""
    max_notes_per_turn: int = Field(default=20, ge=0, le=100)
    """At most this many notes per (session, turn); a turn of a real harness is one user prompt
    with dozens of tool calls."""
    recent_window: int = Field(default=30, ge=0, le=10_000)
    """A file read within this many calls counts as recent (docs/SCHEME.md, "Noise control")."""
    max_targets: int = Field(default=5, ge=1, le=5)
    """Targets listed in one note (the note also stays at most 600 characters)."""
    bias: float = Field(default=BIAS, ge=-10, le=10)
    """The gate's ``b`` in ``k = sigmoid(sum(weights) + b)`` (plan, "The gate")."""
    min_confidence: float = Field(default=MIN_CONFIDENCE, ge=0, le=1)
    """A code intent's note whose confidence is below this is held back (``suppressed
    low-confidence``); 0 keeps every note. Chosen on the corpus (docs/SCHEME.md, "Per-note
    confidence")."""
    log_file: str | None = None
    """Where ledger lines are appended (default ``$DSH_HOME/search-suggester/ledger.log``,
    rotated to ``.1`` past 5 MiB)."""
    persist_path: str | None = None
    """The knowledge file (default ``$DSH_HOME/search-suggester/knowledge.json``); structural:
    a change rebuilds the core."""
    refresh_on_boot: bool = True
    """Rebuild the workspace graph projection on ``dsh/toolsChanged``; structural."""
    index_path: str | None = None
    """Retired by the graph projection: accepted so old configs load, never read."""
    learn: bool = True
    """Online learning: a note's targets touched soon after count as followed, else ignored."""
    seed: bool = True
    """Seed the knowledge file offline from the workspace at first start."""
    learn_window: int = Field(default=10, ge=1, le=1000)
    """Calls after a note within which touching one of its targets counts as followed."""
    dismiss_ttl: int = Field(default=86_400, ge=0, le=MAX_TTL_S)
    """Lifetime of a ``dsh/dismiss`` record, seconds (plan, "The dismissal")."""
    section_mode: Literal["off", "sticky"] = "off"
    """``sticky`` turns on the system-prompt section of ``dsh/assembleSection`` (else it
    returns null)."""
    section_ttl: int = Field(default=300, ge=0, le=MAX_TTL_S)
    """The sticky section is rebuilt after this many seconds."""
    task_lead: bool = False
    """Offer the files a task is about once per session, ranked against the task's own text
    (the prompt of Claude Code's ``UserPromptSubmit`` hook, DeepSeek Harness's first user
    message: ``dsh/taskLead``), and answer a free-text ``where_is`` that no intent matches with
    that ranking (docs/SCHEME.md, "The task lead"). Needs the suggester on."""
    builtin_packs: bool = True
    """Use the intent packs shipped with the sidecar (``dsh_packs``)."""
    first_call_wait_ms: int = Field(default=500, ge=0, le=60_000)
    """The first call of a start that needs a part of the workspace index still being built
    (its listing, symbol pass or content index) waits at most this long for it, ms, then is
    held back (``suppressed not-ready``); later calls never wait. A call's own ``waitMs``
    (``dsh/postExecute``) replaces this bound for that call."""


def parse_suggester_config(raw: Any) -> SuggesterConfig:
    """Validate the ``suggester`` block (``None`` = defaults). Raises :class:`ConfigError`."""
    return parse_block(SuggesterConfig, raw, "suggester")
