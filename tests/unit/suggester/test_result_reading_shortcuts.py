"""The shortcuts of reading what a result showed read the same as the plain reading.

``shown.listed_files`` reads the lines between two headers as one text and resolves only the
tokens whose last name a listed file has; ``runs.traceback_frames`` scans a pattern only when the
text holds the words each of its matches holds. Each is checked here against the plain reading
(every line tokenised and every token resolved; every pattern scanned) on hostile and real-shaped
texts: the same files and frames, in the same order.
"""

from __future__ import annotations

from pathlib import Path

from dsh_sidecar.suggester.fileindex import FileIndex
from dsh_sidecar.suggester.parse import runs
from dsh_sidecar.suggester.parse.results import result_paths
from dsh_sidecar.suggester.parse.runs import traceback_frames
from dsh_sidecar.suggester.shown import _HEADER, _TOKEN, MAX_SHOWN_CHARS, _Resolver, listed_files
from hypothesis import given, settings
from hypothesis import strategies as st

FILES = ["setup.py", "README.md", "pkg/__init__.py", "pkg/core.py", "pkg/io/html.py", "a/x.py", "b/x.py", "b/y.py"]
INDEX = FileIndex(Path("/ws"), FILES)


def plain_listed_files(text: str, index: FileIndex, base: str = "", dirs: tuple[str, ...] = ()) -> list[str]:
    """Every line read on its own, every token resolved (the reading before the shortcuts)."""
    res = _Resolver(index, base)
    folders = [f for f in (res.folder(d) for d in dirs) if f]
    out: dict[str, None] = {}
    where = folders
    for line in text[:MAX_SHOWN_CHARS].splitlines():
        m = _HEADER.match(line) if line.rstrip().endswith(":") else None
        if m:
            header = res.folder(m.group(1))
            where = [*folders, header] if header else folders
            continue
        for tok in _TOKEN.findall(line):
            p = res.file(tok.rstrip("."), where)
            if p is not None:
                out.setdefault(p, None)
    return list(out)


def test_a_header_lines_own_name_is_no_file_shown_and_the_names_below_it_are_its():
    # ``setup.py:`` is a header line (not tokenised) though ``setup.py`` is a listed file; the
    # blank-separated blocks, the trailing dots, ``a/``/``b/`` and container roots all read
    text = "setup.py:\npkg/io:\nhtml.py.\nb/pkg/core.py\n/testbed/README.md...\nb:\nx.py\u2028y.py\r\nnope.py\n"
    assert listed_files(text, INDEX, "/ws/") == ["pkg/io/html.py", "pkg/core.py", "README.md", "b/x.py", "b/y.py"]
    assert listed_files(text, INDEX, "/ws/") == plain_listed_files(text, INDEX, "/ws/")


def test_a_header_ended_by_any_line_break_is_a_header():
    # the header ``pkg/io:`` ends at a line break ``str.splitlines`` knows, or at the text's end
    for brk in ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"):
        assert listed_files(f"pkg/io: \t{brk}html.py", INDEX, "/ws/") == ["pkg/io/html.py"], repr(brk)
    assert listed_files("html.py\npkg/io:", INDEX, "/ws/") == []
    assert listed_files("pkg/io:x html.py", INDEX, "/ws/") == []  # no header: a colon inside a line
    assert listed_files("pkg/io:  \nhtml.py\n \tb/:\nx.py\n:\nx.py\ny.py:", INDEX, "/ws/") == [
        "pkg/io/html.py",
        "b/x.py",
    ]


def test_a_text_without_a_colon_is_read_against_the_searched_folders():
    text = "x.py\nsrc/../y.py\n./pkg/core.py x.py setup.py\n/mnt/w/repo/pkg/io/html.py\n/usr/lib/setup.py"
    assert listed_files(text, INDEX, "/ws/", ["b"]) == ["b/x.py", "b/y.py", "pkg/core.py", "setup.py", "pkg/io/html.py"]
    assert listed_files(text, INDEX, "/ws/", ["b"]) == plain_listed_files(text, INDEX, "/ws/", ("b",))


