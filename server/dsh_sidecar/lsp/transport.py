r"""stdio transport: LSP framing over an asyncio pipe reader, and stdout kept for JSON-RPC only.

pygls' own ``start_io`` reads stdin through a thread pool (3+ thread hops a message,
DESIGN.md "Performance floor"); here stdin is an asyncio pipe and framing is parsed on the
loop. Before anything else runs, the real stdout is moved to a private descriptor and fd 1
is pointed at stderr, so a stray ``print`` or a C library can never corrupt the channel.

Framing errors are answered, never fatal: a body that is not JSON gets a -32700 reply, a
message that is not a JSON-RPC object -32600, a request whose params do not fit the LSP
types -32602 *with its own id*, a body nested too deeply for the JSON parser -32600 with the
id recovered from its top level, a request after ``shutdown`` -32600 (LSP). A header block
without a usable ``Content-Length`` (missing, not a number, a line over 8 KiB, too many lines)
gets a -32600 reply with ``id: null``; an oversized ``Content-Length`` is drained and refused;
one so large that draining it makes no sense (over 256 MiB) ends the server cleanly with a
reason on stderr. After an understated ``Content-Length`` the reader re-synchronises on the
next ``Content-Length:`` header, so one broken frame costs one message, not the session. A body
that follows its header without the blank line (``Content-Length: N\r\n{…``), or runs on from
the ``Content-Length`` line itself (``Content-Length: N{…``), is answered -32600 with its own id
as soon as it has arrived, and reading goes on after it (:class:`FrameReader`).

stdin may be anything: a pipe or socket (read by the event loop), or a regular file,
``/dev/null``, or a terminal the loop cannot poll (read by one thread feeding the same
reader); EOF of any of them ends the server cleanly. Every frame written is redacted (the
secrets of :class:`~dsh_sidecar.redact.Redactor`, every form) with its ``Content-Length``
recomputed: the last line of defence, whatever a handler put in a reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import re
import stat
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO, Final

import attrs
from dsh_protocol import ErrorCode
from dsh_protocol.ids import recover_id
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage, default_converter

from dsh_sidecar.lsp.pygls_adapter import PyglsPeer

log = logging.getLogger(__name__)

#: Largest message body accepted, bytes (a bigger one is drained and answered with an error).
MAX_BODY_BYTES: Final = 16 * 1024 * 1024
#: Longest header line accepted, bytes.
MAX_HEADER_BYTES: Final = 8 * 1024
#: Most header lines in one frame (LSP defines two: Content-Length and Content-Type).
MAX_HEADER_LINES: Final = 32
#: Bytes kept from the start of an oversized (discarded) body, to recover its ``id``.
DISCARDED_HEAD_BYTES: Final = 4096
#: Largest oversized body still drained to keep the stream in sync, bytes; a bigger
#: ``Content-Length`` is a broken client: the server exits (:class:`FramingLost`).
MAX_DRAIN_BYTES: Final = 256 * 1024 * 1024


#: When the message being dispatched was read off stdin (``time.monotonic()``), in the context
#: its handler runs in (pygls runs a coroutine handler as a task, which copies the context): a
#: search's deadline counts from here, not from when its handler got to run.
RECEIVED_AT: contextvars.ContextVar[float | None] = contextvars.ContextVar("received_at", default=None)


def raw_params_converter() -> Any:
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


_HEADER_END = b"\r\n\r\n"
_CONTENT_LENGTH = b"content-length:"


def redact_frame(data: bytes, redact: Callable[[bytes], bytes]) -> bytes:
    """``data`` (one LSP frame, or several) with every body redacted by ``redact`` and each
    ``Content-Length`` recomputed. Data that is not a well-formed frame is redacted whole. A
    frame ``redact`` leaves alone (returns its body object itself) whose header is already what
    the rebuild would write is copied as it is."""
    out: list[bytes] = []
    rest = data
    while rest:
        head_end = rest.find(_HEADER_END)
        if head_end < 0:
            out.append(redact(rest))
            break
        header = rest[:head_end]
        at = header.lower().find(_CONTENT_LENGTH)
        value = header[at + len(_CONTENT_LENGTH) :].split(b"\r\n")[0].strip() if at >= 0 else b""
        if not value.isdigit():
            out.append(redact(rest))
            break
        start = head_end + len(_HEADER_END)
        end = start + int(value)
        raw = rest[start:end]
        body = redact(raw)
        if body is raw:  # nothing redacted: the frame as it came when its header is what would be rebuilt
            first = b"Content-Length: %d" % len(body)
            if header == first or (
                header.startswith(first + b"\r\n") and _CONTENT_LENGTH not in header[len(first) :].lower()
            ):
                out.append(rest[:end])
                rest = rest[end:]
                continue
        lines = [
            b"Content-Length: %d" % len(body) if line.lower().startswith(_CONTENT_LENGTH) else line
            for line in header.split(b"\r\n")
        ]
        out.append(b"\r\n".join(lines) + _HEADER_END + body)
        rest = rest[end:]
    return b"".join(out)


#: Longest a notification is held back so that it shares one write with the reply that
#: follows it (a ``[bandit-search]`` or ledger line and its call's reply), seconds.
HOLD_S: Final = 0.001


class _Holding:
    """:meth:`FdWriter.holding`: sets the writing thread's ``hold`` flag for the block, and
    clears it on the way out (exceptions included)."""

    __slots__ = ("_local",)

    def __init__(self, local: threading.local) -> None:
        self._local = local

    def __enter__(self) -> None:
        self._local.hold = True

    def __exit__(self, *exc_info: object) -> None:
        self._local.hold = False


class FdWriter:
    """pygls writer over a raw file descriptor (blocking writes of whole frames). ``redact``
    (bytes → bytes, e.g. :meth:`~dsh_sidecar.redact.Redactor.redact_bytes`) is applied to
    every frame body before it is written.

    Frames written inside :meth:`holding` (the server's notifications) on the event loop's
    thread are held, in order, and written together with the next frame (a reply), or by
    themselves after :data:`HOLD_S`, or at :meth:`close`: a call that sends a log line and
    its reply costs the client one read, not two. Every other write goes out at once, after
    whatever is held, so the order on the wire is the order of the writes."""

    def __init__(self, fd: int, redact: Callable[[bytes], bytes] | None = None) -> None:
        self.fd = fd
        self.closed = False
        self.redact = redact
        self._held: list[bytes] = []
        self._timer: asyncio.TimerHandle | None = None
        self._lock = threading.Lock()
        self._local = threading.local()
        self._holding = _Holding(self._local)
        #: Set when the reader closed the pipe (``EPIPE``): later writes are dropped, and
        #: :attr:`on_lost` (any thread) is called once, so the server stops instead of failing
        #: every reply with a traceback.
        self.lost = False
        self.on_lost: Callable[[], None] | None = None

    def holding(self) -> contextlib.AbstractContextManager[None]:
        """Writes made in this block (by this thread) may be held (see the class docstring).

        (One reusable context manager object: a generator-based one per notification cost a
        generator and its frame each time.)"""
        return self._holding

    def write(self, data: bytes) -> None:
        if getattr(self._local, "hold", False):
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is not None:
                with self._lock:
                    self._held.append(data)
                    if self._timer is None:
                        self._timer = loop.call_later(HOLD_S, self.flush)
                return
        self._write(data)

    def flush(self) -> None:
        """Write what is held now."""
        self._write(b"")

    def _write(self, data: bytes) -> None:
        with self._lock:
            if self._held:
                data = b"".join(self._held) + data
                self._held.clear()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not data or self.lost or self.closed:
                return  # after close the descriptor's number may name a file opened since
            if self.redact is not None:
                data = redact_frame(data, self.redact)
            view = memoryview(data)
            try:
                while view:
                    n = os.write(self.fd, view)
                    view = view[n:]
            except BrokenPipeError:
                self.lost = True
                if self.on_lost is not None:
                    self.on_lost()

    def close(self) -> None:
        if not self.closed:
            with contextlib.suppress(OSError):
                self.flush()
            self.closed = True
            with contextlib.suppress(OSError):
                os.close(self.fd)


class StdoutClosed(Exception):
    """fd 1 is closed at start: there is no channel to answer on (the server exits 1)."""


_stdout_closed = False


def reopen_std_fds() -> None:
    """Make fds 0, 1 and 2 usable whatever the harness left: a closed stdin (``<&-``) becomes
    ``/dev/null`` (read as EOF: the server ends cleanly), a closed stderr ``/dev/null`` (logs
    are dropped instead of failing), and ``sys.stdin``/``sys.stderr``, which Python sets to
    ``None`` for a closed descriptor, are rebuilt. Idempotent. Raises :class:`StdoutClosed` when
    fd 1 was closed at the first call (checked before any descriptor is filled, so the one
    opened for fd 0 is never mistaken for it; fd 1 is then ``/dev/null``, so later writes do
    not fail)."""
    global _stdout_closed
    try:
        os.fstat(1)
    except OSError:
        _stdout_closed = True
    for fd, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, flags)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, encoding="utf-8", closefd=False))  # noqa: SIM115 - process-long
    if _stdout_closed:
        raise StdoutClosed("stdout (fd 1) is closed: there is no JSON-RPC channel to answer on")


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


class FramingLost(Exception):
    """The byte stream cannot be re-synchronised (an absurd ``Content-Length``): the server
    says why on stderr and exits instead of waiting for gigabytes that will never be a message."""


@attrs.define
class BadFrame:
    """A header block refused without a usable body: ``reason`` goes into the -32600 reply,
    with ``msg_id`` when it could be recovered from the start of a discarded body."""

    reason: str
    msg_id: int | str | None = None


#: A ``Content-Length`` header whose line never ended: the body's ``{`` (or ``[``) follows the
#: digits directly (``Content-Length: 52{"jsonrpc": …``).
_LENGTH_THEN_BODY = re.compile(rb"[ \t]*content-length:[ \t]*(\d{1,12})[ \t]*(?=[{\[])", re.IGNORECASE)
#: The bytes a line that :data:`_LENGTH_THEN_BODY` could match starts with.
_LENGTH_FIRST = frozenset(b" \tCc")
#: Bytes a JSON-RPC body starts with (an object, or a batch).
_BODY_FIRST = frozenset(b"{[")
#: Why a body that came without its header block's blank line is refused.
NO_BLANK_LINE = "the header block did not end with a blank line (body discarded)"
#: Why a body that came inside its ``Content-Length`` header line is refused.
UNENDED_HEADER = "the Content-Length header line did not end before the body (body discarded)"


@attrs.define
class _Headless:
    """A body found where a header line should be: its declared length and why it is refused."""

    length: int
    reason: str


class FrameReader:
    r"""LSP frames out of a byte stream, parsed from a buffer of its own (read in chunks of up to
    :data:`READ_CHUNK_BYTES`), so a header block can be looked at before a line of it ends.

    :meth:`next` returns one message body, a :class:`BadFrame` for a refused frame (answered
    -32600, with the request's id when it can be recovered), or ``None`` at EOF. A header block
    without its blank line (``Content-Length: N\r\n`` then the body), or a ``Content-Length``
    line that never ended before the body, is answered at once with the body's id and the
    stream goes on after the declared length: the request is refused, never lost silently, and
    the next frame is read as usual. Raises :class:`FramingLost` for a length over
    :data:`MAX_DRAIN_BYTES`.
    """

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._buf = bytearray()
        self._eof = False

    async def _fill(self) -> bool:
        """Read what is available (at least one byte) into the buffer; ``False`` at EOF."""
        if self._eof:
            return False
        chunk = await self._reader.read(READ_CHUNK_BYTES)
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    async def _take(self, n: int) -> bytes | None:
        """Exactly ``n`` bytes (the buffer's first, then the stream's); ``None`` at EOF."""
        buf = self._buf
        if len(buf) >= n:
            data = bytes(buf[:n])
            del buf[:n]
            return data
        head = bytes(buf)
        buf.clear()
        try:
            return head + await self._reader.readexactly(n - len(head))
        except asyncio.IncompleteReadError:
            self._eof = True
            return None

    async def _drain(self, n: int) -> bytes | None:
        """Discard ``n`` bytes, in bounded chunks; the first :data:`DISCARDED_HEAD_BYTES` of
        them are returned (to recover an id); ``None`` at EOF."""
        head = bytes(self._buf[:DISCARDED_HEAD_BYTES])
        taken = min(n, len(self._buf))
        del self._buf[:taken]
        remaining = n - taken
        while remaining > 0:
            chunk = await self._reader.read(min(remaining, 1 << 20))
            if not chunk:
                self._eof = True
                return None
            if len(head) < DISCARDED_HEAD_BYTES:
                head += chunk[: DISCARDED_HEAD_BYTES - len(head)]
            remaining -= len(chunk)
        return head

    async def _line(self) -> tuple[bytes, bool] | _Headless | None:
        """One header line (with its newline) and whether it was longer than
        :data:`MAX_HEADER_BYTES` (then its text is dropped, up to its newline, in bounded
        steps); a :class:`_Headless` when a ``Content-Length`` line runs into its body;
        ``None`` at EOF."""
        buf = self._buf
        too_long = False
        while True:
            nl = buf.find(b"\n")
            if buf and buf[0] in _LENGTH_FIRST and not too_long:
                m = _LENGTH_THEN_BODY.match(buf)
                if m is not None and (nl < 0 or nl > m.end()):
                    length = int(m.group(1))  # before the buffer (which the match reads) changes
                    del buf[: m.end()]
                    return _Headless(length, UNENDED_HEADER)
            if 0 <= nl <= MAX_HEADER_BYTES and not too_long:
                line = bytes(buf[: nl + 1])
                del buf[: nl + 1]
                return line, False
            if nl >= 0:  # the end of a line over the bound: drop it whole
                del buf[: nl + 1]
                return b"", True
            if len(buf) > MAX_HEADER_BYTES:
                too_long = True
                buf.clear()  # no newline in it: all of it belongs to the over-long line
            if not await self._fill():
                return None

    async def next(self) -> bytes | BadFrame | None:
        """The next message body, a refused frame, or ``None`` at EOF (see the class docstring).

        Re-synchronises after a wrong ``Content-Length``: a header line holding garbage before
        ``Content-Length:`` (the tail of a body whose length was understated) is read from there.
        """
        length: int | None = None
        problem: str | None = None
        lines = 0
        while True:
            if length is not None and problem is None and length >= 0:
                # a Content-Length was read: the body may follow without the blank line
                if not self._buf and not await self._fill():
                    return None
                if self._buf[0] in _BODY_FIRST:
                    return await self._refuse_body(length, NO_BLANK_LINE)
            got = await self._line()
            if got is None:
                return None
            if isinstance(got, _Headless):
                return await self._refuse_body(got.length, got.reason)
            line, too_long = got
            if too_long:
                problem = problem or f"a header line is longer than {MAX_HEADER_BYTES} bytes"
                continue
            if line.strip() == b"":
                if length is None and problem is None and lines == 0:
                    continue  # stray blank line between frames
                break
            lines += 1
            if lines > MAX_HEADER_LINES:
                problem = problem or f"more than {MAX_HEADER_LINES} header lines"
                continue
            at = line.lower().find(_CONTENT_LENGTH)
            if at < 0:
                continue  # Content-Type or garbage: ignored, as LSP allows other headers
            if at > 0:
                log.warning("discarded %d bytes of garbage before a Content-Length header", at)
            value = line[at + len(_CONTENT_LENGTH) :].strip()
            length = int(value) if value.isdigit() and len(value) <= 12 else -1
            if length < 0:
                problem = problem or f"Content-Length {value[:40].decode('ascii', 'replace')!r} is not a byte count"
        if problem is not None:
            return BadFrame(problem)
        if length is None:
            return BadFrame("no Content-Length header")
        if length > MAX_BODY_BYTES:
            return await self._oversized(length, f"Content-Length {length} is over {MAX_BODY_BYTES} bytes")
        return await self._take(length)

    async def _oversized(self, length: int, reason: str) -> BadFrame | None:
        if length > MAX_DRAIN_BYTES:
            raise FramingLost(
                f"Content-Length {length} is over {MAX_DRAIN_BYTES} bytes: the stream cannot be re-synchronised"
            )
        head = await self._drain(length)
        if head is None:
            return None
        # the request's id usually comes first: answer it, or the client waits forever
        return BadFrame(f"{reason} (body discarded)", recover_id(head))

    async def _refuse_body(self, length: int, reason: str) -> BadFrame | None:
        """Read the ``length`` bytes of a body whose framing was broken and refuse it, with the
        id it carries (the client is waiting for that id's reply)."""
        log.warning("refused a frame: %s", reason)
        if length > MAX_BODY_BYTES:
            return await self._oversized(length, reason.removesuffix(" (body discarded)"))
        body = await self._take(length)
        return None if body is None else BadFrame(reason, recover_id(body))


def dispatch(protocol: Any, body: bytes) -> None:
    """Decode one body and hand it to pygls, answering what pygls would drop silently."""
    peer = PyglsPeer(protocol)
    try:
        raw = json.loads(body)
    except RecursionError:
        peer.send_raw(
            _error_frame(
                recover_id(body), ErrorCode.INVALID_REQUEST, "Invalid Request: the message is nested too deeply"
            )
        )
        return
    except (ValueError, UnicodeDecodeError):
        peer.send_raw(_error_frame(None, ErrorCode.PARSE_ERROR, "Parse error: the body is not valid JSON"))
        return
    if (
        not isinstance(raw, dict)
        or raw.get("jsonrpc") != "2.0"
        or not (isinstance(raw.get("method"), str) or "id" in raw)
        or ("method" in raw and not isinstance(raw["method"], str))  # a numeric/null/list method
    ):
        msg_id = raw.get("id") if isinstance(raw, dict) and _valid_id(raw.get("id")) else None
        peer.send_raw(
            _error_frame(msg_id, ErrorCode.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message object")
        )
        return
    is_request = "id" in raw and isinstance(raw.get("method"), str)
    if is_request and not _valid_id(raw["id"]):
        peer.send_raw(_error_frame(None, ErrorCode.INVALID_REQUEST, "Invalid Request: id must be a number or a string"))
        return
    if is_request and peer.shut_down and raw["method"] != "exit":
        # LSP: requests after `shutdown` are answered InvalidRequest (pygls drops them silently)
        peer.send_raw(
            _error_frame(raw["id"], ErrorCode.INVALID_REQUEST, f"Invalid Request: {raw['method']} after shutdown")
        )
        return
    if is_request and raw["method"] == "initialize" and peer.initialized_once:
        # LSP: initialize is sent once; a second one changes nothing and leaks nothing
        peer.send_raw(
            _error_frame(raw["id"], ErrorCode.INVALID_REQUEST, "Invalid Request: initialize was already received")
        )
        return
    try:
        message = peer.structure(raw)
    except RecursionError:
        message = None
        error: tuple[int, str] = (ErrorCode.INVALID_REQUEST, "the message is nested too deeply")
    except JsonRpcException as exc:
        message = None
        error = (exc.code, exc.message or "does not match the method")
    if message is None:
        if is_request:
            method = raw.get("method")
            peer.send_raw(_error_frame(raw["id"], error[0], f"Invalid params for {method}: {error[1]}"))
        else:
            log.warning("dropping a malformed %s message", str(raw.get("method", "response"))[:100])
        return
    peer.handle(message)


def _valid_id(value: Any) -> bool:
    """JSON-RPC ids: a string or an integer (a bool is not an id; a fraction SHOULD NOT be)."""
    return isinstance(value, (int, str)) and not isinstance(value, bool)


#: Bytes read per ``os.read`` by the stdin thread.
READ_CHUNK_BYTES: Final = 64 * 1024


def _pollable(fd: int) -> bool:
    """Whether the event loop can watch ``fd``: a pipe or a socket (epoll refuses regular
    files and ``/dev/null``; a terminal is polled fine, but a thread reads it just as well
    and keeps one code path for every character device)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def attach_stdin(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, stdin: BinaryIO) -> None:
    """Feed ``reader`` from ``stdin``: through the loop for a pipe or socket, else from a
    daemon thread (regular file, ``/dev/null``, terminal). EOF or a read error ends the feed."""
    fd = stdin.fileno()
    if _pollable(fd):
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), stdin)
            return
        except (ValueError, OSError):  # the loop cannot watch it after all: read in a thread
            pass

    def pump() -> None:
        while True:
            try:
                chunk = os.read(fd, READ_CHUNK_BYTES)
            except InterruptedError:
                continue
            except OSError as exc:
                log.warning("stdin read failed (%s): stopping", exc.strerror or type(exc).__name__)
                chunk = b""
            try:
                if chunk:
                    loop.call_soon_threadsafe(reader.feed_data, chunk)
                else:
                    loop.call_soon_threadsafe(reader.feed_eof)
            except RuntimeError:  # the loop is closed: the server is gone
                return
            if not chunk:
                return

    threading.Thread(target=pump, name="dsh-stdin", daemon=True).start()


async def serve(protocol: Any, stdin: BinaryIO, stop: asyncio.Event | None = None) -> None:
    """Read frames from ``stdin`` until EOF (or ``stop``) and dispatch each one.

    A refused header block gets a -32600 reply with ``id: null`` (its id is unknowable);
    raises :class:`FramingLost` when the stream cannot be re-synchronised.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_CHUNK_BYTES, loop=loop)
    await attach_stdin(loop, reader, stdin)
    frames = FrameReader(reader)
    while stop is None or not stop.is_set():
        frame = await frames.next()
        if frame is None:
            return
        if isinstance(frame, BadFrame):
            log.warning("refused a frame: %s", frame.reason)
            PyglsPeer(protocol).send_raw(
                _error_frame(frame.msg_id, ErrorCode.INVALID_REQUEST, f"Invalid Request: {frame.reason}")
            )
            continue
        RECEIVED_AT.set(time.monotonic())
        try:
            dispatch(protocol, frame)
        except SystemExit:
            raise
        except Exception:  # one bad message never stops the server
            log.exception("unhandled error while dispatching a message")
        await asyncio.sleep(0)  # let handlers run between frames of a pipelined burst
