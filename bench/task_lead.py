"""The task lead on Corpus II's own task texts: Hit@1/5/10 and MRR of the files each task changes,
the product's ranking (``suggester/lead``) against a plain BM25-over-files baseline built in the
same run, per language, on the fixed held-out set and leave-one-repository-out.

For each task of ``corpus/trajectories/index.jsonl`` (one per SWE-bench / SWE-PolyBench
instance: the several agents' runs of one instance share its text and gold files) the real
checkout of its base commit (``--cache DIR``, read only) is indexed the way the sidecar indexes
a workspace (the workspace graph with its symbol index, the content index: SQLite FTS5), the
task text's mentions are read (``lead/mentions.py``) and every feature of the ranker is scored
(``lead/ranker.py``). The features are kept per task (``--features DIR``, so a second run only
re-selects). The baselines (``bench/lead_baseline.py``): plain Okapi BM25 over each file's path
and text, queried with the whole task text, in eighteen variants (tokenizer × files × k1/b); the
table shows the strongest on all tasks beside the product, and the first baseline of this bench
(one FTS5 table over every listed text file, unicode61 words, an OR of the text's distinct words)
in its last column.

**Weights are chosen on training folds only** (coordinate ascent over a fixed grid, objective
Hit@5 + 0.1 × MRR): the *fixed held-out* row scores the held-out repositories
(``TRAJECTORY_HELDOUT``) with the weights chosen on the other repositories; the
*leave-one-repository-out* row scores each repository with the weights chosen on the other
nineteen. ``defaults`` scores the shipped :data:`DEFAULT_WEIGHTS` (themselves the choice on the
training repositories). Run::

    python bench/task_lead.py --cache /work/corpus-cache-ii [--only sympy,gson] [--json out.json]
    python bench/task_lead.py --scale 100000     # one ranking's time on a 100k-file workspace

``--jobs N``: the folds' weight choices in ``N`` processes (the same figures as one process).

``--scale N``: the time of one ranking (a long issue text) on a synthetic workspace of ``N``
files (``bench/suggester.py``'s), interleaved with its floor, one pass over the listing that
only finds each base name, as medians and their ratio.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import re
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any, Final

ROOT = Path(__file__).resolve().parents[1]
for _p in ("server", "protocol", "packs"):
    if str(ROOT / _p) not in sys.path:
        sys.path.insert(0, str(ROOT / _p))

# one thread for the matrix-vector products of the selection: on a shared two-core machine the
# BLAS threads only contend (the selection's evaluations took twice as long with two)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from dsh_sidecar.evaluation import TRAJECTORY_HELDOUT  # noqa: E402
from dsh_sidecar.evaluation.corpus import checkout_dir  # noqa: E402
from dsh_sidecar.suggester.lead.listing import (  # noqa: E402
    LISTING_FEATURES,
    MAX_FEATURE_FILES,
    Scores,
    listing_features,
)
from dsh_sidecar.suggester.lead.mentions import mentions  # noqa: E402
from dsh_sidecar.suggester.lead.ranker import (  # noqa: E402
    DEFAULT_WEIGHTS,
    FEATURES,
    Weights,
    category,
    features,
)
from dsh_sidecar.workspace import graph as graph_module  # noqa: E402
from dsh_sidecar.workspace.content import ContentIndexer  # noqa: E402
from dsh_sidecar.workspace.graph import WorkspaceGraph  # noqa: E402
from lead_baseline import NAMES, Vocabulary, baselines, read_text_files  # noqa: E402

TRAJECTORIES = ROOT / "corpus" / "trajectories"
#: Files kept per feature per task (the ranker's own bound: the rest count for nothing).
KEEP_PER_FEATURE = MAX_FEATURE_FILES
#: The grid of each weight.
FEATURE_GRID = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0)
DEMOTION_GRID = (0.05, 0.1, 0.25, 0.5, 1.0)
KS = (1, 5, 10)
WORD = re.compile(r"[A-Za-z0-9]+")
#: The version of each part of a kept record (``--features DIR``); a record without versions is
#: version 1 of each. Bump one when its code changes what it scores, and the next run builds
#: again that part alone: ``index`` — the features read from the symbol and content indexes
#: (:data:`INDEX_CODE`): the checkout indexed again, the baselines kept; ``listing`` — the
#: features read from the listing alone (:data:`LISTING_CODE`): scored again from a listing
#: (:func:`relist`, seconds); ``baselines`` (``bench/lead_baseline.py``): scored again from a
#: listing. A record of another task text or commit is built again whole.
RECORD_VERSIONS: Final = {"index": 1, "listing": 1, "baselines": 1}
_SERVER = ROOT / "server" / "dsh_sidecar"
#: The code each part of a record depends on: its digest is kept in the record, and a run whose
#: code differs from a record's at the same version says so (a change that scores differently
#: needs its version bumped; a comment does not).
INDEX_CODE: Final = tuple(
    _SERVER / rel
    for rel in (
        "suggester/lead/ranker.py",
        "suggester/lead/bm25.py",
        "suggester/lead/mentions.py",
        "workspace/symbols.py",
        "workspace/symbolpass.py",
        "workspace/content.py",
        "workspace/fts.py",
        "workspace/graph.py",
        "workspace/kinds.py",
    )
)
LISTING_CODE: Final = (_SERVER / "suggester/lead/listing.py", _SERVER / "suggester/lead/mentions.py")
BASELINE_CODE: Final = (ROOT / "bench" / "lead_baseline.py",)


# ------------------------------------------------------------------------------ tasks


def tasks(only: set[str] | None, families: set[str] | None = None) -> list[dict[str, Any]]:
    """One row per instance: id, repo, commit, language, gold, task text (``families``: only
    the instances some agent of these families ran)."""
    seen: dict[str, dict[str, Any]] = {}
    rows = [json.loads(raw) for raw in (TRAJECTORIES / "index.jsonl").read_text("utf-8").splitlines() if raw.strip()]
    ran: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        ran[row["instance"]].add(row["family"])
    for row in rows:
        inst = row["instance"]
        if inst in seen or not row.get("task") or (families and not ran[inst] & families):
            continue
        if only and not any(o in row["repo"] or o == row["family"] for o in only):
            continue
        text = (TRAJECTORIES / row["task"]).read_text("utf-8")
        seen[inst] = {
            "id": inst,
            "repo": row["repo"],
            "commit": row["commit"],
            "language": row.get("language") or "python",
            "gold": sorted(row.get("gold") or []),
            "text": text,
        }
    return sorted(seen.values(), key=lambda t: (t["repo"], t["commit"], t["id"]))


# ------------------------------------------------------------------------------ baseline


def bm25_baseline(root: Path, files: list[str], text: str, limit: int = 10) -> list[str]:
    """Plain BM25 over path and content of every listed text file, queried with every distinct
    word of ``text`` (OR): the top ``limit`` paths."""
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE d USING fts5(path, body)")
    rows = [(rel, data.decode("utf-8", "replace")) for rel, data in read_text_files(root, files).items()]
    con.executemany("INSERT INTO d(path, body) VALUES (?, ?)", rows)
    words = list(dict.fromkeys(w.lower() for w in WORD.findall(text)))[:2000]
    if not words:
        return []
    match = " OR ".join(f'"{w}"' for w in words)
    try:
        out = [p for (p,) in con.execute("SELECT path FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT ?", (match, limit))]
    except sqlite3.Error:
        out = []
    con.close()
    return out


# ------------------------------------------------------------------------------ features


class _Memo:
    """Symbol extraction memoised by content within one repository (the commits of one
    repository share most files): same results as the product, less CPU."""

    def __init__(self) -> None:
        self.repo: str | None = None
        self.memo: dict[tuple[str, str], Any] = {}
        self.original = graph_module.extract

    def for_repo(self, repo: str) -> None:
        if repo != self.repo:
            self.repo, self.memo = repo, {}

    def __call__(self, path: str, data: bytes) -> Any:
        key = (os.path.splitext(path)[1], hashlib.sha1(data).hexdigest())
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self.original(path, data)
        return hit


def extract_features(
    task: dict[str, Any],
    cache: Path,
    memo: _Memo,
    vocab: Vocabulary,
    old: dict[str, Any] | None = None,
    names: tuple[str, ...] = NAMES,
    first: bool = True,
) -> dict[str, Any] | None:
    """Index the checkout, score every feature, run the baselines (``old``: an earlier record of
    this task, whose baselines are kept: they depend on the checkout and the text alone): one
    JSON-able record."""
    root = checkout_dir(cache, task["repo"], task["commit"])
    if not root.is_dir():
        return None
    memo.for_repo(task["repo"])
    t0 = time.perf_counter()
    graph = WorkspaceGraph.build(root)
    with tempfile.TemporaryDirectory(prefix="task-lead-") as tmp:
        content = ContentIndexer(root, Path(tmp))
        content.start(list(graph.files))
        content.wait()
        t1 = time.perf_counter()
        m = mentions(task["text"])
        every = replace(DEFAULT_WEIGHTS, **{name: 1.0 for name in FEATURES})  # every feature scored
        scores = features(m, graph, content, every)
        t2 = time.perf_counter()
        content.close()
    kinds = graph.kind_map()
    feats = _kept(scores, kinds, list(scores.by))
    union = sorted({f for per in feats.values() for f in per})
    t3 = time.perf_counter()
    baseline = old["baseline"] if old else bm25_baseline(root, list(graph.files), task["text"]) if first else []
    plain = old.get("baselines") if old else None
    if plain is None or not set(names) <= set(plain):
        vocab.for_repo(task["repo"])
        plain = baselines(vocab, root, list(graph.files), task["text"], names)
    t4 = time.perf_counter()
    listed = set(graph.files)
    return {
        "id": task["id"],
        "repo": task["repo"],
        "language": task["language"],
        "gold": task["gold"],
        "goldPresent": sorted(g for g in task["gold"] if g in listed),
        "files": len(graph.files),
        "features": feats,
        "category": {f: category(f, kinds[f]) for f in union},
        "named": sorted(scores.by.get("path", {})),
        "baseline": baseline,
        "baselines": plain,
        "seconds": {"index": round(t1 - t0, 2), "rank": round(t2 - t1, 3), "baseline": round(t4 - t3, 2)},
    }


def _kept(scores: Scores, kinds: Any, names: Any) -> dict[str, dict[str, float]]:
    """Each feature of ``names``: its first :data:`KEEP_PER_FEATURE` listed files, rounded."""
    out: dict[str, dict[str, float]] = {}
    for name in names:
        per = scores.by.get(name, {})
        top = sorted(per.items(), key=lambda kv: (-kv[1], kv[0]))[:KEEP_PER_FEATURE]
        out[name] = {f: round(v, 6) for f, v in top if f in kinds}
    return out


def relist(rec: dict[str, Any], task: dict[str, Any], cache: Path) -> dict[str, Any] | None:
    """``rec`` with the features read from the listing alone (``LISTING_FEATURES``) scored
    again from a listing of the checkout (seconds, no symbol or content index): what a change to
    those features costs to measure."""
    root = checkout_dir(cache, task["repo"], task["commit"])
    if not root.is_dir():
        return None
    graph = WorkspaceGraph.build_files(root)
    every = replace(DEFAULT_WEIGHTS, **{name: 1.0 for name in FEATURES})
    scores = Scores()
    listing_features(scores, mentions(task["text"]), graph.files, every)
    kinds = graph.kind_map()
    rec["features"].update(_kept(scores, kinds, LISTING_FEATURES))
    union = sorted({f for per in rec["features"].values() for f in per})
    rec["category"] = {f: rec["category"].get(f) or category(f, kinds[f]) for f in union}
    rec["named"] = sorted(scores.by.get("path", {}))
    return rec


# ------------------------------------------------------------------------------ records


@functools.cache
def code_digest(paths: tuple[Path, ...]) -> str:
    """The digest of the code one part of a record depends on."""
    h = hashlib.sha1()
    for path in paths:
        h.update(path.name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"") + b"\0")
    return h.hexdigest()[:16]


def task_digest(task: dict[str, Any]) -> str:
    """What a record was built from besides the code: the repository, the commit and the text."""
    return hashlib.sha1("\0".join((task["repo"], task["commit"], task["text"])).encode()).hexdigest()[:16]


def stamp(rec: dict[str, Any], task: dict[str, Any], parts: tuple[str, ...] = tuple(RECORD_VERSIONS)) -> None:
    """Mark ``parts`` of ``rec`` as built by this tree's code, for ``task``."""
    code = {"index": INDEX_CODE, "listing": LISTING_CODE, "baselines": BASELINE_CODE}
    rec["task"] = task_digest(task)
    rec["versions"] = {**rec.get("versions", {}), **{part: RECORD_VERSIONS[part] for part in parts}}
    rec["code"] = {**rec.get("code", {}), **{part: code_digest(code[part]) for part in parts}}


