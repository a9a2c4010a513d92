"""Where gold-hit is lost (a tuning aid, **tune traces only**: the fixed held-out set is refused).

Replays each tune trajectory in-process (the suggester of ``dsh-search serve`` on the real
checkout, without the stdio transport, as ``bench/suggester_traces.py`` does) and follows every
gold file through the stages of each call before the agent's first repository edit:

* ``named`` — a note named it;
* ``after ranking: <reason>`` — the ranking put it among the note's first ``maxTargets``, then
  noise control or the note's confidence held the note back;
* ``cut`` — the ranking kept it below the first ``maxTargets``;
* ``ranking: <reason>`` — it was a target, and the ranking said the note adds nothing
  (``answered``, ``echo``, ``unranked``);
* ``filters`` — a target the shared filters removed (dismissed, the call's own file, read
  recently);
* ``not a target`` — the trigger named targets, not it;
* ``before targets: <reason>`` — a trigger took the call and stopped before naming targets
  (``not-ready``, a dismissed family, silence);
* ``no trigger`` — no trigger took the call.

Each gold file at each call is also ``shown`` (the call's own result showed it: naming it is an
echo), ``again`` (an earlier result showed it) or ``lead`` (no result had), and **findable** when
the session's evidence at that call gives it support (``ranking.Scorer.calls_support`` > 0: it
defines a searched name, lies on a failing run's own code path, is named like a searched word, or
lies beside an opened file). A trace counts once, under the furthest stage any of its gold files
reached (a lead before an ``again`` before a ``shown`` at the same stage).

    python bench/suggester_goldhit.py --cache /work/corpus-cache [--only ID,REPO,FAMILY] [--out rows.jsonl]
    python bench/suggester_goldhit.py --summarise rows.jsonl [rows2.jsonl …]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TRAJ = ROOT / "corpus" / "trajectories"

#: The stages in order of progress (a lower index came closer to a note naming the file).
STAGES = ("named", "after ranking", "cut", "ranking", "filters", "not a target", "before targets", "no trigger")
#: Which of a call's gold files counts first at the same stage.
STATUSES = ("lead", "again", "shown")


@dataclass
class Call:
    """What one call before the first repository edit did with its gold files."""

    index: int
    trigger: str | None = None
    decision: str = "Silent"
    reason: str | None = None
    targets: list[str] | None = None  # the trigger's targets (before the filters)
    fresh: list[str] | None = None  # what the ranking was given
    chosen: list[str] | str | None = None  # its order, or why the note adds nothing
    named: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)  # gold files this call's result showed
    seen: list[str] = field(default_factory=list)  # gold files an earlier result showed
    support: dict[str, float] = field(default_factory=dict)  # gold file -> the calls' support


def stage_of(call: Call, gold: str, max_targets: int = 5) -> str:
    """The furthest stage ``gold`` reached at ``call`` (module docstring)."""
    if gold in call.named:
        return "named"
    chosen = call.chosen
    if isinstance(chosen, list) and gold in chosen:
        if gold in chosen[:max_targets]:
            return f"after ranking: {call.reason or call.decision}"
        return "cut"
    if isinstance(chosen, str) and call.fresh is not None and gold in call.fresh:
        return f"ranking: {chosen}"
    if call.targets is not None and gold in call.targets:
        return "filters"
    if call.targets is not None:
        return "not a target"
    if call.trigger is not None:
        return f"before targets: {call.reason or call.decision}"
    return "no trigger"


def status_of(call: Call, gold: str) -> str:
    """``shown`` by this call, ``again`` (an earlier result showed it) or ``lead``."""
    if gold in call.shown:
        return "shown"
    return "again" if gold in call.seen else "lead"


def _rank(stage: str, status: str) -> tuple[int, int]:
    return STAGES.index(stage.split(":", 1)[0]), STATUSES.index(status)


def trace_loss(calls: Sequence[Call], gold: Iterable[str], max_targets: int = 5) -> tuple[str, str, bool]:
    """The trace's furthest ``(stage, status)`` over its calls and gold files, and, for a trace
    no note hit, whether a gold file was findable (had support) at a call where no result showed
    it; ``("no call", "lead", False)`` for a trace with no call before its first repository
    edit."""
    best: tuple[tuple[int, int], str, str] | None = None
    findable = False
    for call in calls:
        for g in sorted(gold):
            stage, status = stage_of(call, g, max_targets), status_of(call, g)
            if stage != "named" and status != "shown" and call.support.get(g, 0.0) > 0:
                findable = True
            key = _rank(stage, status)
            if best is None or key < best[0]:
                best = (key, stage, status)
    if best is None:
        return "no call", "lead", False
    return best[1], best[2], findable and best[1] != "named"


def summarise(traces: Iterable[dict[str, Any]], max_targets: int = 5) -> str:
    """The table of traces per furthest stage and status (and family), with the findable ones."""
    rows: Counter[tuple[str, str]] = Counter()
    found: Counter[tuple[str, str]] = Counter()
    families: Counter[tuple[str, str]] = Counter()
    n = 0
    for t in traces:
        n += 1
        calls = [Call(**c) for c in t["calls"]]
        stage, status, findable = trace_loss(calls, t["gold"], max_targets)
        rows[(stage, status)] += 1
        found[(stage, status)] += findable
        families[(t["family"], "hit" if stage == "named" else "lost")] += 1
    out = [f"traces {n}", "| furthest stage | gold status | traces | findable |", "| --- | --- | ---: | ---: |"]
    for (stage, status), k in sorted(rows.items(), key=lambda kv: (_order(kv[0][0]), kv[0][0], _status(kv[0][1]))):
        out.append(f"| {stage} | {status} | {k} | {found[(stage, status)]} |")
    ordering = sum(k for (stage, _), k in rows.items() if stage in ("cut", "ranking: unranked"))
    out.append(f"a better order of the targets alone could add at most {ordering} of {n} traces (cut, unranked)")
    out.append("")
    out.append("| family | hit | lost |")
    out.append("| --- | ---: | ---: |")
    for fam in sorted({f for f, _ in families}):
        out.append(f"| {fam} | {families[(fam, 'hit')]} | {families[(fam, 'lost')]} |")
    return "\n".join(out)


def _status(status: str) -> int:
    return STATUSES.index(status) if status in STATUSES else len(STATUSES)


def _order(stage: str) -> int:
    head = stage.split(":", 1)[0]
    return STAGES.index(head) if head in STAGES else len(STAGES)


# ---------------------------------------------------------------------------- the replay


class Recorder:
    """Follows one call through the pipeline's stages (wraps the pipeline's stage functions for
    the replay's process; :meth:`close` puts them back)."""

    def __init__(self) -> None:
        from dsh_sidecar.suggester import filters, pipeline, ranking

        self.now: dict[str, Any] = {}
        self._saved = [
            (pipeline, "decide", pipeline.decide),
            (pipeline, "_answer", pipeline._answer),
            (filters, "apply", filters.apply),
            (ranking, "choose", ranking.choose),
        ]
        now = self.now
        decide, answer, apply, choose = (s[2] for s in self._saved)

        def _decide(q: Any, ctx: Any) -> Any:
            now["q"], now["ctx"] = q, ctx
            d = decide(q, ctx)
            now["decision"] = d
            return d

        def _answer(trigger: Any, hit: Any, q: Any, ctx: Any) -> Any:
            now["trigger"] = trigger.name
            return answer(trigger, hit, q, ctx)

        def _apply(trigger: Any, hit: Any, targets: Any, q: Any, ctx: Any) -> Any:
            now["targets"] = [t.path for t in targets]
            return apply(trigger, hit, targets, q, ctx)

        def _choose(targets: Any, q: Any, intent: str, ev: Any, graph: Any, scorers: Any = None) -> Any:
            now["fresh"] = [t.path for t in targets]
            r = choose(targets, q, intent, ev, graph, scorers)
            now["chosen"] = [t.path for t in r] if isinstance(r, list) else r
            return r

        pipeline.decide, pipeline._answer = _decide, _answer
        filters.apply, ranking.choose = _apply, _choose

    def close(self) -> None:
        for module, name, fn in self._saved:
            setattr(module, name, fn)

    def call(self, index: int, named: list[str], gold: set[str], shown: set[str], seen: set[str]) -> Call:
        """The record of the call just made."""
        from dsh_sidecar.suggester.ranking import Scorer

        now = self.now
        d = now.get("decision")
        q, ctx = now.get("q"), now.get("ctx")
        support: dict[str, float] = {}
        if q is not None and ctx is not None and ctx.symbols is not None:
            scorer = Scorer(q, ctx.state.evidence, ctx.symbols)
            support = {g: scorer.calls_support(g) for g in sorted(gold)}
        return Call(
            index=index,
            trigger=now.get("trigger"),
            decision=type(d).__name__ if d is not None else "Silent",
            reason=getattr(d, "reason", None),
            targets=now.get("targets"),
            fresh=now.get("fresh"),
            chosen=now.get("chosen"),
            named=named,
            shown=sorted(shown & gold),
            seen=sorted(seen & gold),
            support=support,
        )


