"""What the fleet test and ``bench/fleet.py`` share: a real ``redis-server`` of our own, a
loopback provider pair with faults, a sidecar process with its stderr kept, and the workspace.

* :class:`RedisServer` starts Debian's ``redis-server`` on a free 127.0.0.1 port with a temp
  dir and only the options given here (no config file is read: nothing from the machine's
  persistence setup applies). ``appendonly yes`` + ``appendfsync always`` (the default here) so
  a ``SIGKILL`` loses no acknowledged write; ``everysec`` (Redis's own AOF default) for latency.
* :class:`Providers` serves Tavily's wire format (``POST /t/search``, Bearer key) with faults on
  a fixed schedule (every ``error_every``-th request a 500, every ``limit_every``-th a 429 with
  ``Retry-After``) and SearXNG's (``GET /s/search``) always answering, so every search has a real
  outcome and the bandit counts every one.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from dsh_protocol.stdio_client import StdioClient

from support.sidecar import forked_command
from support.trees import copy_fixture

REDIS_SERVER = shutil.which("redis-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _PortTaken(RuntimeError):
    """``redis-server`` could not bind its port (another process holds it)."""


def _server_pid(s: socket.socket) -> int | None:
    """The ``process_id`` of the Redis server on the connection ``s`` (``INFO server``, a RESP
    bulk string ``$<length>\\r\\n<text>\\r\\n``), or ``None`` when the reply is not one."""
    s.sendall(b"INFO server\r\n")
    buf = b""
    while True:
        head, sep, body = buf.partition(b"\r\n")
        if sep and (not head[1:].isdigit() or len(body) >= int(head[1:])):
            break
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    for line in buf.decode("ascii", "replace").splitlines():
        key, _, pid = line.partition(":")
        if key == "process_id" and pid.isdigit():
            return int(pid)
    return None


class RedisServer:
    """A ``redis-server`` on 127.0.0.1:``port`` with data in ``folder`` (AOF, fsync always)."""

    def __init__(
        self, folder: Path, port: int | None = None, fsync: str = "always", options: tuple[str, ...] = ()
    ) -> None:
        if REDIS_SERVER is None:
            raise RuntimeError("redis-server is not installed")
        self.folder = folder
        self.pinned = port is not None  # a restart on the same port must not move
        self.port = port or free_port()
        self.fsync = fsync  # "always": a SIGKILL loses nothing acknowledged; "everysec": Redis's default
        self.options = options  # more config of the server's command line (``--rename-command …``)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 20.0) -> None:
        """Start and wait for ``PING``. A port chosen by :func:`free_port` can be taken by another
        process before redis binds it (two xdist workers, any server started meanwhile): then a new
        port is tried, up to 5 times; a port given, or one already served on (a restart), is not moved."""
        for attempt in range(5):
            try:
                self._start(timeout_s)
            except _PortTaken:
                if self.pinned or attempt == 4:
                    raise
                self.port = free_port()
            else:
                self.pinned = True  # its URL is out now: a restart stays on this port
                return

    def _start(self, timeout_s: float) -> None:
        assert REDIS_SERVER is not None
        self.folder.mkdir(parents=True, exist_ok=True)
        args = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder)]
        args += ["--save", "", "--appendonly", "yes", "--appendfsync", self.fsync, "--protected-mode", "yes"]
        args += ["--daemonize", "no", "--logfile", str(self.folder / "redis.log"), *self.options]
        mark = len(self.log())  # the log file is appended to by every start
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = self.log()[mark:]
                kind = _PortTaken if "Address already in use" in log else RuntimeError
                raise kind(f"redis-server exited {self.proc.returncode}: {log[-500:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        pid = _server_pid(s)
                        if pid == self.proc.pid:
                            return
                        # another redis-server holds the port (a second RedisServer given the
                        # same free_port): its PONG is not ours, and ours is failing to bind
                        self.stop()
                        raise _PortTaken(f"port {self.port} is served by another redis-server (pid {pid})")
                    # -LOADING: still replaying the AOF
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError("redis-server did not answer PING")

    def kill(self) -> None:
        """``SIGKILL``: no shutdown, no save (what acknowledged writes survive is the AOF's)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self) -> str:
        try:
            return (self.folder / "redis.log").read_text(errors="replace")
        except OSError:
            return ""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class Providers:
    """Tavily (faulty) and SearXNG (steady) on one loopback port; ``counts`` per outcome."""

    def __init__(self, error_every: int = 5, limit_every: int = 0, retry_after_s: int = 1) -> None:
        self.error_every = error_every
        self.limit_every = limit_every
        self.retry_after_s = retry_after_s
        self.counts: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.force_429 = 0  # the next N Tavily requests answer 429
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()  # headers and body are two writes: no Nagle + delayed-ACK 40 ms stall
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def reply(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with owner.lock:
                    n = owner.counts["tavily"] = owner.counts["tavily"] + 1
                    if owner.force_429 > 0:
                        owner.force_429 -= 1
                        kind = "429"
                    elif owner.limit_every and n % owner.limit_every == 0:
                        kind = "429"
                    elif owner.error_every and n % owner.error_every == 0:
                        kind = "500"
                    else:
                        kind = "ok"
                    owner.counts[f"tavily {kind}"] += 1
                if kind == "429":
                    self.reply(429, {"detail": "rate limited"}, {"Retry-After": str(owner.retry_after_s)})
                elif kind == "500":
                    self.reply(500, {"detail": "internal error"})
                else:
                    self.reply(200, {"results": results(str(body.get("query", "")), "t")})

            def do_GET(self) -> None:  # noqa: N802
                q = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
                with owner.lock:
                    owner.counts["searxng"] += 1
                self.reply(200, {"query": q, "results": results(q, "s")})

        self.server = _Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def results(query: str, tag: str) -> list[dict[str, str]]:
    key = "-".join(query.lower().split()[:3])
    return [{"url": f"https://example.org/{tag}/{key}/{i}", "title": f"{key} {i}", "content": "text"} for i in range(5)]


def make_workspace(folder: Path) -> Path:
    """A copy of ``tests/data/workspaces/pyproj`` with an ``origin`` remote in ``.git/config``
    (as data: the sidecar never runs git): every copy has the same repository identity."""
    copy_fixture("pyproj", folder)
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text(
        '[core]\n\trepositoryformatversion = 0\n[remote "origin"]\n\turl = git@example.org:fleet/demo.git\n'
    )
    return folder


#: A postExecute session of 8 calls: a Version note followed by its read, Test and Dependency
#: notes left alone until their windows (learnWindow 3) close as ignored.
SESSION = [
    ("Grep", {"pattern": "__version__"}),
    ("Read", {"file_path": "src/demo_pkg/__init__.py"}),
    ("Grep", {"pattern": "pytest fixture"}),
    ("Bash", {"command": "grep -rn 'dependencies' ."}),
    ("Glob", {"pattern": "**/*.md"}),
    ("Grep", {"pattern": "TODO"}),
    ("Grep", {"pattern": "class Widget"}),
    ("Glob", {"pattern": "docs/*"}),
]


def options(providers: Providers, backend: str, seed: int, **state: Any) -> dict[str, Any]:
    return {
        "router": {
            "order": ["tavily", "searxng"],
            "timeoutMs": 2000,
            "providers": {
                "tavily": {"apiKey": "tvly-FLEET-KEY", "baseUrl": f"{providers.base}/t"},
                "searxng": {"baseUrl": f"{providers.base}/s"},
            },
        },
        "bandit": {"seed": seed},
        "suggester": {"enabled": True, "learnWindow": 3},
        "state": {"backend": backend, **state},
    }


class Sidecar(StdioClient):
    """A ``dsh-search serve`` process with its stderr in ``stderr_path``."""

    def __init__(self, env: dict[str, str], stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        self._stderr = open(stderr_path, "wb")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            forked_command(),  # support.forkserver: the fleet's behaviour, not the process start
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
        )
        self.next_id = 0
        self.logs: list[str] = []

    def initialize(self, workspace: Path, opts: dict[str, Any]) -> None:
        reply = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": {},
                "rootUri": workspace.as_uri(),
                "initializationOptions": opts,
            },
        )
        assert "result" in reply, reply
        self.send("initialized", {}, notify=True)

    def stderr(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def close(self) -> None:
        super().close()
        self._stderr.close()


def sidecar_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "SEARXNG_BASE_URL"}
    env["DSH_HOME"] = str(home)
    return env


def temp_root(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))
