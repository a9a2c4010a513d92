"""What a running server tells other processes: one status file per ``serve`` or ``mcp``
process under ``$DSH_HOME/run/`` (``<pid>.json``, 0600, in a 0700 folder), so that ``dsh-search
status`` — a new process, which knows nothing of a provider's cooldown or the suggester's
counters — can show the live state of the servers a harness or an editor runs.

* **Written** by the server at start, then by a daemon thread every :data:`HEARTBEAT_S`: a
  snapshot the server takes for it (``Sidecar._run_snapshot``: the chain with each provider's
  health, the result cache, the bandit's update counts, the suggester's counters; never
  ``dsh/status`` itself, which does the event loop's work),
  at most :data:`MAX_BYTES` (past that, the suggester's part is dropped); atomically (temp +
  rename); when nothing changed only its modification time moves (the heartbeat).
* **Removed** when the server closes (and at interpreter exit); a ``kill -9`` leaves it.
* **Read** by :func:`live_servers`: at most :data:`MAX_FILES` files of at most
  :data:`MAX_BYTES` each, as untrusted JSON; a file whose process is gone or whose heartbeat is
  older than :data:`STALE_S` is stale and ignored (and removed when its process is gone).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.paths import run_dir

log = logging.getLogger(__name__)

#: Seconds between two heartbeats of a running server.
HEARTBEAT_S: Final = 5.0
#: A status file older than this is stale (its server hung or was killed), seconds.
STALE_S: Final = 30.0
#: Largest status file written or read, bytes.
MAX_BYTES: Final = 64 * 1024
#: Most status files read.
MAX_FILES: Final = 64
_NAME: Final = re.compile(r"^(\d{1,10})\.json$")

Snapshot = Callable[[], dict[str, Any]]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def summary_of(status: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a ``dsh/status`` result a status file carries."""
    router = status.get("router") or {}
    bandit = status.get("bandit") or {}
    suggester = status.get("suggester") or {}
    return {
        "workspace": status.get("workspace"),
        "router": {k: router.get(k) for k in ("chain", "unavailable", "health", "cache")},
        "bandit": {"updates": bandit.get("updates")},
        "suggester": {k: suggester.get(k) for k in ("enabled", "counters", "sessions") if k in suggester},
    }


class RunFile:
    """The status file of this server process (see the module docstring)."""

    def __init__(self, env: Mapping[str, str], kind: str, snapshot: Snapshot) -> None:
        self.folder = run_dir(env)
        self.path = self.folder / f"{os.getpid()}.json"
        self.kind = kind
        self.snapshot = snapshot
        self.started = time.time()
        self._last = b""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Write the file (on a daemon thread, at once) and keep it fresh there."""
        atexit.register(self.remove)
        self._thread = threading.Thread(target=self._beat, name="dsh-run-status", daemon=True)
        self._thread.start()

    def _document(self) -> bytes:
        doc = {
            "pid": os.getpid(),
            "kind": self.kind,
            "started": round(self.started, 3),
            **summary_of(self.snapshot()),
        }
        data = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
        if len(data) > MAX_BYTES:
            doc["suggester"] = {"enabled": doc.get("suggester", {}).get("enabled"), "truncated": True}
            doc["router"] = {"chain": doc["router"].get("chain", [])[:20], "truncated": True}
            data = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()[:MAX_BYTES]
        return data

    def write(self) -> None:
        """Write the current status (or, unchanged, only move the heartbeat). Never raises."""
        try:
            data = self._document()
            if data == self._last and self.path.exists():
                os.utime(self.path)
                return
            from dsh_sidecar.state.files import atomic_write_bytes

            atomic_write_bytes(self.path, data)
            self._last = data
        except Exception:  # a status file is a convenience: serving goes on without it
            log.debug("run status file not written", exc_info=True)

    def _beat(self) -> None:
        self.write()
        while not self._stop.wait(HEARTBEAT_S):
            self.write()

    def remove(self) -> None:
        """Stop the heartbeat and delete the file (idempotent)."""
        self._stop.set()
        with contextlib.suppress(OSError):
            self.path.unlink()


def live_servers(
    env: Mapping[str, str] | None = None, now: float | None = None
) -> tuple[list[dict[str, Any]], str | None]:
    """The running servers' status documents (their ``heartbeat`` age added, in seconds), and
    why they cannot be read, if so (``None``: read; an empty list then means none is running)."""
    folder = run_dir(env)
    now = time.time() if now is None else now
    try:
        st = folder.lstat()
    except FileNotFoundError:
        return [], None
    except OSError as exc:
        return [], f"cannot read {folder} ({exc.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return [], f"{folder} is not a folder"
    out: list[dict[str, Any]] = []
    try:
        names = sorted(os.listdir(folder))[: MAX_FILES * 4]
    except OSError as exc:
        return [], f"cannot read {folder} ({exc.strerror})"
    for name in names:
        m = _NAME.match(name)
        if m is None or len(out) >= MAX_FILES:
            continue
        path = folder / name
        pid = int(m.group(1))
        doc = _read(path)
        if doc is None:
            continue
        if not _alive(pid):
            with contextlib.suppress(OSError):
                path.unlink()  # its process is gone: nobody will remove it
            continue
        age = now - doc.pop("_mtime")
        if age > STALE_S or doc.get("pid") != pid:
            continue
        doc["heartbeatAgeS"] = round(max(age, 0.0), 1)
        out.append(doc)
    return out, None


def _read(path: Path) -> dict[str, Any] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return None
        data = os.read(fd, MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    doc["_mtime"] = st.st_mtime
    return doc
