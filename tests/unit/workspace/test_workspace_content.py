"""The workspace content index (workspace/content.py): facts from names and contents, FTS5
BM25 lookups, incremental syncs, docs roots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dsh_sidecar.workspace.content import ContentIndexer
from dsh_sidecar.workspace.facts import docs_pages, docs_roots, facts_of, name_facts, path_words
from dsh_sidecar.workspace.files import list_files
from dsh_sidecar.workspace.fts import fts5_available
from dsh_sidecar.workspace.kinds import KINDS
from support.trees import copy_fixture, write_tree

pytestmark = pytest.mark.skipif(not fts5_available(), reason="this Python's SQLite has no FTS5")


def write(root: Path, files: dict[str, str]) -> list[str]:
    """``files`` written under ``root``; their listing."""
    write_tree(root, files)
    return sorted(files)


def test_path_words_split_folders_snake_and_camel():
    assert path_words("src/HttpClient/retry_policy.py") == "src httpclient http client retry policy py"


@pytest.mark.parametrize(
    ("path", "kind", "text", "facts"),
    [
        ("pkg/__version__.py", "source", '__version__ = "1.2.3"\n', {"version-module"}),
        ("lib/x/version.rb", "source", '  VERSION = "4.1.0"\n', {"version-module"}),
        ("pkg/core.py", "source", "x = 1\n", set()),
        (
            "pyproject.toml",
            "manifest",
            '[project]\nversion = "1"\nauthors = [{name = "a"}]\n',
            {"manifest-version", "manifest-authors"},
        ),
        ("docs/History.rst", "doc", "x\n", {"changelog"}),
        ("notes/releases.md", "doc", "## [1.2.0] - 2024-01-02\n\n## [1.1.0] - 2023-05-01\n", {"changelog"}),
        ("RELEASE.md", "doc", "## [1.2.0] - 2024-01-02\n\n## 1.1.0\n", {"changelog"}),
        ("README.md", "doc", "# x\n\n## Maintainers\n\n- me\n", {"owners-section"}),
        ("MAINTAINERS", "other", "me\n", {"owners"}),
        (
            ".github/workflows/ci.yml",
            "config",
            "jobs:\n  t:\n    steps:\n      - run: pytest -q\n",
            {"ci-workflow", "ci-tests"},
        ),
        (
            ".github/workflows/release.yml",
            "config",
            "jobs:\n  r:\n    steps:\n      - run: twine upload\n",
            {"ci-workflow"},
        ),
        ("tests/test_a.py", "test", "def test_a():\n    pass\n", {"test-module"}),
        ("app/settings.py", "source", "import os\nDEBUG = os.environ.get('DEBUG')\n", {"env-config"}),
        ("conftest.py", "test", "import pytest\n", {"test-config", "test-module"}),
    ],
)
def test_facts_from_names_and_contents(path, kind, text, facts):
    assert facts_of(path, kind, text) == facts


NAMED_PATHS = [
    "CHANGELOG.md",
    "docs/changes",
    "HISTORY.rst",
    "node_modules/x/CHANGELOG.md",
    "CODEOWNERS",
    ".github/CODEOWNERS",
    "OWNERS",
    "credits.txt",
    ".eslintrc.json",
    "web/eslint.config.mjs",
    "ruff.toml",
    "RUFF.TOML",
    ".pre-commit-config.yaml",
    ".bumpversion.cfg",
    "GitVersion.yml",
    "tox.ini",
    "sub/tox.ini",
    "noxfile.py",
    ".gitlab-ci.yml",
    "sub/.gitlab-ci.yml",
    ".github/workflows/ci.yml",
    ".github/workflows/notes.md",
    ".circleci/config.yml",
    "Jenkinsfile",
    "ci/Jenkinsfile",
    "tests/test_x.py",
    "tests/data/x.json",
    "conftest.py",
    "pytest.ini",
    "jest.config.ts",
    "src/pkg/mod.py",
    "README.md",
    "Makefile",
]


def test_name_facts_are_the_facts_of_an_unread_file():
    """The one-match shortcut over a whole listing gives what the full rules give a file unread,
    for every path of this repository and the names the rules name, under every kind."""
    repo = Path(__file__).resolve().parents[3]
    paths = list_files(repo) + NAMED_PATHS
    assert len(paths) > 1000
    for kind in KINDS:
        for path in paths:
            assert name_facts(path, kind) == facts_of(path, kind, None), (path, kind)
    assert name_facts("CHANGELOG.md", "doc") == {"changelog"} and name_facts("src/pkg/mod.py", "source") == set()


def test_one_scan_finds_every_name_a_rule_may_match():
    """The names one automaton pass over a listing gives (``facts.rule_named``) hold every name
    a rule matches alone, case, other scripts and a line break in a name included."""
    from dsh_sidecar.workspace.facts import _NAME_RULES, rule_named

    repo = Path(__file__).resolve().parents[3]
    names = [p.rsplit("/", 1)[-1] for p in list_files(repo) + NAMED_PATHS]
    odd = ["CHANGES.ñ", "ＣＨＡＮＧＥＳ.md", "history.fr.md", "Authors", "owners.ä", ".ESLINTRC.JSON", "x.py", "é"]
    for listing in (names + odd, odd, names + ["CHANGES\nHISTORY.md", "b\nCHANGES"], [], ["CHANGES"]):
        expected = {i for i, n in enumerate(listing) if _NAME_RULES.match(n)}
        found = set(rule_named(listing))
        assert expected <= found and all(0 <= i < len(listing) for i in found), listing[:3]
        assert len(found - expected) <= len(listing) // 10  # a superset, not everything


def test_docs_roots_wherever_the_docs_folder_is():
    files = ["site/content/a.md", "guide/index.rst", "guide/b.rst", "guide/conf.py", "guide/c.rst", "src/x.py"]
    assert docs_roots(files) == {"site", "guide"}
    assert docs_pages(files) == ["guide/b.rst", "guide/c.rst", "guide/index.rst", "site/content/a.md"]


def test_index_search_facts_and_incremental_sync(tmp_path):
    root = tmp_path / "ws"
    listing = write(
        root,
        {
            "docs/retry.md": "# Retries\n\nThe client retries with exponential backoff on timeouts.\n",
            "docs/index.md": "# Home\n\nWelcome.\n",
            "src/app/errors.py": 'raise ValueError("could not connect to the upstream server")\n',
            "tests/test_retry.py": "def test_backoff():\n    assert retry_backoff(3) == 8\n",
            "CHANGES.txt": "1.0\n---\n\n0.9\n---\n",
        }
        | {f"src/app/m{i}.py": "x = 1\n" for i in range(60)},
    )
    ix = ContentIndexer(root, tmp_path / "home")
    assert not ix.ready and ix.search(["retry"]) == []
    ix.start(listing)
    assert ix.wait(60) and ix.ready
    assert ix.status()["state"] == "ready" and ix.stats["read"] == len(listing)
    hits = [p for p, _ in ix.search(["backoff"])]
    assert hits[:2] == ["tests/test_retry.py", "docs/retry.md"] or hits[:2] == ["docs/retry.md", "tests/test_retry.py"]
    assert [p for p, _ in ix.search(["upstream"])] == ["src/app/errors.py"]  # a message literal of code
    assert ix.search(["nonexistentword"]) == []
    assert ix.with_fact("changelog") == ["CHANGES.txt"]
    assert ix.files_containing(["src/app/errors.py", "docs/index.md"], "Could Not Connect") == ["src/app/errors.py"]
    # a restart re-reads nothing; one changed file is re-read alone
    again = ContentIndexer(root, tmp_path / "home")
    assert again.ready  # yesterday's database answers at once
    again.start(listing)
    assert again.wait(60) and again.stats["read"] == 0 and again.stats["unchanged"] == len(listing)
    (root / "docs/index.md").write_text("# Home\n\nNow about zeppelins.\n")
    again.refresh(["docs/index.md"], ["docs/index.md"])
    assert again.wait(60) and again.stats["lastChange"]["read"] == 1 and again.stats["read"] == 0
    assert [p for p, _ in again.search(["zeppelin"])] == ["docs/index.md"]
    # a removed file leaves the index and its facts; a new one joins them, each in one partial sync
    seen: list[object] = []
    again.on_ready = lambda ix, changes: seen.append(changes)
    (root / "CHANGES.txt").unlink()
    (root / "HISTORY.md").write_text("2.0\n---\n\n1.0\n---\n")
    again.refresh(["CHANGES.txt", "HISTORY.md"], ["HISTORY.md"])
    assert again.wait(60) and again.stats["lastChange"]["read"] == 1 and again.stats["lastChange"]["removed"] == 1
    assert seen == [{"CHANGES.txt": None, "HISTORY.md": frozenset({"changelog"})}]
    assert again.with_fact("changelog") == ["HISTORY.md"]
    assert again.fact_of.get("CHANGES.txt") is None and again.fact_of["HISTORY.md"] == {"changelog"}
    ix.close()
    again.close()


def test_a_word_in_most_files_is_left_out_of_a_lookup(tmp_path):
    root = tmp_path / "ws"
    listing = write(root, {f"docs/p{i}.md": f"# common page {i}\n" for i in range(80)} | {"docs/x.md": "rare\n"})
    ix = ContentIndexer(root, tmp_path / "home")
    ix.start(listing)
    assert ix.wait(60)
    assert ix.search(["common"]) == []  # in 80 of 81 files: tells nothing
    assert [p for p, _ in ix.search(["common", "rare"])] == ["docs/x.md"]
    ix.close()


def test_a_word_is_looked_up_by_the_stem_the_index_stores(tmp_path):
    """The vocabulary holds Porter stems ("retry" is "retri"): a word whose stem is not itself is
    found, its inflections too, and its document frequency is the stem's (a common one left out)."""
    from dsh_sidecar.workspace.stems import indexed_term

    assert [indexed_term(w) for w in ("retry", "policy", "gateway", "flaky", "timeout")] == [
        "retri",
        "polici",
        "gatewai",
        "flaki",
        "timeout",
    ]
    root = tmp_path / "ws"
    files = {
        "docs/retry-policy.md": "# Retry policy\n\nRetrying through the gateway.\n",
        "docs/flaky.md": "# Flaky tests\n",
    } | {f"docs/p{i}.md": f"# page {i}\n\nThe policies of page {i}.\n" for i in range(80)}
    listing = write(root, files)
    ix = ContentIndexer(root, tmp_path / "home")
    ix.start(listing)
    assert ix.wait(60)
    assert [p for p, _ in ix.search(["retry"])] == ["docs/retry-policy.md"]
    assert [p for p, _ in ix.search(["retries"])] == ["docs/retry-policy.md"]
    assert [p for p, _ in ix.search(["gateway"])] == ["docs/retry-policy.md"]
    assert [p for p, _ in ix.search(["flaky"])] == ["docs/flaky.md"]
    assert ix.search(["policy"]) == []  # "polici": in 81 of 82 files, tells nothing
    ix.close()


