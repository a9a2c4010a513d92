"""The iSWE converter (family ``iswe``): IBM's iSWE-Agent runs on the Java instances of
SWE-PolyBench Verified (``amazon-science/SWE-PolyBench``, branch ``submission`` at
:data:`polybench.SUBMISSION_COMMIT`, folder :data:`SOURCE_DIR`, one YAML file per instance) →
:class:`core.Trace`.

The run has two agents in sequence. The *localization* agent navigates by symbol with its own
tools — ``get_class_info``, ``get_method_info``, ``get_symbol_info``, ``get_call_chain``,
``get_function_callers``, ``get_inheritance_hierarchy`` (search-class: they find where a name is
defined or used) and ``get_file_info`` (read-class: a file's outline) — written as
``<execute_tool>name(arg="…")`` in its reply; the next message is the observation. The *editing*
agent answers with search/replace blocks (``### path`` / ``<<<<<<< SEARCH`` / ``=======`` /
``>>>>>>> REPLACE``); each reply is one ``search_replace`` call, which writes its files when
the next message reports success. The same agent's Python run (``20260422_iswe_agent``)
records tool names without their arguments and is not used.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from corpus.trajectories import polybench
from corpus.trajectories.core import Call, Trace, git, language_of, rel_path, tracked_paths

FAMILY = "iswe"
AGENT = "iSWE-Agent (IBM, PDL; SWE-PolyBench Verified Java run 2026-02-01)"
SOURCE_DIR = "evaluation/PBVerified/20260201_iswe_agent/trajs"
WORKDIR = "/testbed"
READ_TOOLS = frozenset({"get_file_info"})
SEARCH_TOOLS = frozenset(
    {
        "get_class_info",
        "get_method_info",
        "get_symbol_info",
        "get_call_chain",
        "get_function_callers",
        "get_inheritance_hierarchy",
    }
)
_CALL = re.compile(r"<execute_tool>\s*(.*?)\s*(?:</execute_tool>|$)", re.S)
_EDIT = re.compile(
    r"(?:^|\n)(?:###\s*)?([^\s<>=#][^\n]*?)\s*\n<<<<<<< SEARCH\n(.*?)\n?=======\n(.*?)\n?>>>>>>> REPLACE", re.S
)


def parse_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """``name(k="v", …)`` → (name, {k: v}); positional arguments as ``arg0``, ``arg1``…;
    ``None`` when the text is not one call of literal arguments."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    args: dict[str, Any] = {}
    try:
        for k, a in enumerate(node.args):
            args[f"arg{k}"] = ast.literal_eval(a)
        for kw in node.keywords:
            if kw.arg is None:
                return None
            args[kw.arg] = ast.literal_eval(kw.value)
    except ValueError:
        return None
    return node.func.id, args


def observation(message: dict[str, Any] | None) -> str:
    """A tool result: the message after the call without its ``--- Observation ---`` banner."""
    text = str((message or {}).get("content") or "")
    return re.sub(r"^\s*--- Observation ---\n?", "", text)


def issue_text(run: dict[str, Any]) -> str | None:
    """The issue the localization agent was given (between ``--- BEGIN ISSUE ---`` and
    ``--- END ISSUE ---``), or ``None``."""
    for m in run["localization"]["trajectory"]:
        if m.get("role") == "user":
            found = re.search(r"--- BEGIN ISSUE ---\n(.*?)\n--- END ISSUE ---", str(m.get("content") or ""), re.S)
            if found:
                return found.group(1).strip()
    return None


def model_of(run: dict[str, Any]) -> str:
    """The localization agent's model (its configuration names it)."""
    config = run["localization"].get("localization_instance_config") or {}
    if isinstance(config, dict):
        return str(((config.get("model") or {}).get("name")) or "unknown")
    m = re.search(r"'model': \{'name': '([^']+)'", str(config))
    return m.group(1) if m else "unknown"


def calls_of(run: dict[str, Any], tracked: set[str]) -> list[Call]:
    """The localization agent's tool calls, then the editing agent's edits (module docstring)."""
    out: list[Call] = []
    msgs = run["localization"]["trajectory"]
    for k, m in enumerate(msgs):
        if m.get("role") != "assistant":
            continue
        for raw in _CALL.findall(str(m.get("content") or "")):
            parsed = parse_call(raw)
            name, args = parsed if parsed else ("execute_tool", {"raw": raw})
            text = observation(msgs[k + 1] if k + 1 < len(msgs) else None)
            tool = {"name": name, "input": args}
            if name in READ_TOOLS:
                rel = rel_path(str(args.get("file_path") or ""), WORKDIR)
                views = [rel] if rel and rel in tracked else []
                out.append(Call("read", tool, False, text, views, []))
            elif name in SEARCH_TOOLS:
                out.append(Call("search", tool, False, text))
            else:
                out.append(Call("other", tool, False, text))
    msgs = (run.get("editing") or {}).get("trajectory") or []
    for k, m in enumerate(msgs):
        if m.get("role") != "assistant":
            continue
        edits = [
            {"file_path": path.strip(), "search": search, "replace": replace}
            for path, search, replace in _EDIT.findall(str(m.get("content") or ""))
        ]
        if not edits:
            continue
        reply = str((msgs[k + 1] if k + 1 < len(msgs) else {}).get("content") or "")
        applied = reply.lstrip().startswith("Success")
        paths = [p for p in (rel_path(e["file_path"], WORKDIR) for e in edits) if p]
        writes = list(dict.fromkeys(paths)) if applied else []
        tool = {"name": "search_replace", "input": {"edits": edits}}
        out.append(Call("edit", tool, not applied, reply, [p for p in writes if p in tracked], [], writes, []))
    return out


def convert(
    pb: Path, upstream: str, insts: dict[str, polybench.Instance], stats: Counter[str]
) -> tuple[list[Trace], dict[str, str]]:
    """The runs of the checked instances (in instance order) and their issue texts."""
    listing = set(git(pb, "ls-tree", "--name-only", polybench.SUBMISSION_COMMIT, SOURCE_DIR + "/").decode().split())
    traces: list[Trace] = []
    tasks: dict[str, str] = {}
    for iid, inst in insts.items():
        path = f"{SOURCE_DIR}/{iid}.yaml"
        if path not in listing:
            continue
        run = yaml.safe_load(git(pb, "show", f"{polybench.SUBMISSION_COMMIT}:{path}"))
        task = issue_text(run)
        if not task:
            stats["iswe refused: no issue text"] += 1
            continue
        owner, name = inst.repo.split("/")
        tracked = set(tracked_paths(Path(upstream.format(owner=owner, name=name)), inst.base))
        calls = calls_of(run, tracked)
        if not calls:
            stats["iswe refused: no tool call"] += 1
            continue
        traces.append(
            Trace(
                id=f"{FAMILY}/{iid}",
                instance=iid,
                repo=inst.repo,
                commit=inst.base,
                model=model_of(run),
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
