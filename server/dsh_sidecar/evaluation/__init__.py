"""How well the suggester does, measured from outside: replay recorded calls through a spawned
``dsh-search serve`` over stdio and score its notes.

- :mod:`.trace` — one trace (``dsh/postExecute`` params plus the expected note), the scorer
  (precision, recall, first-note), the replay client and the per-call latency;
- :mod:`.corpus` — the labelled calls on real repositories (``corpus/intents/``) and
  :func:`run_corpus`, both figure sets on real checkouts;
- :mod:`.trajectories` — recorded agent runs (``corpus/trajectories/``) and their figures.

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
    TRAJECTORY_HELDOUT,
    Trajectory,
    format_trajectory_report,
    read_trajectories,
    run_trajectories,
    trajectory_figures,
    trajectory_summary,
    workspace_files,
)

__all__ = [
    "GRAPH_WAIT_S",
    "TRAJECTORY_HELDOUT",
    "CorpusRepo",
    "IntentRun",
    "Score",
    "TraceError",
    "TraceLine",
    "Trajectory",
    "checkout_dir",
    "figures",
    "format_corpus",
    "format_intent_report",
    "format_ledger",
    "format_trajectory_report",
    "intent_figures",
    "intent_report",
    "latency_line",
    "ledger_summary",
    "percentile",
    "pooled",
    "read_manifest",
    "read_trace",
    "read_trajectories",
    "replay",
    "run_corpus",
    "run_intents",
    "run_trajectories",
    "score",
    "trajectory_figures",
    "trajectory_summary",
    "workspace_files",
]
