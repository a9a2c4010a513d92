"""Large response bodies parsed in a worker process, over a socket the event loop drives.

``json.loads`` and lxml hold the GIL for their whole run (about 10 ms a MB), so a body over
:data:`OFF_PROCESS_BYTES` is parsed and normalised in one worker process (``spawn``: no
inherited threads or locks), started on first need. It was a ``ProcessPoolExecutor``, whose
hand-over ran in the server process on two helper threads: a feeder thread pickling the
body and pushing it through a 64 KiB pipe (a GIL round trip per pipe write), and a manager
thread woken by a pipe write on every submit and again for every result. Both took the GIL
from the event loop in the middle of other requests (bench/large_answers.py). Here the event
loop itself writes the job to a Unix socket (the body as it is, after a small header: no
pickle of it, no thread) and reads the result when the socket is readable; the worker is a
plain blocking loop, niced (:data:`WORKER_NICE`) so that its CPU-bound parsing yields the
CPU to the server on a busy machine.

Frames, both ways: ``!IIQ`` (job id, pickle length, raw length), then the pickle, then the
raw bytes. A job's pickle is ``(provider_id, status, headers, max_results, secrets)`` and
its raw bytes the body; a result's pickle is ``(True, answer)`` or ``(False, failure)`` with
no raw bytes. A worker that dies fails the jobs it held with :class:`WorkerGone` (the caller
parses in a thread) and is started again on the next need; one that loses its parent sees
the socket close and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import pickle
import socket
import struct
import threading
from typing import Any, Final

log = logging.getLogger(__name__)

#: Bodies larger than this are parsed in the worker process, bytes.
OFF_PROCESS_BYTES: Final = 256 * 1024
#: Niceness the worker adds to its own (``os.nice``): the parser is batch work; the server's
#: event loop answers a harness's hooks. On a machine with no spare CPU the large answers
#: wait, the hooks do not.
WORKER_NICE: Final = 10
#: Send buffer asked for the server's end, bytes (the kernel caps it at ``net.core.wmem_max``):
#: a 1 MB body leaves in a few writes.
SEND_BUFFER: Final = 4 * 1024 * 1024

_HEADER: Final = struct.Struct("!IIQ")


class WorkerGone(Exception):
    """The worker process ended (or could not start) before it answered."""


class ParseWorker:
    """The one worker process and the server's end of its socket.

    :meth:`digest` is called on an event loop; the worker is bound to the loop of its
    first job and moves to another loop when it holds no job (the server has one loop; tests
    have one per test). A job from a second loop while the first still has jobs in flight
    raises :class:`WorkerGone`, as a dead worker does (the caller parses in a thread)."""

    def __init__(self) -> None:
        self._start_lock = threading.Lock()
        self._process: Any = None
        self._sock: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._send_lock: asyncio.Lock | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._inbox = bytearray()

    def ready(self) -> bool:
        """Whether the worker is running (a job would not wait for its start)."""
        return self._sock is not None

    def start(self) -> None:
        """Start the worker and wait until it has imported the parsers (blocking: call it off
        the event loop). Idempotent. Raises :class:`WorkerGone` when it cannot start."""
        with self._start_lock:
            if self._sock is not None:
                return
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                ctx = multiprocessing.get_context("spawn")
                process = ctx.Process(target=serve_parses, args=(theirs,), name="dsh-router-parse", daemon=True)
                process.start()
            except Exception as exc:
                ours.close()
                raise WorkerGone(f"cannot start the parsing worker: {type(exc).__name__}") from None
            finally:
                theirs.close()
            try:
                ours.settimeout(60)
                if ours.recv(1) != b"R":  # imported and serving
                    raise OSError("no ready byte")
            except OSError as exc:
                ours.close()
                process.join(1)
                raise WorkerGone(f"the parsing worker did not start: {type(exc).__name__}") from None
            ours.setblocking(False)
            with contextlib.suppress(OSError):  # a smaller buffer only means more writes
                ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
            self._process, self._sock = process, ours

    async def digest(
        self,
        provider_id: str,
        status: int,
        headers: dict[str, str],
        body: bytes,
        max_results: int,
        secrets: tuple[str, ...],
    ) -> Any:
        """The worker's :func:`~dsh_sidecar.router.digest.digest` of one body: the answer, or
        the provider's :class:`~dsh_sidecar.router.providers.base.ProviderFailure` raised.
        Raises :class:`WorkerGone` when no worker can take the job."""
        if self._sock is None:
            await asyncio.to_thread(self.start)  # the spawn and its imports: off the loop
        sock = self._sock
        if sock is None:
            raise WorkerGone("the parsing worker is not running")
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._bind(loop, sock)
        assert self._send_lock is not None
        job = self._next_id = (self._next_id + 1) & 0xFFFFFFFF
        future: asyncio.Future[Any] = loop.create_future()
        self._pending[job] = future
        meta = pickle.dumps((provider_id, status, headers, max_results, secrets), pickle.HIGHEST_PROTOCOL)
        head = _HEADER.pack(job, len(meta), len(body)) + meta
        try:
            # shielded: a search cancelled mid-frame must not leave half a frame on the socket
            # (its result is dropped when it comes)
            await asyncio.shield(self._send(loop, sock, head, body))
            ok, value = await future
        except OSError:
            self._gone("the parsing worker's socket failed")
            raise WorkerGone("the parsing worker's socket failed") from None
        finally:
            self._pending.pop(job, None)
        if not ok:
            raise value
        return value

    async def _send(self, loop: asyncio.AbstractEventLoop, sock: socket.socket, head: bytes, body: bytes) -> None:
        assert self._send_lock is not None
        async with self._send_lock:  # one frame at a time on the socket
            await loop.sock_sendall(sock, head)
            await loop.sock_sendall(sock, body)

    def _bind(self, loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
        if self._loop is not None and self._pending:
            raise WorkerGone("the parsing worker is busy on another event loop")
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(sock.fileno())
        self._loop = loop
        self._send_lock = asyncio.Lock()
        loop.add_reader(sock.fileno(), self._readable)

    def _readable(self) -> None:
        sock = self._sock
        if sock is None:
            return
        try:
            while True:
                data = sock.recv(256 * 1024)
                if not data:
                    self._gone("the parsing worker exited")
                    return
                self._inbox += data
                if len(data) < 256 * 1024:
                    break
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self._gone("the parsing worker's socket failed")
            return
        self._deliver()

    def _deliver(self) -> None:
        inbox = self._inbox
        while len(inbox) >= _HEADER.size:
            job, size, raw = _HEADER.unpack_from(inbox)
            end = _HEADER.size + size + raw
            if len(inbox) < end:
                return
            try:
                result = pickle.loads(inbox[_HEADER.size : _HEADER.size + size])
            except Exception:  # our own worker's pickle: a broken one means a broken worker
                self._gone("the parsing worker sent an unreadable result")
                return
            del inbox[:end]
            future = self._pending.pop(job, None)
            if future is not None and not future.done():
                future.set_result(result)

    def _gone(self, why: str) -> None:
        """Forget the worker: close its socket, fail its jobs (the next job starts another)."""
        sock, self._sock = self._sock, None
        process, self._process = self._process, None
        if sock is not None:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(sock.fileno())
            sock.close()
        self._loop, self._send_lock = None, None
        self._inbox = bytearray()
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(WorkerGone(why))
        if process is not None:
            log.warning("router: %s; large bodies are parsed in a thread until it is restarted", why)
            threading.Thread(target=_reap, args=(process,), name="dsh-router-parse-reap", daemon=True).start()

    def close(self) -> None:
        """Stop the worker (it exits when its socket closes)."""
        sock, self._sock = self._sock, None
        process, self._process = self._process, None
        if sock is not None:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(sock.fileno())
            sock.close()
        if process is not None:
            _reap(process)


def _reap(process: Any) -> None:
    process.join(5)
    if process.is_alive():
        process.kill()
        process.join(1)


# ---------------------------------------------------------------------------- the worker


def serve_parses(sock: socket.socket) -> None:
    """The worker process: digest each job from ``sock`` until it closes."""
    with contextlib.suppress(OSError):  # not allowed: parse at the server's priority
        os.nice(WORKER_NICE)
    from dsh_sidecar.redact import Redactor
    from dsh_sidecar.router.digest import digest
    from dsh_sidecar.router.providers import PROVIDERS
    from dsh_sidecar.router.providers.base import HttpResponse, ProviderFailure

    redactors: dict[tuple[str, ...], Redactor] = {}
    sock.setblocking(True)
    sock.sendall(b"R")
    while True:
        head = _recv_exactly(sock, _HEADER.size)
        if head is None:
            return
        job, size, raw = _HEADER.unpack(head)
        meta = _recv_exactly(sock, size)
        body = _recv_exactly(sock, raw)
        if meta is None or body is None:
            return
        provider_id, status, headers, max_results, secrets = pickle.loads(meta)
        redactor = redactors.get(secrets)
        if redactor is None:
            redactors.clear()  # one chain's secrets at a time
            redactor = redactors[secrets] = Redactor(secrets)
        try:
            response = HttpResponse(status, headers, body, redact=redactor)
            result: tuple[bool, Any] = (True, digest(PROVIDERS[provider_id], response, max_results, redactor))
        except ProviderFailure as failure:
            result = (False, failure)
        payload = pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
        sock.sendall(_HEADER.pack(job, len(payload), 0) + payload)


def _recv_exactly(sock: socket.socket, n: int) -> bytes | None:
    if n == 0:
        return b""
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            return None
        got += k
    return bytes(buf)


#: The process's worker (one per server process, shared by every router).
WORKER = ParseWorker()
