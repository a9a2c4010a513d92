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


#: How a target in the folder of the line above it is shown when whole paths would leave
#: targets out of the note: its file name and these words, never a shortened path (which could
#: name another, existing file).
SAME_FOLDER: Final = " (same folder as above)"


def _render(what: str, targets: list[Target], repo_prose: bool) -> tuple[str, list[tuple[Target, str, str]], int]:
    """The note's text under the heading ``what``; the targets whose line fit (each with its
    shown path and line), and how many of them the text lists.

    Targets are listed in their order while their lines fit; a target whose line alone never
    fits is left out. When whole paths leave targets out, a target in the folder of the line
    above it is shown by its file name and :data:`SAME_FOLDER` instead (deep trees,
    ``src/main/java/org/…``, name several files of one package: the note keeps them rather than
    losing all but the first few), if that lists more of them and no target's own name holds
    those words (in any case or spacing)."""
    heading = f"search-suggester: in this repository, look here for {what}:"
    fitting = _lines(heading, targets, repo_prose, compact=False)
    # never when a name itself holds those words: its line would read like another file's short form
    if len(fitting) < min(len(targets), MAX_NOTE_TARGETS) and not any(_reads_short(t.path) for t in targets):
        compact = _lines(heading, targets, repo_prose, compact=True)
        if len(compact) > len(fitting):
            fitting = compact
    text = "\n".join([heading, *(line for _, _, line in fitting)])
    if len(text) > MAX_NOTE_CHARS:
        text = text[: MAX_NOTE_CHARS - 1] + "…"
    return text, fitting, len(fitting)


_SAME_FOLDER_WORDS: Final = " ".join(SAME_FOLDER.split()).casefold()


def _reads_short(path: str) -> bool:
    """``path`` holds :data:`SAME_FOLDER`'s words anywhere, in any case or spacing."""
    return "(" in path and _SAME_FOLDER_WORDS in " ".join(path.split()).casefold()


def _lines(heading: str, targets: list[Target], repo_prose: bool, compact: bool) -> list[tuple[Target, str, str]]:
    """The first targets whose lines fit under ``heading`` in :data:`MAX_NOTE_CHARS`, each
    ``(target, its shown path, its line)``; ``compact``: a target in the folder of the line
    above shown by its name and :data:`SAME_FOLDER`."""
    budget = MAX_NOTE_CHARS - len(heading) - 1
    fitting: list[tuple[Target, str, str]] = []
    left = budget
    above: str | None = None  # the folder of the line above
    for t in targets:
        # a name: escaped, never shortened (escape.display_name); workspace names are data, a
        # newline in one cannot add a line (class 8)
        path = escape_controls(t.path)
        folder, _, name = t.path.rpartition("/")
        shown = f"{escape_controls(name)}{SAME_FOLDER}" if compact and folder and folder == above else path
        line = f"- {shown} — {shown_prose(t.reason, repo_prose)}"
        if len(line) > budget:
            continue  # alone it would not fit (a path hundreds of characters long)
        if len(line) + 1 > left:
            break
        fitting.append((t, path, line))
        left -= len(line) + 1
        above = folder
        if len(fitting) == MAX_NOTE_TARGETS:
            break
    return fitting