def stale(rec: dict[str, Any] | None, task: dict[str, Any]) -> set[str]:
    """The parts of a kept record to build again: ``{"task"}`` (all of it) when there is none or
    it is another text's or commit's, else each part whose version is older than this tree's (a
    record without versions or a task digest is version 1 of this task)."""
    if rec is None or rec.get("task", task_digest(task)) != task_digest(task):
        return {"task"}
    have = rec.get("versions", {})
    return {part for part, v in RECORD_VERSIONS.items() if have.get(part, 1) < v}


def code_changed(rec: dict[str, Any]) -> list[str]:
    """The parts of ``rec`` (current versions) built by code other than this tree's."""
    code = {"index": INDEX_CODE, "listing": LISTING_CODE, "baselines": BASELINE_CODE}
    kept = rec.get("code", {})
    return [part for part in RECORD_VERSIONS if part in kept and kept[part] != code_digest(code[part])]


# ------------------------------------------------------------------------------ scoring


#: The features scaled so their best file scores 1 (``listing.add_top`` and the content index's text).
SCALED: Final = ("stem", "code", "template", "usage", "words", "bm25", "title", "text")


def named_whole(path: str, mentions_paths: list[str]) -> bool:
    """Whether one of the text's path mentions names ``path`` with its folder (``a/b.py``, or a
    file at the root by its name): a bare file name matched in a folder (``test_foo.py``,
    ``pyproject.toml`` → ``examples/pyproject.toml``) is as likely the reporter's own file."""
    low = path.lower()
    for mention in mentions_paths:
        parts = [p for p in mention.lower().split("/") if p and p not in (".", "..")]
        tail = "/".join(parts)
        if parts and (len(parts) >= 2 or "/" not in path) and (low == tail or low.endswith("/" + tail)):
            return True
    return False


