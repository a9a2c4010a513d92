"""The task lead's baselines: plain BM25 over a repository's files, queried with a whole task
text, the way retrieval papers and SWE-bench's own BM25 retrieval build it (``bench/task_lead.py``
prints them beside the product).

A document is a file's path and its text (``"<path>\\n<text>"``, as SWE-bench's
``file_name_and_contents``); the query is the whole task text, its words counted as often as
they occur (Lucene's query term frequency). Scoring is Okapi BM25 (``bm25s``, Lucene's IDF).
Nothing else: no test demotion, no symbol index, no paths or names read from the text.

Three tokenizers:

* ``fts5`` — the first baseline's: SQLite FTS5 ``unicode61`` words (``_`` splits, a camelCase
  identifier stays one word), each distinct word of the text once (an OR query);
* ``code`` — code-aware: every identifier lower-cased whole *and* split into its
  camelCase/snake_case/digit parts (``newJsonWriter`` → ``newjsonwriter new json writer``,
  ``mul_symbol`` → ``mul_symbol mul symbol``), Lucene's English stop words out, Snowball
  (Porter 2) stems, one-character tokens out;
* ``code-nostem`` — the same without stems.

Three sets of files: ``all`` (every text file of the listing), ``code`` (code files:
``kinds.SOURCE_EXTENSIONS``, tests included) and ``code-no-tests`` (SWE-bench's
``list_files``: code files whose path has no ``test``/``tests``/``testing`` word).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN
from bm25s.tokenization import Tokenized
from dsh_sidecar.workspace.kinds import SOURCE_EXTENSIONS

#: Largest file read, bytes (the rest of a bigger file is left out).
MAX_BYTES = 1024 * 1024
#: Okapi BM25's parameters: the common defaults and Pyserini's (SWE-bench's retrieval).
PARAMS = {"k1.2-b.75": (1.2, 0.75), "k0.9-b.4": (0.9, 0.4)}
#: File sets (module docstring).
FILE_SETS = ("all", "code", "code-no-tests")
#: Tokenizers (module docstring).
TOKENIZERS = ("fts5", "code", "code-nostem")
#: Every baseline's name: ``<tokenizer>/<files>/<parameters>``.
NAMES = tuple(f"{t}/{f}/{p}" for t in TOKENIZERS for f in FILE_SETS for p in PARAMS)
#: Results kept per baseline.
LIMIT = 10

_TOKEN = re.compile(r"[A-Za-z0-9_]+")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_FTS5_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = frozenset(STOPWORDS_EN)
_TEST_WORDS = frozenset({"test", "tests", "testing"})
_stemmer = Stemmer.Stemmer("english")


def code_tokens(text: str) -> list[str]:
    """The code-aware tokens of ``text`` (module docstring), before stemming."""
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        raw = m.group(0).strip("_")
        if not raw:
            continue
        whole = raw.lower()
        parts = [p.lower() for p in _PART.findall(raw)]
        if len(whole) > 1 and whole not in _STOP:
            out.append(whole)
        if len(parts) > 1:
            out += [p for p in parts if len(p) > 1 and p not in _STOP]
    return out


def fts5_tokens(text: str) -> list[str]:
    """``unicode61``'s words of ``text``, lower-cased."""
    return [w.lower() for w in _FTS5_WORD.findall(text)]


def is_test(path: str) -> bool:
    """SWE-bench's test rule: a ``test``/``tests``/``testing`` word in the path."""
    return bool(_TEST_WORDS & set(re.split(r" |_|/|\.", path.lower())))


def is_code(path: str) -> bool:
    """A code file by its extension (``kinds.SOURCE_EXTENSIONS``)."""
    return os.path.splitext(path)[1].lower() in SOURCE_EXTENSIONS


