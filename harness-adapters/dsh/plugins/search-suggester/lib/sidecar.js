// The `dsh-search serve` child and its JSON-RPC client: spawned through ctx.subprocess (which
// scrubs credential-shaped variables: provider keys are forwarded explicitly), initialized with
// the config blocks of the plugins that share it, reconfigured live when a block changes,
// restarted with exponential backoff after a crash, a hang, a hung start or a broken framing.
// Fail-open everywhere: nothing here throws into the harness; a call to a sidecar that is not
// usable rejects at once (or after a bounded wait for a start under way).

import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
// the one TypeScript client (editor-clients/vscode/src/core), compiled into lib/core
import { FramedClient, FramingLost, RpcError } from './core/framing.js';
import { Methods } from './core/protocol.js';
import { info, note, warn } from './warnings.js';

/** Environment forwarded to the sidecar on purpose (ctx.subprocess drops credential-shaped names and DSH_*). */
export const FORWARDED_ENV = [
  'DSH_HOME', 'EXA_API_KEY', 'TAVILY_API_KEY', 'BRAVE_SEARCH_API_KEY', 'PPLX_API_KEY', 'DEEPSEEK_API_KEY', 'SEARXNG_BASE_URL',
];

/** Bench and test instrumentation (bench/harness.py, tests/harness), off unless this variable
 * names a file: each spawn of the sidecar appends a `spawn 0` line. */
const TIMINGS_FILE = process.env.SEARCH_SIDECAR_TIMINGS_FILE;

function instrument(label) {
  if (!TIMINGS_FILE) return;
  try {
    appendFileSync(TIMINGS_FILE, `${label} 0\n`);
  } catch {
    // instrumentation never fails a call
  }
}

/** Unanswered requests in a row after which a live sidecar counts as hung and is restarted. */
export const HUNG_AFTER = 3;

/** The sidecar process knobs every plugin row may set under `sidecar:` (first plugin's win). */
export const PROCESS_DEFAULTS = Object.freeze({
  command: ['dsh-search', 'serve'],
  startTimeoutMs: 20000,
  maxRestarts: 5,
  // a sidecar that served this long before it exited was not crash-looping: the restart budget
  // (maxRestarts, and the backoff) starts over, as a process supervisor's minimum uptime does
  restartResetMs: 60000,
});

/** The longest a start's bound is widened to, ms: after a start that timed out the next one
 * may take twice as long (a machine slower than `startTimeoutMs`: at load 20-36 a start took
 * 2-3 s where 3000 ms had been set, and every restart timed out until the budget was spent),
 * up to this, or `startTimeoutMs` itself when that is longer. */
export const START_TIMEOUT_CAP_MS = 120000;

/** Spawn errors (Node's `child_process` `error` event codes) that say the command cannot run at
 * all, so it is never restarted: not found, not executable, a path through a non-folder. */
const CANNOT_RUN = new Set(['ENOENT', 'EACCES', 'ENOTDIR', 'ENOEXEC']);

/** Why an exit says the command cannot run at all, or `undefined`: a spawn error of
 * {@link CANNOT_RUN}, or, before it ever answered, the exit codes POSIX shells and `env` give
 * a command they could not find (127) or not execute (126) (a wrapper such as `env dsh-search`). */
function cannotRunReason(outcome, served) {
  const code = outcome?.error?.code;
  if (CANNOT_RUN.has(code)) return code;
  const status = outcome?.exitCode;
  if (!served && (status === 127 || status === 126)) return `exit code ${status}`;
  return undefined;
}

/** The `window/logMessage` lines of the sidecar, through DSH's logger service: the bandit seed's
 * `[bandit-search] …` lines under `bandit-search`, the suggester's ledger lines
 * (`[<ISO>] <message>`) under `search-suggester`, a refused reconfiguration as a warning. */
