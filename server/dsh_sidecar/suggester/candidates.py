"""Resolve an intent's candidates against the workspace: which targets really exist.

Sources (``packs.Candidate``):

* a **path** or glob (gitwildmatch, as in ``.gitignore``), optionally with a ``contains``
  regex the file must match — resolved once per activation (:class:`FileIndex` answers a glob
  from a basename index, never by walking the tree);
* a **kind** (graph query): the files of a path kind or content fact (``workspace/kinds.py``,
  ``workspace/content.py``), the project's own shallow files first — resolved once per
  activation and again when the facts change; with ``match: terms`` only the files the content
  index matches with the call's terms, BM25 best first (per call);
* a **symbol** relation (definitions/usages of the searched identifier, per call,
  :func:`resolve_symbols`), ranked by :func:`rank_definitions`;
* the call's own **results** (per call, :func:`resolve_results`).

Only existing targets inside the workspace are emitted, each with its pack reason. Scores follow
the plan (``score = prior × literal × scope``): literal 0.5 and scope 1.0 while nothing proves
a candidate (plan, "The graph projection"); a symbol-index hit, a content fact, a topic match
or a listed result is a proof (literal 1.0; a topic match scales it by its BM25 share of the
best match). Order is by score, then pack order.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, Protocol

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.suggester.fileindex import (
    GLOB_CHARS,
    MAX_CONTAINS_BYTES,
    MAX_CONTAINS_READS,
    MAX_GLOB_MATCHES,
    FileIndex,
    in_test_tree,
    is_fixture,
)
from dsh_sidecar.suggester.packs import Candidate, budget_exhausted, check_regex, compile_trusted, search
from dsh_sidecar.workspace import fsguard
from dsh_sidecar.workspace.facts import DOC_EXTENSIONS
from dsh_sidecar.workspace.kinds import TEST_DIRS, code_language_of

if TYPE_CHECKING:  # annotations only; the patterns are compiled in .packs
    import regex

log = logging.getLogger(__name__)

#: Literal score of a candidate the graph does not prove (plan: "the documented neutral 0.5").
NEUTRAL_LITERAL: Final = 0.5
#: Literal score of a candidate the symbol index proves (plan: "the graph's proof").
PROVEN_LITERAL: Final = 1.0
#: Scope of a candidate without a graph (plan: "scope 1.0").
NEUTRAL_SCOPE: Final = 1.0


@dataclass(frozen=True)
class Target:
    """One resolved target: repo-relative path, reason phrase, score; ``relation``: the symbol
    relation that named it (``definitions``, ``usages``; ``None`` for any other candidate), which
    the note's heading reads (:func:`dsh_sidecar.suggester.notes.make_note`)."""

    path: str
    reason: str
    score: float
    relation: Literal["definitions", "usages"] | None = None


class SymbolIndex(Protocol):
    """What the suggester reads of the workspace graph's symbol index (repo-relative paths)."""

    def definitions(self, name: str) -> list[str]: ...

    def usages(self, name: str, limit: int) -> list[str]: ...


def _content_matches(
    index: FileIndex, rel: str, pattern: regex.Pattern[str] | re.Pattern[str] | LazyPattern[str]
) -> bool:
    seen = index.contains_seen.get((pattern.pattern, rel))
    if seen is not None:  # the file has not changed since it was read
        return seen
    if budget_exhausted():  # no reading either once untrusted regexes have used their time
        return False
    try:  # regular files inside the workspace only (symlinks out, FIFOs, devices: refused)
        text = fsguard.read_text(index.root, rel, MAX_CONTAINS_BYTES)
    except OSError:
        return False
    found = index.contains_seen[(pattern.pattern, rel)] = search(pattern, text)
    return found


#: Intents about the project as a whole: their targets are the project's own files, never a
#: copy inside its test tree (a fixture workspace's ``pyproject.toml``, a Sphinx test root's
#: ``conf.py``, a test crate's ``Cargo.toml``) unless the call scopes into that tree.
PROJECT_INTENTS: Final = frozenset({"Version", "Ledger", "Dependency", "Path", "Config", "Owner", "Doc"})


