"""Cold-start benchmark (the cold start, docs/architecture.md "Start-up"): spawn → ``initialize`` reply of ``dsh-search serve``
against a bare pygls server (the echo: ``LanguageServer`` + ``start_io``, nothing else), in one
run, interleaved (echo, sidecar small, sidecar large, echo, …) over ``--runs`` (>= 5) runs.

Two measures:

1. **spawn → initialize reply**, timed here: ``Popen``, write ``initialize``, read the reply
   (``perf_counter``), then ``shutdown``/``exit``; median and min over the runs.
2. **whole process** (``/usr/bin/time -f %e %M``, or ``hyperfine`` when installed): a session
   file (initialize, initialized, shutdown, exit) as stdin, wall seconds and peak RSS.

Workspaces: the ``shopcart`` fixture (small, 15 files) and a synthetic one of ``--files`` files
(default 100,000, built once under ``--cache``; 0 skips it). The initialize reply comes before
any of the large repository's work (listing, symbols, content index: all in the background), so
for the large repository the bench also measures **spawn → ready** (``graph.ready``, the
suggester on): wall seconds, the process's CPU seconds and RSS then, cold (a fresh
``DSH_HOME``), warm (the same ``DSH_HOME`` again, the tree unchanged) and, with
``--changed-runs``, changed (the same home after ``--changed-files`` code files were rewritten:
what a session after edits costs, the symbol cache written again after ready), this tree and the
baseline alternated (goals: ≤ 10 s CPU cold, ≤ 1 s warm, RSS ≤ 300 MiB; ``--cold-runs``,
``--warm-runs``; ``--ready-only`` skips the rest), the small repository's ready beside it in the
same round (the floor: the interpreter, the imports, the packs). A CPU goal is judged twice: on
the absolute figure and on the figure over the same round's floor (what the large repository
adds); with a baseline, the per-round ratio of this tree's CPU to the baseline's. Each is given
at ``graph.ready`` and again **at quiescence** (the process's CPU still for two seconds after it:
work left after "ready", such as the symbol cache's write, is part of a start all the same, so
moving work past "ready" cannot pass for a saving), with the wall until the listing is verified
(a later session outside git is ready from the last verified walk and walks the tree after ready:
``workspace/listingcache.py``) and the latency of one ``dsh/postExecute`` sent at ready (during
that walk). Every home has its own ``DSH_CACHE_DIR`` (the
workspace indexes live there, not under ``DSH_HOME``: a shared one made a "cold" start read the
last run's caches). Goals: small <= 1.3x the echo,
large <= 0.7 s. ``--baseline-src DIR`` (a source tree of another commit, e.g. ``git archive main |
tar -x -C DIR``) adds that sidecar on the same workspaces to the interleaving, run from DIR
through ``PYTHONPATH`` with this interpreter: before/after in one run.

**Bytecode.** The echo's code (pygls, lsprotocol) runs from the ``.pyc`` files pip compiled
when it installed them, and so does the sidecar's after ``pip install .``. An editable install
(``pip install -e .``) has none until the interpreter writes them on first import, which it never
does under ``PYTHONDONTWRITEBYTECODE=1``: every start then compiles the sidecar's modules from
source (~0.2 G instructions before the reply). The bench says which case the installed sidecar
is in, and when it has no bytecode it also runs a compiled copy of its source tree (``+bytecode``
rows; ``--baseline-src`` likewise), so both cases are measured in the same run.

**Instructions** (``--instructions``, needs valgrind): wall times on a shared 2-core machine
swing by ±30 % from one round to the next, so the small-repo cases are also counted in CPU
instructions up to the reply (valgrind's callgrind, ``PYTHONHASHSEED=0``; a wrapper ends the
process right after it writes its first frame, the reply; ~40 s of one core per case). The count
is what the process computes, not what the kernel does for it (page faults, file reads), so its
ratio is a floor under the wall ratio, and it is the same from run to run to ~0.1 %.
**After a session with changes** (``--after-changed 1,50``): for each count N, each tree runs
one session that changes N code files while it runs (appended to, then notified with
``workspace/didChangeWatchedFiles``, and let the server go quiet: it writes what the change did to
its caches), then the measured session right after, the trees alternated: what the next start
costs once a session edited files (goal: as a warm start; ``N+M``: it also wrote ``M`` new files,
left in the tree); each round says whether the content
index's sync at the start was a full one (its stored listing fingerprint did not match: every row
compared) and what it read. **A git checkout** (``--git``): the
large repository is a git checkout of the same tree (made once beside it: ``git init``, one
commit, every git command run with a fixed identity and no hooks or config of the tree's); git
lists it (no kept listing), and the CPU of the git processes the server ran (its reaped
children's, ``/proc``) is printed beside the process's own. Every round also prints the peak RSS
(``VmHWM``) once quiescent: the walk after ready of a warm start happens after "ready".
Usage: ``python bench/coldstart.py [--runs 7] [--files 100000] [--baseline-src DIR] [--instructions]
[--cold-runs 1] [--warm-runs 3] [--changed-runs 0] [--changed-files 100] [--after-changed 1,50]
[--git] [--ready-only]``.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from suggester import FIXTURE, synthetic_workspace  # noqa: E402

ECHO = textwrap.dedent(
    """
    from pygls.lsp.server import LanguageServer
    server = LanguageServer("echo", "0")
    server.start_io()
    """
)


#: Runs a server (``-m module args`` or ``script args``) and ends it right after its first frame
#: is written on stdout (the ``initialize`` reply): the process's work up to the reply.
UNTIL_REPLY = textwrap.dedent(
    """
    import io, os, runpy, sys
    _write = os.write
    def write(fd, data):
        n = _write(fd, data)
        if fd != 2 and bytes(data[:15]) == b"Content-Length:":
            os._exit(0)
        return n
    os.write = write
    class Stdout(io.RawIOBase):
        def writable(self):
            return True
        def fileno(self):
            return 1
        def write(self, data):
            return write(1, data)
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(Stdout()), write_through=True)
    if sys.argv[1] == "-m":
        sys.argv = [sys.argv[2], *sys.argv[3:]]
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    else:
        sys.argv = sys.argv[1:]
        runpy.run_path(sys.argv[0], run_name="__main__")
    """
)


def instructions_to_reply(cmd: list[str], root: Path | None, env: dict[str, str], wrapper: Path) -> int:
    """CPU instructions the process executes from its start to its ``initialize`` reply
    (valgrind callgrind's ``Collected`` count)."""
    vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", cmd[0], str(wrapper), *cmd[1:]]
    proc = subprocess.run(
        vg, input=frame(initialize(root)), capture_output=True, env=dict(env, PYTHONHASHSEED="0"), timeout=600
    )
    for line in proc.stderr.decode(errors="replace").splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1])
    raise RuntimeError(f"no instruction count from valgrind: {proc.stderr.decode(errors='replace')[-500:]}")


