"""A cheaper start for the sidecars that tests only talk to: ``dsh-search serve`` forked from a
process that has already imported it, over the test's own stdio pipes.

Of the ~0.75 s of CPU a sidecar costs a short test, ~0.68 s is imports, 0.34 s of them
``lsprotocol.types`` alone (attrs generating the methods of ~1000 classes at import; bytecode
does not cache that), ~70 s of CPU over the ~100 the suite starts itself. Here one
*zygote* per pytest worker imports what ``serve`` imports, as ``serve`` does (attribute
docstrings off first), and waits on a Unix socket. A test starts a small *launcher* process
(``python -S -I`` on this file: no site, no project imports, ~15 ms), which passes its fds 0, 1
and 2 (SCM_RIGHTS) with its argv, environment and cwd to the zygote; the zygote forks, and the
child puts the fds on 0/1/2, takes the environment, cwd and argv, and runs the console
script's :func:`dsh_sidecar.cli.main`: the same code, the same JSON-RPC over the same pipes,
only the imports (and the built-in packs' parse, immutable package data each process parses
once) were done before the fork. The launcher stays the test's child: it forwards
the catchable signals, and exits with the sidecar's exit code (or dies of its signal); when the
launcher is killed the zygote kills the sidecar.

What differs from a spawned process, so which tests must not use it: the pid a test holds is
the launcher's (so ``/proc`` readings of RSS, CPU or threads are not the sidecar's;
:class:`support.rawrpc.RawServer` refuses them for a forked server); the interpreter start and
the imports are not exercised (start-up, SIGTERM during the imports, cold start); ``-X``/``PYTHON*``
settings of the test's environment do not reach the interpreter; all forks of one zygote share
its string hash seed (a spawned process draws its own), so a test of determinism across two
processes spawns them; modules that read the environment when imported read the zygote's
(``typer.rich_utils`` reads ``FORCE_COLOR``/``TERMINAL_WIDTH``: the ``mcp`` zygote has Typer
imported), so the CLI tests, which check what is rendered under each environment, fork from a
``cli`` zygote that has imported the sidecar but neither Typer nor Rich; a child's ``sys.stdout``
is the zygote's (made for a pipe: block-buffered, also on a terminal; each stream is read whole
by the tests), and a run whose environment sets what an interpreter reads at its start
(``PYTHONIOENCODING``, the locale) spawns (:func:`support.cli.forked_cli`). Start-up,
signals, exit paths (a closed or full stdout), config refusal, harness and editor tests spawn
``dsh-search`` as a user's harness does.

``DSH_TESTS_FORKSERVER=0`` turns it off (every sidecar spawned).
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import signal
import socket
import struct
import sys

#: Signals the launcher passes on to the sidecar (SIGKILL and SIGSTOP cannot be caught: a killed
#: launcher closes its socket, and the zygote then kills the sidecar).
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def _send_msg(sock: socket.socket, data: bytes, fds: list[int] | None = None) -> None:
    head = struct.pack("!I", len(data))
    if fds:
        sock.sendmsg([head + data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.sendall(head + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


# ---------------------------------------------------------------------------- the launcher


def launch(path: str, argv: list[str]) -> None:
    """The launcher: hand fds 0-2, argv, environment and cwd to the zygote at ``path``, then
    mirror the sidecar's end (exit code, or the signal it died of)."""
    pending: list[int] = []
    child = [0]

    def forward(signum: int, _frame: object) -> None:
        if child[0]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child[0], signum)
        else:
            pending.append(signum)

    for s in FORWARDED:
        signal.signal(s, forward)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    request = {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}
    _send_msg(sock, json.dumps(request).encode(), [0, 1, 2])
    # The sidecar alone holds the pipes now: its closing stdout is the test's EOF.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    (child[0],) = struct.unpack("!i", _recv_exact(sock, 4))
    for signum in pending:
        forward(signum, None)
    while True:
        try:
            (status,) = struct.unpack("!i", _recv_exact(sock, 4))
            break
        except InterruptedError:
            continue
        except EOFError:
            status = 1 << 8  # the zygote went away: exit 1
            break
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


# ---------------------------------------------------------------------------- the zygote


def _preload(kind: str) -> None:
    """``serve``: import what ``dsh-search serve`` imports before it reads its first message, in
    its order (:func:`dsh_sidecar.cli.serving.serve`: attribute docstrings off before the config
    models). ``mcp``: the Typer app and the MCP server, with the config models' docstrings on, as
    ``dsh-search mcp`` defines them; both then what their preparation thread imports
    (:func:`_preload_preparation`). ``cli``: the sidecar and its config models (docstrings on)
    and the built-in packs, not Typer nor Rich."""
    import dsh_sidecar.cli  # noqa: F401

    if kind == "cli":
        # what the one-shot commands import, short of the CLI framework: Typer and Rich read the
        # environment when imported (FORCE_COLOR, TERMINAL_WIDTH…), so each child imports them
        # under its own test's environment, as a spawned `dsh-search` does
        import dsh_sidecar.config  # noqa: F401
        import dsh_sidecar.sidecar  # noqa: F401
        from dsh_sidecar.suggester.packs import builtin_packs

        builtin_packs()  # what `suggest` and `replay` activate (see _preload_preparation)

        assert not {"typer", "rich", "click"} & set(sys.modules), "the cli zygote imported the CLI framework"
        return
    if kind == "mcp":
        import dsh_sidecar.cli.commands  # noqa: F401
        import dsh_sidecar.mcp.server  # noqa: F401
    else:
        from dsh_sidecar.configmodel import set_attribute_docstrings

        set_attribute_docstrings(False)
        import dsh_sidecar.lsp.app  # noqa: F401
        import dsh_sidecar.lsp.handlers  # noqa: F401
        import dsh_sidecar.lsp.signals  # noqa: F401
        import dsh_sidecar.sidecar  # noqa: F401  (what build_server imports on its first call)
    _preload_preparation()


