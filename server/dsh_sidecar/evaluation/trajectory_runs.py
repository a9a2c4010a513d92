"""Recorded agent runs as the trajectory figures read them: :class:`Trajectory` (an index row and
its calls), the held-out set, and what each call showed (the files its result listed, those it
opened or edited), read the way an agent reads a listing (:func:`listed_files`).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

#: The fixed held-out set of the trajectories (``corpus/README.md``, "Held-out trajectories"):
#: never tuned on, their per-trace details not looked at while tuning; scored as their own row.
#: A trace is held out when its repository is in :data:`TRAJECTORY_HELDOUT` or its agent family
#: is in :data:`TRAJECTORY_HELDOUT_FAMILIES`.
TRAJECTORY_HELDOUT: Final = frozenset(
    {
        "pylint-dev/pylint",
        "pytest-dev/pytest",
        "psf/requests",
        "pallets/flask",
        "apache/dubbo",
        "prettier/prettier",
        "coder/code-server",
    }
)
#: Agent families held out whole (see :data:`TRAJECTORY_HELDOUT`).
TRAJECTORY_HELDOUT_FAMILIES: Final = frozenset({"iswe"})
#: Absolute folders agents' containers mount the repository at: ``/testbed/x.py`` is ``x.py``.
CONTAINER_ROOTS: Final = ("/testbed", "/workspace")


@dataclass
class Trajectory:
    """One recorded agent run: its index row and its calls (``{"i", "class", "params"}``, and in
    Corpus II ``opens``/``dirs``: the repository files the call opened or edited, the folders its
    result's bare names are relative to)."""

    row: dict[str, Any]
    calls: list[dict[str, Any]]

    @property
    def id(self) -> str:
        return str(self.row["id"])

    @property
    def gold(self) -> set[str]:
        return set(self.row.get("gold") or [])

    @property
    def family(self) -> str:
        return str(self.row.get("family") or "mini-swe-agent")

    @property
    def language(self) -> str:
        return str(self.row.get("language") or "python")

    @property
    def heldout(self) -> bool:
        return self.row["repo"] in TRAJECTORY_HELDOUT or self.family in TRAJECTORY_HELDOUT_FAMILIES

    @property
    def limit(self) -> int:
        """Index of the first edit of a repository file (the length of the trace when none)."""
        fe = self.row.get("firstEdit")
        return len(self.calls) if fe is None else int(fe)

    @property
    def any_limit(self) -> int:
        """Index of the first call of class ``edit`` (scratch files too; the length when none)."""
        return next((i for i, c in enumerate(self.calls) if c.get("class") == "edit"), len(self.calls))


def read_trajectories(folder: Path, ids: Iterable[str] | None = None) -> list[Trajectory]:
    """``<folder>/index.jsonl`` and each ``<folder>/<id>.jsonl`` (only ``ids`` when given)."""
    wanted = set(ids) if ids is not None else None
    out = []
    for raw in (folder / "index.jsonl").read_text("utf-8").splitlines():
        if not raw.strip():
            continue
        row = json.loads(raw)
        if wanted is not None and row["id"] not in wanted:
            continue
        calls = [json.loads(x) for x in (folder / f"{row['id']}.jsonl").read_text("utf-8").splitlines() if x.strip()]
        out.append(Trajectory(row, calls))
    return out


def _mentions(blob: str, path: str) -> bool:
    r"""``path`` appears in ``blob`` (a JSON text) as a whole path: after a start, ``/``, space,
    quote or redirection, before an end, space, quote, separator or an escape (``\n``)."""
    return re.search(r"(?:^|[\s/'\"=:(<>])" + re.escape(path) + r"(?=$|[\s'\":,;|&<>)\]\\])", blob) is not None


def _touched_after(t: Trajectory) -> list[str]:
    """Per call index: the JSON of the tool inputs of the read/edit calls after it, joined."""
    blobs = [
        json.dumps(c["params"].get("tool", {}).get("input", {}), ensure_ascii=False)
        if c.get("class") in ("read", "edit")
        else ""
        for c in t.calls
    ]
    after = [""] * len(blobs)
    acc = ""
    for i in range(len(blobs) - 1, -1, -1):
        after[i] = acc
        if blobs[i]:
            acc = blobs[i] + "\n" + acc
    return after


class FileIndex:
    """The workspace's files (repository-relative) and their folders, for :func:`listed_files`."""

    def __init__(self, files: Iterable[str]) -> None:
        self.files = frozenset(files)
        dirs = {""}
        for f in self.files:
            parts = f.split("/")[:-1]
            for k in range(1, len(parts) + 1):
                dirs.add("/".join(parts[:k]))
        self.dirs = frozenset(dirs)

    def resolve(self, token: str, dirs: Sequence[str] = ()) -> str | None:
        """The workspace file ``token`` names, or ``None``: the path itself (``./`` and a diff's
        ``a/``/``b/`` removed), an absolute path under a container root (``/testbed/x.py``), the
        longest workspace path ending an absolute path (``/mnt/w/repo/src/x.ts``: ``src/x.ts``,
        only a path with a folder), or a name relative to one of ``dirs``."""
        tok = token
        while tok.startswith("./"):
            tok = tok[2:]
        if not tok or tok.endswith("/"):
            return None
        if tok in self.files:
            return tok
        if tok.startswith(("a/", "b/")) and tok[2:] in self.files:
            return tok[2:]
        if tok.startswith("/"):
            for root in CONTAINER_ROOTS:
                if tok.startswith(root + "/"):
                    rel = posixpath.normpath(tok[len(root) + 1 :])
                    return rel if rel in self.files else None
            parts = tok.split("/")
            for k in range(1, len(parts) - 1):
                rel = "/".join(parts[k:])
                if rel in self.files:
                    return rel
            return None
        for d in dirs:
            if d:
                rel = posixpath.normpath(posixpath.join(d, tok))
                if rel in self.files:
                    return rel
        return None


#: A path-like token of a result text: no spaces, quotes, colons or brackets.
_TOKEN: Final = re.compile(r"[\w@+~.\-/]+")
#: A listing's folder header: ``./sympy/core:`` (``ls -R``) or ``src/generators/:``.
_HEADER: Final = re.compile(r"^\s*(\S+?)/?:\s*$")


def listed_files(text: str, index: FileIndex, dirs: Sequence[str] = ()) -> list[str]:
    """Workspace files a result text names, in order of first appearance (each once): every
    path-like token resolved by :meth:`FileIndex.resolve`, bare names relative to ``dirs``
    (the folders the command ran in or listed) and to the last folder header above them
    (``ls -R``, a folder tree)."""
    out: list[str] = []
    seen: set[str] = set()
    header: str | None = None
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m:
            d = m.group(1)
            while d.startswith("./"):
                d = d[2:]
            for root in CONTAINER_ROOTS:
                if d == root or d.startswith(root + "/"):
                    d = d[len(root) + 1 :]
            d = posixpath.normpath(d) if d not in ("", ".") else ""
            header = d if d in index.dirs else None
            continue
        where = [*dirs, header] if header is not None else list(dirs)
        for tok in _TOKEN.findall(line):
            p = index.resolve(tok.rstrip("."), where)
            if p is not None and p not in seen:
                seen.add(p)
                out.append(p)
    return out


def shown_by(t: Trajectory, index: FileIndex) -> tuple[list[set[str]], list[set[str]], list[list[str]]]:
    """Per call: the files its result listed, the files it showed (listed, opened or edited)
    and the files it opened or edited (in order)."""
    listed: list[set[str]] = []
    shown: list[set[str]] = []
    opens: list[list[str]] = []
    for c in t.calls:
        text = ((c.get("params") or {}).get("result") or {}).get("text") or ""
        lst = set(listed_files(str(text), index, c.get("dirs") or ()))
        op = [str(p) for p in c.get("opens") or ()]
        listed.append(lst)
        shown.append(lst | set(op))
        opens.append(op)
    return listed, shown, opens
