"""The content index's reader (``workspace/fts.py``, ``ContentDB``) is one SQLite connection that
the suggester's threads share (``where_is`` and the task lead on worker threads, a note on the
event loop). ``search`` sets a progress handler (its step budget) holding the GIL, which waits for
the connection's mutex; a query running on another thread holds that mutex and calls its progress
handler, which waits for the GIL: two searches at once hung the process for good. Each runs in a
forked child, so a regression fails instead of hanging the run."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from dsh_sidecar.workspace import fts
from dsh_sidecar.workspace.graph import WorkspaceGraph
from support.secutil import finishes_in_child
from support.trees import write_tree

pytestmark = pytest.mark.skipif(not fts.fts5_available(), reason="this Python's SQLite has no FTS5")

WORDS = "retry backoff payment gateway invoice ledger parser tokens grammar cache eviction window".split()


def reader(tmp_path: Path) -> fts.ContentDB:
    """A read-only connection to the content database of 300 small modules."""
    files = {}
    for n in range(300):
        words = " ".join(WORDS[(n + k) % len(WORDS)] for k in (0, 5))
        files[f"src/p{n // 30}/m{n}.py"] = f'def f{n}():\n    return "{words}"\n'
    root = write_tree(tmp_path / "ws", files)
    graph = WorkspaceGraph.build_files(root)
    writer = fts.ContentDB(tmp_path / "cache" / "content.sqlite")
    try:
        writer.sync(root, graph.files, stats=graph.file_stats(), kinds=graph.classified)
    finally:
        writer.close()
    return fts.ContentDB(tmp_path / "cache" / "content.sqlite", readonly=True)


def test_searches_and_lookups_from_many_threads_at_once_all_finish_with_the_same_answers(tmp_path):
    db = reader(tmp_path)
    alone = {w: db.search([w, "payment"], 50) for w in WORDS}
    assert all(alone.values())
    got: list[bool] = []

    def many() -> None:
        def run(k: int) -> None:
            for i in range(150):
                w = WORDS[(i + k) % len(WORDS)]
                got.append(db.search([w, "payment"], 50) == alone[w])
                db.keys(f"src/p0/m{i % 30}.py")

        threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert got == [True] * 600

    finishes_in_child(many, timeout=60)  # before: hung within the first few searches


def test_a_reader_closed_while_other_threads_search_answers_no_match(tmp_path):
    db = reader(tmp_path)

    def close_meanwhile() -> None:
        answers: list[list[tuple[str, float]]] = []

        def run() -> None:
            for _ in range(200):
                answers.append(db.search(["retry", "ledger"], 50))

        threads = [threading.Thread(target=run) for _ in range(3)]
        for t in threads:
            t.start()
        db.close()  # a reopen closes the old reader while lookups still hold it
        for t in threads:
            t.join()
        assert len(answers) == 600 and answers[-1] == []  # no error, no hang: a closed reader matches nothing
        assert db.keys("src/p0/m0.py") is None

    finishes_in_child(close_meanwhile, timeout=60)
