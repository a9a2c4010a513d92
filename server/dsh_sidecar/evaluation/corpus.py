"""The labelled-call corpus (``corpus/intents/``): its manifest, the per-repository replays and
the intent report; :func:`run_corpus` runs both figure sets on real checkouts."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsh_sidecar.evaluation.folds import DEFAULT_OBJECTIVE, fold_report, format_folds
from dsh_sidecar.evaluation.labels import echo_aware, session_aware
from dsh_sidecar.evaluation.trace import (
    GRAPH_WAIT_S,
    Score,
    TraceLine,
    figures,
    format_ledger,
    intent_figures,
    ledger_summary,
    pooled,
    read_trace,
    replay,
    score,
)
from dsh_sidecar.evaluation.trajectories import (
    format_trajectory_report,
    replay_trajectories,
    trajectory_report,
    workspace_files,
)
from dsh_sidecar.evaluation.trajectory_runs import Trajectory, read_trajectories

# ---------------------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class CorpusRepo:
    """One repository of the intent corpus (a row of ``intents/manifest.yaml``)."""

    repo: str
    commit: str
    dir: str
    ecosystem: str
    split: str
    data: Path


def checkout_dir(cache: Path, repo: str, commit: str) -> Path:
    """``<cache>/<owner>__<name>@<commit>``: the corpus cache layout (``corpus/checkout.py``)."""
    owner, _, name = repo.partition("/")
    return cache / f"{owner}__{name}@{commit}"


def read_manifest(corpus: Path) -> list[CorpusRepo]:
    """The repositories of ``<corpus>/intents/manifest.yaml``. Raises ``OSError``/``ValueError``."""
    import yaml

    rows = yaml.safe_load((corpus / "intents" / "manifest.yaml").read_text("utf-8"))["repositories"]
    out = []
    for r in rows:
        if r.get("split") not in ("tune", "heldout"):
            raise ValueError(f"{r.get('repo')}: split must be tune or heldout")
        out.append(
            CorpusRepo(r["repo"], r["commit"], r["dir"], r["ecosystem"], r["split"], corpus / "intents" / r["dir"])
        )
    return out


@dataclass
class IntentRun:
    """The replay of one corpus repository."""

    repo: CorpusRepo
    score: Score
    notes: list[list[dict[str, Any]]]
    ledger: dict[str, int]
    #: the same notes scored against the echo-aware labels (:mod:`.labels`)
    echo_aware: Score | None = None
    #: how many labels the echo-aware reading turned into an expected silence
    relabelled: int = 0
    #: how many labels it narrowed to the expected files their call had not shown
    narrowed: int = 0
    #: the trace read echo-aware, line by line
    help_trace: list[TraceLine] = field(default_factory=list)
    #: the ledger lines each line's call produced (``suggest …``, ``suppressed …``…), line by line
    ledgers: list[list[str]] = field(default_factory=list)
    #: the same notes scored against the session-aware labels (:func:`.labels.session_aware`:
    #: the reading the labelled-call bar is judged by)
    session_aware: Score | None = None
    #: the trace read session-aware, line by line
    session_trace: list[TraceLine] = field(default_factory=list)
    #: how many labels the session-aware reading turned into an expected silence / narrowed
    session_relabelled: int = 0
    session_narrowed: int = 0


def run_intents(
    repos: Sequence[CorpusRepo],
    workspace_of: Callable[[CorpusRepo], Path],
    graph_wait_s: float = GRAPH_WAIT_S,
    suggester: dict[str, Any] | None = None,
) -> list[IntentRun]:
    """Replay each repository's ``trace.jsonl`` on ``workspace_of(repo)`` (a fresh server and
    ``$DSH_HOME`` each; ``suggester``: knobs given as ``initializationOptions.suggester``).
    Raises ``RuntimeError`` (server), ``TraceError``, ``OSError``."""
    runs = []
    for r in repos:
        trace = read_trace((r.data / "trace.jsonl").read_text("utf-8").splitlines())
        ws = workspace_of(r)
        if not ws.is_dir():
            raise OSError(f"no workspace {ws} for {r.repo}@{r.commit[:12]}")
        per_call: list[list[str]] = []
        s, notes, logs = replay(trace, ws, suggester=suggester, graph_wait_s=graph_wait_s, per_call=per_call)
        files = workspace_files(ws)
        help_trace = echo_aware(trace, files)
        relabelled, narrowed = _relabelled(trace, help_trace)
        sess_trace = session_aware(trace, files)
        sess_relabelled, sess_narrowed = _relabelled(trace, sess_trace)
        runs.append(
            IntentRun(
                r,
                s,
                notes,
                ledger_summary(logs),
                score(help_trace, notes),
                relabelled,
                narrowed,
                help_trace,
                per_call,
                score(sess_trace, notes),
                sess_trace,
                sess_relabelled,
                sess_narrowed,
            )
        )
    return runs


def _relabelled(trace: Sequence[TraceLine], read: Sequence[TraceLine]) -> tuple[int, int]:
    """How many labels a reading turned into an expected silence, and how many it narrowed."""
    pairs = list(zip(trace, read, strict=True))
    silenced = sum(1 for a, b in pairs if a.intent is not None and b.intent is None)
    return silenced, sum(1 for a, b in pairs if b.intent is not None and a.targets != b.targets)


def intent_report(runs: Sequence[IntentRun]) -> dict[str, Any]:
    """Figures per repository, per split, pooled and per intent (pooled), plus the ledger."""
    ledger: Counter[str] = Counter()
    for run in runs:
        ledger.update(run.ledger)
    tune = pooled(r.score for r in runs if r.repo.split == "tune")
    held = pooled(r.score for r in runs if r.repo.split == "heldout")
    allp = pooled(r.score for r in runs)
    out: dict[str, Any] = {
        "repos": {r.repo.dir: {"repo": r.repo.repo, "split": r.repo.split, **figures(r.score)} for r in runs},
        "tune": figures(tune),
        "heldout": figures(held),
        "pooled": figures(allp),
        "intents": intent_figures(allp),
        "ledger": dict(sorted(ledger.items())),
    }
    for key, helped, relabelled, narrowed in (
        (
            "echo_aware",
            [(r, r.echo_aware) for r in runs if r.echo_aware is not None],
            sum(r.relabelled for r in runs),
            sum(r.narrowed for r in runs),
        ),
        (
            "session_aware",
            [(r, r.session_aware) for r in runs if r.session_aware is not None],
            sum(r.session_relabelled for r in runs),
            sum(r.session_narrowed for r in runs),
        ),
    ):
        if helped and len(helped) == len(runs):  # the same notes against the relabelled trace
            every = pooled(s for _, s in helped)
            out[key] = {
                "relabelled": relabelled,
                "narrowed": narrowed,
                "repos": {r.repo.dir: {"repo": r.repo.repo, "split": r.repo.split, **figures(s)} for r, s in helped},
                "tune": figures(pooled(s for r, s in helped if r.repo.split == "tune")),
                "heldout": figures(pooled(s for r, s in helped if r.repo.split == "heldout")),
                "pooled": figures(every),
                "intents": intent_figures(every),
            }
    return out


def format_intent_report(rep: dict[str, Any]) -> str:
    """The intent figures as a fixed-width text table."""
    head = f"{'repository':28} {'split':8} {'calls':>5} {'notes':>5} {'precision':>9} {'recall':>6} {'first-note':>10}"
    rows = [head]

    def row(name: str, split: str, f: dict[str, Any]) -> str:
        return (
            f"{name:28} {split:8} {f['calls']:>5} {f['notes']:>5} {f['precision']:>9.2f} {f['recall']:>6.2f} "
            f"{f['first_note']:>10.2f}"
        )

    for f in rep["repos"].values():
        rows.append(row(f["repo"], f["split"], f))
    rows += [row("pooled tune", "", rep["tune"]), row("pooled heldout", "", rep["heldout"])]
    rows.append(row("pooled all", "", rep["pooled"]))
    rows.append("")
    rows.append(f"{'intent':12} {'notes':>5} {'precision':>9} {'expected':>8} {'recall':>6}")
    for intent, f in rep["intents"].items():
        rows.append(f"{intent:12} {f['notes']:>5} {f['precision']:>9.2f} {f['expected']:>8} {f['recall']:>6.2f}")
    for key, what in (
        (
            "echo_aware",
            "echo-aware labels ({0} labels that expect only files their call showed — listed, opened "
            "or searched inside — read as expecting silence, {1} narrowed to the files it did not show; docs/corpus.md)",
        ),
        (
            "session_aware",
            "session-aware labels, the reading the bar is judged by ({0} labels that expect only "
            "files their call or an earlier call of the session showed, or only a licence for an Owner question, "
            "read as expecting silence, {1} narrowed; docs/corpus.md)",
        ),
    ):
        helped = rep.get(key)
        if not helped:
            continue
        rows.append("")
        rows.append(what.format(helped["relabelled"], helped.get("narrowed", 0)))
        rows.append(head)
        for f in helped.get("repos", {}).values():
            rows.append(row(f["repo"], f["split"], f))
        rows += [row("pooled tune", "", helped["tune"]), row("pooled heldout", "", helped["heldout"])]
        rows.append(row("pooled all", "", helped["pooled"]))
        for intent, f in helped["intents"].items():
            rows.append(f"{intent:12} {f['notes']:>5} {f['precision']:>9.2f} {f['expected']:>8} {f['recall']:>6.2f}")
    rows.append("")
    rows.append(format_ledger(rep["ledger"]))
    return "\n".join(rows)


def config_label(config: dict[str, Any]) -> str:
    """``knob=value`` pairs of a suggester configuration (``default`` when empty)."""
    return ",".join(f"{k}={json.dumps(v)}" for k, v in sorted(config.items())) or "default"


def run_trajectory_grid(
    trajs: Sequence[Trajectory],
    workspace_of: Callable[[Trajectory], Path],
    suggester: dict[str, Any] | None = None,
    select: tuple[str, Sequence[Any]] | None = None,
    objective: Sequence[str] = DEFAULT_OBJECTIVE,
    graph_wait_s: float = GRAPH_WAIT_S,
    task_of: Callable[[Trajectory], str | None] | None = None,
) -> dict[str, Any]:
    """The trajectory report under ``suggester`` (the first value of ``select`` when given) and
    its folds: with ``select = (knob, values)`` every trace is replayed once per value and each
    fold's value is chosen on the other folds (:func:`~dsh_sidecar.evaluation.folds.fold_report`).
    ``task_of``: each trace's task text, sent as ``dsh/taskLead`` at the session's start."""
    base = dict(suggester or {})
    configs = [{**base, select[0]: v} for v in select[1]] if select else [base]
    per_config: dict[str, dict[str, dict[str, Any]]] = {}
    first: dict[str, Any] | None = None
    for config in configs:
        per, ledger = replay_trajectories(trajs, workspace_of, graph_wait_s, config, task_of)
        per_config[config_label(config) if select else "default"] = per
        if first is None:
            first = trajectory_report(per, ledger)
    assert first is not None
    first["folds"] = fold_report(per_config, objective)
    if select:
        first["config"] = config_label(configs[0])
    return first


def run_corpus(
    corpus: Path,
    cache: Path,
    *,
    intents: bool = True,
    trajectories: bool = True,
    only: Iterable[str] | None = None,
    graph_wait_s: float = GRAPH_WAIT_S,
    suggester: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Both figure sets on the real checkouts in ``cache`` (``<owner>__<name>@<commit>/``,
    made by ``corpus/checkout.py``; nothing is fetched here), the trajectories with their folds.
    ``only``: repository dirs / owner/name / trajectory ids / agent families to keep;
    ``suggester``: knobs for every replay. Raises ``OSError`` naming a missing checkout."""
    keep = set(only) if only is not None else None
    out: dict[str, Any] = {"cache": str(cache)}
    if intents:
        repos = [r for r in read_manifest(corpus) if keep is None or r.dir in keep or r.repo in keep]
        runs = run_intents(repos, lambda r: checkout_dir(cache, r.repo, r.commit), graph_wait_s, suggester)
        out["intents"] = intent_report(runs)
    tdir = corpus / "trajectories"
    if trajectories and (tdir / "index.jsonl").is_file():
        trajs = [
            t
            for t in read_trajectories(tdir)
            if keep is None or t.id in keep or t.row["repo"] in keep or t.family in keep
        ]
        out["trajectories"] = run_trajectory_grid(
            trajs,
            lambda t: checkout_dir(cache, t.row["repo"], t.row["commit"]),
            suggester,
            None,
            DEFAULT_OBJECTIVE,
            graph_wait_s,
        )
    return out


def format_corpus(rep: dict[str, Any]) -> str:
    """:func:`format_intent_report` then :func:`format_trajectory_report` (those present)."""
    parts = []
    if "intents" in rep:
        parts.append("intents (labelled calls on real repositories)\n" + format_intent_report(rep["intents"]))
    for key, what in (("trajectories", "tool calls alone"), ("trajectories_task", "with the task text")):
        if key not in rep:
            continue
        traj = rep[key]
        head = f"trajectories (recorded agent runs; {what})" + (
            f" under {traj['config']}" if traj.get("config") else ""
        )
        parts.append(head + "\n" + format_trajectory_report(traj))
        if "folds" in traj:
            parts.append(f"trajectory folds ({what}; each fold scored when held out)\n" + format_folds(traj["folds"]))
    return "\n\n".join(parts)