def _preload_preparation() -> None:
    """What a long-lived server's preparation thread (``Sidecar._warm_search``) imports after
    its ``initialize`` reply: bashlex, httpx with httpcore/anyio's asyncio backend.
    Each fork of ``serve`` or ``mcp`` imported them again, ~0.1 s of CPU (of ~0.3 s for a short
    session). The client made here is dropped: a child makes its own.
    Then the built-in packs (:func:`dsh_sidecar.suggester.packs.builtin_packs`, cached per
    process): the suggester's activation parsed and validated them in every fork, ~65 ms of
    CPU each (of ~0.11 s for a fork that replays a trace; 44% of the corpus replays' CPU)."""
    from dsh_sidecar.router.http import make_client, warm_async_backend
    from dsh_sidecar.suggester.packs import builtin_packs
    from dsh_sidecar.suggester.parse import warm_shell_parser

    warm_shell_parser()
    make_client()
    warm_async_backend()
    builtin_packs()
    _preload_workspace()


def _preload_workspace() -> None:
    """What a workspace's first build and a first search import on first use: pathspec with
    its RE2 backend (the ignore files), tree-sitter and its grammar packages (the symbol index;
    the grammars and queries themselves are made per thread, so a child makes its own),
    cachetools (the router's cache), pygls' progress reports: ~35 ms of CPU in each fork that
    opens a workspace."""
    import importlib

    import cachetools  # noqa: F401
    import pygls.progress  # noqa: F401
    import tree_sitter  # noqa: F401
    from dsh_sidecar.workspace import symbols
    from dsh_sidecar.workspace.wildmatch import ignore_spec

    ignore_spec(["*.pyc", "!keep.pyc", "/build/"])

    for module, _fn in set(symbols._GRAMMARS.values()):
        with contextlib.suppress(ImportError):  # a grammar wheel missing: the child falls back as it would
            importlib.import_module(module)


def _run_child(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """In the forked child: become the ``dsh-search`` command of ``request`` on the launcher's
    fds; never returns."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        conn.close()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = list(request["argv"])
        sys.path.insert(0, os.path.dirname(sys.argv[0]))  # as the console script's (the zygote runs -P)
        import random

        random.seed()  # a spawned process seeds from the OS; the zygote's state is shared
        from dsh_sidecar.cli import main

        try:
            code = main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    except BaseException:
        import traceback

        traceback.print_exc()
    os._exit(code)


def zygote(kind: str, path: str) -> None:
    """Serve forks of ``kind`` (``serve``, ``mcp`` or ``cli``: :func:`_preload`) on the Unix socket
    ``path`` until stdin closes (the pytest worker ended)."""
    import selectors
    import threading

    _preload(kind)
    assert threading.active_count() == 1, "the zygote must have no threads to fork"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    os.write(1, b"ready\n")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(sys.stdin, selectors.EVENT_READ, "parent")
    children: dict[int, tuple[socket.socket, int]] = {}  # pidfd -> (launcher conn, pid)
    by_conn: dict[int, int] = {}  # conn fd -> pidfd
    while True:
        for key, _ in sel.select():
            what = key.data
            if what == "parent":
                for _conn, pid in children.values():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                return
            if what == "accept":
                conn, _ = listener.accept()
                # the fds ride on the first bytes sent, so the first read is recvmsg
                data, ancdata, _, _ = conn.recvmsg(65536, socket.CMSG_SPACE(3 * array.array("i").itemsize))
                while len(data) < 4:
                    data += _recv_exact(conn, 4 - len(data))
                (n,) = struct.unpack("!I", data[:4])
                data = data[4:]
                while len(data) < n:
                    data += _recv_exact(conn, n - len(data))
                fds = array.array("i")
                for level, kind, payload in ancdata:
                    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                        fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
                request = json.loads(data)
                pid = os.fork()
                if pid == 0:
                    sel.close()
                    listener.close()
                    for other, _pid in children.values():
                        other.close()
                    for pidfd in children:
                        os.close(pidfd)
                    _run_child(conn, request, list(fds))
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                children[pidfd] = (conn, pid)
                by_conn[conn.fileno()] = pidfd
                conn.sendall(struct.pack("!i", pid))
                sel.register(pidfd, selectors.EVENT_READ, "child")
                sel.register(conn, selectors.EVENT_READ, "launcher")
            elif what == "child":
                pidfd = key.fd
                conn, pid = children.pop(pidfd)
                _, status = os.waitpid(pid, 0)
                sel.unregister(pidfd)
                os.close(pidfd)
                if by_conn.pop(conn.fileno(), None) is not None:
                    sel.unregister(conn)
                with contextlib.suppress(OSError):
                    conn.sendall(struct.pack("!i", status))
                conn.close()
            elif what == "launcher":  # the launcher closed (killed): so is the sidecar
                conn = key.fileobj
                if conn.recv(1):
                    continue
                pidfd = by_conn.pop(conn.fileno())
                sel.unregister(conn)
                _, pid = children[pidfd]  # its exit is still reaped above
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    if sys.argv[1] == "zygote":
        zygote(sys.argv[2], sys.argv[3])
    else:
        launch(sys.argv[2], sys.argv[3:])
