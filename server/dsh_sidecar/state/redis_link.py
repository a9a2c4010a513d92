"""The link to the fleet store that degrades and never fails (the "Degrades, never fails"
paragraph of :mod:`.redis_store`): redis-py's client with one bounded wait per command, the store
marked away on the first failure (one warning), writes queued while it is away and re-sent in
order by a background thread that probes with ``PING``, cache writes sent from a background
sender, and the keys found unusable counted and logged once. :class:`~.redis_store.RedisState`
builds the store's operations on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, TypeVar

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from dsh_sidecar.errors import ConfigError
from dsh_sidecar.state import keys
from dsh_sidecar.state.bounded import MAX_REPLY_BYTES, BoundedConnection, BoundedSSLConnection
from dsh_sidecar.state.config import StateConfig, public_url
from dsh_sidecar.state.reads import Late, ReadPool, settle
from dsh_sidecar.state.shared import (
    EXIT_FLUSH_S,
    YIELD_S,
)

# the fleet store's log lines keep the name they have always had (the log format shows it)
log = logging.getLogger("dsh_sidecar.state.redis_store")

#: Most writes queued while the store is away (oldest dropped past it, counted in the status).
MAX_PENDING: Final = 100_000
#: Most cache writes waiting for the background sender (more are dropped: it is a cache).
MAX_BACKGROUND: Final = 256
#: Longest wait between two probes of a store that is away, seconds.
MAX_RETRY_S: Final = 30.0
#: A store back for less than this long that goes away again keeps its back-off, seconds.
STABLE_S: Final = 60.0
#: What a store that is away (or too slow) raises.
STORE_ERRORS: Final = (redis.ConnectionError, redis.TimeoutError, OSError)
#: What a store that answers but refuses every write raises: full (``maxmemory`` with
#: ``noeviction``), a read-only replica (a failover), no permission, persistence failing
#: (``MISCONF``). Treated as the store being away: writes queue and are re-sent once it takes them.
REFUSING_ERRORS: Final = (
    redis.exceptions.ReadOnlyError,
    redis.exceptions.OutOfMemoryError,
    redis.exceptions.NoPermissionError,
)
#: What a server that does not speak Redis makes a call raise: a protocol error, or, in
#: redis-py's handshake or our reading of a reply not of the shape asked for, the error of
#: that shape (a listener answering ``$5 hello`` to every command failed ``initialize`` with
#: an ``AttributeError`` from redis-py). The store is not usable: as when it is away.
FOREIGN_ERRORS: Final = (redis.exceptions.InvalidResponse, AttributeError, TypeError, IndexError, KeyError, ValueError)
#: Error replies that refuse the whole store, not one key: persistence failing, a server still
#: loading, a script running too long, no primary, a command the server does not have.
STORE_WIDE_REPLIES: Final = ("MISCONF", "LOADING", "BUSY", "MASTERDOWN", "unknown command", "ERR unknown command")
#: Everything a call to the store may raise.
CALL_ERRORS: Final = (redis.RedisError, OSError, *FOREIGN_ERRORS)
#: Distinct unusable keys logged by name (one warning each); later ones are only counted.
MAX_LOGGED_KEYS: Final = 32


T = TypeVar("T")


class StoreLink:
    """The connection to the store, its outages and its queued writes (module docstring)."""

    #: Most bytes of one command's reply (:class:`BoundedSocket`).
    max_reply_bytes: int = MAX_REPLY_BYTES

    def __init__(self, config: StateConfig, client: redis.Redis | None = None) -> None:
        self.url = public_url(config.backend)
        self.timeout_s = config.timeout_ms / 1000
        self.retry_s = config.retry_ms / 1000
        url = config.redis_url()
        try:
            self.client = client or redis.Redis.from_url(
                url,
                socket_timeout=self.timeout_s,
                socket_connect_timeout=self.timeout_s,
                retry=Retry(NoBackoff(), 0),  # a call waits once, at most timeoutMs
                health_check_interval=0,
                client_name="dsh-sidecar",
                connection_class=BoundedSSLConnection if url.startswith("rediss:") else BoundedConnection,
                max_reply_bytes=self.max_reply_bytes,
            )
        except ValueError:  # an option of the URL's query redis-py cannot read (its message would name it only)
            raise ConfigError("state.backend", "an option of the URL's query has an invalid value") from None
        self._lock = threading.Lock()
        self._up = True
        self._pending: deque[Callable[[], object]] = deque()
        self._stop = threading.Event()
        self._resync: threading.Thread | None = None
        #: A re-sync thread is running and will probe again if the store is away (set when one is
        #: started, cleared by it under the lock as it ends): an outage that begins while one is
        #: ending starts another, not none.
        self._resyncing = False
        self._background: queue.Queue[Callable[[], object]] = queue.Queue(MAX_BACKGROUND)
        self._sender: threading.Thread | None = None
        self._delay = self.retry_s
        self._back_at = float("-inf")
        self.outages = 0
        self.resent = 0
        self.dropped = 0
        self.last_error: str | None = None
        #: Keys found unusable (another type, over a bound, a write the store refused for its
        #: content): each logged once (the first :data:`MAX_LOGGED_KEYS`), all counted.
        self.bad_keys: set[str] = set()
        self.bad_key_count = 0
        self._reads = ReadPool("dsh-state-read")
        #: Set by :meth:`begin_exit`: no call touches the socket any more, every write is queued
        #: for :meth:`close`'s bounded send (the flushes of the exit never wait for the store).
        self._exiting = threading.Event()
        #: Writes handed to the socket and not yet acknowledged (any thread).
        self._sending = 0
        #: Set when :meth:`close` counted what it could not send: a later write is dropped, counted.
        self._final = False
        #: Writes a writer thread has taken for the store (:meth:`handing`) that have not reached
        #: :meth:`_write` yet: the exit's count waits for them (within its bound), else counts them.
        self._unarrived = 0
        self._handing = threading.local()
        self._arrived = threading.Condition(self._lock)
        #: Reads an event loop stopped waiting for (the store answered later than the call's
        #: bound) and reads not queued (the pool's queue full): the call served locally.
        self.late_reads = 0
        self.skipped_reads = 0

    @property
    def available(self) -> bool:
        return self._up

    # ------------------------------------------------------------------ degrade / re-sync
    @staticmethod
    def _store_wide(exc: BaseException) -> bool:
        """Whether ``exc`` says the whole store is unusable (away, or refusing writes), not one key.
        A command the server does not have (scripting renamed away with ``rename-command``, as
        some hardened or managed servers do) refuses every key, as an ACL denying it does."""
        return isinstance(exc, STORE_ERRORS + REFUSING_ERRORS + FOREIGN_ERRORS) or (
            isinstance(exc, redis.ResponseError) and str(exc).startswith(STORE_WIDE_REPLIES)
        )

    def _bad_key(self, key: str, exc: BaseException | str) -> None:
        """``key`` is unusable (another type, too big, content the store refused): warn once
        for it, count it; the caller serves from local state for this key."""
        why = exc if isinstance(exc, str) else type(exc).__name__
        with self._lock:
            self.bad_key_count += 1
            if key in self.bad_keys or len(self.bad_keys) >= MAX_LOGGED_KEYS:
                return
            self.bad_keys.add(key)
        log.warning(
            "state store %s: key %s is unusable (%s); serving it from local state (a write replaces it)",
            self.url,
            key[:200],
            why,
        )

    def _away(self, exc: BaseException) -> None:
        """The store failed: serve locally, warn once per outage, start the re-sync thread."""
        with self._lock:
            self.last_error = type(exc).__name__
            if self._stop.is_set():
                return  # closing: a write that races close() is no outage (close() tried the queue once)
            if self._up:
                self._up = False
                self.outages += 1
                log.warning(
                    "state store %s unavailable (%s); serving from local state, re-syncing when it returns",
                    self.url,
                    self.last_error,
                )
            if not self._resyncing and not self._stop.is_set():
                self._resyncing = True
                self._resync = threading.Thread(target=self._resync_loop, name="dsh-state-resync", daemon=True)
                self._resync.start()

    def _queue(self, send: Callable[[], object]) -> None:
        """Keep a write for the re-sync (caller holds the lock)."""
        if self._final:  # after the exit's count: never sent
            self.dropped += 1
            return
        if len(self._pending) >= MAX_PENDING:
            self._pending.popleft()
            if self.dropped == 0:
                log.warning("state store %s away too long: dropping the oldest queued writes", self.url)
            self.dropped += 1
        self._pending.append(send)

    def _read(self, fetch: Callable[[], Any], fallback: Callable[[], Any], key: str = "") -> Any:
        """``fetch()``, or ``fallback()`` when the store is away, refuses, or the key is unusable
        (or the process is exiting: :meth:`begin_exit`)."""
        if not self._up or self._exiting.is_set():
            return fallback()
        try:
            return fetch()
        except CALL_ERRORS as exc:
            if self._store_wide(exc):
                self._away(exc)
            else:
                self._bad_key(key or "(read)", exc)
            return fallback()

    @contextlib.contextmanager
    def handing(self, writes: int = 1) -> Iterator[None]:
        """``writes`` writes on their way to the store from the calling thread (the bandit's
        writer, the knowledge flush), from the moment its sender takes them off its own queue
        until they reach :meth:`_write` (or :meth:`_write_all`) on this thread: :meth:`close`
        waits for them within its bound and counts them as not handed when they have not arrived
        by then (they are then dropped when they do). Without this, a writer descheduled between
        the two on a loaded machine handed its update over after the exit had counted what it
        did not send: lost, and told to no one."""
        with self._lock:
            if not self._final:  # else past the exit's count: the write is dropped, counted
                self._unarrived += writes
                self._handing.on = writes
        try:
            yield
        finally:
            with self._lock:
                self._arrive()  # no write came (an abandoned or store-less operation)

    def _arrive(self) -> bool:
        """The calling thread's write on its way (:meth:`handing`), if any, has arrived;
        ``True`` when there was one (caller holds the lock: the arrival and what becomes of
        the write are one step for :meth:`close`'s count)."""
        writes = getattr(self._handing, "on", 0)
        if not writes:
            return False
        self._handing.on = 0
        self._unarrived -= writes
        self._arrived.notify_all()
        return True

    def _write(self, send: Callable[[], object], key: str = "") -> None:
        with self._lock:
            handed = self._arrive()
            if not self._up or self._exiting.is_set():
                if not (handed and self._final):  # else the exit's count had it as not handed
                    self._queue(send)
                return
            self._sending += 1
        # the scripts repair what they touch, so a failure that is not store-wide is a store that
        # refuses this write for its content: re-sending it would fail the same way and hold the queue
        outcome, failure = self._sent(send, self._queue)
        if failure is not None and outcome == "away":
            self._away(failure)
        elif failure is not None and outcome == "refused":
            self._bad_key(key or "(write)", failure)

    def _write_all(
        self, sends: Sequence[Callable[[], object]], send_all: Callable[[], list[BaseException | None]], key: str = ""
    ) -> None:
        """``sends`` (writes as :meth:`_write` takes them) in one round trip: ``send_all()`` sends
        them at once and returns each one's failure (``None``: it landed). Each write keeps its
        own fate, as if sent alone: one the store refused as a whole is queued alone, in order
        (re-sent one by one: its op marker makes a write that landed count once), one refused
        for its content dropped and counted."""
        with self._lock:
            handed = self._arrive()
            if not sends or not self._up or self._exiting.is_set():
                if not (handed and self._final):  # else the exit's count had them as not handed
                    for send in sends:
                        self._queue(send)
                return
            self._sending += len(sends)
        try:
            failures = send_all()
        except CALL_ERRORS as exc:  # the round trip itself failed: every write with it
            failures = [exc] * len(sends)
        fates = [self._fate(send, failure, self._queue) for send, failure in zip(sends, failures)]
        away = next((f for outcome, f in fates if outcome == "away"), None)
        if away is not None:
            self._away(away)
        for outcome, failure in fates:
            if failure is not None and outcome == "refused":
                self._bad_key(key or "(write)", failure)

    def _later(self, send: Callable[[], object]) -> None:
        """Send ``send`` from the background sender (the caller does not wait; dropped when the
        store is away, the process exiting, or the sender is behind)."""
        if not self._up or self._exiting.is_set():
            return
        self._submit_background(send, must=False)

    def _submit_background(self, send: Callable[[], object], must: bool) -> None:
        if self._stop.is_set():
            if must:  # closing: its queue was flushed once already
                with self._lock:
                    self.dropped += 1
            return
        try:
            self._background.put_nowait(send if must else _Droppable(send))
        except queue.Full:
            if must:
                with self._lock:
                    self.dropped += 1
            return
        if self._sender is None or not self._sender.is_alive():
            with self._lock:
                if self._sender is None or not self._sender.is_alive():
                    self._sender = threading.Thread(target=self._send_loop, name="dsh-state-send", daemon=True)
                    self._sender.start()

    async def read_within(self, fetch: Callable[[], T], fallback: Callable[[], T], within_s: float) -> T:
        """``fetch()`` run on a :class:`ReadPool` thread while the event loop serves other calls,
        awaited at most ``within_s`` (the caller's deadline) and ``timeoutMs``; ``fallback()``
        (local state) when the store is away, the read is late or the pool's queue is full. A late
        read goes on to its own end (bounded by ``timeoutMs``: a store that misses it is away)."""
        if not self._up or self._exiting.is_set():
            return fallback()  # no socket is touched while the store is away: no thread either
        wait_s = min(within_s, self.timeout_s)
        if wait_s <= 0:
            return fallback()
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[T] = loop.create_future()

        def done(ok: bool, value: Any) -> None:  # on the read's thread
            loop.call_soon_threadsafe(settle, answer, ok, value)

        read = self._reads.submit(fetch, done)
        if read is None:
            with self._lock:
                self.skipped_reads += 1
            return fallback()
        late = loop.call_later(wait_s, settle, answer, False, Late())
        try:
            value = await answer
        except Late:
            read.give_up()
            with self._lock:
                self.late_reads += 1
            return fallback()
        except asyncio.CancelledError:
            read.give_up()  # the search was cancelled ($/cancelRequest)
            raise
        finally:
            late.cancel()
        return value

    def read_behind(self, fetch: Callable[[], object]) -> bool:
        """Run ``fetch()`` on a :class:`ReadPool` thread, not waited for (it keeps what it read
        itself); ``False`` when not queued (the store away, the pool's queue full)."""
        if not self._up or self._exiting.is_set():
            return False
        if self._reads.submit(fetch) is None:
            with self._lock:
                self.skipped_reads += 1
            return False
        return True

    def write_behind(self, send: Callable[[], object]) -> None:
        """Run ``send()`` (an operation that writes through :meth:`_write`: queued for the re-sync
        when it fails) on the background sender, in submission order; the caller does not wait.
        Past :data:`MAX_BACKGROUND` waiting it is dropped and counted (``droppedWrites``)."""
        self._submit_background(send, must=True)

    def _send_loop(self) -> None:
        while not self._stop.is_set():
            try:
                send = self._background.get(timeout=1.0)
            except queue.Empty:
                continue
            if send is _WAKE:  # close(): the loop looks at _stop now, not up to a second later
                self._background.task_done()
                continue
            time.sleep(YIELD_S)
            try:
                if not isinstance(send, _Droppable):
                    send()  # writes through _write: queued for the re-sync when the store is away
                elif self._up:
                    send()
            except CALL_ERRORS as exc:  # a cache write: dropped either way
                if self._store_wide(exc):
                    self._away(exc)
                else:
                    self._bad_key(keys.CACHE_INDEX, exc)
            finally:
                self._background.task_done()

    def _resync_loop(self) -> None:
        done = False
        try:
            while not done and self._resync_until_back():
                with self._lock:  # else away again while this thread told it was back: go on
                    done = self._up
                    self._resyncing = not done
        finally:
            with self._lock:
                if not done:  # closed (or failed): the next outage starts a thread
                    self._resyncing = False

    def _resync_until_back(self) -> bool:
        """Probe with ``PING`` and re-send the queue until the store takes it all (``True``,
        its "is back" warning written) or the link closes (``False``)."""
        # a store that flaps (back, then away again within a minute) keeps its back-off, so a
        # slow-but-alive store costs one bounded wait and one warning per back-off, not per call
        recent = time.monotonic() - self._back_at < STABLE_S
        delay = min(self._delay * 2, MAX_RETRY_S) if recent else self.retry_s
        while not self._stop.wait(delay):
            self._delay = delay
            delay = min(delay * 2, MAX_RETRY_S)
            try:
                self.client.ping()
            except CALL_ERRORS:
                continue
            sent = 0
            while True:
                with self._lock:
                    if self._exiting.is_set():
                        break  # close() sends the rest, within its bound
                    if not self._pending:
                        self._up = True
                        break
                    send = self._pending.popleft()
                    self._sending += 1
                outcome = self._resend(send)
                sent += outcome == "sent"
                if outcome in ("away", "final"):  # still away, full or read-only: kept, back off
                    break
            with self._lock:
                self.resent += sent
                back = self._up
                if back:
                    self._back_at = time.monotonic()
            if back:
                log.warning("state store %s is back; re-sent %d queued writes", self.url, sent)
                return True
        return False

    def wait_synced(self, timeout_s: float) -> bool:
        """Block until the store is in use again, the re-sync thread has finished (its
        "is back" warning written) and nothing is queued or waiting for the background
        sender; ``True`` if so (tests, benchmarks)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                resyncing = self._resync is not None and self._resync.is_alive()
                if self._up and not resyncing and not self._pending and not self._background.unfinished_tasks:
                    return True
            time.sleep(0.01)
        return False

    # ------------------------------------------------------------------ lifecycle
    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "backend": self.url,
                "shared": True,
                "available": self._up,
                "timeoutMs": round(self.timeout_s * 1000),
                "outages": self.outages,
                "queuedWrites": len(self._pending),
                "resentWrites": self.resent,
                "droppedWrites": self.dropped,
                "badKeys": self.bad_key_count,
                "lateReads": self.late_reads,
                "skippedReads": self.skipped_reads,
                "lastError": self.last_error,
            }

    def begin_exit(self) -> None:
        """The process is exiting: from now on no call touches the socket (reads answer from
        local state, writes are queued, cache writes dropped), so the exit's flushes hand their
        writes over at once; :meth:`close` sends them within :data:`EXIT_FLUSH_S`. Idempotent."""
        self._exiting.set()

    def close(self, not_handed: int = 0, within_s: float = EXIT_FLUSH_S, since: float | None = None) -> None:
        """Send what is queued within ``within_s`` (counted from ``since``, a
        :func:`time.monotonic` time, when given: the exit's start) and count the rest: writes
        queued, in flight (sent, no reply yet: its op marker makes it count once if it landed)
        and ``not_handed`` (updates the exit's flushes did not get to hand over in their bound)
        are added to ``droppedWrites`` and told in one warning. Never waits longer."""
        self.begin_exit()
        self._stop.set()
        with contextlib.suppress(queue.Full):  # a full queue: the sender is not waiting for one
            self._background.put_nowait(_WAKE)  # an idle sender waits in get(): its join took the whole bound
        self._reads.close()  # a read running ends by itself (timeoutMs); the exit does not wait for it
        deadline = (time.monotonic() if since is None else since) + within_s
        for thread in (self._resync, self._sender):
            if thread is not None:  # exiting: each only queues now, past a command already sent
                thread.join(max(0.0, deadline - time.monotonic()))
        with self._arrived:  # a write on its way (handing): it is queued now, at once
            self._arrived.wait_for(lambda: self._unarrived == 0, max(0.0, deadline - time.monotonic()))
        behind: list[Callable[[], object]] = []  # writes the sender had not reached (not cache writes)
        with contextlib.suppress(queue.Empty):
            while True:
                send = self._background.get_nowait()
                self._background.task_done()
                if not isinstance(send, _Droppable):
                    behind.append(send)
        for send in behind:  # each writes through _write: queued (exiting), no socket touched
            with contextlib.suppress(*CALL_ERRORS):
                send()
        flusher = threading.Thread(target=self._exit_flush, name="dsh-state-exit", daemon=True)
        flusher.start()
        flusher.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            self._final = True  # a write after this is dropped and counted, never queued
            queued, in_flight = len(self._pending), self._sending
            not_handed += self._unarrived  # still on their way: dropped when they arrive
            self._pending = deque()
            unsent = queued + in_flight + not_handed
            self.dropped += unsent
            up = self._up
        if unsent:
            parts = [f"{queued} queued"]
            if in_flight:
                parts.append(f"{in_flight} sent without a reply")
            if not_handed:
                parts.append(f"{not_handed} not handed to the store")
            log.warning(
                "state store %s%s: %d writes not sent at exit (%s; the exit waits at most %g s for the store)",
                self.url,
                "" if up else " unavailable",
                unsent,
                ", ".join(parts),
                within_s,
            )
        if not flusher.is_alive():
            with contextlib.suppress(Exception):  # closing a broken connection must not fail a shutdown
                self.client.close()

    def _exit_flush(self) -> None:
        """Send the queued writes in order (the exit's thread, bounded by :meth:`close`'s join)."""
        while True:
            with self._lock:
                if self._final or not self._pending:
                    return
                send = self._pending.popleft()
                self._sending += 1
            if self._resend(send) in ("away", "final"):
                return

    def _resend(self, send: Callable[[], object]) -> str:
        """Send a queued write taken off the queue (the re-sync's, the exit's): :meth:`_sent`'s
        outcome, the write put back first in the queue when the store failed as a whole."""
        outcome, failure = self._sent(send, self._pending.appendleft)
        if outcome == "away":
            with self._lock:
                self.last_error, self._up = type(failure).__name__, False
        elif failure is not None and outcome == "refused":
            self._bad_key("(queued write)", failure)
        return outcome

    def _sent(
        self, send: Callable[[], object], again: Callable[[Callable[[], object]], None]
    ) -> tuple[str, BaseException | None]:
        """``send()``, counted in :attr:`_sending` by the caller, and what became of it with the
        failure: ``"sent"``; ``"away"`` (the store failed as a whole: ``again(send)`` keeps it);
        ``"refused"`` (the store refuses its content: never sendable, dropped and counted); or
        ``"final"``, given up: it failed after :meth:`close` counted it as sent without a reply
        (the exit's one warning told it; queued again, nothing would send it and the status would
        show it queued). Its end and its fate are one step under the lock, so the exit's count
        never misses it between the two."""
        failure: BaseException | None = None
        try:
            send()
        except CALL_ERRORS as exc:
            failure = exc
        return self._fate(send, failure, again)

    def _fate(
        self, send: Callable[[], object], failure: BaseException | None, again: Callable[[Callable[[], object]], None]
    ) -> tuple[str, BaseException | None]:
        """What becomes of ``send`` sent with ``failure`` (:meth:`_sent`), one step under the lock."""
        wide = failure is not None and self._store_wide(failure)
        with self._lock:
            self._sending -= 1
            if failure is None or self._final:
                return ("sent" if failure is None else "final"), failure
            if wide:
                again(send)
                return "away", failure
            self.dropped += 1
        return "refused", failure


class _Droppable:
    """A background send that is dropped when the store is away (a cache write)."""

    __slots__ = ("send",)

    def __init__(self, send: Callable[[], object]) -> None:
        self.send = send

    def __call__(self) -> object:
        return self.send()


#: What :meth:`StoreLink.close` puts on the background queue to wake a sender waiting for work
#: (dropped like a cache write if anything else reads it).
_WAKE: Final = _Droppable(lambda: None)
