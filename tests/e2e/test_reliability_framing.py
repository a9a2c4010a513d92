"""Malformed LSP framing over real stdio: every broken frame is answered (or the server exits
cleanly), the server keeps serving, and it never spins at 100% CPU while doing so."""

from __future__ import annotations

import fcntl
import termios
import time
from collections import Counter

import pytest
from support.rawrpc import RawServer, frame
from support.waiting import HANG_S, POLL_S, wait_until

STATUS = {"jsonrpc": "2.0", "method": "dsh/status"}
#: Readings of the server's thread states in one look at whether it is idle (about a second).
IDLE_SAMPLES = 50


@pytest.fixture(scope="module")
def module_server(tmp_path_factory):
    """One server for the whole module: that it keeps serving after each case is the point."""
    srv = RawServer(tmp_path_factory.mktemp("dsh-home"))
    srv.initialize({})
    srv.next_id = 10_000  # the barrier's ids never meet the cases' own (1, 2, 3, 7, 11, 41, 900)
    yield srv
    srv.close()


@pytest.fixture
def server(module_server):
    """The module's server with every reply to an earlier case read: a ``dsh/status`` and the
    messages up to its answer (the server answers in order), instead of a guessed quiet period."""
    module_server.barrier()
    return module_server


def status(msg_id: int) -> bytes:
    return frame({**STATUS, "id": msg_id})


def assert_serving(srv: RawServer, msg_id: int = 900) -> None:
    srv.send_raw(status(msg_id))
    reply = srv.response(msg_id)  # what the case left before it is read past
    assert reply["result"]["version"], reply


def busiest_thread(srv: RawServer) -> tuple[int, int]:
    """Over :data:`IDLE_SAMPLES` readings :data:`POLL_S` apart: the most readings in which any one
    thread of the server was runnable (``R``: running, or waiting for a core), and their count."""
    runnable: Counter[int] = Counter()
    for _ in range(IDLE_SAMPLES):
        runnable.update(tid for tid, state in srv.thread_states().items() if state == "R")
        time.sleep(POLL_S)
    return max(runnable.values(), default=0), IDLE_SAMPLES


def settle(srv: RawServer) -> None:
    """Wait until the server is idle: a look in which no thread was runnable in half the readings
    or more. A spinning thread is runnable in every reading however loaded the machine (a core
    or the queue for one), so it never settles and fails here; a server still ending its start
    or the last case's work (at load 25-46 that outlasted a 2 s window) settles once done."""

    def idle() -> bool:
        most, of = busiest_thread(srv)
        return most < of // 2

    wait_until(idle, "the server idle (no thread runnable in half of a second's readings)", timeout_s=HANG_S)


def unread_bytes(srv: RawServer) -> int:
    """Bytes written to the server's stdin that it has not read yet (``FIONREAD`` on the pipe)."""
    assert srv.proc.stdin is not None
    buf = bytearray(4)
    fcntl.ioctl(srv.proc.stdin.fileno(), termios.FIONREAD, buf)
    return int.from_bytes(buf, "little")


@pytest.mark.parametrize(
    "data, message",
    [
        (frame(b"{not json"), "Parse error: the body is not valid JSON"),
        (
            frame(b'{"jsonrpc":"2.0","id":5,"method":"dsh/status","params":{"q":"\xff\xfe"}}'),
            "Parse error: the body is not valid JSON",
        ),
        (b"Foo: bar\r\n\r\n", "Invalid Request: no Content-Length header"),
        (b"Content-Length: -5\r\n\r\n", "Invalid Request: Content-Length '-5' is not a byte count"),
        (b"Content-Length: 12abc\r\n\r\n", "Invalid Request: Content-Length '12abc' is not a byte count"),
        (b"X" * 100_000 + b"\r\n\r\n", "Invalid Request: a header line is longer than 8192 bytes"),
        (
            b"".join(b"X-%d: y\r\n" % i for i in range(40)) + b"Content-Length: 2\r\n\r\n{}",
            "Invalid Request: more than 32 header lines",
        ),
        (frame(b"[1, 2]"), "Invalid Request: not a JSON-RPC 2.0 message object"),
        (frame(b'{"method": "dsh/status"}'), "Invalid Request: not a JSON-RPC 2.0 message object"),
        (
            frame(b'{"jsonrpc":"2.0","id":null,"method":"dsh/status"}'),
            "Invalid Request: id must be a number or a string",
        ),
        (
            frame(b'{"jsonrpc":"2.0","id":1.5,"method":"dsh/status"}'),
            "Invalid Request: id must be a number or a string",
        ),
        (
            frame(b'{"jsonrpc":"2.0","id":true,"method":"dsh/status"}'),
            "Invalid Request: id must be a number or a string",
        ),
        (
            b"Content-Length: 17000000\r\n\r\n" + b"x" * 17_000_000,
            "Invalid Request: Content-Length 17000000 is over 16777216 bytes (body discarded)",
        ),
    ],
    ids=[
        "non-json",
        "invalid-utf8",
        "no-length",
        "negative-length",
        "junk-length",
        "header-line-100k",
        "40-headers",
        "array",
        "no-jsonrpc",
        "id-null",
        "id-fraction",
        "id-bool",
        "17MB-body",
    ],
)
def test_broken_frame_gets_an_error_with_null_id_and_the_server_keeps_serving(server, data, message):
    server.send_raw(data)
    reply = server.recv()
    assert reply == {"jsonrpc": "2.0", "id": None, "error": {"code": reply["error"]["code"], "message": message}}
    assert reply["error"]["code"] == (-32700 if message.startswith("Parse error") else -32600)
    assert_serving(server)