def frame(msg: dict) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize(root: Path | None) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "capabilities": {}, "rootUri": root.as_uri() if root else None},
    }


TAIL = [
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
    {"jsonrpc": "2.0", "method": "exit"},
]


def read_reply(out) -> None:
    length = 0
    while True:
        line = out.readline()
        if not line:
            raise EOFError("server closed stdout before replying")
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    json.loads(out.read(length))


def spawn_to_reply(cmd: list[str], root: Path | None, env: dict[str, str]) -> float:
    """Seconds from ``Popen`` to the ``initialize`` reply read."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(frame(initialize(root)))
    proc.stdin.flush()
    read_reply(proc.stdout)
    seconds = time.perf_counter() - t0
    proc.stdin.write(b"".join(frame(m) for m in TAIL))
    proc.stdin.flush()
    proc.stdin.close()
    proc.wait(30)
    return seconds


def whole_process(cmd: list[str], session: Path, env: dict[str, str]) -> tuple[float, int]:
    """``/usr/bin/time``: wall seconds and peak RSS KiB of one full session."""
    with session.open("rb") as stdin:
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%e %M", *cmd], stdin=stdin, capture_output=True, env=env, timeout=120
        )
    wall, rss = proc.stderr.decode().strip().splitlines()[-1].split()
    return float(wall), int(rss)


def has_bytecode(source: Path) -> bool:
    """Whether ``source`` has a ``.pyc`` Python would use (``__pycache__``): an mtime-checked
    header whose recorded mtime and size are the source's. A ``.pyc`` newer than its source but
    made from another version of it (left by a checkout) is stale, and under
    ``PYTHONDONTWRITEBYTECODE`` Python recompiles that module at every start."""
    cached = Path(importlib.util.cache_from_source(str(source)))
    try:
        header = cached.read_bytes()[:16]
        stat = source.stat()
    except OSError:
        return False
    if len(header) < 16 or header[:4] != importlib.util.MAGIC_NUMBER:
        return False
    if int.from_bytes(header[4:8], "little") != 0:  # hash-based: checked by hash, not stat
        return True
    mtime = int.from_bytes(header[8:12], "little")
    size = int.from_bytes(header[12:16], "little")
    return mtime == int(stat.st_mtime) & 0xFFFFFFFF and size == stat.st_size & 0xFFFFFFFF


def installed_bytecode() -> bool:
    """Whether every module of the installed sidecar has bytecode Python would use (a start
    that recompiles even a few of them measures the compiler, not the sidecar)."""
    import dsh_sidecar

    package = Path(dsh_sidecar.__file__).parent
    return all(has_bytecode(m) for m in package.rglob("*.py"))


def compiled_copy(src: Path, dest: Path) -> Path:
    """``src``'s ``server``, ``protocol`` and ``packs`` copied to ``dest`` and compiled, as
    ``pip install .`` compiles them (``compileall``; written even under
    ``PYTHONDONTWRITEBYTECODE``)."""
    for d in ("server", "protocol", "packs"):
        shutil.copytree(src / d, dest / d, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        if not compileall.compile_dir(str(dest / d), quiet=1):
            raise SystemExit(f"could not compile {dest / d}")
    return dest


def source_path(src: Path) -> str:
    return os.pathsep.join(str(src / d) for d in ("server", "protocol", "packs"))


def touch_files(root: Path, count: int, tag: str) -> list[Path]:
    """Rewrite ``count`` of the large tree's code files (a comment line appended: a new size and
    mtime), the ones a session's symbol pass reads first (path order among equal old mtimes)."""
    changed = sorted(root.glob("vendor/area000/pkg0*/mod*.py"))[:count]
    for path in changed:
        with path.open("a") as fh:
            fh.write(f"# changed {tag}\n")
    return changed


