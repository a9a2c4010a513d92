"""Trajectory figures: recorded agent runs, ``corpus/trajectories/``.

The definitions, with their edge cases, are in ``docs/corpus.md``, "Metric definitions":

* useful-precision = notes naming (among their targets) a file the agent reads or edits at a
  later call of the trace, or a gold file ÷ all notes; **target-precision** = the files the notes
  named that are such a file ÷ all files the notes named (a note is useful through one file, so
  padding it with others never lowers useful-precision; it lowers this; the random baseline names
  one file a pick, so its target-precision is its useful-precision);
* gold-hit-before-first-edit = traces where a note at a call before the agent's first edit of a
  *repository file* (a file tracked at the base commit: the index's ``firstEdit``; any call when
  it never edits one) names a gold file ÷ traces; gold-hit-before-any-edit the same before its
  first call of class ``edit`` (a reproduction script written first counts);
* notes per 100 search-class calls = 100 × notes ÷ calls of class ``search``;
* **echo** (per note): every target is among the repository files the triggering call's own
  result showed (its listing, see :func:`listed_files`, plus the files the call opened or
  edited, the line's ``opens``), and that call showed 1 to 5 repository files; **first-target
  echo**: the same for the note's first target alone (a note that repeats the listing first and
  pads it with other files is no echo, but is a first-target echo);
* **lead** (per note): a target is a gold file that no call so far (the triggering one
  included) had shown; a trace *has a lead* when one of its notes is a lead;
* **rank** (per note on a broad result, ≥ 10 repository files shown by the triggering call):
  its first target is a file the next call that opens or edits repository files opens or edits;
* **searches saved** (per trace): for each gold file, the search-class calls strictly between
  the first note naming it and the agent's own first open of it (the index's ``firstOpen``: the
  first call that printed it; 0 when the agent opened it first or never);
* own-search baseline = traces where a search-class result before the first edit lists a gold
  file (the index's ``ownSearchHit``) ÷ traces; before any edit: a result listing a gold file
  (:func:`listed_files`) before the first edit-class call;
* random-file baseline = the same figures for a suggester that, at every search-class call
  before the first edit, names one file drawn uniformly from the workspace's files with
  ``random.Random(sha256("<trace id>"))`` (deterministic).

**With the task text** (``--task-lead``): the notes given at the session's start, before any
call (the task lead's ``Task`` note), are counted in every figure as a note at call index
``-1``: nothing had been shown yet (a gold file it names is a lead, it is never an echo nor on
a broad listing), every later read or edit may make it useful, and it is before every edit.
``call_lead``/``call_lead_share`` count the leads of the tool-call notes alone (index ≥ 0).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections import Counter
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.evaluation.trace import GRAPH_WAIT_S, TraceLine, format_ledger, ledger_summary, replay
from dsh_sidecar.evaluation.trajectory_runs import FileIndex, Trajectory, _mentions, _touched_after, shown_by

#: A result naming more repository files than this is a ranked listing: a note can't echo it.
ECHO_MAX_FILES: Final = 5
#: A result naming at least this many repository files is broad: its notes are judged on rank.
RANK_MIN_FILES: Final = 10


def _draw(t: Trajectory, ordered: Sequence[str]) -> list[tuple[int, str]]:
    """The random-file suggester's picks: (call index, file) at each search call before the
    first edit of a repository file."""
    rng = random.Random(int(hashlib.sha256(t.id.encode()).hexdigest(), 16))
    out = []
    for i, c in enumerate(t.calls[: t.limit]):
        if c.get("class") != "search" or not ordered:
            continue
        out.append((i, rng.choice(ordered)))
    return out


def trajectory_figures(
    t: Trajectory,
    notes: Sequence[list[dict[str, Any]]],
    files: Sequence[str] | FileIndex,
    start: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The per-trace counts behind the trajectory figures (module docstring), and ``note_log``: one
    entry per note (call index, intent, targets, how many files the call showed, useful, echo,
    lead, the gold files it named). ``files`` is the workspace's file list (for the random-file
    baseline and the listings), or its index; ``start``: the notes given at the session's start,
    before any call (index ``-1``)."""
    index = files if isinstance(files, FileIndex) else FileIndex(files)
    gold = t.gold
    listed, shown, opens = shown_by(t, index)
    tally = _start_tally(t, shown, opens)
    for n in start:
        tally.add(-1, n)
    for i, ns in enumerate(notes):
        for n in ns:
            tally.add(i, n)
    is_search = [c.get("class") == "search" for c in t.calls]
    first_open = {str(g): int(i) for g, i in (t.row.get("firstOpen") or {}).items()}
    saved = pairs = 0
    for g, i in tally.first_named.items():
        o = first_open.get(g)
        if o is not None and i < o:
            pairs += 1
            saved += sum(is_search[i + 1 : o])
    picks = _draw(t, sorted(index.files))
    return {
        "calls": len(t.calls),
        "search": sum(is_search),
        "notes": tally.notes,
        "useful": tally.useful,
        "named": tally.named,
        "named_used": tally.named_used,
        "gold_hit": tally.gold_hit,
        "own_hit": t.row.get("ownSearchHit") is not None,
        "random_notes": len(picks),
        "random_useful": sum(1 for i, p in picks if p in gold or _mentions(tally.after[i], p)),
        "random_hit": any(p in gold for _, p in picks),
        "gold_hit_any": tally.gold_hit_any,
        "own_hit_any": any(listed[j] & gold for j in range(t.any_limit)),
        "random_hit_any": any(p in gold and i < t.any_limit for i, p in picks),
        "echo": tally.echoes,
        "echo_first": tally.firsts,
        "lead": tally.leads,
        "call_lead": tally.call_leads,
        "broad": tally.broad,
        "ranked": tally.ranked,
        "saved": saved,
        "saved_pairs": pairs,
        "random_echo": sum(1 for i, p in picks if tally.echo(i, [p])),
        "random_lead": sum(1 for i, p in picks if tally.lead(i, [p])),
        "note_log": tally.log,
    }


