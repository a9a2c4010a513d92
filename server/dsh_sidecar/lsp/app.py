"""The pygls server: one ``SidecarServer`` instance, its lifecycle, and how it runs on stdio."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
import uuid
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh_protocol import ErrorCode
from lsprotocol import types as lsp
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from dsh_sidecar import __version__
from dsh_sidecar.escape import EscapingFilter
from dsh_sidecar.lsp.framing import FramingLost
from dsh_sidecar.lsp.pygls_adapter import PyglsPeer
from dsh_sidecar.lsp.signals import ignore_sigterm, install_sigterm_callback, install_sigterm_exit
from dsh_sidecar.lsp.transport import (
    FdWriter,
    StdoutClosed,
    protect_stdout,
    raw_params_converter,
    reopen_std_fds,
    serve,
)
from dsh_sidecar.redact import RedactingFilter, Redactor

if TYPE_CHECKING:  # the composition root is imported after the ``initialize`` reply (cold start)
    from dsh_sidecar.config import SidecarConfig
    from dsh_sidecar.sidecar import Sidecar

log = logging.getLogger(__name__)

#: JSON-RPC/LSP codes of errors caused by the request, not by the server (JSON-RPC 2.0 spec,
#: LSP ``ServerNotInitialized`` -32002, ``RequestCancelled`` -32800; -32001 the sidecar's
#: "all providers failed", already carried by the reply).
CLIENT_ERROR_CODES = frozenset({-32700, -32600, -32601, -32602, -32002, -32800, -32001})
#: JSON-RPC 2.0 "Internal error".
INTERNAL_ERROR_CODE = int(ErrorCode.INTERNAL_ERROR)
#: Longest error text written to the log, characters (a 1 MB bad param never floods stderr).
MAX_LOGGED_ERROR_CHARS = 500


#: The text of every internal-error reply: the exception itself goes to stderr, redacted.
INTERNAL_ERROR_MESSAGE = "Internal error: the sidecar logged the details to its stderr"


def held(writer: Any) -> contextlib.AbstractContextManager[None]:
    """:meth:`FdWriter.holding` on the server's own writer; nothing on any other (tests)."""
    return writer.holding() if isinstance(writer, FdWriter) else contextlib.nullcontext()


