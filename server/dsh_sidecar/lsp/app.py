"""The pygls server: one ``SidecarServer`` instance, its lifecycle, and how it runs on stdio."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh_protocol import ErrorCode
from lsprotocol import types as lsp
from lsprotocol.types import ResponseError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from dsh_sidecar import __version__
from dsh_sidecar.escape import EscapingFilter
from dsh_sidecar.lsp.pygls_adapter import PyglsPeer
from dsh_sidecar.lsp.signals import ignore_sigterm, install_sigterm_callback, install_sigterm_exit
from dsh_sidecar.lsp.transport import (
    FdWriter,
    FramingLost,
    StdoutClosed,
    protect_stdout,
    raw_params_converter,
    reopen_std_fds,
    serve,
)
from dsh_sidecar.redact import RedactingFilter, Redactor

if TYPE_CHECKING:  # the composition root is imported after the ``initialize`` reply (cold start)
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
    pydantic's included) is built right after the reply, before the
    next message is dispatched (:meth:`defer_sidecar`). Reading :attr:`sidecar` completes a
    build still pending, so no request ever sees a half-initialised server.
    """

    protocol: SidecarProtocol  # built from ``protocol_cls`` below

    def __init__(self) -> None:
        super().__init__(
            "dsh-search-sidecar", __version__, converter_factory=raw_params_converter, protocol_cls=SidecarProtocol
        )
        self._sidecar: Sidecar | None = None
        #: The deferred construction of the sidecar (set by ``initialize``, run once).
        self._build: Callable[[], Sidecar] | None = None
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
        """Build the sidecar with ``build()`` as the event loop's next callback (after the
        ``initialize`` reply is written), or when :attr:`sidecar` is first read, whichever
        comes first. Without a running loop it is built at once."""
        self._build = build
        try:
            asyncio.get_running_loop().call_soon(self.finish_sidecar)
        except RuntimeError:
            self.finish_sidecar()

    def finish_sidecar(self) -> None:
        """Run the pending build, if any (idempotent). A failure is logged (redacted, ERROR)
        and kept in :attr:`build_error`."""
        build, self._build = self._build, None
        if build is None:
            return
        try:
            self._sidecar = build()
        except Exception as exc:
            self.build_error = exc
            self.report_server_error(exc, "initialize")

    def window_log_message(self, params: lsp.LogMessageParams) -> None:
        """pygls' ``window/logMessage``: the same JSON, built here rather than by its converter,
        and held (≤ 1 ms) to share a write with the reply after it (:class:`FdWriter`)."""
        message = {
            "params": {"type": int(params.type), "message": params.message},
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
            self.window_log_message(lsp.LogMessageParams(type=level, message=line))
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


def workspace_root(params: lsp.InitializeParams) -> Path | None:
    """The workspace folder from ``workspaceFolders[0]``, ``rootUri`` or ``rootPath``."""
    uri = None
    if params.workspace_folders:
        uri = params.workspace_folders[0].uri
    elif params.root_uri:
        uri = params.root_uri
    if uri:
        path = to_fs_path(uri)
        return Path(path) if path else None
    if params.root_path:
        return Path(params.root_path)
    return None


def configure_logging(redactor: Redactor, level: str = "WARNING") -> None:
    """Log to stderr only, through the secret-redacting filter; pygls kept quiet."""
    try:
        reopen_std_fds()  # a closed stderr or stdin must not make logging or serving crash
    except StdoutClosed:
        pass  # run_stdio reports it
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

    async def main() -> None:
        # SIGHUP (the harness's terminal or parent went away) stops serving the same way EOF
        # does, so the flush below runs and nothing learned is lost (docs/SECURITY.md, class 9); SIGTERM
        # is handled as `exit` below
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        try:
            loop.add_signal_handler(signal.SIGHUP, task.cancel)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
        # SIGTERM too, run by the loop (between callbacks), not raised into whatever runs in the
        # main thread then (a lazy import, a native call): see dsh_sidecar.lsp.signals
        install_sigterm_callback(lambda: loop.call_soon_threadsafe(task.cancel))

        # the reader closed stdout: nothing can be answered any more, so stop as on SIGHUP
        def lost() -> None:
            loop.call_soon_threadsafe(task.cancel)

        writer.on_lost = lost
        try:
            await serve(server.protocol, sys.stdin.buffer)
        except asyncio.CancelledError:
            if writer.lost:
                log.error("stopping: the reader closed stdout (fd 1): there is no JSON-RPC channel to answer on")
            else:
                log.info("stopping on a termination signal")
        finally:
            ignore_sigterm()  # ending (the flush below)

    # a harness's teardown may SIGTERM its children before (or while) it sends shutdown/exit
    # (DeepSeek Harness's child-process teardown does): treat it as `exit`, flushing state below
    # until the loop takes SIGTERM over in main() (`dsh-search serve` ended the process at once
    # on a SIGTERM during its start, before this)
    install_sigterm_exit()
    try:
        asyncio.run(main())
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
        if server.sidecar is not None:
            server.sidecar.shutdown()  # flush (idempotent; never raises), also after EOF, SIGTERM, SIGHUP
            try:
                asyncio.run(server.sidecar.aclose())
            except Exception:
                pass
        writer.close()
    return code
