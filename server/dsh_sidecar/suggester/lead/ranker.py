"""Rank the workspace's files against a task text (``docs/SCHEME.md``, "The task lead").

Each kind of evidence is one *feature*, a score per file:

* ``path`` — a path or file name the text writes (or a GitHub link to one), matched to the
  workspace's paths by whole trailing segments; ``frame`` — a frame of a stack trace in the
  workspace's own files, innermost first (the runtime's and libraries' frames take no place);
* ``symbol`` — a code identifier the text names, resolved to the files that define it (the
  symbol index), rarer names weighing more, a file named after the name (``Gson.java`` for
  ``Gson``) most; a dotted name resolved as a module path (``sympy.printing.latex``,
  ``com.google.gson.internal.Streams``) or as ``Class.member`` (both defined in one file);
* ``error`` — a quoted message or an exception's message found in a file's text (the content
  index's words first, then the literal checked in the few files they find);
* ``text`` — BM25 of the text's rarest words over the content index (path words weigh more
  than body words there), and of the text's identifiers over the symbol index's usages;
* ``graph`` — the close neighbours of the files the ``symbol`` feature names most: the files
  defining what those files' names use the most (their imports, in effect) share a little of
  their score.
* ``bm25`` — Okapi BM25 of the whole text's search terms (every word, identifiers whole and
  split) over the code files' tokens (``lead/bm25.py``, the symbol index's usages): the plain
  retrieval of code search, as one feature among the others; ``title`` — the same for the
  title's terms alone (the issue's own summary).
* ``code`` — the files whose name begins with a name of the text's code, word for word
  (``bind:this`` → ``bind_this.ts``, a template's ``{#if}`` → ``IfBlock.ts``, ``{@debug}`` →
  ``DebugTag.ts``): short and common words count here, as the code wrote them.

The file's score is the weighted sum (:class:`Weights`, chosen on training folds:
``bench/task_lead.py``), multiplied by a demotion for tests, docs, examples and fixtures unless
the text names that file. Nothing here reads a file except :meth:`files_containing` of the
content index on a handful of candidates, and every loop is bounded by a count, so one ranking
is bounded work on any workspace.
"""

from __future__ import annotations

import math
import os
import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from itertools import islice
from typing import Final, Protocol

from dsh_sidecar.suggester.lead.bm25 import bm25_scores, term_keys
from dsh_sidecar.suggester.lead.listing import (
    MAX_FEATURE_FILES,
    MAX_PATH_MATCHES,
    MODULE_EXTENSIONS,
    Paths,
    Scores,
    add_top,
    idf,
    listing_features,
)
from dsh_sidecar.suggester.lead.mentions import Mentions, split_identifier
from dsh_sidecar.workspace import fsguard
from dsh_sidecar.workspace.facts import STOP_WORDS

#: Files named by the lead at most.
MAX_LEAD: Final = 5


class SymbolTable(Protocol):
    """The symbol index as the ranker reads it (``workspace.symbols.SymbolIndex``)."""

    @property
    def defs(self) -> Mapping[str, Collection[str]]:
        """Name → files defining it."""
        ...

    @property
    def refs(self) -> Mapping[str, Mapping[str, int]]:
        """Identifier → {file: occurrences}."""
        ...

    @property
    def lengths(self) -> Mapping[str, int]:
        """Indexed file → how many identifier tokens it has."""
        ...

    def defined_in(self, path: str) -> frozenset[str]:
        """The names ``path`` defines."""
        ...


class LeadWorkspace(Protocol):
    """The workspace graph as the ranker reads it (``workspace.graph.WorkspaceGraph``)."""

    @property
    def files(self) -> Sequence[str]:
        """The listed files, repo-relative, sorted."""
        ...

    @property
    def symbols(self) -> SymbolTable | None:
        """The symbol index, ``None`` until it is built."""
        ...

    def kind_map(self) -> Mapping[str, str]:
        """``{path: kind}``."""
        ...


