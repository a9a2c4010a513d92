"""Trajectory figures (recorded agent runs, ``corpus/trajectories/``; see ``docs/corpus.md``):

* useful-precision = notes naming (among their targets) a file the agent reads or edits at a
  later call of the trace, or a gold file ÷ all notes;
* gold-hit-before-first-edit = traces where a note at a call before the agent's first edit
  (any call when it never edits) names a gold file ÷ traces;
* notes per 100 search-class calls = 100 × notes ÷ calls of class ``search``;
* own-search baseline = traces where a search-class result before the first edit lists a gold
  file (the index's ``ownSearchHit``) ÷ traces;
* random-file baseline = the same two figures for a suggester that, at every search-class call
  before the first edit, names one file drawn uniformly from the workspace's files with
  ``random.Random(sha256("<trace id>"))`` (deterministic).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.evaluation.trace import GRAPH_WAIT_S, TraceLine, format_ledger, ledger_summary, replay

#: The trajectories' held-out repositories (``docs/corpus.md``, "Held-out trajectories"): never
#: tuned on, their per-trace details not looked at while tuning; scored as their own row.
TRAJECTORY_HELDOUT: Final = frozenset({"pylint-dev/pylint", "pytest-dev/pytest"})


# ---------------------------------------------------------------------------- trajectories


@dataclass
class Trajectory:
    """One recorded agent run: its index row and its calls (``{"i", "class", "params"}``)."""

    row: dict[str, Any]
    calls: list[dict[str, Any]]

    @property
    def id(self) -> str:
        return str(self.row["id"])

    @property
    def gold(self) -> set[str]:
        return set(self.row.get("gold") or [])

    @property
    def limit(self) -> int:
        """Index of the first edit (the length of the trace when it never edits)."""
        fe = self.row.get("firstEdit")
        return len(self.calls) if fe is None else int(fe)


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
    """``path`` appears in ``blob`` (a JSON text) as a whole path: after a start, ``/``, space,
    quote or redirection, before an end, space, quote, separator or an escape (``\\n``)."""
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


def trajectory_figures(t: Trajectory, notes: Sequence[list[dict[str, Any]]], files: Sequence[str]) -> dict[str, Any]:
    """The per-trace counts behind the trajectory figures (module docstring); ``files`` is the
    workspace's file list (for the random-file baseline)."""
    after = _touched_after(t)
    gold = t.gold
    n_notes = useful = 0
    gold_hit = False
    for i, ns in enumerate(notes):
        for n in ns:
            targets = list(n.get("source", {}).get("targets", []))
            n_notes += 1
            if set(targets) & gold or any(_mentions(after[i], p) for p in targets):
                useful += 1
            if i < t.limit and set(targets) & gold:
                gold_hit = True
    rng = random.Random(int(hashlib.sha256(t.id.encode()).hexdigest(), 16))
    ordered = sorted(files)
    r_notes = r_useful = 0
    r_hit = False
    for i, c in enumerate(t.calls[: t.limit]):
        if c.get("class") != "search" or not ordered:
            continue
        pick = rng.choice(ordered)
        r_notes += 1
        if pick in gold or _mentions(after[i], pick):
            r_useful += 1
        r_hit = r_hit or pick in gold
    return {
        "calls": len(t.calls),
        "search": sum(1 for c in t.calls if c.get("class") == "search"),
        "notes": n_notes,
        "useful": useful,
        "gold_hit": gold_hit,
        "own_hit": t.row.get("ownSearchHit") is not None,
        "random_notes": r_notes,
        "random_useful": r_useful,
        "random_hit": r_hit,
    }


def _rate(a: int, b: int) -> float:
    return round(a / b, 4) if b else 0.0


