"""SWE-PolyBench Verified instances for the Corpus II converters (``rovo_dev.py``, ``iswe.py``,
``codex.py``): base commit, gold files and task text, pinned to public sources and checked.

SWE-PolyBench's dataset (base commits, gold patches) is published on Hugging Face, not in a git
repository this workplace can read, so each instance is rebuilt from git and checked against what
the benchmark itself recorded:

* **base commit**: the commit an agent's worktree was created at, as the ``migbot`` submission's
  log states it (``Worktree at <sha> verified OK``, :data:`MIGBOT_COMMIT`), resolved in the
  upstream repository (refused when it does not resolve to one commit);
* **gold files**: the files the instance's pull request changes (``refs/pull/<n>/head`` of the
  upstream snapshot, ``git diff base...head``, no rename detection) that are not tests
  (:func:`is_test_path`); the gold patch is that diff restricted to them and must apply to the
  base commit;
* **checked against the benchmark's own scoring**: every submission in :data:`METRIC_RUNS`
  records, per instance, the file recall and precision of its patch against the dataset's gold
  patch (``logs/<id>_metrics.json``, computed over the patches' old paths, as the benchmark's
  ``Patch.get_modified_files`` does); recomputed with our gold patch they must be equal for every
  submission (an instance whose figures differ is refused). Each submission's patch must also
  apply at the base commit as its ``index`` lines say (the pre-image blobs of the files it
  changes are the base commit's): the agents worked on that commit.

The task text of an instance is the problem statement the agents were given (the Rovo Dev run's
``<problem_statement>``, else the iSWE run's issue text); every other family's run of the same
instance must contain its first 300 characters (whitespace collapsed).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from corpus.trajectories.core import ConvertError, check_patch_applies, git

PB_REPO = "amazon-science/SWE-PolyBench"
#: The ``submission`` branch of SWE-PolyBench: the Rovo Dev, iSWE, Kodah and Prometheus runs.
SUBMISSION_COMMIT = "e4617f2db5b0a3c509633b3ac0985db6237efe00"
#: The migbot submission (not merged; a commit of the snapshot): base commits of all instances.
MIGBOT_COMMIT = "0abe03f23adf72493948a46420d6ff7061a1c402"
MIGBOT_DIR = "evaluation/PBVerified/20260623_migbot_claude-opus-4-8/trajs"
#: Submissions whose recorded file recall/precision check the gold files: (commit, folder).
METRIC_RUNS = (
    (SUBMISSION_COMMIT, "evaluation/PBVerified/20251208_atlassian-rovo-dev"),
    (SUBMISSION_COMMIT, "evaluation/PBVerified/20260430_kodah_gpt-5-mini"),
    (SUBMISSION_COMMIT, "evaluation/PBVerified/20251130_prometheus_gpt-5"),
)
#: The instances' repositories whose snapshots fit the 500 MiB fetch limit (instance prefix →
#: owner/name). Not included: huggingface/transformers, mui/material-ui, microsoft/vscode,
#: langchain-ai/langchain, trinodb/trino, google/guava, mrdoob/three.js, angular/angular and
#: Significant-Gravitas/AutoGPT (531 MB to 1.3 GB).
REPOS = {
    "google__gson": "google/gson",
    "apache__rocketmq": "apache/rocketmq",
    "apache__dubbo": "apache/dubbo",
    "apolloconfig__apollo": "apolloconfig/apollo",
    "serverless__serverless": "serverless/serverless",
    "sveltejs__svelte": "sveltejs/svelte",
    "prettier__prettier": "prettier/prettier",
    "keras-team__keras": "keras-team/keras",
    "yt-dlp__yt-dlp": "yt-dlp/yt-dlp",
    "tailwindlabs__tailwindcss": "tailwindlabs/tailwindcss",
    "coder__code-server": "coder/code-server",
}
#: Folders and file names of tests, fixtures and snapshots (SWE-PolyBench keeps them in
#: ``test_patch``); checked on every instance by the recorded retrieval figures.
TEST_DIRS = frozenset(
    {
        "test",
        "tests",
        "__tests__",
        "testing",
        "e2e",
        "spec",
        "specs",
        "__snapshots__",
        "fixtures",
        "__fixtures__",
        "testdata",
        "test-utils",
    }
)
_TEST_NAME = re.compile(r"(?:Tests?|IT)\.java$|\.(?:test|spec)\.[jt]sx?$|^test_.*\.py$|_test\.py$|^conftest\.py$")


def is_test_path(path: str) -> bool:
    """A test, fixture or snapshot path (:data:`TEST_DIRS` folder, or a test file name)."""
    parts = path.split("/")
    return any(p in TEST_DIRS for p in parts[:-1]) or bool(_TEST_NAME.search(parts[-1]))


@dataclass
class Instance:
    """One SWE-PolyBench Verified instance, rebuilt and checked (module docstring)."""

    id: str
    repo: str
    base: str
    head: str
    gold: list[str]
    patch: str


def old_paths(patch: str) -> set[str]:
    """The old paths of a unified diff's files (``/dev/null`` for an added file; ``a/`` removed):
    a ``--- `` line followed by a ``+++ `` line."""
    lines = patch.splitlines()
    out: set[str] = set()
    for k in range(len(lines) - 1):
        if lines[k].startswith("--- ") and lines[k + 1].startswith("+++ "):
            p = lines[k][4:].split("\t")[0].strip()
            out.add(p[2:] if p.startswith("a/") else p)
    return out


def retrieval(reference: set[str], predicted: set[str]) -> tuple[float, float]:
    """(recall, precision) of ``predicted`` files against ``reference`` (0.0 when undefined)."""
    tp = len(reference & predicted)
    return (tp / len(reference) if reference else 0.0, tp / len(predicted) if predicted else 0.0)


def preimages(patch: str) -> list[tuple[str, str]]:
    """(old path, abbreviated pre-image blob) of each changed file of a git diff with ``index``
    lines (new files left out)."""
    out = []
    path: str | None = None
    for line in patch.splitlines():
        m = re.match(r"^diff --git a/(\S+) b/\S+$", line)
        if m:
            path = m.group(1)
            continue
        m = re.match(r"^index ([0-9a-f]{7,40})\.\.[0-9a-f]+", line)
        if m and path is not None:
            if set(m.group(1)) != {"0"}:
                out.append((path, m.group(1)))
            path = None
    return out


def base_commits(pb: Path) -> dict[str, str]:
    """Instance → the base commit prefix the migbot run's log names."""
    listing = git(pb, "ls-tree", "--name-only", MIGBOT_COMMIT, MIGBOT_DIR + "/").decode().split()
    out = {}
    for path in listing:
        iid = path.rsplit("/", 1)[-1].removesuffix(".md")
        text = git(pb, "show", f"{MIGBOT_COMMIT}:{path}").decode("utf-8", "replace")
        m = re.search(r"Worktree at ([0-9a-f]{7,40}) verified OK", text)
        if m:
            out[iid] = m.group(1)
    return out


