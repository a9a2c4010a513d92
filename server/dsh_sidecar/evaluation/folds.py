"""Held-out folds of the trajectory figures (``docs/corpus.md``, "Folds").

Every trace is tagged with its repository and agent family. For each *fold* — one repository,
one agent family, or the fixed held-out set (``TRAJECTORY_HELDOUT`` repositories and
``TRAJECTORY_HELDOUT_FAMILIES`` families) — a setting is *chosen on the other traces* (the
training folds) and the fold is *scored under that setting*; the pooled held-out figures sum
the held-out counts of all folds of one kind (each trace is held out exactly once per kind).

The settings are the suggester configurations a run was replayed under (``--select knob=v1,v2``
of ``bench/suggester.py``: one replay of every trace per value). With one configuration nothing
is chosen, and a fold's figures are what its repository or family scores when its details were
not looked at — true of a hand-written rule only for traces nobody tuned on, which is why the
fixed held-out set exists.

The choice maximises an *objective*: summary keys compared in order (lexicographically), a
leading ``-`` minimising one; ties go to the configuration listed first. A term may be a
**floor** or a **ceiling** instead (``lead_share>=0.15``, ``echo_share<=0.2``): it counts 1 when
the training traces meet it and 0 when they miss it, so
``lead_share>=0.15,notes_per_100_search>=8,useful_precision`` maximises useful-precision among
the configurations that keep both floors (and, when none does, among those that keep the first).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from dsh_sidecar.evaluation.trajectories import format_table, trajectory_summary

#: The default objective: traces with a lead note, then gold-hit before the first edit of a
#: repository file, then fewer echoes, then useful-precision.
DEFAULT_OBJECTIVE: Final = ("lead_share", "gold_hit_before_first_edit", "-echo_share", "useful_precision")
#: A floor or ceiling term of an objective: ``key>=number`` or ``key<=number``.
_BOUND: Final = re.compile(r"^(?P<key>[a-z_0-9]+)\s*(?P<op>>=|<=)\s*(?P<value>-?[0-9]+(?:\.[0-9]+)?)$")
#: The fold kinds: the per-trace tag each one leaves out, one value at a time.
FOLD_KINDS: Final = (("repository", "repo"), ("family", "family"))


def parse_objective(spec: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"lead_share,-echo_share"`` → ``("lead_share", "-echo_share")`` (``None``: the default);
    a floor or ceiling term (``lead_share>=0.15``) is kept with its spaces removed. Raises
    ``ValueError`` for no term or a malformed bound."""
    if spec is None:
        return DEFAULT_OBJECTIVE
    keys = spec.split(",") if isinstance(spec, str) else list(spec)
    out = tuple(k.replace(" ", "") for k in keys if k.strip())
    if not out:
        raise ValueError("the objective names no summary key")
    for k in out:
        if ("<" in k or ">" in k or "=" in k) and not _BOUND.match(k):
            raise ValueError(f"not a floor or ceiling (key>=number, key<=number): {k!r}")
    return out


def objective_value(summary: Mapping[str, Any], objective: Sequence[str]) -> tuple[float, ...]:
    """The summary's objective as a tuple to maximise (a floor or ceiling: 1 met, 0 missed).
    Raises ``KeyError`` for an unknown key."""
    out = []
    for key in objective:
        bound = _BOUND.match(key)
        if bound is not None:
            value, limit = float(summary[bound["key"]]), float(bound["value"])
            out.append(1.0 if (value >= limit if bound["op"] == ">=" else value <= limit) else 0.0)
            continue
        sign = -1.0 if key.startswith("-") else 1.0
        out.append(sign * float(summary[key.lstrip("-")]))
    return tuple(out)


def _choose(
    per_config: Mapping[str, Mapping[str, dict[str, Any]]], ids: Sequence[str], objective: Sequence[str]
) -> tuple[str, tuple[float, ...]]:
    """The configuration that maximises the objective on the training traces ``ids``; with no
    training trace (a run limited to one fold's traces) the first configuration, never one
    chosen on the traces it is then judged on."""
    if not ids:
        return next(iter(per_config)), ()
    best: tuple[str, tuple[float, ...]] | None = None
    for label, per in per_config.items():
        value = objective_value(trajectory_summary([per[i] for i in ids]), objective)
        if best is None or value > best[1]:
            best = (label, value)
    assert best is not None
    return best


