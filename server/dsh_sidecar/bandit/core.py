"""The strategy bandit: classify the query, choose an arm, run it over the router, reward,
update (persisted), log; later re-credit the search from answer usage (``dsh/searchFeedback``,
or the answer's text: :mod:`.feedback`).

The log line is byte-exact from the bandit seed ("Example output")::

    [bandit-search] arm=quick reward=1.000 durationMs=4393 resultCount=5 stats={"quick":{"alpha":2,"beta":1},"thorough":{"alpha":1,"beta":1}}

``stats`` is the compact JSON of both arms' α/β, *after* the update, of the posterior that
was updated (the query's **class**, :mod:`.context`; with ``contextual: false`` the one
posterior of every query), rounded to 2 decimals as the seed's example shows (a reward of
0.85375 printed ``reward=0.854`` makes α 1.85375, printed ``1.85``) and written the way
JavaScript writes numbers (``2``, not ``2.0``). With ``contextual: false``, ``discount: 1`` and
``evidenceScale: 1`` (the DSH bandit-search plugin's defaults) the lines are the seed's
exactly; with the default discount the other arm's α/β shrink toward 1 too.
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from dsh_protocol import Attempt, SearchRun, Source

from dsh_sidecar.bandit.arms import ArmResult, all_cached, merge, run_quick, run_thorough
from dsh_sidecar.bandit.config import BanditConfig
from dsh_sidecar.bandit.context import CLASSES, classify
from dsh_sidecar.bandit.decisions import DecisionLog
from dsh_sidecar.bandit.feedback import PendingFile, PendingSearches, Recredit
from dsh_sidecar.bandit.policy import (
    ARMS,
    GLOBAL,
    ContextualPolicy,
)
from dsh_sidecar.bandit.reward import heuristic_reward
from dsh_sidecar.bandit.store import PosteriorStore
from dsh_sidecar.bandit.usage import cited_urls, url_keys
from dsh_sidecar.bandit.variants import reframe
from dsh_sidecar.bandit.variants import warm as warm_variants
from dsh_sidecar.errors import RequestError
from dsh_sidecar.recent import remember
from dsh_sidecar.router import AllProvidersFailed, Router
from dsh_sidecar.router.providers import LOCAL_ID

#: Prefix of every bandit log line (seed).
LOG_PREFIX: Final = "[bandit-search]"
#: Decimals of the α/β written in the log line's ``stats`` (the seed's example: 1.85, 1.15).
STATS_DECIMALS: Final = 2
#: ``json.dumps(value, separators=(",", ":"))`` without building an encoder per line (the same
#: encoder ``json.dumps`` builds for those arguments).
_compact_json = json.JSONEncoder(separators=(",", ":")).encode


@dataclass
class SearchOutcome:
    """One search as the bandit ran it. ``duration_ms`` in milliseconds, ``reward`` in [0, 1]."""

    search_id: str
    strategy: str
    sources: list[Source]
    truncated: bool
    attempts: list[Attempt]
    duration_ms: int
    reward: float
    content: str | None = None
    query_class: str = "factoid"
    #: 1.0 for a forced arm; ``None`` for a sampled one (its integral is computed
    #: later, for the decision log only)
    propensity: float | None = 1.0


def js_number(x: float) -> int | float:
    """A float as JavaScript's JSON would write it: integral values without ``.0``."""
    return int(x) if float(x).is_integer() else x


def format_log_line(arm: str, reward: float, duration_ms: int, result_count: int, stats: dict) -> str:
    """The seed's log line, byte-exact (see module docstring)."""
    compact = {a: {k: js_number(round(v, STATS_DECIMALS)) for k, v in ab.items()} for a, ab in stats.items()}
    return (
        f"{LOG_PREFIX} arm={arm} reward={reward:.3f} durationMs={duration_ms} "
        f"resultCount={result_count} stats={_compact_json(compact)}"
    )