class LeadContent(Protocol):
    """The content index as the ranker reads it (``workspace.content.ContentIndexer``)."""

    @property
    def ready(self) -> bool:
        """Whether a database answers lookups."""
        ...

    def search(self, words: Iterable[str], limit: int = 20) -> list[tuple[str, float]]:
        """BM25 matches of any of ``words``, best first."""
        ...

    def files_containing(self, paths: Iterable[str], literal: str, limit: int = 5) -> list[str]:
        """Of ``paths``, those whose text contains ``literal``."""
        ...


@dataclass(frozen=True)
class Weights:
    """The weight of each feature and the demotions of tests and docs. The defaults are the
    weights ``bench/task_lead.py`` chooses on the training repositories (every repository but
    the fixed held-out ones), by coordinate ascent over a fixed grid."""

    path: float = 5.0
    frame: float = 5.0
    stem: float = 1.5
    words: float = 1.0
    symbol: float = 2.0
    dotted: float = 0.0
    error: float = 5.0
    text: float = 0.0
    usage: float = 0.25
    graph: float = 0.25
    bm25: float = 1.0
    title: float = 1.0
    code: float = 0.0
    template: float = 0.0
    test: float = 0.25
    doc: float = 0.3


DEFAULT_WEIGHTS: Final = Weights()
#: The features, in the order of :class:`Weights` (its fields but the two demotions).
DEMOTIONS: Final = ("test", "doc")
FEATURES: Final = tuple(f.name for f in fields(Weights) if f.name not in DEMOTIONS)

#: A name defined in more files than this names no file in particular.
MAX_DEFINITIONS: Final = 12
#: Identifiers whose usages are read, and files a usage posting may have (more: too common).
MAX_USAGE_NAMES: Final = 60
MAX_USAGE_SHARE: Final = 0.05
#: Words sent to the content index per query, and queries.
QUERY_WORDS: Final = 16
#: Error strings checked, and candidate files read for each.
MAX_ERRORS: Final = 8
ERROR_CANDIDATES: Final = 8
#: Files of the ``symbol`` feature whose neighbours share their score, and neighbours each.
GRAPH_SEEDS: Final = 3
GRAPH_NEIGHBOURS: Final = 4
#: Folder names whose files are examples, fixtures, benchmarks: demoted like docs.
AUX_DIRS: Final = frozenset(
    {"example", "examples", "fixtures", "fixture", "samples", "sample", "demo", "demos", "benchmark", "benchmarks",
     "bench", "playground", "site", "website", "sites", "scripts", "guides", "guide", "tutorials", "tutorial"}
)  # fmt: skip
#: Prose words of the text looked up as code tokens (the rarest in the code first).
MAX_WORD_TOKENS: Final = 40
#: A package's own file.
PACKAGE_FILES: Final = ("__init__.py", "index.js", "index.ts", "mod.rs")


@dataclass(frozen=True)
class Lead:
    """One ranked file: its ``path``, ``score`` and the strongest evidence (``reason``)."""

    path: str
    score: float
    reason: str


def category(path: str, kind: str) -> str:
    """``test``, ``doc`` (docs, configuration, manifests, other files; examples, fixtures,
    benchmarks, guides; anything in a hidden folder: CI, editor and container settings) or
    ``source``."""
    if kind == "test":
        return "test"
    parts = path.lower().split("/")
    if kind in ("doc", "other", "config", "manifest") or any(p in AUX_DIRS or p.startswith(".") for p in parts[:-1]):
        return "doc"
    return "source"


def _kind_factor(path: str, kind: str, weights: Weights) -> float:
    cat = category(path, kind)
    return weights.test if cat == "test" else weights.doc if cat == "doc" else 1.0


