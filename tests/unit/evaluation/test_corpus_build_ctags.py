"""The corpus builder's definitions (``corpus/intents/build.py``, ``ctags``) on Kotlin with
back-quoted names: Universal Ctags 5.9 prints stray bytes (often not UTF-8) or the file name in
place of such a name; the builder keeps the other definitions of the tree and drops those."""

from __future__ import annotations

import shutil

import pytest

from corpus.intents import build

pytestmark = pytest.mark.skipif(shutil.which("ctags") is None, reason="Universal Ctags is not installed")


def test_back_quoted_kotlin_names_do_not_stop_the_definitions(tmp_path):
    for i in range(40):  # each back-quoted name is a fresh chance of a byte that is not UTF-8
        (tmp_path / f"K{i}.kt").write_text(
            f"package a\n\ninternal class `-Reader{i}` : JsonReader {{\n"
            f"  fun `multiple non-property parameters`() {{}}\n  fun plain{i}() {{}}\n}}\n",
            encoding="utf-8",
        )
    rows = build.ctags(tmp_path)
    assert sorted(rows) == sorted((f"plain{i}", "method", f"K{i}.kt", 5) for i in range(40))