class Vocabulary:
    """Token ids shared by every commit of one repository, and each file's token ids memoised by
    its bytes (the commits of one repository share most files)."""

    def __init__(self) -> None:
        self.repo: str | None = None
        self.ids: dict[str, int] = {}
        self.stems: dict[str, str] = {}
        self.memo: dict[tuple[str, bytes], np.ndarray] = {}

    def for_repo(self, repo: str) -> None:
        if repo != self.repo:
            self.repo, self.ids, self.stems, self.memo = repo, {}, {}, {}

    def encode(self, tokens: Iterable[str], stem: bool, grow: bool = True) -> list[int]:
        out: list[int] = []
        for t in tokens:
            if stem:
                s = self.stems.get(t)
                if s is None:
                    s = self.stems[t] = _stemmer.stemWord(t)
                t = s
            i = self.ids.get(t)
            if i is None:
                if not grow:
                    continue
                i = self.ids[t] = len(self.ids)
            out.append(i)
        return out

    def document(self, tokenizer: str, rel: str, data: bytes) -> np.ndarray:
        key = (tokenizer, hashlib.sha1(rel.encode() + b"\0" + data).digest())
        hit = self.memo.get(key)
        if hit is None:
            text = rel + "\n" + data.decode("utf-8", "replace")
            if tokenizer in ("code", "code-nostem"):
                hit = np.array(self.encode(code_tokens(text), stem=tokenizer == "code"), dtype=np.int32)
            else:
                hit = np.array(self.encode(fts5_tokens(text), stem=False), dtype=np.int32)
            self.memo[key] = hit
        return hit


def read_text_files(root: Path, files: Sequence[str]) -> dict[str, bytes]:
    """Each listed text file's first :data:`MAX_BYTES` (binary files left out)."""
    out: dict[str, bytes] = {}
    for rel in files:
        try:
            with open(root / rel, "rb") as fh:
                data = fh.read(MAX_BYTES)
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        out[rel] = data
    return out


def _top(scores: np.ndarray, paths: list[str], limit: int) -> list[str]:
    order = np.lexsort((np.arange(len(paths)), -scores))[:limit]
    return [paths[i] for i in order if scores[i] > 0]


def baselines(
    vocab: Vocabulary, root: Path, files: Sequence[str], text: str, names: Collection[str] = NAMES
) -> dict[str, list[str]]:
    """The first :data:`LIMIT` paths for ``text`` of every baseline of ``names`` (default: all):
    ``{"<tokenizer>/<files>/<params>": [...]}``."""
    data = read_text_files(root, files)
    sets = {
        "all": sorted(data),
        "code": sorted(p for p in data if is_code(p)),
        "code-no-tests": sorted(p for p in data if is_code(p) and not is_test(p)),
    }
    out: dict[str, list[str]] = {}
    for tokenizer in TOKENIZERS:
        wanted = {n.split("/")[1] for n in names if n.split("/")[0] == tokenizer}
        if not wanted:
            continue
        docs = {p: vocab.document(tokenizer, p, data[p]) for p in sets[_widest(wanted)]}
        if tokenizer in ("code", "code-nostem"):
            query = vocab.encode(code_tokens(text), stem=tokenizer == "code", grow=False)
        else:  # each distinct word once (an OR of words)
            query = list(dict.fromkeys(vocab.encode(fts5_tokens(text), stem=False, grow=False)))
        for fs in FILE_SETS:
            if fs not in wanted:
                continue
            paths = sets[fs]
            if not paths or not query:
                for name in PARAMS:
                    if f"{tokenizer}/{fs}/{name}" in names:
                        out[f"{tokenizer}/{fs}/{name}"] = []
                continue
            for name, (k1, b) in PARAMS.items():
                if f"{tokenizer}/{fs}/{name}" not in names:
                    continue
                out[f"{tokenizer}/{fs}/{name}"] = _rank(vocab, [docs[p] for p in paths], paths, query, k1, b)
    return out


def _widest(sets: Collection[str]) -> str:
    """The file set of :data:`FILE_SETS` holding every one of ``sets`` (each is inside the one before)."""
    return next(fs for fs in FILE_SETS if fs in sets)


def _rank(
    vocab: Vocabulary, docs: list[np.ndarray], paths: list[str], query: list[int], k1: float, b: float
) -> list[str]:
    """Okapi BM25 (``bm25s``, Lucene's IDF) of ``query`` over ``docs``: the first :data:`LIMIT` paths."""
    # the documents' own vocabulary (bm25s sizes its matrix by it): the repository's ids renumbered
    used = np.unique(np.concatenate(docs)) if any(len(d) for d in docs) else np.array([], dtype=np.int32)
    local = {int(g): i for i, g in enumerate(used)}
    remap = np.full(len(vocab.ids) + 1, -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    ids = [remap[d].tolist() for d in docs]
    vocab_dict = {str(g): i for g, i in local.items()}
    vocab_dict[""] = len(vocab_dict)
    retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
    retriever.index(Tokenized(ids=ids, vocab=vocab_dict), show_progress=False)
    q = [local[t] for t in query if t in local]
    if not q:
        return []
    scores = retriever.get_scores(q)
    return _top(np.asarray(scores), paths, LIMIT)
