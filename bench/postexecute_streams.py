"""Varied ``dsh/postExecute`` call streams from the recorded agent runs of ``corpus/trajectories``
(shared by ``bench/transport.py`` and ``bench/postexecute_instructions.py``).

One benchmark repeating one call pattern flatters every memo the sidecar keeps per pattern or
per call shape, so these streams replay what real sessions sent, on a checkout of the same
repository (``/work/corpus-cache``, ``docs/corpus.md``):

- **session**: every call of every run of the repository (edits, test runs and all), each run in
  its own order and session, a fresh session each time the rotation comes round again: what a
  harness sends, notes and silence mixed as they came;
- **silent** / **note**: the runs' search and read calls (grep, find, ls, cat, ``read``...), each
  sent alone as the first call of a fresh session, split by what the sidecar answered such a call
  in a calibration pass (:func:`calibrate`), in a fixed seeded order: CPU per call of one path.

Only training repositories (``dsh_sidecar.evaluation.TRAJECTORY_HELDOUT`` is refused): whatever
these streams make us cut is chosen on training data. All runs of the repository play on one
checkout (the first run's base commit); their other commits differ by a few files.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
TRAJECTORIES = HERE / "corpus" / "trajectories"
#: Runs of this training repository by default (16 runs, 753 calls, 320 search or read calls).
DEFAULT_REPO = "sphinx-doc/sphinx"
DEFAULT_CACHE = Path("/work/corpus-cache")
#: The agent family whose runs make the streams: the bash-only one the streams were first taken
#: from, so a family added to the corpus later does not change what a stream holds (or which
#: checkout it plays on) between two measurements.
DEFAULT_FAMILY = "mini-swe-agent"
#: The call classes the suggester reads (``corpus/trajectories/README.md``).
WATCHED = ("search", "read")

Params = dict[str, Any]
StreamOf = Callable[[int], Params]


@dataclass(frozen=True)
class Corpus:
    """One repository's runs: the checkout they play on, every run's calls in order, and the
    distinct search/read calls (without session fields) in a seeded order."""

    repo: str
    workspace: Path
    runs: list[list[Params]]
    watched: list[Params]

    @property
    def session_calls(self) -> list[Params]:
        return [p for run in self.runs for p in run]


def _heldout(repo: str) -> bool:
    from dsh_sidecar.evaluation import TRAJECTORY_HELDOUT

    return repo in TRAJECTORY_HELDOUT


def load(repo: str = DEFAULT_REPO, cache: Path = DEFAULT_CACHE, seed: int = 0, family: str = DEFAULT_FAMILY) -> Corpus:
    """The runs of ``repo`` by ``family`` in ``corpus/trajectories`` and its checkout under ``cache``.
    Raises ``ValueError`` for a held-out repository or one without runs, ``OSError`` when the
    checkout is missing."""
    if _heldout(repo):
        raise ValueError(f"{repo} is held out: benchmark streams are taken from training repositories only")
    rows = [json.loads(x) for x in (TRAJECTORIES / "index.jsonl").read_text("utf-8").splitlines() if x.strip()]
    rows = sorted((r for r in rows if r["repo"] == repo and r.get("family") == family), key=lambda r: str(r["id"]))
    if not rows:
        raise ValueError(f"no runs of {repo} by {family} in {TRAJECTORIES}")
    workspace = cache / f"{repo.replace('/', '__')}@{rows[0]['commit']}"
    if not workspace.is_dir():
        raise OSError(f"no checkout {workspace} (the corpus cache, docs/corpus.md)")
    runs: list[list[Params]] = []
    watched: dict[str, Params] = {}
    for row in rows:
        calls = [json.loads(x) for x in (TRAJECTORIES / f"{row['id']}.jsonl").read_text("utf-8").splitlines() if x]
        runs.append([c["params"] for c in calls])
        for c in calls:
            if c.get("class") in WATCHED:
                bare = {k: v for k, v in c["params"].items() if k in ("tool", "result")}
                watched.setdefault(json.dumps(bare, sort_keys=True), bare)
    order = list(watched.values())
    random.Random(seed).shuffle(order)
    return Corpus(repo, workspace, runs, order)


def session_stream(corpus: Corpus) -> StreamOf:
    """Call ``i`` of the runs played one after the other, round and round; each round's runs are
    new sessions (``<session>~<round>``)."""
    flat = [(p, str(p.get("sessionId"))) for p in corpus.session_calls]

    def params_of(i: int) -> Params:
        p, session = flat[i % len(flat)]
        return {**p, "sessionId": f"{session}~{i // len(flat)}"}

    return params_of


def alone_stream(pool: list[Params], tag: str) -> StreamOf:
    """Call ``i`` of ``pool`` round and round, each the first call of a session of its own."""
    if not pool:
        raise ValueError(f"the {tag} stream has no calls")

    def params_of(i: int) -> Params:
        return {"sessionId": f"{tag}-{i}", "turn": 1, "callId": f"{tag}-{i}", **pool[i % len(pool)]}

    return params_of


def calibrate(corpus: Corpus, answer: Callable[[Params], list[Any]]) -> tuple[list[Params], list[Params]]:
    """(silent, note): the search/read calls split by ``answer`` (the sidecar's
    ``additionalContexts`` for the call sent alone in a fresh session), order kept."""
    silent: list[Params] = []
    noted: list[Params] = []
    probe = alone_stream(corpus.watched, "calibrate")
    for i, call in enumerate(corpus.watched):
        (noted if answer(probe(i)) else silent).append(call)
    return silent, noted
