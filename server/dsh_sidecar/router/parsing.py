"""Large answers handled in a worker process, over a socket the event loop drives.

``json.loads`` and lxml hold the GIL for their whole run (about 10 ms a MB), so a body over
:data:`OFF_PROCESS_BYTES` is parsed and normalised in one worker process (``spawn``: no
inherited threads or locks), started in the background on first need
(:meth:`ParseWorker.start_soon`: no search waits for its spawn and imports, which take seconds on
a loaded machine; a large body that comes before it is ready is parsed in a thread). It was a ``ProcessPoolExecutor``, whose
hand-over ran in the server process on two helper threads: a feeder thread pickling the
body and pushing it through a 64 KiB pipe (a GIL round trip per pipe write), and a manager
thread woken by a pipe write on every submit and again for every result. Both took the GIL
from the event loop in the middle of other requests (bench/large_answers.py). Here the event
loop itself writes the job to a Unix socket (the body as it is, after a small header: no
pickle of it, no thread) and reads the result when the socket is readable; the worker is
niced (:data:`WORKER_NICE`) so that its CPU-bound parsing yields the CPU to the server on a
busy machine.

Reading a large body is itself most of the server's cost of such a search (about 1.7 ms of
CPU a MB on the event loop: the connection pool's bookkeeping, the HTTP parser's events per
64 KiB, the decoder, the join and the copy to the worker). So once a provider has sent a
large answer, its next exchanges are **fetched** by the worker (:meth:`ParseWorker.fetch`):
the request goes over the socket, the worker runs the same exchange
(:func:`dsh_sidecar.router.http.exchange`: its caps on the body and its codings, the
attempt's budget) on its own event loop and client, digests the body, and sends back only
the bounded result, the response's headers (for the pacer) and the body's size; the event
loop's share is a small pickle each way. A fetched answer that was small hands the provider
back to the event loop.

Frames, both ways: ``!IIQ`` (job id, pickle length, raw length), then the pickle, then the
raw bytes. A job's pickle is ``("parse", provider_id, status, headers, max_results, secrets)``
with the body as its raw bytes, ``("fetch", provider_id, request, budget_ms, basic_auth,
max_results, secrets)`` with none, or ``("cancel", job)`` (a fetch whose search was
cancelled: the worker cancels its exchange, which closes the connection); a result's pickle
is ``(True, value)`` or ``(False, failure)`` with no raw bytes. A worker that dies fails the
jobs it held with :class:`WorkerGone` (the caller parses in a thread, or exchanges on the
loop) and is started again (in the background) on the next need; one that loses its parent sees
the socket close and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import multiprocessing
import os
import pickle
import socket
import struct
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Final, NamedTuple

if TYPE_CHECKING:
    from dsh_protocol import Source

    from dsh_sidecar.router.providers.base import HttpRequest, ProviderAnswer, ProviderFailure

log = logging.getLogger(__name__)

#: Bodies larger than this are parsed in the worker process, bytes.
OFF_PROCESS_BYTES: Final = 256 * 1024
#: Niceness the worker adds to its own (``os.nice``): the parser is batch work; the server's
#: event loop answers a harness's hooks. On a machine with no spare CPU the large answers
#: wait, the hooks do not — within reason: at 10 the worker starved beside two CPU-bound
#: processes (load 28-34 on 2 cores: large searches' p50 5.5-8.4 s, 15 of 191 timed out), at 0
#: the hooks' p99 with large answers in flight passed 2x idle in 3 of 5 runs; 5 kept it at
#: x1.20-1.57 with no search timed out (docs/benchmarks.md, "The parsing worker's start, priority
#: and imports").
WORKER_NICE: Final = 5
#: Send buffer asked for the server's end, bytes (the kernel caps it at ``net.core.wmem_max``):
#: a 1 MB body leaves in a few writes.
SEND_BUFFER: Final = 4 * 1024 * 1024
#: Seconds since its last result (or its start) a silent worker that is running (state ``R``:
#: working, or waiting for a CPU the machine's other jobs hold, as a niced process on a loaded
#: machine does) is kept before it is given up all the same (:meth:`ParseWorker.abandon_if_silent`).
BUSY_LIMIT_S: Final = 30.0
#: Seconds after a start that failed before :meth:`ParseWorker.start_soon` tries again (a worker
#: that cannot start costs a spawn and its imports at each try; meanwhile bodies are parsed in a
#: thread).
RETRY_START_S: Final = 30.0

_HEADER: Final = struct.Struct("!IIQ")


class Fetched(NamedTuple):
    """What the worker sends back for a fetch: the response's headers (lower-case names;
    ``None`` when no response came), its body's size in bytes (0 without one), and the
    digest's answer or the provider's failure."""

    headers: dict[str, str] | None
    size: int
    outcome: tuple[ProviderAnswer, list[Source], bool] | ProviderFailure


class WorkerGone(Exception):
    """The worker process ended (or could not start) before it answered."""


class ParseWorker:
    """The one worker process and the server's end of its socket.

    :meth:`digest` and :meth:`fetch` are called on an event loop once the worker is :meth:`ready`
    (:meth:`start` or :meth:`start_soon` first; a job sent to no worker raises
    :class:`WorkerGone`); the worker is bound to the loop of its
    first job and moves to another loop when it holds no job (the server has one loop; tests
    have one per test). A job from a second loop while the first still has jobs in flight
    raises :class:`WorkerGone`, as a dead worker does (the caller parses in a thread)."""

    def __init__(self) -> None:
        self._start_lock = threading.Lock()  # one start at a time (held while it waits for the worker)
        self._state_lock = threading.Lock()  # the running worker's process and socket, its generation
        self._generation = 0  # moved by :meth:`close`: a start under way then discards its worker
        self._starter: threading.Thread | None = None  # :meth:`start_soon`'s thread
        self._opening: tuple[socket.socket, socket.socket] | None = None  # a start's socket pair, until ready
        self._failed_at = -RETRY_START_S  # time.monotonic() of the last start that failed
        self._process: Any = None
        self._sock: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._send_lock: asyncio.Lock | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._inbox = bytearray()
        self._cancels: set[asyncio.Task[None]] = set()
        self._heard = 0.0  # time.monotonic() of the worker's last result (or of its start)
        self._behind = False  # kept silent past a job's grace (abandon_if_silent): until a result

    def ready(self) -> bool:
        """Whether the worker is running (a job would not wait for its start)."""
        return self._sock is not None

    def behind(self) -> bool:
        """Whether the worker was kept silent past a job's grace (running: slow, or in a parse
        that never ends) and has sent nothing since: a job sent now would wait behind it, so the
        caller does the work itself (a fetch on the loop, a digest in a thread) and nothing
        waits a grace at it again. Past :data:`BUSY_LIMIT_S` of silence it is given up here."""
        if not self._behind:
            return False
        self.abandon_if_silent(time.monotonic())
        return self._sock is not None  # given up: the next job starts another

    def start_soon(self) -> None:
        """Start the worker on a thread of its own, unless it runs, is starting, or failed to
        start in the last :data:`RETRY_START_S`; never waits. A search that needs the worker and
        finds it not :meth:`ready` calls this and does the work itself meanwhile."""
        with self._state_lock:
            if self._sock is not None or (self._starter is not None and self._starter.is_alive()):
                return
            if time.monotonic() - self._failed_at < RETRY_START_S:
                return
            generation = self._generation
            self._starter = threading.Thread(
                target=self._start_logged, args=(generation,), name="dsh-router-parse-start", daemon=True
            )
            self._starter.start()

    def _start_logged(self, generation: int) -> None:
        try:
            self.start()
        except (WorkerGone, OSError) as exc:  # OSError: no socket pair (out of descriptors)
            with self._state_lock:
                if self._generation != generation:  # closed meanwhile: nothing failed
                    return
                self._failed_at = time.monotonic()
            log.warning("router: %s; large answers are parsed in this process meanwhile", exc)

    def start(self) -> None:
        """Start the worker and wait until it has imported the parsers and the exchange (blocking:
        call it off the event loop). Idempotent. Raises :class:`WorkerGone` when it cannot start,
        or when :meth:`close` was called while it started."""
        with self._start_lock:
            if self._sock is not None:
                return
            with self._state_lock:
                generation = self._generation
                ours, theirs = self._opening = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            failed: WorkerGone | None = None
            try:
                process = self._spawn(ours, theirs)
            except WorkerGone as exc:
                process, failed = None, exc
            with self._state_lock:
                self._opening = None
                closed = self._generation != generation
                if process is not None and not closed:
                    self._process, self._sock, self._heard = process, ours, time.monotonic()
                    self._behind = False
                    return
            if process is not None:  # closed while it started: this worker is nobody's
                ours.close()
                _reap(process)
            raise WorkerGone("the parsing worker was closed while it started") if closed or failed is None else failed

    def _spawn(self, ours: socket.socket, theirs: socket.socket) -> Any:
        """Spawn the worker on ``theirs`` and wait for its ready byte on ``ours``; the process."""
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
            if ours.recv(1) != b"R":  # imported and serving (b"": it exited, or close() shut the socket)
                raise OSError("no ready byte")
        except OSError as exc:
            ours.close()
            with contextlib.suppress(OSError):
                process.kill()
            process.join(1)
            raise WorkerGone(f"the parsing worker did not start: {type(exc).__name__}") from None
        ours.setblocking(False)
        with contextlib.suppress(OSError):  # a smaller buffer only means more writes
            ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        return process

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
        ok, value = await self._run(("parse", provider_id, status, headers, max_results, secrets), body)
        if not ok:
            raise value
        return value

    async def fetch(
        self,
        provider_id: str,
        request: HttpRequest,
        budget_ms: float,
        basic_auth: tuple[str, str] | None,
        max_results: int,
        secrets: tuple[str, ...],
    ) -> Fetched:
        """The worker's exchange of ``request`` (within ``budget_ms``) and digest of its body.
        Raises :class:`WorkerGone` when no worker can take the job; cancelling the caller
        cancels the worker's exchange."""
        ok, value = await self._run(
            ("fetch", provider_id, request, budget_ms, basic_auth, max_results, secrets), b"", cancellable=True
        )
        if not ok:  # not the provider's failure (a fetched one is in the Fetched): a worker's bug
            raise WorkerGone(f"the parsing worker failed a fetch: {type(value).__name__}")
        return Fetched(*value)

    async def _run(self, meta: tuple[Any, ...], body: bytes, cancellable: bool = False) -> tuple[bool, Any]:
        sock = self._sock
        if sock is None:
            raise WorkerGone("the parsing worker is not running")
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._bind(loop, sock)
        job = self._next_id = (self._next_id + 1) & 0xFFFFFFFF
        future: asyncio.Future[Any] = loop.create_future()
        self._pending[job] = future
        pickled = pickle.dumps(meta, pickle.HIGHEST_PROTOCOL)
        head = _HEADER.pack(job, len(pickled), len(body)) + pickled
        try:
            # shielded: a search cancelled mid-frame must not leave half a frame on the socket
            # (its result is dropped when it comes)
            await asyncio.shield(self._send(loop, sock, head, body))
            result: tuple[bool, Any] = await future
        except OSError:
            self._gone("the parsing worker's socket failed")
            raise WorkerGone("the parsing worker's socket failed") from None
        except asyncio.CancelledError:
            if cancellable and self._pending.pop(job, None) is not None and self._sock is sock:
                self._cancel(loop, sock, job)
            raise
        finally:
            self._pending.pop(job, None)
        return result

    def _cancel(self, loop: asyncio.AbstractEventLoop, sock: socket.socket, job: int) -> None:
        """Tell the worker to drop ``job`` (after any frame being sent: the send lock is FIFO)."""
        pickled = pickle.dumps(("cancel", job), pickle.HIGHEST_PROTOCOL)
        task = loop.create_task(self._send(loop, sock, _HEADER.pack(0, len(pickled), 0) + pickled, b""))
        self._cancels.add(task)
        task.add_done_callback(self._cancel_sent)

    def _cancel_sent(self, task: asyncio.Task[None]) -> None:
        self._cancels.discard(task)
        if not task.cancelled() and task.exception() is not None:  # the socket failed: so does the worker
            self._gone("the parsing worker's socket failed")

    async def _send(self, loop: asyncio.AbstractEventLoop, sock: socket.socket, head: bytes, body: bytes) -> None:
        assert self._send_lock is not None
        async with self._send_lock:  # one frame at a time on the socket
            await loop.sock_sendall(sock, head)
            if body:
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
            self._heard, self._behind = time.monotonic(), False
            future = self._pending.pop(job, None)
            if future is not None and not future.done():
                future.set_result(result)

    def abandon_if_silent(self, since: float) -> bool:
        """Give up on a worker that has sent no result since ``since`` (``time.monotonic()``,
        when a job that timed out was sent) and is not running: it is stuck (stopped, or blocked),
        and every later job would wait for it too. A running one (state ``R`` in ``/proc``) is
        slow, not stuck — a niced worker on a loaded machine waits for a CPU — and is kept, up
        to :data:`BUSY_LIMIT_S` (a parse that never ends). It is killed and its jobs fail with
        :class:`WorkerGone`; the next job starts another. ``True`` when it was given up."""
        if self._sock is None or self._heard >= since:
            return False  # gone already, or answering (busy, not stuck)
        silent = time.monotonic() - self._heard  # since its last result, or its start
        if self._process is not None and silent < BUSY_LIMIT_S and _running(self._process.pid):
            self._behind = True  # no job is sent to it until it answers (:meth:`behind`)
            return False  # working or waiting for a CPU: slow, not stuck (this job fell back already)
        if self._process is not None:
            with contextlib.suppress(OSError):
                self._process.kill()
        self._gone("the parsing worker stopped answering")
        return True

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
            log.warning("router: %s; large answers are read and parsed in this process until it is restarted", why)
            threading.Thread(target=_reap, args=(process,), name="dsh-router-parse-reap", daemon=True).start()

    def close(self) -> None:
        """Stop the worker (it exits when its socket closes); a start under way discards the
        worker it started, and the next start is not held back by an earlier failure."""
        with self._state_lock:
            self._generation += 1
            starter, self._starter, self._failed_at = self._starter, None, -RETRY_START_S
            sock, self._sock = self._sock, None
            process, self._process = self._process, None
            if self._opening is not None:  # a start waiting for its ready byte: it reads EOF now
                with contextlib.suppress(OSError):
                    self._opening[0].shutdown(socket.SHUT_RDWR)
        if starter is not None and starter is not threading.current_thread():
            starter.join(5)  # its spawn (if under way) and the kill of what it spawned
        if sock is not None:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(sock.fileno())
            sock.close()
        self._loop, self._send_lock = None, None  # the next worker's first job binds its socket
        if process is not None:
            _reap(process)


