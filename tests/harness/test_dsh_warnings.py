"""What the DSH bundle prints on the harness's stderr (``harness-adapters/dsh/lib/warnings.js``)
is one line a warning, and a text from its child never writes a terminal sequence there: the
child's own warnings (``window/logMessage`` of type 1 or 2) are printed as ``the sidecar says:
…``, and were printed raw, so a child could write an OSC 52 clipboard write, a CSI erase or a
bidi override to the user's terminal, and break the line. A warning is at most 2,000 characters
of text: a child's error (its refusal of ``initialize``, a megabyte long) was printed whole."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

SIDECAR_JS = Path(__file__).resolve().parents[2] / "harness-adapters" / "dsh" / "lib" / "sidecar.js"

SCRIPT = """
import { forwardLog } from %s;
const ctx = { logger: () => ({ warn() {}, info() {} }) };
forwardLog(ctx, { type: 1, message: 'evil \\u001b]52;c;SGVsbG8=\\u0007 next\\nline \\u202e\\u009b2J tab\\tok \\u00e9' });
forwardLog(ctx, { type: 2, message: 'plain warning' });
"""


def test_the_childs_warnings_reach_the_terminal_escaped_one_line_each():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    done = subprocess.run(
        [node, "--input-type=module", "-e", SCRIPT % json.dumps(SIDECAR_JS.as_uri())],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "[search-sidecar] warning: the sidecar says: evil \\x1b]52;c;SGVsbG8=\\x07 next\\nline \\u202e\\x9b2J tab\tok é",
        "[search-sidecar] warning: the sidecar says: plain warning",
    ]


HUGE = """
import { warn } from %s;
const ctx = { logger: () => ({ warn() {}, info() {} }) };
// the child's initialize refusal as sidecar.js words it, its message a million characters
warn(ctx, 'search-sidecar', `the sidecar refused the router settings (invalid initializationOptions: router.x: ${'\\u001b[2J'.repeat(1) + 'R'.repeat(1000000)}); they run with their defaults until corrected`);
warn(ctx, 'search-sidecar', 'sidecar did not start; the harness runs as without it', new Error('E'.repeat(1998 - 'sidecar did not start; the harness runs as without it: '.length) + '\\u{1F600}tail'));
"""


def test_a_warning_from_a_childs_huge_text_is_one_bounded_line():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    done = subprocess.run(
        [node, "--input-type=module", "-e", HUGE % json.dumps(SIDECAR_JS.with_name("warnings.js").as_uri())],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    head = "the sidecar refused the router settings (invalid initializationOptions: router.x: "
    # the text cut to 1,999 characters and marked, then escaped (the ESC shows as \\x1b)
    first = head + "\x1b[2J" + "R" * (1999 - len(head) - 4) + "…"
    # 1,999 units would end in half the emoji: the 1,998 before it kept
    lead = "sidecar did not start; the harness runs as without it: "
    second = lead + "E" * (1998 - len(lead)) + "…"
    assert done.stderr.splitlines() == [
        "[search-sidecar] warning: " + first.replace("\x1b", "\\x1b"),
        "[search-sidecar] warning: " + second,
    ]
