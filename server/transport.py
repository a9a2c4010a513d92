"""stdio transport: LSP framing over an asyncio pipe reader, and stdout kept for JSON-RPC only.

pygls' own ``start_io`` reads stdin through a thread pool (3+ thread hops a message,
DESIGN.md "Performance floor"); here stdin is an asyncio pipe and framing is parsed on the
loop. Before anything else runs, the real stdout is moved to a private descriptor and fd 1
is pointed at stderr, so a stray ``print`` or a C library can never corrupt the channel.

Framing errors are answered, never fatal: a body that is not JSON gets a -32700 reply, a
message that is not a JSON-RPC object -32600, a request whose params do not fit the LSP
types -32602 *with its own id*; an oversized ``Content-Length`` is drained and refused.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any, BinaryIO, Final

import attrs
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage, default_converter

from dsh_protocol import ErrorCode

log = logging.getLogger(__name__)

#: Largest message body accepted, bytes (a bigger one is drained and answered with an error).
MAX_BODY_BYTES: Final = 16 * 1024 * 1024
#: Longest header line accepted, bytes.
MAX_HEADER_BYTES: Final = 8 * 1024


def raw_params_converter():
    """pygls' converter, except that untyped (``dsh/*``) params and results stay plain JSON
    (dicts/lists) instead of becoming namedtuples: handlers validate them with pydantic."""
    converter = default_converter()

    def keep_raw(obj: dict[str, Any], cls: type) -> Any:
        fields = attrs.fields(cls)
        kwargs = {a.name: obj.get(a.name) for a in fields if a.name in obj or a.default is attrs.NOTHING}
        return cls(**kwargs)

    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, keep_raw)
    return converter


class FdWriter:
    """pygls writer over a raw file descriptor (blocking writes of whole frames)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                os.close(self.fd)
            except OSError:
                pass


def protect_stdout() -> int:
    """Move the real stdout to a private descriptor and point fd 1 (and ``sys.stdout``) at
    stderr. Returns the private descriptor that carries JSON-RPC."""
    sys.stdout.flush()
    channel = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def _error_frame(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": int(code), "message": message}}


async def _read_frame(reader: asyncio.StreamReader) -> bytes | None | int:
    """One message body; ``None`` at EOF; an int (the bad length) for a refused frame."""
    length: int | None = None
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            return None
        except asyncio.LimitOverrunError:
            await reader.read(MAX_HEADER_BYTES)
            continue
        if line in (b"\r\n", b"\n"):
            if length is None:
                continue  # stray blank line between frames
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError:
                length = -1
    if length < 0 or length > MAX_BODY_BYTES:
        if length > 0:
            remaining = length
            while remaining > 0:
                chunk = await reader.read(min(remaining, 1 << 20))
                if not chunk:
                    return None
                remaining -= len(chunk)
        return length
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        return None


def dispatch(protocol: Any, body: bytes) -> None:
    """Decode one body and hand it to pygls, answering what pygls would drop silently."""
    try:
        raw = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        protocol._send_data(_error_frame(None, ErrorCode.PARSE_ERROR, "Parse error: the body is not valid JSON"))
        return
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0" or not (
        isinstance(raw.get("method"), str) or "id" in raw
    ):
        msg_id = raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), (int, str)) else None
        protocol._send_data(_error_frame(msg_id, ErrorCode.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message object"))
        return
    is_request = "id" in raw and isinstance(raw.get("method"), str)
    if is_request and not isinstance(raw["id"], (int, str)):
        protocol._send_data(_error_frame(None, ErrorCode.INVALID_REQUEST, "Invalid Request: id must be a number or a string"))
        return
    try:
        message = protocol.structure_message(raw)
    except JsonRpcException as exc:
        if is_request:
            method = raw.get("method")
            protocol._send_data(_error_frame(raw["id"], exc.code, f"Invalid params for {method}: {exc.message or 'does not match the method'}"))
        else:
            log.warning("dropping a malformed %s message", raw.get("method", "response"))
        return
    protocol.handle_message(message)


async def serve(protocol: Any, stdin: BinaryIO, stop: asyncio.Event | None = None) -> None:
    """Read frames from ``stdin`` until EOF (or ``stop``) and dispatch each one."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_HEADER_BYTES, loop=loop)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), stdin)
    while stop is None or not stop.is_set():
        frame = await _read_frame(reader)
        if frame is None:
            return
        if isinstance(frame, int):
            protocol._send_data(
                _error_frame(None, ErrorCode.INVALID_REQUEST, f"Invalid Request: Content-Length {frame} is missing, negative or over {MAX_BODY_BYTES} bytes")
            )
            continue
        try:
            dispatch(protocol, frame)
        except SystemExit:
            raise
        except Exception:  # one bad message never stops the server
            log.exception("unhandled error while dispatching a message")
