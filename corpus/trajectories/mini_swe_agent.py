"""The mini-swe-agent converter (family ``mini-swe-agent``, bash only): recorded runs of
mini-swe-agent 1.15.0 with Gemini 3 Pro Preview on SWE-bench Verified → :class:`core.Trace`.

Inputs (local bare git dirs; nothing is fetched here):

* the trajectories: ``gruckion/mini-swe-agent`` at :data:`SOURCE_COMMIT`, folder :data:`SOURCE_DIR`
  (one ``<instance>/<instance>.traj.json`` per instance, format ``mini-swe-agent-1``);
* the instance records (``repo``, ``base_commit``, ``patch`` = the SWE-bench gold patch,
  ``problem_statement``): ``lukacf/mcp-the-force-swebench`` at :data:`DATASET_COMMIT`, file
  :data:`DATASET_PATH` (the SWE-bench Verified test split);
* the upstream repositories (tracked paths, blobs).

Each assistant reply with exactly one bash block is one call; its command is mapped to a
``read``/``write``/``edit``/``bash`` tool call by :func:`core.tool_call`. The rules are in
``README.md``; ``firstEdit`` and ``ownSearchHit`` keep this converter's own rules (the corpus'
first 48 traces were pinned with them).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from corpus.trajectories.core import (
    Call,
    ConvertError,
    Trace,
    check_patch_applies,
    cut,
    dirs_of,
    git,
    gold_files,
    is_test_path,
    listed_dirs,
    lists_path,
    opens_of,
    tool_call,
    tracked_paths,
)

FAMILY = "mini-swe-agent"
AGENT = "mini-swe-agent 1.15.0"
SOURCE_REPO = "gruckion/mini-swe-agent"
SOURCE_COMMIT = "d12a71affd95403b036b2bdbd827349b77bfffb9"
SOURCE_DIR = "swebench_results/20251118_gemini-3-pro-74pct/trajs"
DATASET_REPO = "lukacf/mcp-the-force-swebench"
DATASET_COMMIT = "62ffb5c8288dc0f885835d0e626996132dc50909"
DATASET_PATH = "runner/swe_bench_instances.jsonl"

#: Traces taken per repository, the first N in SHA-256 order of the instance id (the first 48 —
#: sympy 12, sphinx 10, astropy 7, xarray 7, pytest 7, pylint 5 — are Corpus I). django/django,
#: scikit-learn/scikit-learn and matplotlib/matplotlib are absent: their snapshots are over the
#: 500 MiB fetch limit, so no path list can be made.
QUOTA: dict[str, int] = {
    "sympy/sympy": 20,
    "sphinx-doc/sphinx": 16,
    "astropy/astropy": 12,
    "pydata/xarray": 12,
    "pytest-dev/pytest": 12,
    "pylint-dev/pylint": 10,
    "mwaskom/seaborn": 2,
    "psf/requests": 8,
    "pallets/flask": 1,
}

_BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.S)
_RETURNCODE = re.compile(r"^<returncode>(-?\d+)</returncode>")
_ELIDED = re.compile(r"<elided_chars>\s*(\d+) characters elided\s*</elided_chars>")


def _between(text: str, tag: str) -> str | None:
    m = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return m.group(1) if m else None


def observation(text: str) -> tuple[bool, str]:
    """(isError, output text) of one environment message of mini-swe-agent 1.x.

    ``<returncode>N</returncode><output>…</output>`` → (N != 0, output); the long-output form
    (``<output_head>``/``<elided_chars>``/``<output_tail>``) → head + ``[N characters elided]`` +
    tail; a timeout notice → (True, the partial output); the final submission message (the
    ``git diff --cached`` of the submitted change, no wrapper) → (False, itself)."""
    m = _RETURNCODE.match(text)
    if m:
        err = int(m.group(1)) != 0
        out = _between(text, "output")
        if out is None:
            head = _between(text, "output_head") or ""
            tail = _between(text, "output_tail") or ""
            e = _ELIDED.search(text)
            out = f"{head}\n[{e.group(1) if e else '?'} characters elided]\n{tail}"
        return err, out
    if text.startswith("The last command <command>"):
        return True, _between(text, "output") or ""
    return False, text


def actions(messages: list[dict[str, Any]]) -> tuple[list[tuple[str, bool, str]], int]:
    """(command, isError, output) of each executed action, and the count of replies rejected for
    not holding exactly one bash block (no command ran for those)."""
    out: list[tuple[str, bool, str]] = []
    rejected = 0
    for k, msg in enumerate(messages):
        if msg.get("role") != "assistant":
            continue
        blocks = _BASH_BLOCK.findall(msg.get("content") or "")
        reply = messages[k + 1].get("content") or "" if k + 1 < len(messages) else ""
        if len(blocks) != 1 or reply.startswith("Please always provide EXACTLY ONE action"):
            rejected += 1
            continue
        err, text = observation(reply)
        out.append((blocks[0].strip(), err, text))
    return out, rejected


def model_of(messages: list[dict[str, Any]]) -> str:
    """The model that wrote the run (most frequent ``response.model``; an unprefixed name gets the
    ``google/`` prefix the same run used elsewhere)."""
    names: Counter[str] = Counter()
    for m in messages:
        name = ((m.get("extra") or {}).get("response") or {}).get("model")
        if name:
            names[name if "/" in name else f"google/{name}" if name.startswith("gemini") else name] += 1
    return names.most_common(1)[0][0] if names else "unknown"


def convert_trace(trace_id: str, row: dict[str, Any], traj: dict[str, Any], tracked: set[str]) -> tuple[Trace, int]:
    """(trace, rejected replies) of one run."""
    acts, rejected = actions(traj["messages"])
    gold = gold_files(row["patch"])
    calls: list[Call] = []
    first_edit: int | None = None
    own_hit: int | None = None
    scratch: dict[str, str] = {}
    for i, (command, err, text) in enumerate(acts):
        tool, cls, segs, writes = tool_call(command, tracked, scratch)
        text = cut(text)
        views = opens_of(segs, [], tracked)
        if tool["name"] == "read" and tool["input"]["file_path"] not in views:
            views.insert(0, tool["input"]["file_path"])
        opens = [p for p in views if p in tracked] + [p for p in writes if p in tracked and p not in views]
        calls.append(Call(cls, tool, err, text, opens, dirs_of(segs), list(writes), views))
        if first_edit is None and own_hit is None:
            cwds = [s.cwd for s in segs] + listed_dirs(segs)
            if any(lists_path(text, g, cwds) for g in gold):
                own_hit = i
        if first_edit is None and any(p in tracked for p in writes):
            first_edit = i
            if own_hit == i:
                own_hit = None  # the hit must come before the first edit
    if own_hit is not None and first_edit is not None and own_hit >= first_edit:
        own_hit = None
    trace = Trace(
        id=trace_id,
        instance=row["instance_id"],
        repo=row["repo"],
        commit=row["base_commit"],
        model=model_of(traj["messages"]),
        source={"repo": SOURCE_REPO, "path": f"{SOURCE_DIR}/{trace_id}/{trace_id}.traj.json", "commit": SOURCE_COMMIT},
        gold=gold,
        family=FAMILY,
        agent=AGENT,
        language="python",
        task="",
        calls=calls,
        first_edit=first_edit,
        own_search_hit=own_hit,
        legacy=True,
    )
    return trace, rejected


def select(rows: list[dict[str, Any]], available: set[str]) -> list[dict[str, Any]]:
    """Per repository of :data:`QUOTA`, the first N instances (with a trajectory) in the order of
    the SHA-256 of their instance id: a fixed pseudo-random sample, independent of the outcome."""
    chosen: list[dict[str, Any]] = []
    for repo, n in QUOTA.items():
        mine = [r for r in rows if r["repo"] == repo and r["instance_id"] in available]
        mine.sort(key=lambda r: hashlib.sha256(r["instance_id"].encode()).hexdigest())
        chosen.extend(mine[:n])
    return chosen


def dataset_rows(dataset: Path) -> list[dict[str, Any]]:
    """The SWE-bench Verified rows of the dataset snapshot."""
    raw = git(dataset, "show", f"{DATASET_COMMIT}:{DATASET_PATH}")
    return [json.loads(line) for line in raw.splitlines()]


def convert(source: Path, dataset: Path, upstream: str, stats: Counter[str]) -> tuple[list[Trace], dict[str, str]]:
    """Every selected run as a trace, and the task texts (instance → the dataset's problem
    statement). Raises :class:`ConvertError` on an inconsistent input."""
    rows = dataset_rows(dataset)
    listing = git(source, "ls-tree", "-r", "--name-only", SOURCE_COMMIT, SOURCE_DIR + "/").decode()
    available = {p.split("/")[-2] for p in listing.splitlines() if p.endswith(".traj.json")}
    traces: list[Trace] = []
    tasks: dict[str, str] = {}
    for row in select(rows, available):
        iid, repo, commit = row["instance_id"], row["repo"], row["base_commit"]
        owner, name = repo.split("/")
        up = Path(upstream.format(owner=owner, name=name))
        git(up, "cat-file", "-e", f"{commit}^{{commit}}")
        check_patch_applies(up, commit, row["patch"])
        gold = gold_files(row["patch"])
        if any(is_test_path(g) for g in gold):
            raise ConvertError(f"{iid}: the gold patch changes a test path: {gold}")
        tracked = set(tracked_paths(up, commit))
        stats["gold files added by the patch"] += sum(1 for g in gold if g not in tracked)
        traj = json.loads(git(source, "show", f"{SOURCE_COMMIT}:{SOURCE_DIR}/{iid}/{iid}.traj.json"))
        if row["problem_statement"].strip()[:300] not in traj["messages"][1]["content"]:
            raise ConvertError(f"{iid}: the dataset's problem statement is not the trajectory's task")
        trace, rejected = convert_trace(iid, row, traj, tracked)
        stats["mini-swe-agent rejected replies"] += rejected
        traces.append(trace)
        tasks[iid] = row["problem_statement"]
    return traces, tasks