def recorded_runs(pb: Path) -> dict[str, list[tuple[str, str, dict[str, float]]]]:
    """Instance → (run folder, model patch, recorded file retrieval figures) of each metric run."""
    out: dict[str, list[tuple[str, str, dict[str, float]]]] = {}
    for commit, folder in METRIC_RUNS:
        names = set(git(pb, "ls-tree", "--name-only", commit, folder + "/logs/").decode().split())
        for line in git(pb, "show", f"{commit}:{folder}/all_preds.jsonl").decode().splitlines():
            row = json.loads(line)
            iid = row["instance_id"]
            metrics = f"{folder}/logs/{iid}_metrics.json"
            if metrics not in names:
                continue
            fig = json.loads(git(pb, "show", f"{commit}:{metrics}"))["file_retrieval_metrics"]
            if fig is None:
                continue
            out.setdefault(iid, []).append((folder, row.get("model_patch") or "", fig))
    return out


def instances(pb: Path, upstream: str, stats: Counter[str]) -> dict[str, Instance]:
    """The checked instances of the repositories in :data:`REPOS` (refusals counted in ``stats``
    by reason)."""
    bases = base_commits(pb)
    runs = recorded_runs(pb)
    out: dict[str, Instance] = {}
    for iid in sorted(bases):
        prefix, _, number = iid.rpartition("-")
        if prefix not in REPOS:
            continue
        repo = REPOS[prefix]
        owner, name = repo.split("/")
        up = Path(upstream.format(owner=owner, name=name))
        try:
            base = git(up, "rev-parse", "--verify", "--quiet", f"{bases[iid]}^{{commit}}").decode().strip()
            head = git(up, "rev-parse", "--verify", "--quiet", f"refs/pull/{number}/head").decode().strip()
        except ConvertError:
            stats["polybench refused: base or pull request head not in the snapshot"] += 1
            continue
        names = git(up, "diff", "--name-status", "--no-renames", f"{base}...{head}").decode()
        status = {}  # path → A/M/D, in the diff's order
        for ln in names.splitlines():
            if "\t" in ln:
                code, path = ln.split("\t", 1)
                status[path] = code
        gold = [p for p in status if not is_test_path(p)]
        if not gold:
            stats["polybench refused: no non-test file changed"] += 1
            continue
        patch = git(up, "diff", "--no-renames", f"{base}...{head}", "--", *gold).decode("utf-8", "surrogateescape")
        check_patch_applies(up, base, patch)
        checks = runs.get(iid, [])
        if not checks:
            stats["polybench refused: no recorded retrieval figures"] += 1
            continue
        reference = old_paths(patch)
        agree = all(
            all(abs(a - b) < 1e-6 for a, b in zip(retrieval(reference, old_paths(p)), (f["recall"], f["precision"])))
            for _, p, f in checks
        )
        if not agree:
            stats["polybench refused: gold files disagree with the recorded retrieval figures"] += 1
            continue
        stale = False
        for _, p, _f in checks:
            for path, blob in preimages(p):
                try:
                    full = git(up, "rev-parse", f"{base}:{path}").decode().strip()
                except ConvertError:
                    full = ""
                stale = stale or not full.startswith(blob)
        if stale:
            stats["polybench refused: a submission's patch does not start from the base commit"] += 1
            continue
        stats["gold files added by the patch"] += sum(1 for p in gold if status[p] == "A")
        out[iid] = Instance(iid, repo, base, head, gold, patch)
    return out


def collapse(text: str) -> str:
    """``text`` with runs of whitespace as one space, stripped."""
    return " ".join(text.split())


def same_task(canonical: str, text: str) -> bool:
    """Whether ``text`` contains the first 300 characters of ``canonical`` (whitespace collapsed)."""
    head = collapse(canonical)[:300]
    return bool(head) and head in collapse(text)
