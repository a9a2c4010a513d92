"""The prepared targets: what one preparation resolved over the workspace listing.

Preparation runs off the request path (on the graph builder's thread in the server) whenever
the listing or the content facts change; a call reads the :class:`PreparedTargets` of the last
preparation and never lists the workspace itself.
"""

from __future__ import annotations

import bisect
import functools
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from dsh_sidecar.suggester import evidence, meant, readiness
from dsh_sidecar.suggester.candidates import (
    PROJECT_INTENTS,
    FileIndex,
    Target,
    in_test_tree,
    resolve,
)
from dsh_sidecar.suggester.classify import CompiledRow
from dsh_sidecar.suggester.fileindex import glob_matcher, sliced_copy, sliced_dict_copy
from dsh_sidecar.suggester.packs import ACTIVATION_BUDGET_S, RegexBudget, use_budget
from dsh_sidecar.suggester.ports import ContentView, WorkspaceView
from dsh_sidecar.suggester.tablecache import ListingTables, TablesCache
from dsh_sidecar.workspace.facts import (
    DOC_EXTENSIONS,
    DOCS_DIR_NAMES,
    facts_of,
    is_docs_home,
    kind_is_code,
    maybe_named_at,
    rule_named,
)
from dsh_sidecar.workspace.files import list_files
from dsh_sidecar.workspace.heap import collections_paused
from dsh_sidecar.workspace.kinds import classify as classify_path

if TYPE_CHECKING:  # the event only (workspace/projection.py imports the graph builder)
    from dsh_sidecar.workspace.projection import WorkspaceChange

#: Glob characters in a candidate path (``candidates.py``).
_GLOB_CHARS: Final = re.compile(r"[*?\[]")
#: Items per slice of a copy (``fileindex.sliced_copy``).
SLICE: Final = 8192

_TEST_MODULE: Final = frozenset({"test-module"})
#: Path kinds (and the ``code`` fact), which every file has one of: no fact of its own.
_KIND_FACTS = frozenset({"source", "other", "config", "doc", "test", "manifest", "lock", "generated", "code"})


@dataclass
class PreparedTargets:
    """What one preparation resolved: the file index (with kinds and facts), each intent's
    call-independent targets and fallbacks, and the docs roots. Replaced whole, never mutated
    by a call (a preparation on another thread swaps in a new one); ``symbols`` is a cache of
    per-call symbol lookups that lives as long as it does."""

    index: FileIndex
    targets: dict[str, list[Target]] = field(default_factory=dict)
    fallback: dict[str, list[Target]] = field(default_factory=dict)
    docs_roots: frozenset[str] = frozenset()
    symbols: OrderedDict[tuple[str, str, frozenset[str], bool], list[Target]] = field(default_factory=OrderedDict)
    fact_of: dict[str, frozenset[str]] = field(default_factory=dict)
    #: a project-level intent's prepared targets inside the test tree (``in_test_tree``): named
    #: only to a call that scopes into them
    test_tree: dict[str, list[Target]] = field(default_factory=dict)
    #: prepared before the content index's first sync: the facts read from contents are missing
    #: (``readiness.py``: the intents with such candidates wait for the next preparation)
    content_pending: bool = False


def listing(root: Path, graph: WorkspaceView | None, live: bool) -> tuple[list[str], dict[str, str]] | None:
    """``(files, {path: kind})`` to prepare from: the graph's listing when it has one; ``None``
    while a ``live`` graph source (the server's builder) is still listing (it prepares when it
    is done); else one listing of our own."""
    if graph is not None and graph.files:
        return list(graph.files), dict(graph.kind_map())
    if live and graph is None:
        return None
    files = list_files(root)
    return files, {f: classify_path(f) for f in files}


