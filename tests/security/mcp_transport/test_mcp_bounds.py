"""The MCP stdio transport has the LSP transport's bounds: a line over 16 MiB (with or without
a newline), a request nested 1,000 to 50,000 levels deep, each answered with a JSON-RPC error
carrying the request's id (or dropped when it has none), the server's memory bounded by one
line, and the session serving on after each. Raw newline-delimited JSON over real stdio to a
spawned ``dsh-search mcp``; the reader itself is checked on chunk boundaries."""

from __future__ import annotations

import asyncio
import json
import select
import subprocess
import sys
from pathlib import Path

import pytest
from dsh_sidecar.mcp.bounded import MAX_LINE_BYTES, Oversized, bounded_lines
from support.sidecar import home_env

pytest.importorskip("mcp", reason="the [mcp] extra is not installed")

OVERSIZED = {"code": -32600, "message": f"Invalid Request: the message is over {MAX_LINE_BYTES} bytes (discarded)"}
NESTED = {"code": -32600, "message": "Invalid Request: the message is nested too deeply"}


class Raw:
    def __init__(self, tmp_path: Path) -> None:
        script = Path(sys.executable).parent / "dsh-search"
        self.proc = subprocess.Popen(
            # spawned, not forked: the process measured is the server itself
            [str(script), "mcp", "--workspace", str(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**home_env(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
            bufsize=0,
        )
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        self.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode() + b"\n")
        assert self.answer()["id"] == 0
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        view = memoryview(data)
        for i in range(0, len(view), 1 << 20):
            self.proc.stdin.write(view[i : i + (1 << 20)])
        self.proc.stdin.flush()

    def answer(self, timeout: float = 60) -> dict:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"no answer within {timeout} s"
        assert self.proc.stdout is not None
        return json.loads(self.proc.stdout.readline())

    def peak_mib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
        return 0

    def serving(self, rid: int) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list"}).encode() + b"\n")
        got = self.answer()
        assert got["id"] == rid and "where_is" in {t["name"] for t in got["result"]["tools"]}

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(30)


@pytest.fixture
def raw(tmp_path: Path):
    server = Raw(tmp_path)
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait()


def _call(rid: object, filler: bytes) -> bytes:
    head = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call"}).encode()[:-1]
    return head + b', "params": {"name": "where_is", "arguments": {"query": "' + filler + b'"}}}'


@pytest.mark.parametrize("size_mib", [17, 64, 200])
def test_an_oversized_line_is_answered_with_its_id_and_memory_stays_bounded(raw, size_mib: int) -> None:
    base = raw.peak_mib()
    raw.send(_call(7, b"x" * (size_mib << 20)) + b"\n")
    assert raw.answer() == {"jsonrpc": "2.0", "id": 7, "error": OVERSIZED}
    raw.serving(8)
    assert raw.peak_mib() - base < 80  # one line's bound at most, not the 200 MiB sent
    assert raw.close() == 0


def test_an_oversized_line_with_a_string_id_or_none(raw) -> None:
    raw.send(_call("big", b"y" * (20 << 20)) + b"\n")
    assert raw.answer() == {"jsonrpc": "2.0", "id": "big", "error": OVERSIZED}
    raw.send(b"z" * (20 << 20) + b"\n")  # garbage, no id: nothing to answer
    raw.serving(9)
    assert raw.close() == 0


def test_an_oversized_last_line_without_a_newline_ends_cleanly(raw) -> None:
    base = raw.peak_mib()
    raw.send(_call(11, b"x" * (100 << 20)))  # no newline, then EOF
    # all of it read (the pipe holds 64 KiB); wait4's maxrss would count the parent it forked from
    grown = raw.peak_mib() - base
    raw.proc.stdin.close()
    assert raw.answer() == {"jsonrpc": "2.0", "id": 11, "error": OVERSIZED}
    assert raw.proc.wait(30) == 0
    assert grown < 80


@pytest.mark.parametrize("depth", [1_000, 5_000, 50_000])
def test_a_deeply_nested_request_is_answered_with_its_id(raw, depth: int) -> None:
    deep = b'{"a":' * depth + b"1" + b"}" * depth
    line = b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"where_is","arguments":{"query":'
    raw.send(line + deep + b"}}}\n")
    assert raw.answer() == {"jsonrpc": "2.0", "id": 12, "error": NESTED}
    raw.serving(13)
    assert raw.close() == 0


def _lines(chunks: list[bytes], limit: int) -> list[bytes | Oversized]:
    async def run() -> list[bytes | Oversized]:
        it = iter(chunks)

        async def read(_n: int) -> bytes:
            return next(it, b"")

        return [x async for x in bounded_lines(read, limit)]

    return asyncio.run(run())


def test_the_reader_on_chunk_boundaries() -> None:
    assert _lines([b"ab", b"c\nde", b"f\n"], 8) == [b"abc", b"def"]
    assert _lines([b"12345678\n"], 8) == [b"12345678"]  # exactly the bound
    assert _lines([b"123456789\nok\n"], 8) == [Oversized(b"123456789", 9), b"ok"]
    assert _lines([b"1234", b"5678", b"9abc", b"\nok"], 8) == [Oversized(b"123456789abc", 12), b"ok"]
    assert _lines([b"\n\n", b"x"], 8) == [b"", b"", b"x"]
    assert _lines([b"123456789"], 8) == [Oversized(b"123456789", 9)]  # at EOF


@pytest.mark.parametrize("key", [rb"\u0069d", rb"i\u0064"])
def test_a_request_too_deep_or_too_large_is_answered_under_an_id_whose_name_is_escaped(raw, key: bytes) -> None:
    # the member ``"\u0069d"`` is ``id`` to every JSON parser: the client waits for its answer
    deep = b'{"a":' * 5_000 + b"1" + b"}" * 5_000
    head = b'{"jsonrpc":"2.0","' + key + b'":14,"method":"tools/call","params":{"name":"where_is","arguments":{"query":'
    raw.send(head + deep + b"}}}\n")
    assert raw.answer(timeout=10) == {"jsonrpc": "2.0", "id": 14, "error": NESTED}
    raw.send(head + b'"' + b"x" * (17 << 20) + b'"}}}\n')
    assert raw.answer(timeout=10) == {"jsonrpc": "2.0", "id": 14, "error": OVERSIZED}
    raw.serving(15)
    assert raw.close() == 0
