"""The workspace content index: SQLite FTS5 (standard library), BM25-ranked, over path tokens
and text, plus the file *facts* read from contents — built in a background thread.

**What is indexed** (one row per listed file, each file read once, at most
:data:`MAX_READ_BYTES`): ``path`` = the path's words (folders, stem, extension, snake/camel
parts: ``src/HttpClient/retry_policy.py`` → ``src http client retry policy py``); ``body`` =
the distinct words of the text of docs, tests, config, manifests and other text files; for code
files only the words of their message-like string literals (``"could not find %s"``) and their
comments' first words are indexed. Words are ASCII letters/digits, 3–30 characters, lower-cased,
stop words dropped, each once per file (FTS5's ``porter`` tokenizer stems them). The table is
*contentless* (``content=''``) with ``detail=full``: the text itself is never stored, so the
index is a fraction of the text it covers (``bench/content_index.py`` prints the ratio; goal
≤ 25 %). A phrase or an exact literal is checked by reading the few top files again
(:meth:`ContentIndex.files_containing`).

**Facts** (:func:`facts_of`, from names *and* contents): ``version-module`` (a code file that
assigns ``__version__``/``VERSION``/``version`` to a literal at top level), ``manifest-version``
(a manifest with a version field), ``changelog`` (a name such as CHANGELOG/CHANGES/HISTORY/NEWS/
RELEASE-NOTES in any case and folder, or a doc whose headings are versions: ``## [1.2.0]``,
``v1.2 (2024-01-02)``, ``Version 3.1``), ``ci-workflow`` (GitHub/GitLab/Circle/Azure/Travis/
Jenkins/AppVeyor/Buildkite pipelines, ``tox.ini``/``noxfile.py``) and ``ci-tests`` (a workflow
that runs a test command), ``docs-page`` (a doc file under a docs root — a folder named like
docs or holding a Sphinx ``conf.py``/``mkdocs.yml``/``index`` page among several doc files),
``test-module`` (a test by path, or code with test functions/cases), ``owners`` (CODEOWNERS,
OWNERS, MAINTAINERS, AUTHORS, CONTRIBUTORS in any case), ``owners-section`` (a README/doc with a
Maintainers/Authors/Owners/Team heading), ``manifest-authors`` (a manifest naming authors or
maintainers), ``env-config`` (code reading environment variables), ``test-config`` (pytest/jest/
vitest/… configuration).

**Building**: :class:`ContentIndexer` syncs the database on its own worker thread from the
listing the workspace graph already made (the workspace is listed once; no process is started:
only ``gitcmd`` does that): no request ever waits for it, and every :data:`YIELD_EVERY` files it
hands the GIL to a waiting request (SQLite itself runs without the GIL). The database (WAL
mode) lives under ``$DSH_HOME/workspace/``; a file whose mtime and size match its row is not
read again, so a restart or a ``didChangeWatchedFiles`` batch only re-reads what changed. A
changed file gets a new row and its old row is marked dead; past :data:`DEAD_RATIO` dead rows
the database is rebuilt.

Without FTS5 in the Python build (:func:`fts5_available`), nothing is built, the facts are
computed from names only, and ``status()`` says so.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.workspace import fsguard
from dsh_sidecar.workspace.kinds import classify

log = logging.getLogger(__name__)

#: Schema version of the database (a different one is rebuilt).
SCHEMA_VERSION: Final = 2
#: Most bytes read of one file.
MAX_READ_BYTES: Final = 256 * 1024
#: Largest file read at all (bigger ones get path tokens only).
MAX_FILE_BYTES: Final = 2 * 1024 * 1024
#: Most distinct words indexed per file.
MAX_WORDS: Final = 4000
#: Share of dead rows past which the database is rebuilt from scratch.
DEAD_RATIO: Final = 0.3
#: Rows per transaction of the builder.
BATCH: Final = 500
#: Column weights of BM25 (path words count more than body words): ``bm25(fts, path, body)``.
BM25_WEIGHTS: Final = (4.0, 1.0)
#: Files between two GIL hand-overs of the indexing thread to the request thread.
YIELD_EVERY: Final = 8

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{2,29}")
_SPLIT_PATH = re.compile(r"[/._\-\s]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: Words never indexed (English glue and code keywords: present everywhere, telling nothing).
STOP_WORDS: Final = frozenset(
    "the and for not with this that from are was were you your have has had but all any can will into out its "
    "than then them they there their what when where which who why how use used using also may might must should "
    "would could one two new get set self return import def class none true false null nil let var const func "
    "function public private static void int str string bool elif else while try except finally raise pass yield "
    "lambda async await package type struct impl pub mod use crate".split()
)

_STRING_LITERAL = re.compile(r"""(["'`])((?:(?!\1)[^\\\n]|\\.){8,300})\1""")
_VERSION_ASSIGN = re.compile(
    r"""^(?:export\s+)?(?:(?:pub\s+)?const|var|let|static|final|public\s+static\s+final\s+String)?\s*"""
    r"""(?:__version__|VERSION|Version|version|__VERSION__)\s*(?::\s*[\w&'\[\]<> ]+)?\s*(?::=|=)\s*["'][\w.+-]*\d""",
    re.MULTILINE,
)
_MANIFEST_VERSION = {
    "pyproject.toml": re.compile(r"^version\s*=\s*[\"']", re.MULTILINE),
    "setup.cfg": re.compile(r"^version\s*=", re.MULTILINE),
    "setup.py": re.compile(r"\bversion\s*=", re.MULTILINE),
    "package.json": re.compile(r"^\s{0,4}\"version\"\s*:", re.MULTILINE),
    "Cargo.toml": re.compile(r"^version\s*=|^version\.workspace\s*=", re.MULTILINE),
    "pom.xml": re.compile(r"<version>"),
    "build.gradle": re.compile(r"^\s*version\s*=", re.MULTILINE),
    "build.gradle.kts": re.compile(r"^\s*version\s*=", re.MULTILINE),
    "gradle.properties": re.compile(r"^version\s*=", re.MULTILINE),
    "composer.json": re.compile(r"\"version\"\s*:"),
    "pubspec.yaml": re.compile(r"^version:", re.MULTILINE),
    "mix.exs": re.compile(r"\bversion:\s"),
    "meson.build": re.compile(r"\bversion\s*:"),
}
_MANIFEST_VERSION_SUFFIX = {
    ".gemspec": re.compile(r"\.version\s*="),
    ".csproj": re.compile(r"<(?:Version|VersionPrefix)>"),
    ".nimble": re.compile(r"^version\s*=", re.MULTILINE),
    ".cabal": re.compile(r"^version:", re.MULTILINE | re.IGNORECASE),
}
_MANIFEST_AUTHORS = re.compile(
    r"^\s*(?:authors|maintainers|author|maintainer|\"author\"|\"authors\"|\"contributors\"|\"maintainers\")\s*[:=]"
    r"|<developers>|\bauthors?\s*=|\bmaintainers?\s*=",
    re.MULTILINE | re.IGNORECASE,
)
_CHANGELOG_NAME = re.compile(
    r"^(?:change[-_ ]?log|changes|history|news|release[-_ ]?notes|releases|whats[-_]?new|release[-_]history)"
    r"(?:\.[\w.-]+)?$",
    re.IGNORECASE,
)
_VERSION_HEADING = re.compile(
    r"^(?:#{1,4}\s*\[?v?\d+\.\d+(?:\.\d+)?[^\n]*|\[?v?\d+\.\d+(?:\.\d+)?\]?\s*(?:\(|-|—|–)\s*\d{4}[^\n]*"
    r"|(?:version|release)\s+v?\d+\.\d+[^\n]*|v?\d+\.\d+(?:\.\d+)?\s*\n[-=~^*]{3,})\s*$",
    re.MULTILINE | re.IGNORECASE,
)
_OWNER_NAME = re.compile(
    r"^(?:codeowners|owners|maintainers|authors|contributors|credits)(?:\.[\w.-]+)?$", re.IGNORECASE
)
_OWNER_HEADING = re.compile(
    r"^(?:#{1,4}\s*|\*\*)(?:core\s+)?(?:maintainers?|authors?|owners?|team|core team|credits|people|contributors)"
    r"\b[^\n]*$|^(?:maintainers?|authors?|owners?|credits)\s*\n[-=~^*]{3,}\s*$",
    re.MULTILINE | re.IGNORECASE,
)
_TEST_CODE = re.compile(
    r"^\s*(?:def test_\w+|class Test\w*|import pytest|from pytest|import unittest|func Test\w+\(|#\[test\]|"
    r"#\[cfg\(test\)\]|@Test\b|(?:describe|it|test)\s*\(\s*['\"`])",
    re.MULTILINE,
)
_ENV_READ = re.compile(
    r"os\.environ|os\.getenv|getenv\(|process\.env\b|std::env::var|env::var\(|System\.getenv|ENV\[|"
    r"pydantic_settings|BaseSettings\b|dotenv"
)
_TEST_RUN = re.compile(
    r"\b(?:pytest|tox|nox|unittest|npm (?:run )?test|yarn test|pnpm test|jest|vitest|mocha|cargo test|"
    r"cargo nextest|go test|mvn (?:-\S+ )*(?:test|verify)|gradle\w* (?:test|check)|make (?:test|check)|"
    r"rake|rspec|dotnet test|ctest|phpunit)\b"
)
CI_FILES: Final = frozenset(
    {".gitlab-ci.yml", ".travis.yml", "azure-pipelines.yml", "appveyor.yml", ".appveyor.yml", "Jenkinsfile"}
    | {"bitbucket-pipelines.yml", ".drone.yml", "cloudbuild.yaml", "tox.ini", "noxfile.py", ".cirrus.yml"}
)
_CI_DIRS = (".github/workflows/", ".circleci/", ".buildkite/", ".gitlab/ci/", ".azure-pipelines/", ".ci/")
TEST_CONFIG_NAMES: Final = frozenset(
    {"pytest.ini", "conftest.py", "tox.ini", "noxfile.py", "jest.config.js", "jest.config.ts", "jest.config.mjs"}
    | {"jest.config.cjs", "vitest.config.ts", "vitest.config.js", "vitest.config.mts", "karma.conf.js"}
    | {
        ".mocharc.yml",
        ".mocharc.json",
        ".mocharc.js",
        "phpunit.xml",
        "phpunit.xml.dist",
        ".rspec",
        "playwright.config.ts",
    }
    | {"cypress.config.ts", "cypress.config.js", "nextest.toml", "codecov.yml", ".coveragerc"}
)
DOCS_DIR_NAMES: Final = frozenset(
    {"docs", "doc", "documentation", "website", "site", "guide", "guides", "manual", "book", "handbook", "wiki"}
    | {"pages", "docsite", "userguide", "user_guide", "tutorials", "tutorial"}
)
DOC_EXTENSIONS: Final = (".md", ".markdown", ".rst", ".adoc", ".txt", ".mdx", ".ipynb", ".rdoc", ".org")
#: Every fact :func:`facts_of` / :func:`docs_pages` can give.
FACTS: Final = (
    "version-module",
    "manifest-version",
    "manifest-authors",
    "changelog",
    "ci-workflow",
    "ci-tests",
    "docs-page",
    "test-module",
    "test-config",
    "owners",
    "owners-section",
    "env-config",
)


@lru_cache(maxsize=1)
def fts5_available() -> bool:
    """Whether this Python's SQLite has FTS5 (checked once per process)."""
    try:
        con = sqlite3.connect(":memory:")
        con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        con.close()
        return True
    except sqlite3.Error:
        return False


def path_words(path: str) -> str:
    """The words of a path: folders, stem and extension, snake_case and camelCase split, lower-cased."""
    out: list[str] = []
    for part in _SPLIT_PATH.split(path):
        if not part:
            continue
        pieces = _CAMEL.split(part)
        out.append(part.lower())
        if len(pieces) > 1:
            out.extend(p.lower() for p in pieces if p)
    return " ".join(dict.fromkeys(out))


def text_words(text: str, limit: int = MAX_WORDS) -> str:
    """The distinct indexable words of ``text`` (module docstring), space-separated."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(text):
        lw = w.lower()
        if lw in STOP_WORDS or lw in seen:
            continue
        seen[lw] = None
        pieces = _CAMEL.split(w)
        if len(pieces) > 1:
            for p in pieces:
                lp = p.lower()
                if len(lp) >= 3 and lp not in STOP_WORDS:
                    seen.setdefault(lp, None)
        if len(seen) >= limit:
            break
    return " ".join(seen)


def messages_of(text: str) -> str:
    """The message-like string literals of code (at least two words), joined by newlines."""
    out = []
    for m in _STRING_LITERAL.finditer(text):
        s = m.group(2)
        if " " in s and sum(1 for _ in _WORD.finditer(s)) >= 2:
            out.append(s)
    return "\n".join(out)


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def is_ci(path: str) -> bool:
    """Whether ``path`` is a CI pipeline definition (by location and name)."""
    name = _name(path)
    if name in CI_FILES and "/" not in path:
        return True
    return path.startswith(_CI_DIRS) and name.endswith((".yml", ".yaml", ".json", ".sh")) or name == "Jenkinsfile"


def facts_of(path: str, kind: str, text: str | None) -> set[str]:
    """The facts of one file (module docstring) from its path, kind and text (``None``: unread)."""
    name = _name(path)
    lname = name.lower()
    facts: set[str] = set()
    stem_ok = kind in ("doc", "other", "config") or lname.endswith(DOC_EXTENSIONS)
    if _CHANGELOG_NAME.match(name) and stem_ok and "/node_modules/" not in path:
        facts.add("changelog")
    if _OWNER_NAME.match(name) and kind in ("doc", "other", "config"):
        facts.add("owners")
    if is_ci(path):
        facts.add("ci-workflow")
    if name in TEST_CONFIG_NAMES:
        facts.add("test-config")
    if kind == "test" and kind_is_code(path):
        facts.add("test-module")
    if text is None:
        return facts
    head = text[:MAX_READ_BYTES]
    if kind == "manifest":
        rx = _MANIFEST_VERSION.get(name) or next(
            (r for suf, r in _MANIFEST_VERSION_SUFFIX.items() if lname.endswith(suf)), None
        )
        if rx is not None and rx.search(head):
            facts.add("manifest-version")
        if _MANIFEST_AUTHORS.search(head):
            facts.add("manifest-authors")
    elif name == "gradle.properties" and _MANIFEST_VERSION["gradle.properties"].search(head):
        facts.add("manifest-version")
    if kind in ("source", "test") and kind_is_code(path):
        if kind == "source" and _VERSION_ASSIGN.search(head[:20_000]):
            facts.add("version-module")
        if _TEST_CODE.search(head):
            if kind == "test" or re.search(r"(?:^|/)(?:test|tests|spec|testing)[_/]|_test\.|test_", path):
                facts.add("test-module")
        if kind == "source" and _ENV_READ.search(head):
            facts.add("env-config")
    if kind in ("doc", "other") or lname.endswith(DOC_EXTENSIONS):
        if "changelog" not in facts and len(_VERSION_HEADING.findall(head[:60_000])) >= 2:
            facts.add("changelog")
        if _OWNER_HEADING.search(head):
            facts.add("owners-section")
    if "ci-workflow" in facts and _TEST_RUN.search(head):
        facts.add("ci-tests")
    if name == "package.json" and re.search(r"\"(?:jest|vitest|mocha)\"\s*:", head):
        facts.add("test-config")
    if name in ("pyproject.toml", "setup.cfg") and re.search(r"^\[(?:tool[.:])?pytest", head, re.MULTILINE):
        facts.add("test-config")
    return facts


def kind_is_code(path: str) -> bool:
    """Whether ``path`` has a code extension (the kinds' source extensions, markup excluded)."""
    from dsh_sidecar.workspace.kinds import SOURCE_EXTENSIONS

    dot = path.rfind(".")
    ext = path[dot:].lower() if dot > path.rfind("/") else ""
    return ext in SOURCE_EXTENSIONS and ext not in (".css", ".scss", ".less", ".html", ".htm", ".sql", ".graphql")


def docs_roots(files: Iterable[str]) -> set[str]:
    """Folders that are documentation roots: named like docs (:data:`DOCS_DIR_NAMES`), or
    holding a Sphinx ``conf.py``/``mkdocs.yml``/``index`` page beside at least three doc files."""
    doc_count: dict[str, int] = {}
    markers: set[str] = set()
    roots: set[str] = set()
    for f in files:
        folder, _, name = f.rpartition("/")
        lname = name.lower()
        if lname.endswith(DOC_EXTENSIONS):
            doc_count[folder] = doc_count.get(folder, 0) + 1
        if lname in ("conf.py", "mkdocs.yml", "index.rst", "index.md", "_config.yml", "docusaurus.config.js"):
            markers.add(folder)
        parts = folder.split("/") if folder else []
        for i, p in enumerate(parts):
            if p.lower() in DOCS_DIR_NAMES:
                roots.add("/".join(parts[: i + 1]))
                break
    for folder in markers:
        if doc_count.get(folder, 0) >= 3 and folder:
            roots.add(folder)
    return roots


def docs_pages(files: Iterable[str], kind_of: dict[str, str] | None = None) -> list[str]:
    """Doc files (by extension) under a docs root (:func:`docs_roots`), sorted."""
    files = list(files)
    roots = docs_roots(files)
    if not roots:
        return []
    out = []
    for f in files:
        if not f.lower().endswith(DOC_EXTENSIONS[:6]):
            continue
        if kind_of is not None and kind_of.get(f) in ("test", "generated"):
            continue
        if any(f.startswith(r + "/") for r in roots):
            out.append(f)
    return sorted(out)


# ---------------------------------------------------------------------------- the database


def db_path(cache_dir: Path, root: Path) -> Path:
    """``<cache_dir>/<slug>-<hash>.content.sqlite`` (slug and hash as the symbol cache's)."""
    resolved = str(root.resolve())
    slug = re.sub(r"[^a-z0-9]+", "-", root.name.lower()).strip("-") or "workspace"
    return cache_dir / f"{slug}-{hashlib.sha1(resolved.encode()).hexdigest()[:12]}.content.sqlite"


#: Most SQLite virtual-machine steps a content lookup on the request path may take (then it
#: answers no match), in units of :data:`PROGRESS_STEPS`: a bound counted in work, not time, so
#: the same workspace gives the same answers on a loaded machine. 60 000 steps ≈ 2 ms on this
#: (loaded, 2-core) machine; lookups take 0.02–0.4 ms on sympy's 1.5k files once common words
#: are left out (p99 0.6 ms on 100k files, bench/content_index.py).
SEARCH_STEP_BUDGET: Final = 60
#: SQLite virtual-machine steps between two progress-handler calls.
PROGRESS_STEPS: Final = 1000
#: A word in more than this share of the files (and in more than :data:`MIN_DF_CAP`) is left
#: out of a lookup: it matches nearly everything and only slows the ranking down.
MAX_DF_SHARE: Final = 0.05
MIN_DF_CAP: Final = 50

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)",
    "CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, rid INTEGER UNIQUE, mtime_ns INTEGER, size INTEGER,"
    " kind TEXT, facts TEXT, words INTEGER)",
    "CREATE TABLE IF NOT EXISTS dead(rid INTEGER PRIMARY KEY)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(path, body, content='', detail=full,"
    " tokenize='porter unicode61')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS fts_vocab USING fts5vocab(fts, 'row')",
)