def _start_tally(t: Trajectory, shown: list[set[str]], opens: list[list[str]]) -> _NoteTally:
    """The tally of a trace's notes, with index ``-1`` (the session's start) as the last item of
    each per-call list: nothing shown before it, every read or edit after it."""
    after = _touched_after(t)
    everything = after[0] if after else ""
    if t.calls and t.calls[0].get("class") in ("read", "edit"):  # the first call's own read or edit
        blob = json.dumps(t.calls[0]["params"].get("tool", {}).get("input", {}), ensure_ascii=False)
        everything = blob + "\n" + everything
    return _NoteTally(
        t,
        t.gold,
        [*after, everything],
        [*shown, set()],
        [*_cumulative(shown), set()],
        [*_next_opens(opens), set()],
    )


def _cumulative(shown: Sequence[set[str]]) -> list[set[str]]:
    """Per call, every file the trace showed up to it (that call included)."""
    seen: list[set[str]] = []
    acc: set[str] = set()
    for s in shown:
        acc = acc | s
        seen.append(acc)
    return seen


def _next_opens(opens: Sequence[Any]) -> list[set[str]]:
    """Per call, the files of the next call after it that opens any."""
    next_open: list[set[str]] = [set()] * len(opens)
    nxt: set[str] = set()
    for i in range(len(opens) - 1, -1, -1):
        next_open[i] = nxt
        if opens[i]:
            nxt = set(opens[i])
    return next_open


def is_echo(targets: Sequence[str] | set[str], shown: set[str]) -> bool:
    """The evaluation's echo: ``targets`` are all among the files a call showed, and it showed
    at most :data:`ECHO_MAX_FILES` (nothing was ranked)."""
    return bool(targets) and 1 <= len(shown) <= ECHO_MAX_FILES and set(targets) <= shown


@dataclass
class _NoteTally:
    """The counts of a trace's notes (module docstring) and their log, note by note."""

    t: Trajectory
    gold: AbstractSet[str]
    after: Sequence[Any]
    shown: Sequence[set[str]]
    seen: list[set[str]]
    next_open: list[set[str]]
    notes: int = 0
    useful: int = 0
    named: int = 0
    named_used: int = 0
    echoes: int = 0
    firsts: int = 0
    leads: int = 0
    call_leads: int = 0
    broad: int = 0
    ranked: int = 0
    gold_hit: bool = False
    gold_hit_any: bool = False
    first_named: dict[str, int] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)

    def echo(self, i: int, targets: Sequence[str]) -> bool:
        """Every target is among the few files call ``i`` showed (:func:`is_echo`)."""
        return is_echo(targets, self.shown[i])

    def echo_first(self, i: int, targets: Sequence[str]) -> bool:
        """The first target is among the few files call ``i`` showed."""
        return bool(targets) and 1 <= len(self.shown[i]) <= ECHO_MAX_FILES and targets[0] in self.shown[i]

    def lead(self, i: int, targets: Sequence[str]) -> bool:
        """A target is a gold file the trace had not shown by call ``i``."""
        return any(p in self.gold and p not in self.seen[i] for p in targets)

    def add(self, i: int, n: dict[str, Any]) -> None:
        """Count the note ``n`` given at call ``i``."""
        targets = [str(x) for x in n.get("source", {}).get("targets", [])]
        gold = self.gold
        self.notes += 1
        used = [p for p in targets if p in gold or _mentions(self.after[i], p)]
        is_useful = bool(used)
        self.useful += is_useful
        self.named += len(targets)
        self.named_used += len(used)
        if set(targets) & gold:
            self.gold_hit = self.gold_hit or i < self.t.limit
            self.gold_hit_any = self.gold_hit_any or i < self.t.any_limit
        is_echo, is_lead = self.echo(i, targets), self.lead(i, targets)
        self.echoes += is_echo
        self.firsts += self.echo_first(i, targets)
        self.leads += is_lead
        self.call_leads += is_lead and i >= 0
        if len(self.shown[i]) >= RANK_MIN_FILES and targets:
            self.broad += 1
            self.ranked += targets[0] in self.next_open[i]
        self.log.append(
            {
                "i": i,
                "intent": n.get("source", {}).get("intent"),
                "targets": targets,
                "shown": len(self.shown[i]),
                "useful": is_useful,
                "echo": is_echo,
                "echo_first": self.echo_first(i, targets),
                "lead": is_lead,
                "gold": sorted(set(targets) & gold),
            }
        )
        for p in targets:
            if p in gold:
                self.first_named.setdefault(p, i)


