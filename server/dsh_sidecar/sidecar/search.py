"""The router and bandit methods of :class:`~dsh_sidecar.sidecar.Sidecar`: a search through the
bandit (``dsh/search``), one query through the router's chain (``dsh/routeSearch``, the web
search seed's ``web_search``), a planned search the harness runs (``dsh/searchPlan``,
``dsh/searchReport``) and feedback on a search's answer. Every provider text that reaches the
model goes through :func:`~dsh_sidecar.escape.for_model`. A search before the search path was
prepared prepares it on a worker thread, within the search's deadline.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING, Final

from dsh_protocol import (
    Attempt,
    RouteSearchParams,
    RouteSearchResult,
    SearchFeedbackParams,
    SearchFeedbackResult,
    SearchParams,
    SearchPlanParams,
    SearchPlanResult,
    SearchReportParams,
    SearchReportResult,
    SearchResult,
    Source,
)

from dsh_sidecar.escape import for_model, source_for_model
from dsh_sidecar.router.budget import deadline_reserve_ms
from dsh_sidecar.router.web import route, web_search

if TYPE_CHECKING:
    from dsh_sidecar.bandit import StrategyBandit
    from dsh_sidecar.bandit.feedback import Recredit
    from dsh_sidecar.config import SidecarConfig
    from dsh_sidecar.router import Router
    from dsh_sidecar.router.chain import RouterResult


#: The wire models a ``dsh/search`` validates and answers with. Their validators are built on
#: first use (``defer_build``): 3–13 ms of a first search's event loop (cProfile, load 5–6), so
#: the search path's preparation builds them (:func:`build_search_models`).
SEARCH_MODELS: Final = (SearchParams, Source, Attempt, SearchResult)


def build_search_models() -> None:
    """Build :data:`SEARCH_MODELS`' validators and serializers now (idempotent; off the loop)."""
    for model in SEARCH_MODELS:
        model.model_rebuild()


def _outcome_for_model(attempt: Attempt) -> Attempt:
    """``attempt`` with its outcome through :func:`~dsh_sidecar.escape.for_model`: the same
    object when that changes nothing (an ``ok`` or a plain reason, nearly every attempt)."""
    shown = for_model(attempt.outcome)
    return attempt if shown is attempt.outcome else attempt.model_copy(update={"outcome": shown})


