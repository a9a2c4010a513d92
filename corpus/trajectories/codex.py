"""The Codex converter (family ``codex``): pando's runs of the Codex CLI (``codex exec --json``
event streams, model gpt-5.2-codex) on the TypeScript instances of SWE-PolyBench Verified
(``amazon-science/SWE-PolyBench`` commit :data:`SOURCE_COMMIT`, a submission not merged into the
``submission`` branch, folder :data:`SOURCE_DIR`) → :class:`core.Trace`.

Each completed item of the stream is one call: ``command_execution`` → ``shell`` with the argv
list Codex ran (``["/bin/bash", "-lc", "<script>"]``, its result the aggregated output, an error
when the exit code is not 0); ``mcp_tool_call`` → ``mcp__<server>__<tool>`` with its arguments
(the pando extension's ``find-nodes`` search-class, ``get-content`` read-class,
``workspace-overview`` search-class); ``file_change`` → ``apply_patch`` with the changed files.
Reasoning and agent messages are no calls. The stream does not hold the prompt: the task text is
the instance's problem statement as the other families' runs were given it. The workspace is
``/testbed``.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from pathlib import Path
from typing import Any

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

FAMILY = "codex"
AGENT = "pando on the Codex CLI (exec --json, 2026-03-12)"
MODEL = "gpt-5.2-codex"
SOURCE_COMMIT = "3c1615cff5b49061950b2726cb44d924b143a572"
SOURCE_DIR = "evaluation/PBVerified/20260312_pando_gpt-5.2-codex/trajs"
WORKDIR = "/testbed"
SEARCH_MCP = frozenset({"find-nodes", "workspace-overview", "search", "find-references"})
READ_MCP = frozenset({"get-content"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})


def script_of(argv: list[str]) -> str:
    """The shell script an argv runs (``bash -lc SCRIPT``), else the argv joined."""
    if len(argv) >= 3 and argv[0].rsplit("/", 1)[-1] in _SHELLS and argv[1] in ("-c", "-lc", "-ic", "-lic"):
        return argv[2]
    return shlex.join(argv)


def mcp_text(result: Any) -> str:
    """The text of an MCP tool result's content blocks, joined by newlines."""
    if not isinstance(result, dict):
        return ""
    return "\n".join(str(c.get("text") or "") for c in result.get("content") or [] if isinstance(c, dict))


def to_call(item: dict[str, Any], tracked: set[str], scratch: dict[str, str]) -> Call | None:
    """One completed stream item as a :class:`core.Call` (``None`` for reasoning and messages)."""
    kind = item.get("type")
    if kind == "command_execution":
        command = str(item.get("command") or "")
        try:
            argv = shlex.split(command)
        except ValueError:
            argv = command.split()
        cls, segs, writes, _ = shell_call(script_of(argv), tracked, scratch, WORKDIR)
        views = opens_of(segs, [], tracked)
        opens = views + [p for p in writes if p in tracked and p not in views]
        tool = {"name": "shell", "input": {"command": argv}}
        err = item.get("exit_code") not in (0, None)
        return Call(cls, tool, err, str(item.get("aggregated_output") or ""), opens, dirs_of(segs), writes, views)
    if kind == "mcp_tool_call":
        name = str(item.get("tool") or "")
        args = item.get("arguments") if isinstance(item.get("arguments"), dict) else {}
        tool = {"name": f"mcp__{item.get('server')}__{name}", "input": args}
        err = bool(item.get("error")) or bool((item.get("result") or {}).get("isError"))
        text = mcp_text(item.get("result")) or str(item.get("error") or "")
        if name in READ_MCP:
            rel = rel_path(str(args.get("target") or args.get("path") or ""), WORKDIR)
            views = [rel] if rel and rel in tracked else []
            return Call("read", tool, err, text, views, [])
        return Call("search" if name in SEARCH_MCP else "other", tool, err, text)
    if kind == "file_change":
        changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
        writes = [p for p in (rel_path(str(c.get("path") or ""), WORKDIR) for c in changes) if p]
        tool = {"name": "apply_patch", "input": {"changes": changes}}
        err = item.get("status") not in ("completed", None)
        return Call("edit", tool, err, "", [p for p in writes if p in tracked], [], [] if err else writes, [])
    return None


def convert(
    pb: Path, upstream: str, insts: dict[str, polybench.Instance], tasks: dict[str, str], stats: Counter[str]
) -> list[Trace]:
    """The runs of the checked instances that have a task text from another family's run."""
    listing = set(git(pb, "ls-tree", "--name-only", SOURCE_COMMIT, SOURCE_DIR + "/").decode().split())
    traces: list[Trace] = []
    for iid, inst in insts.items():
        path = f"{SOURCE_DIR}/{iid}.events.jsonl"
        if path not in listing:
            continue
        if iid not in tasks:
            stats["codex refused: no task text from another run"] += 1
            continue
        owner, name = inst.repo.split("/")
        tracked = set(tracked_paths(Path(upstream.format(owner=owner, name=name)), inst.base))
        scratch: dict[str, str] = {}
        calls: list[Call] = []
        for line in git(pb, "show", f"{SOURCE_COMMIT}:{path}").decode("utf-8", "replace").splitlines():
            event = json.loads(line)
            if event.get("type") != "item.completed":
                continue
            call = to_call(event.get("item") or {}, tracked, scratch)
            if call is not None:
                calls.append(call)
        if not calls:
            stats["codex refused: no tool call"] += 1
            continue
        traces.append(
            Trace(
                id=f"{FAMILY}/{iid}",
                instance=iid,
                repo=inst.repo,
                commit=inst.base,
                model=MODEL,
                source={"repo": polybench.PB_REPO, "path": path, "commit": SOURCE_COMMIT},
                gold=inst.gold,
                family=FAMILY,
                agent=AGENT,
                language=language_of(inst.gold, "unknown"),
                task="",
                calls=calls,
            )
        )
    return traces
