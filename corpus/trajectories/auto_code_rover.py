"""The AutoCodeRover converter (family ``auto-code-rover``): AutoCodeRover's first recorded run
on SWE-bench Lite (``nus-apr/auto-code-rover`` at :data:`SOURCE_COMMIT`, folder
:data:`SOURCE_DIR`, one ``<outcome>/<instance>_<timestamp>/`` folder per instance, GPT-4
``gpt-4-0125-preview``) → :class:`core.Trace`.

The agent looks code up by symbol with its own search API — ``search_class``,
``search_class_in_file``, ``search_method``, ``search_method_in_class``,
``search_method_in_file``, ``search_code``, ``search_code_in_file`` (all search-class: each
answers where a class, a method or a snippet is and prints its code or the files holding it) —
and then writes a patch as ``<file>``/``<original>``/``<patched>`` modifications. The run's full
conversation is its last ``debug_agent_write_patch_<n>.json`` (each retry of the patch writer
saves the conversation so far): every ``Result of name(args):`` block of a user message is one
call, its text up to the next block its result (an error when it is the API's ``Could not
find …`` answer, the calls ACR records as not ok); every assistant reply to ``Write a patch…``
or to a refused patch that holds modifications is one ``write_patch`` call, which writes its
files when the next message reports ``Extracted a patch`` (ACR applied it). The code of the
bug locations ACR's harness hands the writer (``Here are the code in buggy locations``) is no
call of the agent and is left out.

Only the instances of :data:`REPOS` are taken: the training repositories of SWE-bench Lite with
a snapshot here (django, scikit-learn and matplotlib are over the fetch limit; pylint, pytest,
requests and flask are held-out repositories, left out so the held-out set does not change).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from corpus.trajectories import mini_swe_agent, polybench
from corpus.trajectories.core import (
    Call,
    ConvertError,
    Trace,
    check_patch_applies,
    git,
    gold_files,
    is_test_path,
    rel_path,
    tracked_paths,
)
from corpus.trajectories.iswe import parse_call

FAMILY = "auto-code-rover"
AGENT = "AutoCodeRover (NUS; SWE-bench Lite run acr-run-1, 2024-04-06)"
SOURCE_REPO = "nus-apr/auto-code-rover"
SOURCE_COMMIT = "3536ac292e3062ffb3f6e98457958e2b803228d6"
SOURCE_DIR = "results/acr-run-1"
#: The repositories whose instances are taken (module docstring), in this order.
REPOS = ("sympy/sympy", "sphinx-doc/sphinx", "astropy/astropy", "pydata/xarray", "mwaskom/seaborn")
#: The search API's argument names, as the run's own ``tool_call_sequence.json`` records them
#: (the calls in the conversation are positional: ``search_method_in_class("m", "C")``).
SIGNATURES: dict[str, tuple[str, ...]] = {
    "search_class": ("class_name",),
    "search_class_in_file": ("class_name", "file_name"),
    "search_method": ("method_name",),
    "search_method_in_class": ("method_name", "class_name"),
    "search_method_in_file": ("method_name", "file_name"),
    "search_code": ("code_str",),
    "search_code_in_file": ("code_str", "file_name"),
}
WRITE_TOOL = "write_patch"
_RESULT = re.compile(r"(?:^|\n)Result of (.*?):\n")
_MODIFICATION = re.compile(r"<file>(.*?)</file>\s*<original>(.*?)</original>\s*<patched>(.*?)</patched>", re.S)
_ISSUE = re.compile(r"<issue>(.*)</issue>", re.S)
_PATCH_ASKED = ("Write a patch for the issue", "Your edit could not be applied")
_APPLIED = "Extracted a patch"


def search_call(call: str, text: str) -> Call:
    """One ``Result of …`` block: the API call (positional arguments named by
    :data:`SIGNATURES`) and its result."""
    parsed = parse_call(call)
    is_error = text.lstrip().startswith("Could not find")
    if parsed is None or parsed[0] not in SIGNATURES or len(parsed[1]) > len(SIGNATURES[parsed[0]]):
        return Call("other", {"name": "api_call", "input": {"raw": call}}, is_error, text)
    name, args = parsed
    named = {key: args[f"arg{k}"] if f"arg{k}" in args else args.get(key) for k, key in enumerate(SIGNATURES[name])}
    return Call("search", {"name": name, "input": {k: v for k, v in named.items() if v is not None}}, is_error, text)


def write_call(reply: str, answer: str, workdir: str, tracked: set[str]) -> Call | None:
    """A patch-writer reply as one ``write_patch`` call, or ``None`` when it holds no modification."""
    mods = [
        {"file_path": path.strip(), "original": original, "patched": patched}
        for path, original, patched in _MODIFICATION.findall(reply)
    ]
    if not mods:
        return None
    applied = answer.lstrip().startswith(_APPLIED)
    paths = [p for p in (rel_path(m["file_path"], workdir) for m in mods) if p]
    writes = list(dict.fromkeys(paths)) if applied else []
    tool = {"name": WRITE_TOOL, "input": {"modifications": mods}}
    return Call("edit", tool, not applied, answer, [p for p in writes if p in tracked], [], writes, [])


def calls_of(messages: list[dict[str, Any]], workdir: str, tracked: set[str]) -> list[Call]:
    """The searches and the patch writes of one conversation, in order (module docstring)."""
    out: list[Call] = []
    for k, m in enumerate(messages):
        text = str(m.get("content") or "")
        if m.get("role") == "user" and text.startswith("Result of "):
            parts = _RESULT.split("\n" + text)
            out.extend(search_call(parts[j], parts[j + 1]) for j in range(1, len(parts) - 1, 2))
        elif m.get("role") == "assistant" and k > 0:
            asked = str(messages[k - 1].get("content") or "")
            if asked.startswith(_PATCH_ASKED):
                answer = str((messages[k + 1] if k + 1 < len(messages) else {}).get("content") or "")
                call = write_call(text, answer, workdir, tracked)
                if call is not None:
                    out.append(call)
    return out


def issue_text(messages: list[dict[str, Any]]) -> str | None:
    """The issue the agent was given (between ``<issue>`` and ``</issue>``), or ``None``."""
    for m in messages:
        found = _ISSUE.search(str(m.get("content") or "")) if m.get("role") == "user" else None
        if found:
            return found.group(1)
    return None


def run_folders(acr: Path) -> dict[str, str]:
    """Instance id → its folder in :data:`SOURCE_DIR` (``<outcome>/<instance>_<timestamp>``)."""
    listing = git(acr, "ls-tree", "-r", "--name-only", SOURCE_COMMIT, SOURCE_DIR + "/").decode().splitlines()
    out: dict[str, str] = {}
    for path in listing:
        m = re.fullmatch(re.escape(SOURCE_DIR) + r"/([^/]+/([^/]+)_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d)/meta\.json", path)
        if m:
            if m.group(2) in out:
                raise ConvertError(f"{m.group(2)}: two runs in {SOURCE_DIR}")
            out[m.group(2)] = m.group(1)
    return out


def conversation(acr: Path, folder: str) -> list[dict[str, Any]] | None:
    """The last ``debug_agent_write_patch_<n>.json`` of a run folder (the whole conversation)."""
    names = git(acr, "ls-tree", "--name-only", SOURCE_COMMIT, f"{SOURCE_DIR}/{folder}/").decode().split()
    numbered = [(int(m.group(1)), n) for n in names if (m := re.search(r"/debug_agent_write_patch_(\d+)\.json$", n))]
    if not numbered:
        return None
    data = json.loads(git(acr, "show", f"{SOURCE_COMMIT}:{max(numbered)[1]}"))
    return data if isinstance(data, list) else None


def convert(acr: Path, dataset: Path, upstream: str, stats: Counter[str]) -> tuple[list[Trace], dict[str, str]]:
    """The runs of the instances of :data:`REPOS` (in instance-id order per repository) and their
    task texts. Raises :class:`ConvertError` on an inconsistent input (a base commit absent
    upstream, a gold patch that does not apply or differs from the dataset's)."""
    verified = {r["instance_id"]: r for r in mini_swe_agent.dataset_rows(dataset)}
    model = str(json.loads(git(acr, "show", f"{SOURCE_COMMIT}:{SOURCE_DIR}/stats.json")).get("model") or "unknown")
    folders = run_folders(acr)
    traces: list[Trace] = []
    tasks: dict[str, str] = {}
    for repo in REPOS:
        prefix = repo.replace("/", "__") + "-"
        for iid in sorted((i for i in folders if i.startswith(prefix)), key=lambda i: int(i.rsplit("-", 1)[1])):
            folder = folders[iid]
            meta = json.loads(git(acr, "show", f"{SOURCE_COMMIT}:{SOURCE_DIR}/{folder}/meta.json"))
            info = meta["task_info"]
            if info["repo"] != repo or info["instance_id"] != iid:
                raise ConvertError(f"{folder}: meta.json names {info['repo']} {info['instance_id']}")
            commit, patch = info["base_commit"], info["patch"]
            row = verified.get(iid)
            if row is not None and (row["base_commit"], row["patch"]) != (commit, patch):
                raise ConvertError(f"{iid}: base commit or gold patch differs from SWE-bench Verified's")
            if git(acr, "show", f"{SOURCE_COMMIT}:{SOURCE_DIR}/{folder}/developer_patch.diff").decode() != patch:
                raise ConvertError(f"{iid}: developer_patch.diff is not meta.json's patch")
            owner, name = repo.split("/")
            up = Path(upstream.format(owner=owner, name=name))
            git(up, "cat-file", "-e", f"{commit}^{{commit}}")
            check_patch_applies(up, commit, patch)
            gold = gold_files(patch)
            if any(is_test_path(g) for g in gold):
                raise ConvertError(f"{iid}: the gold patch changes a test path: {gold}")
            messages = conversation(acr, folder)
            if messages is None:
                stats["auto-code-rover refused: no conversation"] += 1
                continue
            issue = issue_text(messages)
            if issue is None or not polybench.same_task(info["problem_statement"], issue):
                stats["auto-code-rover refused: the issue is not the dataset's problem statement"] += 1
                continue
            tracked = set(tracked_paths(up, commit))
            calls = calls_of(messages, str(meta["setup_info"]["repo_path"]), tracked)
            if not calls:
                stats["auto-code-rover refused: no tool call"] += 1
                continue
            stats["auto-code-rover runs without an applied patch"] += not any(c.writes for c in calls)
            traces.append(
                Trace(
                    id=f"{FAMILY}/{iid}",
                    instance=iid,
                    repo=repo,
                    commit=commit,
                    model=model,
                    source={"repo": SOURCE_REPO, "path": f"{SOURCE_DIR}/{folder}", "commit": SOURCE_COMMIT},
                    gold=gold,
                    family=FAMILY,
                    agent=AGENT,
                    language="python",
                    task="",
                    calls=calls,
                )
            )
            tasks[iid] = info["problem_statement"] if row is None else row["problem_statement"]
    return traces, tasks
