"""Frame assembly in the DSH bundle's client (harness-adapters/dsh/lib/core/framing.js, compiled
from editor-clients/vscode/src/core/framing.ts): how long a legal 24 MB frame, arriving in 64 KB
chunks as a pipe delivers it, holds the harness's event loop.

Two assemblers on the same input, interleaved round by round: the client's own (linear: a
header searched once, the body's chunks joined once) and, as the same-run baseline, the earlier
one (the whole buffer joined with every chunk: quadratic). The loop's stall is the longest gap
between two 1 ms timer ticks while the chunks are fed (each chunk is fed on its own macrotask,
as pipe reads arrive). Prints, per assembler, the median of the longest stall and of the whole
assembly, and their ratio to the client's.

    python bench/dsh_framing.py [--rounds 5] [--mb 24]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FRAMING = ROOT / "harness-adapters" / "dsh" / "lib" / "core" / "framing.js"

SCRIPT = r"""
const { FramedClient } = require(process.argv[2]);
const { PassThrough } = require('node:stream');
const mode = process.argv[3];
const mb = Number(process.argv[4]);
const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'x/big', params: { blob: 'x'.repeat(mb * 1024 * 1024) } }));
const frame = Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
const HEADER_END = Buffer.from('\r\n\r\n');

// the earlier assembler (the baseline): join the whole buffer with every chunk
function quadratic(onMessage) {
  let buffer = Buffer.alloc(0);
  return (chunk) => {
    buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
    for (;;) {
      const end = buffer.indexOf(HEADER_END);
      if (end < 0) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(buffer.subarray(0, end).toString('ascii'))[1]);
      const start = end + 4;
      if (buffer.length < start + length) return;
      onMessage(JSON.parse(buffer.subarray(start, start + length).toString('utf8')));
      buffer = buffer.subarray(start + length);
    }
  };
}

let got = false;
let feed;
if (mode === 'client') {
  const out = new PassThrough();
  const input = new PassThrough();
  const client = new FramedClient(out, input);
  client.onNotification = () => { got = true; };
  feed = (chunk) => client.feed(chunk);
} else {
  feed = quadratic(() => { got = true; });
}
let last = performance.now();
let stall = 0;
const tick = setInterval(() => { const now = performance.now(); stall = Math.max(stall, now - last); last = now; }, 1);
const t0 = performance.now();
let offset = 0;
function next() {
  if (offset >= frame.length) {
    const total = performance.now() - t0;
    clearInterval(tick);
    console.log(JSON.stringify({ got, stall, total }));
    return;
  }
  const before = performance.now();
  feed(frame.subarray(offset, offset + 65536));
  stall = Math.max(stall, performance.now() - before);
  offset += 65536;
  setImmediate(next);
}
setTimeout(next, 20);
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mb", type=int, default=24)
    args = ap.parse_args()
    node = shutil.which("node")
    if node is None:
        print("skipped: node is not installed")
        return 0
    script = Path("/tmp") / "dsh_framing_bench.cjs"
    script.write_text(SCRIPT)
    runs: dict[str, list[dict]] = {"client": [], "baseline": []}
    for _ in range(args.rounds):
        for mode in runs:  # interleaved: machine noise hits both
            out = subprocess.run(
                [node, str(script), str(FRAMING), mode, str(args.mb)], capture_output=True, text=True, timeout=600
            )
            result = json.loads(out.stdout.strip().splitlines()[-1])
            assert result["got"], out.stderr
            runs[mode].append(result)
    client_stall = statistics.median(r["stall"] for r in runs["client"])
    client_total = statistics.median(r["total"] for r in runs["client"])
    print(f"a legal {args.mb} MB frame in 64 KB chunks, {args.rounds} rounds each, interleaved (medians)")
    for mode, results in runs.items():
        stall = statistics.median(r["stall"] for r in results)
        total = statistics.median(r["total"] for r in results)
        print(
            f"{mode:>8}: longest event-loop stall {stall:8.1f} ms ({stall / client_stall:6.1f}x), "
            f"whole assembly {total:8.1f} ms ({total / client_total:6.1f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
