"""The tool-call notes of a task-aware session beside its ``Task`` note, scored again from a kept
report (no replay): ``python bench/suggester.py --corpus … --task-lead --json REPORT`` first, or
``bench/task_arm.py`` and its ``--combine`` (which also records the task lead's best 20).

1. **The ``Task`` note** (the note at the session's start, index ``-1``): useful-precision,
   Hit@k of gold (a gold file among its first k targets, k = 1…5), and the share of its useful
   notes that only the k-th target made useful — per agent family, language and split.
2. **What a tool-call note adds beyond it**: each tool-call note of a session with a ``Task``
   note is one of ``repeat`` (every target among the ``Task`` note's), ``first`` (its first
   target is one of the ``Task`` note's, another is not) or ``new`` (its first target is not);
   counts and useful-precision per class, and per intent; the ``new`` ones also by whether
   they name a file of the task lead's best 20 the ``Task`` note did not (``lead``/``other``:
   the report's ``task_ranks``, recorded by ``bench/task_arm.py``) and by whether they came
   before the agent's first repository edit.
3. **Rules, chosen on training folds**: each rule drops (or trims) tool-call notes of the
   task-aware sessions (:data:`RULES`: ``first-only`` keeps the ``first`` notes alone,
   ``drop-new`` the ``repeat`` and ``first`` ones; the lead-aware ``first+lead-new`` keeps the
   ``first`` notes and a ``new`` one only when it names a file of the task lead's best 20 that
   the ``Task`` note did not name, and its variants); the report's traces are scored under each
   (``dsh_sidecar.evaluation.trajectories.trajectory_figures`` on the kept notes) and the folds
   (leave-one-repository-out, leave-one-agent-family-out, the fixed held-out set) choose the rule
   on the other traces with ``--objective`` (default: the lead and notes-per-100 floors, then
   useful-precision). Removing a note here does not let a later one through noise control
   (dedupe, cooldown): a rule kept from here has to be replayed for real.

    python bench/task_notes.py --cache /work/corpus-cache REPORT.json [--objective …]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_sidecar.evaluation import FileIndex, checkout_dir, read_trajectories, workspace_files
from dsh_sidecar.evaluation.folds import fold_report, format_folds, parse_objective
from dsh_sidecar.evaluation.trajectories import (
    format_table,
    notes_from_log,
    start_notes_from_log,
    trajectory_figures,
    trajectory_summary,
)
from dsh_sidecar.evaluation.trajectory_runs import Trajectory

ROOT = Path(__file__).resolve().parent.parent
TRAJ = ROOT / "corpus" / "trajectories"
#: The default objective: the floors of issue 34's bar, then useful-precision.
OBJECTIVE = "lead_share>=0.15,notes_per_100_search>=8,useful_precision"

Note = dict[str, Any]


@dataclass(frozen=True)
class Ctx:
    """What a rule knows of a session: the ``Task`` note's targets, the task lead's best files
    (``task_ranks``, the session's ``TaskEvidence.ranks``: empty when the report has none) and
    the index of the agent's first repository edit (``Trajectory.limit``)."""

    task: tuple[str, ...]
    ranks: frozenset[str] = frozenset()
    limit: int = 1 << 30


#: A rule: (the session's context, a tool-call note) → the note kept (maybe trimmed) or None.
Rule = Callable[[Ctx, Note], Note | None]


def _cls(task: Sequence[str], n: Note) -> str:
    """``repeat``, ``first`` or ``new`` (module docstring)."""
    targets = list(n.get("targets") or [])
    if targets and set(targets) <= set(task):
        return "repeat"
    return "first" if targets and targets[0] in task else "new"


def _drop(*classes: str) -> Rule:
    return lambda c, n: None if _cls(c.task, n) in classes else n


def _trim(c: Ctx, n: Note) -> Note | None:
    """The note without the ``Task`` note's files; none left: dropped."""
    left = [p for p in n.get("targets") or [] if p not in c.task]
    return {**n, "targets": left} if left else None


def _lead_new(c: Ctx, n: Note) -> bool:
    """A ``new`` note that names a file of the task lead's best (``ranks``) the ``Task`` note
    did not name."""
    return _cls(c.task, n) == "new" and any(p in c.ranks and p not in c.task for p in n.get("targets") or [])


def _first_and(keep_new: Callable[[Ctx, Note], bool]) -> Rule:
    """Keep the ``first`` notes, and a ``new`` one when ``keep_new`` says so."""
    return lambda c, n: n if _cls(c.task, n) == "first" or (_cls(c.task, n) == "new" and keep_new(c, n)) else None


RULES: dict[str, Rule] = {
    "keep": lambda c, n: n,
    "drop-repeat": _drop("repeat"),
    "drop-repeat-first": _drop("repeat", "first"),
    "trim": _trim,
    "code-new-only": lambda c, n: n if _cls(c.task, n) == "new" and n.get("intent") in ("Symbol", "Usage") else None,
    "task-only": lambda c, n: None,
    "first-only": lambda c, n: n if _cls(c.task, n) == "first" else None,
    "drop-new": _drop("new"),
    # the lead-aware rules: a new note kept when it names a file of the lead's 20 the Task note did not
    "first+lead-new": _first_and(_lead_new),
    "first+lead-first-new": _first_and(lambda c, n: bool(n.get("targets")) and n["targets"][0] in c.ranks),
    "first+lead-new-pre-edit": _first_and(lambda c, n: _lead_new(c, n) and int(n["i"]) < c.limit),
    "first+new-pre-edit": _first_and(lambda c, n: int(n["i"]) < c.limit),
    "drop-repeat-lead-new": lambda c, n: (
        None if _cls(c.task, n) == "repeat" or (_cls(c.task, n) == "new" and not _lead_new(c, n)) else n
    ),
}


def _log_under(log: list[Note], rule: Rule, ranks: Sequence[str] = (), limit: int = 1 << 30) -> list[Note]:
    """A trace's ``note_log`` with ``rule`` applied to its tool-call notes (only when the session
    had a ``Task`` note: a session without one is decided as before); ``ranks``: the trace's
    ``task_ranks``, ``limit``: its first repository edit."""
    if not any(n["i"] == -1 for n in log):
        return log
    ctx = Ctx(tuple(t for n in log if n["i"] == -1 for t in n.get("targets") or []), frozenset(ranks), limit)
    out = []
    for n in log:
        kept = n if n["i"] == -1 else rule(ctx, n)
        if kept is not None:
            out.append(kept)
    return out


def _score(t: Trajectory, log: list[Note], index: FileIndex) -> dict[str, Any]:
    tags = {"repo": t.row["repo"], "family": t.family, "language": t.language, "heldout": t.heldout}
    return {**tags, **trajectory_figures(t, notes_from_log(t, log), index, start_notes_from_log(log))}


def task_note_table(trajs: list[Trajectory], kept: dict[str, Any]) -> str:
    """Part 1 of the module docstring, one row per group."""
    groups: dict[str, list[Note]] = defaultdict(list)
    for t in trajs:
        for n in kept[t.id]["note_log"]:
            if n["i"] == -1:
                n = {**n, "_gold": t.gold}
                for g in ("all", f"family {t.family}", f"language {t.language}", "heldout" if t.heldout else "tune"):
                    groups[g].append(n)
    rows = []
    for g, ns in sorted(groups.items()):
        cells = {"notes": len(ns), "useful_precision": round(sum(n["useful"] for n in ns) / len(ns), 3)}
        for k in (1, 2, 3, 5):
            cells[f"hit{k}"] = round(sum(bool(set(n["targets"][:k]) & n["_gold"]) for n in ns) / len(ns), 3)
        cells["targets"] = round(sum(len(n["targets"]) for n in ns) / len(ns), 2)
        rows.append((g, cells))
    cols = [("notes", "notes", "d"), ("useful-p", "useful_precision", ".2f")]
    cols += [(f"Hit@{k}", f"hit{k}", ".2f") for k in (1, 2, 3, 5)] + [("targets", "targets", ".2f")]
    return format_table("the Task note", rows, cols)


def class_table(trajs: list[Trajectory], kept: dict[str, Any]) -> str:
    """Part 2 of the module docstring."""
    count: Counter[str] = Counter()
    useful: Counter[str] = Counter()
    lead: Counter[str] = Counter()
    for t in trajs:
        log = kept[t.id]["note_log"]
        if not any(n["i"] == -1 for n in log):
            continue
        task = tuple(p for n in log if n["i"] == -1 for p in n.get("targets") or [])
        ctx = Ctx(task, frozenset(kept[t.id].get("task_ranks") or ()), t.limit)
        for n in log:
            if n["i"] == -1:
                continue
            split = "heldout" if t.heldout else "tune"
            cls = _cls(task, n)
            keys = [f"{split} {cls}", f"{split} {cls} {n.get('intent')}"]
            if cls == "new":
                keys.append(f"{split} new {'lead' if _lead_new(ctx, n) else 'other'}")
                keys.append(f"{split} new {'before' if int(n['i']) < t.limit else 'after'} 1st repo edit")
            for key in keys:
                count[key] += 1
                useful[key] += bool(n["useful"])
                lead[key] += bool(n["lead"])
    rows = [(k, {"notes": c, "useful": round(useful[k] / c, 3), "lead": lead[k]}) for k, c in sorted(count.items())]
    return format_table(
        "tool-call notes by class",
        rows,
        [("notes", "notes", "d"), ("useful-p", "useful", ".2f"), ("leads", "lead", "d")],
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report", type=Path, help="a bench/suggester.py --task-lead --json report")
    p.add_argument("--cache", type=Path, required=True, help="the corpus checkouts the report was replayed on")
    p.add_argument("--objective", default=OBJECTIVE)
    p.add_argument("--trajectories-dir", type=Path, default=TRAJ)
    args = p.parse_args(argv)
    kept = json.loads(args.report.read_text("utf-8"))["trajectories_task"]["traces"]
    trajs = read_trajectories(args.trajectories_dir, set(kept))
    print(task_note_table(trajs, kept), "\n")
    print(class_table(trajs, kept), "\n")
    indexes: dict[Path, FileIndex] = {}
    per_rule: dict[str, dict[str, dict[str, Any]]] = {r: {} for r in RULES}
    for t in trajs:
        ws = checkout_dir(args.cache, t.row["repo"], t.row["commit"])
        if ws not in indexes:
            indexes[ws] = FileIndex(workspace_files(ws))
        for name, rule in RULES.items():
            log = _log_under(kept[t.id]["note_log"], rule, kept[t.id].get("task_ranks") or (), t.limit)
            per_rule[name][t.id] = _score(t, log, indexes[ws])
    items = []
    for name, per in per_rule.items():
        items.append((f"{name} tune", trajectory_summary([v for v in per.values() if not v["heldout"]])))
        items.append((f"{name} held-out", trajectory_summary([v for v in per.values() if v["heldout"]])))
    from dsh_sidecar.evaluation.folds import FOLD_COLUMNS

    print(format_table("rule, split", items, FOLD_COLUMNS), "\n")
    print(format_folds(fold_report(per_rule, parse_objective(args.objective))))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