def fold_report(
    per_config: Mapping[str, Mapping[str, dict[str, Any]]], objective: Sequence[str] = DEFAULT_OBJECTIVE
) -> dict[str, Any]:
    """Leave-one-repository-out, leave-one-agent-family-out and fixed-split figures.

    ``per_config``: configuration label → per-trace counts (``trajectory_figures`` tagged with
    ``repo``, ``family`` and ``heldout``), every configuration over the same traces. Returns
    ``{"objective", "configs", "repository": [fold…], "family": [fold…], "pooled repository",
    "pooled family", "fixed"}``, a fold being ``{"held_out", "chosen", "train", "figures"}``
    (``train``: the objective on the training traces under the chosen configuration)."""
    if not per_config:
        raise ValueError("no configuration to score")
    labels = list(per_config)
    meta = per_config[labels[0]]
    ids = sorted(meta)
    for label in labels[1:]:
        if sorted(per_config[label]) != ids:
            raise ValueError(f"configuration {label!r} was not replayed over the same traces")
    out: dict[str, Any] = {"objective": list(objective), "configs": labels}
    for kind, tag in FOLD_KINDS:
        folds = []
        pooled: list[dict[str, Any]] = []
        for value in sorted({str(meta[i][tag]) for i in ids}):
            test = [i for i in ids if str(meta[i][tag]) == value]
            train = [i for i in ids if str(meta[i][tag]) != value]
            chosen, score = _choose(per_config, train, objective)
            held = [per_config[chosen][i] for i in test]
            pooled += held
            folds.append(
                {"held_out": value, "chosen": chosen, "train": list(score), "figures": trajectory_summary(held)}
            )
        out[kind] = folds
        out[f"pooled {kind}"] = trajectory_summary(pooled)
    test = [i for i in ids if meta[i]["heldout"]]
    train = [i for i in ids if not meta[i]["heldout"]]
    chosen, score = _choose(per_config, train, objective)
    out["fixed"] = {
        "held_out": "fixed",
        "chosen": chosen,
        "train": list(score),
        "figures": trajectory_summary([per_config[chosen][i] for i in test]),
    }
    return out


#: Columns of the folds table: (header, summary key, format).
FOLD_COLUMNS: Final = (
    ("traces", "traces", "d"),
    ("notes", "notes", "d"),
    ("n/100s", "notes_per_100_search", ".2f"),
    ("useful-p", "useful_precision", ".2f"),
    ("echo", "echo_share", ".2f"),
    ("echo-first", "echo_first_share", ".2f"),
    ("lead-traces", "lead_share", ".2f"),
    ("call-lead", "call_lead_share", ".2f"),
    ("rank", "rank_share", ".2f"),
    ("gold-hit", "gold_hit_before_first_edit", ".2f"),
    ("own-search", "own_search_hit_before_first_edit", ".2f"),
    ("random-hit", "random_gold_hit_before_first_edit", ".2f"),
    ("hit-any-edit", "gold_hit_before_any_edit", ".2f"),
    ("own-any-edit", "own_hit_before_any_edit", ".2f"),
)


def format_folds(folds: Mapping[str, Any]) -> str:
    """The folds as one table: a row per held-out repository, per held-out family, the two pooled
    held-out rows and the fixed held-out set, each with the configuration chosen for it."""
    many = len(folds["configs"]) > 1
    items: list[tuple[str, dict[str, Any]]] = []

    def name(kind: str, fold: Mapping[str, Any]) -> str:
        label = f"{kind} {fold['held_out']}"
        return f"{label} [{fold['chosen']}]" if many else label

    for kind, _ in FOLD_KINDS:
        items += [(name(kind, f), f["figures"]) for f in folds[kind]]
        items.append((f"pooled held-out ({kind})", folds[f"pooled {kind}"]))
    fixed = folds["fixed"]
    items.append((f"fixed held-out set [{fixed['chosen']}]" if many else "fixed held-out set", fixed["figures"]))
    head = "held-out fold" + (f" (objective {','.join(folds['objective'])})" if many else "")
    return format_table(head, items, FOLD_COLUMNS)
