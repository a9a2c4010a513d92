"""The MCP server's one sidecar and its build (``mcp/server.py`` serves the tools on it).

The sidecar is built on a thread once the client lists the tools (or calls one first; at most
:data:`BUILD_AFTER_LIST_S` after the start), so ``initialize`` and ``tools/list`` never wait for
its imports. The build makes the router first: a ``web_search`` that comes before the rest is
built answers on it (:meth:`Holder.search_router`), and the rest (the workspace and the suggester
code, :data:`BUILD_MODULES`) is imported in steps that yield to such a search
(:class:`BuildGate`). :class:`Holder` is what every tool call reaches (the build, the router, the
hooks' per-session state); :class:`Lifetime` closes the sidecar once, whichever comes first: the
session's end or a signal.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Final, TypeVar

import anyio
from mcp.server.mcpserver.exceptions import ToolError

from dsh_sidecar.errors import ConfigError
from dsh_sidecar.mcp.hooks import ANONYMOUS_SESSION, OwedSections, TurnCounter

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from dsh_sidecar.config import SidecarConfig
    from dsh_sidecar.router import Router
    from dsh_sidecar.sidecar import Sidecar

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Longest wait (s) of the sidecar's build for the client's tool list, its first tool call or
#: the session's end, whichever comes first: the build's imports hold the GIL in stretches, and
#: a client starts its session (and sends its first hook call) only once the tools are listed.
BUILD_AFTER_LIST_S: Final = 1.0
#: Longest wait (s), in all, of the build's later part (the workspace and the suggester, after
#: the router) for the searches that run on the router alone meanwhile: its imports would take
#: the GIL from their exchange (each wake-up of the event loop waiting a switch interval for it).
YIELD_TO_SEARCH_S: Final = 2.0
#: Longest wait (s) of a second closing for the first closing's state writes (past Claude Code's
#: SIGKILL, 0.5 s after its SIGINT: what the first writes within that window counts).
STATE_WAIT_S: Final = 1.0
#: The build's later part, imported one step at a time in this order (each a few ms of CPU),
#: yielding between steps to a search on the router (:class:`BuildGate`); ``dsh_sidecar.sidecar``
#: imports the rest. A name that is gone is skipped (that import then reports a real failure).
BUILD_MODULES: Final = (
    "dsh_protocol.models",
    "dsh_sidecar.state.fleet",
    "dsh_sidecar.bandit.store",
    "dsh_sidecar.workspace.files",
    "dsh_sidecar.workspace.graph",
    "dsh_sidecar.workspace.manifests",
    "dsh_sidecar.workspace.facts",
    "dsh_sidecar.suggester.packs",
    "dsh_sidecar.suggester.parse",
    "dsh_sidecar.suggester.evidence",
    "dsh_sidecar.suggester.knowledge",
    "dsh_sidecar.suggester.context",
    "dsh_sidecar.suggester.triggers",
    "dsh_sidecar.suggester.filters",
    "dsh_sidecar.suggester.pipeline",
    "dsh_sidecar.suggester.service",
    "dsh_sidecar.workspace.content",
    "dsh_sidecar.workspace.projection",
)


class SessionEnded(Exception):
    """The session ended before the sidecar's build started: none was built."""


class SidecarUnavailable(ToolError):
    """The sidecar's build failed: the tool error of every call that needs it, naming why
    (a :class:`~dsh_sidecar.errors.ConfigError`'s key and reason; else the error's type and
    where its details are), never a value."""

    @classmethod
    def of(cls, exc: BaseException) -> SidecarUnavailable:
        if isinstance(exc, ConfigError):
            return cls(f"dsh-search could not start: invalid config: {exc}")
        return cls(f"dsh-search could not start ({type(exc).__name__}); the server's log (stderr) has the details")


class BuildGate:
    """Lets the later part of the sidecar's build (the workspace and the suggester, after the
    router) yield to the searches that run on the router alone: between its steps it waits
    while one runs (:meth:`searching`), unless a call needs the sidecar (:meth:`need`), at most
    :data:`YIELD_TO_SEARCH_S` in all. Python runs one thread at a time: the build's imports
    beside a search stretch its exchange, so the call that waits for nothing goes first."""

    def __init__(self, search_s: float = YIELD_TO_SEARCH_S) -> None:
        self.search_s = search_s
        self._changed = threading.Condition()
        self._needed = False
        self._searches = 0
        self._deadline: float | None = None

    def need(self) -> None:
        """A call needs the sidecar: the build no longer yields."""
        with self._changed:
            self._needed = True
            self._changed.notify_all()

    @contextmanager
    def searching(self) -> Iterator[None]:
        """A call on the router alone runs."""
        with self._changed:
            self._searches += 1
        try:
            yield
        finally:
            with self._changed:
                self._searches -= 1
                self._changed.notify_all()

    def import_rest(self, wait: bool = True) -> None:
        """Import :data:`BUILD_MODULES` one step at a time (the build's thread), and with
        ``wait`` yield to a search before each step and after the last (:meth:`wait`)."""
        for name in BUILD_MODULES:
            if wait:
                self.wait()
            with suppress(ImportError):  # gone: the sidecar's own import says what fails
                importlib.import_module(name)
        if wait:
            self.wait()

    def wait(self) -> None:
        """Block (the build's thread, between two steps) while a search runs."""
        with self._changed:
            if self._deadline is None:
                self._deadline = time.monotonic() + self.search_s
            left = self._deadline - time.monotonic()
            self._changed.wait_for(lambda: self._needed or not self._searches, max(0.0, left))


