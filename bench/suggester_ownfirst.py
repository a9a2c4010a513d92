"""Where the agent's own results first show a file the task changes, and what came before (a tuning
aid, **tune traces only**: the fixed held-out set is refused unless ``--heldout``).

The agent's own gold-hit (``ownSearchHit``) is the bar the tool-call notes are held to. This
reads, from the corpus data alone (no replay: the recorded calls and the checkout's file list),
for each trace the first call before the agent's first repository edit whose result showed a
gold file (``own``, read as the evaluation reads a result: ``shown_by``) and the search-class
calls before it — the only calls at which a note could have named the file first:

* ``own at the first call`` — no search-class call comes before it (the agent opened the file,
  or its first search showed it): a note can only repeat it;
* ``only folder listings before it`` — ``ls``, ``find``/``tree`` without a name test, a folder
  expansion: nothing was searched for;
* ``a search with a pattern or name before it`` — the notes' real chance;
* ``own miss`` — no result showed a gold file before the first repository edit.

With ``--goldhit ROWS`` (the per-call rows of ``bench/suggester_goldhit.py --out``, replayed on
the same traces) a trace is ``product first`` when a note at any call before the agent's own
result named a gold file (a script's write too), and a trace of the third class is otherwise
classed by what the suggester did at those earlier search calls: ``gold a target,
lost: <stage>`` (the trigger named it and a gate or the ranking held it back), ``spoke, wrong
targets`` (``(tests only)`` when every such note named only tests), ``silent by a gate`` (a
trigger took the call, the gold file not among its targets: the reasons counted) or ``no
trigger`` (no intent recognised).

    python bench/suggester_ownfirst.py --cache /work/corpus-cache [--only ID,REPO,FAMILY] [--goldhit rows.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TRAJ = ROOT / "corpus" / "trajectories"

NO_SEARCH = "own at the first call"
LISTINGS = "only folder listings before it"
SEARCHED = "a search with a pattern or name before it"
MISS = "own miss"
#: Commands that list folders without searching for a name (``find``/``tree`` with a name test
#: search: ``find . -name '*form*'``).
_LISTERS = ("ls", "tree", "find")
_NAME_TESTS = ("-name", "-iname", "-path", "-ipath", "-regex", "grep")
#: Tools that list a folder (Rovo Dev's ``expand_folder``).
_LISTING_TOOLS = frozenset({"expand_folder"})


def own_first(shown: Sequence[set[str]], gold: set[str], limit: int) -> int | None:
    """The first call before ``limit`` (the first repository edit) whose result showed a gold file."""
    return next((i for i in range(min(limit, len(shown))) if shown[i] & gold), None)


def only_lists(call: dict[str, Any]) -> bool:
    """Whether a search-class call only lists folders (searches for no name or pattern)."""
    tool = call["params"]["tool"]
    inp = tool.get("input")
    cmd = inp.get("command") if isinstance(inp, dict) else None
    if isinstance(cmd, list):
        cmd = " ".join(str(c) for c in cmd)
    if not isinstance(cmd, str):
        return tool.get("name") in _LISTING_TOOLS
    line = cmd.strip()
    if line.startswith("cd ") and "&&" in line:
        line = line.split("&&", 1)[1].strip()
    words = line.split()
    return bool(words) and words[0] in _LISTERS and not any(w in line for w in _NAME_TESTS)


def before_class(calls: Sequence[dict[str, Any]], own: int | None) -> tuple[str, list[int]]:
    """The trace's class (module docstring) and the search-class calls before ``own``."""
    if own is None:
        return MISS, []
    searches = [i for i in range(own) if calls[i].get("class") == "search"]
    if not searches:
        return NO_SEARCH, []
    if all(only_lists(calls[i]) for i in searches):
        return LISTINGS, searches
    return SEARCHED, searches


