"""The DSH bundle's note message (harness-adapters/dsh/lib/note.js) under Node: the seed's
source label ``{kind: "search-suggester", form: "notice", summary}`` with the summary cut to
120 characters, the note's text as the one text block, and a frozen message."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

NOTE_JS = Path(__file__).resolve().parents[2] / "harness-adapters" / "dsh" / "lib" / "note.js"

SCRIPT = """
import { noteMessage } from %s;
const long = noteMessage({ text: 'search-suggester: look here', source: { summary: 'V'.repeat(130) } });
const short = noteMessage({ text: 'first line\\nsecond', source: {} });
process.stdout.write(JSON.stringify({ long, short, frozen: Object.isFrozen(long) && Object.isFrozen(long.source) }));
"""


def test_note_message_label_and_summary_bound():
    out = _node(SCRIPT)
    assert isinstance(out, dict)
    long, short = out["long"], out["short"]
    assert long["role"] == "user" and long["content"] == [{"type": "text", "text": "search-suggester: look here"}]
    assert long["source"] == {"kind": "search-suggester", "form": "notice", "summary": "V" * 119 + "…"}
    assert len(long["source"]["summary"]) == 120
    assert short["source"]["summary"] == "first line"  # no summary from the sidecar: the note's first line
    assert long["id"] != short["id"] and out["frozen"] is True


TASK_SCRIPT = """
import { taskText, MAX_TASK_CHARS } from %s;
const text = (t) => [{ type: 'text', text: t }];
const messages = [
  { role: 'user', content: text('Cart.total crashes'), source: { kind: 'user' } },
  { role: 'user', content: text('Current runtime context'), source: { kind: 'dsh', form: 'snapshot', summary: 's' } },
  { role: 'user', content: text('a note'), source: { kind: 'search-suggester', form: 'notice', summary: 'n' } },
  { role: 'assistant', content: text('I will look'), source: { kind: 'model' } },
  { role: 'user', content: [{ type: 'image' }, ...text('with a log')] },
];
process.stdout.write(JSON.stringify({
  task: taskText(messages),
  long: taskText([{ role: 'user', content: text('x'.repeat(MAX_TASK_CHARS + 10)) }]).length,
  none: taskText(undefined),
}));
"""


def test_task_text_is_the_users_own_words():
    """The task lead's text (DSH's first step): the user's text blocks only, never a plugin's or
    the harness's labelled context, the model's turn or a non-text block; bounded."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    done = subprocess.run(
        [node, "--input-type=module", "-e", TASK_SCRIPT % json.dumps(NOTE_JS.as_uri())],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"task": "Cart.total crashes\n\nwith a log", "long": 200_000, "none": ""}


CUT_SCRIPT = """
import { taskText, MAX_TASK_CHARS } from %s;
const emoji = '\\u{1F600}';
const text = 'x'.repeat(MAX_TASK_CHARS - 1) + emoji + ' fix it';
process.stdout.write(JSON.stringify({ task: taskText([{ role: 'user', content: [{ type: 'text', text }] }]) }));
"""
CUTS_SCRIPT = """
import { cutText } from %s;
const emoji = '\\u{1F600}';
process.stdout.write(JSON.stringify([cutText('ab' + emoji, 3), cutText('ab' + emoji, 4), cutText('abc', 2), cutText('a' + emoji, 2)]));
"""


def _node(script: str) -> object:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    done = subprocess.run(
        [node, "--input-type=module", "-e", script % json.dumps(NOTE_JS.as_uri())],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_cut_never_ends_in_half_a_surrogate_pair():
    assert _node(CUTS_SCRIPT) == ["ab", "ab\U0001f600", "ab", "a"]


def test_a_task_cut_at_its_bound_never_ends_in_half_an_emoji_and_the_sidecar_takes_it(tmp_path):
    """A user's message over the task bound (200,000 UTF-16 units) with an emoji across the cut:
    the cut ended in half of it (a lone surrogate), which the sidecar refuses (-32602 on
    ``task``), so that session had no task lead at all; now the whole emoji is left out."""
    task = _node(CUT_SCRIPT)["task"]
    assert task == "x" * 199_999
    from support.rawrpc import RawServer

    server = RawServer(tmp_path / "home", cwd=tmp_path)
    try:
        server.initialize({"suggester": {"enabled": True, "taskLead": True}}, root=tmp_path)
        reply = server.request("dsh/taskLead", {"sessionId": "s1", "task": task}, timeout=60)
        assert reply["result"] == {"additionalContexts": []}  # before: -32602 "task: Input should be a valid string…"
    finally:
        server.proc.kill()
        server.proc.wait()


ROUTE_SCRIPT = """
const { routeParams } = await import(new URL('./router.js', %s));
const emoji = '\\u{1F600}';
process.stdout.write(JSON.stringify({
  cut: routeParams({ query: 'x'.repeat(1999) + emoji + ' tail' }).query,
  whole: routeParams({ query: 'x'.repeat(1998) + emoji + ' tail' }).query,
}));
"""


def test_a_web_search_query_cut_at_its_bound_never_ends_in_half_an_emoji(tmp_path):
    """The web seam's query is cut to the sidecar's 2,000 UTF-16 units: with an emoji across
    the cut it ended in half of it, and the sidecar refused the search (-32602 on ``query``);
    now the whole emoji is left out, and the sidecar takes the query."""
    out = _node(ROUTE_SCRIPT)
    assert isinstance(out, dict)
    assert out["cut"] == "x" * 1999
    assert out["whole"] == "x" * 1998 + "\U0001f600"
    from support.rawrpc import RawServer

    server = RawServer(tmp_path / "home", cwd=tmp_path)
    try:
        server.initialize(
            {"router": {"order": ["searxng"], "providers": {"searxng": {"baseUrl": "http://127.0.0.1:9/s"}}}},
            root=tmp_path,
        )
        reply = server.request("dsh/routeSearch", {"query": out["cut"], "deadlineMs": 2000}, timeout=60)
        assert "error" not in reply or reply["error"]["code"] != -32602, reply
    finally:
        server.proc.kill()
        server.proc.wait()
