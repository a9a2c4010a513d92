"""The labelled-call figures cut the ways the corpus docs report them (analysis tool, not run by CI).

    python corpus/intents/report.py --cache CACHE [--json OUT] [--calls CALLS.jsonl]
    python corpus/intents/report.py --materialized [--json OUT] [--calls CALLS.jsonl]

Replays every repository of ``manifest.yaml`` through a spawned ``dsh-search serve`` (the same
``dsh_sidecar.evaluation.run_intents`` as ``dsh-search replay --corpus``), on the real checkouts
in CACHE (``corpus/checkout.py``) or on stub workspaces (``corpus/materialize.py``), and prints
Markdown tables: per repository with the pooled figures of the *other* repositories beside it
(leave-one-repository-out), per split, per ecosystem (and ecosystem × split), per intent (all,
tune, held-out) — each three times: **as labelled**, **echo-aware** (the labels read with the
help-not-agreement rule against the call itself, ``dsh_sidecar.evaluation.labels``), then
**session-aware** (against every earlier call of the session too, with Owner questions answered
by ownership files: the reading the issue's bar is judged by). ``--calls`` writes one JSON line
per call with its expectation, the notes answered and a failure class, as labelled (``expect``,
``class``), echo-aware (``expectEchoAware``, ``classEchoAware``) and session-aware
(``expectSessionAware``, ``classSessionAware``):

- ``ok`` — a note of the expected intent naming an expected target;
- ``wrong-intent`` — a note naming an expected target under another intent;
- ``wrong-file`` — a note of the expected intent naming none of the expected targets;
- ``wrong-both`` — neither;
- ``spoke`` — a note where none was expected;
- ``silent`` — no note where one was expected;
- ``echo`` (added to a note's class) — every file the note names is among the paths the
  triggering call's own result listed.

Each call's line also carries the ledger lines its call produced (``ledger``) and the stage
that decided it (``stage``: ``suggest``, ``suppressed <reason>``, ``abstained <reason>``, ``no
intent``); the tables end with the echo-aware misses of each split counted by that stage,
overall, per intent and per ecosystem, under the echo-aware and the session-aware readings.

A run's temporary files (stub workspaces, its sidecars' index cache) are in one scratch folder
removed however it ends; the sidecars get their own ``DSH_CACHE_DIR`` there unless one is set
(``bench/_scratch.py``: the shared cache's rows are keyed by the rules' version).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from dsh_sidecar.evaluation import (  # noqa: E402
    checkout_dir,
    figures,
    intent_figures,
    pooled,
    read_manifest,
    run_intents,
)

from bench._scratch import own_cache, scratch  # noqa: E402
from corpus.materialize import materialize  # noqa: E402

CORPUS = HERE.parent
PATH_RX = re.compile(r"^(?:Found \d+ files?$)?([^\s:()]+\.[A-Za-z0-9]+|[^\s:()]+/)(?::\d+)?(?: \(\d+ matches\))?$")


def result_paths(text: str) -> set[str]:
    """The paths a result text lists (``path``, ``path:line``, ``path (N matches)``)."""
    out = set()
    for ln in text.splitlines():
        m = PATH_RX.match(ln.strip())
        if m and m.group(1):
            out.add(m.group(1).removeprefix("./"))
    return out


def classify(expect: dict[str, Any] | None, notes: list[dict[str, Any]], listed: set[str]) -> list[str]:
    if not notes:
        return ["silent"] if expect else []
    out = []
    for n in notes:
        src = n.get("source", {})
        targets = set(src.get("targets", []))
        if expect is None:
            cls = "spoke"
        else:
            hit = bool(targets & set(expect["targets"]))
            same = src.get("intent") == expect["intent"]
            cls = "ok" if hit and same else "wrong-intent" if hit else "wrong-file" if same else "wrong-both"
        if targets and targets <= listed:
            cls += "+echo"
        out.append(cls)
    return out


#: A ledger line's kind and reason (``suppressed echo Version`` → ``suppressed echo``).
LEDGER_STAGE = re.compile(r"^(suggest|suppressed \S+|abstained \S+)")


def stage(ledger: list[str]) -> str:
    """Where the pipeline decided a call, by the ledger lines it produced: ``suggest``,
    ``suppressed <reason>``, ``abstained <reason>``, or ``no intent`` (no line: no intent
    crossed its gate, or the call was no search)."""
    for line in ledger:
        m = LEDGER_STAGE.match(line)
        if m:
            return m.group(1)
    return "no intent"


def stage_tables(runs: list[Any], trace_of: Any = lambda r: r.help_trace) -> list[str]:
    """Per split, under one reading (``trace_of(run)``: its relabelled trace): the calls
    expecting a note that got no correct one, counted by the stage that decided them
    (:func:`stage`; a ``suggest`` there named the wrong files or intent) — overall, per intent
    and per ecosystem."""
    out: list[str] = []
    for split in ("tune", "heldout"):
        rows: dict[tuple[str, str], int] = {}
        for r in runs:
            if r.repo.split != split:
                continue
            for line, notes, ledger in zip(trace_of(r), r.notes, r.ledgers, strict=True):
                expect = expect_of(line)
                if expect is None or "ok" in {c.split("+")[0] for c in classify(expect, notes, set())}:
                    continue
                where = stage(ledger)
                for key in (("all", where), (f"intent {expect['intent']}", where), (f"{r.repo.ecosystem}", where)):
                    rows[key] = rows.get(key, 0) + 1
        stages = sorted({w for _, w in rows})
        out.append(f"| missed calls ({split}), by stage | " + " | ".join(stages) + " |")
        out.append("| --- |" + " ---: |" * len(stages))
        for group in sorted({g for g, _ in rows}, key=lambda g: (g != "all", not g.startswith("intent"), g)):
            out.append(f"| {group} | " + " | ".join(str(rows.get((group, w), 0)) for w in stages) + " |")
        out.append("")
    return out


def expect_of(line: Any) -> dict[str, Any] | None:
    """A trace line's expectation as the trace file writes it."""
    return None if line.intent is None else {"intent": line.intent, "targets": list(line.targets)}