def prepare(
    root: Path,
    rows: dict[str, list[CompiledRow]],
    files: list[str],
    kind_map: dict[str, str],
    content: ContentView | None,
    cache: TablesCache | None = None,
    unverified: Callable[[], bool] | None = None,
) -> tuple[PreparedTargets, list[str]]:
    """Resolve every intent's call-independent targets over the listing; return them and the
    reasons to refuse what did not resolve (untrusted regexes out of time, a candidate that
    leaves the workspace, globs past the matching bound), in that order. ``cache``: where the
    listing's tables are kept between sessions (:func:`tables`); ``unverified``: whether the
    listing is still a past session's (``FileIndex.unverified``)."""
    index, roots, fact_of = tables(root, files, kind_map, content, cache)
    if unverified is not None:
        index.unverified = unverified
    prepared = PreparedTargets(
        index, docs_roots=roots, fact_of=fact_of, content_pending=content is not None and content.pending
    )
    budget = RegexBudget(ACTIVATION_BUDGET_S)  # shared by every untrusted row's `contains`
    for intent, intent_rows in rows.items():
        _resolve_intent(prepared, intent, intent_rows, budget)
    return prepared, _refusals(index, budget)


def _resolve_intent(prepared: PreparedTargets, intent: str, rows: list[CompiledRow], budget: RegexBudget) -> None:
    """Resolve ``intent``'s call-independent candidates over ``prepared.index`` into its tables
    (its targets, fallbacks and, for a project-level intent, those inside the test tree)."""
    cands = [c for r in rows for c in r.candidates]
    trusted = all(r.trusted for r in rows)
    with use_budget(None if trusted else budget):
        prepared.targets[intent] = resolve([c for c in cands if not c.fallback], prepared.index, trusted)
        prepared.fallback[intent] = resolve([c for c in cands if c.fallback], prepared.index, trusted)
    prepared.test_tree.pop(intent, None)
    if intent in PROJECT_INTENTS:
        for table in (prepared.targets, prepared.fallback):
            ts = table[intent]
            prepared.test_tree.setdefault(intent, []).extend(t for t in ts if in_test_tree(t.path))
            table[intent] = [t for t in ts if not in_test_tree(t.path)]


def _refusals(index: FileIndex, budget: RegexBudget, known: frozenset[str] = frozenset()) -> list[str]:
    """Why what a preparation resolved was cut (module docstring of :func:`prepare`); the
    workspace escapes in ``known`` (reported by the preparation before) are left out."""
    refusals = []
    if budget.exhausted:
        refusals.append(
            f"untrusted pack regexes used the {ACTIVATION_BUDGET_S:g} s activation budget; "
            "the remaining `contains` checks count as no match"
        )
    refusals += [f"candidate {rel}: resolves outside the workspace" for rel in index.refused if rel not in known]
    if index.glob_cut:
        refusals.append("pack globs used the activation's matching bound; the remaining globs match nothing")
    return refusals


#: File names whose coming or going may move the docs roots (``workspace/facts.docs_roots``).
_DOCS_MARKERS: Final = frozenset(
    {"conf.py", "mkdocs.yml", "index.rst", "index.md", "_config.yml", "docusaurus.config.js"}
)


def _moves_docs_roots(path: str) -> bool:
    """Whether adding or removing ``path`` may change the docs roots: a doc file (a folder's
    count of them), a docs marker, or a file in a folder named like docs."""
    folder, _, name = path.rpartition("/")
    lname = name.lower()
    if lname in _DOCS_MARKERS or lname.endswith(DOC_EXTENSIONS):
        return True
    return any(part.lower() in DOCS_DIR_NAMES for part in folder.split("/") if part)


def _all_facts(path: str, kind: str, fact_of: frozenset[str]) -> set[str]:
    """Every fact and kind a listed file is found under in ``FileIndex.facts``."""
    out = {kind, *fact_of}
    if kind_is_code(path):
        out.add("code")
    return out