def replay(t: Any, ws: Path, rec: Recorder, wait_s: float) -> list[Call]:
    """The calls of trajectory ``t`` before its first repository edit, replayed on ``ws``."""
    from dsh_protocol import PostExecuteParams
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.evaluation import FileIndex, workspace_files
    from dsh_sidecar.evaluation.trajectories import shown_by
    from dsh_sidecar.sidecar import Sidecar

    _listed, shown, _opens = shown_by(t, FileIndex(workspace_files(ws)))
    seen: set[str] = set()
    calls: list[Call] = []
    with tempfile.TemporaryDirectory(prefix="dsh-goldhit-") as home:
        env = {**os.environ, "DSH_HOME": home}
        sc = Sidecar(
            parse_config({"suggester": {"enabled": True}}), ws, env, log_sink=lambda _: None, echo_stderr=False
        )
        try:
            if not sc.wait_for_graph(wait_s):
                raise RuntimeError(f"the workspace graph was not ready within {wait_s:.0f} s")
            deadline = time.monotonic() + wait_s
            while sc.projection_pending() and time.monotonic() < deadline:
                time.sleep(0.2)
            for i, c in enumerate(t.calls[: t.limit]):
                rec.now.clear()
                res = sc.post_execute(PostExecuteParams.model_validate(c["params"]))
                named = [p for n in res.additional_contexts for p in n.source.targets]
                calls.append(rec.call(i, named, set(t.gold), shown[i], seen))
                seen |= shown[i]
        finally:
            sc.shutdown()
    return calls


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", type=Path, default=os.environ.get("DSH_CORPUS_CACHE"))
    p.add_argument("--only", default=None, help="trace ids, repositories or agent families")
    p.add_argument("--out", type=Path, default=None, help="append each trace's calls (JSON lines)")
    p.add_argument("--sample", type=int, default=None, help="replay this many traces, drawn with --seed")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--wait", type=float, default=900.0, help="seconds to wait for a workspace's index")
    p.add_argument("--summarise", nargs="*", type=Path, default=None, help="summarise kept JSON lines")
    a = p.parse_args(argv)
    if a.summarise is not None:
        kept = [json.loads(line) for f in a.summarise for line in f.read_text().splitlines() if line.strip()]
        print(summarise(kept))
        return 0
    from dsh_sidecar.evaluation import checkout_dir, read_trajectories

    if a.cache is None:
        p.error("--cache (or DSH_CORPUS_CACHE) is needed to replay")
    if a.sample is not None and a.sample < 1:
        p.error("--sample takes a number of traces, at least 1")
    only = set(a.only.split(",")) if a.only else None
    rec = Recorder()
    done: list[dict[str, Any]] = []
    traces = sorted(read_trajectories(TRAJ), key=lambda t: t.id)
    if a.sample is not None:  # a seeded draw: the whole tune split takes hours on a loaded machine
        random.Random(a.seed).shuffle(traces)
        traces = [t for t in traces if not t.heldout][: a.sample]
    try:
        for t in traces:
            if only is not None and not {t.id, t.row["repo"], t.family} & only:
                continue
            if t.heldout:  # never looked at while tuning
                if only is not None:
                    sys.stderr.write(f"{t.id}: held out, not replayed\n")
                continue
            ws = checkout_dir(a.cache, t.row["repo"], t.row["commit"])
            if not ws.is_dir():  # replaying on no checkout would read as silence everywhere
                sys.stderr.write(f"{t.id}: not replayed (no checkout {ws})\n")
                continue
            try:
                calls = replay(t, ws, rec, a.wait)
            except (OSError, RuntimeError) as exc:  # a missing checkout, an index not ready in time
                sys.stderr.write(f"{t.id}: not replayed ({exc})\n")
                continue
            kept = {"id": t.id, "family": t.family, "gold": sorted(t.gold), "calls": [asdict(c) for c in calls]}
            done.append(kept)
            if a.out is not None:
                with a.out.open("a") as f:
                    f.write(json.dumps(kept) + "\n")
            stage, status, findable = trace_loss(calls, t.gold)
            sys.stderr.write(f"{t.id}: {stage} ({status}{', findable' if findable else ''})\n")
    finally:
        rec.close()
    print(f"load {os.getloadavg()[0]:.1f}")
    print(summarise(done))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