def row(name: str, f: dict[str, Any]) -> str:
    return (
        f"| {name} | {f['calls']} | {f['notes']} | {f['correct']} | {f['precision']:.2f} | "
        f"{f['expected_targets']} | {f['found_targets']} | {f['recall']:.2f} |"
    )


HEAD = "| {0} | calls | notes | correct | precision | expected targets | found | recall |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"


def intent_table(score: Any, title: str) -> str:
    lines = [
        f"| intent ({title}) | notes | precision | expected targets | recall |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for intent, f in intent_figures(score).items():
        if intent == "None":
            continue
        lines.append(f"| {intent} | {f['notes']} | {f['precision']:.2f} | {f['expected']} | {f['recall']:.2f} |")
    return "\n".join(lines)


def tables(runs: list[Any], pick: Any, groups: list[str]) -> list[str]:
    """The Markdown tables of one reading (``pick(run)``: its :class:`Score`)."""
    out: list[str] = []
    out.append(
        "| repository (split, ecosystem) | calls | notes | correct | precision | expected targets | found | recall "
        "| the others pooled: precision | recall |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    for r in runs:
        others = pooled(pick(x) for x in runs if x is not r)
        f = figures(pick(r))
        out.append(
            row(f"{r.repo.repo} ({r.repo.split}, {r.repo.ecosystem})", f)
            + f" {others.precision:.2f} | {others.recall:.2f} |"
        )
    out.append("")
    out.append(HEAD.format("split"))
    for split in ("tune", "heldout"):
        out.append(row(split, figures(pooled(pick(x) for x in runs if x.repo.split == split))))
    out.append(row("all", figures(pooled(pick(x) for x in runs))))
    for g in groups:
        name, _, dirs = g.partition("=")
        sel = [x for x in runs if x.repo.dir in dirs.split(",")]
        out.append(row(f"{name} ({len(sel)})", figures(pooled(pick(x) for x in sel))))
        for split in ("tune", "heldout"):
            sub = [x for x in sel if x.repo.split == split]
            out.append(row(f"{name} {split} ({len(sub)})", figures(pooled(pick(x) for x in sub))))
    out.append("")
    out.append(HEAD.format("ecosystem (repositories)"))
    ecos = sorted({x.repo.ecosystem for x in runs})
    for e in ecos:
        sel = [x for x in runs if x.repo.ecosystem == e]
        out.append(row(f"{e} ({len(sel)})", figures(pooled(pick(x) for x in sel))))
        for split in ("tune", "heldout"):
            sub = [x for x in sel if x.repo.split == split]
            if sub and len(sub) != len(sel):
                out.append(row(f"{e} {split} ({len(sub)})", figures(pooled(pick(x) for x in sub))))
    out.append("")
    for title, sel in (
        ("all", runs),
        ("tune", [x for x in runs if x.repo.split == "tune"]),
        ("heldout", [x for x in runs if x.repo.split == "heldout"]),
    ):
        out.append(intent_table(pooled(pick(x) for x in sel), title))
        out.append("")
    for g in groups:
        name, _, dirs = g.partition("=")
        sel = [x for x in runs if x.repo.dir in dirs.split(",")]
        out.append(intent_table(pooled(pick(x) for x in sel), name))
        out.append("")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", type=Path)
    p.add_argument("--materialized", action="store_true")
    p.add_argument("--json", type=Path)
    p.add_argument("--calls", type=Path)
    p.add_argument("--group", action="append", default=[], help="NAME=dir,dir: a pooled row of these repositories")
    args = p.parse_args(argv)
    if not args.materialized and not args.cache:
        p.error("--cache or --materialized")
    repos = read_manifest(CORPUS)
    # one scratch folder, removed however the run ends, with the run's own index cache unless
    # DSH_CACHE_DIR names one (bench/_scratch.py)
    with scratch("corpus-report-") as tmp, own_cache(tmp / "cache"):

        def workspace(r: Any) -> Path:
            if args.materialized:
                dest = tmp / r.dir
                materialize(r.data, dest)
                return dest
            return checkout_dir(args.cache, r.repo, r.commit)

        runs = run_intents(repos, workspace)
    by_dir = {r.repo.dir: r for r in runs}
    out: list[str] = []
    for title, pick in (
        ("as labelled", lambda x: x.score),
        ("echo-aware (docs/corpus.md)", lambda x: x.echo_aware),
        ("session-aware: the reading the bar is judged by (docs/corpus.md)", lambda x: x.session_aware),
    ):
        out.append(f"### {title}")
        out.append("")
        out += tables(runs, pick, args.group)
    out += ["### echo-aware: the calls missed, by the stage that decided them", ""]
    out += stage_tables(runs)
    out += ["### session-aware: the calls missed, by the stage that decided them", ""]
    out += stage_tables(runs, lambda r: r.session_trace)
    print("\n".join(out))
    if args.json:
        rep = {
            "repos": {
                d: {"repo": r.repo.repo, "split": r.repo.split, "ecosystem": r.repo.ecosystem, **figures(r.score)}
                for d, r in by_dir.items()
            },
            "echoAware": {
                d: {"repo": r.repo.repo, "split": r.repo.split, "ecosystem": r.repo.ecosystem, **figures(r.echo_aware)}
                for d, r in by_dir.items()
            },
            "sessionAware": {
                d: {
                    "repo": r.repo.repo,
                    "split": r.repo.split,
                    "ecosystem": r.repo.ecosystem,
                    **figures(r.session_aware),
                }
                for d, r in by_dir.items()
            },
            "ledger": {d: r.ledger for d, r in by_dir.items()},
        }
        args.json.write_text(json.dumps(rep, indent=1, sort_keys=True) + "\n", "utf-8")
    if args.calls:
        with args.calls.open("w", encoding="utf-8") as fh:
            for r in runs:
                lines = [ln for ln in (r.repo.data / "trace.jsonl").read_text("utf-8").splitlines() if ln.strip()]
                for raw, line, sess, notes, ledger in zip(
                    lines, r.help_trace, r.session_trace, r.notes, r.ledgers, strict=True
                ):
                    obj = json.loads(raw)
                    res = obj["params"].get("result") or {}
                    listed = result_paths(res.get("text", "")) if not res.get("isError") else set()
                    fh.write(
                        json.dumps(
                            {
                                "repo": r.repo.dir,
                                "split": r.repo.split,
                                "ecosystem": r.repo.ecosystem,
                                "callId": obj["params"].get("callId"),
                                "tool": obj["params"]["tool"],
                                "result": res.get("text", "")[:400],
                                "expect": obj["expect"],
                                "notes": [
                                    {
                                        "intent": n.get("source", {}).get("intent"),
                                        "targets": n.get("source", {}).get("targets", []),
                                    }
                                    for n in notes
                                ],
                                "class": classify(obj["expect"], notes, listed),
                                "opens": list(line.opens),
                                "expectEchoAware": expect_of(line),
                                "classEchoAware": classify(expect_of(line), notes, listed | set(line.opens)),
                                "expectSessionAware": expect_of(sess),
                                "classSessionAware": classify(expect_of(sess), notes, listed | set(line.opens)),
                                "ledger": ledger,
                                "stage": stage(ledger),
                            },
                            ensure_ascii=False,
                        )
                        + "\n"
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
