"""``dsh-search serve`` that also writes the task lead's ranking as one ledger line, for replays.

The server keeps the task lead's best files (``session.TaskEvidence.ranks``, at most
``MAX_TASK_FILES``) and never shows them; a bench that judges a rule on them needs them beside
each trace's notes. This entry point wraps ``TaskLeads.offer`` so that an offer with a ranking
also writes ``lead ranked <JSON list of paths>`` (best first) to the ledger, which the replay
keeps as the trace's ``task_ranks`` (``dsh_sidecar.evaluation.trajectories.task_ranks``).
Nothing else changes: the note, the evidence and every other line are the server's own.

    replay_trajectories(…, command=[sys.executable, "bench/serve_task_ranks.py"])
"""

from __future__ import annotations

import json
from typing import Any

from dsh_sidecar.cli import main
from dsh_sidecar.evaluation.trajectories import TASK_RANKS_LINE
from dsh_sidecar.suggester.lead.offer import TaskLeads

_offer = TaskLeads.offer


def _recording_offer(self: TaskLeads, *args: Any, **kwargs: Any) -> Any:
    answer = _offer(self, *args, **kwargs)
    if answer.ranked:
        self.write(TASK_RANKS_LINE + json.dumps([lead.path for lead in answer.ranked]))
    return answer


TaskLeads.offer = _recording_offer  # type: ignore[method-assign]

if __name__ == "__main__":
    raise SystemExit(main(["serve"]))
