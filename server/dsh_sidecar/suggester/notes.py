"""The note: one short, factual text naming where an intent lives (≤ 600 characters, ≤ 5
targets, each with its reason), and its label (plan, "The delivery")."""

from __future__ import annotations

from typing import Final

from dsh_protocol import AdditionalContext, NoteSource

from dsh_sidecar.escape import escape_controls
from dsh_sidecar.suggester.candidates import Target

#: Longest note text, characters (issue #5).
MAX_NOTE_CHARS: Final = 600
#: Most targets a note lists (issue #5).
MAX_NOTE_TARGETS: Final = 5


def make_note(intent: str, about: str | None, targets: list[Target]) -> AdditionalContext:
    """Build the labelled note for ``targets`` (already ordered, already filtered)."""
    shown = targets[:MAX_NOTE_TARGETS]
    what = escape_controls(about or intent.lower())
    summary = f"{intent}: {', '.join(escape_controls(t.path) for t in shown)}"
    lines = [f"search-suggester: in this repository, look here for {what}:"]
    for t in shown:  # workspace names are data: a newline in one cannot add a line (class 8)
        lines.append(f"- {escape_controls(t.path)} — {escape_controls(t.reason)}")
    text = "\n".join(lines)
    while len(text) > MAX_NOTE_CHARS and len(lines) > 2:
        lines.pop()
        text = "\n".join(lines)
    if len(text) > MAX_NOTE_CHARS:
        text = text[: MAX_NOTE_CHARS - 1] + "…"
    listed = [t.path for t in shown[: len(lines) - 1]]
    return AdditionalContext(
        source=NoteSource(summary=summary[:200], intent=intent, targets=listed),
        text=text,
    )