#: A test file's name, its test marker taken off (``FooTest.java``, ``FooTests``, ``FooTestCase``,
#: ``TestFoo``, ``test_foo.py``, ``foo_test.go``, ``foo.test.ts``, ``foo.spec.js``, ``foo-spec``).
_TEST_MARK = re.compile(r"^(?:[Tt]ests?[_-]|Tests?(?=[A-Z]))|(?:[_-](?:tests?|spec)|Tests?|TestCase|Spec)$")
#: Sources one test may lift at most (a name shared by more sources says nothing of which).
MAX_PAIRED = 2
#: The share of a test's evidence the source it tests takes.
PAIR_SHARE = 1.0


def pair_key(path: str, test: bool) -> str:
    """The name a test and the source it tests share: the base name without its extensions
    (and, for a test, its test marker), lower case, without ``_``/``-`` (``FooBarTest.java``,
    ``test_foo_bar.py``, ``foo-bar.spec.ts`` → ``foobar``); ``""`` when nothing is left."""
    base = path.rsplit("/", 1)[-1]
    stem = base.split(".", 1)[0] if test else base.rsplit(".", 1)[0]
    if test:
        dotted = base.split(".")
        if len(dotted) > 2 and dotted[-2].lower() in ("test", "spec"):  # foo.test.ts, foo.spec.js
            stem = ".".join(dotted[:-2])
        else:
            stem = _TEST_MARK.sub("", stem)
    return re.sub(r"[_\-.]", "", stem).lower()


def paired_sources(files: list[str], cat: dict[str, str | None]) -> dict[int, list[int]]:
    """Each test file of ``files`` (by index) → the source files it tests: the sources whose
    :func:`pair_key` is the test's, when at most :data:`MAX_PAIRED` share it."""
    by_key: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(files):
        if cat.get(f) == "source":
            key = pair_key(f, False)
            if key:
                by_key[key].append(i)
    out: dict[int, list[int]] = {}
    for i, f in enumerate(files):
        if cat.get(f) == "test":
            src = by_key.get(pair_key(f, True), [])
            if 0 < len(src) <= MAX_PAIRED:
                out[i] = src
    return out