def rank(
    text_mentions: Mentions,
    workspace: LeadWorkspace,
    content: LeadContent | None = None,
    weights: Weights = DEFAULT_WEIGHTS,
    limit: int = MAX_LEAD,
) -> list[Lead]:
    """The ``limit`` best files of ``workspace`` for the task whose :class:`Mentions` are
    ``text_mentions``, best first (``[]`` when nothing in the text points anywhere). Only files
    that resolve where the workspace's files are read are named (:func:`present_inside`): the
    listing names a symlink to a file, which may lead out of the tree or into ``.git``; while the
    listing is a past session's (a graph whose ``verified`` is ``False``:
    ``workspace/listingcache.py``), a file that is not there now is left out too."""
    scores = features(text_mentions, workspace, content, weights)
    root = getattr(workspace, "root", None)
    if root is None:
        return combine(scores, workspace, weights, limit)
    there = getattr(workspace, "verified", True) is False
    return combine(scores, workspace, weights, limit, lambda rel: present_inside(str(root), rel, there))


def present_inside(root: str, rel: str, there: bool = True) -> bool:
    """Whether ``rel`` resolves where the workspace's files are read (``fsguard.resolves_inside``:
    inside ``root``, not into its ``.git``) and, with ``there``, is there now: a past session's
    listing may name ``vendor/x.py`` after ``vendor`` became a symlink to a folder outside
    (``lexists`` follows the folders on the way), which no walk would list."""
    if there:
        try:
            if not os.path.lexists(os.path.join(root, rel)):
                return False
        except (OSError, ValueError):  # a name the file system cannot take (NUL, a lone surrogate)
            return False
    return fsguard.resolves_inside(root, rel)


def features(m: Mentions, workspace: LeadWorkspace, content: LeadContent | None, weights: Weights) -> Scores:
    """Every feature's score per file (module docstring)."""
    s = Scores()
    total = max(1, len(workspace.files))
    symbols = workspace.symbols
    lookup, task_words = listing_features(s, m, workspace.files, weights)
    if symbols is not None:
        _symbol_features(s, m, lookup, symbols, total, weights)
    if content is not None and content.ready:
        _content_features(s, m, content, weights)
    if symbols is not None:
        _usage_features(s, m, symbols, total, weights)
        _word_token_features(s, task_words, symbols, total, weights)
        if weights.bm25 > 0 or weights.title > 0:
            keys = term_keys(symbols.refs, m.terms)
            if weights.bm25 > 0:
                acc = bm25_scores(m.terms, keys, symbols.refs, symbols.lengths)
                add_top(s, "bm25", acc, "its code matches the task's words", weights.bm25)
            if weights.title > 0:
                acc = bm25_scores(dict.fromkeys(m.title_terms, 1), keys, symbols.refs, symbols.lengths)
                add_top(s, "title", acc, "its code matches the task's title", weights.title)
        if weights.graph > 0:
            seeds = sorted(s.by["symbol"].items(), key=lambda kv: (-kv[1], kv[0]))[:GRAPH_SEEDS]
            for f, v in seeds:
                for g in _neighbours(f, symbols):
                    s.add("graph", g, v, f"close to {f}", weights.graph)
    return s


def _symbol_features(s: Scores, m: Mentions, lookup: Paths, symbols: SymbolTable, total: int, weights: Weights) -> None:
    """The files that define the names (and dotted names) the task names."""
    defs = symbols.defs
    subject = set(m.subject)
    for name in m.identifiers:
        where = defs.get(name)
        if not where or len(where) > MAX_DEFINITIONS:
            continue
        base = idf(len(where), total) / math.log(1.0 + total)
        weight = (1.0 if name in subject else 0.5) * (1 + math.log(m.counts.get(name, 1)))
        for f in where:
            stem = posixpath.splitext(f.rsplit("/", 1)[-1])[0]
            named = 2.0 if stem.lower() == name.lower() else 1.0
            s.add("symbol", f, base * weight * named / len(where), f"defines {name}", weights.symbol)
    for d in m.dotted:
        _dotted(d, lookup, symbols, s, weights)


