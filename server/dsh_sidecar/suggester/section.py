"""The sticky section (plan, "The delivery": ``sectionMode: "sticky"``, off by default): one
system-prompt section carrying the current intent's target list, for ``dsh/assembleSection``.

The current intent is the last one a note named in the asking session (any session when
``sessionId`` is absent); before any note the section is the index of every active intent's
top targets. Targets are the graph's proven paths when the graph proves a candidate of the
intent, else the pack list (both in learned order). The text is cached and rebuilt when
``sectionTtl`` seconds have passed (one cache entry per current intent), or after
``dsh/toolsChanged`` or a ``dsh/dismiss`` (:meth:`StickySection.invalidate`); every rebuild is
the ledger line ``section rebuilt (ttl <n>)``. No timers: the age is checked when the section
is asked for.

The text joins every system prompt, so it is made safe as it is written (as a note is:
``notes.py``): paths in their display form (escaped, quoted when not plain), reasons and
``about`` escaped, the repository pack's prose quoted and bounded.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from dsh_sidecar.escape import display_name
from dsh_sidecar.recent import remember
from dsh_sidecar.suggester import ledger
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.classify import CompiledRow
from dsh_sidecar.suggester.dismissals import Dismissals
from dsh_sidecar.suggester.gate import INTENTS
from dsh_sidecar.suggester.knowledge import Knowledge
from dsh_sidecar.suggester.learning import rank
from dsh_sidecar.suggester.notes import shown_prose
from dsh_sidecar.suggester.prepared import PreparedTargets

#: The section's name.
SECTION_NAME: Final = "search-suggester"
#: The section's order among the harness's system-prompt sections (ours: late, after the core ones).
SECTION_ORDER: Final = 900
#: Longest section text, characters.
MAX_SECTION_CHARS: Final = 1200
#: Targets per intent in the all-intents index.
INDEX_TARGETS: Final = 3
#: Most sessions whose current intent is remembered.
MAX_SESSIONS: Final = 256


@dataclass(frozen=True)
class BuiltSection:
    """A rendered section and the key (current intent, ``None`` = index) it was built for."""

    key: str | None
    text: str
    built_at: float


def render(lines: list[str]) -> str:
    """Join ``lines`` and cut to :data:`MAX_SECTION_CHARS` at a line boundary."""
    text = "\n".join(lines)
    while len(text) > MAX_SECTION_CHARS and len(lines) > 2:
        lines = lines[:-1]
        text = "\n".join(lines)
    return text[:MAX_SECTION_CHARS]


class StickySection:
    """The cached section; ``write`` receives the ledger message, ``clock`` returns seconds."""

    def __init__(self, ttl: Callable[[], int], clock: Callable[[], float], write: Callable[[str], object]) -> None:
        self.ttl = ttl
        self.clock = clock
        self.write = write
        self._current: OrderedDict[str, str] = OrderedDict()
        self._last_intent: str | None = None
        self._built: dict[str | None, BuiltSection] = {}
        self.rebuilds = 0

    def noted(self, session_id: str, intent: str) -> None:
        """A note for ``intent`` went out in ``session_id``: it becomes the current intent."""
        remember(self._current, session_id, intent, MAX_SESSIONS)
        self._last_intent = intent

    def current(self, session_id: str | None) -> str | None:
        """The current intent of ``session_id`` (``None``: the last one of any session)."""
        if session_id is None:
            return self._last_intent
        return self._current.get(session_id)

    def invalidate(self) -> None:
        """Drop the cached text (``dsh/toolsChanged``)."""
        self._built.clear()

    def get(self, session_id: str | None, build: Callable[[str | None], str | None]) -> str | None:
        """The section text for ``session_id``; ``build(intent or None)`` renders it when the
        cache for that intent is empty or stale (``ttl`` passed). ``None``: nothing to show."""
        key = self.current(session_id)
        now = self.clock()
        built = self._built.get(key)
        if built is None or now - built.built_at >= self.ttl():
            text = build(key)
            if text is None:
                self._built.pop(key, None)
                return None
            if len(self._built) >= MAX_SESSIONS:
                self._built.clear()
            self._built[key] = built = BuiltSection(key, text, now)
            self.rebuilds += 1
            self.write(ledger.section_rebuilt(self.ttl()))
        return built.text


def build(
    intent: str | None,
    prepared: PreparedTargets,
    rows: dict[str, list[CompiledRow]],
    dismissals: Dismissals,
    knowledge: Knowledge | None,
    proves: Callable[[str, str], bool] | None,
    max_targets: int,
    repo_prose: Callable[[str], bool] = lambda intent: False,
) -> str | None:
    """The section text for the current ``intent`` (its targets, with reasons), or the index of
    every active intent's top targets (``intent`` ``None``, dismissed, or naming nothing);
    ``None`` when nothing applies. Targets in learned order (``knowledge``; ``None``: learning
    off), the ones the graph proves (``proves``) only when it proves any; ``repo_prose(intent)``
    says whether the intent's ``about`` and reasons are the repository pack's prose."""

    def listed(name: str) -> list[Target]:
        ts = [t for t in prepared.targets.get(name, []) if not dismissals.path_dismissed(name, t.path)]
        ts = rank(name, ts, knowledge) if knowledge is not None else ts
        proven = [t for t in ts if proves is not None and proves(name, t.path)]
        return proven or ts

    if intent is not None and not dismissals.family_dismissed(intent):
        ts = listed(intent)[:max_targets]
        if ts:
            prose = repo_prose(intent)
            about = next((r.about for r in reversed(rows.get(intent, ())) if r.about), None)
            what = shown_prose(about, prose) if about else intent.lower()
            return render(
                [f"search-suggester: in this repository, {what} lives here:"]
                + [f"- {display_name(t.path)} — {shown_prose(t.reason, prose)}" for t in ts]
            )
    lines = ["search-suggester: where things live in this repository:"]
    for name in INTENTS:
        if name in rows and not dismissals.family_dismissed(name):
            ts = listed(name)[:INDEX_TARGETS]
            if ts:
                lines.append(f"- {name}: {', '.join(display_name(t.path) for t in ts)}")
    return render(lines) if len(lines) > 1 else None
