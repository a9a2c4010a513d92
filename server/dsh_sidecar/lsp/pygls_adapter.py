"""The one place that touches pygls' private protocol API.

The transport (``transport.py``) answers what pygls would drop silently (parse errors, invalid
envelopes, requests after ``shutdown``, a second ``initialize``) and so has to write a raw
JSON-RPC message and read pygls' shutdown flag. pygls 2.x offers neither publicly, so both go
through :class:`PyglsPeer`; ``tests/unit/lsp/test_pygls_adapter.py`` pins the pygls major version and
checks that each private name still exists, so an upgrade that moves them fails there, in one
place, instead of as a silent hang.
"""

from __future__ import annotations

import contextvars
from typing import Any, Final

from lsprotocol.types import EXIT
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage

#: The pygls major version this adapter was written against (``pyproject.toml``: ``pygls>=2.0,<3``).
PYGLS_MAJOR: Final = 2
#: Private attributes of ``pygls.protocol.JsonRPCProtocol`` used below and by ``lsp/app.SidecarProtocol``.
PRIVATE_NAMES: Final = (
    "_send_data",
    "_shutdown",
    "_handle_request",
    "_handle_notification",
    "_run_generator",
    "_request_futures",
    "_handle_response",
)
#: The JSON-RPC version every message must carry (pygls drops any other, with a warning).
JSONRPC_VERSION: Final = "2.0"


class PyglsPeer:
    """A pygls ``JsonRPCProtocol`` seen from the transport.

    ``send_raw(message)`` writes one JSON-RPC object (a dict) through pygls' writer, framed
    and redacted like every other reply; ``shut_down`` is whether ``shutdown`` was received;
    ``structure``/``handle`` are pygls' public parse and dispatch of one decoded message.
    """

    __slots__ = ("protocol",)

    def __init__(self, protocol: Any) -> None:
        self.protocol = protocol

    def send_raw(self, message: dict[str, Any]) -> None:
        """Write ``message`` as one frame (pygls' private ``_send_data``)."""
        self.protocol._send_data(message)

    @property
    def shut_down(self) -> bool:
        """``True`` once the client sent ``shutdown`` (pygls' private ``_shutdown``)."""
        return bool(getattr(self.protocol, "_shutdown", False))

    def in_flight(self, msg_id: Any) -> bool:
        """Whether a request under ``msg_id`` is still being handled (pygls' private table of
        requests in flight, keyed by the client's id: a second request filed under it would
        take the first's entry)."""
        future = self.protocol._request_futures.get(msg_id)
        return future is not None and not future.done()

    @property
    def initialized_once(self) -> bool:
        """``True`` once ``initialize`` was answered (the sidecar's own protocol flag)."""
        return bool(getattr(self.protocol, "initialized_once", False))

    def structure(self, raw: dict[str, Any]) -> Any:
        """pygls' typed message for ``raw`` (raises ``JsonRpcException`` when it does not fit)."""
        return self.protocol.structure_message(raw)

    def handle(self, message: Any) -> None:
        """Hand a structured message to pygls' dispatch.

        An untyped request or notification (the ``dsh/*`` methods: pygls'
        ``JsonRPCRequestMessage``/``JsonRPCNotification``) goes straight to pygls' private
        ``_handle_request``/``_handle_notification`` in its own context, as ``handle_message``
        would after three ``isinstance`` checks against runtime-checkable protocols (~11 µs
        each on CPython 3.11); every other message, and any that ``handle_message`` would
        drop (wrong version, after ``shutdown``), takes pygls' own path."""
        protocol = self.protocol
        kind = type(message)
        if (
            (kind is JsonRPCRequestMessage or kind is JsonRPCNotification)
            and message.jsonrpc == JSONRPC_VERSION
            and not (getattr(protocol, "_shutdown", False) and message.method != EXIT)
        ):
            ctx = contextvars.copy_context()
            if kind is JsonRPCRequestMessage:
                ctx.run(protocol._handle_request, message.id, message.method, message.params)
            else:
                ctx.run(protocol._handle_notification, message.method, message.params)
            return
        protocol.handle_message(message)