def _running(pid: int) -> bool:
    """Whether process ``pid`` is running or runnable (``R`` in ``/proc/<pid>/stat``; ``False``
    where there is no ``/proc``: a silent worker is then given up as before)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read(4096)
    except OSError:
        return False
    state = stat.rfind(b")") + 2  # after "pid (comm) ", whatever the comm holds
    return stat[state : state + 1] == b"R"


def _reap(process: Any) -> None:
    process.join(5)
    if process.is_alive():
        process.kill()
        process.join(1)


# ---------------------------------------------------------------------------- the worker


def serve_parses(sock: socket.socket) -> None:
    """The worker process: serve the jobs from ``sock`` until it closes. Its standard output
    is its standard error: the server's stdout, which it inherits, is the JSON-RPC or MCP
    channel, and a stray line written there by any code of the worker would break it."""
    with contextlib.suppress(OSError):
        os.dup2(2, 1)
    sys.stdout = sys.stderr
    with contextlib.suppress(OSError):  # not allowed: parse at the server's priority
        os.nice(WORKER_NICE)
    # the parsers and the exchange (httpx, anyio's asyncio backend, the client and its TLS
    # context), made before the ready byte: neither the first parse nor the first fetch waits for them
    from dsh_sidecar.redact import Redactor  # noqa: F401
    from dsh_sidecar.router.digest import digest  # noqa: F401
    from dsh_sidecar.router.http import make_client, warm_async_backend
    from dsh_sidecar.router.providers import PROVIDERS  # noqa: F401

    warm_async_backend()
    jobs = _Jobs(sock, make_client())
    sock.setblocking(True)
    sock.sendall(b"R")
    asyncio.run(jobs.serve())


class _Jobs:
    """The worker's side: parse jobs run at once (the worker's loop waits for them), fetches as
    tasks of the worker's loop, each result sent when it is ready."""

    def __init__(self, sock: socket.socket, client: Any) -> None:
        self.sock = sock
        self.client = client
        self.writer: asyncio.StreamWriter | None = None
        self.fetches: dict[int, asyncio.Task[None]] = {}
        self.redactors: dict[tuple[str, ...], Any] = {}

    async def serve(self) -> None:
        reader, self.writer = await asyncio.open_unix_connection(sock=self.sock)
        while True:
            try:
                job, size, raw = _HEADER.unpack(await reader.readexactly(_HEADER.size))
                meta = pickle.loads(await reader.readexactly(size))
                body = await reader.readexactly(raw) if raw else b""
            except (asyncio.IncompleteReadError, OSError):
                return
            kind = meta[0]
            if kind == "parse":
                self.send(job, self.parse(meta[1:], body))
            elif kind == "fetch":
                task = asyncio.create_task(self.fetch(job, *meta[1:]))
                self.fetches[job] = task
                task.add_done_callback(functools.partial(self.finished, job))
            elif kind == "cancel" and meta[1] in self.fetches:
                self.fetches[meta[1]].cancel()

    def finished(self, job: int, _task: asyncio.Task[None]) -> None:
        self.fetches.pop(job, None)

    def send(self, job: int, result: tuple[bool, Any]) -> None:
        assert self.writer is not None
        payload = pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
        self.writer.write(_HEADER.pack(job, len(payload), 0) + payload)

    def redactor(self, secrets: tuple[str, ...]) -> Any:
        from dsh_sidecar.redact import Redactor

        redactor = self.redactors.get(secrets)
        if redactor is None:
            self.redactors.clear()  # one chain's secrets at a time
            redactor = self.redactors[secrets] = Redactor(secrets)
        return redactor

    def parse(self, meta: tuple[Any, ...], body: bytes) -> tuple[bool, Any]:
        from dsh_sidecar.router.digest import digest
        from dsh_sidecar.router.providers import PROVIDERS
        from dsh_sidecar.router.providers.base import HttpResponse, ProviderFailure

        provider_id, status, headers, max_results, secrets = meta
        redactor = self.redactor(secrets)
        try:
            response = HttpResponse(status, headers, body, redact=redactor)
            return True, digest(PROVIDERS[provider_id], response, max_results, redactor)
        except ProviderFailure as failure:
            return False, failure

    async def fetch(
        self,
        job: int,
        provider_id: str,
        request: HttpRequest,
        budget_ms: float,
        basic_auth: tuple[str, str] | None,
        max_results: int,
        secrets: tuple[str, ...],
    ) -> None:
        from dsh_sidecar.router.digest import digest
        from dsh_sidecar.router.http import exchange
        from dsh_sidecar.router.providers import PROVIDERS
        from dsh_sidecar.router.providers.base import ProviderFailure

        redactor = self.redactor(secrets)
        headers: dict[str, str] | None = None
        size = 0
        try:
            try:
                response = await exchange(self.client, request, budget_ms, basic_auth)
                headers, size = response.headers, len(response.body)
                outcome: Any = digest(PROVIDERS[provider_id], response, max_results, redactor)
            except ProviderFailure as failure:
                outcome = failure
            result: tuple[bool, Any] = (True, (headers, size, outcome))
        except Exception as exc:  # a bug of ours: the server exchanges on its loop instead
            result = (False, RuntimeError(type(exc).__name__))
        self.send(job, result)


#: The process's worker (one per server process, shared by every router).
WORKER = ParseWorker()