def format_unlearned_line(arm: str, duration_ms: int, stats: dict, result_count: int = 0, why: str = "") -> str:
    """The log line of a search that taught nothing (every provider was unavailable, or every
    answer came from a cache): the seed line's fields, ``reward=none`` and ``learned=false``
    (then `` cached=true`` for a cached answer: ``why``), the posterior unchanged."""
    compact = {a: {k: js_number(round(v, STATS_DECIMALS)) for k, v in ab.items()} for a, ab in stats.items()}
    return (
        f"{LOG_PREFIX} arm={arm} reward=none durationMs={duration_ms} resultCount={result_count} "
        f"stats={_compact_json(compact)} learned=false{why}"
    )


def answered_offline(attempts: list[Any]) -> bool:
    """Whether only the offline docs index answered (no web provider did): such a search says
    nothing of how quick or thorough web searching pays, so the bandit does not learn from it."""
    answered = {a.provider for a in attempts if a.outcome.startswith("ok")}
    return bool(answered) and answered <= {LOCAL_ID}


#: What an unlearned line adds when every answer of the search came from a cache.
CACHED_WHY: Final = " cached=true"
#: Searches planned (``dsh/searchPlan``) and not yet reported that are kept, and for how long,
#: seconds: a harness that never reports (its process died) must not grow the sidecar.
MAX_PLANNED: Final = 256
PLAN_TTL_S: Final = 600.0


class UnknownPlan(RequestError):
    """A ``dsh/searchReport`` for a search that was never planned, was reported already, or
    expired: the client's error, answered -32602 naming ``searchId``."""


@dataclass
class PlannedSearch:
    """One ``dsh/searchPlan`` awaiting its report: the query's class, the arm, its cap, the
    propensity (``None``: sampled, estimated at report time), the posterior it was chosen
    from, the decision's time (µs) and when it was planned (``time.monotonic()`` seconds)."""

    query_class: str
    arm: str
    cap: int
    max_results: int | None
    propensity: float | None
    posterior: tuple[float, float, float, float]
    decision_us: float
    at: float


@dataclass
class ReportedSearch:
    """A reported search merged: its sources (capped), whether the cap dropped any, the first
    answer's content, and the reward credited (``None``: nothing was learned)."""

    sources: list[Source]
    truncated: bool
    content: str | None
    reward: float | None


