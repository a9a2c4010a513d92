"""MCP stdio transport that answers every request it receives, even one the SDK cannot parse.

The SDK's ``stdio_server`` parses each line with pydantic (its JSON parser stops at 200
levels of nesting) and silently drops a line it cannot parse or validate: a request nested
deeper than that, or with a malformed envelope, then never gets a response and its client
waits for its own timeout (Claude Code's MCP tool timeout is many hours). This transport
hands the SDK the same lines, but first answers such a line when it is a JSON object with
a request ``id``: JSON-RPC 2.0 error -32600 (Invalid Request) with that id, through the
SDK's own writer (so frames never interleave). Lines with no determinable id (garbage,
notifications, and a request nested deeper than the stdlib parser's recursion limit, about
1000 levels) are left to the SDK as before. A request under an id still in flight, under an id
that is not a string or an integer, or under a notification's method, is refused here too
(:mod:`dsh_sidecar.mcp.request_ids`): the SDK would run it over the first's entry, run it as a
notification, unanswered, or answer "Method not found" for the notification it meant. fd 0 is claimed as the SDK claims it: the wire
is read from a private duplicate, fd 0 then reads the null device.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from dsh_protocol.ids import BAD_ID, NESTED, recover_id
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from dsh_sidecar.mcp.bounded import CHUNK_BYTES, MAX_LINE_BYTES, Oversized, bounded_lines
from dsh_sidecar.mcp.request_ids import AnswerWatchingStream, RequestsInFlight, SettleStampingStream

#: The error message of an answered unparseable request (JSON-RPC 2.0 -32600).
UNPARSEABLE = "Invalid Request: the server could not parse this message (nested too deeply, or a malformed envelope)"


#: A JSON escape of a surrogate code unit (half of an astral character's pair, or a lone one).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
#: A surrogate code point left in a decoded string: a lone one (json pairs a valid pair up).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(line: str) -> str:
    r"""``line`` with every lone surrogate escape (``"\ud83d"`` alone: valid JSON, not text)
    in its strings made U+FFFD, else ``line`` itself. The SDK's parser refuses a line holding one,
    and a hook call (a user's prompt, a tool's output cut in half an emoji) was then answered
    -32600 instead of read. Only a line holding such an escape is decoded here."""
    if not _SURROGATE_ESCAPE.search(line):
        return line
    changed = False

    def clean(value: Any) -> Any:
        nonlocal changed
        if isinstance(value, str):
            fixed = _LONE_SURROGATE.sub("\ufffd", value)
            changed = changed or fixed != value
            return fixed
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {clean(k): clean(v) for k, v in value.items()}
        return value

    try:
        obj = json.loads(line)
        rid = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(rid, str) and _LONE_SURROGATE.search(rid):
            return line  # an id is answered as it came, or the client never matches the answer
        cleaned = clean(obj)
    except (ValueError, RecursionError):
        return line
    return json.dumps(cleaned, ensure_ascii=False) + "\n" if changed else line


def unparseable_reply(line: str) -> types.JSONRPCError | None:
    """The error to answer ``line`` with, or ``None`` when the SDK can parse it or no request
    id can be found in it (then the SDK's behaviour stands)."""
    return read_line(line)[1]


def read_line(line: str) -> tuple[types.JSONRPCMessage | None, types.JSONRPCError | None]:
    """The SDK's reading of ``line`` (its own parser, by which it will read the line again), and
    the error answering an unparseable request in its place (``None``, ``None``: left to the SDK)."""
    if not line.strip():
        return None, None
    try:
        return types.jsonrpc_message_adapter.validate_json(line, by_name=False), None
    except Exception:  # noqa: BLE001 - whatever the SDK's parser rejects
        pass
    return None, _unparseable(line)


def _unparseable(line: str) -> types.JSONRPCError | None:
    try:
        obj = json.loads(line)  # the stdlib parser nests ~1000 levels deep before RecursionError
    except RecursionError:  # deeper still: the id from the top level, or the client waits forever
        rid = recover_id(line.encode("utf-8", "surrogatepass"))
        return None if rid is None else _error(rid, NESTED)
    except ValueError:
        return None
    if not isinstance(obj, dict) or "method" not in obj:
        return None
    rid = obj.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        return _error(None, BAD_ID) if "id" in obj else None
    return _error(rid, UNPARSEABLE)


#: The error message of a line over :data:`~dsh_sidecar.mcp.bounded.MAX_LINE_BYTES` (drained).
OVERSIZED = f"Invalid Request: the message is over {MAX_LINE_BYTES} bytes (discarded)"


def _error(rid: int | str | None, message: str) -> types.JSONRPCError:
    if isinstance(rid, str) and _LONE_SURROGATE.search(rid):
        # not text, so not an id: the SDK's writer cannot write it (it raised, and the server
        # ended: one request under the id "\ud83d" ended the session), so no id answers it
        rid, message = None, BAD_ID
    return types.JSONRPCError(jsonrpc="2.0", id=rid, error=types.ErrorData(code=types.INVALID_REQUEST, message=message))


def oversized_reply(line: Oversized) -> types.JSONRPCError | None:
    """The error answering an oversized line, or ``None`` when no request id is in its head."""
    rid = recover_id(line.head)
    return None if rid is None else _error(rid, OVERSIZED)


class AnsweringStdin:
    """The lines of a private duplicate of fd 0, for ``stdio_server(stdin=…)``, read by the
    bounded reader (:mod:`dsh_sidecar.mcp.bounded`); an unparseable, too deeply nested or
    oversized request is answered on ``reply`` (the transport's write stream) once it is set,
    and not passed on."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.in_flight = RequestsInFlight()
        self._file = anyio.wrap_file(os.fdopen(fd, "rb", buffering=0, closefd=False))
        self._ready = anyio.Event()
        self._reply: Any = None

    def set_reply(self, stream: Any) -> None:
        self._reply = stream
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        await self._ready.wait()
        async for raw in bounded_lines(await self._reader()):
            if isinstance(raw, Oversized):
                error = oversized_reply(raw)
                if error is not None:
                    await self._reply.send(SessionMessage(error))
                continue
            line = without_lone_surrogates(raw.decode("utf-8", "replace") + "\n")
            message, error = read_line(line)
            if isinstance(message, types.JSONRPCRequest):
                await self.in_flight.room()  # a client that does not read its answers: read no more
            if message is not None:
                error = self.in_flight.refusal(message, line)
            if error is not None:
                await self._reply.send(SessionMessage(error))
                continue
            yield line

    async def _reader(self) -> Callable[[int], Awaitable[bytes]]:
        """``read(n)`` of the wire: a pipe or socket is read by the event loop itself (as the LSP
        transport reads it); anything else (a file, a terminal) through anyio's worker thread,
        one thread hop a read. A hop waits for the GIL and a CPU, which on a loaded machine with
        the workspace indexing was most of a ``notifications/cancelled``'s latency."""
        try:
            mode = os.fstat(self._fd).st_mode
            loop = asyncio.get_running_loop()
        except (OSError, RuntimeError):
            return self._file.read
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return self._file.read
        reader = asyncio.StreamReader(limit=CHUNK_BYTES, loop=loop)
        try:
            pipe = os.fdopen(self._fd, "rb", buffering=0, closefd=False)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe)
        except (ValueError, OSError):
            return self._file.read
        return reader.read


def claim_stdin() -> int:
    """A private (non-inheritable) duplicate of fd 0; fd 0 then reads the null device, so no
    child process can read the protocol."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    return private


async def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve ``server`` on stdio (stdout claimed by the SDK), answering unparseable requests.
    Falls back to the SDK's own stdio transport when its low-level server is not reachable."""
    lowlevel = getattr(server, "_lowlevel_server", None)
    if lowlevel is None:
        await server.run_stdio_async()
        return
    stdin = AnsweringStdin(claim_stdin())
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]
        stdin.set_reply(write_stream)
        answers = AnswerWatchingStream(write_stream, stdin.in_flight)
        requests = SettleStampingStream(read_stream, stdin.in_flight)
        await lowlevel.run(requests, answers, lowlevel.create_initialization_options())