def product_class(
    rows: Sequence[dict[str, Any]], searches: Sequence[int], gold: set[str], own: int | None = None
) -> tuple[str, list[str]]:
    """What the suggester did before the agent's own result (goldhit rows by call index): ``product
    first`` when a note at any call before ``own`` named a gold file, else what it did at the
    ``searches``: the class and, for ``silent by a gate``, the gates (``trigger:reason``)."""
    at = {int(r["index"]): r for r in rows}
    calls = [at[i] for i in searches if i in at]
    earlier = [r for r in rows if own is not None and int(r["index"]) < own] or calls
    if any(set(r.get("named") or []) & gold for r in earlier):
        return "product first", []
    targeted = [r for r in calls if set(r.get("targets") or []) & gold]
    if targeted:
        r = targeted[0]
        chosen = r.get("chosen")
        why = chosen if isinstance(chosen, str) else (r.get("reason") or ("cut" if chosen else "filters"))
        return f"gold a target, lost: {why}", []
    notes = [r for r in calls if r.get("decision") == "Note"]
    if notes:
        tests = all(all(_is_test(p) for p in r.get("named") or []) for r in notes)
        return "spoke, wrong targets" + (" (tests only)" if tests else ""), []
    gated = [r for r in calls if r.get("trigger")]
    if gated:
        gates = [
            f"{r['trigger']}:{r['chosen'] if isinstance(r.get('chosen'), str) else r.get('reason')}" for r in gated
        ]
        return "silent by a gate", gates
    return "no trigger", []


def _is_test(path: str) -> bool:
    from dsh_sidecar.suggester.candidates import in_test_tree, is_test_path

    return is_test_path(path) or in_test_tree(path)


def table(counts: dict[str, Counter[str]], title: str) -> str:
    """A markdown table: one row per group, one column per class."""
    keys = sorted({k for c in counts.values() for k in c})
    out = [
        f"| {title} | traces | " + " | ".join(keys) + " |",
        "| --- | ---: | " + " | ".join("---:" for _ in keys) + " |",
    ]
    for group, c in sorted(counts.items()):
        out.append(f"| {group} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in keys) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", type=Path, default=os.environ.get("DSH_CORPUS_CACHE"))
    p.add_argument("--only", default=None, help="trace ids, repositories or agent families")
    p.add_argument("--goldhit", nargs="*", type=Path, default=None, help="rows of suggester_goldhit.py --out")
    p.add_argument("--heldout", action="store_true", help="include the held-out traces (not while tuning)")
    a = p.parse_args(argv)
    from dsh_sidecar.evaluation import FileIndex, checkout_dir, read_trajectories, workspace_files
    from dsh_sidecar.evaluation.trajectories import shown_by

    if a.cache is None:
        p.error("--cache (or DSH_CORPUS_CACHE) is needed: the listings are read against the checkout's files")
    only = set(a.only.split(",")) if a.only else None
    rows = {}
    for f in a.goldhit or []:
        for line in f.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                rows[r["id"]] = r["calls"]
    by_family: dict[str, Counter[str]] = defaultdict(Counter)
    by_product: dict[str, Counter[str]] = defaultdict(Counter)
    gates: Counter[str] = Counter()
    index: tuple[Path, Any] | None = None
    for t in sorted(read_trajectories(TRAJ), key=lambda t: (t.row["repo"], t.id)):
        if only is not None and not {t.id, t.row["repo"], t.family} & only:
            continue
        if t.heldout and not a.heldout:
            continue
        ws = checkout_dir(a.cache, t.row["repo"], t.row["commit"])
        if not ws.is_dir():
            sys.stderr.write(f"{t.id}: no checkout {ws}\n")
            continue
        if index is None or index[0] != ws:
            index = (ws, FileIndex(workspace_files(ws)))
        _listed, shown, _opens = shown_by(t, index[1])
        own = own_first(shown, t.gold, t.limit)
        kind, searches = before_class(t.calls, own)
        by_family[t.family][kind] += 1
        by_family["all"][kind] += 1
        if t.id in rows:
            pk, why = product_class(rows[t.id], searches, t.gold, own)
            if kind != SEARCHED and pk != "product first":
                pk, why = kind, []
            by_product[t.family][pk] += 1
            by_product["all"][pk] += 1
            gates.update(why)
    print(f"load {os.getloadavg()[0]:.1f}")
    print(table(by_family, "family"))
    if by_product:
        print()
        print(table(by_product, "family (replayed)"))
        print("gates at the earlier searches:", dict(gates.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
