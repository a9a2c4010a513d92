"""What the DSH bundle prints on the harness's stderr (``harness-adapters/dsh/lib/warnings.js``)
is one line a warning, and a text from its child never writes a terminal sequence there: the
child's own warnings (``window/logMessage`` of type 1 or 2) are printed as ``the sidecar says:
…``, and were printed raw, so a child could write an OSC 52 clipboard write, a CSI erase or a
bidi override to the user's terminal, and break the line."""

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
