// The search-suggester seed as a DeepSeek Harness plugin (row id `search-suggester`). It ships
// disabled (the bundle's patch inserts its row with `disabled: true`): a profile activates it
// with `- id: search-suggester` / `disabled: false`. Its surfaces:
//   tools/post-execute waterfall listener (plain registration, next() first) → dsh/postExecute:
//     at most one labelled note folded into additionalContexts, never a content replacement;
//   system-prompt/assemble listener → dsh/assembleSection (the sticky section, `sectionMode`);
//   agent/pre-step listener → dsh/taskLead (the task lead, `taskLead`: the files the session's
//     first user message points to, one labelled note entering that first step, once);
//   the `suggestion_dismiss` tool → dsh/dismiss;
//   tools/change → dsh/toolsChanged (a burst sent once).
// Every knob of the row is sent to the sidecar as its suggester block; a hot edit of the row
// reaches it as one workspace/didChangeConfiguration (the volatile knobs hot-reload there, the
// structural ones rebuild its core). The ledger lines reach DSH's logger (`search-suggester`).
// Fail-open: a missing, slow or dead sidecar leaves every decision unchanged.

import { appendFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { hostImport } from './host.js';
import { Methods } from './core/protocol.js';
import { dismissParams } from './core/requests.js';
import { cutText, noteMessage, taskText } from './note.js';
import { suggesterRow } from './rows.js';
import { acquireSidecar } from './shared.js';
import { note, warn } from './warnings.js';

const tools = await hostImport('@deepseek-ai/dsh-tools').catch(() => undefined);

export { MAX_TASK_CHARS, noteMessage, taskText } from './note.js';
export const name = 'search-suggester';
export const inject = ['subprocess', 'tools', 'systemPrompt'];

/** Time bounds of the plugin's calls to the sidecar, ms (each overridable under `sidecar:`). */
export const TIMINGS = Object.freeze({
  postExecuteTimeoutMs: 500,
  // the first post-execute call of a sidecar start may find it still preparing its targets (the
  // sidecar answers it within its own first-call wait): it gets this longer bound, once per start
  firstPostExecuteTimeoutMs: 2000,
  // a call that arrives while the sidecar is still starting waits at most this long for it
  startWaitMs: 5000,
  sectionTimeoutMs: 500,
  // the first section of the process may find the sidecar still being built after its start
  // (its own wait for the workspace index is bounded by its first-call window, 500 ms: a section
  // not ready yet is answered null and comes with a later step's system prompt): once
  firstSectionTimeoutMs: 5000,
  dismissTimeoutMs: 5000,
  // the task lead of a session's first step: the sidecar waits at most its first-call window
  // (500 ms) for its workspace index, then ranks (bounded work: about a second on 100k files);
  // a lead the index was not ready for comes later, with the session's next post-execute call
  // that has no note of its own; the step waits at most this long for the answer
  leadTimeoutMs: 6000,
  // after each start, how long the plugin asks the sidecar (in the background) whether its
  // targets are prepared
  prepareWaitMs: 15000,
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref?.());

/** Whether a `dsh/status` answer says the suggester is ready to note: no part of its workspace
 * index a note may need is still being built (`pending` empty: targets, symbol pass, content
 * index), or nothing to prepare (off, no workspace, no pack applies). */
export function suggesterReady(status) {
  const s = status?.suggester;
  if (!s || s.enabled === false || !s.workspace) return true;
  if (s.activation === 'done' && Array.isArray(s.intents) && s.intents.length === 0) return true;
  if (Array.isArray(s.pending)) return s.pending.length === 0;
  return Boolean(s.prepared);
}

/** What the first call of a start leaves for reading the answer, ms: the rest of its bound is
 * the call's `waitMs` (the sidecar waits that long, at most, for the index its note needs). */
export const ANSWER_MARGIN_MS = 150;

/** Ask `dsh/status` until {@link suggesterReady} (every 200 ms, at most `waitMs`); settles
 * (never rejects) when ready, when the sidecar is gone or restarted, or when the time is up. */
async function waitPrepared(lease, client, waitMs) {
  const until = performance.now() + waitMs;
  while (performance.now() < until && lease.sidecar?.client === client && !client.closed) {
    try {
      if (suggesterReady(await lease.request(Methods.status, {}, { timeoutMs: 5000, probe: true }))) return;
    } catch {
      return;
    }
    await sleep(200);
  }
}

/** At most this many notes are added to one tool call (the seed: ONE labelled note). */
export const MAX_NOTES_PER_CALL = 1;
/** A note longer than this (UTF-8 bytes) is dropped, not cut (a cut path would mislead). */
export const MAX_NOTE_BYTES = 4096;
/** The sticky section's text is at most this long (UTF-8 bytes), or it is left out. */
export const MAX_SECTION_BYTES = 16384;

/** Quiet time after a `tools/change` before `dsh/toolsChanged` is sent (a burst is sent once), ms. */
export const TOOLS_CHANGE_QUIET_MS = 100;

/** Bench instrumentation (bench/harness.py, the harness tests), off unless this variable names
 * a file: each listener's own time per call is appended as `<listener> <ms>` lines. */
const TIMINGS_FILE = process.env.SEARCH_SIDECAR_TIMINGS_FILE;

function timed(label, started) {
  if (!TIMINGS_FILE) return;
  try {
    appendFileSync(TIMINGS_FILE, `${label} ${(performance.now() - started).toFixed(3)}\n`);
  } catch {
    // instrumentation never fails a call
  }
}

/** Longest tool result text sent, UTF-16 units (the wire's 10 × MAX_TOOL_TEXT characters). */
const MAX_RESULT_CHARS = 1_000_000;

function resultText(result) {
  try {
    const blocks = result?.content ?? [];
    return cutText(blocks.filter((b) => b.type === 'text').map((b) => b.text).join('\n'), MAX_RESULT_CHARS);
  } catch {
    return undefined;
  }
}

/** The notes of a `dsh/postExecute` answer that may reach the model: text notes, at most
 * {@link MAX_NOTES_PER_CALL}, each at most {@link MAX_NOTE_BYTES}; the rest are dropped (and
 * counted in `dropped`). */
export function boundedNotes(answer) {
  const contexts = Array.isArray(answer?.additionalContexts) ? answer.additionalContexts : [];
  const kept = [];
  let dropped = 0;
  for (const c of contexts) {
    const text = c?.text;
    if (typeof text !== 'string' || !text) continue;
    if (kept.length >= MAX_NOTES_PER_CALL || Buffer.byteLength(text, 'utf8') > MAX_NOTE_BYTES) {
      dropped += 1;
      continue;
    }
    kept.push(c);
  }
  return { notes: kept.map(noteMessage), dropped };
}

export function apply(ctx, rawConfig) {
  try {
    install(ctx, rawConfig ?? {});
  } catch (error) {
    warn(ctx, 'search-suggester', 'search-suggester could not install; running without it', error);
  }
}

function install(ctx, raw) {
  const report = (message) => warn(ctx, 'search-suggester', message);
  const row = suggesterRow(raw, report);
  const knobs = row.sidecar ?? {};
  const config = { ...TIMINGS };
  for (const key of Object.keys(TIMINGS)) if (Number.isFinite(knobs[key]) && knobs[key] >= 0) config[key] = knobs[key];
  const lease = acquireSidecar(ctx, 'search-suggester', knobs, report);
  ctx.effect(() => () => lease.release(), 'search-suggester sidecar');
  lease.setBlock('suggester', row.suggester);

  const sessions = new WeakMap();
  const session = (agent) => {
    if (!agent) return { id: 'dsh', turn: 0 };
    let s = sessions.get(agent);
    if (!s) sessions.set(agent, (s = { id: randomUUID(), turn: 0 }));
    return s;
  };

  // the dismissal tool (the loader's tool API)
  if (tools?.defineTool) {
    ctx.tools.register(
      tools.defineTool({
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
          const answer = await lease.request(Methods.dismiss, params, {
            timeoutMs: config.dismissTimeoutMs,
            signal: exec.signal,
            waitForStart: true,
          });
          return { record: String(answer?.record ?? '').slice(0, 4200), expiresAt: String(answer?.expiresAt ?? '').slice(0, 100) };
        },
      }),
    );
  } else {
    warn(ctx, 'search-suggester', 'the harness\'s tool kit (@deepseek-ai/dsh-tools) is not resolvable; no suggestion_dismiss tool');
  }

  ctx.on('agent/pre-step', ({ agent }, next) => {
    if (agent) session(agent).turn += 1;
    return next();
  });

  // After each start of the sidecar (off every tool call's path) the suggester is activated
  // and its targets prepared in the background: `dsh/status` is asked until it says so (the
  // status activates the suggester, which writes its `activated` or `abstained …` ledger line
  // first), at most `prepareWaitMs`. The first post-execute call of a start waits for that
  // (within its `firstPostExecuteTimeoutMs`), so a session's first note is not lost to a
  // sidecar still preparing.
  let prepared = Promise.resolve();
  lease.onStarted((client) => {
    prepared = waitPrepared(lease, client, config.prepareWaitMs);
  });
  // the first post-execute call of each sidecar start gets the longer bound (see TIMINGS)
  let firstCallOf;
  // plain registration, next() first, the note folded into additionalContexts
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
      let deadline; // the first call of a start: its whole bound, the wait for the targets included
      const answer = await lease.request(Methods.postExecute, params, {
        timeoutMs: (client) => {
          if (client === firstCallOf) return config.postExecuteTimeoutMs;
          firstCallOf = client;
          deadline = performance.now() + Math.max(config.postExecuteTimeoutMs, config.firstPostExecuteTimeoutMs);
          return deadline - performance.now();
        },
        before: async () => {
          if (deadline === undefined) return;
          await Promise.race([prepared, sleep(Math.max(0, deadline - performance.now() - config.postExecuteTimeoutMs))]);
          // what is left of the first call's bound the sidecar may spend waiting for its index
          params.waitMs = Math.max(0, Math.floor(deadline - performance.now() - ANSWER_MARGIN_MS));
          return Math.max(config.postExecuteTimeoutMs, deadline - performance.now());
        },
        signal: exec.signal,
        waitForStart: config.startWaitMs,
      });
      const { notes, dropped } = boundedNotes(answer);
      if (dropped) note(ctx, 'search-suggester', `${dropped} note(s) over the per-call bound dropped`);
      if (notes.length === 0) return downstream;
      return { ...downstream, additionalContexts: [...(downstream.additionalContexts ?? []), ...notes] };
    } catch (error) {
      note(ctx, 'search-suggester', 'post-execute note skipped', error);
      return downstream;
    } finally {
      timed('post-execute', started);
    }
  });

  // the optional task lead (`taskLead`, off by default): the first step of each agent carries
  // its first user message; the sidecar ranks the workspace against it and answers at most one
  // note, once per session, which enters that step after the message (fail-open: any error or
  // timeout lets the step enter unchanged)
  if (row.suggester?.taskLead === true) {
    const leadAsked = new WeakSet();
    ctx.on('agent/pre-step', async (payload, next) => {
      const decision = await next();
      const agent = payload?.agent;
      if (!agent || leadAsked.has(agent) || decision?.kind !== 'enter') return decision;
      leadAsked.add(agent);
      const started = performance.now();
      try {
        const task = taskText(decision.messages);
        if (!task) return decision;
        const answer = await lease.request(Methods.taskLead, { sessionId: session(agent).id, task }, {
          timeoutMs: config.leadTimeoutMs,
          signal: payload.signal,
          waitForStart: config.startWaitMs,
        });
        const { notes } = boundedNotes(answer);
        if (notes.length === 0) return decision;
        return { kind: 'enter', messages: [...decision.messages, ...notes] };
      } catch (error) {
        note(ctx, 'search-suggester', 'task lead skipped', error);
        return decision;
      } finally {
        timed('task-lead', started);
      }
    });
  }

  // the optional sticky section
  let sectionAsked = false;
  ctx.on('system-prompt/assemble', async (assembly, context, next) => {
    const out = await next();
    const started = performance.now();
    try {
      const first = !sectionAsked;
      sectionAsked = true;
      const answer = await lease.request(Methods.assembleSection, {}, {
        timeoutMs: first ? Math.max(config.sectionTimeoutMs, config.firstSectionTimeoutMs) : config.sectionTimeoutMs,
        signal: context?.signal,
        waitForStart: config.startWaitMs,
      });
      const section = answer?.section;
      if (
        section &&
        typeof section.text === 'string' &&
        section.text &&
        typeof section.name === 'string' &&
        Buffer.byteLength(section.text, 'utf8') <= MAX_SECTION_BYTES &&
        !out.sections.some((s) => s.name === section.name)
      ) {
        out.sections.push({ name: section.name.slice(0, 200), text: section.text });
      }
    } catch (error) {
      note(ctx, 'search-suggester', 'sticky section skipped', error);
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
    toolsChanged = setTimeout(() => lease.notify(Methods.toolsChanged), TOOLS_CHANGE_QUIET_MS);
    toolsChanged.unref?.();
  });
  ctx.effect(() => () => clearTimeout(toolsChanged), 'search-suggester tools/change');
}
