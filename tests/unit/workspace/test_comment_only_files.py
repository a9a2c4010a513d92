"""A code file of blank lines and whole-line comments is not parsed by tree-sitter
(``symbols._COMMENTS_ONLY``): its symbols are the ones the parse and the query give — no
definition, the same tokens, the same parser name — for every language with a grammar here,
whatever the comments say; a file with anything else in it is parsed as before."""

from __future__ import annotations

import random

import pytest
from dsh_sidecar.workspace import symbols
from dsh_sidecar.workspace.symbols import FileSymbols, extract

#: A path of each language with a grammar here, and its line comment.
LANGUAGES = {
    "a.py": b"#",
    "a.js": b"//",
    "a.ts": b"//",
    "a.tsx": b"//",
    "a.go": b"//",
    "a.rs": b"//",
    "a.java": b"//",
}

#: Lines that define something in one language or another (or look as if they might).
CODE = [
    b"def f(): pass",
    b"class A: pass",
    b"x = 1",
    b"x: int",
    b"a, b = 1, 2",
    b"function g() {}",
    b"const C = 1;",
    b"var v = 2",
    b"let w = 3",
    b"({1(){}})",
    b'({"s"(){}})',
    b"export const E = 1",
    b"interface I { p: number }",
    b"type T = { q: string }",
    b"func H() {}",
    b"type S struct{}",
    b"fn r() {}",
    b"struct P;",
    b"macro_rules! m { () => {} }",
    b"class J { void k() {} }",
    b"enum N { A }",
    b"/* block */ x = 1",
    b"`",
    b'"""',
    b"\\",
]


def parsed(path: str, data: bytes, monkeypatch: pytest.MonkeyPatch) -> FileSymbols:
    """What ``extract`` gives when every file is parsed (the path before the shortcut)."""
    with monkeypatch.context() as m:
        m.setattr(symbols, "_COMMENTS_ONLY", {k: _Never() for k in symbols._COMMENTS_ONLY})
        return extract(path, data)


class _Never:
    def fullmatch(self, data: bytes) -> None:
        return None


def _comments_only(marker: bytes, rnd: random.Random) -> bytes:
    lines = []
    for _ in range(rnd.randint(0, 6)):
        pad = rnd.choice([b"", b"  ", b"\t", b" \f", b"\v", b"\r"])
        if rnd.random() < 0.3:
            lines.append(pad)
        else:
            lines.append(pad + marker + rnd.choice([b"", b" ", b"/"]) + rnd.choice(CODE) + rnd.choice([b"", b"\r"]))
    return b"\n".join(lines) + rnd.choice([b"", b"\n", b"\r\n"])


@pytest.mark.parametrize("path", sorted(LANGUAGES))
def test_a_comment_only_file_has_the_symbols_its_parse_gives(path, monkeypatch):
    marker = LANGUAGES[path]
    rnd = random.Random(path)
    cases = [b"", b"\n", b"\n\n  \n", b"\r\n", marker, marker + b" " + b" ".join(CODE)]
    cases += [marker + b" " + line + b"\n" for line in CODE]
    cases += [_comments_only(marker, rnd) for _ in range(300)]
    for data in cases:
        assert symbols._COMMENTS_ONLY[marker].fullmatch(data), data  # each is one the shortcut takes
        got = extract(path, data)
        assert got == parsed(path, data, monkeypatch), data
        assert got.definitions == frozenset() and got.parser == "tree-sitter"


@pytest.mark.parametrize("path", sorted(LANGUAGES))
def test_a_file_with_any_other_line_is_parsed(path, monkeypatch):
    """A code line among comments (before, between or after them), a shebang, a block comment
    or a byte-order mark: parsed, and the same symbols as before."""
    marker = LANGUAGES[path]
    rnd = random.Random(f"{path} mixed")
    taken = 0
    for _ in range(300):
        head, tail = _comments_only(marker, rnd), _comments_only(marker, rnd)
        data = head + (b"\n" if head and not head.endswith(b"\n") else b"") + rnd.choice(CODE) + b"\n" + tail
        data = rnd.choice([data, b"\xef\xbb\xbf" + data, b"#!/usr/bin/env x\n" + data])
        taken += bool(symbols._COMMENTS_ONLY[marker].fullmatch(data))
        assert extract(path, data) == parsed(path, data, monkeypatch), data
    assert taken == 0


def test_a_long_run_of_comment_lines_then_code_is_read_in_one_pass(monkeypatch):
    """Comment lines by the hundred thousand and then one definition (an untrusted file): matched
    line by line, given up at the code, which is parsed."""
    for n in (1_000, 250_000):
        data = b"#\n" * n + b"x = 1\n"
        assert symbols._COMMENTS_ONLY[b"#"].fullmatch(data) is None
        assert symbols._COMMENTS_ONLY[b"#"].fullmatch(data[:-6]) is not None
    data = b"#\n" * 1_000 + b"x = 1\n"
    assert extract("a.py", data) == parsed("a.py", data, monkeypatch)
    assert extract("a.py", data).definitions == frozenset({"x"})
    data = b"// c\n" * 1_000 + b"function f() {}\n"
    assert extract("a.js", data).definitions == frozenset({"f"})
