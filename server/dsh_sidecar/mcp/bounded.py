"""The MCP stdio transport's bounded reader: newline-delimited JSON-RPC, one message a line,
with the bounds the LSP transport has (``lsp/transport.py``).

* **Line size**: a line over :data:`MAX_LINE_BYTES` is never held whole: it is drained in
  chunks up to its newline (or EOF) and yields an :class:`Oversized` (its first
  :data:`HEAD_BYTES`, to answer the request's id) instead of a line. A 400 MB line without a
  newline grew the server by 422 MiB; now the memory held is one line's bound.
* **Per-request memory**: the line bound is also what one request may cost to parse (the SDK's
  pydantic parse of a 16 MiB line peaks at a few times that; a 60 MB request cost 799 MiB).
* **Nesting**: a line nested deeper than the parsers go is answered by
  :func:`~dsh_sidecar.mcp.transport.unparseable_reply` with the id recovered from its top level
  (:func:`dsh_protocol.ids.recover_id`), not left unanswered.

Each refusal is a JSON-RPC error with the request's id (-32600), written through the SDK's own
writer by :class:`~dsh_sidecar.mcp.transport.AnsweringStdin`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Final

#: Longest line (one JSON-RPC message) accepted, bytes: the LSP transport's body bound.
MAX_LINE_BYTES: Final = 16 * 1024 * 1024
#: Bytes kept from the start of an oversized line, to recover its ``id``.
HEAD_BYTES: Final = 4096
#: Bytes read per chunk.
CHUNK_BYTES: Final = 64 * 1024


@dataclass(frozen=True)
class Oversized:
    """A line over the bound, drained: its first bytes (``head``) and its size."""

    head: bytes
    size: int


async def bounded_lines(
    read: Callable[[int], Awaitable[bytes]], limit: int = MAX_LINE_BYTES
) -> AsyncIterator[bytes | Oversized]:
    """The lines ``read(n)`` delivers (without their newline; a last line without one at EOF
    too), each at most ``limit`` bytes; a longer one yields :class:`Oversized` once its end is
    reached, and never more than ``limit`` bytes of it are held."""
    buf = bytearray()
    head = bytearray()
    dropped = 0  # > 0 while draining an oversized line
    while True:
        chunk = await read(CHUNK_BYTES)
        if not chunk:
            if dropped:
                yield Oversized(bytes(head), dropped)
            elif buf.strip():
                yield bytes(buf)
            return
        start = 0
        while start <= len(chunk):
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            if dropped:
                dropped += len(piece)
            elif len(buf) + len(piece) > limit:
                head[:] = (bytes(buf) + piece[:HEAD_BYTES])[:HEAD_BYTES]
                dropped = len(buf) + len(piece)
                buf.clear()
            else:
                buf += piece
            if nl < 0:
                break
            if dropped:
                yield Oversized(bytes(head), dropped)
                dropped = 0
                head.clear()
            else:
                yield bytes(buf)
                buf.clear()
            start = nl + 1