def apply_change(
    old: PreparedTargets,
    change: WorkspaceChange,
    rows: dict[str, list[CompiledRow]],
) -> tuple[PreparedTargets, list[str]] | None:
    """``old`` brought up to date with one batch of changed files, in O(changed files): a new
    :class:`PreparedTargets` (``old`` is left as it is for the calls reading it: copy on write)
    and the new refusals; ``None`` when only a full preparation can follow it (a change that
    may move the docs roots, or everything changed). The file index follows the paths
    (:meth:`FileIndex.with_changes`); the facts and kinds lists change only for the changed
    paths (their content facts from the batch, the others carried over); an intent is resolved
    again only when a changed path is, was, or could be one of its targets (a literal path or a
    glob matching it, a fact or kind it had or has), its ``contains`` checks reading only the
    changed files; the cached symbol lookups of the batch's names and paths are dropped."""
    if change.full or any(_moves_docs_roots(p) for p in change.added | change.removed):
        return None
    touched = change.added | change.removed | change.modified | set(change.kinds) | set(change.facts)
    before = old.index
    index = before.with_changes(change.added, change.removed, change.kinds, change.modified)
    was: dict[str, set[str]] = {}
    now: dict[str, set[str]] = {}
    fact_of = old.fact_of  # copied on the first entry that changes
    for path in touched:
        listed_before = before.exists(path)
        if listed_before:
            was[path] = _all_facts(path, before.kind(path), old.fact_of.get(path, frozenset()))
        if not index.exists(path):
            if path in fact_of:
                fact_of = fact_of if fact_of is not old.fact_of else sliced_dict_copy(fact_of)
                del fact_of[path]
            continue
        kind = index.kind(path)
        mine = _facts_now(path, kind, change, old, before if listed_before else None)
        if frozenset(mine) != fact_of.get(path, frozenset()):
            fact_of = fact_of if fact_of is not old.fact_of else sliced_dict_copy(fact_of)
            if mine:
                fact_of[path] = frozenset(mine)
            else:
                del fact_of[path]
        now[path] = _all_facts(path, kind, fact_of.get(path, frozenset()))
    index.facts, copied = _facts_lists(before, touched, was, now)
    for fact in copied:  # the sets calls filter by, followed here rather than rebuilt on a call
        joined = [p for p in touched if fact in now.get(p, ()) and fact not in was.get(p, ())]
        left = {p for p in touched if fact in was.get(p, ()) and fact not in now.get(p, ())}
        index.follow_members(fact, before, joined, left)
    new = PreparedTargets(
        index,
        targets=dict(old.targets),
        fallback=dict(old.fallback),
        docs_roots=old.docs_roots,
        fact_of=fact_of,
        test_tree=dict(old.test_tree),
        content_pending=old.content_pending,
    )
    return new, _resolve_changed(old, new, change, rows, touched, was, now)


def _resolve_changed(
    old: PreparedTargets,
    new: PreparedTargets,
    change: WorkspaceChange,
    rows: dict[str, list[CompiledRow]],
    touched: set[str] | frozenset[str],
    was: dict[str, set[str]],
    now: dict[str, set[str]],
) -> list[str]:
    """Resolve again in ``new`` the intents a ``touched`` path may affect; carry over the symbol
    lookups the batch did not touch; the new refusals."""
    budget = RegexBudget(ACTIVATION_BUDGET_S)
    for intent, intent_rows in rows.items():
        if _affected(old, intent, intent_rows, touched, was, now):
            _resolve_intent(new, intent, intent_rows, budget)
    for key, found in old.symbols.items():
        if key[1] not in change.names and not any(t.path in touched for t in found):
            new.symbols[key] = found
    return _refusals(new.index, budget, frozenset(old.index.refused))


def _facts_now(
    path: str, kind: str, change: WorkspaceChange, old: PreparedTargets, before: FileIndex | None
) -> set[str]:
    """The facts of the listed ``path`` (of ``kind``) after ``change``: those of its name, those
    the batch read from its contents, or, for contents unchanged (``before``: the index it was
    listed in), those read before; ``docs-page`` under the docs roots (``docs-home`` for a
    root's index or README page)."""
    if path in change.facts:
        read = set(change.facts[path])
    elif before is not None:  # contents unchanged: the facts read from them stay
        old_kind = before.kind(path)
        read = set(old.fact_of.get(path, frozenset())) - facts_of(path, old_kind, None) - {"docs-page", "docs-home"}
    else:
        read = set()
    mine = facts_of(path, kind, None) | read
    if kind not in ("test", "generated") and _docs_page(path, old.docs_roots):
        mine.add("docs-page")
        if is_docs_home(path, old.docs_roots):
            mine.add("docs-home")
    return mine