def _content_features(s: Scores, m: Mentions, content: LeadContent, weights: Weights) -> None:
    """The files holding the task's error messages, and BM25 over the content index."""
    for e in m.errors[:MAX_ERRORS]:
        words = [w for w in split_words(e) if w not in STOP_WORDS]
        if len(words) < 2:
            continue
        candidates = [p for p, _ in content.search(words, ERROR_CANDIDATES)]
        literal = _literal(e)
        hits = content.files_containing(candidates, literal, 3) if literal and candidates else []
        for f in hits:
            s.add("error", f, 1.0 / len(hits), "holds the task's error message", weights.error)
    query = _query_words(m)
    matched = content.search(query, 50) if query else []
    if matched:
        best = matched[0][1]
        for f, v in matched:
            s.add("text", f, v / best, "its words match the task's", weights.text)


def _usage_features(s: Scores, m: Mentions, symbols: SymbolTable, total: int, weights: Weights) -> None:
    """The files that use the names the task names (the symbol index's references)."""
    refs = symbols.refs
    cap = max(50, MAX_USAGE_SHARE * total)
    acc: dict[str, float] = defaultdict(float)
    for name in list(m.identifiers)[:MAX_USAGE_NAMES]:
        posting = refs.get(name)
        if not posting or len(posting) > cap:
            continue
        weight = idf(len(posting), total)
        for f, tf in posting.items():
            acc[f] += weight * tf / (tf + 1.2)
    add_top(s, "usage", acc, "uses the names the task names", weights.usage)


def _word_token_features(
    s: Scores, task_words: Mapping[str, float], symbols: SymbolTable, total: int, weights: Weights
) -> None:
    """The files whose code uses the task's prose words as tokens."""
    refs = symbols.refs
    cap = max(50, MAX_USAGE_SHARE * total)
    postings: list[tuple[int, str, Mapping[str, int]]] = []
    for w in task_words:
        for token in (w, w.capitalize()):
            posting = refs.get(token)
            if posting and len(posting) <= cap:
                postings.append((len(posting), token, posting))
    postings.sort(key=lambda t: (t[0], t[1]))
    acc_words: dict[str, float] = defaultdict(float)
    for n, token, posting in postings[:MAX_WORD_TOKENS]:
        weight = idf(n, total) * task_words[token.lower()]
        for f, tf in posting.items():
            acc_words[f] += weight * tf / (tf + 1.2)
    add_top(s, "words", acc_words, "its code uses the task's words", weights.words)


