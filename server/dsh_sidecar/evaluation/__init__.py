"""How well the suggester does, measured from outside: replay recorded calls through a spawned
``dsh-search serve`` over stdio and score its notes.

- :mod:`.trace` — one trace (``dsh/postExecute`` params plus the expected note), the scorer
  (precision, recall, first-note), the replay client and the per-call latency;
- :mod:`.corpus` — the labelled calls on real repositories (``corpus/intents/``) and
  :func:`run_corpus`, both figure sets on real checkouts;
- :mod:`.trajectories` — recorded agent runs (``corpus/trajectories/``) and their figures (help,
  not agreement: echo, lead, rank, searches saved, beside the agent's own results and random files);
- :mod:`.folds` — leave-one-repository-out, leave-one-agent-family-out and fixed held-out folds,
  with a suggester setting chosen on the training folds when several were replayed.

Nothing here imports the server: it talks to it over stdio only (an import-linter contract).
Used by ``dsh-search replay``, ``bench/`` and the corpus tests; definitions in ``docs/corpus.md``.
"""

from dsh_sidecar.evaluation.corpus import (
    CorpusRepo,
    IntentRun,
    checkout_dir,
    format_corpus,
    format_intent_report,
    intent_report,
    read_manifest,
    run_corpus,
    run_intents,
)
from dsh_sidecar.evaluation.folds import DEFAULT_OBJECTIVE, fold_report, format_folds, parse_objective
from dsh_sidecar.evaluation.trace import (
    GRAPH_WAIT_S,
    Score,
    TraceError,
    TraceLine,
    figures,
    format_ledger,
    intent_figures,
    latency_line,
    ledger_summary,
    percentile,
    pooled,
    read_trace,
    replay,
    score,
)
from dsh_sidecar.evaluation.trajectories import (
    ECHO_MAX_FILES,
    RANK_MIN_FILES,
    format_trajectory_report,
    notes_from_log,
    replay_trajectories,
    rescore_trajectories,
    run_trajectories,
    trajectory_figures,
    trajectory_report,
    trajectory_summary,
    workspace_files,
)
from dsh_sidecar.evaluation.trajectory_runs import (
    TRAJECTORY_HELDOUT,
    TRAJECTORY_HELDOUT_FAMILIES,
    FileIndex,
    Trajectory,
    listed_files,
    read_trajectories,
)

__all__ = [
    "DEFAULT_OBJECTIVE",
    "ECHO_MAX_FILES",
    "GRAPH_WAIT_S",
    "RANK_MIN_FILES",
    "TRAJECTORY_HELDOUT",
    "TRAJECTORY_HELDOUT_FAMILIES",
    "CorpusRepo",
    "FileIndex",
    "IntentRun",
    "Score",
    "TraceError",
    "TraceLine",
    "Trajectory",
    "checkout_dir",
    "figures",
    "fold_report",
    "format_corpus",
    "format_folds",
    "format_intent_report",
    "format_ledger",
    "format_trajectory_report",
    "intent_figures",
    "intent_report",
    "latency_line",
    "ledger_summary",
    "listed_files",
    "notes_from_log",
    "parse_objective",
    "percentile",
    "pooled",
    "read_manifest",
    "read_trace",
    "read_trajectories",
    "replay",
    "replay_trajectories",
    "rescore_trajectories",
    "run_corpus",
    "run_intents",
    "run_trajectories",
    "score",
    "trajectory_figures",
    "trajectory_report",
    "trajectory_summary",
    "workspace_files",
]
