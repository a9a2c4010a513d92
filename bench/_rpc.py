"""What the benchmarks share: the framed stdio client (one implementation, in the package)
and the command that starts the sidecar."""

from __future__ import annotations

import sys

from dsh_protocol.stdio_client import StdioClient

__all__ = ["StdioClient", "pipe_floor", "sidecar_cmd"]

#: The serving half of every floor server: pygls reading its stdin through an asyncio pipe
#: reader (the floor the benches compare with; pygls' stock ``start_io`` is slower).
_PIPE_SERVE = """
async def main():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    await run_async(stop_event=threading.Event(), reader=reader, protocol=server.protocol,
                    logger=logging.getLogger(), error_handler=server.report_server_error)
try:
    asyncio.run(main())
except (SystemExit, KeyboardInterrupt):
    pass
"""


def pipe_floor(handlers: str, imports: str = "") -> str:
    """The script of a pygls server named ``floor`` over an asyncio pipe reader, with the
    ``@server.feature`` ``handlers`` (and ``imports``) given: a bench's floor."""
    head = "import asyncio, logging, sys, threading\n" + imports
    head += "from pygls.lsp.server import LanguageServer\nfrom pygls.io_ import StdoutWriter, run_async\n"
    return head + 'server = LanguageServer("floor", "0")\n' + handlers.strip("\n") + "\n" + _PIPE_SERVE


def sidecar_cmd() -> list[str]:
    """``python -m dsh_sidecar serve`` of this Python."""
    return [sys.executable, "-m", "dsh_sidecar", "serve"]
