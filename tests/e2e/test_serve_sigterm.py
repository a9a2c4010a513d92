"""``dsh-search serve`` treats SIGTERM as ``exit``: it flushes its state and exits 0 (a
harness's teardown, e.g. DeepSeek Harness's ctx.subprocess, SIGTERMs its children while the
adapter's shutdown/exit may still be in flight)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dsh_protocol.stdio_client import StdioClient
from support.sidecar import DATA
from support.waiting import wait_until


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_exits_0(tmp_path: Path, signum: signal.Signals):
    home = tmp_path / "home"
    env = {**os.environ, "DSH_HOME": str(home)}
    client = StdioClient([sys.executable, "-m", "dsh_sidecar", "serve"], env=env)
    ws = DATA / "workspaces" / "pyproj"
    client.request(
        "initialize",
        {
            "processId": None,
            "capabilities": {},
            "rootUri": ws.resolve().as_uri(),
            "initializationOptions": {"suggester": {"enabled": True}},
        },
    )
    client.request(
        "dsh/postExecute", {"sessionId": "s", "turn": 0, "tool": {"name": "grep", "input": {"pattern": "__version__"}}}
    )
    proc: subprocess.Popen = client.proc
    proc.send_signal(signum)
    assert proc.wait(timeout=60) == 0  # not -15 (-1): the handler ran, then the finally block's flush


#: A ``sitecustomize`` (imported by ``site`` from ``PYTHONPATH`` at interpreter start) that holds
#: the server inside its first import of ``$GATE_MODULE``: it writes ``$GATE_FILE`` and waits
#: (at most 60 s) until ``$GATE_FILE.go`` exists, so a signal can be sent at a known point of the
#: start, before the ``initialize`` reply, and the import then goes on as a slow one would.
GATE = textwrap.dedent(
    """
    import os, sys, time

    class Gate:
        def find_spec(self, name, path=None, target=None):
            if name == os.environ["GATE_MODULE"]:
                sys.meta_path.remove(self)
                with open(os.environ["GATE_FILE"], "w") as f:
                    f.write(" ".join(sorted(m for m in sys.modules if m.startswith("dsh_"))))
                deadline = time.monotonic() + 60
                while not os.path.exists(os.environ["GATE_FILE"] + ".go") and time.monotonic() < deadline:
                    time.sleep(0.01)
            return None

    sys.meta_path.insert(0, Gate())
    """
)


#: An ``initialize`` whose options go through the config models (pydantic) before the reply.
INITIALIZE_WITH_OPTIONS = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"processId": None, "capabilities": {}, "initializationOptions": {"router": {"timeoutMs": 5000}}},
}


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


# datetime: imported by pydantic_core's Rust (pyo3) module init through the C API; an exception
# raised inside that import became a Rust panic (PanicException, exit 1, a panic trace on stderr)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize(("module", "replied"), [("pydantic", True), ("pygls", False), ("datetime", True)])
def test_a_sigterm_while_the_server_is_still_importing_exits_0(
    tmp_path: Path, module: str, replied: bool, signum: signal.Signals
):
    """Before the fix the handler was installed after the imports: SIGTERM then killed the
    process (exit -15); then it raised ``SystemExit`` inside whatever was importing, which a
    native module's init turned into another error (exit 1). These modules are imported before
    the reply to an ``initialize`` with options (pydantic validates them; without options it is
    imported after the reply), which is waiting on stdin. SIGHUP the same way (it was left to
    its default until the event loop took it: exit -1)."""
    gate_dir = tmp_path / "gate"
    gate_dir.mkdir()
    (gate_dir / "sitecustomize.py").write_text(GATE)
    ready = tmp_path / "ready"
    env = {
        **os.environ,
        "DSH_HOME": str(tmp_path / "home"),
        "PYTHONPATH": os.pathsep.join([str(gate_dir), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "GATE_MODULE": module,
        "GATE_FILE": str(ready),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "dsh_sidecar", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None
    proc.stdin.write(frame(INITIALIZE_WITH_OPTIONS))
    proc.stdin.flush()
    try:
        wait_until(lambda: ready.exists() and ready.read_text(), f"the server reached its import of {module}")
        assert "dsh_sidecar.lsp.signals" in ready.read_text().split()  # the handler is in place
        proc.send_signal(signum)
        (tmp_path / "ready.go").touch()  # the import goes on
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0, err.decode(errors="replace")
    # nothing else was written on the channel: nothing at all when the start ended at once, or,
    # when the module was imported by the initialize handler on the event loop (pydantic and
    # pydantic_core's datetime, validating the options: the signal is taken when the handler
    # returns), its reply
    if replied:
        header, _, body = out.partition(b"\r\n\r\n")
        assert b"Content-Length: %d" % len(body) in header.split(b"\r\n")
        reply = json.loads(body)
        assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "dsh-search-sidecar"
    else:
        assert out == b""
    assert b"Traceback" not in err