def trajectory_summary(per_trace: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Pooled trajectory figures over the per-trace counts of :func:`trajectory_figures`."""
    n = len(per_trace)
    notes = sum(p["notes"] for p in per_trace)
    search = sum(p["search"] for p in per_trace)
    rn = sum(p["random_notes"] for p in per_trace)
    return {
        "traces": n,
        "calls": sum(p["calls"] for p in per_trace),
        "search_calls": search,
        "notes": notes,
        "useful_notes": sum(p["useful"] for p in per_trace),
        "useful_precision": _rate(sum(p["useful"] for p in per_trace), notes),
        "gold_hit_before_first_edit": _rate(sum(p["gold_hit"] for p in per_trace), n),
        "notes_per_100_search": round(100 * notes / search, 2) if search else 0.0,
        "own_search_hit_before_first_edit": _rate(sum(p["own_hit"] for p in per_trace), n),
        "random_useful_precision": _rate(sum(p["random_useful"] for p in per_trace), rn),
        "random_gold_hit_before_first_edit": _rate(sum(p["random_hit"] for p in per_trace), n),
        "random_notes_per_100_search": round(100 * rn / search, 2) if search else 0.0,
    }


def workspace_files(root: Path) -> list[str]:
    """Every regular file under ``root`` (no ``.git``), repo-relative, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for f in filenames:
            p = Path(dirpath, f)
            if p.is_file() and not p.is_symlink():
                out.append(p.relative_to(root).as_posix())
    return sorted(out)


def run_trajectories(
    trajs: Sequence[Trajectory], workspace_of: Callable[[Trajectory], Path], graph_wait_s: float = GRAPH_WAIT_S
) -> dict[str, Any]:
    """Replay each trajectory on ``workspace_of(t)`` (a fresh server and ``$DSH_HOME`` each);
    return ``{"traces": {id: counts}, "repos": {repo: summary}, "pooled": summary, "ledger": …}``."""
    per: dict[str, dict[str, Any]] = {}
    ledger: Counter[str] = Counter()
    files_cache: dict[Path, list[str]] = {}
    for t in trajs:
        ws = workspace_of(t)
        if not ws.is_dir():
            raise OSError(f"no workspace {ws} for {t.row['repo']}@{str(t.row['commit'])[:12]}")
        trace = [TraceLine(c["params"], None, ()) for c in t.calls]
        _, notes, logs = replay(trace, ws, graph_wait_s=graph_wait_s)
        if ws not in files_cache:
            files_cache[ws] = workspace_files(ws)
        per[t.id] = {"repo": t.row["repo"], **trajectory_figures(t, notes, files_cache[ws])}
        ledger.update(ledger_summary(logs))
    repos: dict[str, list[dict[str, Any]]] = {}
    for p in per.values():
        repos.setdefault(p["repo"], []).append(p)
    return {
        "traces": per,
        "repos": {k: trajectory_summary(v) for k, v in sorted(repos.items())},
        "tune": trajectory_summary([p for p in per.values() if p["repo"] not in TRAJECTORY_HELDOUT]),
        "heldout": trajectory_summary([p for p in per.values() if p["repo"] in TRAJECTORY_HELDOUT]),
        "pooled": trajectory_summary(list(per.values())),
        "ledger": dict(sorted(ledger.items())),
    }


def format_trajectory_report(rep: dict[str, Any]) -> str:
    """The trajectory figures (suggester, the agent's own search, random files) as a table."""
    head = (
        f"{'repository':26} {'traces':>6} {'search':>6} {'notes':>5} {'n/100s':>6} {'useful-p':>8} "
        f"{'gold-hit':>8} {'own-search':>10} {'random-hit':>10} {'random-p':>8}"
    )
    rows = [head]
    items = list(rep["repos"].items())
    items += [(f"pooled {k}", rep[k]) for k in ("tune", "heldout") if k in rep] + [("pooled", rep["pooled"])]
    for name, f in items:
        rows.append(
            f"{name:26} {f['traces']:>6} {f['search_calls']:>6} {f['notes']:>5} {f['notes_per_100_search']:>6.2f} "
            f"{f['useful_precision']:>8.2f} {f['gold_hit_before_first_edit']:>8.2f} "
            f"{f['own_search_hit_before_first_edit']:>10.2f} {f['random_gold_hit_before_first_edit']:>10.2f} "
            f"{f['random_useful_precision']:>8.2f}"
        )
    rows.append("")
    rows.append(format_ledger(rep["ledger"]))
    return "\n".join(rows)