class Task:
    """One task's feature matrix, ready for any weights (``source_scale``: each of
    :data:`SCALED` — or of the features given — scaled by its best source file instead of its
    best file; ``whole``: the text's path mentions, and a named test or doc escapes its demotion
    only when one of them wrote its folder too, see :func:`named_whole`; ``pair``: a test's
    evidence lifts the source it tests, each feature of the source at least the test's,
    see :func:`paired_sources`)."""

    def __init__(
        self,
        rec: dict[str, Any],
        source_scale: bool | tuple[str, ...] = False,
        whole: list[str] | None = None,
        pair: bool = False,
    ) -> None:
        self.rec = rec
        self.files = list(rec["category"])
        idx = {f: i for i, f in enumerate(self.files)}
        self.m = np.zeros((len(self.files), len(FEATURES)))
        for j, name in enumerate(FEATURES):
            for f, v in rec["features"].get(name, {}).items():
                if f in idx:
                    self.m[idx[f], j] = v
        named = set(rec["named"])
        cat = rec["category"]
        if pair:  # after the test's own scores are read, before any scale
            for i, src in paired_sources(self.files, cat).items():
                for k in src:
                    self.m[k] = np.maximum(self.m[k], PAIR_SHARE * self.m[i])
        scaled = SCALED if source_scale is True else source_scale or ()
        if scaled:  # each scaled feature's best *source* file scores 1 (tests and docs may pass it)
            src = np.array([cat[f] == "source" or f in named for f in self.files], dtype=bool)
            for j, name in enumerate(FEATURES):
                if name in scaled and src.any():
                    top = self.m[src, j].max()
                    if top > 0:
                        self.m[:, j] /= top
        if whole is not None:
            named = {f for f in named if named_whole(f, whole)}
        self.is_test = np.array([cat[f] == "test" and f not in named for f in self.files])
        self.is_doc = np.array([cat[f] == "doc" and f not in named for f in self.files])
        self.order = np.array(sorted(range(len(self.files)), key=lambda i: self.files[i]))  # ties by path
        self.gold = set(rec["gold"])

    def ranking(self, w: Weights, k: int = 10) -> list[str]:
        if not self.files:
            return []
        vec = np.array([getattr(w, name) for name in FEATURES])
        s = self.m @ vec
        s = s * np.where(self.is_test, w.test, 1.0) * np.where(self.is_doc, w.doc, 1.0)
        s = s[self.order]
        top = np.argsort(-s, kind="stable")[:k]
        return [self.files[self.order[i]] for i in top if s[i] > 0]


class Pool:
    """Many tasks' feature matrices stacked, so one choice of weights ranks them all in a few
    array operations: each task's first gold rank is how many of its files score above its best
    gold file (ties: the paths before it), exactly :meth:`Task.ranking`'s order (tested against
    it in :func:`main`'s ``--check``)."""

    def __init__(self, ts: list[Task]) -> None:
        #: every task (one without a scored file is a miss) and the indexes of those with files
        self.all = len(ts)
        self.kept = np.array([i for i, t in enumerate(ts) if t.files], dtype=np.int64)
        ts = [t for t in ts if t.files]
        self.n = len(ts)
        self.m = np.vstack([t.m for t in ts]) if ts else np.zeros((0, len(FEATURES)))
        self.test = np.concatenate([t.is_test for t in ts]) if ts else np.zeros(0, bool)
        self.doc = np.concatenate([t.is_doc for t in ts]) if ts else np.zeros(0, bool)
        pos = []
        for t in ts:
            by_path = np.empty(len(t.files), dtype=np.int64)
            by_path[t.order] = np.arange(len(t.files))
            pos.append(by_path)
        self.pos = np.concatenate(pos) if pos else np.zeros(0, np.int64)
        self.gold = np.concatenate([[f in t.gold for f in t.files] for t in ts]) if ts else np.zeros(0, bool)
        sizes = np.array([len(t.files) for t in ts], dtype=np.int64)
        self.start = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if ts else np.zeros(0, np.int64)
        self.task = np.repeat(np.arange(self.n), sizes)
        self._factors: dict[tuple[float, float], np.ndarray] = {}

    def ranks(self, w: Weights) -> np.ndarray:
        """Each task's first gold rank (0: none in the first ten with a positive score), in the
        order of the tasks given."""
        out = np.zeros(self.all, np.int64)
        if self.n:
            out[self.kept] = self._ranks(w)
        return out

    def factor(self, w: Weights) -> np.ndarray:
        """Each file's demotion under ``w`` (kept per pair of demotions: the selection asks the
        same few again and again). A file is a test or a doc or neither, so one of the two
        factors is 1.0 and the product is the same number as multiplying by each in turn."""
        key = (w.test, w.doc)
        hit = self._factors.get(key)
        if hit is None:
            hit = self._factors[key] = np.where(self.test, w.test, 1.0) * np.where(self.doc, w.doc, 1.0)
        return hit

    def _ranks(self, w: Weights) -> np.ndarray:
        vec = np.array([getattr(w, name) for name in FEATURES])
        s = (self.m @ vec) * self.factor(w)
        g = np.where(self.gold & (s > 0), s, -np.inf)
        best = np.maximum.reduceat(g, self.start)
        # of the gold files scoring ``best``, the first by path
        at_best = self.gold & (s == best[self.task]) & np.isfinite(best[self.task])
        first = np.full(self.n, np.iinfo(np.int64).max)
        np.minimum.at(first, self.task[at_best], self.pos[at_best])
        above = (s > best[self.task]) | ((s == best[self.task]) & (self.pos < first[self.task]))
        r = np.bincount(self.task, weights=above, minlength=self.n).astype(np.int64) + 1
        r[~np.isfinite(best) | (r > 10)] = 0
        return r