def _facts_lists(
    before: FileIndex, touched: AbstractSet[str], was: dict[str, set[str]], now: dict[str, set[str]]
) -> tuple[dict[str, list[str]], set[str]]:
    """``before``'s sorted path list per fact with the ``touched`` paths moved from the facts they
    ``was`` under to those they are under ``now`` (a list is copied before its first change; empty
    ones are dropped), and the facts whose lists changed."""
    facts = dict(before.facts)
    copied: set[str] = set()
    for path in touched:
        gone, came = was.get(path, set()) - now.get(path, set()), now.get(path, set()) - was.get(path, set())
        for fact in gone | came:
            if fact not in copied:
                copied.add(fact)
                facts[fact] = sliced_copy(facts.get(fact, []))
            paths = facts[fact]
            i = bisect.bisect_left(paths, path)
            present = i < len(paths) and paths[i] == path
            if fact in gone and present:
                del paths[i]
            elif fact in came and not present:
                paths.insert(i, path)
    return {f: v for f, v in facts.items() if v}, copied


def _docs_page(path: str, roots: frozenset[str]) -> bool:
    """Whether ``path`` is a doc page under one of ``roots`` (``workspace/facts.docs_pages``)."""
    return path.lower().endswith(DOC_EXTENSIONS[:6]) and any(path.startswith(r + "/") for r in roots)


def _affected(
    old: PreparedTargets,
    intent: str,
    rows: list[CompiledRow],
    touched: set[str] | frozenset[str],
    was: dict[str, set[str]],
    now: dict[str, set[str]],
) -> bool:
    """Whether a changed path is, was or could be one of ``intent``'s prepared targets."""
    named = {t.path for table in (old.targets, old.fallback, old.test_tree) for t in table.get(intent, ())}
    if touched & named:
        return True
    for cand in (c for r in rows for c in r.candidates if not c.per_call):
        if cand.kind is not None:
            if any(cand.kind in was.get(p, ()) or cand.kind in now.get(p, ()) for p in touched):
                return True
        elif cand.path is not None:
            if cand.path in touched:
                return True
            if _GLOB_CHARS.search(cand.path) and any(map(_matcher(cand.path), touched)):
                return True
    return False


@functools.lru_cache(maxsize=1024)
def _matcher(pattern: str) -> Callable[[str], bool]:
    """A pack glob's matcher (gitwildmatch, RE2), compiled once."""
    return glob_matcher(pattern)


@dataclass
class _Listed:
    """What one pass over a listing gathers (:func:`_gather`)."""

    by_name: dict[str, list[str]] = field(default_factory=dict)
    by_dir: dict[str, list[str]] = field(default_factory=dict)
    #: ``{kind or name-only fact or "code": [paths]}``, in listing order
    groups: dict[str, list[str]] = field(default_factory=dict)
    doc_count: dict[str, int] = field(default_factory=dict)
    markers: set[str] = field(default_factory=set)
    #: the doc files a docs root may hold as pages (not tests, not generated)
    maybe_pages: list[str] = field(default_factory=list)


def _gather(files: list[str], kind_map: dict[str, str]) -> _Listed:
    """One pass over the listing (:func:`tables`), slice by slice (the GIL handed over between
    two); what a file's extension decides (code, a doc file, a docs page, maybe a docs marker)
    is decided once per extension, a sorted listing's files of one folder are added to its list
    as one run, and which files a name-level rule may give a fact to is found by bulk scans of
    them all (``facts.maybe_named_at``, ``facts.rule_named``)."""
    out = _Listed()
    by_name, by_dir, groups = out.by_name, out.by_dir, out.groups
    by_ext: dict[str, tuple[bool, bool, bool, bool]] = {}
    names: list[str] = []
    last_folder, in_folder = None, []
    for start in range(0, len(files), _GATHER_SLICE):
        if start:
            time.sleep(0)  # a preparation runs beside requests: hand them the GIL often
        for f in files[start : start + _GATHER_SLICE]:
            folder, _, name = f.rpartition("/")
            names.append(name)
            same = by_name.get(name)
            if same is None:
                by_name[name] = [f]
            else:
                same.append(f)
            if folder != last_folder:
                last_folder, in_folder = folder, by_dir.setdefault(folder, [])
            in_folder.append(f)
            kind = kind_map.get(f, "other")
            group = groups.get(kind)
            if group is None:
                groups[kind] = [f]
            else:
                group.append(f)
            dot = name.rfind(".")
            ext = name[dot:] if dot > -1 else ""
            decided = by_ext.get(ext)
            if decided is None:
                decided = by_ext[ext] = _by_extension(ext)
            is_code, is_doc, is_page, marker = decided
            if is_code:  # code by extension, in any folder (a docs example, a test)
                groups.setdefault("code", []).append(f)
                if kind == "test":  # the one name-only fact most files of a large tree may have
                    groups.setdefault("test-module", []).append(f)
            if is_doc:
                out.doc_count[folder] = out.doc_count.get(folder, 0) + 1
                if is_page and kind not in ("test", "generated"):
                    out.maybe_pages.append(f)
            if marker and name.lower() in _DOCS_MARKERS:
                out.markers.add(folder)
    special = maybe_named_at(files, names)
    for n in sorted(set(special).union(rule_named(names))):  # the rest of the name-only facts
        f = files[n]
        for fact in facts_of(f, kind_map.get(f, "other"), None) - _TEST_MODULE:
            groups.setdefault(fact, []).append(f)
    return out


