"""Fuzz the shell parser: what bashlex spends under the work budget, on generated and recorded lines.

Usage: ``python bench/shell_fuzz.py [--lines N] [--seed S] [--max-len L] [--top K]``.

Three generators, N lines each (deterministic from the seed): **chars** (1 to L characters,
shell punctuation weighted over letters), **tokens** (1 to L/2 shell tokens: ``${``, ``$(``,
quotes, here-document starts, reserved words, operators, words), **mutants** (a recorded agent
line with 1-4 shell characters inserted, deleted or replaced); then every **recorded** line of
the corpus (``corpus/trajectories``' shell commands, ``corpus/intents``' calls). Each line is
parsed by ``budget.parse_bounded`` with a budget far above the product's
(``--ceiling`` units a character) and by ``shell.shell_words`` (the product path: the bounds,
the plain-line split, the fallback). Printed per set: lines, how bashlex ended (parsed, its own
error, refused for going back, over the ceiling), the units a character spent (median, 99th
percentile, max, and the line of the max), the slowest ``shell_words`` in µs and its line, and
how many lines the product's budget (``budget.UNITS_PER_CHAR``) refuses that the ceiling let
finish. A line over the ceiling is printed whole: it is a new costly input
(``bench/attacks.py``, costly inputs).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from dsh_sidecar.suggester.parse import budget  # noqa: E402
from dsh_sidecar.suggester.parse.shell import shell_words, split_heredocs  # noqa: E402

PUNCT = list("${}()[]'\"`;&|<>#\\~=*?!-/.,: \n\t")
LETTERS = list("abcxyzEOF_059")
TOKENS = (
    ["${", "$(", "$((", "$[", "$", "`", "'", '"', "<(", ">(", "(", ")", "{", "}", "[[", "]]", "((", "))"]
    + [";", ";;", "&", "&&", "||", "|", "|&", "<", ">", ">>", "<<", "<<-", "<<<", "2>&1", "\n", "\\", "#", "~", "="]
    + ["if", "then", "else", "fi", "for", "in", "do", "done", "while", "case", "esac", "function", "!", "time"]
    + ["EOF", "'EOF'", "x", "a=b", "echo", "grep", "-rn", "src", "*.py", "{a,b}", " ", " ", " "]
)


def recorded_lines() -> list[str]:
    """Every shell command string of the corpus (trajectories and labelled calls), once each."""
    out: dict[str, None] = {}
    for path in sorted((ROOT / "corpus").glob("**/*.jsonl")):
        if path.name == "index.jsonl":
            continue
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                inp = json.loads(raw)["params"]["tool"]["input"]
            except (ValueError, KeyError, TypeError):
                continue
            cmd = inp.get("command", inp.get("cmd")) if isinstance(inp, dict) else None
            if isinstance(cmd, list) and len(cmd) >= 3 and str(cmd[1]).endswith("c"):
                cmd = cmd[2]
            if isinstance(cmd, str) and cmd.strip():
                out.setdefault(cmd[:4000], None)
    return list(out)


def gen_chars(rng: random.Random, max_len: int) -> str:
    n = rng.randint(1, max_len)
    return "".join(rng.choice(PUNCT) if rng.random() < 0.6 else rng.choice(LETTERS) for _ in range(n))


def gen_tokens(rng: random.Random, max_len: int) -> str:
    return "".join(rng.choice(TOKENS) for _ in range(rng.randint(1, max(1, max_len // 2))))


def gen_mutant(rng: random.Random, base: list[str]) -> str:
    line = list(rng.choice(base)[:400])
    for _ in range(rng.randint(1, 4)):
        i = rng.randint(0, len(line))
        op = rng.random()
        if op < 0.5 or not line:
            line.insert(i, rng.choice(PUNCT))
        elif op < 0.75:
            del line[min(i, len(line) - 1)]
        else:
            line[min(i, len(line) - 1)] = rng.choice(PUNCT)
    return "".join(line)


def run(name: str, lines: list[str], ceiling: int, top: int) -> None:
    ends = {"parsed": 0, "bashlex error": 0, "went back": 0, "over ceiling": 0}
    ratios: list[tuple[float, str]] = []
    refused_by_product = 0
    slow: list[tuple[float, str]] = []
    for line in lines:
        text = split_heredocs(line)[0]
        try:
            budget.parse_bounded(text, ceiling * len(text) + budget.BASE_UNITS)
            ends["parsed"] += 1
        except budget.ParseRefused as exc:
            ends["over ceiling" if "budget" in str(exc) else "went back"] += 1
            if "budget" in str(exc):
                print(f"  OVER CEILING ({name}): {line!r}")
        except Exception:  # bashlex's own errors (and the odd TypeError of its error class)
            ends["bashlex error"] += 1
        units = budget.spent()
        ratios.append((units / max(1, len(text)), line))
        if units > budget.budget_for(text):
            refused_by_product += 1
        shell_words.cache_clear()
        t0 = time.perf_counter()
        shell_words(line)
        slow.append(((time.perf_counter() - t0) * 1e6, line))
    ratios.sort()
    slow.sort()
    # the slowest single timings are mostly the machine's noise: time them again, best of five
    again = []
    for _, line in slow[-20:]:
        best = float("inf")
        for _ in range(5):
            shell_words.cache_clear()
            t0 = time.perf_counter()
            shell_words(line)
            best = min(best, (time.perf_counter() - t0) * 1e6)
        again.append((best, line))
    again.sort()
    vals = [r for r, _ in ratios]
    long_lines = [(r, line) for r, line in ratios if len(line) >= 20]
    p99 = vals[int(0.99 * (len(vals) - 1))]
    print(
        f"{name}: {len(lines)} lines; {ends}; units/char median {statistics.median(vals):.2f} "
        f"p99 {p99:.2f} max {vals[-1]:.2f} ({ratios[-1][1][:120]!r}); of lines of 20+ characters max "
        f"{long_lines[-1][0] if long_lines else 0:.2f}; refused by the product's budget {refused_by_product}; "
        f"shell_words median {statistics.median(s for s, _ in slow):.0f} µs, slowest (best of 5) "
        f"{again[-1][0]:.0f} µs ({again[-1][1][:80]!r})"
    )
    for units, line in ratios[-top:][::-1] if top else []:
        print(f"    {units:6.2f} units/char  {line[:160]!r}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=100_000, help="lines per generator")
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--max-len", type=int, default=24)
    ap.add_argument("--ceiling", type=int, default=1000, help="units a character the fuzzing parse may spend")
    ap.add_argument("--top", type=int, default=0, help="print the K costliest lines of each set")
    ap.add_argument("--only", default="chars,tokens,mutants,recorded")
    args = ap.parse_args()
    budget.install()
    rng = random.Random(args.seed)
    recorded = recorded_lines()
    sets = {
        "chars": lambda: [gen_chars(rng, args.max_len) for _ in range(args.lines)],
        "tokens": lambda: [gen_tokens(rng, args.max_len) for _ in range(args.lines)],
        "mutants": lambda: [gen_mutant(rng, recorded) for _ in range(args.lines)],
        "recorded": lambda: recorded,
    }
    for name in args.only.split(","):
        t0 = time.perf_counter()
        run(name, sets[name](), args.ceiling, args.top)
        print(f"  ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