class Holder:
    """The one sidecar of this server (being built on a thread: :meth:`get` awaits it), the
    router its build makes first (:meth:`search_router`), and the per-session turn counter of
    the hooks."""

    def __init__(
        self,
        built: asyncio.Future[Sidecar],
        start: threading.Event | None = None,
        router: asyncio.Future[Router] | None = None,
        gate: BuildGate | None = None,
    ) -> None:
        self.built = built
        self.start = start if start is not None else threading.Event()
        self.turns = TurnCounter()
        self.router = router
        self.gate = gate if gate is not None else BuildGate()
        #: sessions whose sticky section is owed (their session_start came during the build)
        self.owed = OwedSections()

    async def section(self, sidecar: Sidecar, session_id: str | None) -> str | None:
        """The sticky section of ``session_id`` for a ``session_start``, never held for the
        workspace build: it waits for the index at most what is left of the first-call window
        of this start (``suggester.firstCallWaitMs``, the first note's bound, shared with the
        task lead: ``sidecar/owed.py``); without the index the answer goes without the
        section, which is then owed (:class:`OwedSections`)."""
        key = session_id or ANONYMOUS_SESSION
        if sidecar.section_pending() and not await sidecar.prompt_index.ready():
            self.owed.owe(key)
            return None
        self.owed.paid(key)
        section = sidecar.assemble_section(session_id, wait_s=0.0).section
        return section.text if section else None

    def owed_section(self, sidecar: Sidecar, session_id: str) -> str | None:
        """The section owed to ``session_id`` (``post_tool_use``), once the index is built."""
        if not self.owed.owed(session_id) or not sidecar.prompt_index.whole():
            return None
        self.owed.paid(session_id)
        section = sidecar.assemble_section(session_id, wait_s=0.0).section
        return section.text if section else None

    async def get(self) -> Sidecar:
        """The sidecar, once built (its build started now if it still waits for the tool list;
        a failed build raises :class:`SidecarUnavailable` naming its error, in every call)."""
        self.start.set()
        self.gate.need()
        return await _built(self.built)

    async def search_router(self) -> Router:
        """The router: the sidecar's once it is built (a reconfiguration may have replaced the
        first), else the one the build made first: a search needs nothing else, and the build's
        later part yields to it (:class:`BuildGate`). A build that failed after it made the
        router leaves that router answering; one that failed before raises
        :class:`SidecarUnavailable`, as :meth:`get`."""
        if self.router is None or (self.built.done() and not self._failed()):
            return (await self.get()).router
        self.start.set()
        return await _built(self.router)

    def _failed(self) -> bool:
        """Whether the build ended without a sidecar (an error; the session ended first)."""
        return self.built.cancelled() or self.built.exception() is not None


async def _built(future: asyncio.Future[T]) -> T:
    """What the build gives ``future``, shielded (a cancelled call leaves the build running); a
    failed build raises :class:`SidecarUnavailable` naming its error (the session's end and a
    cancellation pass through)."""
    try:
        return await asyncio.shield(future)
    except (SessionEnded, asyncio.CancelledError):
        raise
    except Exception as exc:
        raise SidecarUnavailable.of(exc) from None