def pool_objective(pool: Pool, w: Weights, groups: np.ndarray | None = None) -> float:
    """:func:`objective` over a :class:`Pool` (``groups``: each task's repository index, to
    average per repository instead of per task)."""
    r = pool.ranks(w)
    hit5 = ((r > 0) & (r <= 5)).astype(float)
    rr = np.where(r > 0, 1.0 / np.maximum(r, 1), 0.0)
    v = hit5 + 0.1 * rr
    if not len(v):
        return 0.0
    if groups is None:
        return float(v.sum() / max(1, pool.all))
    per = np.bincount(groups, weights=v) / np.maximum(1, np.bincount(groups))
    return float(per[np.bincount(groups) > 0].mean())


def first_hit(ranked: list[str], gold: set[str]) -> int | None:
    return next((i + 1 for i, f in enumerate(ranked) if f in gold), None)


def figures(ranks: list[int | None]) -> dict[str, float]:
    n = max(1, len(ranks))
    out = {f"hit@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in KS}
    out["mrr"] = sum(1.0 / r for r in ranks if r is not None and r <= 10) / n
    out["n"] = len(ranks)
    return out


def objective(ts: list[Task], w: Weights) -> float:
    ranks = [first_hit(t.ranking(w), t.gold) for t in ts]
    f = figures(ranks)
    return f["hit@5"] + 0.1 * f["mrr"]


#: Where the search starts: every feature 1, tests at a quarter, docs at 0.3 (fixed, so the
#: choice is the same whatever the shipped defaults are).
START = Weights(**{name: 1.0 for name in FEATURES}, test=0.25, doc=0.3)


def select(
    ts: list[Task],
    start: Weights = START,
    passes: int = 3,
    per_repository: bool = False,
    frozen: tuple[str, ...] = (),
) -> Weights:
    """Coordinate ascent over the grid from ``start`` on ``ts`` (training tasks only):
    ``per_repository``, the objective averaged per repository instead of per task (a
    repository of many tasks does not choose for the others); ``frozen``, features held at 0."""
    pool = Pool(ts)
    groups = None
    if per_repository:
        index = {r: i for i, r in enumerate(sorted({t.rec["repo"] for t in ts}))}
        groups = np.array([index[t.rec["repo"]] for t in ts], dtype=np.int64)
    start = replace(start, **dict.fromkeys(frozen, 0.0))
    best, best_v = start, pool_objective(pool, start, groups)
    for _ in range(passes):
        improved = False
        for fld in fields(Weights):
            if fld.name in frozen:
                continue
            grid = DEMOTION_GRID if fld.name in ("test", "doc") else FEATURE_GRID
            for v in grid:
                cand = replace(best, **{fld.name: v})
                cv = pool_objective(pool, cand, groups)
                if cv > best_v + 1e-9:
                    best, best_v, improved = cand, cv, True
        if not improved:
            break
    return best


#: The selections a nested choice picks from (``--nested``): objective per task or per
#: repository.
SELECTIONS: Final = {"tasks": {"per_repository": False}, "repositories": {"per_repository": True}}


#: Folds of the training repositories a nested choice scores each selection on.
NESTED_FOLDS: Final = 4


def nested_select(ts: list[Task], frozen: tuple[str, ...] = ()) -> tuple[str, Weights]:
    """The selection of :data:`SELECTIONS` whose weights score best on the training
    repositories when chosen without them (the training repositories in :data:`NESTED_FOLDS`
    folds, every repository's tasks in one fold), then its weights chosen on all of ``ts``."""
    repos = sorted({t.rec["repo"] for t in ts})
    folds = [set(repos[i::NESTED_FOLDS]) for i in range(min(NESTED_FOLDS, len(repos)))]
    best_name, best_v = "", -1.0
    for name, how in SELECTIONS.items():
        ranks: list[int | None] = []
        for fold in folds:
            w = select([t for t in ts if t.rec["repo"] not in fold], frozen=frozen, **how)
            ranks += [first_hit(t.ranking(w), t.gold) for t in ts if t.rec["repo"] in fold]
        f = figures(ranks)
        v = f["hit@5"] + 0.1 * f["mrr"]
        if v > best_v + 1e-9:
            best_name, best_v = name, v
    return best_name, select(ts, frozen=frozen, **SELECTIONS[best_name])


#: The tasks the folds of :func:`fold_weights` choose on, set before its worker processes start
#: (a forked worker reads them from its parent's memory instead of having them sent).
_FOLD_TASKS: list[Task] = []


def _fold(key: str, selection: str, frozen: tuple[str, ...]) -> tuple[str, str, dict[str, float]]:
    """One fold of :func:`fold_weights`: ``key`` ``"heldout"`` chooses on the repositories
    outside :data:`TRAJECTORY_HELDOUT`, a repository's name on every other repository; the
    nested choice's name (``""`` otherwise) and the weights."""
    ts = _FOLD_TASKS
    if key == "heldout":
        training = [t for t in ts if t.rec["repo"] not in TRAJECTORY_HELDOUT]
    else:
        training = [t for t in ts if t.rec["repo"] != key]
    if not training:
        return key, "", asdict(DEFAULT_WEIGHTS)
    if selection == "nested":
        how, w = nested_select(training, frozen)
        return key, how, asdict(w)
    return key, "", asdict(select(training, frozen=frozen, **SELECTIONS[selection]))


def fold_weights(ts: list[Task], selection: str, frozen: tuple[str, ...], jobs: int = 1) -> dict[str, Any]:
    """The weights of every fold, chosen without the tasks it scores: ``"heldout"`` (when both
    the fixed held-out and the training repositories have tasks) and each repository
    (leave-one-repository-out). ``jobs`` > 1: the folds in that many forked processes — the same
    choices as one process (each fold is deterministic and independent of the others), printed
    in the same order."""
    global _FOLD_TASKS
    repos = sorted({t.rec["repo"] for t in ts})
    keys = [*(["heldout"] if {*repos} & TRAJECTORY_HELDOUT and {*repos} - TRAJECTORY_HELDOUT else []), *repos]
    _FOLD_TASKS = ts
    try:
        if jobs > 1 and len(keys) > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            ctx = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(max_workers=min(jobs, len(keys)), mp_context=ctx) as ex:
                done = list(ex.map(_fold, keys, [selection] * len(keys), [frozen] * len(keys)))
        else:
            done = [_fold(k, selection, frozen) for k in keys]
    finally:
        _FOLD_TASKS = []
    for key, how, _ in done:
        if how:
            left = sorted(TRAJECTORY_HELDOUT & {*repos}) if key == "heldout" else [key]
            print(f"# nested selection: {how} (without {left})")
    return {key: w for key, _, w in done}


def strongest_baseline(ts: list[Task], names: tuple[str, ...] = NAMES) -> str:
    """The plain BM25 the table shows: of every tokenizer, file set and parameters
    (``lead_baseline.py``), the strongest on all tasks (Hit@5, then Hit@10, then MRR) — chosen
    in the baseline's favour, on the tasks it is judged on."""

    def strength(name: str) -> tuple[float, float, float]:
        f = figures([first_hit(t.rec["baselines"][name], t.gold) for t in ts])
        return (f["hit@5"], f["hit@10"], f["mrr"])

    return max(sorted(names), key=lambda n: (strength(n), n))


def table(rows: dict[str, dict[str, list[int | None]]], first: bool = True) -> list[str]:
    """The figures of every split and language (``first``: the first baseline was scored)."""
    out = [
        "| split | language | tasks | product Hit@1 | Hit@5 | Hit@10 | MRR | BM25 Hit@1 | Hit@5 | Hit@10 | MRR "
        "| first BM25 Hit@5 |"
    ]
    out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for key, r in rows.items():
        split, lang = key.split("|")
        p, b, o = figures(r["product"]), figures(r["plain"]), figures(r["old"])
        old = f"{o['hit@5']:.2f}" if first else "—"
        out.append(
            f"| {split} | {lang} | {p['n']} | {p['hit@1']:.2f} | **{p['hit@5']:.2f}** | {p['hit@10']:.2f} | {p['mrr']:.2f} "
            f"| {b['hit@1']:.2f} | {b['hit@5']:.2f} | {b['hit@10']:.2f} | {b['mrr']:.2f} | {old} |"
        )
    return out


def variants_table(ts: list[Task], names: tuple[str, ...] = NAMES) -> list[str]:
    """Hit@5 of every plain baseline of ``names``: all tasks, the fixed held-out set, per language."""
    names = tuple(sorted(names))
    langs = sorted({t.rec["language"] for t in ts})
    head = ["all", "held out", *langs]
    out = ["| baseline (tokenizer/files/parameters) | " + " | ".join(head) + " |"]
    out.append("| --- |" + " ---: |" * len(head))
    groups = {"all": ts, "held out": [t for t in ts if t.rec["repo"] in TRAJECTORY_HELDOUT]}
    groups.update({lang: [t for t in ts if t.rec["language"] == lang] for lang in langs})
    rows = [("first: FTS5, two columns, OR of words", lambda t: t.rec["baseline"])]
    rows += [(n, lambda t, n=n: t.rec["baselines"][n]) for n in names]
    for label, get in rows:
        cells = [f"{figures([first_hit(get(t), t.gold) for t in g])['hit@5']:.2f}" for g in groups.values()]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    return out


SCALE_TASK = (
    "helper_71 returns the wrong value for negative input\n\n"
    "Calling `helper_71(-1)` in vendor/area000/pkg01/mod71.py raises `ValueError: could not add the value` "
    "instead of returning 70. The same happens with helper_1234 and helper_99999 when the input is negative; "
    "the notes in notes78.md say the helpers accept any integer.\n"
) * 40


def scale(files: int, runs: int = 7) -> int:
    """One ranking's time on a synthetic workspace of ``files`` files, beside its floor."""
    from dsh_sidecar.suggester.lead.ranker import rank

    sys.path.insert(0, str(ROOT / "bench"))
    from suggester import synthetic_workspace

    with tempfile.TemporaryDirectory(prefix="task-lead-scale-") as tmp:
        root = Path(tmp) / "ws"
        synthetic_workspace(root, files)
        t0 = time.perf_counter()
        graph = WorkspaceGraph.build(root)
        content = ContentIndexer(root, Path(tmp) / "cache")
        content.start(list(graph.files))
        content.wait()
        print(f"# {len(graph.files)} files indexed in {time.perf_counter() - t0:.1f} s")
        floor_ms, rank_ms, mention_ms, plain_ms = [], [], [], []
        without = replace(DEFAULT_WEIGHTS, bm25=0.0, title=0.0)
        top: list[str] = []
        for _ in range(runs):
            t = time.perf_counter()
            _ = sum(1 for f in graph.files if f[f.rfind("/") + 1 :] == "x")
            floor_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            m = mentions(SCALE_TASK)
            mention_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            top = [lead.path for lead in rank(m, graph, content)]
            rank_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            rank(m, graph, content, without)
            plain_ms.append((time.perf_counter() - t) * 1000)
        content.close()

    def med(v: list[float]) -> float:
        return sorted(v)[len(v) // 2]

    print(f"# task text {len(SCALE_TASK)} characters; top: {top[:3]}")
    print("| what | median ms | × floor |")
    print("| --- | ---: | ---: |")
    print(f"| floor: one pass over the listing | {med(floor_ms):.1f} | 1.0 |")
    print(f"| mentions of the text | {med(mention_ms):.1f} | {med(mention_ms) / med(floor_ms):.1f} |")
    print(f"| ranking | {med(rank_ms):.1f} | {med(rank_ms) / med(floor_ms):.1f} |")
    print(f"| ranking without the code's BM25 | {med(plain_ms):.1f} | {med(plain_ms) / med(floor_ms):.1f} |")
    return 0


def kept_record(
    t: dict[str, Any],
    old: dict[str, Any] | None,
    args: argparse.Namespace,
    memo: _Memo,
    vocab: Vocabulary,
    names: tuple[str, ...],
) -> tuple[dict[str, Any] | None, str]:
    """The record of task ``t``: ``old`` as kept, or with what is stale in it built again
    (:func:`stale`; ``--refresh``: the index part; ``--relist``: the listing part), and what was
    built (``""``: nothing)."""
    cache = Path(args.cache)
    todo = stale(old, t) | ({"index"} if args.refresh else set()) | ({"listing"} if args.relist else set())
    if "task" in todo or "index" in todo:
        keep = None if "task" in todo or "baselines" in todo else old
        rec = extract_features(t, cache, memo, vocab, keep, names, not args.no_first)
        if rec is not None and keep is not None:  # the baselines kept, and what built them
            rec["versions"], rec["code"] = keep.get("versions", {}), keep.get("code", {})
            stamp(rec, t, ("index", "listing"))
        elif rec is not None:
            stamp(rec, t)
        return rec, "built" if keep is None else "indexed"
    assert old is not None
    rec, did = old, []
    if "listing" in todo:
        rec = relist(rec, t, cache)
        if rec is None:
            return None, "relisted"
        stamp(rec, t, ("listing",))
        did.append("relisted")
    if "baselines" in todo or not set(names) <= set(rec.get("baselines", ())):
        root = checkout_dir(cache, t["repo"], t["commit"])
        vocab.for_repo(t["repo"])
        listed = list(WorkspaceGraph.build_files(root).files)
        fresh = "baselines" in todo
        rec["baselines"] = {
            **({} if fresh else rec.get("baselines", {})),
            **baselines(vocab, root, listed, t["text"], names),
        }
        if fresh:
            stamp(rec, t, ("baselines",))
        did.append("baselines")
    if did and "task" not in rec:  # a record of before the versions: stamped as what it is
        rec["task"] = task_digest(t)
    return rec, " ".join(did)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", type=Path, default=os.environ.get("DSH_CORPUS_CACHE"), help="real checkouts (read only)")
    p.add_argument(
        "--features", type=Path, default=Path(tempfile.gettempdir()) / "dsh-task-lead", help="feature records"
    )
    p.add_argument("--only", default="", help="comma-separated repository substrings")
    p.add_argument("--families", default="", help="comma-separated agent families: only the tasks they ran")
    p.add_argument(
        "--reverse", action="store_true", help="score the tasks last to first (a second process on the same records)"
    )
    p.add_argument("--refresh", action="store_true", help="score the features again (else reuse the records)")
    p.add_argument("--kept-only", action="store_true", help="score only the tasks that have a record (extract none)")
    p.add_argument(
        "--relist", action="store_true", help="score the listing's features again on the kept records (seconds a task)"
    )
    p.add_argument("--json", type=Path, help="write the figures here")
    p.add_argument(
        "--baselines",
        default=",".join(NAMES),
        help="comma-separated plain baselines to score (default: all eighteen; fewer: a cheaper run)",
    )
    p.add_argument("--no-first", action="store_true", help="leave out the first baseline (FTS5, an OR of words)")
    p.add_argument("--frozen", default="", help="comma-separated features held at 0 in every selection")
    p.add_argument(
        "--selection",
        choices=(*SELECTIONS, "nested"),
        default="tasks",
        help="the objective averaged per task or per repository, or chosen per fold on its training repositories",
    )
    p.add_argument(
        "--source-scale", action="store_true", help="scale each feature by its best source file (not a test or doc)"
    )
    p.add_argument(
        "--source-scale-only",
        default="",
        help="comma-separated features scaled by their best source file (the rest not)",
    )
    p.add_argument(
        "--named-whole",
        action="store_true",
        help="a named test or doc escapes its demotion only when the text wrote its folder too",
    )
    p.add_argument(
        "--pair-tests", action="store_true", help="a test's evidence lifts the source file it tests (by name)"
    )
    p.add_argument(
        "--jobs", type=int, default=1, help="choose the folds' weights in this many processes (the same figures)"
    )
    p.add_argument("--scale", type=int, help="time one ranking on a synthetic workspace of this many files")
    args = p.parse_args(argv)
    if args.scale:
        return scale(args.scale)
    only = {o for o in args.only.split(",") if o} or None
    names = tuple(n for n in args.baselines.split(",") if n)
    if not names or not set(names) <= set(NAMES):
        p.error(f"--baselines: names among {', '.join(NAMES)}")
    frozen = tuple(f for f in args.frozen.split(",") if f)
    if not set(frozen) <= set(FEATURES):
        p.error(f"--frozen: features among {', '.join(FEATURES)}")
    if args.cache is None or not Path(args.cache).is_dir():
        p.error("--cache DIR (or DSH_CORPUS_CACHE) holding the checkouts is needed")
    args.features.mkdir(parents=True, exist_ok=True)
    memo = _Memo()
    vocab = Vocabulary()
    graph_module.extract = memo  # type: ignore[assignment]
    recs: list[dict[str, Any]] = []
    todo = tasks(only, {f for f in args.families.split(",") if f} or None)
    other_code: dict[str, int] = defaultdict(int)
    for i, t in enumerate(todo[::-1] if args.reverse else todo, 1):
        path = args.features / f"{t['id']}.json"
        old = json.loads(path.read_text("utf-8")) if path.exists() else None
        if old is None and args.kept_only:
            continue
        rec, did = kept_record(t, old, args, memo, vocab, names)
        if rec is not None and did:
            path.write_text(json.dumps(rec), "utf-8")
        if did:
            print(f"[{i}/{len(todo)}] {t['id']}: {did} {rec and rec['seconds']}", file=sys.stderr, flush=True)
        if rec is not None:
            for part in code_changed(rec):
                other_code[part] += 1
            recs.append(rec)
    for part, n in sorted(other_code.items()):
        print(
            f"# {n} records' {part} part built by other code at the same version (bump RECORD_VERSIONS if it scores differently)"
        )
    graph_module.extract = memo.original  # type: ignore[assignment]
    scale_only = tuple(f for f in args.source_scale_only.split(",") if f)
    if not set(scale_only) <= set(FEATURES):
        p.error(f"--source-scale-only: features among {', '.join(FEATURES)}")
    texts = {t["id"]: list(mentions(t["text"]).paths) for t in todo} if args.named_whole else {}
    ts = [
        Task(r, args.source_scale or scale_only, texts.get(r["id"]) if args.named_whole else None, args.pair_tests)
        for r in recs
    ]
    repos = sorted({t.rec["repo"] for t in ts})
    rows: dict[str, dict[str, list[int | None]]] = defaultdict(lambda: {"product": [], "plain": [], "old": []})
    plain = strongest_baseline(ts, names)

    def put(split: str, t: Task, w: Weights) -> None:
        pr = first_hit(t.ranking(w), t.gold)
        br, ob = first_hit(t.rec["baselines"][plain], t.gold), first_hit(t.rec["baseline"], t.gold)
        for lang in (t.rec["language"], "all"):
            rows[f"{split}|{lang}"]["product"].append(pr)
            rows[f"{split}|{lang}"]["plain"].append(br)
            rows[f"{split}|{lang}"]["old"].append(ob)

    held = [t for t in ts if t.rec["repo"] in TRAJECTORY_HELDOUT]
    chosen = fold_weights(ts, args.selection, frozen, args.jobs)
    if "heldout" in chosen:
        for t in held:
            put("fixed held-out", t, Weights(**chosen["heldout"]))
    for repo in repos:
        for t in ts:
            if t.rec["repo"] == repo:
                put("leave-one-repository-out", t, Weights(**chosen[repo]))
    for t in ts:
        put("defaults (all tasks)", t, DEFAULT_WEIGHTS)
    order = sorted(rows, key=lambda k: (k.split("|")[0], k.split("|")[1] != "all", k.split("|")[1]))
    lines = table({k: rows[k] for k in order}, any(t.rec["baseline"] for t in ts))
    print(f"# task lead: {len(ts)} tasks, {len(repos)} repositories, checkouts in {args.cache}")
    print(f"# tasks whose gold files all exist at the base commit: {sum(1 for t in ts if t.rec['goldPresent'])}")
    print(f"# BM25: plain BM25 over path and content ({plain}: tokenizer/files/parameters, bench/lead_baseline.py)")
    print("\n".join(lines))
    print("\n".join(variants_table(ts, names)))
    per_repo = [
        "| repository | tasks | product Hit@1 (LORO) | Hit@5 | BM25 Hit@1 | Hit@5 |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for repo in repos:
        rs = [t for t in ts if t.rec["repo"] == repo]
        w = Weights(**chosen[repo])
        pr = figures([first_hit(t.ranking(w), t.gold) for t in rs])
        br = figures([first_hit(t.rec["baselines"][plain], t.gold) for t in rs])
        mark = " (held out)" if repo in TRAJECTORY_HELDOUT else ""
        per_repo.append(
            f"| {repo}{mark} | {len(rs)} | {pr['hit@1']:.2f} | {pr['hit@5']:.2f} | {br['hit@1']:.2f} | {br['hit@5']:.2f} |"
        )
    print("\n".join(per_repo))
    if "heldout" in chosen:
        print("# weights chosen on the training repositories:", json.dumps(chosen["heldout"]))
    secs = [t.rec["seconds"] for t in ts]
    if secs:
        med = sorted(s["rank"] for s in secs)[len(secs) // 2]
        print(
            f"# ranking time per task (after indexing): median {med * 1000:.0f} ms, max {max(s['rank'] for s in secs) * 1000:.0f} ms"
        )
    if args.json:
        out = {k: {name: figures(v[name]) for name in ("product", "plain", "old")} for k, v in rows.items()}
        args.json.write_text(json.dumps({"rows": out, "weights": chosen, "baseline": plain}, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
