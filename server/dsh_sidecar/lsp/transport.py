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
import stat
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO, Final

import attrs
from dsh_protocol import ErrorCode
from dsh_protocol.ids import BAD_ID, IN_USE, NESTED, in_notification_namespace, notification_with_id, recover_id
from dsh_protocol.methods import NOTIFICATIONS as DSH_NOTIFICATIONS
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage, default_converter

from dsh_sidecar.lsp.framing import CONTENT_LENGTH, READ_CHUNK_BYTES, BadFrame, FrameReader
from dsh_sidecar.lsp.pygls_adapter import PyglsPeer

log = logging.getLogger(__name__)


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
        at = header.lower().find(CONTENT_LENGTH)
        value = header[at + len(CONTENT_LENGTH) :].split(b"\r\n")[0].strip() if at >= 0 else b""
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
                header.startswith(first + b"\r\n") and CONTENT_LENGTH not in header[len(first) :].lower()
            ):
                out.append(rest[:end])
                rest = rest[end:]
                continue
        lines = [
            b"Content-Length: %d" % len(body) if line.lower().startswith(CONTENT_LENGTH) else line
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


def dispatch(protocol: Any, body: bytes) -> int | str | None:
    """Decode one body and hand it to pygls, answering what pygls would drop silently; the id of
    a request handed to pygls (``None``: anything else)."""
    peer = PyglsPeer(protocol)
    try:
        raw = json.loads(body)
    except RecursionError:
        peer.send_raw(_error_frame(recover_id(body), ErrorCode.INVALID_REQUEST, NESTED))
        return None
    except (ValueError, UnicodeDecodeError):
        peer.send_raw(_error_frame(None, ErrorCode.PARSE_ERROR, "Parse error: the body is not valid JSON"))
        return None
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
        return None
    is_request = "id" in raw and isinstance(raw.get("method"), str)
    if is_request and not _valid_id(raw["id"]):
        peer.send_raw(_error_frame(None, ErrorCode.INVALID_REQUEST, BAD_ID))
        return None
    refused = _refused_request(peer, raw) if is_request else None
    if refused is not None:
        peer.send_raw(_error_frame(raw["id"], ErrorCode.INVALID_REQUEST, refused))
        return None
    if not is_request and (dropped := _unaddressed(raw)) is not None:
        log.warning("dropping a %s under an id no request can have", dropped)
        return None
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
        return None
    peer.handle(message)
    return raw["id"] if is_request else None


def _refused_request(peer: PyglsPeer, raw: dict[str, Any]) -> str | None:
    """Why a well-formed request must not reach pygls (the text of its ``InvalidRequest``), or
    ``None``. LSP: requests after ``shutdown`` are refused (pygls drops them silently), and
    ``initialize`` is sent once (a second one changes nothing and leaks nothing). JSON-RPC: an id
    names one request until it is answered; pygls files requests by id, so a reuse would take
    the first's entry (its cancel lost, two answers under one id). A notification's method (LSP's,
    any under MCP's ``notifications/``, or the sidecar's own: ``dsh_protocol.methods.NOTIFICATIONS``) sent with
    an id is an invalid request."""
    if peer.shut_down and raw["method"] != "exit":
        return f"Invalid Request: {raw['method']} after shutdown"
    if peer.in_flight(raw["id"]):
        return IN_USE
    if raw["method"] == "initialize" and peer.initialized_once:
        return "Invalid Request: initialize was already received"
    if raw["method"] != lsp.EXIT and (types := lsp.METHOD_TO_TYPES.get(raw["method"])) and types[1] is None:
        # pygls structures it by its notification type, which has no id: it would run unanswered
        return notification_with_id(raw["method"])
    if in_notification_namespace(raw["method"]) or raw["method"] in DSH_NOTIFICATIONS:
        # MCP's notifications (answered as the MCP transport does) and the sidecar's own
        return notification_with_id(raw["method"])
    return None


def _unaddressed(raw: dict[str, Any]) -> str | None:
    """What ``raw`` (a response, or a notification) is when it names a request by an id no
    request can have (an object, a list, a fraction), or ``None``: pygls looks such an id up in
    its tables of requests (dict keys) and raised ``TypeError`` (unhashable)."""
    if "method" not in raw:
        return "response" if raw["id"] is not None and not _valid_id(raw["id"]) else None
    params = raw.get("params")
    if raw["method"] == lsp.CANCEL_REQUEST and isinstance(params, dict) and "id" in params:
        return None if _valid_id(params["id"]) else "$/cancelRequest"
    return None


def _valid_id(value: Any) -> bool:
    """JSON-RPC ids: a string or an integer (a bool is not an id; a fraction SHOULD NOT be)."""
    return isinstance(value, (int, str)) and not isinstance(value, bool)


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


#: Client requests pygls may hold at once (each a handler's task, or a ``dsh/postExecute`` queued
#: behind one that waits for the index): past it the transport reads no more of the wire until one
#: is answered, so the pipe fills and the client's writes wait. The MCP transport's bound
#: (``mcp/request_ids.py``): far over a client's parallel calls and the searches that may run or
#: wait (``router.maxConcurrentSearches`` and ``maxQueuedSearches``, 16 + 256 by default). A client
#: writing calls faster than they were answered (one waiting for a 45,000-file tree's index) grew
#: the server from 63 MiB to 549 MiB in two minutes, without bound.
MAX_IN_FLIGHT: Final = 1024
#: How often (s) a transport at :data:`MAX_IN_FLIGHT` looks whether a request was answered.
ROOM_POLL_S: Final = 0.005


class _Held:
    """The ids of the client's requests handed to pygls, each until it is answered (looked up in
    pygls' table of requests in flight when the set is full: a request answered at once, or one
    answered since, is dropped then)."""

    def __init__(self, peer: PyglsPeer) -> None:
        self.peer = peer
        self.ids: set[int | str] = set()

    async def room(self, stop: asyncio.Event | None) -> None:
        """Return once fewer than :data:`MAX_IN_FLIGHT` requests are held (or ``stop`` is set)."""
        while len(self.ids) >= MAX_IN_FLIGHT:
            self.ids = {rid for rid in self.ids if self.peer.in_flight(rid)}
            if len(self.ids) < MAX_IN_FLIGHT or (stop is not None and stop.is_set()):
                return
            await asyncio.sleep(ROOM_POLL_S)


async def serve(protocol: Any, stdin: BinaryIO, stop: asyncio.Event | None = None) -> None:
    """Read frames from ``stdin`` until EOF (or ``stop``) and dispatch each one, reading the next
    only while pygls holds fewer than :data:`MAX_IN_FLIGHT` requests.

    A refused header block gets a -32600 reply with ``id: null`` (its id is unknowable);
    raises :class:`FramingLost` when the stream cannot be re-synchronised.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_CHUNK_BYTES, loop=loop)
    await attach_stdin(loop, reader, stdin)
    frames = FrameReader(reader)
    peer = PyglsPeer(protocol)
    held = _Held(peer)
    while stop is None or not stop.is_set():
        await held.room(stop)
        frame = await frames.next()
        if frame is None:
            return
        if isinstance(frame, BadFrame):
            log.warning("refused a frame: %s", frame.reason)
            peer.send_raw(_error_frame(frame.msg_id, ErrorCode.INVALID_REQUEST, f"Invalid Request: {frame.reason}"))
            continue
        RECEIVED_AT.set(time.monotonic())
        try:
            if (rid := dispatch(protocol, frame)) is not None:
                held.ids.add(rid)
        except SystemExit:
            raise
        except Exception:  # one bad message never stops the server
            log.exception("unhandled error while dispatching a message")
        await asyncio.sleep(0)  # let handlers run between frames of a pipelined burst