def scoped_into(rel: str, scopes: Iterable[str]) -> bool:
    """Whether a call scoped to ``scopes`` (folders or files, repo-relative) looks inside the
    test tree holding ``rel``: some scope lies in the test tree and ``rel`` is at or below it."""
    for s in scopes:
        s = s.strip("/")
        if not s or s == "." or not (in_test_tree(s + "/x")):
            continue
        if rel == s or rel.startswith(s + "/"):
            return True
    return False


def _project_files_first(paths: list[str]) -> list[list[str]]:
    """A glob's matches as two tiers: the project's own files, then those in fixture folders.
    The second tier is used only when nothing of the first qualified (a Version glob must name
    the package's ``__init__.py``, not a test fixture's)."""
    own = [p for p in paths if not is_fixture(p)]
    return [own, [p for p in paths if is_fixture(p)]] if len(own) < len(paths) else [paths]


def _project_order(paths: list[str]) -> list[str]:
    """The project's own files first (not fixtures/examples/vendored), then shallow before
    deep, then by path."""
    return sorted(paths, key=lambda p: (is_fixture(p), p.count("/"), p))


def resolve(candidates: list[Candidate], index: FileIndex, trusted: bool = False) -> list[Target]:
    """Existing targets of the call-independent candidates (paths, globs, kinds without
    ``match``) in ``candidates``, best first, each path once; ``trusted``: they are all from our
    own packs (a ``contains`` regex is then compiled by ``re``, as their signals are)."""
    found: list[tuple[float, int, Target]] = []
    for order, cand in enumerate(candidates):
        if cand.per_call:
            continue
        if cand.kind is not None:
            found += _kind_targets(cand, order, index)
        elif cand.path is not None:
            found += _path_targets(cand, order, index, trusted)
    best: dict[str, tuple[float, int, Target]] = {}
    phrase: dict[str, tuple[float, str]] = {}  # the reason of the most confident (highest-prior) candidate
    for item in found:  # a path several candidates name keeps its best score (then first order)
        path = item[2].path
        old = best.get(path)
        if old is None or (item[0], item[1]) < (old[0], old[1]):
            best[path] = item
        prior = candidates[item[1]].prior
        if path not in phrase or prior > phrase[path][0]:
            phrase[path] = (prior, item[2].reason)
    ordered = sorted(best.values(), key=lambda t: (t[0], t[1]))
    return [Target(t.path, phrase[t.path][1], t.score) for _, _, t in ordered]


def _kind_targets(cand: Candidate, order: int, index: FileIndex) -> list[tuple[float, int, Target]]:
    """``(-score, order, target)`` of a ``kind`` candidate: the project's files of that kind first."""
    found: list[tuple[float, int, Target]] = []
    assert cand.kind is not None
    for rel in _project_order(index.with_kind(cand.kind)):
        if not index.exists(rel) or not index.inside(rel):
            continue
        score = cand.prior * PROVEN_LITERAL * NEUTRAL_SCOPE
        found.append((-score, order, Target(rel, cand.reason, score)))
        if len(found) >= MAX_GLOB_MATCHES:
            break
    return found


def _path_targets(
    cand: Candidate, order: int, index: FileIndex, trusted: bool = False
) -> list[tuple[float, int, Target]]:
    """``(-score, order, target)`` of a path or glob candidate (the project's own files first,
    a ``contains`` regex checked on at most :data:`MAX_CONTAINS_READS` of them)."""
    assert cand.path is not None
    contains = (compile_trusted if trusted else check_regex)(cand.contains) if cand.contains else None
    if GLOB_CHARS.search(cand.path):
        tiers = _project_files_first(index.glob(cand.path))
    else:
        tiers = [[cand.path] if index.exists(cand.path) else []]
    found: list[tuple[float, int, Target]] = []
    reads = 0
    for paths in tiers:
        if found:
            break
        for rel in paths:
            if not index.inside(rel):
                continue
            if contains is not None:
                reads += 1
                if reads > MAX_CONTAINS_READS:
                    break
                if not _content_matches(index, rel, contains):
                    continue
            score = cand.prior * NEUTRAL_LITERAL * NEUTRAL_SCOPE
            found.append((-score, order, Target(rel, cand.reason, score)))
            if len(found) >= MAX_GLOB_MATCHES:
                break
    return found


