"""A raw LSP-framed client over a real ``dsh-search serve`` subprocess, for the reliability and
security suites: it can send any bytes (broken framing, invalid UTF-8), reads replies on a
background thread with timeouts, and reads the server's RSS and CPU time from ``/proc``.

Everything the server writes (stdout frames and stderr) is kept in :attr:`RawServer.stdout_bytes`
and :attr:`RawServer.stderr_bytes` so the security suite can scan it for secrets.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from support.sidecar import clean_env, forked_command, server_command
from support.waiting import HANG_S

#: Clock ticks per second of /proc/<pid>/stat times (Linux ``sysconf(_SC_CLK_TCK)``).
CLK_TCK = os.sysconf("SC_CLK_TCK")

#: Every process started by this module, so the security suite can scan all output afterwards.
ALL_OUTPUT: list[RawServer] = []


def frame(body: bytes | str | dict[str, Any]) -> bytes:
    """``Content-Length`` header + body (a dict is JSON-encoded, a str UTF-8 encoded)."""
    if isinstance(body, dict):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode("utf-8", "surrogatepass")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def session(log_messages: str | None = None) -> bytes:
    """A whole framed session: initialize (``logMessages`` if given), initialized, dsh/status
    (id 2), shutdown (id 3), exit."""
    options = {} if log_messages is None else {"logMessages": log_messages}
    return b"".join(
        frame(m)
        for m in (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "capabilities": {}, "rootUri": None, "initializationOptions": options},
            },
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "dsh/status", "params": {}},
            {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        )
    )


def replies(stdout: bytes) -> list[dict]:
    """The messages of a captured stdout (LSP frames, in order)."""
    out, rest = [], stdout
    while rest:
        head, sep, rest = rest.partition(b"\r\n\r\n")
        if not sep:
            break
        length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
        out.append(json.loads(rest[:length]))
        rest = rest[length:]
    return out


def ids(messages: list[dict]) -> list:
    """The ids of the responses among ``messages``, in order."""
    return [m["id"] for m in messages if "id" in m]


class RawServer:
    """``dsh-search serve`` over pipes. ``request``/``notify`` send well-framed JSON;
    ``send_raw`` sends any bytes; ``recv`` returns the next message (or raises ``TimeoutError``)."""

    def __init__(
        self, dsh_home: Path, env: dict[str, str] | None = None, cwd: Path | None = None, forked: bool = False
    ) -> None:
        #: Started through :func:`support.sidecar.forked_command` (for tests that only talk to
        #: it): :attr:`pid` is then the launcher's, and :meth:`rss_kib`/:meth:`cpu_s` refuse.
        self.forked = forked
        self.proc = subprocess.Popen(
            forked_command() if forked else server_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=clean_env(dsh_home, env),
            cwd=cwd,
        )
        self.pid = None if forked else self.proc.pid  # a forked server's is not this process's
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stdout_bytes = bytearray()
        self.stderr_bytes = bytearray()
        self.bad_frames: list[bytes] = []
        self.early: dict[Any, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.next_id = 0
        self._out = threading.Thread(target=self._read_stdout, daemon=True)
        self._err = threading.Thread(target=self._read_stderr, daemon=True)
        self._out.start()
        self._err.start()
        ALL_OUTPUT.append(self)

    # ------------------------------------------------------------------ reading

    def _read_stdout(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                self.stdout_bytes += line
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii", "replace").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            body = out.read(length or 0)
            self.stdout_bytes += body
            try:
                self.messages.put(json.loads(body))
            except ValueError:
                self.bad_frames.append(body)

    def _read_stderr(self) -> None:
        err = self.proc.stderr
        assert err is not None
        for chunk in iter(lambda: err.read1(65536), b""):
            self.stderr_bytes += chunk

    def recv(self, timeout: float = HANG_S) -> dict[str, Any]:
        """The next message from the server. Raises ``TimeoutError`` (the default bound is a hang's,
        not a latency: a loaded 2-core machine took a 10 s bound past a healthy reply), or
        ``EOFError`` at EOF."""
        try:
            msg = self.messages.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no message from the server within {timeout} s") from None
        if msg is None:
            self.messages.put(None)
            raise EOFError("the server closed stdout")
        return msg

    def response(self, msg_id: Any, timeout: float = HANG_S) -> dict[str, Any]:
        """The response carrying ``msg_id``; other responses read meanwhile are kept for their
        own ``response`` call (replies to pipelined requests arrive in any order);
        notifications are kept in :attr:`notifications`."""
        deadline = time.monotonic() + timeout
        while msg_id not in self.early:
            msg = self.recv(max(0.01, deadline - time.monotonic()))
            if "method" in msg:
                self.notifications.append(msg)
            elif "id" in msg and isinstance(msg["id"], (int, str)):
                self.early[msg["id"]] = msg
        return self.early.pop(msg_id)

    def barrier(self, timeout: float = HANG_S) -> None:
        """A sync point instead of a guessed quiet period: send ``dsh/status`` and read up to its
        reply, so every notification the server wrote before answering is in
        :attr:`notifications` (the handlers and the ledger's sink run on the server's event loop
        thread, and ``dsh/status`` writes the ledger lines other threads left for it first)."""
        reply = self.request("dsh/status", {}, timeout)
        assert "result" in reply, reply

    def log_lines(self) -> list[str]:
        """The ``window/logMessage`` texts received so far (call :meth:`barrier` first)."""
        return [m["params"]["message"] for m in self.notifications if m.get("method") == "window/logMessage"]

    def drain(self, quiet_s: float = 0.3) -> list[dict[str, Any]]:
        """Every message that arrives until the server is quiet for ``quiet_s`` seconds."""
        out = []
        while True:
            try:
                out.append(self.recv(quiet_s))
            except (TimeoutError, EOFError):
                return out

    # ------------------------------------------------------------------ writing

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg: dict[str, Any]) -> None:
        self.send_raw(frame(msg))

    def request_id(self, method: str, params: Any = None, **extra: Any) -> int:
        """Send a request and return its id (without waiting)."""
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method, **extra}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.next_id

    def request(self, method: str, params: Any = None, timeout: float = HANG_S) -> dict[str, Any]:
        """Send a request and return the whole response message (``result`` or ``error``)."""
        return self.response(self.request_id(method, params), timeout)

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def initialize(self, options: dict[str, Any] | None = None, root: Path | None = None) -> dict[str, Any]:
        try:
            reply = self._initialize(options, root)
        except EOFError:
            self.wait(5)
            raise EOFError(
                "the server died during initialize:\n" + self.stderr_bytes.decode("utf-8", "replace")[-3000:]
            ) from None
        self.notify("initialized", {})
        return reply

    def _initialize(self, options: dict[str, Any] | None, root: Path | None) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": {},
                "rootUri": root.as_uri() if root else None,
                "initializationOptions": options,
            },
            timeout=60,
        )  # generous: startup on a loaded 2-core CI machine
        assert "result" in reply, reply
        return reply

    # ------------------------------------------------------------------ process

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_kib(self) -> int:
        """Resident set size of the server, KiB (``VmRSS`` of /proc/<pid>/status)."""
        assert not self.forked, "a forked server's pid is its launcher's: spawn it (forked=False)"
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def thread_states(self) -> dict[int, str]:
        """Each thread's scheduler state by thread id (``R`` running or waiting for a core, ``S``
        asleep, ``D`` in uninterruptible I/O…: field 3 of /proc/<pid>/task/<tid>/stat); a thread
        that ended between the listing and its read is left out."""
        assert not self.forked, "a forked server's pid is its launcher's: spawn it (forked=False)"
        states = {}
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            try:
                states[int(task.name)] = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (FileNotFoundError, ProcessLookupError):
                continue
        return states

    def cpu_s(self) -> float:
        """User + system CPU time of the server so far, seconds (/proc/<pid>/stat)."""
        assert not self.forked, "a forked server's pid is its launcher's: spawn it (forked=False)"
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def shutdown(self, timeout: float = 10.0) -> int:
        """``shutdown`` + ``exit``; returns the exit code (kills the server if it hangs)."""
        try:
            if self.alive():
                self.request("shutdown", timeout=timeout)
                self.notify("exit")
        except (TimeoutError, EOFError, BrokenPipeError, OSError):
            pass
        return self.wait(timeout)

    def wait(self, timeout: float = 10.0) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._out.join(5)
        self._err.join(5)
        return code

    def close(self) -> None:
        if self.alive():
            try:
                self.shutdown(5)
            except Exception:
                self.proc.kill()
        self.wait(5)
