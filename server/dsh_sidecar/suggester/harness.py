"""A test tree's fixtures listed: the harness that runs them is what the call asks for.

``ls tests/ui/`` in a Rust crate lists trybuild's ``.rs``/``.stderr`` pairs; the test that
runs them is ``tests/compiletest.rs`` (``t.compile_fail("tests/ui/*.rs")``) — the way the
test runner itself reaches the folder, by its path written in a test module. The same holds
for Go's ``testdata/`` read by a ``_test.go`` file, a snapshot or golden folder read by the
test that compares against it. A listing *is* fixtures when it lists one folder inside a test
tree (not the tree's root: a bare ``ls tests/`` asks nothing) and shows no file named like a
test module (``test_*.py``, ``*_test.go``, ``*.test.ts``, ``*Test.java``…: those are the
tests themselves, and the listing is a look at the tests).

The harness is found the way a reader would: the test modules outside the folder whose text
names the folder's path from its test root on (``tests/ui``), the closest first; at most
:data:`MAX_READ` files are read (their first bytes, ``ContentView.files_containing``), so the
work is bounded whatever the tree.
"""

from __future__ import annotations

from typing import Final, Protocol

from dsh_sidecar.suggester.candidates import is_test_path
from dsh_sidecar.suggester.fileindex import is_fixture
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.suggester.ports import ContentView
from dsh_sidecar.workspace.kinds import TEST_DIRS, code_language_of

#: Most harness files named (and a fourfold of them read, at most :data:`MAX_READ`).
MAX_HARNESS: Final = 3
MAX_READ: Final = 4 * MAX_HARNESS


class _Index(Protocol):
    def with_kind(self, kind: str) -> list[str]: ...


def listed_folder(q: Query) -> str | None:
    """The folder a listing of fixtures lists (module docstring), ``None`` for any other call."""
    if not q.listing or q.patterns or q.name_patterns or len(q.scope) != 1 or not q.result_paths:
        return None
    folder = q.scope[0].strip("/")
    parts = folder.split("/")
    if len(parts) < 2 or not any(p.lower() in TEST_DIRS for p in parts[:-1]):
        return None
    if any(is_test_path(p.rstrip("/").rsplit("/", 1)[-1]) for p in q.result_paths):
        return None
    return folder


def literal_of(folder: str) -> str:
    """The folder's path from its innermost test root on: what a harness writes to reach it
    (``test_suite/tests/ui`` → ``tests/ui``)."""
    parts = folder.split("/")
    root = max(i for i, p in enumerate(parts[:-1]) if p.lower() in TEST_DIRS)
    return "/".join(parts[root:])


def harness(folder: str, index: _Index, content: ContentView | None) -> list[str]:
    """The test modules outside ``folder`` whose text names it (module docstring), best first:
    those under the folder's own test root first, then by depth and name."""
    if content is None:
        return []
    literal = literal_of(folder)
    base = folder[: len(folder) - len(literal)]
    inside = folder + "/"
    candidates = [
        p
        for p in index.with_kind("test-module")
        if not p.startswith(inside) and not is_fixture(p) and code_language_of(p) is not None
    ]
    candidates.sort(key=lambda p: (not p.startswith(base), p.count("/"), p))
    return content.files_containing(candidates[:MAX_READ], literal, MAX_HARNESS)


def named(intent: str, paths: list[str], q: Query) -> bool:
    """Whether a note of ``intent`` naming ``paths`` names a harness: a Test call listing a
    test tree's fixtures, and none of ``paths`` inside the folder it lists (those are the
    listing itself). Such a note is a question of where the tests are run, as a test
    runner's configuration is: the call's folder is its support, not a ranking of code."""
    folder = listed_folder(q) if intent == "Test" else None
    return folder is not None and bool(paths) and not any(p.startswith(folder + "/") for p in paths)