#: Files between two hand-overs of the GIL in :func:`_gather`.
_GATHER_SLICE: Final = 1024


#: The extensions (lower case) of the docs markers.
_MARKER_EXTENSIONS: Final = frozenset(m[m.rfind(".") :] for m in _DOCS_MARKERS)


def _by_extension(ext: str) -> tuple[bool, bool, bool, bool]:
    """What a file name's extension ``ext`` (from its last dot, as written; ``""`` without one)
    decides: code (``facts.kind_is_code``), a doc file, a docs page's extension, and whether the
    name may be a docs marker."""
    low = ext.lower()
    return (
        kind_is_code("x" + low) if low else False,
        low.endswith(DOC_EXTENSIONS),
        low.endswith(DOC_EXTENSIONS[:6]),
        low in _MARKER_EXTENSIONS,
    )


def tables(
    root: Path,
    files: list[str],
    kind_map: dict[str, str],
    content: ContentView | None,
    cache: TablesCache | None = None,
) -> tuple[FileIndex, frozenset[str], dict[str, frozenset[str]]]:
    """The file index of the listing (by name and folder; ``facts``: ``{fact or kind: [paths,
    sorted]}`` of the path kinds, ``code``, the name-only facts, the content index's facts when
    it has run, and the docs pages), the docs roots (``workspace/facts.docs_roots``) and
    ``{path: its facts}`` (kinds left out). What the listing alone decides is made in one pass
    over it (:func:`listing_tables`: a preparation's largest part on a large tree), or taken
    back from ``cache`` when it holds the tables of this listing (``tablecache.py``: a later
    session on an unchanged tree; else they are encoded for it, written by its owner once the
    preparation is in); the content index's facts are merged in after."""
    # the file index's lists: long-lived, no cycle (frozen at the end: never scanned)
    with collections_paused(freeze=True):
        made, digest = cache.load(files, kind_map, groups_of, _moves_docs_roots) if cache is not None else (None, "")
        if made is None:
            made = listing_tables(files, kind_map)
            if cache is not None:
                cache.save(files, digest, made)
        index, roots, fact_of = _tables(root, files, kind_map, content, made)
        index.meant_cache = cache.meant if cache is not None else None  # (its missing-path tables)
        return index, roots, fact_of


def groups_of(path: str, kind: str) -> list[str]:
    """The groups of :func:`listing_tables` a listed file of ``kind`` is in (its kind, ``code``,
    its name-level facts): what one file decides alone (``tablejournal.patch``)."""
    return list(_gather([path], {path: kind}).groups)


def listing_tables(files: list[str], kind_map: dict[str, str]) -> ListingTables:
    """The tables one pass over the listing makes (:func:`_gather`), with the docs roots and
    their pages; whether a folder names a docs root is decided once per folder."""
    listed = _gather(files, kind_map)
    out = listed.groups
    roots = frozenset(_roots(listed.by_dir, listed.doc_count, listed.markers))
    # _docs_page of each, the roots as one tuple of prefixes (a C loop, not a generator a file)
    prefixes, pages = tuple(r + "/" for r in roots), DOC_EXTENSIONS[:6]
    out["docs-page"] = [f for f in listed.maybe_pages if f.startswith(prefixes) and f.lower().endswith(pages)]
    out["docs-home"] = [f for f in out["docs-page"] if is_docs_home(f, roots)]
    return ListingTables(listed.by_name, listed.by_dir, out, roots)