class Lifetime:
    """The live :class:`Sidecar` of a served MCP session and its one closing (``shutdown``,
    then ``aclose_state``: state flushed, then ``aquiesce``), whichever comes first: the
    session's end or a signal. A closing while the build still runs (or has not started) does
    not wait for it: nothing was decided yet, and :attr:`not_ready` says so once (the ledger's
    ``abstained not-ready``, as ``serve``'s ``SidecarServer.end_before_start``); it waited for
    the whole build, and a session ended within the start left no ledger line."""

    def __init__(self) -> None:
        self.sidecar: Sidecar | None = None
        self._closing = False
        #: set once the closing of the sidecar has written its state (:meth:`close`)
        self.state_closed = asyncio.Event()
        self.building: asyncio.Future[Sidecar] | None = None
        #: Set to start a build that waits for the tool list (:data:`BUILD_AFTER_LIST_S`).
        self.start = threading.Event()
        #: Set when the session ended: a build that has not started never does.
        self.ended = threading.Event()
        #: What a session that ends before the sidecar is built says, once (``build_server``:
        #: the suggester's ``abstained not-ready`` line when its config turns it on).
        self.not_ready: Callable[[], None] | None = None

    async def close(self) -> None:
        """Flush and close the sidecar (once; shielded from cancellation). A closing while the
        first still runs (a signal during the session's end) waits for the first to have written
        the state (at most :data:`STATE_WAIT_S`), not for the workspace build to stop: a signal's
        exit ends the process right after (``serve_until_signal``)."""
        with anyio.CancelScope(shield=True):
            self.ended.set()  # a build still waiting for the tool list never starts
            self.start.set()
            building, self.building = self.building, None
            if building is not None and not building.done():
                self._end_before_start(building)
                return
            if building is not None:
                with suppress(Exception):  # a failed build left nothing to close
                    self.sidecar = await asyncio.shield(building)
            sidecar, self.sidecar = self.sidecar, None
            if sidecar is None:
                if self._closing:  # another closing runs: its state written first, not its build stopped
                    with suppress(TimeoutError):
                        await asyncio.wait_for(self.state_closed.wait(), STATE_WAIT_S)
                return
            self._closing = True
            sidecar.shutdown()
            await sidecar.aclose_state()
            self.state_closed.set()
            await sidecar.aquiesce()

    def _end_before_start(self, building: asyncio.Future[Sidecar]) -> None:
        """The session ended while ``building`` still runs: it is not waited for (its outcome
        is retrieved when it comes, for nobody), and :attr:`not_ready` is said once."""
        building.add_done_callback(lambda done: done.cancelled() or done.exception())
        say, self.not_ready = self.not_ready, None
        if say is not None:
            try:
                say()
            except Exception:  # the end goes on: a ledger that cannot be written is said in the log
                log.warning("the session's end during the build could not be written", exc_info=True)


def not_ready_line(log_file: str | None, env: Mapping[str, str]) -> None:
    """The suggester's ``abstained not-ready`` line in its ledger (``logFile``, else under the
    ``DSH_HOME`` of ``env``): the session ended before the sidecar was built."""
    from dsh_sidecar.config import dsh_home
    from dsh_sidecar.suggester import ledger

    ledger.write_not_ready(log_file, dsh_home(env))


def build_on_thread(
    loop: asyncio.AbstractEventLoop,
    build: Callable[[], Sidecar],
    start: threading.Event | None = None,
    wait_s: float = 0.0,
    ended: threading.Event | None = None,
) -> asyncio.Future[Sidecar]:
    """Run ``build`` on a thread, once ``start`` is set (or ``wait_s`` has passed) unless
    ``ended`` is set by then; the future (of ``loop``) gets its sidecar or its error."""
    built: asyncio.Future[Sidecar] = loop.create_future()

    def settle(sidecar: Sidecar | None, exc: BaseException | None) -> None:
        if built.done():
            return
        if exc is not None:
            built.set_exception(exc)
        else:
            built.set_result(sidecar)  # type: ignore[arg-type]

    def run() -> None:
        if start is not None:
            start.wait(wait_s)
        if ended is not None and ended.is_set():  # the session is over: nothing to build
            with suppress(RuntimeError):
                loop.call_soon_threadsafe(settle, None, SessionEnded())
            return
        try:
            result: tuple[Sidecar | None, BaseException | None] = (build(), None)
        except Exception as exc:  # every call reports it; the server keeps answering
            log.error("the sidecar could not be built: %s", type(exc).__name__, exc_info=True)
            result = (None, exc)
        with suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, *result)

    threading.Thread(target=run, name="dsh-sidecar-build", daemon=True).start()
    return built


def search_router(config: SidecarConfig, workspace: Path | None, env: Mapping[str, str]) -> Router:
    """The router the sidecar of ``config`` on ``workspace`` gets (its docs root: the
    workspace, unless the sidecar refuses that folder), built before the rest of it (its
    imports are the search path's alone)."""
    from dsh_sidecar.router import Router
    from dsh_sidecar.workspace import fsguard

    refused = workspace is None or fsguard.root_refusal(workspace, env.get("HOME")) is not None
    return Router.from_config(config.router, env, docs_root=None if refused else workspace)


def publish(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Router], router: Router) -> None:
    """Give ``future`` (of ``loop``) the router, from the build's thread (or the loop's)."""

    def settle() -> None:
        if not future.done():
            future.set_result(router)

    with suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
        loop.call_soon_threadsafe(settle)


def follow_build(built: asyncio.Future[Sidecar], router: asyncio.Future[Router]) -> None:
    """Settle ``router`` from the build's end when the build ended before it published one (it
    failed, or the session ended first): the build's error, or the built sidecar's router."""

    def settle(done: asyncio.Future[Sidecar]) -> None:
        if router.done():
            return
        if done.cancelled():
            router.cancel()
        elif (exc := done.exception()) is not None:
            router.set_exception(exc)
            router.exception()  # retrieved: nobody may ask for it
        else:
            router.set_result(done.result().router)

    built.add_done_callback(settle)
