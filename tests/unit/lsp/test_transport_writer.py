"""The stdio writer's held notifications : a notification sent on the
event loop shares one write with the reply that follows it, goes out by itself soon after
when no reply follows, and is never lost at close; the order on the wire is the write order."""

from __future__ import annotations

import asyncio
import os

from dsh_sidecar.lsp.transport import FdWriter


class CountingWriter(FdWriter):
    def __init__(self, fd: int) -> None:
        super().__init__(fd, redact=lambda body: body.replace(b"sk-secret", b"[redacted]"))
        self.writes: list[bytes] = []

    def _write(self, data: bytes) -> None:
        before = len(self._held)
        super()._write(data)
        if before or data:
            self.writes.append(b"x")


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_all(fd: int) -> bytes:
    os.set_blocking(fd, False)
    out = b""
    try:
        while chunk := os.read(fd, 65536):
            out += chunk
    except BlockingIOError:
        pass
    return out


def test_a_notification_and_the_reply_after_it_are_one_write_in_order():
    r, w = os.pipe()
    writer = CountingWriter(w)

    async def call() -> None:
        with writer.holding():
            writer.write(frame(b'{"method":"window/logMessage","params":{"message":"sk-secret"}}'))
        writer.write(frame(b'{"id":1,"result":{}}'))

    asyncio.run(call())
    assert writer.writes == [b"x"]
    assert read_all(r) == frame(b'{"method":"window/logMessage","params":{"message":"[redacted]"}}') + frame(
        b'{"id":1,"result":{}}'
    )
    writer.close()
    os.close(r)


def test_a_held_notification_without_a_reply_goes_out_by_itself():
    r, w = os.pipe()
    writer = CountingWriter(w)

    async def call() -> bytes:
        with writer.holding():
            writer.write(frame(b'{"method":"a"}'))
            writer.write(frame(b'{"method":"b"}'))
        assert read_all(r) == b""  # held
        await asyncio.sleep(0.05)
        return read_all(r)

    assert asyncio.run(call()) == frame(b'{"method":"a"}') + frame(b'{"method":"b"}')
    assert writer.writes == [b"x"]
    writer.close()
    os.close(r)


def test_close_writes_what_is_held_and_off_the_loop_nothing_is_held():
    r, w = os.pipe()
    writer = CountingWriter(w)
    with writer.holding():  # no running loop: written at once
        writer.write(frame(b'{"method":"now"}'))
    assert read_all(r) == frame(b'{"method":"now"}')

    async def call() -> None:
        with writer.holding():
            writer.write(frame(b'{"method":"late"}'))

    loop = asyncio.new_event_loop()
    loop.run_until_complete(call())
    loop.close()  # the loop ends before the hold timer fires (exit): close() still writes it
    writer.close()
    assert read_all(r) == frame(b'{"method":"late"}')
    os.close(r)


class Capture:
    def __init__(self) -> None:
        self.out: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.out.append(data)

    def close(self) -> None:
        pass


def test_log_lines_and_dsh_replies_are_the_bytes_pygls_writes():
    """The sidecar builds window/logMessage and dsh/* replies itself (no converter pass): the
    frames must be byte-identical to stock pygls' for the same message."""
    from dsh_sidecar.lsp.app import SidecarServer
    from lsprotocol import types as lsp
    from pygls.lsp.server import LanguageServer

    ours, stock = SidecarServer(), LanguageServer("stock", "0")
    for server in (ours, stock):
        server.protocol.set_writer(Capture())
        line = '[search-suggester] suggest Symbol 0.97 1 targets "a b".py é \u2014 \\ \n'
        server.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Info, message=line))
        server.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Warning, message="w"))
        result = {"additionalContexts": [{"text": "x\u00e9", "n": 1, "k": 0.5, "ok": True, "none": None, "l": []}]}
        server.protocol._send_response(7, result)
        server.protocol._send_response("id-1", {})
        server.protocol._send_response(8, None)  # not a dsh/* object: pygls' own path
    assert ours.protocol.writer.out == stock.protocol.writer.out
    assert len(ours.protocol.writer.out) == 5


def test_untyped_requests_are_dispatched_as_pygls_would_and_dropped_after_shutdown():
    from dsh_sidecar.lsp.pygls_adapter import PyglsPeer
    from pygls.lsp.server import LanguageServer
    from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage

    server = LanguageServer("t", "0")
    seen: list[tuple[str, object]] = []

    @server.feature("dsh/x")
    def on_x(ls, params):
        seen.append(("request", params))
        return {"ok": True}

    @server.feature("dsh/n")
    def on_n(ls, params):
        seen.append(("notification", params))

    server.protocol.set_writer(Capture())
    peer = PyglsPeer(server.protocol)
    peer.handle(JsonRPCRequestMessage(id=1, method="dsh/x", params={"a": 1}, jsonrpc="2.0"))
    peer.handle(JsonRPCNotification(method="dsh/n", params={"b": 2}, jsonrpc="2.0"))
    peer.handle(JsonRPCRequestMessage(id=2, method="dsh/x", params={}, jsonrpc="1.0"))  # pygls drops it
    assert seen == [("request", {"a": 1}), ("notification", {"b": 2})]
    assert server.protocol.writer.out == [
        b"Content-Length: 51\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
        b'{"id": 1, "jsonrpc": "2.0", "result": {"ok": true}}'
    ]
    server.protocol._shutdown = True
    peer.handle(JsonRPCRequestMessage(id=3, method="dsh/x", params={}, jsonrpc="2.0"))
    assert len(seen) == 2


def _rebuilt(data: bytes, redact) -> bytes:
    """redact_frame as it was before its nothing-to-redact shortcut: every header rebuilt."""
    out, rest = [], data
    while rest:
        head_end = rest.find(b"\r\n\r\n")
        header = rest[:head_end]
        value = [ln for ln in header.split(b"\r\n") if ln.lower().startswith(b"content-length:")][0].split(b":")[1]
        start, end = head_end + 4, head_end + 4 + int(value)
        body = redact(rest[start:end])
        lines = [
            b"Content-Length: %d" % len(body) if ln.lower().startswith(b"content-length:") else ln
            for ln in header.split(b"\r\n")
        ]
        out.append(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        rest = rest[end:]
    return b"".join(out)


def test_a_frame_with_nothing_to_redact_is_written_as_it_would_have_been_rebuilt():
    from dsh_sidecar.lsp.transport import redact_frame
    from dsh_sidecar.redact import Redactor

    body = b'{"jsonrpc":"2.0","id":1,"result":{"t":"ok"}}'
    pygls = b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" % len(body) + body
    odd = [
        b"content-length: %d\r\n\r\n" % len(body) + body,  # another spelling: rebuilt
        b"Content-Length: %d\r\nX: 1\r\nContent-Length: %d\r\n\r\n" % (len(body), len(body)) + body,  # two
        b"Content-Length:  %d\r\n\r\n" % len(body) + body,
        frame(body),
        pygls,
    ]
    for secrets in ([], ["sk-secret-0123456789"]):
        red = Redactor(secrets).redact_bytes
        for data in [
            pygls,
            frame(body),
            pygls + frame(body),
            *odd,
            pygls + odd[0] + frame(b'{"t":"sk-secret-0123456789"}'),
        ]:
            assert redact_frame(data, red) == _rebuilt(data, red), data
    assert redact_frame(pygls, Redactor([]).redact_bytes) == pygls
