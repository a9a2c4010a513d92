"""The Rovo Dev converter (family ``rovo-dev``): Atlassian Rovo Dev's runs on SWE-PolyBench
Verified (``amazon-science/SWE-PolyBench``, branch ``submission`` at
:data:`polybench.SUBMISSION_COMMIT`, folder :data:`SOURCE_DIR`, one text log per instance) →
:class:`core.Trace`.

The log is a sequence of blocks separated by a line of 120 ``=``; a ``TOOL CALL (<name>)``
block holds the call's arguments as YAML, the next ``TOOL RETURN (<name>)`` block its result (in
a fenced block, as the log recorded it: long results are already cut there, ending in ``...``).
The tools are Rovo Dev's own — ``grep`` (``content_pattern``, ``path_glob``), ``expand_folder``,
``open_files``, ``inspect_code``/``expand_code_chunks``, ``find_and_replace_code``,
``create_file``, ``delete_file``, ``bash`` — and are kept as the agent called them (name and
arguments), the way a hook receives a tool call. The workspace is ``/workspace``.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from corpus.trajectories import polybench
from corpus.trajectories.core import (
    Call,
    Trace,
    dirs_of,
    git,
    language_of,
    opens_of,
    rel_path,
    shell_call,
    tracked_paths,
)

FAMILY = "rovo-dev"
AGENT = "Atlassian Rovo Dev (2025-12-08)"
MODEL = "unknown (not stated by the submission)"
SOURCE_DIR = "evaluation/PBVerified/20251208_atlassian-rovo-dev/trajs"
WORKDIR = "/workspace"
SEPARATOR = "=" * 120
_HEADER = re.compile(r"^(AGENT:|USER PROMPT:|TOOL CALL \((\w+)\)|TOOL RETURN \((\w+)\)|SYSTEM.*:)\s*$")
SEARCH_TOOLS = frozenset({"grep", "expand_folder"})
READ_TOOLS = frozenset({"open_files", "inspect_code", "expand_code_chunks"})
EDIT_TOOLS = frozenset({"find_and_replace_code", "create_file", "delete_file"})


def blocks(log: str) -> list[tuple[str, str]]:
    """(header, body) of each block of a log (a separator line followed by a known header starts
    a block; anything else is content)."""
    lines = log.split("\n")
    out: list[tuple[str, list[str]]] = []
    k = 0
    while k < len(lines):
        if lines[k] == SEPARATOR and k + 1 < len(lines) and _HEADER.match(lines[k + 1]):
            out.append((lines[k + 1].strip(), []))
            k += 2
            continue
        if out:
            out[-1][1].append(lines[k])
        k += 1
    return [(h, "\n".join(body)) for h, body in out]


def fenced(body: str) -> str:
    """A tool return's text: the content of its fenced block (the body itself when unfenced)."""
    text = body.strip("\n")
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        if text.rstrip().endswith("```"):
            text = text.rstrip()[:-3]
    return text.rstrip("\n")


def problem_statement(log: str) -> str | None:
    """The task's problem statement (between ``<problem_statement>`` tags), or ``None``."""
    m = re.search(r"<problem_statement>\n?(.*?)\n?</problem_statement>", log, re.S)
    return m.group(1).strip() if m else None


def calls_of(log: str) -> list[tuple[str, dict[str, Any], str]]:
    """(tool name, arguments, result text) of each tool call, in order (a call without a return
    gets an empty result; an argument block that is not a YAML mapping is kept as ``{"raw"}``)."""
    out: list[tuple[str, dict[str, Any], str]] = []
    pending: list[int] = []
    for header, body in blocks(log):
        m = re.match(r"TOOL CALL \((\w+)\)", header)
        if m:
            try:
                args = yaml.safe_load(body) if body.strip() else {}
            except yaml.YAMLError:
                args = None
            out.append((m.group(1), args if isinstance(args, dict) else {"raw": body.strip()}, ""))
            pending.append(len(out) - 1)
            continue
        m = re.match(r"TOOL RETURN \((\w+)\)", header)
        if m:
            k = next((j for j in pending if out[j][0] == m.group(1)), None)
            if k is not None:
                pending.remove(k)
                name, args, _ = out[k]
                out[k] = (name, args, fenced(body))
    return out


def _path(value: Any) -> str | None:
    return rel_path(value, WORKDIR) if isinstance(value, str) and value.strip() else None


def to_call(name: str, args: dict[str, Any], text: str, tracked: set[str], scratch: dict[str, str]) -> Call:
    """One Rovo Dev tool call as a :class:`core.Call` (README: "Rovo Dev")."""
    tool = {"name": name, "input": args}
    if name == "bash":
        command = str(args.get("command") or "")
        cls, segs, writes, _ = shell_call(command, tracked, scratch, WORKDIR)
        views = opens_of(segs, [], tracked)
        opens = views + [p for p in writes if p in tracked and p not in views]
        return Call(cls, tool, False, text, opens, dirs_of(segs), writes, views)
    if name in SEARCH_TOOLS:
        folder = _path(args.get("folder_path")) if name == "expand_folder" else None
        return Call("search", tool, False, text, [], [folder] if folder else [])
    if name in READ_TOOLS:
        paths = args.get("file_paths") if name == "open_files" else [args.get("file_path")]
        views = []
        for p in paths if isinstance(paths, list) else []:
            rel = _path(p)
            if rel and rel in tracked and rel not in views:
                views.append(rel)
        return Call("read", tool, False, text, views, [])
    if name in EDIT_TOOLS:
        rel = _path(args.get("file_path"))
        if rel and name == "create_file" and isinstance(args.get("initial_content"), str):
            scratch[rel] = args["initial_content"]
        writes = [rel] if rel else []
        return Call("edit", tool, False, text, [p for p in writes if p in tracked], [], writes, [])
    return Call("other", tool, False, text)


def convert(
    pb: Path, upstream: str, insts: dict[str, polybench.Instance], stats: Counter[str]
) -> tuple[list[Trace], dict[str, str]]:
    """The runs of the checked instances (in instance order) and their problem statements."""
    listing = set(git(pb, "ls-tree", "--name-only", polybench.SUBMISSION_COMMIT, SOURCE_DIR + "/").decode().split())
    traces: list[Trace] = []
    tasks: dict[str, str] = {}
    for iid, inst in insts.items():
        path = f"{SOURCE_DIR}/{iid}"
        if path not in listing:
            stats["rovo-dev: no run"] += 1
            continue
        log = git(pb, "show", f"{polybench.SUBMISSION_COMMIT}:{path}").decode("utf-8", "replace")
        task = problem_statement(log)
        if not task:
            stats["rovo-dev refused: no problem statement"] += 1
            continue
        owner, name = inst.repo.split("/")
        tracked = set(tracked_paths(Path(upstream.format(owner=owner, name=name)), inst.base))
        scratch: dict[str, str] = {}
        calls = [to_call(n, a, t, tracked, scratch) for n, a, t in calls_of(log)]
        if not calls:
            stats["rovo-dev refused: no tool call"] += 1
            continue
        traces.append(
            Trace(
                id=f"{FAMILY}/{iid}",
                instance=iid,
                repo=inst.repo,
                commit=inst.base,
                model=MODEL,
                source={"repo": polybench.PB_REPO, "path": path, "commit": polybench.SUBMISSION_COMMIT},
                gold=inst.gold,
                family=FAMILY,
                agent=AGENT,
                language=language_of(inst.gold, "unknown"),
                task="",
                calls=calls,
            )
        )
        tasks[iid] = task
    return traces, tasks