def git_checkout(tree: Path, dest: Path) -> float:
    """``dest``: a git checkout of a copy of ``tree`` with every file committed once (made when
    missing); seconds spent. Git runs with a fixed identity and date, no system or global
    configuration and no hooks (the copy is ours, but nothing of a tree's own is run)."""
    if (dest / ".git").is_dir():
        return 0.0
    t0 = time.perf_counter()
    shutil.copytree(tree, dest, symlinks=True)
    env = dict(
        os.environ,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.invalid",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.invalid",
        GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
        GIT_COMMITTER_DATE="2026-01-01T00:00:00Z",
    )
    git = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-C", str(dest)]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "synthetic tree"]):
        subprocess.run([*git, *args], env=env, check=True, timeout=1800)
    return time.perf_counter() - t0


def proc_extra(pid: int) -> dict[str, float]:
    """The peak RSS (``VmHWM``, MiB) of process ``pid`` and the CPU seconds of its reaped
    children (the git commands it ran)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    hwm = next(
        (
            int(line.split()[1]) / 1024
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if line.startswith("VmHWM:")
        ),
        float("nan"),
    )
    return {"hwm": hwm, "child_cpu_s": (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")}


def changing_session(name: str, src: Path | None, home: Path, root: Path, spec: str, tag: str) -> None:
    """A session of ``name`` that changes code files of ``root`` while it runs (``spec``: ``N``
    files appended to, or ``N+M``: and ``M`` new files written): to ready and quiet, then the
    files changed and notified (``didChangeWatchedFiles``), and quiet again before it ends (the
    server writes what the change did to its caches)."""
    from file_churn import quiet_figures, ready_figures

    count, _, adds = spec.partition("+")
    server, _ = ready_figures(name, src, home, root, quiet=True)
    changed = [(p, 2) for p in touch_files(root, int(count), tag)]
    for i in range(int(adds or 0)):  # a new file a session, left in the tree (its name: the round's)
        new = root / "vendor" / "area000" / f"added_{tag.replace(' ', '_')}_{i}.py"
        new.write_text(f"def added_{i}():\n    return {i}\n")
        changed.append((new, 1))
    server.client.send(
        "workspace/didChangeWatchedFiles",
        {"changes": [{"uri": p.as_uri(), "type": kind} for p, kind in changed]},
        notify=True,
    )
    time.sleep(1.5)  # the batch, and the write of the caches a second after it
    quiet_figures(server.pid, time.perf_counter())
    server.close()


def tables_files(home: Path) -> set[tuple[str, int]]:
    """The listing tables' files under ``home``'s cache folder and their inodes: whether a session
    wrote them (made the tables again: a write is a new file renamed over the old one) whatever
    its status says of its last preparation. Not their mtimes: a server marks its workspace's
    cache files used by setting those (``cachedir.mark_used``)."""
    return {(str(p), p.stat().st_ino) for p in (home / "cache").rglob("*.tables.bin")}


def kept_figures(server: Any) -> dict:
    """What the session did with its kept caches, read once it is quiescent (after the figures:
    the symbol cache's write comes after ready): the listing tables' cache as the last preparation
    found it (``hit``, ``journal``, ``miss``: a later preparation of the same session finds the
    file a miss wrote, so see :func:`tables_files`) and whether the symbol cache was written
    again."""
    status = server.client.call("dsh/status", {})["suggester"]
    return {"tables": status.get("tablesCache"), "saved": status["graph"].get("cacheSaved")}


def read_tree(root: Path) -> tuple[int, float]:
    """Read every regular file under ``root`` once (the page cache warmed, as the trees' later
    rounds find it): the first start of a run otherwise pays the disk reads for all the others
    (one run: the first cold start 12.9 s of CPU, the same tree's second 7.2 s). Files read, seconds."""
    t0, n = time.perf_counter(), 0
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as f:
                    while f.read(1 << 20):
                        pass
                n += 1
    return n, time.perf_counter() - t0


def ready_rounds(
    trees: list[tuple[str, Path | None]],
    repos: dict[str, Path],
    tmp: Path,
    cold_runs: int,
    warm_runs: int,
    changed_runs: int = 0,
    changed_files: int = 100,
    after_changed: tuple[str, ...] = (),
) -> None:
    """Spawn -> ``graph.ready`` (the suggester on) of each tree on each repository: ``cold_runs``
    fresh starts (a new ``DSH_HOME`` and cache directory), then ``warm_runs`` later sessions on
    the first cold run's home (the tree unchanged), then ``changed_runs`` later sessions after
    ``changed_files`` code files of the large tree were rewritten (before the round: every tree
    sees the same change since its last session), the trees alternated in every round. The small
    repository's figures are the floor (interpreter, imports, packs), taken in the same round:
    the large one's share is its CPU minus the floor's of that round. Process CPU seconds
    (``/proc``), wall and RSS at ready; medians at the end, the goal judged on the absolute CPU
    and on the CPU over the floor, and with a baseline, this tree's CPU over the baseline's of the
    same round."""
    from file_churn import ready_figures

    load = lambda: Path("/proc/loadavg").read_text().split()[0]  # noqa: E731
    print(
        f"spawn -> graph.ready, suggester on ({', '.join(f'{k}: {v.name}' for k, v in repos.items())}); load {load()}"
    )
    for repo, root in repos.items():  # the first round must not pay the page cache for every other one
        files, secs = read_tree(root)
        print(f"(page cache: read the {repo} repository's {files} files in {secs:.1f} s before the rounds)")
    figs: dict[tuple[str, str, str], list[dict]] = {}
    rounds = (
        [("cold", r) for r in range(cold_runs)]
        + [("warm", r) for r in range(warm_runs)]
        + [("changed", r) for r in range(changed_runs)]
        + [(f"after {k}", r) for k in after_changed for r in range(max(1, warm_runs))]
    )
    for n, (temp, r) in enumerate(rounds):
        if temp == "changed":
            touch_files(repos["large"], changed_files, f"round {r}")
        for name, src in trees if n % 2 == 0 else trees[::-1]:
            for repo, root in repos.items():
                home = tmp / f"ready-{name}-{repo}-{r if temp == 'cold' else 0}"
                if temp.startswith("after ") and repo == "large":
                    changing_session(name, src, home, root, temp.split()[1], f"{name} {temp} round {r}")
                tables_before = tables_files(home)
                server, fig = ready_figures(name, src, home, root, quiet=True, first_call=True)
                fig.update(proc_extra(server.pid))
                fig.update(kept_figures(server), tables_written=tables_files(home) != tables_before)
                server.close()
                figs.setdefault((name, repo, temp), []).append(fig)
                print(
                    f"{name:<9} {repo:<5} {temp} {r + 1}: wall {fig['wall_s']:.1f} s, CPU {fig['cpu_s']:.2f} s "
                    f"(quiescent: {fig['quiet_cpu_s']:.2f} s at {fig['quiet_wall_s']:.1f} s; verified at "
                    f"{fig['verified_wall_s']:.1f} s; first postExecute at ready {fig['first_call_ms']:.0f} ms), "
                    f"RSS {fig['rss']:.0f} MiB, peak {fig['hwm']:.0f} MiB; git children CPU {fig['child_cpu_s']:.2f} s "
                    f"(symbols {fig['symbols']}, cacheHits {fig['cacheHits']}, cacheSaved {fig['saved']}, "
                    f"tables file written {fig['tables_written']}, last tablesCache {fig['tables']}); content at start: "
                    f"{'FULL sync' if fig['content_full'] else 'fingerprint'} (read {fig['content_read']}, "
                    f"unchanged {fig['content_unchanged']}, sync CPU {fig['content_cpu_s']} s); load {load()}",
                    flush=True,
                )
    med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
    temps = [("cold", 10.0), ("warm", 1.0), ("changed", None)] + [(f"after {k}", 1.0) for k in after_changed]
    for name, _src in trees:
        for temp, goal in temps:
            large, small = figs.get((name, "large", temp)), figs.get((name, "small", temp))
            if not large or not small:
                continue
            cpu, floor = med(large, "cpu_s"), med(small, "cpu_s")
            over = statistics.median(a["cpu_s"] - b["cpu_s"] for a, b in zip(large, small, strict=True))
            quiet = med(large, "quiet_cpu_s")
            quiet_over = statistics.median(
                a["quiet_cpu_s"] - b["quiet_cpu_s"] for a, b in zip(large, small, strict=True)
            )
            verdict = (
                f"goal CPU <= {goal:g} s: absolute {'met' if cpu <= goal else 'NOT met'}, "
                f"over the floor {'met' if over <= goal else 'NOT met'}; to quiescence: absolute "
                f"{'met' if quiet <= goal else 'NOT met'}, over the floor {'met' if quiet_over <= goal else 'NOT met'}"
                if goal is not None
                else "(no goal: after a change)"
            )
            print(
                f"{name:<9} {temp} (median of {len(large)}): large CPU {cpu:.2f} s (to quiescence {quiet:.2f} s), "
                f"wall {med(large, 'wall_s'):.1f} s (verified {med(large, 'verified_wall_s'):.1f} s; first postExecute "
                f"{med(large, 'first_call_ms'):.0f} ms), RSS {med(large, 'rss'):.0f} MiB; small (the floor) CPU "
                f"{floor:.2f} s; over the floor, per round: {over:.2f} s (to quiescence {quiet_over:.2f} s); "
                f"{verdict}; RSS <= 300 MiB: {'met' if med(large, 'rss') <= 300 else 'NOT met'}; peak RSS "
                f"{med(large, 'hwm'):.0f} MiB; git children CPU {med(large, 'child_cpu_s'):.2f} s; content: full "
                f"sync at start in {sum(x['content_full'] for x in large)} of {len(large)} rounds, files read at "
                f"start {sorted(x['content_read'] for x in large)}; tables file written in "
                f"{sum(x['tables_written'] for x in large)} of {len(large)}, last tablesCache {[x['tables'] for x in large]}, "
                f"cacheSaved {[x['saved'] for x in large]}"
            )
    if len(trees) > 1:
        (name, _), (base, _) = trees[0], trees[1]
        for temp, _goal in temps:
            mine, theirs = figs.get((name, "large", temp)), figs.get((base, "large", temp))
            if mine and theirs:
                for key, what in (("cpu_s", "CPU to ready"), ("quiet_cpu_s", "CPU to quiescence")):
                    ratios = [a[key] / b[key] for a, b in zip(mine, theirs, strict=True)]
                    print(
                        f"{name} / {base}, large, {temp}: {what} x{statistics.median(ratios):.2f} per round "
                        f"(x{min(ratios):.2f}-x{max(ratios):.2f})"
                    )
    print(f"load {load()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "dsh-coldstart-ws")
    ap.add_argument("--baseline-src", type=Path, help="another commit's source tree, measured alongside")
    ap.add_argument("--instructions", action="store_true", help="also count instructions to the reply (valgrind)")
    ap.add_argument("--cold-runs", type=int, default=1, help="fresh starts to ready per tree and repository")
    ap.add_argument("--warm-runs", type=int, default=3, help="later sessions to ready per tree and repository")
    ap.add_argument("--changed-runs", type=int, default=0, help="later sessions after code files changed")
    ap.add_argument("--changed-files", type=int, default=100, help="code files rewritten before each")
    ap.add_argument(
        "--after-changed", default="", help="files a session changes before a measured one: N, or N+M (M new files)"
    )
    ap.add_argument("--git", action="store_true", help="the large repository is a git checkout of the tree")
    ap.add_argument("--ready-only", action="store_true", help="only the spawn -> ready rounds")
    args = ap.parse_args()
    runs = max(5, args.runs)
    tmp = Path(tempfile.mkdtemp(prefix="dsh-coldstart-"))
    (tmp / "echo.py").write_text(ECHO)
    env = dict(os.environ, DSH_HOME=str(tmp / "home"))
    small = tmp / "pyproj"
    shutil.copytree(FIXTURE, small)
    cases = [("pygls echo (bare LanguageServer)", [sys.executable, str(tmp / "echo.py")], small)]
    sidecar = [sys.executable, "-m", "dsh_sidecar", "serve"]
    cases.append((f"sidecar, small repo ({sum(1 for p in small.rglob('*') if p.is_file())} files)", sidecar, small))
    big = args.cache / f"synthetic-{args.files}"
    if args.files:
        if not big.exists():
            args.cache.mkdir(parents=True, exist_ok=True)
            secs = synthetic_workspace(big, args.files)
            print(f"(built a {args.files}-file workspace in {secs:.1f}s at {big})")
        if args.git:
            checkout = args.cache / f"git-{args.files}"
            secs = git_checkout(big, checkout)
            if secs:
                print(f"(made a git checkout of it in {secs:.1f}s at {checkout})")
            big = checkout
        cases.append((f"sidecar, large repo ({args.files} files)", sidecar, big))
    trees: list[tuple[str, Path | None]] = [("sidecar", None)]
    if args.baseline_src:
        trees.append(("baseline", args.baseline_src.resolve()))

    def rounds() -> None:
        ready_rounds(
            trees,
            {"small": small, "large": big},
            tmp,
            args.cold_runs,
            args.warm_runs,
            args.changed_runs,
            args.changed_files,
            tuple(k.strip() for k in args.after_changed.split(",") if k.strip()),
        )

    if args.ready_only:
        rounds()
        shutil.rmtree(tmp, ignore_errors=True)
        return
    envs = {label: env for label, _, _ in cases}
    sidecars = list(cases[1:])
    bytecode = installed_bytecode()
    compiled = not bytecode
    if compiled:  # the same tree as pip install . would leave it
        env_pyc = dict(env, PYTHONPATH=source_path(compiled_copy(HERE.parent, tmp / "src-bytecode")))
        for label, cmd, root in sidecars:
            cases.append((f"{label} +bytecode", cmd, root))
            envs[cases[-1][0]] = env_pyc
    if args.baseline_src:
        src = args.baseline_src.resolve()
        base_envs = [("", dict(env, PYTHONPATH=source_path(src)))]
        if compiled:
            base_envs.append(
                (" +bytecode", dict(env, PYTHONPATH=source_path(compiled_copy(src, tmp / "base-bytecode"))))
            )
        for suffix, base_env in base_envs:
            for label, cmd, root in sidecars:
                cases.append((f"baseline {label.removeprefix('sidecar, ')}{suffix}", cmd, root))
                envs[cases[-1][0]] = base_env
    for i, (label, _, _) in enumerate(cases):  # one cache directory per case (the workspace indexes:
        # never this machine's own, never shared by this tree and the baseline, whose formats differ)
        envs[label] = dict(envs[label], DSH_CACHE_DIR=str(tmp / f"cache-{i}"))
    sessions = {}
    for label, _cmd, root in cases:
        path = tmp / f"session-{len(sessions)}.bin"
        path.write_bytes(b"".join(frame(m) for m in [initialize(root), *TAIL]))
        sessions[label] = path
    timed: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    whole: dict[str, list[tuple[float, int]]] = {label: [] for label, _, _ in cases}
    for label, cmd, root in cases:  # one warm-up each: the page cache, bytecode
        spawn_to_reply(cmd, root, envs[label])
    for _ in range(runs):  # interleaved: the same machine noise for every case
        for label, cmd, root in cases:
            timed[label].append(spawn_to_reply(cmd, root, envs[label]))
            whole[label].append(whole_process(cmd, sessions[label], envs[label]))
    base = statistics.median(timed[cases[0][0]])
    base_whole = statistics.median(w for w, _ in whole[cases[0][0]])
    print(f"cold start: spawn -> initialize reply, {runs} interleaved runs each (python {sys.version.split()[0]})")
    print(
        "installed sidecar: "
        + (
            "bytecode present"
            if bytecode
            else "no bytecode (editable install"
            + (", PYTHONDONTWRITEBYTECODE set" if sys.flags.dont_write_bytecode else "")
            + "); '+bytecode' rows: a compiled copy of its tree, as pip install . leaves it"
        )
    )
    print(
        f"{'server':<52} {'median s':>9} {'min s':>7} {'max s':>7} {'x echo':>7}   "
        f"{'/usr/bin/time wall s':>20} {'x echo':>7} {'peak RSS MiB':>13}"
    )
    for label, _cmd, _root in cases:
        med = statistics.median(timed[label])
        wall = statistics.median(w for w, _ in whole[label])
        rss = statistics.median(r for _, r in whole[label]) / 1024
        print(
            f"{label:<52} {med:>9.3f} {min(timed[label]):>7.3f} {max(timed[label]):>7.3f} {med / base:>7.2f}   "
            f"{wall:>20.2f} {wall / base_whole:>7.2f} {rss:>13.1f}"
        )
    echo_runs = timed[cases[0][0]]
    for label, _cmd, _root in cases[1:]:
        med = statistics.median(timed[label])
        ratios = [t / e for t, e in zip(timed[label], echo_runs, strict=True)]
        goal = f"x{med / base:.2f} of the echo, goal <= 1.3x" if "small" in label else f"{med:.3f} s, goal <= 0.7 s"
        met = med / base <= 1.3 if "small" in label else med <= 0.7
        print(
            f"{label:<52} {goal}: {'met' if met else 'NOT met'}   per-run ratio to the echo of the same round: "
            f"median x{statistics.median(ratios):.2f}, spread x{min(ratios):.2f}-x{max(ratios):.2f}"
        )
    if args.instructions:
        if shutil.which("valgrind") is None:
            print("instructions: valgrind is not installed (apt-get install valgrind); skipped")
        else:
            wrapper = tmp / "until_reply.py"
            wrapper.write_text(UNTIL_REPLY)
            counted = [(label, cmd, root) for label, cmd, root in cases if label == cases[0][0] or "small" in label]
            counts = {label: instructions_to_reply(cmd, root, envs[label], wrapper) for label, cmd, root in counted}
            echo = counts[cases[0][0]]
            print("instructions from spawn to the initialize reply (valgrind callgrind, PYTHONHASHSEED=0):")
            for label, count in counts.items():
                print(f"{label:<52} {count / 1e9:>7.3f} G   x{count / echo:.3f} of the echo")
    if args.files:
        rounds()
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
