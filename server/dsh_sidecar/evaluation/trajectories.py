"""Trajectory figures: recorded agent runs, ``corpus/trajectories/``.

The definitions, with their edge cases, are in ``docs/corpus.md``, "Metric definitions":

* useful-precision = notes naming (among their targets) a file the agent reads or edits at a
  later call of the trace, or a gold file ÷ all notes;
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
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.evaluation.trace import GRAPH_WAIT_S, TraceLine, format_ledger, ledger_summary, replay

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
#: A result naming more repository files than this is a ranked listing: a note can't echo it.
ECHO_MAX_FILES: Final = 5
#: A result naming at least this many repository files is broad: its notes are judged on rank.
RANK_MIN_FILES: Final = 10


# ---------------------------------------------------------------------------- trajectories


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


# ---------------------------------------------------------------------------- what a result showed


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


# ---------------------------------------------------------------------------- per-trace figures


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
    t: Trajectory, notes: Sequence[list[dict[str, Any]]], files: Sequence[str] | FileIndex
) -> dict[str, Any]:
    """The per-trace counts behind the trajectory figures (module docstring), and ``note_log``: one
    entry per note (call index, intent, targets, how many files the call showed, useful, echo,
    lead, the gold files it named). ``files`` is the workspace's file list (for the random-file
    baseline and the listings), or its index."""
    index = files if isinstance(files, FileIndex) else FileIndex(files)
    after = _touched_after(t)
    gold = t.gold
    listed, shown, opens = shown_by(t, index)
    seen: list[set[str]] = []
    acc: set[str] = set()
    for s in shown:
        acc = acc | s
        seen.append(acc)
    next_open: list[set[str]] = [set()] * len(t.calls)
    nxt: set[str] = set()
    for i in range(len(t.calls) - 1, -1, -1):
        next_open[i] = nxt
        if opens[i]:
            nxt = set(opens[i])
    first_open = {str(g): int(i) for g, i in (t.row.get("firstOpen") or {}).items()}
    is_search = [c.get("class") == "search" for c in t.calls]

    def echo(i: int, targets: Sequence[str]) -> bool:
        return bool(targets) and 1 <= len(shown[i]) <= ECHO_MAX_FILES and set(targets) <= shown[i]

    def echo_first(i: int, targets: Sequence[str]) -> bool:
        return bool(targets) and 1 <= len(shown[i]) <= ECHO_MAX_FILES and targets[0] in shown[i]

    def lead(i: int, targets: Sequence[str]) -> bool:
        return any(p in gold and p not in seen[i] for p in targets)

    n_notes = useful = echoes = firsts = leads = broad = ranked = 0
    gold_hit = gold_hit_any = False
    first_named: dict[str, int] = {}
    log: list[dict[str, Any]] = []
    for i, ns in enumerate(notes):
        for n in ns:
            targets = [str(x) for x in n.get("source", {}).get("targets", [])]
            n_notes += 1
            is_useful = bool(set(targets) & gold) or any(_mentions(after[i], p) for p in targets)
            useful += is_useful
            if set(targets) & gold:
                gold_hit = gold_hit or i < t.limit
                gold_hit_any = gold_hit_any or i < t.any_limit
            is_echo, is_lead = echo(i, targets), lead(i, targets)
            echoes += is_echo
            firsts += echo_first(i, targets)
            leads += is_lead
            if len(shown[i]) >= RANK_MIN_FILES and targets:
                broad += 1
                ranked += targets[0] in next_open[i]
            log.append(
                {
                    "i": i,
                    "intent": n.get("source", {}).get("intent"),
                    "targets": targets,
                    "shown": len(shown[i]),
                    "useful": is_useful,
                    "echo": is_echo,
                    "echo_first": echo_first(i, targets),
                    "lead": is_lead,
                    "gold": sorted(set(targets) & gold),
                }
            )
            for p in targets:
                if p in gold:
                    first_named.setdefault(p, i)
    saved = pairs = 0
    for g, i in first_named.items():
        o = first_open.get(g)
        if o is not None and i < o:
            pairs += 1
            saved += sum(is_search[i + 1 : o])
    ordered = sorted(index.files)
    picks = _draw(t, ordered)
    r_useful = sum(1 for i, p in picks if p in gold or _mentions(after[i], p))
    return {
        "calls": len(t.calls),
        "search": sum(is_search),
        "notes": n_notes,
        "useful": useful,
        "gold_hit": gold_hit,
        "own_hit": t.row.get("ownSearchHit") is not None,
        "random_notes": len(picks),
        "random_useful": r_useful,
        "random_hit": any(p in gold for _, p in picks),
        "gold_hit_any": gold_hit_any,
        "own_hit_any": any(listed[j] & gold for j in range(t.any_limit)),
        "random_hit_any": any(p in gold and i < t.any_limit for i, p in picks),
        "echo": echoes,
        "echo_first": firsts,
        "lead": leads,
        "broad": broad,
        "ranked": ranked,
        "saved": saved,
        "saved_pairs": pairs,
        "random_echo": sum(1 for i, p in picks if echo(i, [p])),
        "random_lead": sum(1 for i, p in picks if lead(i, [p])),
        "note_log": log,
    }


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
) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """Replay each trajectory on ``workspace_of(t)`` (a fresh server and ``$DSH_HOME`` each, the
    ``suggester`` knobs given as ``initializationOptions.suggester``); return the per-trace
    counts (tagged with repository, family, language and split) and the ledger summary."""
    per: dict[str, dict[str, Any]] = {}
    ledger: Counter[str] = Counter()
    index_cache: dict[Path, FileIndex] = {}
    for t in trajs:
        ws = workspace_of(t)
        if not ws.is_dir():
            raise OSError(f"no workspace {ws} for {t.row['repo']}@{str(t.row['commit'])[:12]}")
        trace = [TraceLine(c["params"], None, ()) for c in t.calls]
        _, notes, logs = replay(trace, ws, suggester=suggester, graph_wait_s=graph_wait_s)
        if ws not in index_cache:
            index_cache[ws] = FileIndex(workspace_files(ws))
        per[t.id] = {
            "repo": t.row["repo"],
            "family": t.family,
            "language": t.language,
            "heldout": t.heldout,
            **trajectory_figures(t, notes, index_cache[ws]),
        }
        ledger.update(ledger_summary(logs))
    return per, dict(sorted(ledger.items()))


def notes_from_log(t: Trajectory, log: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The notes of a replay rebuilt from its ``note_log`` (call index, intent, targets): what
    :func:`trajectory_figures` reads of a note, so a kept report can be scored again."""
    notes: list[list[dict[str, Any]]] = [[] for _ in t.calls]
    for n in log:
        i = int(n["i"])
        if not 0 <= i < len(notes):
            raise ValueError(f"{t.id}: a note at call {i} of {len(notes)}")
        notes[i].append({"source": {"intent": n.get("intent"), "targets": list(n.get("targets") or [])}})
    return notes


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
        notes = notes_from_log(t, kept[t.id]["note_log"])
        tags = {"repo": t.row["repo"], "family": t.family, "language": t.language, "heldout": t.heldout}
        per[t.id] = {**tags, **trajectory_figures(t, notes, index_cache[files])}
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
) -> dict[str, Any]:
    """:func:`replay_trajectories` then :func:`trajectory_report`."""
    per, ledger = replay_trajectories(trajs, workspace_of, graph_wait_s, suggester)
    return trajectory_report(per, ledger)


#: Columns of the trajectory tables: (header, summary key, format).
_COLUMNS: Final = (
    ("traces", "traces", "d"),
    ("search", "search_calls", "d"),
    ("notes", "notes", "d"),
    ("n/100s", "notes_per_100_search", ".2f"),
    ("useful-p", "useful_precision", ".2f"),
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
