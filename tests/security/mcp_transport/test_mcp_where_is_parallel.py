"""Many ``where_is`` calls at once, over real stdio to ``dsh-search mcp`` with the task lead on:
each free-text question no intent answers is ranked as a task on a worker thread, and every
ranking asks the workspace's content index (one SQLite reader connection). Two threads on that
connection at once hung the whole process for good: one held the GIL in
``set_progress_handler`` waiting for the connection's mutex, the other held the mutex in its
query and its progress handler waited for the GIL (every thread then waited; SIGTERM did not end it).
The reader now serves one thread at a time (``workspace/fts.py``, ``ContentDB``)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.mcpline import McpLine
from support.trees import write_tree

pytest.importorskip("mcp", reason="the [mcp] extra is not installed")

#: Words of the workspace's code, each in a few of its files (a word in most files tells nothing).
WORDS = [
    *"retry backoff payment gateway invoice ledger parser tokens grammar cache eviction window".split(),
    *"socket buffer stream codec cipher digest archive bundle render layout widget theme".split(),
    *"queue worker schedule cron metric gauge counter histogram tracer span baggage sampler".split(),
    *"router handler middleware session cookie".split(),
]
#: Questions no intent answers, in those words: each goes to the lead's ranking.
QUESTIONS = [" ".join(WORDS[i : i + 3]) for i in range(0, len(WORDS) - 2, 3)]


def tree(root: Path) -> Path:
    """A workspace of 400 modules whose code uses the questions' words, three a file (the
    content index has a few rows to rank for each)."""
    files = {}
    for n in range(400):
        words = " ".join(WORDS[(n + k) % len(WORDS)] for k in (0, 7, 13))
        files[f"src/pkg{n // 20}/mod{n % 20}.py"] = f'def handle_{n}():\n    """{words}"""\n    return "{words}"\n'
    return write_tree(root, files)


class Mcp(McpLine):
    """The MCP server with the suggester and the task lead on."""

    def __init__(self, tmp_path: Path, workspace: Path) -> None:
        super().__init__(tmp_path, workspace, {"suggester": {"enabled": True, "taskLead": True}})

    def where_is(self, rid: int, query: str) -> None:
        self.send({"id": rid, "method": "tools/call", "params": {"name": "where_is", "arguments": {"query": query}}})


def test_many_where_is_at_once_are_all_answered_and_the_server_still_ends(tmp_path: Path) -> None:
    client = Mcp(tmp_path, tree(tmp_path / "ws"))
    try:
        for _ in range(240):  # once the symbol index is built, every question is ranked
            client.where_is(1, QUESTIONS[0])
            first = client.reply()["result"]["structuredContent"]
            if first["intent"] == "Task" and first.get("index") is None:
                break
            time.sleep(0.25)
        assert first["intent"] == "Task" and first["targets"]
        for rid in range(100, 400):
            client.where_is(rid, QUESTIONS[rid % len(QUESTIONS)])
        answered = {}
        for _ in range(300):
            got = client.reply(timeout=60)  # before: none came after the first few (a hung process)
            answered[got["id"]] = got["result"]["structuredContent"]
        assert sorted(answered) == list(range(100, 400))
        assert {a["intent"] for a in answered.values()} == {"Task"}
        assert all(a["targets"] for a in answered.values())
        assert client.proc.stdin is not None
        client.proc.stdin.close()  # the end of stdin ends a server that still turns
        assert client.proc.wait(timeout=30) == 0
    finally:
        client.close()