def test_no_workspace_is_inert(tmp_path):
    ix = ContentIndexer(None, tmp_path)
    ix.start(["a"])
    assert ix.wait(1) and ix.status()["state"] == "off" and ix.search(["a"]) == []


def test_an_unchanged_listing_is_known_by_its_fingerprint(tmp_path, monkeypatch):
    """A full sync given the listing's stats (the graph's: one stat per file for the whole build)
    compares no row when the stats are those the last full sync stored a fingerprint of; a file
    changed since, or put in place of another with the same size and mtime (its inode), is read
    again, and the rows are never loaded whole (read in pages beside the listing)."""
    from dsh_sidecar.workspace import fts
    from dsh_sidecar.workspace.stats import stat_files

    root = tmp_path / "ws"
    listing = write(root, {f"docs/p{i}.md": f"# page {i}\n" for i in range(30)} | {"a.py": "x = 1\n"})
    stats = lambda: stat_files(root, listing)  # noqa: E731
    ix = ContentIndexer(root, tmp_path / "cache")
    ix.start(listing, stats)
    assert ix.wait(60) and ix.stats["read"] == len(listing) and "fingerprint" not in ix.stats
    again = ContentIndexer(root, tmp_path / "cache")
    again.start(listing, stats)
    assert again.wait(60) and again.stats["fingerprint"] is True and again.stats["unchanged"] == len(listing)
    st = (root / "docs/p3.md").stat()
    (root / "new.md").write_text("# page 9\n")  # the same size, then the same mtime: another inode
    os.utime(root / "new.md", ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(root / "new.md", root / "docs/p3.md")
    (root / "a.py").write_text("x = 22\n")
    third = ContentIndexer(root, tmp_path / "cache")
    third.start(listing, stats)
    assert third.wait(60) and third.stats["read"] == 2 and third.stats["unchanged"] == len(listing) - 2
    assert [p for p, _ in third.search(["page"], 40)]  # the index still answers
    for x in (ix, again, third):
        x.close()
    # a listing with a file gone and one added: the rows are read page by page (here 7 a page)
    (root / "docs/p0.md").unlink()
    (root / "docs/zz.md").write_text("# last\n")
    listing = sorted({*listing, "docs/zz.md"} - {"docs/p0.md"})
    monkeypatch.setattr(fts, "PAGE", 7)
    db = fts.ContentDB(tmp_path / "cache" / third.db_path.name)
    try:
        counts = db.sync(root, listing, None, None, stat_files(root, listing))
    finally:
        db.close()
    assert (counts["read"], counts["removed"], counts["unchanged"]) == (1, 1, len(listing) - 1)


def _database(path: Path) -> tuple[list[tuple], list[tuple]]:
    """Every row of a content database's ``files`` table and its FTS vocabulary (term, files,
    occurrences), in order."""
    import sqlite3

    con = sqlite3.connect(path)
    try:
        rows = con.execute("SELECT * FROM files ORDER BY path").fetchall()
        vocab = con.execute("SELECT term, doc, cnt FROM fts_vocab ORDER BY term").fetchall()
    finally:
        con.close()
    return rows, vocab


def test_a_full_sync_folder_by_folder_with_the_listings_kinds_writes_the_same_rows(tmp_path, monkeypatch):
    """The content index of a full sync that reads the files folder by folder
    (``fsguard.FolderReader``) and takes their kinds from the graph's listing is the database
    of one that reads each file by its path (``read_or_none``) and classifies it: the same rows,
    facts, declarations and postings, the same answers (symlinks in and out, a FIFO, a binary,
    a lock, a file over the read cap, manifests, tests, docs)."""
    from dsh_sidecar.workspace import fsguard, fts
    from dsh_sidecar.workspace.graph import WorkspaceGraph

    root = copy_fixture("shopcart", tmp_path / "ws")
    write_tree(
        root,
        {
            "package.json": '{"name": "x", "version": "1.2.3", "scripts": {"test": "jest"}, "jest": {}}\n',
            "src/shopcart/_version.py": '__version__ = "4.5.6"\n',
            "src/shopcart/HttpClient.py": 'raise RuntimeError("could not reach the payment gateway")\n',
            ".github/workflows/ci.yml": "jobs:\n  t:\n    steps:\n      - run: pytest -q\n",
            "poetry.lock": "[[package]]\nname = 'a'\n",
            "assets/logo.bin": "\0\1\2binary",
            "deep/a/b/c/d/notes.md": "# Retry policy\n\nExponential backoff for flaky uploads.\n",
        },
    )
    (root / "huge.txt").write_bytes(b"word " * (fts.MAX_FILE_BYTES // 5 + 1))
    # over the head that is read (its words past the head are not indexed), under the cap
    (root / "docs/long.md").write_bytes(b"alpha beta gamma\n" * (fts.MAX_READ_BYTES // 17) + b"omega tail\n" * 999)
    os.symlink("src/shopcart/_version.py", root / "alias.py")
    (tmp_path / "outside-secret.py").write_text("password = 'hunter2'\n")
    os.symlink(tmp_path / "outside-secret.py", root / "outside.py")  # a file out of the workspace
    os.mkfifo(root / "pipe.md")  # (not listed)
    graph = WorkspaceGraph.build_files(root)
    assert graph.classified is not None

    def build(cache: Path, kinds: list[str] | None) -> fts.ContentDB:
        db = fts.ContentDB(cache / "content.sqlite")
        counts = db.sync(root, graph.files, stats=graph.file_stats(), kinds=kinds)
        assert counts["read"] == len(graph.files)
        return db

    new = build(tmp_path / "new", graph.classified)
    with monkeypatch.context() as m:  # each file by its path, classified here: the path before
        m.setattr(fsguard._OPENAT2, "usable", False)
        old = build(tmp_path / "old", None)
    assert _database(new.path) == _database(old.path)
    rows, vocab = _database(new.path)
    assert len(rows) == len(graph.files) and len(vocab) > 50
    by_path = {r[0]: r for r in rows}
    assert by_path["alias.py"][6] == "version-module" and by_path["poetry.lock"][7] == 0
    assert by_path["docs/long.md"][7] == 4 and new.search(["omega"]) == []  # alpha beta gamma omeg(a)
    assert by_path["huge.txt"][7] == 0 and by_path["outside.py"][7] == 0 and "pipe.md" not in by_path
    for words in (["payment"], ["backoff"], ["shopcart"], ["version"], ["jest"]):
        assert new.search(words) == old.search(words)
    assert [p for p, _ in new.search(["payment"])] == ["src/shopcart/HttpClient.py"]
    new.close()
    old.close()


def test_path_words_and_code_extensions_are_those_of_the_whole_path():
    """A path's words are its folder's (kept per folder) then its name's, each once, as if the
    whole path were split; a code extension is one of the kinds' source extensions but markup."""
    import random

    from dsh_sidecar.workspace import facts
    from dsh_sidecar.workspace.kinds import SOURCE_EXTENSIONS

    def whole(path: str) -> str:
        out: list[str] = []
        facts._split_words(path, out)
        return " ".join(dict.fromkeys(out))

    def code(path: str) -> bool:
        dot = path.rfind(".")
        ext = path[dot:].lower() if dot > path.rfind("/") else ""
        return ext in SOURCE_EXTENSIONS and ext not in (".css", ".scss", ".less", ".html", ".htm", ".sql", ".graphql")

    rnd = random.Random(7)
    paths = ["".join(rnd.choice("aB/._- Xz09.pyJScss") for _ in range(rnd.randint(0, 24))) for _ in range(20000)]
    paths += ["", "/", "a/", "/x", "a//b", ".py", "a/.py", "A.PY", "x.CSS", "HTTPServer/getURLFor.py", "a_/b", "a/_b"]
    assert [facts.path_words(p) for p in paths] == [whole(p) for p in paths]
    assert [facts.kind_is_code(p) for p in paths] == [code(p) for p in paths]
    assert facts.path_words("src/HttpClient/retry_policy.py") == "src httpclient http client retry policy py"
    assert facts.path_words("src/a/src/A.py") == "src a py"


def test_a_full_sync_waits_for_what_goes_first_and_none_starts_once_the_indexer_is_closed(tmp_path):
    """The full sync waits for ``after()`` (the graph's symbol pass: one pass over the files at a
    time); an indexer closed meanwhile (the sidecar's shutdown during a cold start) reads no file
    and writes no database once the wait ends."""
    import threading

    root = tmp_path / "ws"
    listing = write(root, {"a.py": "x = 1\n", "docs/p.md": "# page\n"})
    for closed in (False, True):
        cache = tmp_path / f"cache-{closed}"
        ix = ContentIndexer(root, cache)
        waiting, release = threading.Event(), threading.Event()

        def after(waiting: threading.Event = waiting, release: threading.Event = release) -> None:
            waiting.set()
            release.wait(30)

        ix.start(listing, after=after)
        assert waiting.wait(30)
        assert ix.builds == 0 and not ix.wait(0.05)  # no sync while what goes first runs
        if closed:
            ix.close()
        release.set()
        assert ix.wait(30)
        assert (ix.builds, ix.db_path.exists()) == ((0, False) if closed else (1, True))
        assert ix.stats.get("read") == (None if closed else len(listing))
        ix.close()