def _rate(a: int, b: int) -> float:
    return round(a / b, 4) if b else 0.0


def trajectory_summary(per_trace: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Pooled trajectory figures over the per-trace counts of :func:`trajectory_figures`."""
    n = len(per_trace)
    notes = sum(p["notes"] for p in per_trace)
    search = sum(p["search"] for p in per_trace)
    rn = sum(p["random_notes"] for p in per_trace)

    def total(key: str) -> int:
        return sum(int(p.get(key, 0)) for p in per_trace)

    return {
        "traces": n,
        "calls": sum(p["calls"] for p in per_trace),
        "search_calls": search,
        "notes": notes,
        "useful_notes": sum(p["useful"] for p in per_trace),
        "useful_precision": _rate(sum(p["useful"] for p in per_trace), notes),
        # of every file the notes named, the share the agent used (a gold file, or one it read or
        # edited later): "useful" counts a note whose one used file hides padding beside it
        "target_precision": _rate(total("named_used"), total("named")),
        "gold_hit_before_first_edit": _rate(sum(p["gold_hit"] for p in per_trace), n),
        "notes_per_100_search": round(100 * notes / search, 2) if search else 0.0,
        "own_search_hit_before_first_edit": _rate(sum(p["own_hit"] for p in per_trace), n),
        "random_useful_precision": _rate(sum(p["random_useful"] for p in per_trace), rn),
        "random_gold_hit_before_first_edit": _rate(sum(p["random_hit"] for p in per_trace), n),
        "random_notes_per_100_search": round(100 * rn / search, 2) if search else 0.0,
        "gold_hit_before_any_edit": _rate(total("gold_hit_any"), n),
        "own_hit_before_any_edit": _rate(total("own_hit_any"), n),
        "random_gold_hit_before_any_edit": _rate(total("random_hit_any"), n),
        "echo_notes": total("echo"),
        "echo_share": _rate(total("echo"), notes),
        "echo_first_share": _rate(total("echo_first"), notes),
        "lead_notes": total("lead"),
        "lead_traces": sum(1 for p in per_trace if p.get("lead")),
        "lead_share": _rate(sum(1 for p in per_trace if p.get("lead")), n),
        "call_lead_share": _rate(sum(1 for p in per_trace if p.get("call_lead", p.get("lead"))), n),
        "broad_notes": total("broad"),
        "rank_share": _rate(total("ranked"), total("broad")),
        "searches_saved": total("saved"),
        "saved_pairs": total("saved_pairs"),
        "random_echo_share": _rate(total("random_echo"), rn),
        "random_lead_share": _rate(sum(1 for p in per_trace if p.get("random_lead")), n),
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


def replay_trajectories(
    trajs: Sequence[Trajectory],
    workspace_of: Callable[[Trajectory], Path],
    graph_wait_s: float = GRAPH_WAIT_S,
    suggester: dict[str, Any] | None = None,
    task_of: Callable[[Trajectory], str | None] | None = None,
    command: Sequence[str] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """Replay each trajectory on ``workspace_of(t)`` (a fresh server and ``$DSH_HOME`` each, the
    ``suggester`` knobs given as ``initializationOptions.suggester``); return the per-trace
    counts (tagged with repository, family, language and split) and the ledger summary.
    ``task_of``: the trace's task text, sent as ``dsh/taskLead`` before its first call (its
    note counted at the session's start, module docstring). ``command``: the server to spawn
    (default ``dsh-search serve``); one that writes the task lead's ranking as a ``lead ranked``
    ledger line (``bench/serve_task_ranks.py``) has it kept as the trace's ``task_ranks``."""
    per: dict[str, dict[str, Any]] = {}
    ledger: Counter[str] = Counter()
    index_cache: dict[Path, FileIndex] = {}
    for t in trajs:
        ws = workspace_of(t)
        if not ws.is_dir():
            raise OSError(f"no workspace {ws} for {t.row['repo']}@{str(t.row['commit'])[:12]}")
        trace = [TraceLine(c["params"], None, ()) for c in t.calls]
        task = task_of(t) if task_of is not None else None
        start: list[dict[str, Any]] = []
        _, notes, logs = replay(
            trace, ws, suggester=suggester, graph_wait_s=graph_wait_s, task=task, start=start, command=command
        )
        if ws not in index_cache:
            index_cache[ws] = FileIndex(workspace_files(ws))
        per[t.id] = {
            "repo": t.row["repo"],
            "family": t.family,
            "language": t.language,
            "heldout": t.heldout,
            **trajectory_figures(t, notes, index_cache[ws], start),
        }
        ranks = task_ranks(logs)
        if ranks is not None:
            per[t.id]["task_ranks"] = ranks
        ledger.update(ledger_summary(logs))
    return per, dict(sorted(ledger.items()))


#: The ledger line a recording server writes with the task lead's ranking (a JSON list of paths).
TASK_RANKS_LINE: Final = "lead ranked "


def task_ranks(logs: Sequence[str]) -> list[str] | None:
    """The task lead's ranking (best first) from the first ``lead ranked <JSON list>`` line of
    ``logs`` (``[<ISO>] `` prefix optional); ``None`` without one or when it does not parse as a
    list of strings."""
    for raw in logs:
        msg = raw.split("] ", 1)[1] if raw.startswith("[") and "] " in raw else raw
        if not msg.startswith(TASK_RANKS_LINE):
            continue
        try:
            value = json.loads(msg[len(TASK_RANKS_LINE) :])
        except ValueError:
            return None
        return [str(p) for p in value] if isinstance(value, list) and all(isinstance(p, str) for p in value) else None
    return None


def notes_from_log(t: Trajectory, log: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The notes of a replay rebuilt from its ``note_log`` (call index, intent, targets): what
    :func:`trajectory_figures` reads of a note, so a kept report can be scored again."""
    notes: list[list[dict[str, Any]]] = [[] for _ in t.calls]
    for n in log:
        i = int(n["i"])
        if i == -1:  # the session's start: :func:`start_notes_from_log`
            continue
        if not 0 <= i < len(notes):
            raise ValueError(f"{t.id}: a note at call {i} of {len(notes)}")
        notes[i].append({"source": {"intent": n.get("intent"), "targets": list(n.get("targets") or [])}})
    return notes


def start_notes_from_log(log: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The notes a kept ``note_log`` gave at the session's start (index ``-1``)."""
    return [
        {"source": {"intent": n.get("intent"), "targets": list(n.get("targets") or [])}}
        for n in log
        if int(n["i"]) == -1
    ]


def rescore_trajectories(
    trajs: Sequence[Trajectory],
    kept: dict[str, dict[str, Any]],
    files_of: Callable[[Trajectory], Sequence[str]],
) -> dict[str, dict[str, Any]]:
    """The per-trace counts of a kept report (``report["traces"]``: counts with ``note_log``)
    computed again with today's definitions on the same notes — no server runs; ``files_of(t)``
    is the workspace's file list the report was scored on (a checkout's
    :func:`workspace_files`; a stub workspace's are the trace's tracked paths). Raises
    ``KeyError`` for a trace the report lacks."""
    per: dict[str, dict[str, Any]] = {}
    index_cache: dict[tuple[str, ...], FileIndex] = {}
    for t in trajs:
        files = tuple(sorted(files_of(t)))
        if files not in index_cache:
            index_cache[files] = FileIndex(files)
        log = kept[t.id]["note_log"]
        notes = notes_from_log(t, log)
        tags = {"repo": t.row["repo"], "family": t.family, "language": t.language, "heldout": t.heldout}
        per[t.id] = {**tags, **trajectory_figures(t, notes, index_cache[files], start_notes_from_log(log))}
        if "task_ranks" in kept[t.id]:
            per[t.id]["task_ranks"] = list(kept[t.id]["task_ranks"])
    return per


def _groups(per: dict[str, dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for p in per.values():
        groups.setdefault(str(p.get(key)), []).append(p)
    return {k: trajectory_summary(v) for k, v in sorted(groups.items())}


def trajectory_report(per: dict[str, dict[str, Any]], ledger: dict[str, int]) -> dict[str, Any]:
    """``{"traces", "repos", "families", "languages", "tune", "heldout", "pooled", "ledger"}``
    (summaries per repository, agent family and language, the fixed split and pooled)."""
    return {
        "traces": per,
        "repos": _groups(per, "repo"),
        "families": _groups(per, "family"),
        "languages": _groups(per, "language"),
        "tune": trajectory_summary([p for p in per.values() if not p["heldout"]]),
        "heldout": trajectory_summary([p for p in per.values() if p["heldout"]]),
        "pooled": trajectory_summary(list(per.values())),
        "ledger": ledger,
    }


def run_trajectories(
    trajs: Sequence[Trajectory],
    workspace_of: Callable[[Trajectory], Path],
    graph_wait_s: float = GRAPH_WAIT_S,
    suggester: dict[str, Any] | None = None,
    task_of: Callable[[Trajectory], str | None] | None = None,
) -> dict[str, Any]:
    """:func:`replay_trajectories` then :func:`trajectory_report`."""
    per, ledger = replay_trajectories(trajs, workspace_of, graph_wait_s, suggester, task_of)
    return trajectory_report(per, ledger)


#: Columns of the trajectory tables: (header, summary key, format).
_COLUMNS: Final = (
    ("traces", "traces", "d"),
    ("search", "search_calls", "d"),
    ("notes", "notes", "d"),
    ("n/100s", "notes_per_100_search", ".2f"),
    ("useful-p", "useful_precision", ".2f"),
    ("target-p", "target_precision", ".2f"),
    ("gold-hit", "gold_hit_before_first_edit", ".2f"),
    ("own-search", "own_search_hit_before_first_edit", ".2f"),
    ("random-hit", "random_gold_hit_before_first_edit", ".2f"),
    ("random-p", "random_useful_precision", ".2f"),
)
#: The help-not-agreement columns (second table).
_HELP_COLUMNS: Final = (
    ("traces", "traces", "d"),
    ("notes", "notes", "d"),
    ("echo", "echo_share", ".2f"),
    ("echo-first", "echo_first_share", ".2f"),
    ("random-echo", "random_echo_share", ".2f"),
    ("lead-traces", "lead_share", ".2f"),
    ("call-lead", "call_lead_share", ".2f"),
    ("random-lead", "random_lead_share", ".2f"),
    ("rank", "rank_share", ".2f"),
    ("broad", "broad_notes", "d"),
    ("hit-any-edit", "gold_hit_before_any_edit", ".2f"),
    ("own-any-edit", "own_hit_before_any_edit", ".2f"),
    ("random-any", "random_gold_hit_before_any_edit", ".2f"),
    ("saved", "searches_saved", "d"),
)


def format_table(
    title: str, items: Sequence[tuple[str, dict[str, Any]]], columns: Sequence[tuple[str, str, str]]
) -> str:
    """Fixed-width rows of ``items`` (name, summary) under ``columns``."""
    widths = [max(len(h), 6) for h, _, _ in columns]
    first = max([30, len(title)] + [len(name) for name, _ in items])
    rows = [f"{title:{first}} " + " ".join(f"{h:>{w}}" for (h, _, _), w in zip(columns, widths))]
    for name, f in items:
        cells = [f"{f.get(k, 0):>{w}{fmt}}" for (_, k, fmt), w in zip(columns, widths)]
        rows.append(f"{name:{first}} " + " ".join(cells))
    return "\n".join(rows)


def format_trajectory_report(rep: dict[str, Any]) -> str:
    """The trajectory figures (suggester, the agent's own search, random files) as tables: per
    repository, agent family and language, the fixed split and pooled; then the help figures
    (echo, lead, rank, gold-hit before any edit, searches saved) the same way, then the ledger."""
    items: list[tuple[str, dict[str, Any]]] = list(rep["repos"].items())
    groups = [("family " + k, v) for k, v in rep.get("families", {}).items()]
    groups += [("language " + k, v) for k, v in rep.get("languages", {}).items()]
    pooled = [(f"pooled {k}", rep[k]) for k in ("tune", "heldout") if k in rep] + [("pooled", rep["pooled"])]
    parts = [
        format_table("repository", items + groups + pooled, _COLUMNS),
        "",
        format_table("help (echo, lead, rank)", items + groups + pooled, _HELP_COLUMNS),
        "",
        format_ledger(rep["ledger"]),
    ]
    return "\n".join(parts)
