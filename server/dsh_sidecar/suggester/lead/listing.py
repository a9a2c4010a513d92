"""The task lead's features read from the workspace's listing alone (``docs/SCHEME.md``, "The
task lead"; the ranker's other features: ``ranker.py``): ``stem`` (file names made of the task's
words), ``code`` (file names beginning with a name of the task's code), ``path`` (the paths the
task names) and ``frame`` (its stack trace's frames in the workspace's own files). One pass over
the listing; what a change to them costs to measure is a listing, not an index
(``bench/task_lead.py --relist``).
"""

from __future__ import annotations

import heapq
import math
import re
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from typing import Final, Protocol

from dsh_sidecar.suggester.lead.mentions import Mentions

#: Files of each feature's order that count (the rest never reach the top ten).
MAX_FEATURE_FILES: Final = 300
#: A path mention matching more files than this is no file in particular (``index.js``).
MAX_PATH_MATCHES: Final = 8
#: The words of a file name: ``HttpClient`` → Http, Client; ``retry_policy`` → retry, policy.
_NAME_WORD: Final = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
#: Folders whose words are kept at once while the listing is read (then forgotten).
MAX_FOLDERS_CACHED: Final = 10_000
#: What a task word in a file's folders counts for, beside one in its name.
FOLDER_WORD_SHARE: Final = 0.5
#: Extensions of code modules a dotted name may resolve to, and a package's own file.
MODULE_EXTENSIONS: Final = (".py", ".java", ".kt", ".scala", ".js", ".ts", ".tsx", ".jsx", ".mjs", ".go", ".rs", ".rb")


class ListingWeights(Protocol):
    """The weights :func:`listing_features` reads (``ranker.Weights``)."""

    @property
    def stem(self) -> float:
        """The ``stem`` feature's weight."""
        ...

    @property
    def code(self) -> float:
        """The ``code`` feature's weight."""
        ...

    @property
    def path(self) -> float:
        """The ``path`` feature's weight."""
        ...

    @property
    def template(self) -> float:
        """The ``template`` feature's weight."""
        ...

    @property
    def frame(self) -> float:
        """The ``frame`` feature's weight."""
        ...


class Scores:
    """Per-feature scores and the best reason of each file."""

    def __init__(self) -> None:
        self.by: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.reason: dict[str, tuple[float, str]] = {}

    def add(self, feature: str, path: str, value: float, reason: str, weight: float) -> None:
        if value <= 0:
            return
        self.by[feature][path] += value
        best = self.reason.get(path)
        if best is None or value * weight > best[0]:
            self.reason[path] = (value * weight, reason)


class Paths:
    """Suffix lookups over the listing: a path mention's files (bounded per lookup); and the
    files whose name's words are words of the task (``stems``: file → its matched words and
    how many words the name has; ``stem_df``: in how many names each matched word is)."""

    def __init__(
        self,
        files: Sequence[str],
        names: set[str],
        words: Collection[str] = (),
        code: Collection[tuple[str, ...]] = (),
    ) -> None:
        # one pass over the listing: the files whose base name the text mentions, and the
        # words of every file name (``retry_policy.py``, ``RetryPolicy.java``: retry, policy)
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self.by_lower: dict[str, list[str]] = defaultdict(list)
        self.stems: dict[str, tuple[tuple[str, ...], tuple[str, ...], int]] = {}
        self.stem_df: dict[str, int] = defaultdict(int)
        #: file → the longest name of the text's code its name begins with, and its name's words
        self.code: dict[str, tuple[tuple[str, ...], int]] = {}
        self.code_df: dict[tuple[str, ...], int] = defaultdict(int)
        code_set = frozenset(code)
        longest = max(map(len, code_set), default=0)
        lowered = {n.lower() for n in names}
        wanted = frozenset(words)
        # a folder's words are read once for all its files (the listing is sorted: one folder's
        # files are together)
        folder_of: dict[str, tuple[str, ...]] = {}
        for f in files:
            cut = f.rfind("/") + 1
            base = f[cut:]
            if base in names:
                self.by_name[base].append(f)
            elif base.lower() in lowered:
                self.by_lower[base.lower()].append(f)
            if not (wanted or code_set):
                continue
            parts = [w.lower() for w in _NAME_WORD.findall(base.split(".", 1)[0])]
            if code_set:
                self._code_name(f, tuple(parts), code_set, longest)
            if wanted:
                hit = tuple(w for w in dict.fromkeys(parts) if w in wanted)
                folder = f[:cut]
                in_folder = folder_of.get(folder)
                if in_folder is None:
                    if len(folder_of) >= MAX_FOLDERS_CACHED:
                        folder_of.clear()
                    in_folder = folder_of[folder] = tuple(
                        w for w in dict.fromkeys(x.lower() for x in _NAME_WORD.findall(folder)) if w in wanted
                    )
                folders = tuple(w for w in in_folder if w not in hit) if hit else in_folder
                if hit or folders:
                    self.stems[f] = (hit, folders, len(parts))
                    for w in hit + folders:
                        self.stem_df[w] += 1

    def _code_name(self, f: str, words: tuple[str, ...], code: frozenset[tuple[str, ...]], longest: int) -> None:
        for k in range(min(longest, len(words)), 0, -1):
            if words[:k] in code:
                self.code[f] = (words[:k], len(words))
                self.code_df[words[:k]] += 1
                return

    def match(self, mention: str) -> tuple[list[str], int]:
        """The files whose path ends with the longest trailing part of ``mention`` that matches
        any, and how many segments matched (0: none)."""
        parts = [p for p in mention.split("/") if p and p not in (".", "..")]
        if not parts:
            return [], 0
        base = parts[-1]
        pool = self.by_name.get(base) or self.by_lower.get(base.lower()) or []
        if not pool:
            return [], 0
        for k in range(len(parts), 0, -1):
            tail = "/".join(parts[-k:])
            hits = [f for f in pool if f == tail or f.endswith("/" + tail)]
            if not hits and k > 1:
                low = tail.lower()
                hits = [f for f in pool if f.lower() == low or f.lower().endswith("/" + low)]
            if hits:
                return hits, k
        return [], 0