def test_a_message_without_jsonrpc_is_refused_with_its_own_id(server):
    server.send_raw(frame(b'{"id": 3, "method": "dsh/status"}'))
    assert server.recv() == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32600, "message": "Invalid Request: not a JSON-RPC 2.0 message object"},
    }


def test_stray_blank_lines_and_content_type_header_are_accepted(server):
    server.send_raw(b"\r\n\n\r\n")
    body = b'{"jsonrpc":"2.0","id":7,"method":"dsh/status"}'
    server.send_raw(
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: %d\r\n\r\n" % len(body) + body
    )
    assert server.response(7)["result"]["version"]


def test_too_deep_nesting_is_refused_with_the_recovered_id(server):
    deep = (
        b'{"jsonrpc":"2.0","id":"deep-1","method":"dsh/search","params":{"query":'
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}}"
    )
    server.send_raw(frame(deep))
    assert server.recv() == {
        "jsonrpc": "2.0",
        "id": "deep-1",
        "error": {"code": -32600, "message": "Invalid Request: the message is nested too deeply"},
    }
    # nested dicts inside a tool input, id after params
    nested = (
        b'{"jsonrpc":"2.0","method":"dsh/postExecute","params":{"sessionId":"s","turn":1,"tool":{"name":"grep","input":'
        + b'{"a":' * 5000
        + b"1"
        + b"}" * 5000
        + b'}},"id":41}'
    )
    server.send_raw(frame(nested))
    assert server.recv()["id"] == 41
    assert_serving(server)


def test_too_deep_nesting_is_refused_under_an_id_whose_member_name_is_escaped(server):
    # ``"\u0069d"`` is the member ``id`` to every JSON parser: the client waits for its answer
    deep = b'{"jsonrpc":"2.0","\\u0069d":"deep-2","method":"dsh/search","params":{"query":' + b"[" * 5000 + b"]" * 5000
    server.send_raw(frame(deep + b"}}"))
    assert server.recv(timeout=10) == {
        "jsonrpc": "2.0",
        "id": "deep-2",
        "error": {"code": -32600, "message": "Invalid Request: the message is nested too deeply"},
    }
    assert_serving(server)


def test_understated_content_length_costs_one_message_not_the_session(server):
    first = b'{"jsonrpc":"2.0","id":1,"method":"dsh/status"}'
    server.send_raw(b"Content-Length: 10\r\n\r\n" + first + status(2) + status(3))
    assert server.recv()["error"]["code"] == -32700  # the first 10 bytes
    assert server.response(2)["result"]["version"]  # re-synchronised on the next header
    assert server.response(3)["result"]["version"]


def test_overstated_content_length_swallows_the_next_frame_then_recovers(server):
    body = b'{"jsonrpc":"2.0","id":1,"method":"dsh/status"}'
    server.send_raw(b"Content-Length: %d\r\n\r\n" % (len(body) + 10) + body + status(2))
    assert server.recv()["error"]["code"] == -32700
    assert_serving(server, 3)


def test_a_body_split_across_many_writes_is_one_message(server):
    data = status(11)
    for i in range(0, len(data), 3):
        server.send_raw(data[i : i + 3])
        time.sleep(0.002)
    assert server.response(11)["result"]["version"]


def test_truncated_body_then_eof_exits_cleanly(dsh_home):
    srv = RawServer(dsh_home)
    srv.initialize({})
    srv.send_raw(b'Content-Length: 100\r\n\r\n{"jsonrpc":"2.0",')
    srv.proc.stdin.close()
    assert srv.wait(HANG_S) == 0  # a hang is killed (-9) at the bound
    assert b"Traceback" not in srv.stderr_bytes


def test_absurd_content_length_exits_with_a_reason_instead_of_waiting_for_it(dsh_home):
    srv = RawServer(dsh_home)
    srv.initialize({})
    srv.send_raw(b"Content-Length: 99999999999\r\n\r\n")
    assert srv.wait(HANG_S) == 1
    assert (
        b"stopping: Content-Length 99999999999 is over 268435456 bytes: the stream cannot be re-synchronised"
        in srv.stderr_bytes
    )


def test_garbage_flood_does_not_spin_the_cpu(server):
    """A flood of junk is answered, then an idle server burns (almost) no CPU."""
    junk = (b"Content-Length: x\r\n\r\n" + b"\n" * 50 + frame(b"nope")) * 200
    server.send_raw(junk)
    replies = [server.recv() for _ in range(400)]
    assert {r["error"]["code"] for r in replies} == {-32600, -32700}
    assert_serving(server)
    settle(server)
    before = server.cpu_s()
    time.sleep(2.0)
    idle = server.cpu_s() - before
    assert idle < 0.5, f"{idle:.2f} s of CPU in 2 s while idle"  # generous "does not hang" bound


def test_half_a_header_then_silence_does_not_spin(server):
    server.send_raw(b"Content-Len")
    wait_until(lambda: unread_bytes(server) == 0, "the half header read by the server")
    settle(server)  # waiting for the rest of its header block, not spinning on it
    before = server.cpu_s()
    time.sleep(1.5)
    assert server.cpu_s() - before < 0.5
    server.send_raw(b"gth: 2\r\n\r\n{}")
    assert server.recv()["error"]["code"] == -32600
    assert_serving(server)