class SidecarProtocol(LanguageServerProtocol):
    """pygls' protocol, except that error replies never carry a traceback or raw exception
    text (docs/SECURITY.md, class 12): an internal error (-32603) is answered with
    :data:`INTERNAL_ERROR_MESSAGE` and no ``data``; the server's ``report_server_error`` has
    logged the exception, redacted and capped, to stderr."""

    #: Set once ``initialize`` has been answered; a second one is refused (``transport.dispatch``).
    initialized_once: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Requests in flight that ``shutdown`` answers instead of cancelling, by their request's
        #: own future (never by the id the client chose: a client may reuse an id while a request
        #: under it waits): the answer they give without what they wait for (``dsh/status``
        #: without the fleet store's read). Filled by :meth:`answering_at_shutdown`.
        self.answer_at_shutdown: dict[Any, Callable[[], Any]] = {}
        #: Ids of the requests this server sent the client and still awaits the response to
        #: (``window/workDoneProgress/create``): pygls files them in the one table it files the
        #: client's own requests in, so only a response under one of these ids is the client's.
        self.awaiting_responses: set[Any] = set()
        #: The future of a ``shutdown`` being handled, until its reply is written: an ``exit``
        #: meanwhile is handled once it is (:meth:`lsp_exit`, :meth:`_shutdown_answered`).
        self.shutdown_pending: Any = None
        #: Whether an ``exit`` came while :attr:`shutdown_pending` was set.
        self.exit_waiting = False
        #: Set while no ``shutdown`` is in progress (:meth:`shutdown_answered`).
        self._answered = asyncio.Event()
        self._answered.set()

    def send_request(
        self, method: str, params: Any | None = None, callback: Any | None = None, msg_id: Any | None = None
    ) -> Any:
        """pygls' ``send_request``, its id kept in :attr:`awaiting_responses`."""
        msg_id = str(uuid.uuid4()) if msg_id is None else msg_id
        self.awaiting_responses.add(msg_id)
        return super().send_request(method, params, callback, msg_id)

    def _handle_response(self, msg_id: Any, result: Any | None = None, error: ResponseError | None = None) -> None:
        """pygls' handling of a response from the client, for a request this server sent only.
        A response under the id of one of the client's own requests in flight resolved that
        request's future in pygls' table: the server answered the request with what the client
        sent as a response."""
        if msg_id not in self.awaiting_responses:
            log.warning("dropping a response to no request of this server")
            return
        self.awaiting_responses.discard(msg_id)
        super()._handle_response(msg_id, result, error)

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Generator[Any, Any, lsp.InitializeResult]:
        """pygls' ``initialize``, once the workspace root is known to name a folder
        (:func:`workspace_root`): pygls builds its own workspace from ``rootUri`` before the
        sidecar's handler runs, and a URI it cannot parse (an invalid IPv6 host) failed there as
        an internal error."""
        try:
            workspace_root(params)
        except InvalidRoot as exc:
            raise JsonRpcInvalidParams(message=str(exc)) from None
        return (yield from super().lsp_initialize(params))

    @contextlib.contextmanager
    def answering_at_shutdown(self, answer: Callable[[], Any]) -> Generator[None, None, None]:
        """While in this block, a ``shutdown`` answers the request being handled with
        ``answer()`` instead of cancelling it. For a generator handler, entered at its first
        step (before its first ``yield``): pygls has just filed that request's future under its
        id, which is how the entry is keyed to the request itself and not to the id."""
        msg_id = self.msg_id
        future = self._request_futures.get(msg_id) if msg_id is not None else None
        if future is None or future.done():
            yield
            return
        self.answer_at_shutdown[future] = answer
        try:
            yield
        finally:
            self.answer_at_shutdown.pop(future, None)

    def _run_generator(self, future: Any, *, gen: Generator[Any, Any, Any], result_future: Any) -> None:
        """pygls' step of a generator handler (``dsh/status`` yields the fleet store's read),
        after the finished step's own entry leaves the table of requests in flight: pygls files
        each step there under a fresh id that no reply ever removes, one entry a call."""
        if future is not None:
            futures = self._request_futures
            for key in [k for k, f in futures.items() if f is future]:
                del futures[key]
            if result_future.done():  # ``shutdown`` answered (or cancelled) the request meanwhile
                gen.close()
                return
            if future.cancelled():  # ``shutdown`` cancelled the yielded wait: its request is cancelled too
                result_future.cancel()
                gen.close()
                return
        super()._run_generator(future, gen=gen, result_future=result_future)

    @lsp_method(lsp.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls' ``shutdown``, cancelling the requests in flight over a copy of their table:
        cancelling a generator handler's future (a waiting ``dsh/postExecute``) answers it at
        once, which removes it from the table (pygls walked the table itself: -32603, exit 1).
        A request of :attr:`answer_at_shutdown` is answered instead, first (a ``dsh/status`` sent
        just before the exit, waiting for the fleet store's read, says what this process knows).
        Until it is answered, an ``exit`` waits for it (:attr:`shutdown_pending`)."""
        current_id = self.msg_id
        pending = self._request_futures.get(current_id) if current_id is not None else None
        if pending is not None and not pending.done():
            # added after pygls' reply callback (added when the request was filed): run after it
            self.shutdown_pending = pending
            self._answered.clear()
            pending.add_done_callback(self._shutdown_answered)
        for future, answer in list(self.answer_at_shutdown.items()):  # before the sidecar shuts down
            if not future.done():
                try:
                    future.set_result(answer())
                except Exception as exc:  # answered as the handler's own error would be
                    future.set_exception(exc)
        self.answer_at_shutdown.clear()
        if (user_handler := self.fm.features.get(lsp.SHUTDOWN)) is not None:
            yield user_handler, args, None
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True

    @lsp_method(lsp.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls' ``exit``, once a ``shutdown`` being handled is answered: ``shutdown`` awaits a
        running build off the loop, and an ``exit`` sent right after it (or while it waits) ended
        the process before its reply was written, with exit code 1. It is handled again once that
        reply is written (:meth:`_shutdown_answered`)."""
        if self.shutdown_pending is not None:
            self.exit_waiting = True
            return None
        return (yield from super().lsp_exit(*args))

    def _shutdown_answered(self, _future: Any) -> None:
        """``shutdown``'s reply is written (pygls' callback ran before this one): an ``exit``
        that came meanwhile is handled now."""
        self.shutdown_pending = None
        self._answered.set()
        waiting, self.exit_waiting = self.exit_waiting, False
        if waiting:
            self._handle_notification(lsp.EXIT, None)

    async def shutdown_answered(self) -> None:
        """Return once no ``shutdown`` is in progress (its reply written; an ``exit`` that waited
        for it is handled then): the end of the input right after ``shutdown`` and ``exit`` (a
        client that writes both and closes its pipe) ended the serve loop while ``shutdown``
        waited for the build, which was then cancelled, and the process exited 1."""
        await self._answered.wait()

    def notify(self, method: str, params: Any | None = None) -> None:
        """pygls' ``notify``; on the :class:`FdWriter` the frame may wait (≤ 1 ms) to share a
        write with the reply that follows it."""
        with held(self.writer):
            super().notify(method, params)

    def _send_response(self, msg_id: Any, result: Any | None = None, error: ResponseError | None = None) -> None:
        if error is None and type(result) is dict and msg_id not in self._result_types:
            # a dsh/* reply (a plain JSON object, no LSP result type): the same JSON pygls writes,
            # without its converter's pass over every value of the result
            PyglsPeer(self).send_raw({"id": msg_id, "jsonrpc": "2.0", "result": result})
            return
        if error is not None:
            if error.code == INTERNAL_ERROR_CODE:
                error = ResponseError(code=INTERNAL_ERROR_CODE, message=INTERNAL_ERROR_MESSAGE)
            elif isinstance(error.data, dict) and "traceback" in error.data:
                error = ResponseError(code=error.code, message=error.message)
        super()._send_response(msg_id, result, error)


class SidecarServer(LanguageServer):
    """The language server that hosts one :class:`Sidecar`.

    ``initialize`` validates the config and answers (an ``initialize`` without options is
    checked without pydantic, :mod:`dsh_sidecar.options`, and its config is validated with the
    build); the :class:`Sidecar` itself (the router, the bandit, the suggester and their imports,
    pydantic's included) is built right after the reply on a ``dsh-sidecar-build`` thread
    (:meth:`defer_sidecar`): on a loaded machine that is most of a second of imports, which on
    the event loop held a ``$/cancelRequest`` sent meanwhile as long. A coroutine handler waits
    for it with :meth:`sidecar_ready` (the loop serves other messages meanwhile); reading
    :attr:`sidecar` (a plain handler) waits for a build still running, or runs one still
    pending, so no request ever sees a half-initialised server.
    """

    protocol: SidecarProtocol  # built from ``protocol_cls`` below

    def __init__(self) -> None:
        super().__init__(
            "dsh-search-sidecar", __version__, converter_factory=raw_params_converter, protocol_cls=SidecarProtocol
        )
        self._sidecar: Sidecar | None = None
        #: The deferred construction of the sidecar (set by ``initialize``, run once; cleared
        #: when it has run, under :attr:`_build_lock`, which the build holds while it runs).
        self._build: Callable[[], Sidecar] | None = None
        self._build_lock = threading.Lock()
        #: Set (on the loop) when a build started by :meth:`defer_sidecar` has ended.
        self._built: asyncio.Event | None = None
        #: What :meth:`after_build` deferred to the build's end.
        self._after_build: list[Callable[[Sidecar | None], None]] = []
        #: Why the deferred construction failed (re-raised to every request that needs the sidecar).
        self.build_error: BaseException | None = None
        self.env: dict[str, str] = dict(os.environ)
        self.redactor = Redactor()
        #: The raw ``dsh-search serve --config`` document, under the client's initializationOptions.
        self.config_defaults: Any = None
        #: When set (``dsh-search serve``), the raw document of the config files discovered for a
        #: workspace root (the project file known only at ``initialize``; ``dsh_sidecar.cli.discovery``),
        #: used instead of :attr:`config_defaults`.
        self.config_for_root: Callable[[Path | None], Any] | None = None
        #: The ids of the router's chain as ``initialize`` resolved it (the attempts of a search
        #: whose deadline passes while the sidecar is still being built).
        self.search_chain: tuple[str, ...] = ()
        #: The config ``initialize`` validated (``None``: every default, or said already), for a
        #: session that ends during the build (:meth:`end_before_start`).
        self.start_config: SidecarConfig | None = None

    @property
    def sidecar(self) -> Sidecar | None:
        """The sidecar, ``None`` before ``initialize``; completes a deferred build first."""
        if self._build is not None:
            self.finish_sidecar()
        return self._sidecar

    @sidecar.setter
    def sidecar(self, value: Sidecar | None) -> None:
        self._build = None
        self._sidecar = value

    def defer_sidecar(self, build: Callable[[], Sidecar]) -> None:
        """Build the sidecar with ``build()`` on a ``dsh-sidecar-build`` thread started as the
        event loop's next callback (after the ``initialize`` reply is written), or when
        :attr:`sidecar` is first read, whichever comes first. Without a running loop it is
        built at once."""
        self._build = build
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.finish_sidecar()
            return
        self._built = asyncio.Event()

        def run() -> None:
            try:
                self.finish_sidecar()
            finally:
                with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                    loop.call_soon_threadsafe(self._build_ended)

        # started as the loop's next callback: after the initialize reply is written (the
        # thread's imports would otherwise compete with writing it)
        loop.call_soon(threading.Thread(target=run, name="dsh-sidecar-build", daemon=True).start)

    def _build_ended(self) -> None:
        """On the loop, once the build's thread has ended: wake the waiters, run what waited."""
        if self._built is not None:
            self._built.set()
        waiting, self._after_build = self._after_build, []
        for fn in waiting:
            self._run_after_build(fn)

    def after_build(self, fn: Callable[[Sidecar | None], None]) -> None:
        """Call ``fn(sidecar)`` (on the loop) once the sidecar is built: now when it is (or none
        is pending), else when its build's thread ends; never waits for it."""
        if self._build is None or self._built is None:
            self._run_after_build(fn)
        else:
            self._after_build.append(fn)

    def _run_after_build(self, fn: Callable[[Sidecar | None], None]) -> None:
        try:
            fn(self.sidecar)
        except Exception as exc:
            self.report_server_error(exc, getattr(fn, "__name__", "after_build"))

    def end_before_start(self) -> bool:
        """At the session's end: whether the sidecar's build still runs (or never started). Then
        it is not waited for, and the suggester's ledger (when the config turns it on) says so
        once: ``abstained not-ready`` (a harness that ends its session within the start would
        otherwise leave no line at all)."""
        if not self.building():
            return False
        config, self.start_config = self.start_config, None  # said once
        if config is not None and config.suggester.enabled:
            from dsh_sidecar.config import dsh_home
            from dsh_sidecar.suggester import ledger

            # one line a session: the start's own lines (its activation's, buffered until the exit
            # flushes them) are dropped
            ledger.write_not_ready(config.suggester.log_file, dsh_home(self.env))
        return True

    def building(self) -> bool:
        """Whether the sidecar's build is running on its thread (or about to start)."""
        return self._built is not None and self._build is not None

    async def built_within(self, timeout_s: float | None) -> bool:
        """Whether no build is running, or the running one ends within ``timeout_s`` (awaited
        off the loop as :meth:`sidecar_ready`; ``None``: however long it takes)."""
        built = self._built
        if built is None or self._build is None:
            return True
        try:
            await asyncio.wait_for(built.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    async def sidecar_ready(self) -> Sidecar | None:
        """:attr:`sidecar`, awaiting a build still running on its thread without holding the
        event loop (a ``$/cancelRequest`` or another request is served meanwhile)."""
        built = self._built
        if built is not None and self._build is not None:
            await built.wait()
        return self.sidecar

    def finish_sidecar(self) -> None:
        """Run the pending build, if any, or wait for the one running (idempotent). A failure
        is logged (redacted, ERROR) and kept in :attr:`build_error`."""
        with self._build_lock:
            build = self._build
            if build is None:
                return
            try:
                self._sidecar = build()
            except Exception as exc:
                self.build_error = exc
                self.report_server_error(exc, "initialize")
            finally:
                self._build = None

    def window_log_message(self, params: lsp.LogMessageParams) -> None:
        """pygls' ``window/logMessage``: the same JSON, built here rather than by its converter,
        and held (≤ 1 ms) to share a write with the reply after it (:class:`FdWriter`)."""
        self._send_log_message(int(params.type), params.message)

    def _send_log_message(self, type_: int, text: str) -> None:
        """:meth:`window_log_message` of a level and a line, without the params object."""
        message = {
            "params": {"type": type_, "message": text},
            "method": lsp.WINDOW_LOG_MESSAGE,
            "jsonrpc": "2.0",
        }
        with held(self.protocol.writer):
            PyglsPeer(self.protocol).send_raw(message)

    def send_log_line(self, line: str, level: lsp.MessageType = lsp.MessageType.Info) -> None:
        """Send one seed/ledger line as ``window/logMessage`` (byte-exact), as the config's
        ``logMessages`` allows (``all``, ``decisions``: ``[bandit-search]`` lines only, ``none``)."""
        wanted = self._sidecar.config.log_messages if self._sidecar is not None else "all"
        if wanted == "none":
            return
        if wanted == "decisions":
            from dsh_sidecar.bandit.core import LOG_PREFIX as BANDIT_LOG_PREFIX

            if not line.startswith(BANDIT_LOG_PREFIX):
                return
        try:
            self._send_log_message(int(level), line)  # (no LogMessageParams: its validation, a line)
        except Exception:  # no transport (tests, shutdown): the line is on stderr/ledger already
            log.debug("could not send window/logMessage")

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log server errors to stderr only (never ``window/showMessage`` popups).

        A request the client got wrong (bad params, unknown method, before ``initialize``) or a
        search whose providers all failed is already answered with an error reply: logged at
        INFO. Anything else is the server's fault: ERROR. The text is redacted and capped.
        """
        code = getattr(error, "code", None)
        level = logging.INFO if code in CLIENT_ERROR_CODES else logging.ERROR
        text = self.redactor(str(error))
        if len(text) > MAX_LOGGED_ERROR_CHARS:
            text = text[:MAX_LOGGED_ERROR_CHARS] + "…"
        log.log(level, "%s: %s", getattr(source, "__name__", source), text)


#: Longest workspace path accepted, bytes (Linux ``PATH_MAX``, the terminating NUL included).
MAX_ROOT_PATH_BYTES = 4096
#: Longest name of one folder on the workspace path, bytes (``NAME_MAX``).
MAX_ROOT_NAME_BYTES = 255


class InvalidRoot(ValueError):
    """An ``initialize`` whose workspace URI or path cannot name a folder: answered -32602 with
    a message naming the field (``rootUri``, ``workspaceFolders[0].uri``, ``rootPath``) and
    never echoing the value."""


def _check_root_chars(field: str, text: str) -> None:
    if "\x00" in text:
        raise InvalidRoot(f"{field}: the path contains a NUL character")
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        raise InvalidRoot(f"{field}: the path is not valid Unicode (a lone surrogate)")


def _check_root_path(field: str, path: str) -> None:
    _check_root_chars(field, path)
    raw = os.fsencode(path)
    if len(raw) >= MAX_ROOT_PATH_BYTES:
        raise InvalidRoot(f"{field}: the path is longer than {MAX_ROOT_PATH_BYTES - 1} bytes")
    if any(len(name) > MAX_ROOT_NAME_BYTES for name in raw.split(b"/")):
        raise InvalidRoot(f"{field}: a folder name on the path is longer than {MAX_ROOT_NAME_BYTES} bytes")


def _root_of_uri(field: str, uri: str) -> Path | None:
    from urllib.parse import unquote_to_bytes, urlsplit

    _check_root_chars(field, uri)  # a raw NUL or a lone surrogate, as written
    try:
        parts = urlsplit(uri)
    except ValueError:  # an invalid IPv6 host, …
        raise InvalidRoot(f"{field}: not a valid URI") from None
    if parts.scheme.lower() == "file":
        try:
            unquote_to_bytes(parts.path).decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidRoot(f"{field}: the path is not UTF-8 once percent-decoded") from None
    path = to_fs_path(uri)
    if not path:  # not a file: URI (untitled:, a remote scheme): no workspace folder
        return None
    _check_root_path(field, path)  # %00, or a length the decoding reached
    return Path(path)


def workspace_root(params: lsp.InitializeParams) -> Path | None:
    """The workspace folder from ``workspaceFolders[0]``, ``rootUri`` or ``rootPath``.

    Raises :class:`InvalidRoot` naming the field when it cannot name a folder: a NUL character
    (``%00`` too), a lone surrogate, a ``file:`` path that is not UTF-8 once percent-decoded, a
    path longer than the system takes (such a root was accepted, then failed ``dsh/status``
    with an internal error); a URI of another scheme is no workspace (``None``)."""
    if params.workspace_folders:
        return _root_of_uri("workspaceFolders[0].uri", params.workspace_folders[0].uri)
    if params.root_uri:
        return _root_of_uri("rootUri", params.root_uri)
    if params.root_path:
        _check_root_path("rootPath", params.root_path)
        return Path(params.root_path)
    return None


def configure_logging(redactor: Redactor, level: str = "WARNING") -> None:
    """Log to stderr only, through the secret-redacting filter; pygls kept quiet."""
    with contextlib.suppress(StdoutClosed):  # run_stdio reports it
        reopen_std_fds()  # a closed stderr or stdin must not make logging or serving crash
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(redactor))
    handler.addFilter(EscapingFilter())  # workspace names cannot forge a log line
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.WARNING))
    logging.getLogger("pygls").setLevel(logging.WARNING)
    # pygls logs whole params (a 1 MB query, a secret in a tool input) with every handler
    # exception; report_server_error logs one redacted, capped line instead.
    logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.CRITICAL)
    logging.getLogger("httpx").setLevel(logging.WARNING)


def run_stdio(server: SidecarServer) -> int:
    """Serve JSON-RPC on stdin/stdout until ``exit``, EOF, SIGTERM or SIGHUP; return the exit
    code (1 when stdout is closed, at start or by the reader while serving: nothing could be
    answered). The state is flushed before it returns; from then on SIGTERM is ignored
    (:mod:`dsh_sidecar.lsp.signals`): the process is ending."""
    try:
        reopen_std_fds()  # whatever stdin is, including a closed descriptor
    except StdoutClosed as exc:
        log.error("stopping: %s", exc)
        return 1
    channel = protect_stdout()
    writer = FdWriter(channel, redact=server.redactor.redact_bytes)
    server.protocol.set_writer(writer)
    code = 0

    # a harness's teardown may SIGTERM its children before (or while) it sends shutdown/exit
    # (DeepSeek Harness's child-process teardown does): treat it as `exit`, flushing state below
    # until the loop takes SIGTERM over in main() (`dsh-search serve` ended the process at once
    # on a SIGTERM during its start, before this)
    install_sigterm_exit()
    try:
        asyncio.run(_serve_until_stopped(server, writer))
    except SystemExit as exc:  # the LSP `exit` notification
        code = exc.code if isinstance(exc.code, int) else 0
    except FramingLost as exc:
        log.error("stopping: %s", exc)
        code = 1
    except KeyboardInterrupt:
        code = 130
    finally:
        ignore_sigterm()  # ending already: a SIGTERM must not cut the flush short (nor kill it, -15)
        if writer.lost:
            code = 1  # as for a stdout closed at start: nothing could be answered
        # a build still running is not waited for (said in the ledger: end_before_start)
        if not server.end_before_start() and server.sidecar is not None:
            server.sidecar.shutdown()  # flush (idempotent; never raises), also after EOF, SIGTERM, SIGHUP
            with contextlib.suppress(Exception):
                asyncio.run(server.sidecar.aclose())
        writer.close()
    return code


async def _serve_until_stopped(server: SidecarServer, writer: FdWriter) -> None:
    """Serve on stdin until EOF, ``exit``, SIGHUP, SIGTERM or a lost stdout (then cancelled)."""
    # SIGHUP (the harness's terminal or parent went away) stops serving the same way EOF
    # does, so run_stdio's flush runs and nothing learned is lost (docs/SECURITY.md, class 9);
    # SIGTERM is handled as `exit` (run_stdio) until the loop takes it over here
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGHUP, task.cancel)
    # SIGTERM too, run by the loop (between callbacks), not raised into whatever runs in the
    # main thread then (a lazy import, a native call): see dsh_sidecar.lsp.signals
    install_sigterm_callback(lambda: loop.call_soon_threadsafe(task.cancel))

    # the reader closed stdout: nothing can be answered any more, so stop as on SIGHUP
    def lost() -> None:
        loop.call_soon_threadsafe(task.cancel)

    writer.on_lost = lost
    try:
        await serve(server.protocol, sys.stdin.buffer)
        await server.protocol.shutdown_answered()  # EOF right after shutdown (and exit)
    except asyncio.CancelledError:
        if writer.lost:
            log.error("stopping: the reader closed stdout (fd 1): there is no JSON-RPC channel to answer on")
        else:
            log.info("stopping on a termination signal")
    finally:
        ignore_sigterm()  # ending (run_stdio's flush)
