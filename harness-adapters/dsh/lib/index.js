// DeepSeek Harness bundle plugin: one `dsh-search serve` per harness process (spawned through
// ctx.subprocess, which scrubs credential-shaped variables: provider keys are forwarded
// explicitly) behind the three seed surfaces:
//   ctx.web search provider `dsh-search-sidecar`     -> dsh/search   (router seed)
//   tool `search` + its system-prompt steer           -> dsh/search   (bandit seed, strategy auto)
//   tools/post-execute waterfall listener             -> dsh/postExecute (suggester seed)
//   system-prompt/assemble listener                   -> dsh/assembleSection
//   tool `suggestion_dismiss`                         -> dsh/dismiss
// Fail-open everywhere: apply never throws, a missing or dead sidecar leaves every decision
// unchanged, a crashed sidecar is restarted with backoff, dispose sends shutdown/exit.

import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import z from '@deepseek-ai/schemastery';
import { defineTool } from '@deepseek-ai/dsh-tools';
// the one TypeScript client (editor-clients/vscode/src/core), compiled into lib/core
import { FramedClient, RpcError } from './core/framing.js';
import { noteMessage } from './note.js';
import { Methods } from './core/protocol.js';
import { dismissParams, searchParams } from './core/requests.js';

export { noteMessage } from './note.js';
export const name = 'search-sidecar';
export const inject = ['subprocess', 'tools', 'web', 'systemPrompt'];

/** The provider id the bundle's patch selects in the `web` row. */
export const PROVIDER_ID = 'dsh-search-sidecar';
/** Environment forwarded to the sidecar on purpose (ctx.subprocess drops credential-shaped names and DSH_*). */
export const FORWARDED_ENV = [
  'DSH_HOME', 'EXA_API_KEY', 'TAVILY_API_KEY', 'BRAVE_SEARCH_API_KEY', 'PPLX_API_KEY', 'DEEPSEEK_API_KEY', 'SEARXNG_BASE_URL',
];

export const Config = z.object({
  command: z.array(z.string()).default(['dsh-search', 'serve']),
  sidecar: z.any().default({}),
  startTimeoutMs: z.number().default(20000),
  searchTimeoutMs: z.number().default(60000),
  postExecuteTimeoutMs: z.number().default(500),
  // a call that arrives while the sidecar is still starting waits at most this long for it
  startWaitMs: z.number().default(5000),
  sectionTimeoutMs: z.number().default(500),
  // the first section of the process waits for the workspace projection (the sidecar bounds that
  // wait at 5 s itself): once, so a session's first system prompt carries the section
  firstSectionTimeoutMs: z.number().default(5000),
  maxRestarts: z.number().default(5),
  // a sidecar that served this long before it exited was not crash-looping: the restart budget
  // (maxRestarts, and the backoff) starts over, as a process supervisor's minimum uptime does
  restartResetMs: z.number().default(60000),
});

/** Bench instrumentation (bench/harness.py), off unless this variable names a file: each
 * listener's own time per call is appended as `<listener> <ms>` lines. */
const TIMINGS_FILE = process.env.SEARCH_SIDECAR_TIMINGS_FILE;

function timed(label, started) {
  if (!TIMINGS_FILE) return;
  try {
    appendFileSync(TIMINGS_FILE, `${label} ${(performance.now() - started).toFixed(3)}\n`);
  } catch {
    // instrumentation never fails a call
  }
}

function warn(ctx, message, error) {
  try {
    ctx.logger?.('search-sidecar')?.warn?.(`${message}${error ? `: ${error?.message ?? error}` : ''}`);
  } catch {
    // logging never throws into the harness
  }
}

/** Quiet time after a `tools/change` before `dsh/toolsChanged` is sent (a burst is sent once), ms. */
export const TOOLS_CHANGE_QUIET_MS = 100;

/** Unanswered requests in a row after which a live sidecar counts as hung and is restarted. */
export const HUNG_AFTER = 3;

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