class StrategyBandit:
    """Chooses ``quick``/``thorough`` per search and learns from each call's reward.

    ``home`` is ``$DSH_HOME`` (posteriors and decision log under ``home/bandit/``; ``None``
    or ``persist: false`` keeps everything in memory). ``log`` receives each seed log line
    (the server forwards it as ``window/logMessage`` and logs it at INFO); ``log_wanted()`` says
    whether anyone takes it now (``False``: the line is not even formatted, no per-search cost).
    """

    def __init__(
        self,
        router: Router,
        config: BanditConfig,
        log: Callable[[str], None] = lambda _l: None,
        home: Path | None = None,
        log_wanted: Callable[[], bool] = lambda: True,
    ) -> None:
        self.router = router
        self.log = log
        self.log_wanted = log_wanted
        self.policy = ContextualPolicy(
            CLASSES,
            seed=config.seed,
            discount=config.discount,
            min_class_evidence=config.min_class_evidence,
            evidence_scale=config.evidence_scale,
        )
        state_home = home if config.persist else None
        self.store = PosteriorStore(state_home)
        self.store.load(self.policy)
        self.decisions = DecisionLog(
            state_home, config.decision_log_max_bytes, config.decision_log_backups, redact=self._redact
        )
        self.pending = PendingSearches(config.feedback_max_pending, config.feedback_ttl_s)
        self.planned: OrderedDict[str, PlannedSearch] = OrderedDict()
        self.pending_file = PendingFile(state_home)
        self.pending_file.load(self.pending)
        #: the searches this bandit ran, newest last (an answer's report covers these)
        self.own: deque[str] = deque(maxlen=config.feedback_max_pending)
        self._config = config
        # search ids: a random prefix per bandit and a counter (unique, and no urandom call
        # per search: the prefix is drawn once, here, not in the generator's loop)
        prefix = uuid.uuid4().hex[:16]
        self._ids = (f"{prefix}{n:016x}" for n in itertools.count(1))

    def _redact(self, text: str) -> str:
        redactor = getattr(self.router, "redactor", None)  # the current router's secrets
        return redactor(text) if redactor is not None else text

    @property
    def config(self) -> BanditConfig:
        """The ``bandit`` config block; setting it (reconfiguration) applies the policy knobs."""
        return self._config

    @config.setter
    def config(self, config: BanditConfig) -> None:
        self._config = config
        self.policy.discount = config.discount
        self.policy.min_class_evidence = config.min_class_evidence
        self.policy.evidence_scale = config.evidence_scale
        self.policy.invalidate()
        self.pending.max_pending = config.feedback_max_pending
        self.pending.ttl_s = config.feedback_ttl_s
        if self.own.maxlen != config.feedback_max_pending:
            self.own = deque(self.own, maxlen=config.feedback_max_pending)

    def _class_of(self, query: str) -> str:
        """The posterior row a search learns in: its query class, or with ``contextual: false``
        the seed's one row for every query (:data:`~.policy.GLOBAL`)."""
        return classify(query) if self.config.contextual else GLOBAL

    def arm_max(self, arm: str) -> int:
        """The arm's own result cap."""
        return self.config.quick_max_results if arm == "quick" else self.config.thorough_max_results

    async def search(
        self, query: str, strategy: str = "auto", max_results: int | None = None, deadline_ms: int | None = None
    ) -> SearchOutcome:
        """Run one search. ``strategy`` ``auto`` samples an arm for the query's class;
        ``quick``/``thorough`` force it.

        The forced arm is still rewarded and updated (its evidence is real; its propensity is
        logged as 1). Raises :class:`AllProvidersFailed` when no provider answered: after
        crediting reward 0 when some provider failed for a reason that says something of the
        search (timeout, 5xx, unreadable answer), without touching the posteriors when every
        failure was an outage (not configured, network down, auth, cooldown: the
        exception's ``outage``), which would teach the bandit that both arms are bad.
        """
        cls = self._class_of(query)
        search_id = next(self._ids)
        arm, decision_us, propensity = self._arm_for(cls, strategy)
        posterior = self.policy.effective(cls)
        cap = self.arm_max(arm)
        run = run_quick if arm == "quick" else run_thorough
        started = time.monotonic()
        try:
            result: ArmResult = await run(self.router, query, cap, deadline_ms)
        except AllProvidersFailed as failed:
            duration_ms = int((time.monotonic() - started) * 1000)
            reward = await self._unanswered(failed, cls, arm, duration_ms)
            self._record(
                search_id, cls, arm, strategy != "auto", propensity, reward, duration_ms, decision_us, 0, posterior
            )
            raise
        duration_ms = int((time.monotonic() - started) * 1000)
        reward, credited, unlearned_why = await self._credit(search_id, cls, arm, result, duration_ms)
        self._record(
            search_id,
            cls,
            arm,
            strategy != "auto",
            propensity,
            credited,
            duration_ms,
            decision_us,
            len(result.sources),
            posterior,
            why=unlearned_why,
        )
        sources, truncated = result.sources, result.truncated
        if max_results is not None and len(sources) > max_results:
            sources, truncated = sources[:max_results], True
        return SearchOutcome(
            search_id=search_id,
            strategy=arm,
            sources=sources,
            truncated=truncated,
            attempts=result.attempts,
            duration_ms=duration_ms,
            reward=reward,
            content=result.content,
            query_class=cls,
            propensity=propensity,
        )

    def _arm_for(self, cls: str, strategy: str) -> tuple[str, float, float | None]:
        """The arm of a search of class ``cls`` (sampled for ``auto``, else the one forced), the
        decision's time in microseconds and its propensity (``None``: computed by the decision
        log's writer, off the reply's path; 1 for a forced arm)."""
        if strategy != "auto":
            return strategy, 0.0, 1.0
        t0 = time.perf_counter()
        arm = self.policy.choose(cls)
        return arm, (time.perf_counter() - t0) * 1e6, None

    async def _unanswered(self, failed: AllProvidersFailed, cls: str, arm: str, duration_ms: int) -> float | None:
        """The reward of a search no provider answered: 0, learned, unless every failure was an
        outage (then nothing is learned: ``None``)."""
        if failed.outage:
            self._emit(lambda: format_unlearned_line(arm, duration_ms, self.policy.stats(cls)))
            return None
        return await self._learn(cls, arm, 0, duration_ms)

    async def _credit(
        self, search_id: str, cls: str, arm: str, result: ArmResult, duration_ms: int
    ) -> tuple[float, float | None, str | None]:
        """The reward of an answered search, what the posteriors were credited (``None``: not
        learned from) and why not: a cached answer or one only the offline docs index gave
        says nothing of the arm (its reward is the heuristic's); any other is learned from and
        waits for its feedback."""
        if all_cached(result.attempts):
            # the cache answered in 0 ms: no evidence of the arm's speed (nor of anything else)
            self._emit(
                lambda: format_unlearned_line(arm, duration_ms, self.policy.stats(cls), len(result.sources), CACHED_WHY)
            )
            return self._heuristic(arm, len(result.sources), duration_ms), None, "none (cached: no provider was asked)"
        if answered_offline(result.attempts):
            # only the offline docs index answered: it says nothing of how web searching pays
            self._emit(lambda: format_unlearned_line(arm, duration_ms, self.policy.stats(cls), len(result.sources)))
            reward = self._heuristic(arm, len(result.sources), duration_ms)
            return reward, None, "none (offline: only the local docs index answered)"
        reward = await self._learn(cls, arm, len(result.sources), duration_ms)
        item = self.pending.add(search_id, cls, arm, reward, url_keys(s.url for s in result.sources))
        self.pending_file.submit(search_id, item, self.pending)
        self.own.append(search_id)
        return reward, reward, None

    def _emit(self, line: Callable[[], str]) -> None:
        """Log the line ``line()`` makes, when anyone takes it (:attr:`log_wanted`)."""
        if self.log_wanted():
            self.log(line())

    def _heuristic(self, arm: str, result_count: int, duration_ms: int) -> float:
        return heuristic_reward(
            result_count,
            self.arm_max(arm),
            duration_ms,
            speed_ms=self.config.speed_ms,
            quality_weight=self.config.quality_weight,
        )

    async def _learn(self, cls: str, arm: str, result_count: int, duration_ms: int) -> float:
        """Reward the call and update the posterior: in memory at once, in the state file by the
        store's writer thread (the locked, fsync'd write never delays the reply)."""
        reward = self._heuristic(arm, result_count, duration_ms)
        self.store.submit(self.policy, self.policy.update_op(cls, arm, reward), counts_for=arm)
        self._emit(lambda: format_log_line(arm, reward, duration_ms, result_count, self.policy.stats(cls)))
        return reward

    def _record(
        self,
        search_id: str,
        cls: str,
        arm: str,
        forced: bool,
        propensity: float | None,
        reward: float | None,
        duration_ms: int,
        decision_us: float,
        result_count: int,
        posterior: tuple[float, float, float, float],
        why: str | None = None,
    ) -> None:
        self.decisions.append(
            {
                "event": "decision",
                "ts": round(time.time(), 3),
                "searchId": search_id,
                "class": cls,
                "arm": arm,
                "forced": forced,
                "propensity": round(propensity, 6) if propensity is not None else None,
                "reward": round(reward, 6) if reward is not None else None,
                "rewardSource": "heuristic" if reward is not None else why or "none (outage: no provider answered)",
                "durationMs": duration_ms,
                "decisionUs": round(decision_us, 1),
                "resultCount": result_count,
                "posterior": {
                    a: [round(posterior[2 * i], 6), round(posterior[2 * i + 1], 6)] for i, a in enumerate(ARMS)
                },
            },
            finish=None if propensity is not None else self._propensity_of(posterior, arm),
        )

    def _propensity_of(self, posterior: tuple[float, float, float, float], arm: str) -> Callable[[dict], None]:
        samples = self.config.propensity_samples

        def finish(record: dict) -> None:
            record["propensity"] = round(self.policy.propensity_from(posterior, arm, samples), 6)

        return finish

    def plan(self, query: str, max_results: int | None = None) -> tuple[str, str, list[str], int]:
        """``dsh/searchPlan``: choose the arm for ``query``'s class (Thompson sampling) and return
        ``(search_id, arm, queries, cap)``: the queries the harness runs (``quick``: the query;
        ``thorough``: it and its reframed variants, concurrently) and the sources each may
        return. The search waits for its :meth:`report` (at most :data:`MAX_PLANNED`, for
        :data:`PLAN_TTL_S`; an expired one is dropped unlearned)."""
        cls = self._class_of(query)
        t0 = time.perf_counter()
        arm = self.policy.choose(cls)
        decision_us = (time.perf_counter() - t0) * 1e6
        posterior = self.policy.effective(cls)
        cap = self.arm_max(arm)
        queries = [" ".join(query.split())] if arm == "quick" else reframe(query)
        search_id = next(self._ids)
        self._expire_plans()
        plan = PlannedSearch(cls, arm, cap, max_results, None, posterior, decision_us, time.monotonic())
        remember(self.planned, search_id, plan, MAX_PLANNED)
        return search_id, arm, queries, cap

    def _expire_plans(self) -> None:
        now = time.monotonic()
        while self.planned:
            oldest = next(iter(self.planned.values()))
            if now - oldest.at <= PLAN_TTL_S:
                break
            self.planned.popitem(last=False)

    async def report(self, search_id: str, runs: list[SearchRun], duration_ms: int) -> ReportedSearch:
        """``dsh/searchReport``: merge the runs of a planned search (in plan order), reward it and
        update the posterior, log the seed line, record the decision, and keep it for feedback.

        Learned as :meth:`search` learns: the seed's heuristic over the merged count and the
        whole search's ``duration_ms``; nothing is learned when every run failed for an outage
        (nothing was configured or reachable) or every answer came from a cache (0 ms says
        nothing of the arm's speed). Raises :class:`UnknownPlan` for an unknown, expired or
        already reported ``search_id``."""
        self._expire_plans()
        plan = self.planned.pop(search_id, None)
        if plan is None:
            raise UnknownPlan(
                f"searchId: unknown, expired or already reported search {search_id[:64]!r} "
                f"(a dsh/searchPlan is reported once, within {PLAN_TTL_S:g} s)"
            )
        answered = [r for r in runs if r.error is None]
        returned = [[Source.model_validate(src.model_dump()) for src in r.sources] for r in answered]
        sources, truncated = merge(returned, plan.cap)
        truncated = truncated or any(r.truncated for r in answered)
        content = next((r.content for r in answered if r.content), None)
        count = len(sources)
        cls, arm = plan.query_class, plan.arm
        reward: float | None
        why: str | None = None
        if not answered and all(r.outage for r in runs):
            reward, why = None, "none (outage: no provider answered)"
            self._emit(lambda: format_unlearned_line(arm, duration_ms, self.policy.stats(cls)))
        elif answered and all(r.cached for r in answered):
            reward, why = None, "none (cached: no provider was asked)"
            self._emit(lambda: format_unlearned_line(arm, duration_ms, self.policy.stats(cls), count, CACHED_WHY))
        else:
            reward = await self._learn(cls, arm, count, duration_ms)
            item = self.pending.add(search_id, cls, arm, reward, url_keys(s.url for s in sources))
            self.pending_file.submit(search_id, item, self.pending)
            self.own.append(search_id)
        self._record(
            search_id, cls, arm, False, None, reward, duration_ms, plan.decision_us, count, plan.posterior, why=why
        )
        if plan.max_results is not None and len(sources) > plan.max_results:
            sources, truncated = sources[: plan.max_results], True
        return ReportedSearch(sources, truncated, content, reward)

    def feedback(self, search_id: str, used_urls: list[str]) -> Recredit:
        """``dsh/searchFeedback``: re-credit a recent search with the answer-usage reward
        (:mod:`.feedback`; usage only ever turns on). Raises :class:`~.feedback.UnknownSearch`
        (a :class:`~dsh_sidecar.errors.RequestError` naming ``searchId``) for an unknown or
        expired search. Writes the pending file under its lock: call it off the event loop."""
        done = self._recredit([(search_id, url_keys(used_urls))])[0]
        if done is None:
            raise self.pending.unknown(search_id)
        return done

    def answer_feedback(self, answer: str) -> list[Recredit]:
        """Report a final answer's text: every search this bandit ran that is still pending is
        re-credited with whether the answer cites one of its sources (:func:`~.usage.cited_urls`).
        A search already counted as used, or already reported unused and not cited now, is left
        as it is (the report would change nothing). Returns what changed, oldest search first.
        Call it off the event loop (see :meth:`feedback`)."""
        cited = url_keys(cited_urls(answer))
        reports = []
        for sid in list(self.own):
            item = self.pending.snapshot(sid)
            if item is None or item.used or (item.used is False and not item.keys & cited):
                continue
            reports.append((sid, cited))
        return [r for r in self._recredit(reports) if r is not None] if reports else []

    def _recredit(self, reports: list[tuple[str, frozenset[str]]]) -> list[Recredit | None]:
        done = self.pending_file.recredit(self.pending, reports, self.config.feedback_weight)
        for r in done:
            if r is None:
                continue
            if r.delta:
                self.store.submit(self.policy, self.policy.adjust_op(r.query_class, r.arm, r.delta))
            self.decisions.append(
                {
                    "event": "feedback",
                    "ts": round(time.time(), 3),
                    "searchId": r.search_id,
                    "class": r.query_class,
                    "arm": r.arm,
                    "used": r.used,
                    "reward": round(r.reward, 6),
                    "previousReward": round(r.previous, 6),
                }
            )
        return done

    def status(self) -> dict[str, Any]:
        """Posteriors for ``dsh/status``: ``{arms: {arm: {alpha, beta, mean}}`` (the global
        row), ``classes: {class: {arm: {alpha, beta, mean}, evidence}}``, the knobs, the
        state file and its warnings, pending feedback}``."""

        def row(name: str) -> dict[str, Any]:
            st = self.policy.stats(name)
            return {
                a: {
                    "alpha": round(p["alpha"], 4),
                    "beta": round(p["beta"], 4),
                    "mean": round(p["alpha"] / (p["alpha"] + p["beta"]), 4),
                }
                for a, p in st.items()
            }

        classes = {}
        for cls in CLASSES:
            entry: dict[str, Any] = row(cls)
            entry["evidence"] = round(sum(sum(cell) for cell in self.policy.evidence[cls].values()), 4)
            entry["usesGlobalFallback"] = any(
                sum(self.policy.evidence[cls][a]) < self.policy.min_class_evidence for a in ARMS
            )
            classes[cls] = entry
        return {
            "arms": row(GLOBAL),
            "updates": dict(self.store.updates),
            "classes": classes,
            "discount": self.config.discount,
            "minClassEvidence": self.config.min_class_evidence,
            "evidenceScale": self.config.evidence_scale,
            "feedbackWeight": self.config.feedback_weight,
            "pendingFeedback": len(self.pending),
            "state": {**self.store.describe(), "warnings": [*self.store.warnings, *self.pending_file.warnings]},
            "decisionLog": {
                "path": str(self.decisions.path) if self.decisions.path else None,
                "enabled": self.decisions.enabled,
                "warnings": list(self.decisions.warnings),
            },
        }

    def prepare(self) -> None:
        """What a first search would otherwise do on the event loop: the policy's preparation
        (:meth:`ContextualPolicy.warm`) and the three writer threads (posteriors, decision log,
        pending feedback), the thorough arm's patterns compiled. Call it off the loop (the
        server's preparation thread). Idempotent."""
        self.policy.warm()
        warm_variants()
        self.store.start_writer()
        self.decisions.start_writer()
        self.pending_file.start_writer()

    def flush(self) -> None:
        """Land the queued posterior writes and decision-log lines now."""
        self.store.flush()
        self.pending_file.flush()
        self.decisions.flush()

    def reset(self) -> None:
        """Forget everything learned: posteriors at the prior, update counts 0 (in memory
        and in the state file); pending feedback dropped. Raises ``OSError`` when the state
        file cannot be written."""
        self.pending = PendingSearches(self.config.feedback_max_pending, self.config.feedback_ttl_s)
        self.own.clear()
        self.pending_file.reset()
        self.store.reset(self.policy)

    def close(self, timeout_s: float | None = None) -> None:
        """Flush the posterior writes (waiting at most ``timeout_s`` for them) and pending
        searches, and close the decision log."""
        self.store.close(timeout_s)
        self.pending_file.close()
        self.decisions.close()