export function forwardLog(ctx, params) {
  const message = typeof params?.message === 'string' ? params.message.slice(0, 64 * 1024) : undefined;
  if (!message) return;
  if (message.startsWith('[bandit-search] ')) info(ctx, 'bandit-search', message);
  else if (params.type === 1 || params.type === 2) warn(ctx, 'search-sidecar', `the sidecar says: ${message}`);
  else info(ctx, 'search-suggester', message);
}

/** The config block an `initialize` refusal names (`invalid initializationOptions: router.x: …`),
 * when it is one of the blocks `sent`: a child naming any other (the child is untrusted) made
 * the bundle drop it and start again at once, with no backoff and no budget, for as long as it
 * named new ones (thousands of spawns a second, the event loop held). */
export function refusedBlock(error, sent) {
  const match = /invalid initializationOptions: ([A-Za-z]+)[.:[]/.exec(String(error?.message ?? ''));
  return match && Object.hasOwn(sent ?? {}, match[1]) ? match[1] : undefined;
}

/** The sidecar child and its client, restarted with exponential backoff after a crash, a hang
 * or a broken framing. `options()` gives the current `initializationOptions` (the blocks of the
 * plugins sharing it), `ctx()` a live plugin context to spawn and log through. */
export class SidecarProcess {
  constructor(ctx, knobs, options, started = () => undefined) {
    this.ctxOf = ctx;
    this.knobsOf = knobs;
    this.options = options;
    this.started = started; // called with the client after every start that answered initialize
    this.client = undefined;
    this.handle = undefined;
    this.ready = undefined;
    this.usable = false;
    this.stopped = false;
    this.restarts = 0;
    this.timer = undefined;
    this.missed = 0; // requests in a row the live sidecar did not answer in time
    this.hungRestarts = 0; // restarts for a hang since the last answer
    this.endedForHang = false; // the live child is being ended for a hang (its exit keeps the budget)
    this.refused = false; // the sidecar refused its initialize for good: never restarted
    this.dropped = new Set(); // config blocks the sidecar refused (run with their defaults)
    this.sentOptions = undefined; // the options the live sidecar has (initialize or last change)
    this.startOptions = undefined; // the options the last start sent with its initialize
    this.startedOnce = false;
    this.widenedStartMs = 0; // the start bound after starts that timed out (0: startTimeoutMs)
    this.widening = ''; // what the last timed-out start widened, for its warning
    this.restartPending(); // a call before the (queued) first start waits for it as for any start
  }

  get ctx() {
    return this.ctxOf();
  }

  /** The process knobs in force (the rows' `sidecar:` blocks, merged; read at each start). */
  get knobs() {
    return this.knobsOf();
  }

  start() {
    if (this.stopped) return;
    this.startWaitSpent = false;
    const started = this.spawn().then(
      () => {
        this.usable = true;
        this.usableSince = Date.now();
        this.startedOnce = true;
        this.pushOptions(); // a block that changed during the start
        try {
          this.started(this.client);
        } catch {
          // a listener never fails a start
        }
        return true;
      },
      (error) => {
        this.usable = false;
        const block = error instanceof RpcError ? refusedBlock(error, this.startOptions) : undefined;
        if (block && !this.dropped.has(block) && this.handle) {
          // one plugin's block was refused: that plugin runs with its defaults, the others keep theirs
          this.dropped.add(block);
          warn(this.ctx, 'search-sidecar', `the sidecar refused the ${block} settings (${error.message}); they run with their defaults until corrected`);
          this.retryAfterRefusal = true;
          this.abandon(false);
          return false;
        }
        warn(this.ctx, 'search-sidecar', `sidecar did not start; the harness runs as without it${this.widening}`, error);
        this.widening = '';
        // no child (the spawn threw: an invalid argv, ENOTDIR): nothing will exit and restart
        if (!this.handle) this.refused = true;
        this.abandon(error instanceof RpcError);
        return false;
      },
    );
    if (this.settleRestart) this.restartSettled(started);
    else this.ready = started;
  }

  /** From a crash or a hang until the restart settles, `ready` is pending: a call that arrives
   * meanwhile waits for the restarted sidecar as for a first start (`startWaitMs`, once per
   * start) instead of passing through during the backoff. */
  restartPending() {
    if (this.settleRestart) return;
    this.startWaitSpent = false;
    this.ready = new Promise((resolve) => {
      this.settleRestart = resolve;
    });
  }

  restartSettled(outcome) {
    const settle = this.settleRestart;
    this.settleRestart = undefined;
    settle?.(outcome);
  }

  env(options) {
    const env = {};
    const names = new Set(FORWARDED_ENV);
    // the variables the router's apiKeyEnv/baseUrlEnv name (the seed's `apiKeyEnv: TAVILY_API_KEY`)
    for (const provider of Object.values(options?.router?.providers ?? {})) {
      for (const key of ['apiKeyEnv', 'baseUrlEnv']) {
        const name = provider?.[key];
        if (typeof name === 'string' && /^[A-Za-z_][A-Za-z0-9_]{0,255}$/.test(name)) names.add(name);
      }
    }
    for (const key of names) if (process.env[key]) env[key] = process.env[key];
    return env;
  }

  /** How long this start may take to answer `initialize`, ms: `startTimeoutMs`, or longer
   * after starts that timed out ({@link widenStart}). */
  startBound() {
    return Math.max(this.knobs.startTimeoutMs, this.widenedStartMs);
  }

  /** A start did not answer within `bound` ms: the next may take twice as long, up to
   * {@link START_TIMEOUT_CAP_MS} (or `startTimeoutMs` when longer), and the start's warning
   * says so (a slow machine is not a hung sidecar; the same bound each time only restarted it
   * until the budget was spent). */
  widenStart(bound) {
    const next = Math.min(bound * 2, Math.max(this.knobs.startTimeoutMs, START_TIMEOUT_CAP_MS));
    this.widening = '';
    if (next <= bound) return;
    this.widenedStartMs = next;
    this.widening = ` (the next start may take ${next} ms: startTimeoutMs widened)`;
  }

  /** The options to send: every block but the refused ones. */
  currentOptions() {
    const options = { ...(this.options() ?? {}) };
    for (const block of this.dropped) delete options[block];
    return options;
  }

  async spawn() {
    const [command, ...args] = this.knobs.command;
    instrument('spawn');
    this.handle = undefined; // until this start's child exists (the spawn itself may throw)
    const options = this.currentOptions();
    this.startOptions = options; // the blocks this start sends (a refusal may name only one of them)
    const handle = this.ctx.subprocess.spawn({
      argv: [command, ...args],
      cwd: process.cwd(),
      stdio: { stdin: 'pipe', stdout: 'pipe', stderr: { maxBytes: 64 * 1024 } },
      graceMs: 2000,
      env: this.env(options),
    });
    this.handle = handle;
    const client = new FramedClient(handle.stdin, handle.stdout);
    this.client = client;
    client.onNotification = (method, params) => {
      if (method === Methods.logMessage) forwardLog(this.ctx, params);
    };
    client.onClose = (reason) => this.connectionClosed(client, reason);
    handle.done.then(
      (outcome) => this.exited(client, outcome),
      (error) => this.exited(client, { error }),
    );
    const bound = this.startBound();
    try {
      await client.request(
        'initialize',
        {
          processId: process.pid,
          rootUri: pathToFileURL(process.cwd()).href,
          capabilities: {},
          initializationOptions: options,
        },
        { timeoutMs: bound },
      );
    } catch (error) {
      // no reply, no error reply, the child still connected: the bound ran out
      if (!(error instanceof RpcError) && !client.closed) this.widenStart(bound);
      throw error;
    }
    client.notify('initialized', {});
    this.sentOptions = JSON.stringify(options);
  }

  /** Send the current blocks to a live sidecar when they differ from what it has
   * (`workspace/didChangeConfiguration`: the sidecar applies them live, no restart). */
  pushOptions() {
    if (!this.usable || !this.client || this.client.closed) return;
    const options = this.currentOptions();
    const text = JSON.stringify(options);
    if (text === this.sentOptions) return;
    try {
      this.client.notify('workspace/didChangeConfiguration', { settings: options });
      this.sentOptions = text;
    } catch {
      // closed meanwhile: the restart sends them with its initialize
    }
  }

  /** A block changed: a refused block gets another chance (the user may have corrected it). */
  optionsChanged(block) {
    if (block && this.dropped.delete(block) && this.usable) {
      this.restartNow('a corrected config block');
      return;
    }
    this.pushOptions();
  }

  /** The connection closed while the child may still run: a child whose framing broke (it
   * wrote something else on its stdout) is ended, and its exit restarts it with backoff. */
  connectionClosed(client, reason) {
    if (this.client !== client || this.stopped) return;
    if (!(reason instanceof FramingLost)) return; // an exit or a closed pipe: `exited` handles it
    this.usable = false;
    warn(this.ctx, 'search-sidecar', `the sidecar's output stopped being the protocol (${reason.message}); restarting it`);
    this.restartPending();
    try {
      this.handle?.terminate?.();
    } catch {
      // already gone: its exit restarts it
    }
  }

  restartNow(why) {
    note(this.ctx, 'search-sidecar', `restarting the sidecar: ${why}`);
    this.usable = false;
    this.restartPending();
    try {
      this.handle?.terminate?.();
    } catch {
      // already gone
    }
  }

  /** A child that did not finish its start (no `initialize` reply within its bound, or
   * an error reply) is ended, not left running until `stop()`: after a hung start its exit
   * restarts it (backoff, `maxRestarts`); after a refused one (`refused`: the config was
   * rejected, and a restart would be rejected the same way) it is not restarted. A start whose
   * spawn threw (no child: an invalid argv, an aborted spawn) has no exit to restart from: it
   * stays failed (`ready` settled false), so calls go where they go without the sidecar. */
  abandon(refused) {
    if (this.stopped || !this.handle) return;
    if (refused) this.refused = true;
    if (!this.refused) this.restartPending(); // calls from now on wait for the restart, as after a crash
    try {
      this.handle?.terminate?.();
    } catch {
      this.client?.close(new Error('sidecar start abandoned'));
    }
  }

  exited(client, outcome) {
    client.close(new Error('sidecar exited'));
    if (this.client !== client) return;
    this.usable = false;
    const cannotRun = cannotRunReason(outcome, this.usableSince !== undefined);
    if (cannotRun && !this.refused && !this.stopped) {
      // the command is not there or not runnable: a restart would fail the same way, and every
      // call would wait out its backoff and start wait (seconds a call) for nothing
      this.refused = true;
      warn(this.ctx, 'search-sidecar', `sidecar command ${JSON.stringify(this.knobs.command[0])} cannot be run (${cannotRun}); the harness runs as without it`);
      return this.restartSettled(false);
    }
    const served = this.usableSince === undefined ? 0 : Date.now() - this.usableSince;
    this.usableSince = undefined;
    // not a crash loop: a new budget; but a child ended for a hang did not serve, however long
    // it ran (before, one that hung on every tool call was restarted for the whole session)
    if (served >= this.knobs.restartResetMs && !this.endedForHang) this.restarts = 0;
    this.endedForHang = false;
    if (this.stopped || this.refused) return this.restartSettled(false);
    if (this.retryAfterRefusal) {
      // a refused block was dropped: start again at once, without it (a config, not a crash)
      this.retryAfterRefusal = false;
      this.restartPending();
      this.start();
      return;
    }
    if (this.restarts >= this.knobs.maxRestarts) {
      warn(this.ctx, 'search-sidecar', `sidecar exited (${JSON.stringify(outcome)}); restart budget spent, running without it`);
      return this.restartSettled(false);
    }
    const delay = Math.min(250 * 2 ** this.restarts, 30000);
    this.restarts += 1;
    note(this.ctx, 'search-sidecar', `sidecar exited; restarting in ${delay} ms`);
    this.restartPending();
    this.timer = setTimeout(() => this.start(), delay);
    this.timer.unref?.();
  }

  /** Whether a call may still be answered by the sidecar (live, or starting for the first time). */
  get searchable() {
    return this.usable || (!this.stopped && !this.refused && this.restarts === 0);
  }

  /** A request to a live sidecar; rejects when it is not (yet) usable. ``timeoutMs`` may be a
   * function of the child's client (called once the start wait is over), and ``before`` an
   * async wait of the caller's (its result, when a number, is the bound left). ``waitForStart``:
   * true waits for a starting sidecar, a number waits at most that many ms — once per start:
   * when that bound runs out (a hung or very slow start), later bounded calls pass through at
   * once until the start settles, instead of each adding the whole bound. ``probe``: a
   * plugin's own background poll (the suggester's readiness), whose answer or silence says
   * nothing of whether the tool calls' requests are answered (before, its answered
   * `dsh/status` polls reset the hang count of a child that never answered a post-execute). */
  async request(method, params, options = {}) {
    if (!this.usable && options.waitForStart && this.ready && !this.stopped) {
      if (options.waitForStart === true) await this.ready;
      else if (!this.startWaitSpent) {
        const ready = this.ready;
        const settled = await Promise.race([
          ready.then(() => true),
          new Promise((r) => setTimeout(() => r(false), options.waitForStart).unref?.()),
        ]);
        if (!settled && this.ready === ready) this.startWaitSpent = true;
      }
    }
    if (!this.usable || !this.client) throw new Error('sidecar unavailable');
    const client = this.client;
    // a bound that depends on the child answering (the first call of a start may take longer)
    if (typeof options.timeoutMs === 'function') options = { ...options, timeoutMs: options.timeoutMs(client) };
    if (options.before) {
      // a wait of the caller's before the request goes out (within its bound): the bound left
      const left = await options.before();
      if (Number.isFinite(left)) options = { ...options, timeoutMs: left };
      if (!this.usable || this.client !== client) throw new Error('sidecar unavailable');
    }
    try {
      const value = await client.request(method, params, options);
      if (!options.probe) this.answered();
      return value;
    } catch (error) {
      if (options.probe) throw error; // a plugin's own background poll: no say in hang detection
      if (error instanceof RpcError) this.answered();
      else if (!client.closed && !options.signal?.aborted && this.client === client) this.unanswered(client);
      throw error;
    }
  }

  notify(method, params) {
    if (!this.usable || !this.client) return;
    try {
      this.client.notify(method, params);
    } catch {
      // fail-open
    }
  }

  answered() {
    this.missed = 0;
    this.hungRestarts = 0;
  }

  /** A request the live sidecar did not answer in its time bound. A sidecar that misses
   * HUNG_AFTER in a row (one in a row right after it was restarted for that) is hung, not
   * slow: it is terminated and restarted through the exit path (backoff, `maxRestarts`), so a
   * hung child costs a few bounded waits instead of one per tool call for the whole session. */
  unanswered(client) {
    this.missed += 1;
    const bound = this.hungRestarts ? 1 : HUNG_AFTER;
    if (this.missed < bound) return;
    this.missed = 0;
    this.hungRestarts += 1;
    this.endedForHang = true;
    this.usable = false;
    this.restartPending();
    note(this.ctx, 'search-sidecar', `sidecar did not answer ${bound} request(s) in a row; restarting it`);
    try {
      this.handle?.terminate?.();
    } catch {
      client.close(new Error('sidecar hung'));
    }
  }

  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.restartSettled(false);
    const client = this.client;
    if (client && this.usable) {
      try {
        await client.request('shutdown', null, { timeoutMs: 2000 });
        client.notify('exit');
      } catch {
        // already gone
      }
    }
    this.usable = false;
    try {
      this.handle?.stdin?.end();
      if (this.handle && !(await this.handle.waitForExit(AbortSignal.timeout(3000)))) this.handle.terminate();
    } catch {
      this.handle?.terminate?.();
    }
  }
}