#: Re-export hubs: a definition found here is demoted when the name is defined elsewhere too.
REEXPORT_NAMES: Final = frozenset(
    {"__init__.py", "index.ts", "index.js", "index.mjs", "index.tsx", "mod.rs", "lib.rs", "__init__.pyi"}
)


@functools.lru_cache(maxsize=4096)
def is_test_path(rel: str) -> bool:
    """Whether ``rel`` is a test file by its folders or name (the last 4,096 paths' answers
    kept: the ranking asks of the same targets call after call)."""
    parts = rel.split("/")
    if any(p in TEST_DIRS for p in parts[:-1]):
        return True
    return _TEST_FILE_NAME.match(parts[-1]) is not None


#: A test file's name (``test_x.py``, ``x_test.go``, ``conftest.py``, ``x.spec.ts``, ``XTests.swift``).
_TEST_FILE_NAME: Final = LazyPattern(r"^(test_.*|.*_test\.\w+|conftest\.py|.*\.(test|spec)\.\w+|.*Tests?\.\w+)$")


@dataclass(frozen=True)
class CallContext:
    """What ranking needs of the call: its languages, whether it scopes tests, the
    identifier, and the files it reads (never named back to it)."""

    languages: frozenset[str] = frozenset()
    tests: bool = False
    name: str | None = None
    reads: frozenset[str] = frozenset()


def rank_definitions(paths: list[str], ctx: CallContext) -> list[str]:
    """Definition files best first: the query's language, then non-test files (tests only
    when the call scopes tests), then the defining module before a re-export hub
    (``__init__.py``, ``index.ts``, ``mod.rs``…), the project's own before fixtures/vendored
    code, shallow before deep; stable otherwise (the index's recency order)."""
    if not paths:
        return []
    several = len(paths) > 1

    def key(item: tuple[int, str]) -> tuple[int, int, int, int, int, int]:
        order, rel = item
        lang = code_language_of(rel)
        return (
            0 if not ctx.languages or lang in ctx.languages else 1,
            0 if ctx.tests == is_test_path(rel) else 1,
            1 if several and rel.rsplit("/", 1)[-1] in REEXPORT_NAMES else 0,
            1 if is_fixture(rel) else 0,
            rel.count("/"),
            order,
        )

    return [rel for _, rel in sorted(enumerate(paths), key=key)]


def rank_usages(paths: list[str], ctx: CallContext) -> list[str]:
    """Call sites best first: the query's language; the project's code before tests (tests
    first when the call scopes tests); fixtures/vendored last; otherwise the index's order
    (most uses first)."""

    def key(item: tuple[int, str]) -> tuple[int, int, int, int]:
        order, rel = item
        lang = code_language_of(rel)
        return (
            0 if not ctx.languages or lang in ctx.languages else 1,
            0 if ctx.tests == is_test_path(rel) else 1,
            1 if is_fixture(rel) else 0,
            order,
        )

    return [rel for _, rel in sorted(enumerate(paths), key=key)]


def resolve_symbols(
    candidates: list[Candidate], symbols: SymbolIndex, name: str, index: FileIndex, ctx: CallContext | None = None
) -> list[Target]:
    """Targets of the symbol candidates for identifier ``name``: the files the index lists,
    existing and inside the workspace, ranked (:func:`rank_definitions`, :func:`rank_usages`),
    best first; ``{name}`` in a reason becomes ``name``."""
    ctx = ctx or CallContext(name=name)
    found: list[tuple[float, int, int, Target]] = []
    seen: set[str] = set()
    for order, cand in enumerate(candidates):
        if cand.symbol is None:
            continue
        try:
            if cand.symbol == "definitions":
                paths = rank_definitions(list(symbols.definitions(name))[:200], ctx)
            else:
                paths = rank_usages(list(symbols.usages(name, MAX_GLOB_MATCHES)), ctx)
        except Exception:  # the graph is another core: a failure there is silence here
            log.warning("search-suggester: symbol index lookup failed for %r", name, exc_info=True)
            paths = []
        for rank, rel in enumerate(paths[:MAX_GLOB_MATCHES]):
            if not isinstance(rel, str) or rel in seen or not index.exists(rel) or not index.inside(rel):
                continue
            seen.add(rel)
            score = cand.prior * PROVEN_LITERAL * NEUTRAL_SCOPE
            found.append((-score, order, rank, Target(rel, cand.reason.replace("{name}", name), score, cand.symbol)))
    found.sort(key=lambda t: (t[0], t[1], t[2]))
    return [t for *_, t in found]