_ODD_BREAKS = ("\r\n", "\r", "\x0c", "\x1e", "\u2028", "\x85")
_PIECES = st.sampled_from(
    [*FILES, "x.py", "y.py", "core.py", "html.py", "pkg", "pkg/io", "./", "a/", "b/", "/ws/", "/testbed/", "..", ".",
     "...", ":", ": ", ":\t", "\n", "\r\n", "\r", "\x0c", "\x1e", "\u2028", " ", "\t", "def", "self", "1:", "-", "/", "io/html.py", "\x85"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=40), st.sampled_from([(), ("a",), ("b", "pkg")]))
def test_listed_files_reads_as_the_plain_reading(pieces: list[str], dirs: tuple[str, ...]):
    text = "".join(pieces)
    assert listed_files(text, INDEX, "/ws/", dirs) == plain_listed_files(text, INDEX, "/ws/", dirs)
    text = "".join(p for p in pieces if p not in _ODD_BREAKS)  # the headers found in one scan
    assert listed_files(text, INDEX, "/ws/", dirs) == plain_listed_files(text, INDEX, "/ws/", dirs)


def plain_traceback_frames(text: str) -> list[tuple[str, str]]:
    """Every pattern scanned (the reading before the substring tests)."""
    text = text[-runs.MAX_RESULT_CHARS :]
    py = [(m.start(), m.group(1), m.group(2)) for m in runs._PY_FRAME.finditer(text)]
    py += [(m.start(), m.group(1), m.group(2) or m.group(3)) for m in runs._PYTEST_FRAME.finditer(text)]
    py += [(m.start(), m.group(1), m.group(2)) for m in runs._PY_SYNTAX.finditer(text)]
    out = [(path, func) for _, path, func in sorted(py, reverse=True)]
    for m in runs._NODE_FRAME.finditer(text):
        if not m.group(2).startswith("node:"):
            out.append((m.group(2), (m.group(1) or "").rsplit(".", 1)[-1] or "<anonymous>"))
    out += runs.jvm_frames(text)
    return out[: runs.MAX_FRAMES]


def test_each_kind_of_frame_is_still_read():
    text = (
        'Traceback (most recent call last):\n  File "pkg/core.py", line 3, in run\n'
        '  File "pkg/bad.py", line 9\n    x = (\n        ^\nSyntaxError: bad\n'
        "pkg/t.py:4: in test_x\npkg/t.py:9: ValueError\n"
        "    at f (src/a.js:3:1)\n"
        "at org.x.Foo.bar(Foo.java:42)\n"
    )
    assert traceback_frames(text) == [
        ("pkg/t.py", "ValueError"),
        ("pkg/t.py", "test_x"),
        ("pkg/bad.py", "SyntaxError"),
        ("pkg/core.py", "run"),
        ("src/a.js", "f"),
        ("org/x/Foo.java", "bar"),
    ]
    assert traceback_frames("at org.x.Foo.bar(Foo.java:42)") == [("org/x/Foo.java", "bar")]  # no indent, no space
    assert traceback_frames("\tat f (src/a.js:3:1)") == [("src/a.js", "f")]
    assert traceback_frames("ran 3 tests, ok\nthat is all\n") == []


_FRAME_PIECES = st.sampled_from(
    ['File "', '", line ', "3", ", in ", "f", "\n", " ", "\t", "at ", "a.B.c(", "B.java", ":7)", "x.py", ".py:", ": in ",
     "ValueError", "(", "src/a.js", ":1:2", ")", "Caused by: ", "SyntaxError", "node:internal/x.js"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(_FRAME_PIECES, max_size=40))
def test_traceback_frames_reads_as_every_pattern_scanned(pieces: list[str]):
    text = "".join(pieces)
    assert traceback_frames(text) == plain_traceback_frames(text)


def test_a_listings_match_count_is_read_off_in_both_spellings_and_only_there():
    text = "src/a.py (3 matches)\nsrc/b.py (1 match)\nsrc/c.py (x)\nsrc/d.py\n"
    assert result_paths(text) == ["src/a.py", "src/b.py", "src/d.py"]
