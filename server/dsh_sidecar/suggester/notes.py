"""The note: one short, factual text naming where an intent lives (≤ 600 characters, ≤ 5
targets, each with its reason), and its label (plan, "The delivery").

Everything in it reaches the model's context, so it is made safe here, where it is written
(docs/SECURITY.md, "the model's context"): every text through :func:`~dsh_sidecar.escape.for_model`
(a workspace name cannot add a line, a bidi or invisible character, a terminal sequence), the
repository pack's prose (its ``about`` and reasons: ``repo_prose``) quoted and bounded
(:func:`~dsh_sidecar.escape.quoted_prose`), and beside the exact paths (``targets``, for a
harness that opens them) their display forms (``displayTargets``: escaped, quoted when not a
plain path).
"""

from __future__ import annotations

from typing import Final

from dsh_protocol import AdditionalContext, NoteSource

from dsh_sidecar.escape import display_name, escape_controls, for_model, quoted_prose
from dsh_sidecar.suggester.candidates import Target

#: Longest note text, characters (plan, "The delivery").
MAX_NOTE_CHARS: Final = 600
#: Most targets a note lists (plan, "The delivery").
MAX_NOTE_TARGETS: Final = 5


def shown_prose(text: str, repo_prose: bool) -> str:
    """A pack's ``about`` or reason as a rendered note or section shows it: the repository
    pack's prose escaped, bounded and quoted; the built-in and user packs' escaped (their
    byte-exact strings)."""
    return quoted_prose(escape_controls(text)) if repo_prose else for_model(text)


def shown_field(text: str, repo_prose: bool) -> str:
    """A pack's ``about`` or reason as one field of an answer (``where_is``): escaped, on one
    line; the repository pack's prose quoted and bounded."""
    return quoted_prose(text) if repo_prose else for_model(text)


#: What a note's lines from the workspace symbol index are, for its heading: the searched
#: name's definition or its uses (the packs' ``symbol: definitions|usages`` candidates).
RELATIONS: Final = {"definitions": "definition", "usages": "uses"}


def relations_heading(targets: list[Target]) -> str | None:
    """The heading's words for lines that all come from the symbol index, naming what they are
    in the order they come (``the uses and the definition of the searched name``); ``None`` when
    a line comes from another candidate (then the pack's ``about`` heads the note)."""
    if not targets or any(t.relation is None for t in targets):
        return None
    named = list(dict.fromkeys(RELATIONS[str(t.relation)] for t in targets))
    return f"the {' and the '.join(named)} of the searched name"


def make_note(intent: str, about: str | None, targets: list[Target], repo_prose: bool = False) -> AdditionalContext:
    """Build the labelled note for ``targets`` (already ordered, already filtered). A target
    whose line alone would not fit in :data:`MAX_NOTE_CHARS` with the heading is left out (cut,
    it would name a path that is no file, without its reason); ``source.targets`` is then empty
    when none fits, and the caller shows no note. ``repo_prose``: ``about`` and the reasons
    are the repository pack's (module docstring).

    The heading says what the listed lines are: lines that all come from the symbol index are
    headed by their relations (:func:`relations_heading`), so a Usage note that lists the
    defining file reads ``the uses and the definition of the searched name``, not only ``the
    uses``; any other note by the pack's ``about`` (else the intent)."""
    what = shown_prose(about, repo_prose) if about else for_model(intent.lower())
    text, fitting, shown = _render(what, targets, repo_prose)
    relational = relations_heading([t for t, _, _ in fitting[:shown]])
    if relational is not None and relational != what:
        again = _render(relational, targets, repo_prose)
        if relations_heading([t for t, _, _ in again[1][: again[2]]]) == relational:
            text, fitting, shown = again
    summary = f"{for_model(intent)}: {', '.join(path for _, path, _ in fitting)}"
    listed = [t.path for t, _, _ in fitting[:shown]]
    return AdditionalContext(
        source=NoteSource(
            summary=summary[:200],
            intent=intent,
            targets=listed,
            display_targets=[display_name(p) for p in listed],
        ),
        text=text,
    )


def _render(what: str, targets: list[Target], repo_prose: bool) -> tuple[str, list[tuple[Target, str, str]], int]:
    """The note's text under the heading ``what``; the targets whose line fit (each with its
    shown path and line), and how many of them the text lists."""
    lines = [f"search-suggester: in this repository, look here for {what}:"]
    budget = MAX_NOTE_CHARS - len(lines[0]) - 1
    # the first targets whose line fits: (target, its shown path, its line); workspace names
    # are data, a newline in one cannot add a line (class 8)
    fitting: list[tuple[Target, str, str]] = []
    for t in targets:
        path = escape_controls(t.path)  # a name: escaped, never shortened (escape.display_name)
        line = f"- {path} — {shown_prose(t.reason, repo_prose)}"
        if len(line) <= budget:
            fitting.append((t, path, line))
            if len(fitting) == MAX_NOTE_TARGETS:
                break
    lines += [line for _, _, line in fitting]
    text = "\n".join(lines)
    while len(text) > MAX_NOTE_CHARS and len(lines) > 2:
        lines.pop()
        text = "\n".join(lines)
    if len(text) > MAX_NOTE_CHARS:
        text = text[: MAX_NOTE_CHARS - 1] + "…"
    return text, fitting, len(lines) - 1
