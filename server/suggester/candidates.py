"""Resolve an intent's candidate set against the workspace: which targets really exist.

A candidate is a path or a glob (gitwildmatch, as in ``.gitignore``), optionally with a
``contains`` regex the file must match. Only existing targets are emitted, each with its
pack reason. Scores follow the plan's neutral values while no workspace graph proves a
candidate: literal 0.5, scope 1.0, so ``score = prior × 0.5 × 1.0`` (plan, "The graph
projection"); order is by score, then pack order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

import pathspec

from dsh_sidecar.suggester.packs import Candidate
from dsh_sidecar.workspace import WorkspaceFiles

#: Literal score of a candidate the graph does not prove (plan: "the documented neutral 0.5").
NEUTRAL_LITERAL: Final = 0.5
#: Scope of a candidate without a graph (plan: "scope 1.0").
NEUTRAL_SCOPE: Final = 1.0
#: Most files one glob candidate expands to.
MAX_GLOB_MATCHES: Final = 20
#: Largest file whose content a ``contains`` check reads, bytes.
MAX_CONTAINS_BYTES: Final = 512 * 1024

_GLOB_CHARS = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Target:
    """One resolved target: repo-relative path, reason phrase, score."""

    path: str
    reason: str
    score: float


def _content_matches(ws: WorkspaceFiles, rel: str, pattern: re.Pattern[str]) -> bool:
    path = ws.root / rel
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_CONTAINS_BYTES:
            return False
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return False
    return pattern.search(text) is not None


def resolve(candidates: list[Candidate], ws: WorkspaceFiles) -> list[Target]:
    """Existing targets of ``candidates`` in ``ws``, best first, each path once."""
    ws.ensure()
    found: list[tuple[float, int, Target]] = []
    seen: set[str] = set()
    order = 0
    for cand in candidates:
        contains = re.compile(cand.contains, re.MULTILINE) if cand.contains else None
        if _GLOB_CHARS.search(cand.path):
            spec = pathspec.GitIgnoreSpec.from_lines([cand.path])
            paths = [p for p in ws.files if spec.match_file(p)]
        else:
            paths = [cand.path] if ws.exists(cand.path) else []
        matched = 0
        for rel in paths:
            if rel in seen:
                continue
            if contains is not None and not _content_matches(ws, rel, contains):
                continue
            seen.add(rel)
            score = cand.prior * NEUTRAL_LITERAL * NEUTRAL_SCOPE
            found.append((-score, order, Target(rel, cand.reason, score)))
            order += 1
            matched += 1
            if matched >= MAX_GLOB_MATCHES:
                break
    found.sort(key=lambda t: (t[0], t[1]))
    return [t for _, _, t in found]
