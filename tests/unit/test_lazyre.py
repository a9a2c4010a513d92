"""The patterns compiled on first use (``dsh_sidecar/lazyre.py``): each module-level one
compiles, and matches as ``re.compile`` of the same source and flags does."""

from __future__ import annotations

import importlib
import re

import pytest
from dsh_sidecar.lazyre import LazyPattern

MODULES = {
    "dsh_sidecar.workspace.facts": 32,
    "dsh_sidecar.suggester.evidence.vocabulary": 27,
    "dsh_sidecar.suggester.toolconfig": 1,
    "dsh_sidecar.suggester.parse.runs": 14,
    "dsh_sidecar.suggester.parse.results": 13,
    "dsh_sidecar.suggester.parse.roles": 2,
    "dsh_sidecar.suggester.parse.words": 1,
    "dsh_sidecar.suggester.parse.shell": 3,
}


def _lazy_patterns(module: str) -> list[tuple[str, LazyPattern[str]]]:
    found: list[tuple[str, LazyPattern[str]]] = []
    for name, value in vars(importlib.import_module(module)).items():
        values = value.values() if isinstance(value, dict) else (value,)
        found += [(name, v) for v in values if isinstance(v, LazyPattern)]
    return found


@pytest.mark.parametrize(("module", "count"), MODULES.items())
def test_every_module_pattern_compiles(module: str, count: int) -> None:
    patterns = _lazy_patterns(module)
    assert len(patterns) == count
    for name, rx in patterns:
        assert rx.compiled.pattern == rx.pattern, name
        assert rx.compiled.flags == re.compile(rx.pattern, rx.flags).flags, name


def test_matches_as_re_compile() -> None:
    lazy, eager = LazyPattern(r"(?i)v(\d+)\.(\d+)", re.MULTILINE), re.compile(r"(?i)v(\d+)\.(\d+)", re.MULTILINE)
    text = "x V1.2 y v3.40\nv5.6"
    assert lazy.search(text).group(0) == eager.search(text).group(0) == "V1.2"  # type: ignore[union-attr]
    assert lazy.match(text) is None and eager.match(text) is None
    assert lazy.match(text, 2).span() == (2, 6)  # type: ignore[union-attr]
    assert lazy.fullmatch("v1.2") is not None and lazy.fullmatch("v1.2x") is None
    assert [m.span() for m in lazy.finditer(text)] == [(2, 6), (9, 14), (15, 19)]
    assert lazy.findall(text) == eager.findall(text) == [("1", "2"), ("3", "40"), ("5", "6")]
    assert lazy.split(text, 1) == eager.split(text, 1)
    assert lazy.sub(lambda m: m.group(1), text) == eager.sub(lambda m: m.group(1), text) == "x 1 y 3\n5"
    assert lazy.sub("-", text, 1) == "x - y v3.40\nv5.6"


def test_bad_pattern_fails_at_first_use() -> None:
    bad = LazyPattern("(")
    assert bad.pattern == "(" and "LazyPattern('('" in repr(bad)
    with pytest.raises(re.error):
        bad.search("x")
