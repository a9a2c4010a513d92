r"""Linear-time matching of the workspace's globs and ``.gitignore`` lines (RE2).

A ``.gitignore`` line or a pack's candidate glob such as ``*a*a*a*a*a*a*a*a*a*ab/*`` becomes, in
gitwildmatch, ``[^/]*a[^/]*a…ab/…``: Python's backtracking ``re`` needs exponential time on a long
folder name of ``a``\ s (docs/SECURITY.md, class 3: ``initialize`` hung). Every such pattern from the
workspace is therefore compiled by RE2 (``google-re2``; an automaton, time linear in the path
length, no backtracking) and never by ``re``:

* :func:`ignore_spec` — pathspec's gitwildmatch parser (exact git semantics: negation, anchoring,
  ``**``, directory patterns, the "last match wins" rule) with pathspec's ``re2`` backend;
* :func:`ignore_matcher` — the same answers as ``spec.match_file``; when no line is negated, one
  combined RE2 alternation (fastest on big trees).

A line pathspec cannot parse, or RE2 cannot compile, is dropped (it matches nothing) with a debug
log: a malformed line must not stop the listing. Tests: ``tests/security/test_patterns.py``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # pathspec and RE2 are imported by the first spec built: a sidecar whose
    import pathspec  # suggester is off never builds one (cold start)

log = logging.getLogger(__name__)

#: pathspec's matching backend for every workspace pattern.
BACKEND: Final = "re2"
#: Longest pattern line kept, characters (a longer one is dropped).
MAX_LINE_CHARS: Final = 4096
#: Most distinct pattern lines kept per spec (the rest are dropped).
MAX_LINES: Final = 5_000

#: Most automaton memory per compiled pattern, bytes (RE2's ``max_mem``).
RE2_MAX_MEM: Final = 64 << 20


@functools.cache
def _re2_options() -> Any:
    """The RE2 options every workspace pattern is compiled with (:data:`RE2_MAX_MEM`)."""
    import re2

    options = re2.Options()
    options.max_mem = RE2_MAX_MEM
    return options


def _usable(line: str) -> bool:
    import pathspec
    import re2

    if len(line) > MAX_LINE_CHARS:
        return False
    try:
        spec = pathspec.GitIgnoreSpec.from_lines([line], backend=BACKEND)
    except Exception as exc:  # pathspec raises several types for a malformed line
        log.debug("ignore line dropped (%s): %.80r", type(exc).__name__, line)
        return False
    for p in spec.patterns:
        regex = getattr(p, "regex", None)
        if regex is not None:
            try:
                re2.compile(regex.pattern, _re2_options())
            except re2.error:
                log.debug("ignore line dropped (RE2): %.80r", line)
                return False
    return True


def ignore_spec(lines: Iterable[str]) -> pathspec.GitIgnoreSpec:
    """A gitwildmatch spec of ``lines`` matched by RE2 (module docstring); never raises for a
    bad line (it is dropped). Duplicate lines after the first are dropped (the last match
    decides, so a later duplicate of a line changes nothing unless a negation sits between:
    duplicates are kept then); at most :data:`MAX_LINES` lines. A set RE2 cannot compile as a
    whole gives an empty spec, with a warning."""
    import pathspec

    kept: list[str] = []
    seen: set[str] = set()
    negated = False
    for line in lines:
        if len(kept) >= MAX_LINES:
            log.warning("ignore rules cut at %d lines", MAX_LINES)
            break
        negated = negated or line.lstrip().startswith("!")
        if line in seen and not negated:
            continue
        seen.add(line)
        kept.append(line)
    try:
        return pathspec.GitIgnoreSpec.from_lines(kept, backend=BACKEND)
    except Exception:
        pass
    try:
        return pathspec.GitIgnoreSpec.from_lines([ln for ln in kept if _usable(ln)], backend=BACKEND)
    except Exception as exc:
        log.warning("ignore rules not applied: RE2 cannot compile them together (%s)", type(exc).__name__)
        return pathspec.GitIgnoreSpec.from_lines([], backend=BACKEND)


def glob_spec(pattern: str) -> pathspec.GitIgnoreSpec:
    """One gitwildmatch glob (a pack candidate) as an RE2-matched spec; an unusable one matches
    nothing."""
    return ignore_spec([pattern])


def ignore_matcher(spec: pathspec.PathSpec) -> Callable[[str], bool]:
    """``spec.match_file``, or (same answers, several times faster on big trees) one combined
    RE2 alternation when the spec has no negated (``!``) pattern, so that any match ignores.
    The alternation is matched as an ``re2.Set`` of one pattern: a path costs one call into
    RE2 (``re2.compile(...).match`` decodes spans and builds a match object in Python: 1.4 µs a
    path, against 0.7 µs; a walk asks once per file)."""
    alternation = include_alternation(spec)
    match = alternation_matcher(alternation) if alternation is not None else None
    return match if match is not None else spec.match_file


def include_alternation(spec: pathspec.PathSpec) -> str | None:
    """The RE2 alternation of ``spec``'s patterns when none is negated (:func:`ignore_matcher`
    matches it), else ``None``."""
    patterns = [p for p in spec.patterns if getattr(p, "include", None) is not None]
    if not patterns or not all(p.include for p in patterns):
        return None
    try:
        return "|".join("(?:" + p.regex.pattern.replace("(?P<ps_d>", "(?:") + ")" for p in patterns)
    except AttributeError:
        return None


def alternation_matcher(alternation: str) -> Callable[[str], bool] | None:
    """Whether a path matches ``alternation`` (:func:`include_alternation`), as one ``re2.Set``
    of one pattern; ``None`` when RE2 cannot compile it."""
    import re2

    try:
        combined = re2.Set.MatchSet(_re2_options())
        combined.Add(alternation)
        combined.Compile()
    except re2.error:
        return None
    match = combined.Match
    return lambda rel: match(rel) is not None
