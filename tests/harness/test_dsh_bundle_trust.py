"""The DSH bundle trusts its child no more (docs/SECURITY.md, "The DSH bundle's child"): a real
child process (tests/harness/misbehaving_sidecar.py) spawned through a ``ctx.subprocess`` built
on Node's child_process, driven by the bundle's own SidecarProcess and suggester plugin under
Node 22, misbehaving one way per variant:

* a stray non-protocol write on its stdout is skipped: the session's calls go on, no restart;
* a stream that stops being LSP framing (bytes without a header end past the header cap, a
  frame announced over the frame cap) is ended and restarted with backoff: later calls are
  answered by the restarted child;
* a flood with no header end is not buffered (the harness's memory stays flat);
* one answer with 2,000 notes, or one over-long note, reaches the model as at most one note
  of at most 4 KiB;
* a child that answers its start and the plugin's readiness polls but never a post-execute is
  restarted for the hang, and its restart budget is spent: restarts end, later calls pass at once;
* a note's summary that is no string (an array of megabytes, an object, a number) is the note's
  first line, and a summary is at most 120 characters, never ending in half a surrogate pair;
* a search's -32001 message of a million characters reaches the web seam (and the model, as
  the tool's error) cut to 4,000 characters, never in half a surrogate pair;
* a legal 24 MB frame arrives whole, assembled in linear work (every byte joined at most
  twice, not once per chunk as ``Buffer.concat`` on every chunk did).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness import harnesses as h

pytestmark = pytest.mark.skipif(h.dsh_missing() is not None, reason=h.dsh_missing() or "")

BUNDLE = Path(__file__).resolve().parents[2] / "harness-adapters" / "dsh"
CHILD = Path(__file__).resolve().parent / "misbehaving_sidecar.py"

# A ctx whose subprocess.spawn runs a real child (pipes, exit, SIGTERM), counts the bytes every
# Buffer.concat produces (the frame assembly's copying), and records the logger's warnings.
HARNESS = """
import { spawn as spawnChild } from 'node:child_process';
const concat = Buffer.concat;
globalThis.concatBytes = 0;
Buffer.concat = (list, total) => {
  const out = concat(list, total);
  globalThis.concatBytes += out.length;
  return out;
};
const warnings = [];
const handlers = {};
function realSpawn(spec) {
  const child = spawnChild(spec.argv[0], spec.argv.slice(1), { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...spec.env } });
  const done = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ exitCode: code, signal }));
  });
  return {
    stdin: child.stdin,
    stdout: child.stdout,
    done,
    terminate: () => child.kill('SIGTERM'),
    waitForExit: async () => { await done.catch(() => undefined); return true; },
  };
}
export const ctx = {
  logger: () => ({ warn: (f, m) => warnings.push(f === '%s' ? m : f), info: () => {} }),
  effect: () => {},
  on: (name, fn) => { handlers[name] = fn; },
  systemPrompt: { section: () => {} },
  tools: { register: () => {} },
  web: { registerSearchProvider: () => {}, searchProviders: new Map() },
  subprocess: { spawn: realSpawn },
};
export { warnings, handlers };
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
"""

SCRIPT = HARNESS + textwrap.dedent(
    """
    import * as suggester from './lib/suggester.js';
    import { sharedSidecar } from './lib/shared.js';
    const [mode, spawns, python, child] = process.argv.slice(2);
    const keep = setInterval(() => {}, 1000); // a harness keeps running: nothing else holds this loop
    suggester.apply(ctx, { sidecar: { command: [python, child, mode, spawns], startWaitMs: 10000 } });
    const postExecute = handlers['tools/post-execute'];
    const calls = [];
    const summaries = [];
    const rssBefore = process.memoryUsage().rss;
    for (let i = 0; i < 6; i++) {
      const out = await postExecute({ callId: `c${i}`, name: 'grep', arguments: { pattern: 'x' } }, { content: [] }, async () => ({}));
      calls.push((out.additionalContexts ?? []).map((m) => m.content[0].text.slice(0, 60) + ` (${m.content[0].text.length})`));
      // a summary as it is when a string of at most 200 characters, else its type and JSON size
      const shown = (s) => (typeof s === 'string' && s.length <= 200 ? s : { type: typeof s, array: Array.isArray(s), json: JSON.stringify(s).length });
      summaries.push((out.additionalContexts ?? []).map((m) => shown(m.source.summary)));
      await sleep(mode.endsWith('-once') && i === 0 ? 1500 : 50); // the broken first child: its output, then the restart
    }
    const process_ = sharedSidecar().process;
    const t0 = performance.now();
    concatBytes = 0;
    const status = await process_.request('dsh/status', { blob: true }, { timeoutMs: 30000 }).catch((e) => ({ error: String(e) }));
    const statusMs = performance.now() - t0;
    console.log(JSON.stringify({
      calls,
      summaries,
      warnings,
      status: status.blob ? { blob: status.blob.length, start: status.start } : status,
      concatBytes,
      rssGrowthMb: Math.round((process.memoryUsage().rss - rssBefore) / 1048576),
      skippedHeaders: process_.client.skippedHeaders,
    }));
    await process_.stop();
    clearInterval(keep);
    process.exit(0);
    """
)


# A child that answers its start and dsh/status but never a post-execute (hung on that path):
# 24 tool calls, with restartResetMs (1 s) shorter than a restart cycle, as a real session's tool
# calls spaced more than 60 s apart make it; the spawns and the calls' outcomes are printed.
HUNG_SCRIPT = HARNESS + textwrap.dedent(
    """
    import * as suggester from './lib/suggester.js';
    import { sharedSidecar } from './lib/shared.js';
    const [mode, spawns, python, child] = process.argv.slice(2);
    const keep = setInterval(() => {}, 1000); // a harness keeps running: nothing else holds this loop
    suggester.apply(ctx, { sidecar: { command: [python, child, mode, spawns], restartResetMs: 1000 } });
    const postExecute = handlers['tools/post-execute'];
    for (let i = 0; i < 24; i++) {
      await postExecute({ callId: `c${i}`, name: 'grep', arguments: { pattern: 'x' } }, { content: [] }, async () => ({}));
      await sleep(20);
    }
    console.log(JSON.stringify({ warnings }));
    await sharedSidecar().process.stop();
    clearInterval(keep);
    process.exit(0);
    """
)


# The search-router plugin's web seam provider searching through a child whose searches fail:
# the error it throws (what DSH's web_search gives the model) printed as its name, length, head
# and last two characters.
ROUTER_SCRIPT = HARNESS + textwrap.dedent(
    """
    import * as router from './lib/router.js';
    import { sharedSidecar } from './lib/shared.js';
    const [mode, spawns, python, child] = process.argv.slice(2);
    let provider;
    ctx.web.registerSearchProvider = (p) => { provider = p; };
    const keep = setInterval(() => {}, 1000); // a harness keeps running: nothing else holds this loop
    router.apply(ctx, { sidecar: { command: [python, child, mode, spawns], startWaitMs: 10000 } });
    const errors = [];
    for (const query of ['first', 'second']) {
      try {
        await provider.search({ query }, undefined);
        errors.push(null);
      } catch (error) {
        const text = String(error.message);
        errors.push({ name: error.name, length: text.length, head: text.slice(0, 70), tail: [...text.slice(-2)].map((c) => c.codePointAt(0)) });
      }
    }
    console.log(JSON.stringify({ errors, warnings }));
    await sharedSidecar().process.stop();
    clearInterval(keep);
    process.exit(0);
    """
)


def _module_dir(name: str) -> Path:
    found = sorted((h.HARNESS_DIR / "dsh" / "node_modules" / ".pnpm").glob(f"@deepseek-ai+{name}@*"))
    if not found:
        pytest.skip(f"@deepseek-ai/{name} is not installed under {h.HARNESS_DIR}")
    return found[-1] / "node_modules" / "@deepseek-ai" / name


def run(tmp_path: Path, mode: str, env: dict[str, str] | None = None, script: str = SCRIPT) -> tuple[dict, list[str]]:
    work = tmp_path / "bundle"
    shutil.copytree(BUNDLE / "lib", work / "lib")
    shutil.copy(BUNDLE / "package.json", work / "package.json")
    scope = work / "node_modules" / "@deepseek-ai"
    scope.mkdir(parents=True)
    for name in ("schemastery", "dsh-tools"):
        (scope / name).symlink_to(_module_dir(name))
    (work / "run.mjs").write_text(script)
    spawns = tmp_path / "spawns.txt"
    proc = subprocess.run(
        [str(h.NODE22_BIN / "node"), "run.mjs", mode, str(spawns), sys.executable, str(CHILD)],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1]), spawns.read_text().split()


def texts_of(report: dict) -> list[list[str]]:
    return report["calls"]


def test_a_well_behaved_child_notes_every_call_on_one_start(tmp_path):
    report, spawns = run(tmp_path, "ok")
    assert len(spawns) == 1
    assert [c[0].split(" (")[0] for c in report["calls"]] == [f"note {i} of start 1" for i in range(1, 7)]
    assert report["skippedHeaders"] == 0


def test_a_stray_write_on_stdout_is_skipped_and_kills_nothing(tmp_path):
    report, spawns = run(tmp_path, "stray")
    assert len(spawns) == 1  # no restart
    assert [c[0].split(" (")[0] for c in report["calls"]] == [f"note {i} of start 1" for i in range(1, 7)]
    assert report["skippedHeaders"] >= 6  # each answer's stray block was skipped
    assert report["status"]["start"] == 1


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("garbage-once", "sidecar framing lost: no header end within 8192 bytes"),
        ("huge-length-once", "sidecar framing lost: a 2147483648-byte frame (at most 67108864)"),
    ],
)
def test_a_child_whose_framing_broke_is_restarted_and_serves_again(tmp_path, mode, why):
    report, spawns = run(tmp_path, mode)
    assert len(spawns) == 2  # ended and restarted (250 ms backoff), once
    calls = [c[0].split(" (")[0] if c else None for c in report["calls"]]
    assert calls[0] == "note 1 of start 1"
    assert calls[-1].endswith("of start 2"), calls  # the restarted child answers the session's later calls
    assert f"the sidecar's output stopped being the protocol ({why}); restarting it" in report["warnings"]
    assert report["status"]["start"] == 2


def test_a_flood_without_a_header_end_is_not_buffered(tmp_path):
    report, spawns = run(tmp_path, "flood-once", {"FLOOD_MB": "64"})
    assert len(spawns) == 2
    assert any("no header end within 8192 bytes" in w for w in report["warnings"]), report["warnings"]
    # 64 MB written at the harness; it kept at most the header cap plus one chunk of it
    assert report["rssGrowthMb"] < 40, report


@pytest.mark.parametrize("mode", ["many-notes", "long-note"])
def test_notes_are_capped_per_call(tmp_path, mode):
    report, _ = run(tmp_path, mode)
    for call in report["calls"]:
        if mode == "many-notes":
            assert [c.split(" (")[0] for c in call] == ["note 0 of 2000 " + "y" * 45], call  # the first, alone
        else:
            assert call == []  # one 10,000-byte note: dropped whole, not cut


def test_a_legal_24_mb_frame_arrives_whole_in_linear_work(tmp_path):
    report, _ = run(tmp_path, "big-frame")
    assert report["status"] == {"blob": 24 * 1024 * 1024, "start": 1}
    # every chunk joined once into the body (24 MB), not the buffer re-joined per 64 KB chunk
    # (that was 384 joins of a growing buffer: ~4.6 GB copied)
    assert report["concatBytes"] < 2 * 25 * 1024 * 1024, report["concatBytes"]


def test_a_summary_that_is_no_string_is_the_notes_first_line_and_every_summary_is_bounded(tmp_path):
    report, spawns = run(tmp_path, "odd-summary")
    assert len(spawns) == 1
    first = [f"note {i} of start 1" for i in range(1, 7)]
    # before: the array became a 1,190,121-character summary, the short array and the object
    # stayed an array and an object, the number failed the note (no note at all)
    assert report["summaries"] == [[first[0]], [first[1]], [first[2]], [first[3]], [first[4]], ["x" * 118 + "…"]]
    assert [c[0].split(" (")[0] for c in report["calls"]] == first


def test_a_child_hung_on_post_execute_spends_its_restart_budget_and_is_left(tmp_path):
    report, spawns = run(tmp_path, "hang-post", script=HUNG_SCRIPT)
    # before: the plugin's own dsh/status polls (answered) reset the hang count after each restart,
    # and a hung child's exit after restartResetMs renewed the budget: restarted every 3 calls for
    # the whole session (10 spawns for 30 calls, each call waiting 0.5-2.3 s)
    assert len(spawns) == 6  # the first start and maxRestarts (5) restarts
    hung = [w for w in report["warnings"] if w.startswith("sidecar did not answer")]
    assert (
        hung
        == ["sidecar did not answer 3 request(s) in a row; restarting it"]
        + ["sidecar did not answer 1 request(s) in a row; restarting it"] * 5
    )
    assert report["warnings"][-1] == "post-execute note skipped: sidecar unavailable"
    assert any("restart budget spent, running without it" in w for w in report["warnings"])


def test_a_childs_huge_search_error_reaches_the_model_bounded(tmp_path):
    report, spawns = run(tmp_path, "huge-search-error", script=ROUTER_SCRIPT)
    assert len(spawns) == 1
    # before: the child's whole message (999,999 UTF-16 units) was the web_search tool's error
    expected = {
        "name": "SearchRouterError",
        "length": 3999,  # 3,998 units kept: the 3,999th is half an emoji, not text
        "head": "search-router: all configured search providers failed:\n- searxng: \x1b]52",
        "tail": [ord("x"), ord("…")],
    }
    assert report["errors"] == [expected, expected]
