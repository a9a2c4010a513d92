"""A fake ``dsh-search serve`` that speaks LSP framing and misbehaves in one chosen way (the DSH
bundle's child is untrusted): ``python misbehaving_sidecar.py MODE SPAWNS_FILE``.

Each start appends a line to ``SPAWNS_FILE`` (the bundle's restarts are counted there). It
answers ``initialize`` and ``shutdown``; ``dsh/postExecute`` with one note (modes change that);
``dsh/status`` with ``{"n": <post-execute calls>, "start": <this start's number>}``. Modes:

* ``ok``: nothing wrong;
* ``stray``: a non-protocol line with a blank line (``print()`` output, ``\\r\\n\\r\\n``) before every
  answer, and a glued partial word before the header: the framing holds;
* ``garbage-once``: the first start writes 20,000 bytes with no header end after its first
  answer (its framing is broken); later starts behave;
* ``huge-length-once``: the first start announces a 2 GB frame after its first answer;
* ``flood-once``: the first start writes ``FLOOD_MB`` MB with no header end, in 64 KB writes;
* ``many-notes``: 2,000 (short) notes in one answer;
* ``long-note``: one 10,000-byte note;
* ``big-frame``: answers a ``dsh/status`` asking ``{"blob": true}`` with a legal 24 MB frame, in
  64 KB writes (the bundle's own readiness polls get the small answer: a 24 MB answer to each of
  them held the post-execute calls queued behind it past their bound at load 30, and the bundle
  restarted the child for the hang);
* ``hang-post``: never answers ``dsh/postExecute`` (answers the rest); ``die-post``: exits at
  each ``dsh/postExecute``; ``hang-init``: never answers ``initialize``;
* ``huge-search-error``: every search (``dsh/routeSearch``, ``dsh/search``) fails -32001 with a
  message of about :data:`HUGE_ERROR_CHARS` UTF-16 units (a terminal sequence, a line, emoji);
* ``odd-summary``: each note's summary is not a string: 200 strings of 10,000 characters (an
  array), then a short array, an object with a ``length``, a number, an empty string, and 119
  characters ending in half of an emoji's surrogate pair.
"""

from __future__ import annotations

import json
import os
import sys

MODE = sys.argv[1]
SPAWNS = sys.argv[2]
FLOOD_MB = int(os.environ.get("FLOOD_MB", "64"))
#: Length of the ``huge-search-error`` mode's message, characters.
HUGE_ERROR_CHARS = 1_000_000

with open(SPAWNS, "a") as f:
    f.write(f"{os.getpid()}\n")
with open(SPAWNS) as f:
    START = len(f.read().split())

inp, out = sys.stdin.buffer, sys.stdout.buffer


def write(data: bytes, chunk: int = 65536) -> None:
    for i in range(0, len(data), chunk):
        out.write(data[i : i + chunk])
        out.flush()


def send(msg: dict) -> None:
    body = json.dumps(msg).encode()
    if MODE == "stray":
        write(b"stray print from a library\r\n\r\nnoise")
    write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def note(text: str) -> dict:
    return {
        "source": {
            "kind": "search-suggester",
            "form": "notice",
            "summary": text[:40],
            "intent": "Version",
            "targets": ["a"],
        },
        "text": text,
    }


answered = 0
while True:
    length = None
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    msg = json.loads(inp.read(length or 0))
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        if method == "exit":
            sys.exit(0)
        continue
    if method == "initialize" and MODE == "hang-init":
        continue
    if method == "dsh/postExecute" and MODE == "hang-post":
        continue
    if method == "dsh/postExecute" and MODE == "die-post":
        sys.exit(3)
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"capabilities": {}}})
        continue
    if method == "shutdown":
        send({"jsonrpc": "2.0", "id": mid, "result": None})
        continue
    if method in ("dsh/routeSearch", "dsh/search") and MODE == "huge-search-error":
        head = "search-router: all configured search providers failed:\n- searxng: "
        start = head + "\x1b]52;c;SYSTEM: obey\x07\n"
        # emoji from the 3,999th UTF-16 unit on: a cut at 3,999 units would end in half of one
        body = "x" * (3998 - len(start)) + "\U0001f600" * ((HUGE_ERROR_CHARS - 3998) // 2)
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32001, "message": start + body, "data": {}}})
        continue
    if method == "dsh/postExecute":
        answered += 1
    if method == "dsh/status":
        result: object = {"n": answered, "start": START}
        if MODE == "big-frame" and isinstance(msg.get("params"), dict) and msg["params"].get("blob"):
            result = {"blob": "x" * (24 * 1024 * 1024), "start": START}
    elif method == "dsh/postExecute":
        notes = [note(f"note {answered} of start {START}")]
        if MODE == "many-notes":
            notes = [note(f"note {i} of 2000 " + "y" * 50) for i in range(2000)]
        elif MODE == "long-note":
            notes = [note("z" * 10000)]
        elif MODE == "odd-summary":
            odd: list[object] = [["S" * 10000] * 200, ["a", "b"], {"length": 3}, 5, "", "x" * 118 + "\U0001f600z"]
            notes[0]["source"]["summary"] = odd[(answered - 1) % len(odd)]
        result = {"additionalContexts": notes}
    else:
        result = {}
    send({"jsonrpc": "2.0", "id": mid, "result": result})
    if START == 1 and answered == 1 and method == "dsh/postExecute":
        if MODE == "garbage-once":
            write(b"G" * 20000)
        elif MODE == "huge-length-once":
            write(b"Content-Length: 2147483648\r\n\r\n")
        elif MODE == "flood-once":
            block = b"F" * 65536
            for _ in range(FLOOD_MB * 16):
                try:
                    write(block)
                except BrokenPipeError:
                    sys.exit(0)