def _open_file(root: Path, rel: str) -> bytes | None:
    """The first :data:`MAX_READ_BYTES` of a workspace file, or ``None`` (refused by the guarded
    reader ``workspace/fsguard.py``: missing, not a regular file, larger than
    :data:`MAX_FILE_BYTES`, resolving outside the workspace)."""
    data = fsguard.read_or_none(root, rel, MAX_FILE_BYTES)
    return data[:MAX_READ_BYTES] if data is not None else None


class ContentDB:
    """One content database (module docstring): the writer (indexing thread) and reader sides."""

    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = path
        if readonly:
            uri = f"file:{path}?mode=ro"
            self.con = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=0.05)
        else:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.con = sqlite3.connect(str(path), timeout=10)
            self.con.execute("PRAGMA journal_mode=WAL")
            self.con.execute("PRAGMA synchronous=NORMAL")
            for stmt in _SCHEMA:
                self.con.execute(stmt)
            row = self.con.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self.con.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (str(SCHEMA_VERSION),))
                self.con.commit()
            elif row[0] != str(SCHEMA_VERSION):
                raise sqlite3.DatabaseError("schema version mismatch")
            try:
                os.chmod(path, 0o600)
            except OSError:
                pass

    def close(self) -> None:
        """Close the connection."""
        self.con.close()

    # ------------------------------------------------------------------ writer

    def sync(
        self, root: Path, listing: list[str], only: list[str] | None = None, yield_every: int = 0
    ) -> dict[str, Any]:
        """Bring the database in line with ``listing`` (repo-relative paths). ``only``: just
        those paths (a ``didChangeWatchedFiles`` batch). ``yield_every``: hand the GIL to other
        threads (``time.sleep(0)``) every so many files (0: never). Returns counts."""
        t0 = time.process_time()
        con = self.con
        known = {p: (rid, m, s) for p, rid, m, s in con.execute("SELECT path, rid, mtime_ns, size FROM files")}
        wanted = set(listing)
        todo = listing if only is None else [p for p in only if p in wanted or p in known]
        next_rid = (con.execute("SELECT max(rid) FROM files").fetchone()[0] or 0) + 1
        dead = con.execute("SELECT count(*) FROM dead").fetchone()[0]
        read = skipped = removed = 0
        text_bytes = 0
        base = str(root) + os.sep
        pending = 0
        con.execute("BEGIN")
        for n, rel in enumerate(todo, 1):
            if yield_every and n % yield_every == 0:
                time.sleep(0)  # a waiting request thread takes the GIL now, not after 5 ms
            old = known.get(rel)
            if rel not in wanted:
                if old is not None:
                    con.execute("DELETE FROM files WHERE path=?", (rel,))
                    con.execute("INSERT OR IGNORE INTO dead VALUES(?)", (old[0],))
                    removed += 1
                    dead += 1
                continue
            try:
                st = os.stat(base + rel)
            except OSError:
                st = None
            if st is not None and old is not None and old[1] == st.st_mtime_ns and old[2] == st.st_size:
                skipped += 1
                continue
            kind = classify(rel)
            data = _open_file(root, rel) if st is not None and kind not in ("generated", "lock") else None
            text = data.decode("utf-8", "replace") if data is not None and b"\0" not in data[:4096] else None
            body = ""
            if text is not None:
                text_bytes += len(data or b"")
                if kind in ("source",) and kind_is_code(rel):
                    body = text_words(messages_of(text))
                elif kind == "test" and kind_is_code(rel):
                    body = text_words(text, MAX_WORDS // 2)
                else:
                    body = text_words(text)
            facts = facts_of(rel, kind, text)
            if old is not None:
                con.execute("INSERT OR IGNORE INTO dead VALUES(?)", (old[0],))
                dead += 1
            rid = next_rid
            next_rid += 1
            con.execute("INSERT INTO fts(rowid, path, body) VALUES(?,?,?)", (rid, path_words(rel), body))
            con.execute(
                "INSERT OR REPLACE INTO files VALUES(?,?,?,?,?,?,?)",
                (
                    rel,
                    rid,
                    st.st_mtime_ns if st else 0,
                    st.st_size if st else 0,
                    kind,
                    ",".join(sorted(facts)),
                    body.count(" ") + 1 if body else 0,
                ),
            )
            read += 1
            pending += 1
            if pending >= BATCH:
                con.execute("COMMIT")
                con.execute("BEGIN")
                pending = 0
        if only is None:
            for rel in set(known) - wanted:
                con.execute("DELETE FROM files WHERE path=?", (rel,))
                con.execute("INSERT OR IGNORE INTO dead VALUES(?)", (known[rel][0],))
                removed += 1
                dead += 1
        con.execute("COMMIT")
        if read or removed:
            con.execute("INSERT INTO fts(fts) VALUES('optimize')")
            con.commit()
        return {
            "files": len(wanted),
            "read": read,
            "unchanged": skipped,
            "removed": removed,
            "dead": dead,
            "textBytes": text_bytes,
            "cpuS": round(time.process_time() - t0, 3),
        }

    def live_rows(self) -> int:
        """Rows of live files."""
        return self.con.execute("SELECT count(*) FROM files").fetchone()[0]

    def dead_rows(self) -> int:
        """Rows of files changed or removed since they were indexed."""
        return self.con.execute("SELECT count(*) FROM dead").fetchone()[0]

    # ------------------------------------------------------------------ reader

    def facts(self) -> dict[str, list[str]]:
        """``{fact: [paths, sorted]}`` of every file with a fact."""
        out: dict[str, list[str]] = {}
        for path, facts in self.con.execute("SELECT path, facts FROM files WHERE facts != ''"):
            for f in facts.split(","):
                out.setdefault(f, []).append(path)
        for paths in out.values():
            paths.sort()
        return out

    def search(
        self, words: Iterable[str], limit: int = 20, budget: int = SEARCH_STEP_BUDGET
    ) -> list[tuple[str, float]]:
        """Files matching any of ``words`` (OR), BM25 best first: ``[(path, score > 0)]``.

        Words are quoted (FTS5 syntax in them is literal); a word in more than
        :data:`MAX_DF_SHARE` of the files tells nothing and is left out (document frequencies
        from ``fts5vocab``); the query is interrupted after ``budget`` × :data:`PROGRESS_STEPS`
        virtual-machine steps (SQLite's
        progress handler), which answers ``[]``: a lookup on the request path stays bounded
        on any workspace, deterministically. An empty list of words gives ``[]``."""
        terms = [w for w in dict.fromkeys(x.lower() for x in words if _WORD.fullmatch(x or "")) if w not in STOP_WORDS]
        if not terms:
            return []
        spent = [0]

        def over() -> int:
            spent[0] += 1
            return 1 if spent[0] > budget else 0

        self.con.set_progress_handler(over, PROGRESS_STEPS)
        try:
            live = self._live_rows()
            rare = []
            for t in terms[:16]:
                row = self.con.execute("SELECT doc FROM fts_vocab WHERE term = ?", (t,)).fetchone()
                if row is not None and row[0] <= max(MIN_DF_CAP, MAX_DF_SHARE * live):
                    rare.append(t)
            if not rare:
                return []
            match = " OR ".join(f'"{t}"' for t in rare)
            sql = (
                "SELECT f.path, -bm25(fts, ?, ?) AS s FROM fts JOIN files f ON f.rid = fts.rowid "
                "WHERE fts MATCH ? ORDER BY bm25(fts, ?, ?) LIMIT ?"
            )
            w1, w2 = BM25_WEIGHTS
            return [(p, float(s)) for p, s in self.con.execute(sql, (w1, w2, match, w1, w2, limit))]
        except sqlite3.Error as exc:  # interrupted (over budget) or a query problem: no match
            log.debug("content index query failed: %s", exc)
            return []
        finally:
            self.con.set_progress_handler(None, 0)

    def _live_rows(self) -> int:
        cached = getattr(self, "_live", None)
        if cached is None:
            cached = self._live = self.live_rows()
        return cached


# ---------------------------------------------------------------------------- the indexer


class ContentIndexer:
    """Keeps the content database of one workspace up to date from a worker thread, and
    answers lookups from a read-only connection (the hot path never waits for the worker).

    :meth:`start` (a full sync from a listing) and :meth:`refresh` (changed paths) queue work;
    one sync runs at a time, later requests coalesce. Lookups before the first sync finishes
    answer from the previous database (a restart) or nothing. ``facts`` is kept in memory.
    """

    def __init__(
        self, root: Path | None, cache_dir: Path | None, on_ready: Callable[[ContentIndexer], None] | None = None
    ) -> None:
        self.root = root.resolve() if root is not None else None
        self.on_ready = on_ready
        self.db_path = db_path(cache_dir, self.root) if cache_dir is not None and self.root is not None else None
        self.available = fts5_available()
        self.facts: dict[str, list[str]] = {}
        self.fact_of: dict[str, frozenset[str]] = {}
        self.stats: dict[str, Any] = {}
        self.error: str | None = None
        self.builds = 0
        self._reader: ContentDB | None = None
        self._lock = threading.Lock()
        self._listing: list[str] | None = None
        self._changed: set[str] = set()
        self._full = False
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()
        self._idle.set()
        self._closed = False
        if self.available and self.db_path is not None and self.db_path.exists():
            self._reopen()  # yesterday's index answers while today's sync runs

    @property
    def building(self) -> bool:
        """Whether a sync runs (or queued work waits for one)."""
        return not self._idle.is_set()

    @property
    def ready(self) -> bool:
        """Whether a database answers lookups."""
        return self._reader is not None

    def start(self, listing: list[str]) -> None:
        """Queue a full sync against ``listing`` (repo-relative paths)."""
        if self.root is None or self.db_path is None:
            return
        with self._lock:
            self._listing = list(listing)
            self._full = True
        self._kick()

    def refresh(self, changed: list[str], listing: list[str]) -> None:
        """Queue a sync of ``changed`` (repo-relative paths) against the new ``listing``."""
        if self.root is None or self.db_path is None:
            return
        with self._lock:
            self._listing = list(listing)
            self._changed.update(changed)
        self._kick()

    def _kick(self) -> None:
        if not self.available or self._closed:
            return
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._idle.clear()
            self._thread = threading.Thread(target=self._run, name="dsh-content-index", daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no sync runs or waits; ``True`` if so."""
        return self._idle.wait(timeout)

    def close(self) -> None:
        """Stop syncing (after the running batch) and close the reader."""
        self._closed = True
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _run(self) -> None:
        try:
            while not self._closed:
                with self._lock:
                    listing, full, changed = self._listing, self._full, sorted(self._changed)
                    self._full, self._changed = False, set()
                if listing is None or (not full and not changed):
                    break
                self._sync(listing, None if full else changed)
        finally:
            self._idle.set()
            with self._lock:
                pending = self._full or bool(self._changed)
            if pending and not self._closed:
                self._kick()

    def _sync(self, listing: list[str], only: list[str] | None) -> None:
        """One sync on this worker thread (its own writer connection); a database past
        :data:`DEAD_RATIO` dead rows, or of another schema, is rebuilt from scratch."""
        assert self.root is not None and self.db_path is not None
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            try:
                db = ContentDB(self.db_path)
            except sqlite3.DatabaseError:
                self._drop_files()
                db = ContentDB(self.db_path)
            if only is None and db.live_rows() and db.dead_rows() > DEAD_RATIO * db.live_rows():
                db.close()
                self._drop_files()
                db = ContentDB(self.db_path)
            try:
                stats = db.sync(self.root, listing, only, yield_every=YIELD_EVERY)
                db.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                db.close()
        except (sqlite3.Error, OSError) as exc:
            self.error = f"content index build failed ({type(exc).__name__}: {exc})"[:300]
            log.warning("workspace content index: %s", self.error)
            return
        stats["wallS"] = round(time.perf_counter() - t0, 3)
        stats["cpuS"] = round(time.thread_time() - c0, 3)
        try:
            stats["dbBytes"] = self.db_path.stat().st_size
        except OSError:
            stats["dbBytes"] = 0
        self.stats = stats
        self.error = None
        self.builds += 1
        self._reopen()
        if self.on_ready is not None:
            try:
                self.on_ready(self)
            except Exception as exc:  # a listener failure must not stop the indexer
                log.warning("workspace content index listener failed: %s", exc)

    def _drop_files(self) -> None:
        assert self.db_path is not None
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        for suffix in ("", "-wal", "-shm"):
            Path(str(self.db_path) + suffix).unlink(missing_ok=True)

    def _reopen(self) -> None:
        assert self.db_path is not None
        try:
            reader = ContentDB(self.db_path, readonly=True)
            facts = reader.facts()
        except sqlite3.Error as exc:
            log.warning("workspace content index unreadable (%s); it is rebuilt", exc)
            return
        fact_of: dict[str, set[str]] = {}
        for f, paths in facts.items():
            for p in paths:
                fact_of.setdefault(p, set()).add(f)
        old, self._reader = self._reader, reader
        self.facts = facts
        self.fact_of = {p: frozenset(v) for p, v in fact_of.items()}
        if old is not None:
            old.close()

    # ------------------------------------------------------------------ lookups (hot path)

    def search(self, words: Iterable[str], limit: int = 20) -> list[tuple[str, float]]:
        """BM25 matches of any of ``words`` (see :meth:`ContentDB.search`); ``[]`` while no
        database exists."""
        reader = self._reader
        return reader.search(words, limit) if reader is not None else []

    def with_fact(self, fact: str) -> list[str]:
        """Paths with ``fact`` (sorted)."""
        return self.facts.get(fact, [])

    def files_containing(self, paths: Iterable[str], literal: str, limit: int = 5) -> list[str]:
        """Of ``paths`` (tried in order, at most ``limit`` × 4 read), those whose text contains
        ``literal`` (case-insensitive)."""
        if self.root is None or not literal:
            return []
        needle = literal.lower().encode("utf-8", "replace")
        out: list[str] = []
        for i, rel in enumerate(paths):
            if i >= limit * 4 or len(out) >= limit:
                break
            data = _open_file(self.root, rel)
            if data is not None and needle in data.lower():
                out.append(rel)
        return out

    def status(self) -> dict[str, Any]:
        """State and figures for ``dsh/status``."""
        if not self.available:
            state = "unavailable (this Python's SQLite has no FTS5)"
        elif self.root is None or self.db_path is None:
            state = "off"
        elif self.building:
            state = "building"
        elif self.error is not None:
            state = "failed"
        else:
            state = "ready" if self.ready else "pending"
        return {
            "state": state,
            "fts5": self.available,
            "path": str(self.db_path) if self.db_path else None,
            "builds": self.builds,
            "facts": {f: len(v) for f, v in sorted(self.facts.items())},
            **({"error": self.error} if self.error else {}),
            **self.stats,
        }
