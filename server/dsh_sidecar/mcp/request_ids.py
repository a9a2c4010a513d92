"""The ids of the client's MCP requests in flight, kept by the stdio transport ahead of the SDK.

JSON-RPC 2.0: an id names one request until it is answered, and is a string or a number (an
integer; a fraction SHOULD NOT be used). The SDK's dispatcher files each request under its id
and overwrites the entry of a reused one: both requests ran, both were answered under the one
id, and a ``notifications/cancelled`` for it reached only the second. A request whose id is
null, a fraction, a list or an object is read by the SDK as a notification (the id dropped):
it ran unanswered. The transport refuses both before the SDK sees them, with ``-32600``: the
reuse under its own id, the bad id under id null (the request's id cannot be named).

An id is held from the line that brings its request until the server's answer under it is
written or the client cancels it (the SDK never answers a cancelled request), so the table is
only as large as the requests the SDK itself holds in flight. Ids are compared as the SDK
correlates them (``"7"`` and ``7`` are one id).
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any, Self

import mcp_types as types
from dsh_protocol.ids import BAD_ID, IN_USE
from mcp.shared.dispatcher import as_request_id, coerce_request_id
from mcp.shared.message import SessionMessage


class RequestsInFlight:
    """The coerced ids of the client's requests not yet answered or cancelled."""

    def __init__(self) -> None:
        self._ids: set[types.RequestId] = set()

    def __len__(self) -> int:
        return len(self._ids)

    def refusal(self, message: types.JSONRPCMessage, line: str) -> types.JSONRPCError | None:
        """The error answering ``message`` (the SDK's reading of ``line``) instead of running it,
        or ``None``; a request let through is held in flight, a cancel frees its id."""
        if isinstance(message, types.JSONRPCRequest):
            key = coerce_request_id(message.id)
            if key in self._ids:
                return _error(message.id, IN_USE)
            self._ids.add(key)
            return None
        if isinstance(message, types.JSONRPCNotification):
            if _has_id(line):
                return _error(None, BAD_ID)
            if message.method == "notifications/cancelled":
                rid = as_request_id((message.params or {}).get("requestId"))
                if rid is not None:
                    self._ids.discard(coerce_request_id(rid))
        return None

    def answered(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self._ids.discard(coerce_request_id(message.id))


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


class AnswerWatchingStream:
    """The transport's write stream as the SDK is handed it: each answer written frees its id in
    ``in_flight``. The transport's own refusals go to the stream beneath, so refusing a reuse
    never frees the id of the request it collided with."""

    def __init__(self, stream: Any, in_flight: RequestsInFlight) -> None:
        self._stream = stream
        self._in_flight = in_flight

    async def send(self, item: SessionMessage, /) -> None:
        self._in_flight.answered(item.message)
        await self._stream.send(item)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> Self:
        await self._stream.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> bool | None:
        return await self._stream.__aexit__(exc_type, exc_val, exc_tb)
