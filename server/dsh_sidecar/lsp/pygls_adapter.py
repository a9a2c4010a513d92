"""The one place that touches pygls' private protocol API.

The transport (``transport.py``) answers what pygls would drop silently (parse errors, invalid
envelopes, requests after ``shutdown``, a second ``initialize``) and so has to write a raw
JSON-RPC message and read pygls' shutdown flag. pygls 2.x offers neither publicly, so both go
through :class:`PyglsPeer`; ``tests/test_pygls_adapter.py`` pins the pygls major version and
checks that each private name still exists, so an upgrade that moves them fails there, in one
place, instead of as a silent hang.
"""

from __future__ import annotations

from typing import Any, Final

#: The pygls major version this adapter was written against (``pyproject.toml``: ``pygls>=2.0,<3``).
PYGLS_MAJOR: Final = 2
#: Private attributes of ``pygls.protocol.JsonRPCProtocol`` used below.
PRIVATE_NAMES: Final = ("_send_data", "_shutdown")


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

    @property
    def initialized_once(self) -> bool:
        """``True`` once ``initialize`` was answered (the sidecar's own protocol flag)."""
        return bool(getattr(self.protocol, "initialized_once", False))

    def structure(self, raw: dict[str, Any]) -> Any:
        """pygls' typed message for ``raw`` (raises ``JsonRpcException`` when it does not fit)."""
        return self.protocol.structure_message(raw)

    def handle(self, message: Any) -> None:
        """Hand a structured message to pygls' dispatch."""
        self.protocol.handle_message(message)
