"""The ids of the client's MCP requests in flight, kept by the stdio transport ahead of the SDK.

JSON-RPC 2.0: an id names one request until it is answered, and is a string or a number (an
integer; a fraction SHOULD NOT be used). The SDK's dispatcher files each request under its id
and overwrites the entry of a reused one: both requests ran, both were answered under the one
id, and a ``notifications/cancelled`` for it reached only the second. A request whose id is
null, a fraction, a list or an object is read by the SDK as a notification (the id dropped):
it ran unanswered. The transport refuses both before the SDK sees them, with ``-32600``: the
reuse under its own id, the bad id under id null (the request's id cannot be named).

A request under a notification's method (``notifications/cancelled`` with an id, or any method
under ``notifications/``, known to the SDK or not) is refused too, with the LSP transport's text:
the SDK answered it "Method not found" and ran nothing, and the client waited for what the
notification it meant never gives.

An id is held from the line that brings its request until the SDK *settles* that request: its
answer is written, or the SDK ends it unanswered (a cancel that reached the handler; the SDK's
``on_request_unanswered`` hook, stamped on each request by :class:`SettleStampingStream`). A
``notifications/cancelled`` frees nothing by itself: a cancel read here may reach the SDK after
the handler returned, and the answer is then written all the same. Freed on the cancel, the id
was taken by the client's next request under it, and the late answer then freed *that* one's id
(its entry at the SDK overwritten by a third). Held until settled, each id has at most one
request at the SDK, so an answer under it is that request's, and the table is only as large as
the requests the SDK itself holds. Ids are compared as the SDK correlates them (``"7"`` and
``7`` are one id).

At most :data:`MAX_IN_FLIGHT` requests are held: past it the transport reads no more of the wire
until one is settled (:meth:`RequestsInFlight.room`). A client that never read its answers kept
every request's handler waiting on the write while the transport read on: 200,000 ``tools/list``
lines grew the server past 1.5 GB. Now the pipe fills and the client's own writes wait.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any, Final, Self

import anyio
import mcp_types as types
from dsh_protocol.ids import BAD_ID, IN_USE, in_notification_namespace, notification_with_id
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types.methods import SPEC_CLIENT_NOTIFICATION_METHODS

#: Client requests the SDK holds at once (each a handler task and its answer): far over a client's
#: parallel calls and the searches that may run or wait (``router.maxConcurrentSearches`` and
#: ``maxQueuedSearches``, 16 + 256 by default).
MAX_IN_FLIGHT: Final = 1024


class RequestsInFlight:
    """The coerced ids of the client's requests the SDK has not settled (answered, or ended
    unanswered)."""

    def __init__(self, limit: int = MAX_IN_FLIGHT) -> None:
        self._ids: set[types.RequestId] = set()
        self.limit = limit
        self._room: anyio.Event | None = None

    def __len__(self) -> int:
        return len(self._ids)

    async def room(self) -> None:
        """Return once fewer than :attr:`limit` requests are held (the transport then reads on)."""
        while len(self._ids) >= self.limit:
            self._room = anyio.Event()
            await self._room.wait()

    def _settle(self, key: types.RequestId) -> None:
        self._ids.discard(key)
        if self._room is not None and len(self._ids) < self.limit:
            self._room.set()
            self._room = None

    def refusal(self, message: types.JSONRPCMessage, line: str) -> types.JSONRPCError | None:
        """The error answering ``message`` (the SDK's reading of ``line``) instead of running it,
        or ``None``; a request let through is held in flight until the SDK settles it."""
        if isinstance(message, types.JSONRPCRequest):
            key = coerce_request_id(message.id)
            if key in self._ids:
                return _error(message.id, IN_USE)
            if message.method in SPEC_CLIENT_NOTIFICATION_METHODS or in_notification_namespace(message.method):
                return _error(message.id, notification_with_id(message.method))
            self._ids.add(key)
            return None
        if isinstance(message, types.JSONRPCNotification) and _has_id(line):
            return _error(None, BAD_ID)
        return None

    def answered(self, message: types.JSONRPCMessage) -> None:
        """The SDK wrote ``message``: an answer settles the request under its id."""
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self._settle(coerce_request_id(message.id))

    def stamped(self, item: Any) -> Any:
        """``item`` (what the SDK is about to read) with a client request's settle hook: the SDK
        calls it when it ends the request without an answer, which frees its id."""
        if not isinstance(item, SessionMessage) or not isinstance(item.message, types.JSONRPCRequest):
            return item
        key = coerce_request_id(item.message.id)

        async def unanswered() -> None:
            self._settle(key)

        return SessionMessage(item.message, metadata=ServerMessageMetadata(on_request_unanswered=unanswered))


def _has_id(line: str) -> bool:
    r"""Whether a line the SDK read as a notification has an ``id`` member: a request whose id the
    SDK's schema dropped (only a string or an integer is one). Notifications are few; a request
    never takes this second parse. A member name may be spelled with JSON escapes (``"\u0069d"``
    is ``id`` to every parser), so only a line with neither ``"id"`` nor an escape skips it."""
    if '"id"' not in line and "\\u" not in line:
        return False
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and "id" in obj


def _error(rid: types.RequestId | None, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=rid, error=types.ErrorData(code=types.INVALID_REQUEST, message=message))


class _Wrapped:
    """A stream of the transport as the SDK is handed it, over ``stream`` beneath, with the
    table of ids in flight: closing and the context manager are the stream's beneath."""

    def __init__(self, stream: Any, in_flight: RequestsInFlight) -> None:
        self._stream = stream
        self._in_flight = in_flight

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> Self:
        await self._stream.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> bool | None:
        return await self._stream.__aexit__(exc_type, exc_val, exc_tb)


class AnswerWatchingStream(_Wrapped):
    """The transport's write stream as the SDK is handed it: each answer frees its id in
    ``in_flight`` once handed to the writer, not while it is still being written. The
    transport's own refusals go to the stream beneath, so refusing a reuse never frees the id
    of the request it collided with."""

    async def send(self, item: SessionMessage, /) -> None:
        try:
            await self._stream.send(item)
        finally:  # freed once written (or the write failed: the session is ending)
            self._in_flight.answered(item.message)


class SettleStampingStream(_Wrapped):
    """The transport's read stream as the SDK is handed it: each client request it delivers
    carries the hook by which the SDK tells :class:`RequestsInFlight` it ended the request
    unanswered (``ServerMessageMetadata.on_request_unanswered``; stdio stamps no metadata of its
    own). The sender's context (``last_context``) is the stream's beneath."""

    @property
    def last_context(self) -> Any:
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> Any:
        return self._in_flight.stamped(await self._stream.receive())

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        return self._in_flight.stamped(await self._stream.__anext__())
