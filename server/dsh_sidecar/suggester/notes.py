"""The note: one short, factual text naming where an intent lives (≤ 600 characters, ≤ 5
targets, each with its reason), and its label (plan, "The delivery")."""

from __future__ import annotations

from typing import Final

from dsh_protocol import AdditionalContext, NoteSource

from dsh_sidecar.escape import escape_controls
from dsh_sidecar.suggester.candidates import Target

#: Longest note text, characters (plan, "The delivery").
MAX_NOTE_CHARS: Final = 600
#: Most targets a note lists (plan, "The delivery").
MAX_NOTE_TARGETS: Final = 5


def make_note(intent: str, about: str | None, targets: list[Target]) -> AdditionalContext:
    """Build the labelled note for ``targets`` (already ordered, already filtered). A target
    whose line alone would not fit in :data:`MAX_NOTE_CHARS` with the heading is left out (cut,
    it would name a path that is no file, without its reason); ``source.targets`` is then empty
    when none fits, and the caller shows no note."""
    what = escape_controls(about or intent.lower())
    lines = [f"search-suggester: in this repository, look here for {what}:"]
    budget = MAX_NOTE_CHARS - len(lines[0]) - 1
    # the first targets whose line fits: (target, its shown path, its line); workspace names
    # are data, a newline in one cannot add a line (class 8)
    fitting: list[tuple[Target, str, str]] = []
    for t in targets:
        path = escape_controls(t.path)
        line = f"- {path} — {escape_controls(t.reason)}"
        if len(line) <= budget:
            fitting.append((t, path, line))
            if len(fitting) == MAX_NOTE_TARGETS:
                break
    shown = [t for t, _, _ in fitting]
    summary = f"{intent}: {', '.join(path for _, path, _ in fitting)}"
    lines += [line for _, _, line in fitting]
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
