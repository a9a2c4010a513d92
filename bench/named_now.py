"""What asking the file system again costs a note: ``FileIndex.inside_now`` for the targets a
note is about to name (``filters.named_now``), against the cached ``FileIndex.inside`` (the
floor: a dictionary read) and a bare ``os.lstat`` of the same paths (the baseline: one system
call a path), interleaved round by round on one index of ``--files`` files (default 100,000,
written to a temp folder), with the load average beside; and the full judgement it skips for
a path with no link on the way (``fsguard.resolves_inside``: ``realpath``, one ``lstat`` a part).

    .venv/bin/python bench/named_now.py [--files 100000] [--rounds 7] [--notes 2000] [--targets 5]

Each round times ``--notes`` notes of ``--targets`` targets each (the config's ``maxTargets``
at most: 5), taken from the listing at random (depth 3-5), for each of the three ways in turn.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _scratch import scratch  # noqa: E402
from dsh_sidecar.suggester.fileindex import FileIndex  # noqa: E402
from dsh_sidecar.workspace import fsguard  # noqa: E402


def tree(root: Path, count: int) -> list[str]:
    """``count`` files under ``root``, 20 to a folder, 3 to 5 folders deep."""
    files: list[str] = []
    for i in range(count):
        depth = 3 + i % 3
        folder = "/".join(f"d{(i // 20) % (7**k + 3)}" for k in range(1, depth))
        files.append(f"src/{folder}/m{i}.py")
    for folder in sorted({f.rpartition("/")[0] for f in files}):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for rel in files:
        (root / rel).write_bytes(b"x = 1\n")
    return files


def per_note_us(check: Callable[[str], object], notes: list[list[str]]) -> tuple[float, float]:
    """Wall and CPU microseconds a note (the CPU is this thread's: on a loaded machine the wall
    holds the waits for a core)."""
    start, cpu = time.perf_counter(), time.thread_time()
    for note in notes:
        for rel in note:
            check(rel)
    wall, cpu = time.perf_counter() - start, time.thread_time() - cpu
    return wall / len(notes) * 1e6, cpu / len(notes) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--targets", type=int, default=5)
    args = parser.parse_args()
    with scratch("dsh-named-now-") as tmp:
        root = tmp / "ws"
        files = tree(root, args.files)
        index = FileIndex(root.resolve(), files)
        rng = random.Random(7)
        rounds = [[rng.sample(files, args.targets) for _ in range(args.notes)] for _ in range(args.rounds)]
        for notes in rounds:
            for note in notes:
                for rel in note:
                    index.inside(rel)  # the answers cached, as after a session's notes
        print(f"{args.files} files, {args.notes} notes of {args.targets} a round; load {os.getloadavg()[0]:.1f}")
        ways: dict[str, Callable[[str], object]] = {
            "cached inside (floor)": index.inside,
            "os.lstat (baseline)": lambda rel: os.lstat(root / rel),
            "resolves_inside (realpath)": lambda rel: fsguard.resolves_inside(root, rel),
            "inside_now": index.inside_now,
        }
        walls: dict[str, list[float]] = {name: [] for name in ways}
        cpus: dict[str, list[float]] = {name: [] for name in ways}
        for notes in rounds:
            for name, way in ways.items():
                wall, cpu = per_note_us(way, notes)
                walls[name].append(wall)
                cpus[name].append(cpu)
        for name in ways:
            wall, cpu = walls[name], cpus[name]
            print(
                f"{name:>26}: CPU median {statistics.median(cpu):7.1f} µs a note (min {min(cpu):.1f}),"
                f" wall median {statistics.median(wall):7.1f} (min {min(wall):.1f})"
            )
        print(f"load {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
