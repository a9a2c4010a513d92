"""bashlex's parse tables read from the package (``suggester/parse/lalr.py``) against built at
import, as bashlex does: the same parses, and what the import costs.

Usage: ``python bench/shell_tables.py [--runs 5] [--mutants 20000] [--seed 1]``.

Each case runs in its own process (bashlex builds or reads its tables once, at import), the two
alternated ``--runs`` times: **read** (``lalr.import_bashlex()``, the product path) and
**built** (``import_bashlex(tables=None)``: bashlex's own construction). Printed per case: the
import's process CPU (median, min, max), whether the tables were read, and a SHA-256 over the
parser's tables after bashlex's own corrections and over the outcome of every line parsed —
every recorded shell command of the corpus (``bench/shell_fuzz.py``'s ``recorded_lines``) and
``--mutants`` of them with shell characters inserted, deleted or replaced (deterministic from
``--seed``) — each line's parse (``budget.parse_bounded``: bashlex under the work budget, as
the product calls it) dumped, or the class and text of its error. The two
digests must be equal: the tables and every parse byte for byte.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = textwrap.dedent(
    """
    import hashlib, json, random, sys, time
    sys.path[:0] = [sys.argv[1], sys.argv[2] + "/server"]
    mode, mutants, seed = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    from shell_fuzz import gen_mutant, recorded_lines
    from dsh_sidecar.suggester.parse import lalr
    t0 = time.process_time()
    bashlex = lalr.import_bashlex() if mode == "read" else lalr.import_bashlex(tables=None)
    cpu = time.process_time() - t0
    from bashlex import parser
    from dsh_sidecar.suggester.parse.budget import parse_bounded  # bashlex can loop on some lines
    tables = hashlib.sha256(repr((sorted((s, sorted(r.items(), key=repr)) for s, r in parser.yaccparser.action.items()),
                                  sorted((s, sorted(r.items())) for s, r in parser.yaccparser.goto.items()))).encode())
    lines = recorded_lines()
    rng = random.Random(seed)
    lines += [gen_mutant(rng, lines) for _ in range(mutants)]
    h = hashlib.sha256()
    parsed = 0
    for line in lines:
        try:
            out = "".join(t.dump() for t in parse_bounded(line))
            parsed += 1
        except RecursionError:
            out = "RecursionError"
        except Exception as exc:
            out = f"{type(exc).__name__}: {exc}"
        h.update(out.encode("utf-8", "surrogatepass") + b"\\0")
    print(json.dumps({"cpu": cpu, "read": lalr.LOADED.get("read"), "tables": tables.hexdigest(),
                      "parses": h.hexdigest(), "lines": len(lines), "parsed": parsed}))
    """
)


def run(mode: str, mutants: int, seed: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT / "bench"), str(ROOT), mode, str(mutants), str(seed)],
        capture_output=True,
        text=True,
        check=True,
        timeout=1200,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mutants", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    load = lambda: Path("/proc/loadavg").read_text().split()[0]  # noqa: E731
    print(f"bashlex import, tables read vs built, {args.runs} alternated runs each; load {load()}")
    results: dict[str, list[dict]] = {"read": [], "built": []}
    for r in range(args.runs):
        for mode in ("read", "built") if r % 2 == 0 else ("built", "read"):
            results[mode].append(run(mode, args.mutants if r == 0 else 0, args.seed))
    for mode, rs in results.items():
        cpu = [x["cpu"] * 1000 for x in rs]
        print(
            f"{mode:<6} import CPU median {statistics.median(cpu):6.1f} ms (min {min(cpu):.1f}, max {max(cpu):.1f}); "
            f"tables read: {rs[0]['read']}; tables sha256 {rs[0]['tables'][:16]}; {rs[0]['lines']} lines "
            f"({rs[0]['parsed']} parsed), outcomes sha256 {rs[0]['parses'][:16]}"
        )
    same = (
        all(x["tables"] == results["read"][0]["tables"] for x in results["read"] + results["built"])
        and results["read"][0]["parses"] == results["built"][0]["parses"]
    )
    print(f"the same tables and every parse byte for byte: {'yes' if same else 'NO'}; load {load()}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