def idf(count: int, total: int) -> float:
    return math.log(1.0 + total / max(1, count))


def add_top(s: Scores, feature: str, acc: Mapping[str, float], reason: str, weight: float) -> None:
    """The :data:`MAX_FEATURE_FILES` best files of ``acc`` (ties by path) as ``feature``,
    scaled so the best is 1 (the rest count for nothing in :func:`combine`)."""
    if not acc:
        return
    top = heapq.nsmallest(MAX_FEATURE_FILES, acc.items(), key=lambda kv: (-kv[1], kv[0]))
    most = top[0][1]
    if most <= 0:
        return
    for f, v in top:
        s.add(feature, f, v / most, reason, weight)


def listing_features(
    s: Scores, m: Mentions, files: Sequence[str], weights: ListingWeights
) -> tuple[Paths, dict[str, float]]:
    """The features read from the listing alone (``stem``, ``code``, ``path``, ``frame``) into
    ``s``; the listing's lookups and the task's words (weighed) for the other features."""
    wanted = {p.rsplit("/", 1)[-1] for p in m.paths} | {p.rsplit("/", 1)[-1] for p, _ in m.frames}
    for d in m.dotted:  # a dotted module name's last part as a file (`a.b.c` → `c.py`)
        parts = d.split(".")
        wanted.update(parts[-1] + e for e in MODULE_EXTENSIONS)
        wanted.update(parts[-2] + e for e in MODULE_EXTENSIONS)
    task_words = {w: 1.0 + math.log(c) for w, c in m.word_counts.items() if len(w) >= 3}
    for w in m.title_words:
        if w in task_words:
            task_words[w] += 1.0  # the title says what the task is about
    code = m.code_names if weights.code > 0 else {}
    lookup = Paths(files, {w for w in wanted if w}, task_words, code)
    _path_features(s, m, lookup, task_words, max(1, len(files)), weights)
    if weights.template > 0 and m.template_names:
        names = m.template_names
        _name_feature(s, "template", Paths(files, set(), (), names), names, max(1, len(files)), weights.template)
    return lookup, task_words


#: The features :func:`listing_features` scores.
LISTING_FEATURES: Final = ("stem", "code", "template", "path", "frame")


def _name_feature(
    s: Scores, feature: str, lookup: Paths, names: Mapping[tuple[str, ...], int], total: int, weight: float
) -> None:
    """The files whose name begins with one of ``names`` (``lookup.code``): the rarer the
    name among the file names and the more often written, the higher; the more of the file
    name it covers, the higher."""
    acc: dict[str, float] = {}
    for f, (name, n) in lookup.code.items():
        rare = idf(lookup.code_df[name], total) * (1.0 + math.log(names.get(name, 1)))
        acc[f] = rare * len(name) / math.sqrt(max(n, 1))
    add_top(s, feature, acc, "its name is a name of the task's code", weight)


def _path_features(
    s: Scores, m: Mentions, lookup: Paths, task_words: Mapping[str, float], total: int, weights: ListingWeights
) -> None:
    """File names made of the task's words; the paths and the traceback frames it names."""
    if lookup.stems:
        worth = {w: idf(df, total) * task_words[w] for w, df in lookup.stem_df.items()}
        acc_stem: dict[str, float] = {}
        for f, (hit, folders, n) in lookup.stems.items():
            named = sum(worth[w] for w in hit)
            held = sum(worth[w] for w in folders)
            acc_stem[f] = (named + FOLDER_WORD_SHARE * held) / math.sqrt(max(n, 1))
        add_top(s, "stem", acc_stem, "its path is the task's words", weights.stem)
    if lookup.code:
        _name_feature(s, "code", lookup, m.code_names, total, weights.code)
    for p in m.paths:
        hits, k = lookup.match(p)
        if hits and len(hits) <= MAX_PATH_MATCHES:
            depth = p.count("/") + 1
            value = (k / depth) ** 0.5 / len(hits)
            for f in hits:
                s.add("path", f, value, "the task names this file", weights.path)
    # the frames in the workspace's own files, innermost first: the runtime's and the libraries'
    # frames (`java/lang/Thread.java`, `site-packages/…`) match nothing and take no place
    own = 0
    for p, _fn in m.frames:
        hits, k = lookup.match(p)
        if hits and len(hits) <= MAX_PATH_MATCHES:
            value = 1.0 / (1 + own) / len(hits)
            own += 1
            for f in hits:
                s.add("frame", f, value, "a frame of the task's traceback", weights.frame)