def _tables(
    root: Path, files: list[str], kind_map: dict[str, str], content: ContentView | None, made: ListingTables
) -> tuple[FileIndex, frozenset[str], dict[str, frozenset[str]]]:
    out = dict(made.groups)  # the content facts below replace lists, never change one
    found: dict[str, set[str]] = {}
    if content is not None:
        for fact, paths in content.facts.items():
            found.setdefault(fact, set()).update(p for p in paths if p in kind_map)  # every listed file has a kind
    for fact, extra in found.items():
        out[fact] = sorted(extra.union(out.get(fact, ())))
    facts = {k: v if k in found else sorted(v) for k, v in out.items()}
    fact_of: dict[str, set[str]] = {}
    for fact, paths in facts.items():
        if fact not in _KIND_FACTS:
            for p in paths:
                fact_of.setdefault(p, set()).add(fact)
    index = FileIndex.of_tables(root, files, made.by_name, made.by_dir)
    index.kinds = kind_map
    index.facts = facts
    return index, made.roots, {p: frozenset(v) for p, v in fact_of.items()}


def _roots(by_dir: dict[str, list[str]], doc_count: dict[str, int], markers: set[str]) -> set[str]:
    """``workspace/facts.docs_roots`` of a listing grouped by folder: a folder named like docs
    (the outermost such part of each folder's path), or a marker's folder with three doc files."""
    roots: set[str] = set()
    for folder in by_dir:
        if not folder:
            continue
        parts = folder.split("/")
        for i, part in enumerate(parts):
            if part.lower() in DOCS_DIR_NAMES:
                roots.add("/".join(parts[: i + 1]))
                break
    roots.update(folder for folder in markers if folder and doc_count.get(folder, 0) >= 3)
    return roots


def evidence_view(
    prepared: PreparedTargets | None, graph: WorkspaceView | None, content: ContentView | None = None
) -> evidence.Workspace:
    """What the structural evidence reads of the workspace (``evidence.Workspace``): the
    prepared listing's files, folders, kinds and facts, ``graph``'s symbol index (``None``
    while its symbol pass runs: a question to it is then recorded, ``readiness.asked``) and the
    section words of the manifests ``content`` indexed. Built once per call."""
    if prepared is None:
        return evidence.Workspace()
    index = graph.symbols if graph is not None else None

    def defines(path: str, name: str) -> bool:
        if index is None:
            readiness.asked(readiness.SYMBOLS)
            return False
        return name in index.defined_in(path)

    def defined(name: str) -> bool | None:
        if graph is None:
            readiness.asked(readiness.SYMBOLS)
            return None
        return bool(graph.definitions(name))

    def definitions(name: str) -> list[str]:
        if graph is None:
            readiness.asked(readiness.SYMBOLS)
            return []
        return list(graph.definitions(name))

    def listing() -> FileIndex:
        prepared.index.meant_soon()  # the missing-path tables: built off the loop at first need
        return prepared.index

    return evidence.Workspace(
        is_file=prepared.index.exists,
        is_dir=prepared.index.has_dir,
        definitions=definitions,
        kind=prepared.index.kind,
        facts=lambda p: prepared.fact_of.get(p, frozenset()),
        defines=defines,
        defined=defined,
        docs_roots=prepared.docs_roots,
        code_folder=prepared.index.code_folder,
        keys=content.keys if content is not None else (lambda p: None),
        with_fact=prepared.index.with_kind,
        named=lambda name: list(prepared.index.by_name.get(name, ())),
        files_meant=lambda p: meant.files_meant(p, listing()),
        folders_meant=lambda p: meant.folders_meant(p, listing()),
        files_under=lambda p: meant.files_under(p, listing()),
        search=lambda words: [p for p, _ in content.search(words, meant.MAX_SEARCHED)] if content is not None else [],
    )
