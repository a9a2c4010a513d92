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
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    done = subprocess.run(
        [node, "--input-type=module", "-e", SCRIPT % json.dumps(NOTE_JS.as_uri())],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
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