class ContentSearch(Protocol):
    """What topic matching reads of the content index."""

    def search(self, words: Iterable[str], limit: int = 20) -> list[tuple[str, float]]: ...


#: Most content-index hits a topic candidate looks at.
TOPIC_POOL: Final = 200
#: Least share of the best BM25 score a topic match needs to be listed.
TOPIC_MIN_SHARE: Final = 0.5


def resolve_topics(
    candidates: list[Candidate], content: ContentSearch | None, words: list[str], index: FileIndex
) -> list[Target]:
    """Targets of the ``kind`` + ``match: terms`` candidates: of the content index's BM25
    matches for ``words``, those of the candidate's kind, scored ``prior × s / s_best``; a
    match under :data:`TOPIC_MIN_SHARE` of the best is dropped."""
    wanted = [c for c in candidates if c.kind is not None and c.match == "terms"]
    if not wanted or content is None or not words:
        return []
    hits = content.search(words, TOPIC_POOL)
    if not hits:
        return []
    found: list[tuple[float, int, int, Target]] = []
    seen: set[str] = set()
    for order, cand in enumerate(candidates):
        if cand not in wanted:
            continue
        members = index.kind_members(cand.kind or "")
        ranked = [(p, sc) for p, sc in hits if p in members and not is_fixture(p)]
        if not ranked:
            continue
        best = ranked[0][1] or 1.0
        for rank, (rel, sc) in enumerate(ranked[:MAX_GLOB_MATCHES]):
            share = sc / best
            if share < TOPIC_MIN_SHARE or rel in seen or not index.exists(rel) or not index.inside(rel):
                continue
            seen.add(rel)
            score = cand.prior * PROVEN_LITERAL * share
            found.append((-score, order, rank, Target(rel, cand.reason, score)))
    found.sort(key=lambda t: (t[0], t[1], t[2]))
    return [t for *_, t in found]


def resolve_results(
    candidates: list[Candidate],
    listed: list[str],
    index: FileIndex,
    prefer: Callable[[list[str]], list[str]],
    name: str | None = None,
) -> list[Target]:
    """Targets of the ``results`` candidates: the call's listed paths that exist (of the
    candidate's kind when it has one), in the order ``prefer`` gives them; ``{name}`` in a
    reason becomes the searched identifier."""
    wanted = [c for c in candidates if c.results]
    if not wanted or not listed:
        return []
    present = [p for p in listed if index.exists(p) and index.inside(p)]
    found: list[tuple[float, int, int, Target]] = []
    seen: set[str] = set()
    for order, cand in enumerate(candidates):
        if not cand.results:
            continue
        pool = present
        if cand.kind is not None:
            members = index.kind_members(cand.kind)
            pool = [p for p in pool if p in members]
        for rank, rel in enumerate(prefer(pool)[:MAX_GLOB_MATCHES]):
            if rel in seen:
                continue
            seen.add(rel)
            score = cand.prior * PROVEN_LITERAL * NEUTRAL_SCOPE
            reason = cand.reason.replace("{name}", name) if name else cand.reason.replace(" {name}", "")
            found.append((-score, order, rank, Target(rel, reason.replace("{name}", "it"), score)))
    found.sort(key=lambda t: (t[0], t[1], t[2]))
    return [t for *_, t in found]


def merge(*groups: list[Target]) -> list[Target]:
    """Targets of several resolutions, each path once (its best score), best first (stable)."""
    best: dict[str, tuple[int, Target]] = {}
    pos = 0
    for group in groups:
        for t in group:
            old = best.get(t.path)
            if old is None or t.score > old[1].score:
                best[t.path] = (old[0] if old else pos, t)
            pos += 1
    return [t for _, t in sorted(best.values(), key=lambda x: (-x[1].score, x[0]))]


def is_doc_path(rel: str) -> bool:
    """Whether ``rel`` is a documentation file by extension."""
    return rel.lower().endswith(DOC_EXTENSIONS)
