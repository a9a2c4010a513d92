"""Leave-one-agent-family-out check of the tool-role tables (``suggester/parse/roles.py``).

Usage: ``python bench/tool_roles.py [--examples N]``.

Every tool call of the corpus — the labelled calls (``corpus/intents/*/trace.jsonl``, grouped by
the form they are written in: Claude Code, Codex, plain ``bash``, SWE-agent, OpenHands) and the
recorded runs (``corpus/trajectories``: mini-swe-agent, Rovo Dev, iSWE, Codex) — is parsed twice
per held-out family F: with the full tables, and with the tables **without the entries only F's
harness uses** (an entry is kept when it names another harness of the corpus, a harness the
corpus has no runs of — Cline, Cursor, Gemini CLI, Copilot, Windsurf, Zed, OpenCode — or
``generic``). Printed per family: calls, how many the full tables read as a search, a read, a
write, a run or nothing, how many the fold's tables read differently (the calls F loses when
nothing of F was looked at), and the entries F needed that the others did not give it, with the
calls that used each. Codex's MCP server (``pando``) counts as Codex.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from dsh_sidecar.suggester.parse import parse_call, roles  # noqa: E402

#: The labelled calls' tool forms → family.
LABELLED_FAMILY = {
    "Grep": "claude-code",
    "Glob": "claude-code",
    "Read": "claude-code",
    "Bash": "claude-code",
    "Edit": "claude-code",
    "Write": "claude-code",
    "shell": "codex",
    "bash": "bash",
    "search_dir": "swe-agent",
    "find_file": "swe-agent",
    "search_file": "swe-agent",
    "open": "swe-agent",
    "execute_bash": "openhands",
    "str_replace_editor": "openhands",
}
#: A table tag → the corpus family it stands for.
TAG_FAMILY = {"pando": "codex"}


def calls() -> list[tuple[str, str, str, dict[str, Any], str | None]]:
    """``(family, source, tool, input, result)`` of every call of the corpus."""
    out = []
    for trace in sorted((ROOT / "corpus" / "intents").glob("*/trace.jsonl")):
        for raw in trace.read_text("utf-8").splitlines():
            p = json.loads(raw)["params"]
            name = p["tool"]["name"]
            out.append((LABELLED_FAMILY.get(name, name), "labelled", name, p["tool"]["input"], _result(p)))
    index = {}
    for raw in (ROOT / "corpus" / "trajectories" / "index.jsonl").read_text("utf-8").splitlines():
        row = json.loads(raw)
        index[row["id"]] = row["family"]
    for tid, family in index.items():
        for raw in (ROOT / "corpus" / "trajectories" / f"{tid}.jsonl").read_text("utf-8").splitlines():
            p = json.loads(raw)["params"]
            out.append((family, "trajectories", p["tool"]["name"], p["tool"]["input"], _result(p)))
    return out


def _result(p: dict[str, Any]) -> str | None:
    r = p.get("result") or {}
    return r.get("text") if isinstance(r, dict) else None


def reading(name: str, inp: dict[str, Any], result: str | None) -> tuple[Any, ...]:
    q = parse_call(name, inp, result)
    kind = q.tool if q.search or q.tool in ("write", "other") else "other"
    return (kind, tuple(q.patterns), tuple(q.name_patterns), tuple(q.scope), tuple(q.reads))


def kind_of(r: tuple[Any, ...]) -> str:
    return {"grep": "search", "glob": "search", "bash": "search", "read": "read"}.get(r[0], r[0])


def families_of(tags: str) -> set[str]:
    return {TAG_FAMILY.get(t, t) for t in tags.split()}


TABLES = ("VERB_WORDS", "KEY_WORDS", "SYMBOL_WORDS")
#: The ``used`` entry kind → its table.
KINDS = {"verb": "VERB_WORDS", "key": "KEY_WORDS", "symbol": "SYMBOL_WORDS"}


def fold_tables(held: str) -> dict[str, dict[str, Any]]:
    """The tables without the entries only ``held`` uses."""
    return {a: {k: v for k, v in getattr(roles, a).items() if families_of(v[1]) - {held}} for a in TABLES}


def needed(held: str, used: Counter[str]) -> list[tuple[str, int]]:
    """The table entries ``held``'s calls used that only ``held`` names."""
    out = []
    for entry, n in used.items():
        kind, _, word = entry.partition(":")
        table = getattr(roles, KINDS[kind]) if kind in KINDS else None
        if table is not None and word in table and not families_of(table[word][1]) - {held}:
            out.append((entry, n))
    return sorted(out, key=lambda e: -e[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=3, help="calls shown per family that the fold reads differently")
    args = ap.parse_args()
    every = calls()
    families = sorted({f for f, *_ in every})
    full = {i: reading(name, inp, res) for i, (_, _, name, inp, res) in enumerate(every)}
    saved = {a: dict(getattr(roles, a)) for a in TABLES}
    print(
        "| held-out family | calls | search | read | write | run/other | read differently without its own entries "
        "| of its searches | entries only it needed (calls) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for fam in families:
        mine = [i for i, (f, *_) in enumerate(every) if f == fam]
        kinds = Counter(kind_of(full[i]) for i in mine)
        used: Counter[str] = Counter()
        for i in mine:
            _, _, name, inp, res = every[i]
            if isinstance(inp, dict):
                used.update(set(roles.read_tool(name, inp, res).used))
        tables = fold_tables(fam)
        for attr, table in tables.items():
            setattr(roles, attr, table)
        try:
            changed = [i for i in mine if reading(*every[i][2:]) != full[i]]
        finally:
            for attr, table in saved.items():
                setattr(roles, attr, table)
        lost_search = sum(1 for i in changed if kind_of(full[i]) == "search")
        own = ", ".join(f"`{e}` ({n})" for e, n in needed(fam, used)) or "none"
        print(
            f"| {fam} | {len(mine)} | {kinds['search']} | {kinds['read']} | {kinds['write']} | "
            f"{kinds['other']} | {len(changed)} | {lost_search} | {own} |"
        )
        for i in changed[: args.examples]:
            for attr, table in tables.items():
                setattr(roles, attr, table)
            try:
                fold = reading(*every[i][2:])
            finally:
                for attr, table in saved.items():
                    setattr(roles, attr, table)
            print(
                f"|   e.g. `{every[i][2]}` {json.dumps(every[i][3])[:80]} | | | | | | {fold[0]} | | was {full[i][0]} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