class SearchMethods:
    """The search methods of the composition root, on its router, bandit and config (which
    :class:`~dsh_sidecar.sidecar.Sidecar` sets and replaces on a reconfiguration)."""

    router: Router
    bandit: StrategyBandit
    config: SidecarConfig
    #: set when the first call is answered (the search path's preparation waits for it)
    _answered: threading.Event
    #: A first search's preparation (its loop and future), shared by the searches waiting.
    _preparing: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None

    async def _search_path_ready(self, timeout_s: float) -> bool:
        """Wait (at most ``timeout_s``) for :meth:`_prepare_search`, run once on a worker thread
        however many searches wait for it; ``True`` once done. A timeout leaves it running."""
        loop = asyncio.get_running_loop()
        preparing = self._preparing
        if preparing is None or preparing[0] is not loop or preparing[1].done():
            preparing = self._preparing = (loop, loop.run_in_executor(None, self._prepare_search))
        try:
            await asyncio.wait_for(asyncio.shield(preparing[1]), max(0.0, timeout_s))
        except TimeoutError:
            return False
        return True

    def _prepare_search(self) -> None:
        """What ``dsh-search-prepare`` prepares for the search path (httpx and the client,
        the bandit's writer threads, the search's wire models), done now on the calling thread
        (idempotent)."""
        self.router.warm()
        self.bandit.prepare()
        build_search_models()

    async def search(
        self, params: SearchParams, escaped: bool = True, received_at: float | None = None
    ) -> SearchResult:
        """``dsh/search``. Raises :class:`~dsh_sidecar.router.AllProvidersFailed`. ``escaped``:
        every provider text through :func:`~dsh_sidecar.escape.for_model` (the JSON-RPC and MCP
        results reach the model); the CLI's ``--json`` keeps the data as it came (its terminal
        output is cleaned by ``cli/output.py``). ``received_at`` (``time.monotonic()`` when the
        request was read): the deadline (``deadlineMs``, else the config's) counts from then,
        so the time the request waited for the server is inside it, not added to it."""
        try:
            total_ms = params.deadline_ms or self.config.router.deadline_ms
            start = received_at if received_at is not None else time.monotonic()
            if not (self.router.ready and self.bandit.policy.ready):
                # a first search before the preparation ended: its imports run on a worker thread
                # (never on the event loop), at most until the deadline's reserve; past it every
                # provider is skipped, and the reply still comes by the deadline
                left_s = (total_ms - deadline_reserve_ms(total_ms)) / 1000 - (time.monotonic() - start)
                if not await self._search_path_ready(left_s):
                    raise self.router.deadline_passed()
            deadline_ms = params.deadline_ms
            if received_at is not None:
                waited_ms = (time.monotonic() - received_at) * 1000
                deadline_ms = max(1, int(total_ms - waited_ms))
            out = await self.bandit.search(params.query, params.strategy, params.max_results, deadline_ms)
        finally:
            self._answered.set()
        if not escaped:
            sources, content, attempts = out.sources, out.content, out.attempts
        else:
            sources = [source_for_model(s) for s in out.sources]
            content = for_model(out.content) if out.content is not None else None
            attempts = [_outcome_for_model(a) for a in out.attempts]
        return SearchResult(
            search_id=out.search_id,
            strategy=out.strategy,  # type: ignore[arg-type]
            sources=sources,
            content=content,
            truncated=out.truncated,
            attempts=attempts,
            duration_ms=out.duration_ms,
            reward=round(out.reward, 6),
        )

    async def _route(self, query: str, max_results: int, deadline_ms: int | None = None) -> RouterResult:
        """One query through the router's chain (:func:`dsh_sidecar.router.web.route`: the router
        seed's rule for an answer with no sources). Raises
        :class:`~dsh_sidecar.router.AllProvidersFailed`."""
        return await route(self.router, query, max_results, deadline_ms)

    async def web_search(self, query: str, max_results: int) -> RouterResult:
        """One query through the router's chain, the first provider that answers (the router
        seed's ``web_search``: no strategy, no bandit; :func:`dsh_sidecar.router.web.web_search`),
        every provider text through :func:`~dsh_sidecar.escape.for_model` as :meth:`search`'s. A
        search whose providers all failed or answered empty raises the seed's aggregated error
        unless ``emptyResultsFallback`` is false, as :meth:`route_search`. Raises
        :class:`~dsh_sidecar.router.AllProvidersFailed`."""
        return await web_search(self.router, query, max_results)

    async def route_search(self, params: RouteSearchParams) -> RouteSearchResult:
        """``dsh/routeSearch``: one query through the router's chain (the search-router seed's
        semantics: no strategy, no reformulation, no bandit). A search whose providers all
        failed or answered empty raises the seed's aggregated error unless
        ``emptyResultsFallback`` is false (then the empty answer is the answer). Raises
        :class:`~dsh_sidecar.router.AllProvidersFailed`."""
        from dsh_protocol.models import DEFAULT_ROUTE_RESULTS

        from dsh_sidecar.router.cache import CACHED_OUTCOME

        started = time.monotonic()
        result = await self._route(params.query, params.max_results or DEFAULT_ROUTE_RESULTS, params.deadline_ms)
        return RouteSearchResult(
            sources=[source_for_model(s) for s in result.sources],
            content=for_model(result.content) if result.content is not None else None,
            truncated=result.truncated,
            provider=result.provider,
            cached=any(a.outcome == CACHED_OUTCOME for a in result.attempts),
            duration_ms=int((time.monotonic() - started) * 1000),
        )

    def search_plan(self, params: SearchPlanParams) -> SearchPlanResult:
        """``dsh/searchPlan``: the bandit chooses the arm and the queries; the harness runs them
        (over its own web seam) and reports them with ``dsh/searchReport``."""
        search_id, arm, queries, cap = self.bandit.plan(params.query, params.max_results)
        return SearchPlanResult(search_id=search_id, arm=arm, queries=queries, max_results=cap)  # type: ignore[arg-type]

    async def search_report(self, params: SearchReportParams) -> SearchReportResult:
        """``dsh/searchReport``: merge, reward, log and record a planned search (the harness's
        provider's texts through :func:`~dsh_sidecar.escape.for_model`, as :meth:`search`'s).
        Raises :class:`RequestError` naming ``searchId`` for an unknown or expired plan."""
        out = await self.bandit.report(params.search_id, params.runs, params.duration_ms)
        return SearchReportResult(
            search_id=params.search_id,
            sources=[source_for_model(s) for s in out.sources],
            content=for_model(out.content) if out.content is not None else None,
            truncated=out.truncated,
            reward=round(out.reward, 6) if out.reward is not None else None,
        )

    def search_feedback(self, params: SearchFeedbackParams) -> SearchFeedbackResult:
        """``dsh/searchFeedback``: re-credit a recent search with the answer-usage reward.

        Raises :class:`RequestError` naming ``searchId`` for an unknown or expired search.
        Writes the pending-feedback file under its lock: call it off the event loop."""
        return SearchFeedbackResult(reward=round(self.feedback(params.search_id, params.used_urls).reward, 6))

    def feedback(self, search_id: str, used_urls: list[str]) -> Recredit:
        """:meth:`search_feedback` with its whole outcome (the usage, the reward before and
        after: the MCP tool answers the usage). Raises :class:`RequestError` naming
        ``searchId``. Call it off the event loop."""
        return self.bandit.feedback(search_id, used_urls)

    def answer_feedback(self, answer: str) -> list[Recredit]:
        """Re-credit this sidecar's pending searches with whether a final answer's text cites
        their sources (a harness that sees the answer but not the search ids: Claude Code's
        Stop hook). Call it off the event loop."""
        return self.bandit.answer_feedback(answer)
