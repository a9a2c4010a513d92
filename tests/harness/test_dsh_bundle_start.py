"""The DSH bundle's start handling (``SidecarProcess`` in harness-adapters/dsh/lib/index.js), run
by Node 22 with the bundle's own dependencies from the installed DeepSeek Harness and a ``ctx``
whose ``subprocess.spawn`` throws, as DSH's local subprocess service does for an argv it cannot
run (an empty program name) or an aborted spawn: no child exists, so nothing will ever exit and
restart it. The web seam's search must then go to the harness's own provider at once (as before
the start handling ended abandoned starts), not wait for a restart that never comes. And with fake
children that die, serve a while, or stay: a sidecar that served ``restartResetMs`` before it
exited gets a new restart budget, one that did not finds ``maxRestarts`` spent; a burst of
``tools/change`` events is one ``dsh/toolsChanged``."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from harness import harnesses as h

pytestmark = pytest.mark.skipif(h.dsh_missing() is not None, reason=h.dsh_missing() or "")

BUNDLE = Path(__file__).resolve().parents[2] / "harness-adapters" / "dsh"

SCRIPT = textwrap.dedent(
    """
    import { apply } from './lib/router.js';
    const providers = new Map();
    const warnings = [];
    const ctx = {
      logger: () => ({ warn: (f, m) => warnings.push(f === '%s' ? m : f) }),
      effect: () => {},
      on: () => {},
      systemPrompt: { section: () => {} },
      tools: { register: () => {} },
      web: { registerSearchProvider: (p) => providers.set(p.id, p), searchProviders: providers },
      subprocess: {
        spawn: () => {
          throw new Error('invalid argv: expected a non-empty program name at argv[0]');
        },
      },
    };
    providers.set('other', {
      id: 'other',
      available: () => true,
      search: async () => ({ sources: [{ url: 'https://other.example/' }], truncated: false }),
    });
    apply(ctx, {});
    const bundle = [...providers.values()].find((p) => p.id !== 'other');
    await new Promise((r) => setTimeout(r, 50)); // the failed start has settled
    const result = await Promise.race([
      bundle.search({ query: 'q' }, undefined),
      new Promise((r) => setTimeout(() => r('no answer within 5 s'), 5000)),
    ]);
    console.log(JSON.stringify({ result, warnings }));
    process.exit(0);
    """
)


def _module_dir(name: str) -> Path:
    """``@deepseek-ai/<name>`` as pnpm installed it for the harness."""
    found = sorted((h.HARNESS_DIR / "dsh" / "node_modules" / ".pnpm").glob(f"@deepseek-ai+{name}@*"))
    if not found:
        pytest.skip(f"@deepseek-ai/{name} is not installed under {h.HARNESS_DIR}")
    return found[-1] / "node_modules" / "@deepseek-ai" / name


def run_bundle(tmp_path: Path, script: str, *args: str) -> dict:
    """Run ``script`` (an ES module importing ``./lib/index.js``) beside a copy of the bundle
    under Node 22; the JSON object it prints."""
    work = tmp_path / "bundle"
    shutil.copytree(BUNDLE / "lib", work / "lib")
    shutil.copy(BUNDLE / "package.json", work / "package.json")
    scope = work / "node_modules" / "@deepseek-ai"
    scope.mkdir(parents=True)
    for name in ("schemastery", "dsh-tools"):  # the harness's own: lib/host.js finds them from run.mjs
        (scope / name).symlink_to(_module_dir(name))
    (work / "run.mjs").write_text(script)
    proc = subprocess.run(
        [str(h.NODE22_BIN / "node"), "run.mjs", *args], cwd=work, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_start_whose_spawn_throws_leaves_web_search_to_the_harness(tmp_path: Path):
    assert run_bundle(tmp_path, SCRIPT) == {
        "result": {"sources": [{"url": "https://other.example/"}], "truncated": False},
        "warnings": [
            "sidecar did not start; the harness runs as without it:"
            " invalid argv: expected a non-empty program name at argv[0]",
            "sidecar unavailable; this web search goes to the harness's own provider",
        ],
    }


# A fake `dsh-search serve` and a fake DSH `ctx` for the scripts below: `fakeChild(hooks)` is a
# spawn handle whose stdin is read as LSP frames (`hooks.initialize` answers an initialize,
# `hooks.notified(method)` sees each notification) and whose `end(outcome)` closes its stdout and
# settles `done`; `fakeCtx(spawn)` records warnings and the `ctx.on` handlers.
FAKES = """
import { PassThrough } from 'node:stream';
import * as router from './lib/router.js';
import * as suggester from './lib/suggester.js';
function fakeChild(hooks = {}) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let exit;
  let ended = false;
  const done = new Promise((r) => { exit = r; });
  const end = (outcome) => {
    if (ended) return;
    ended = true;
    stdout.end();
    exit(outcome);
  };
  let buf = Buffer.alloc(0);
  stdin.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const head = buf.indexOf('\\r\\n\\r\\n');
      if (head < 0) return;
      const len = Number(/Content-Length: (\\d+)/i.exec(buf.subarray(0, head).toString('ascii'))[1]);
      if (buf.length < head + 4 + len) return;
      const msg = JSON.parse(buf.subarray(head + 4, head + 4 + len).toString('utf8'));
      buf = buf.subarray(head + 4 + len);
      if (msg.id === undefined) hooks.notified?.(msg.method, msg.params);
      else if (msg.method === 'initialize') {
        const how = hooks.initialize?.();
        const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { capabilities: {} } }));
        const answer = () => ended || stdout.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\\r\\n\\r\\n`), body]));
        if (typeof how === 'number') setTimeout(answer, how); // a start that takes `how` ms
        else if (how !== false) answer();
      }
    }
  });
  return { stdin, stdout, done, end, terminate: () => end({ signal: 'SIGTERM' }) };
}
const warnings = [];
const handlers = {};
function fakeCtx(spawn) {
  return {
    logger: () => ({ warn: (f, m) => warnings.push(f === '%s' ? m : f) }),
    effect: () => {},
    on: (name, fn) => { handlers[name] = fn; },
    systemPrompt: { section: () => {} },
    tools: { register: () => {} },
    web: { registerSearchProvider: () => {}, searchProviders: new Map() },
    subprocess: { spawn },
  };
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
"""

# Fake children, one life per spawn: the first dies at once, the second answers initialize and
# exits 200 ms later, the third stays.
RESTARTS = FAKES + textwrap.dedent(
    """
    const spawns = [];
    const lives = ['dies', 'serves', 'stays'];
    const spawn = () => {
      const life = lives[spawns.length] ?? 'stays';
      spawns.push(life);
      const child = fakeChild({
        initialize: () => {
          if (life === 'dies') return false;
          if (life === 'serves') setTimeout(() => child.end({ code: 3 }), 200);
        },
      });
      if (life === 'dies') setTimeout(() => child.end({ code: 3 }), 5);
      return child;
    };
    router.apply(fakeCtx(spawn), { sidecar: { maxRestarts: 1, restartResetMs: Number(process.argv[2]) } });
    await sleep(2500); // two restarts of 250 ms each, with room to spare
    console.log(JSON.stringify({ spawns, exits: warnings.filter((w) => w.startsWith('sidecar exited')) }));
    process.exit(0);
    """
)


@pytest.mark.parametrize(
    ("reset_ms", "spawns", "last"),
    [
        # served 200 ms >= restartResetMs: not a crash loop, so the budget of 1 starts over
        (100, ["dies", "serves", "stays"], "sidecar exited; restarting in 250 ms"),
        # served less than restartResetMs: the second exit finds the budget of 1 spent
        (60000, ["dies", "serves"], 'sidecar exited ({"code":3}); restart budget spent, running without it'),
    ],
)
def test_a_sidecar_that_served_long_enough_gets_a_new_restart_budget(tmp_path, reset_ms, spawns, last):
    report = run_bundle(tmp_path, RESTARTS, str(reset_ms))
    assert report["spawns"] == spawns
    assert report["exits"] == ["sidecar exited; restarting in 250 ms", last]


# Children that each take 1.5 s to answer initialize, on a bundle whose startTimeoutMs is 1 s: the
# first start times out, the restart's bound is widened to 2 s and the second child starts.
SLOW_STARTS = FAKES + textwrap.dedent(
    """
    let spawns = 0;
    let started;
    const initialized = new Promise((r) => { started = r; });
    const spawn = () => {
      spawns += 1;
      return fakeChild({ initialize: () => 1500, notified: (method) => method === 'initialized' && started(true) });
    };
    router.apply(fakeCtx(spawn), { sidecar: { startTimeoutMs: 1000, maxRestarts: Number(process.argv[2]) } });
    const ok = await Promise.race([initialized, sleep(30000).then(() => false)]);
    console.log(JSON.stringify({ ok, spawns, warnings }));
    process.exit(0);
    """
)


def test_a_start_slower_than_its_bound_widens_the_next_ones_bound(tmp_path):
    """A machine slower than ``startTimeoutMs``: the start that timed out is ended and the next
    may take twice as long (said in the warning), so the restart starts; before, every restart
    had the same bound and timed out the same way until ``maxRestarts`` was spent."""
    report = run_bundle(tmp_path, SLOW_STARTS, "1")
    assert report == {
        "ok": True,
        "spawns": 2,
        "warnings": [
            "sidecar did not start; the harness runs as without it (the next start may take 2000 ms: "
            "startTimeoutMs widened): initialize: no answer within 1000 ms",
            "sidecar exited; restarting in 250 ms",
        ],
    }


def test_the_widened_bound_stops_at_its_cap(tmp_path):
    """Doubling stops at ``START_TIMEOUT_CAP_MS`` (120 s), or at ``startTimeoutMs`` when that
    is longer: a bound is never widened past it."""
    script = (
        "import { SidecarProcess, START_TIMEOUT_CAP_MS } from './lib/sidecar.js';\n"
        "const out = [];\n"
        "for (const [knob, bound] of [[20000, 20000], [20000, 80000], [20000, 120000], [200000, 200000]]) {\n"
        "  const p = new SidecarProcess(() => ({}), () => ({ startTimeoutMs: knob }), () => ({}));\n"
        "  p.widenStart(bound);\n"
        "  out.push([p.startBound(), p.widening]);\n"
        "}\n"
        "console.log(JSON.stringify({ cap: START_TIMEOUT_CAP_MS, out }));\n"
    )
    assert run_bundle(tmp_path, script) == {
        "cap": 120000,
        "out": [
            [40000, " (the next start may take 40000 ms: startTimeoutMs widened)"],
            [120000, " (the next start may take 120000 ms: startTimeoutMs widened)"],
            [20000, ""],
            [200000, ""],
        ],
    }


# A command that cannot be run: DSH's local subprocess service returns a handle whose `done`
# rejects with the child's `error` event (ENOENT: not on PATH), its stdout ended; or a wrapper
# (`env dsh-search`) that exits 127 before any answer.
CANNOT_RUN = FAKES + textwrap.dedent(
    """
    let spawns = 0;
    const spawn = () => {
      spawns += 1;
      const child = fakeChild({ initialize: () => false });
      const error = Object.assign(new Error('spawn dsh-search ENOENT'), { code: process.argv[2] });
      const how = process.argv[2];
      const done = new Promise((resolve, reject) => setTimeout(() => {
        child.stdout.end();
        if (how === '127') resolve({ exitCode: 127, signal: null });
        else reject(error);
      }, 0));
      return { ...child, done };
    };
    const providers = new Map();
    const ctx = fakeCtx(spawn);
    ctx.web = { registerSearchProvider: (p) => providers.set(p.id, p), searchProviders: providers };
    providers.set('other', { id: 'other', available: () => true, search: async () => ({ sources: [], truncated: false }) });
    router.apply(ctx, {});
    await sleep(100);
    const bundle = [...providers.values()].find((p) => p.id !== 'other');
    const t0 = Date.now();
    await bundle.search({ query: 'q' }, undefined);
    const searchMs = Date.now() - t0;
    await sleep(1200); // a restart would have come after 250 ms
    console.log(JSON.stringify({ spawns, quick: searchMs < 1000, warnings }));
    process.exit(0);
    """
)


@pytest.mark.parametrize(("code", "reason"), [("ENOENT", "ENOENT"), ("EACCES", "EACCES"), ("127", "exit code 127")])
def test_a_command_that_cannot_be_run_is_not_restarted_and_costs_no_wait(tmp_path, code, reason):
    report = run_bundle(tmp_path, CANNOT_RUN, code)
    assert report == {
        "spawns": 1,
        "quick": True,
        "warnings": [
            f'sidecar command "dsh-search" cannot be run ({reason}); the harness runs as without it',
            "sidecar did not start; the harness runs as without it: sidecar stdout closed",
            "sidecar unavailable; this web search goes to the harness's own provider",
        ],
    }


# One fake child that answers initialize and records every notification it is sent; a burst of
# ten `tools/change` events, then a single one after a quiet time.
TOOLS = FAKES + textwrap.dedent(
    """
    const seen = [];
    suggester.apply(fakeCtx(() => fakeChild({ notified: (method) => seen.push(method) })), {});
    await sleep(200); // started
    for (let i = 0; i < 10; i++) handlers['tools/change']();
    await sleep(500);
    handlers['tools/change']();
    await sleep(500);
    console.log(JSON.stringify({ seen }));
    process.exit(0);
    """
)


def test_a_burst_of_tool_changes_is_one_tools_changed(tmp_path):
    """Ten ``tools/change`` events at once reach the sidecar as one ``dsh/toolsChanged`` (each
    re-reads its packs), sent after 100 ms of quiet; a later change is sent on its own."""
    assert run_bundle(tmp_path, TOOLS) == {"seen": ["initialized", "dsh/toolsChanged", "dsh/toolsChanged"]}


# The suggester's row hot-edited (cordis disposes the plugin and applies it again with the new
# config): the one sidecar keeps running and gets the new block as one live reconfiguration.
HOT_EDIT = FAKES + textwrap.dedent(
    """
    let spawns = 0;
    const seen = [];
    const spawn = () => { spawns += 1; return fakeChild({ notified: (method, params) => seen.push([method, params ?? null]) }); };
    const cleanups = [];
    const ctx = fakeCtx(spawn);
    ctx.effect = (fn) => { cleanups.push(fn()); };
    suggester.apply(ctx, { cooldownCalls: 3 });
    await sleep(300); // started
    for (const cleanup of cleanups.splice(0)) cleanup(); // the row changed: the plugin disposed...
    suggester.apply(ctx, { cooldownCalls: 7, sectionMode: 'sticky' }); // ...and applied again
    await sleep(1200); // past the sidecar's stop grace: it was not stopped
    console.log(JSON.stringify({ spawns, seen }));
    process.exit(0);
    """
)


def test_a_hot_edited_row_is_a_live_reconfiguration_not_a_restart(tmp_path):
    report = run_bundle(tmp_path, HOT_EDIT)
    assert report["spawns"] == 1
    assert report["seen"] == [
        ["initialized", {}],
        [
            "workspace/didChangeConfiguration",
            {
                "settings": {
                    "suggester": {"enabled": True, "builtinPacks": False, "cooldownCalls": 7, "sectionMode": "sticky"}
                }
            },
        ],
    ]


# Children that refuse every initialize as the sidecar refuses a config block, each naming a
# block of its own choosing (`aa`, `ab`, ...: none the bundle sent), for 3 s.
REFUSALS = FAKES + textwrap.dedent(
    """
    let spawns = 0;
    const spawn = () => {
      const name = 'a' + String.fromCharCode(97 + (spawns % 26)).repeat(1 + Math.floor(spawns / 26));
      spawns += 1;
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      let exit;
      const done = new Promise((r) => { exit = r; });
      stdin.on('data', () => {
        const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, error: {
          code: -32602, message: `invalid initializationOptions: ${name}: unknown key` } }));
        stdout.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\\r\\n\\r\\n`), body]));
      });
      return { stdin, stdout, done, terminate: () => { stdout.end(); exit({ signal: 'SIGTERM' }); } };
    };
    router.apply(fakeCtx(spawn), { sidecar: { maxRestarts: 2 } });
    await sleep(3000);
    console.log(JSON.stringify({ spawns, warnings: warnings.slice(0, 3), count: warnings.length }));
    process.exit(0);
    """
)


def test_a_refusal_naming_a_block_never_sent_is_a_refusal_not_a_restart(tmp_path):
    """A child answering ``initialize`` with ``invalid initializationOptions: <name>:`` for a
    block the bundle never sent is refused for good, as any other refusal: the bundle drops and
    retries only a block it sent. Before, every new name was dropped and the child started again
    at once, with no backoff and no budget: thousands of spawns in 3 s, the set of dropped
    names growing as long as the child kept answering."""
    report = run_bundle(tmp_path, REFUSALS)
    assert report == {
        "spawns": 1,
        "warnings": [
            "sidecar did not start; the harness runs as without it: invalid initializationOptions: aa: unknown key",
        ],
        "count": 1,
    }