/** The sidecar child and its client, restarted with exponential backoff after a crash or a hang. */
class SidecarProcess {
  constructor(ctx, config) {
    this.ctx = ctx;
    this.config = config;
    this.client = undefined;
    this.handle = undefined;
    this.ready = undefined;
    this.usable = false;
    this.stopped = false;
    this.restarts = 0;
    this.timer = undefined;
    this.missed = 0; // requests in a row the live sidecar did not answer in time
    this.hungRestarts = 0; // restarts for a hang since the last answer
    this.refused = false; // the sidecar refused its initialize: never restarted
  }

  start() {
    if (this.stopped) return;
    this.startWaitSpent = false;
    const started = this.spawn().then(
      () => {
        this.usable = true;
        this.usableSince = Date.now();
        return true;
      },
      (error) => {
        warn(this.ctx, 'sidecar did not start; the harness runs as without it', error);
        this.usable = false;
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

  env() {
    const env = {};
    for (const key of FORWARDED_ENV) if (process.env[key]) env[key] = process.env[key];
    return env;
  }

  async spawn() {
    const [command, ...args] = this.config.command;
    this.handle = undefined; // until this start's child exists (the spawn itself may throw)
    const handle = this.ctx.subprocess.spawn({
      argv: [command, ...args],
      cwd: process.cwd(),
      stdio: { stdin: 'pipe', stdout: 'pipe', stderr: { maxBytes: 64 * 1024 } },
      graceMs: 2000,
      env: this.env(),
    });
    this.handle = handle;
    const client = new FramedClient(handle.stdin, handle.stdout);
    this.client = client;
    handle.done.then(
      (outcome) => this.exited(client, outcome),
      (error) => this.exited(client, { error }),
    );
    await client.request(
      'initialize',
      {
        processId: process.pid,
        rootUri: pathToFileURL(process.cwd()).href,
        capabilities: {},
        initializationOptions: this.config.sidecar ?? {},
      },
      { timeoutMs: this.config.startTimeoutMs },
    );
    client.notify('initialized', {});
  }

  /** A child that did not finish its start (no `initialize` reply within `startTimeoutMs`, or
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
      warn(this.ctx, `sidecar command ${JSON.stringify(this.config.command[0])} cannot be run (${cannotRun}); the harness runs as without it`);
      return this.restartSettled(false);
    }
    const served = this.usableSince === undefined ? 0 : Date.now() - this.usableSince;
    this.usableSince = undefined;
    if (served >= this.config.restartResetMs) this.restarts = 0; // not a crash loop: a new budget
    if (this.stopped || this.refused) return this.restartSettled(false);
    if (this.restarts >= this.config.maxRestarts) {
      warn(this.ctx, `sidecar exited (${JSON.stringify(outcome)}); restart budget spent, running without it`);
      return this.restartSettled(false);
    }
    const delay = Math.min(250 * 2 ** this.restarts, 30000);
    this.restarts += 1;
    warn(this.ctx, `sidecar exited; restarting in ${delay} ms`);
    this.restartPending();
    this.timer = setTimeout(() => this.start(), delay);
    this.timer.unref?.();
  }

  /** A request to a live sidecar; rejects when it is not (yet) usable. ``waitForStart``:
   * true waits for a starting sidecar, a number waits at most that many ms — once per start:
   * when that bound runs out (a hung or very slow start), later bounded calls pass through at
   * once until the start settles, instead of each adding the whole bound. */
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
    try {
      const value = await client.request(method, params, options);
      this.answered();
      return value;
    } catch (error) {
      if (error instanceof RpcError) this.answered();
      else if (!client.closed && !options.signal?.aborted && this.client === client) this.unanswered(client);
      throw error;
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
    this.usable = false;
    this.restartPending();
    warn(this.ctx, `sidecar did not answer ${bound} request(s) in a row; restarting it`);
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

function resultText(result) {
  try {
    const blocks = result?.content ?? [];
    return blocks.filter((b) => b.type === 'text').map((b) => b.text).join('\n').slice(0, 1_000_000);
  } catch {
    return undefined;
  }
}

const SOURCE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    url: { type: 'string', required: true },
    title: { type: 'string' },
    snippet: { type: 'string' },
    publishedAt: { type: 'string' },
  },
};

function renderSearch(value) {
  const lines = [];
  if (value.content) lines.push(value.content, '');
  value.sources.forEach((s, i) => {
    lines.push(`${i + 1}. ${s.title ?? s.url}`, `   ${s.url}`);
    if (s.snippet) lines.push(`   ${s.snippet}`);
  });
  if (lines.length === 0) lines.push('No results.');
  return [{ type: 'text', text: lines.join('\n') }];
}

function projectSources(sources) {
  return (sources ?? []).map((s) => ({
    url: s.url,
    ...(s.title ? { title: s.title } : {}),
    ...(s.snippet ? { snippet: s.snippet } : {}),
    ...(s.publishedAt ? { publishedAt: s.publishedAt } : {}),
  }));
}

export function apply(ctx, rawConfig) {
  try {
    install(ctx, { ...Config(rawConfig ?? {}) });
  } catch (error) {
    // a load error is fatal to the whole DSH profile: never let one out
    warn(ctx, 'search-sidecar could not install; running without it', error);
  }
}

function install(ctx, config) {
  const sidecar = new SidecarProcess(ctx, config);
  sidecar.start(); // off the first tool call's path

  ctx.effect(() => () => sidecar.stop(), 'search-sidecar shutdown');

  const sessions = new WeakMap();
  const session = (agent) => {
    if (!agent) return { id: 'dsh', turn: 0 };
    let s = sessions.get(agent);
    if (!s) sessions.set(agent, (s = { id: randomUUID(), turn: 0 }));
    return s;
  };

  const search = async (query, maxResults, strategy, signal) => {
    const params = searchParams(query, { maxResults, strategy });
    return sidecar.request(Methods.search, params, { timeoutMs: config.searchTimeoutMs, signal, waitForStart: true });
  };

  // Without a usable sidecar the web seam must behave as without this bundle, whose patch
  // selects this provider by id (so DSH never falls back by itself): delegate to the provider
  // DSH picks when no id is configured, the one other usable registered provider.
  const fallbackProvider = () => {
    try {
      const others = [...(ctx.web.searchProviders?.entries?.() ?? [])].filter(
        ([id, provider]) => id !== PROVIDER_ID && provider?.available?.(),
      );
      return others.length === 1 ? others[0][1] : undefined;
    } catch {
      return undefined;
    }
  };
  const sidecarSearchable = () => sidecar.usable || (!sidecar.stopped && !sidecar.refused && sidecar.restarts === 0);

  // router seed: the web seam's provider
  ctx.web.registerSearchProvider({
    id: PROVIDER_ID,
    available: () => sidecarSearchable() || fallbackProvider() !== undefined,
    async search(request, signal) {
      if (sidecarSearchable()) {
        try {
          const result = await search(request.query, request.maxResults, 'auto', signal);
          return {
            ...(result.content ? { content: result.content } : {}),
            sources: projectSources(result.sources),
            truncated: Boolean(result.truncated),
          };
        } catch (error) {
          // a live sidecar's answer (all providers failed, a timeout) and a cancellation stand
          if (sidecar.usable || signal?.aborted) throw error;
        }
      }
      const other = fallbackProvider();
      if (!other) throw new Error('search-sidecar: the sidecar is unavailable and no other web search provider is');
      warn(ctx, 'sidecar unavailable; this web search goes to the harness\'s own provider');
      return other.search(request, signal);
    },
  });

  // bandit seed: the `search` tool and its steer
  ctx.systemPrompt.section({
    name: 'tool:search',
    order: 111,
    text: 'Prefer the search tool over web_search for web searches: it picks a quick or a thorough strategy per query and learns which pays off. Cite the returned URLs as markdown links.',
  });
  ctx.tools.register(
    defineTool({
      name: 'search',
      description: 'Search the web. The strategy (one quick query, or three query variants merged) is chosen and learned per call.',
      parameters: { query: { type: 'string', required: true, description: 'what to search for' } },
      output: {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: {
            content: { type: 'string' },
            sources: { type: 'array', required: true, items: SOURCE_SCHEMA },
            truncated: { type: 'boolean', required: true },
            strategy: { type: 'string', required: true },
          },
        },
        render: (_args, value) => renderSearch(value),
      },
      isConcurrencySafe: () => true,
      async execute(args, exec) {
        const result = await search(String(args.query ?? ''), undefined, 'auto', exec.signal);
        return {
          ...(result.content ? { content: result.content } : {}),
          sources: projectSources(result.sources),
          truncated: Boolean(result.truncated),
          strategy: result.strategy,
        };
      },
    }),
  );

  // suggester seed: the dismissal tool
  ctx.tools.register(
    defineTool({
      name: 'suggestion_dismiss',
      description: 'Dismiss a search-suggester note family (the intent a note named, e.g. Version), or one path of it, for a day.',
      parameters: {
        family: { type: 'string', required: true, description: 'the intent family a note named' },
        path: { type: 'string', description: 'one target path to drop' },
      },
      output: {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: { record: { type: 'string', required: true }, expiresAt: { type: 'string', required: true } },
        },
        render: (_args, value) => [{ type: 'text', text: `${value.record} (until ${value.expiresAt})` }],
      },
      async execute(args, exec) {
        const params = dismissParams(String(args.family ?? ''), args.path ? String(args.path) : undefined);
        return sidecar.request(Methods.dismiss, params, { timeoutMs: 5000, signal: exec.signal, waitForStart: true });
      },
    }),
  );

  ctx.on('agent/pre-step', ({ agent }, next) => {
    if (agent) session(agent).turn += 1;
    return next();
  });

  // suggester seed: plain registration, next() first, the note folded into additionalContexts
  ctx.on('tools/post-execute', async (exec, result, next) => {
    const downstream = await next();
    const started = performance.now();
    try {
      const s = session(exec.agent);
      const text = resultText(result);
      const params = {
        sessionId: s.id,
        turn: s.turn,
        callId: String(exec.callId),
        tool: { name: exec.name, input: exec.arguments && typeof exec.arguments === 'object' && !Array.isArray(exec.arguments) ? exec.arguments : {} },
        ...(text !== undefined ? { result: { isError: Boolean(result?.isError), text } } : {}),
      };
      const answer = await sidecar.request(Methods.postExecute, params, {
        timeoutMs: config.postExecuteTimeoutMs,
        signal: exec.signal,
        waitForStart: config.startWaitMs,
      });
      const notes = (answer?.additionalContexts ?? []).filter((c) => typeof c?.text === 'string' && c.text).map(noteMessage);
      if (notes.length === 0) return downstream;
      return { ...downstream, additionalContexts: [...(downstream.additionalContexts ?? []), ...notes] };
    } catch (error) {
      warn(ctx, 'post-execute note skipped', error);
      return downstream;
    } finally {
      timed('post-execute', started);
    }
  });

  // suggester seed: the optional sticky section
  let sectionAsked = false;
  ctx.on('system-prompt/assemble', async (assembly, context, next) => {
    const out = await next();
    const started = performance.now();
    try {
      const first = !sectionAsked;
      sectionAsked = true;
      const answer = await sidecar.request(Methods.assembleSection, {}, {
        timeoutMs: first ? Math.max(config.sectionTimeoutMs, config.firstSectionTimeoutMs) : config.sectionTimeoutMs,
        signal: context?.signal,
        waitForStart: config.startWaitMs,
      });
      const section = answer?.section;
      if (section && typeof section.text === 'string' && section.text && !out.sections.some((s) => s.name === section.name)) {
        out.sections.push({ name: section.name, text: section.text });
      }
    } catch (error) {
      warn(ctx, 'sticky section skipped', error);
    } finally {
      timed('assemble', started);
    }
    return out;
  });

  // a burst of tool changes (MCP servers connecting, a profile reload) is one invalidation of
  // the sidecar's packs: sent once, TOOLS_CHANGE_QUIET_MS after the last change of the burst
  let toolsChanged;
  ctx.on('tools/change', () => {
    clearTimeout(toolsChanged);
    toolsChanged = setTimeout(() => {
      if (!sidecar.usable) return;
      try {
        sidecar.client.notify(Methods.toolsChanged);
      } catch {
        // fail-open
      }
    }, TOOLS_CHANGE_QUIET_MS);
    toolsChanged.unref?.();
  });
  ctx.effect(() => () => clearTimeout(toolsChanged), 'search-sidecar tools/change');
}