def _dotted(name: str, lookup: Paths, symbols: SymbolTable, s: Scores, weights: Weights) -> None:
    """A dotted name: the longest prefix that is a module path, the rest defined in it; else
    ``Class.member`` both defined in one file."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        stem = "/".join(parts[:k])
        hits: list[str] = []
        for ext in MODULE_EXTENSIONS:
            found, depth = lookup.match(stem + ext)
            if found and depth == k:
                hits += found
        if not hits and k >= 2:
            for pkg in PACKAGE_FILES:
                found, depth = lookup.match(stem + "/" + pkg)
                if found and depth == k + 1:
                    hits += found
        if hits and len(hits) <= MAX_PATH_MATCHES:
            rest = parts[k:]
            for f in hits:
                own = symbols.defined_in(f)
                if rest and rest[0] not in own and f.rsplit("/", 1)[-1] in PACKAGE_FILES:
                    # a package re-exporting a name (`xarray.where`): where the package defines it
                    folder = f.rsplit("/", 1)[0] + "/"
                    inner = [g for g in symbols.defs.get(rest[0], ()) if g.startswith(folder)]
                    if 0 < len(inner) <= MAX_DEFINITIONS:
                        for g in inner:
                            s.add("dotted", g, 1.0 / len(inner) / len(hits), f"defines {name}", weights.dotted)
                        continue
                bonus = 1.0 + sum(1 for r in rest if r in own)
                value = (k / len(parts)) ** 0.5 * bonus / len(hits)
                s.add("dotted", f, value / (1 + len(rest)) ** 0.5, f"is {name}", weights.dotted)
            return
    defs = symbols.defs
    for a, b in zip(parts, parts[1:]):
        where = defs.get(a)
        if not where or len(where) > MAX_DEFINITIONS:
            continue
        both = [f for f in where if b in symbols.defined_in(f)]
        for f in both:
            s.add("dotted", f, 1.0 / len(both), f"defines {a}.{b}", weights.dotted)


def _neighbours(path: str, symbols: SymbolTable) -> list[str]:
    """The files defining the names ``path`` uses most (its imports, in effect)."""
    out: dict[str, float] = {}
    own = symbols.defined_in(path)
    defs = symbols.defs
    refs = symbols.refs
    # the names this file defines, used elsewhere: who uses them most
    for name in sorted(own)[:50]:  # sorted: a frozenset iterates in hash order, which varies by process
        posting = refs.get(name)
        if not posting or len(posting) > 200:
            continue
        for f, n in posting.items():
            if f != path and name not in symbols.defined_in(f):
                out[f] = out.get(f, 0.0) + n / len(posting)
    del defs
    return [f for f, _ in sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))[:GRAPH_NEIGHBOURS]]


def split_words(text: str) -> list[str]:
    """Lower-case words (3+ letters) of ``text``, identifiers split."""
    out: list[str] = []
    for w in re.findall(r"[A-Za-z][A-Za-z0-9_]{2,40}", text):
        out += [p for p in split_identifier(w) if len(p) >= 3] or [w.lower()]
    return out


def _literal(message: str) -> str:
    """The longest run of the message without a placeholder or a value the program formatted
    in (quotes, digits, ``%s``, ``{}``): what the source file holds literally."""
    pieces = re.split(r"[\"'`{}%<>\[\]()0-9]|\s-\s|:\s", message)
    best = max((p.strip() for p in pieces), key=len, default="")
    return best if len(best) >= 12 and " " in best else ""


def _query_words(m: Mentions) -> list[str]:
    """The words sent to the content index: the title's first, then the text's by frequency."""
    seen: dict[str, None] = {}
    for w in m.title_words:
        if len(w) >= 3 and w not in STOP_WORDS:
            seen.setdefault(w, None)
    for w, _ in sorted(m.word_counts.items(), key=lambda kv: (-kv[1], kv[0])):
        seen.setdefault(w, None)
        if len(seen) >= QUERY_WORDS * 2:
            break
    return list(seen)


def combine(
    s: Scores,
    workspace: LeadWorkspace,
    weights: Weights,
    limit: int = MAX_LEAD,
    nameable: Callable[[str], bool] | None = None,
) -> list[Lead]:
    """The weighted sum of the features (the first :data:`MAX_FEATURE_FILES` files of each,
    best first, ties by path), demoted by kind, best first (ties by path); with ``nameable``,
    the best ``limit`` of the files it accepts (asked in that order, until ``limit`` are)."""
    total: dict[str, float] = defaultdict(float)
    for feature, per in s.by.items():
        w = getattr(weights, feature)
        if w <= 0:
            continue
        for f, v in sorted(per.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_FEATURE_FILES]:
            total[f] += w * v
    kinds = workspace.kind_map()
    named = set(s.by.get("path", {}))
    out = []
    for f, v in total.items():
        kind = kinds.get(f)
        if kind is None:
            continue
        factor = 1.0 if f in named else _kind_factor(f, kind, weights)
        out.append((v * factor, f))
    out.sort(key=lambda t: (-t[0], t[1]))
    if nameable is not None:
        out = list(islice((t for t in out if nameable(t[1])), limit))
    return [Lead(f, round(v, 6), s.reason.get(f, (0.0, ""))[1]) for v, f in out[:limit]]
