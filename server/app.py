"""The pygls server: one ``SidecarServer`` instance, its lifecycle, and how it runs on stdio."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from dsh_sidecar import __version__
from dsh_sidecar.router.redact import RedactingFilter, Redactor
from dsh_sidecar.sidecar import Sidecar
from dsh_sidecar.transport import FdWriter, protect_stdout, raw_params_converter, serve

log = logging.getLogger(__name__)


class SidecarServer(LanguageServer):
    """The language server that hosts one :class:`Sidecar` (built on ``initialize``)."""

    def __init__(self) -> None:
        super().__init__("dsh-search-sidecar", __version__, converter_factory=raw_params_converter)
        self.sidecar: Sidecar | None = None
        self.env: dict[str, str] = dict(os.environ)
        self.redactor = Redactor()

    def send_log_line(self, line: str, level: lsp.MessageType = lsp.MessageType.Info) -> None:
        """Send one seed/ledger line as ``window/logMessage`` (byte-exact)."""
        try:
            self.window_log_message(lsp.LogMessageParams(type=level, message=line))
        except Exception:  # no transport (tests, shutdown): the line is on stderr/ledger already
            log.debug("could not send window/logMessage")

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log server errors to stderr only (never ``window/showMessage`` popups)."""
        log.error("%s: %s", getattr(source, "__name__", source), self.redactor(str(error)))


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
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(redactor))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.WARNING))
    logging.getLogger("pygls").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)


def run_stdio(server: SidecarServer) -> int:
    """Serve JSON-RPC on stdin/stdout until ``exit`` or EOF; return the exit code."""
    channel = protect_stdout()
    writer = FdWriter(channel)
    server.protocol.set_writer(writer)
    code = 0

    async def main() -> None:
        await serve(server.protocol, sys.stdin.buffer)

    try:
        asyncio.run(main())
    except SystemExit as exc:  # the LSP `exit` notification
        code = exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        code = 130
    finally:
        if server.sidecar is not None:
            try:
                asyncio.run(server.sidecar.aclose())
            except Exception:
                pass
        writer.close()
    return code
