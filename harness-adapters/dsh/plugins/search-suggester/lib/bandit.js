// The bandit-search seed as a DeepSeek Harness plugin (row id `bandit-search`): the `search`
// tool, whose strategy (quick: one query, ≤5 results; thorough: the query and two reframings,
// concurrently, merged, ≤10) is chosen per call by Thompson sampling and never shown to the
// model, plus the seed's system-prompt steer toward it over `web_search`. It runs on DSH's own
// `ctx.web` search service, so on whatever provider the profile has (this adapter's
// search-router, or DSH's own `dsh-web-search-deepseek`):
//
//   1. `dsh/searchPlan {query}`: the sidecar classifies the query, samples the arm, and gives
//      the queries to run and their cap;
//   2. the queries run through `ctx.web.search`, concurrently, each timed;
//   3. `dsh/searchReport {runs}`: the sidecar merges and de-duplicates, computes the seed's
//      reward (quality and speed, equal halves), updates the posterior, logs the seed's
//      `[bandit-search] arm=… reward=… durationMs=… resultCount=… stats={…}` line (forwarded to
//      DSH's logger service under `bandit-search`) and records the decision. An answer from a
//      cache (the router's opt-in cache) is reported as such and never credited as fast.
//
// When the answer of the turn cites URLs a search returned, the search is re-credited with the
// answer-usage reward (`dsh/searchFeedback`, the seed's "stronger version").

import { hostImport } from './host.js';
import { MAX_QUERY_CHARS, Methods } from './core/protocol.js';
import { cutText } from './note.js';
import { citedUrls, projectSources, webResult } from './results.js';
import { banditRow } from './rows.js';
import { acquireSidecar, sharedSidecar } from './shared.js';
import { note, warn } from './warnings.js';

const tools = await hostImport('@deepseek-ai/dsh-tools').catch(() => undefined);

export const name = 'bandit-search';
export const inject = ['subprocess', 'tools', 'web', 'systemPrompt'];

/** The seed's steer, byte-exact (a system-prompt section of every session after install). */
export const STEER =
  'Prefer the search tool over web_search for web searches: it picks a quick or a thorough strategy per query and learns which pays off. Cite the returned URLs as markdown links.';
/** Default bound of the whole `search` call (its queries run concurrently), ms. */
export const SEARCH_TIMEOUT_MS = 65000;
/** Longest wait of a turn's end for its answer-usage reports, ms. */
export const FEEDBACK_TIMEOUT_MS = 2000;
/** Searches of one agent kept for the answer-usage feedback (the oldest dropped first). */
export const MAX_PENDING_FEEDBACK = 50;
/** WebError codes that say the web seam had no provider to ask (nothing to learn from). */
const OUTAGE_CODES = new Set([
  'WEB_PROVIDER_UNAVAILABLE', 'WEB_PROVIDER_CONFIGURED_MISSING', 'WEB_PROVIDER_CONFIGURED_UNAVAILABLE',
  'WEB_PROVIDER_AMBIGUOUS', 'WEB_PROVIDER_CREDENTIAL_MISSING', 'WEB_ABORTED',
]);

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

/** The tool result as the model reads it: the answer's content, then numbered sources. */
export function renderSearch(value) {
  const lines = [];
  if (value.content) lines.push(value.content, '');
  value.sources.forEach((s, i) => {
    lines.push(`${i + 1}. ${s.title ?? s.url}`, `   ${s.url}`);
    if (s.snippet) lines.push(`   ${s.snippet}`);
  });
  if (lines.length === 0) lines.push('No results.');
  return [{ type: 'text', text: lines.join('\n') }];
}

/** Whether a failed `ctx.web.search` says nothing of the search (no provider, cancelled). */
export function isOutage(error) {
  return Boolean(error?.outage) || OUTAGE_CODES.has(error?.code) || error?.name === 'AbortError';
}

/** Whether the router plugin answered `query` from its cache just now (and forget it). */
function takeCached(query) {
  const cached = sharedSidecar().cached;
  const expires = cached?.get(query);
  if (expires === undefined) return false;
  cached.delete(query);
  return expires >= Date.now();
}

/** One planned query through `ctx.web`, timed; a failure is a run with its error. */
async function runQuery(ctx, query, maxResults, signal) {
  const t0 = performance.now();
  try {
    const result = await ctx.web.search({ query, maxResults }, signal);
    const answer = webResult(result);
    return {
      query,
      sources: answer.sources.slice(0, 100),
      ...(answer.content ? { content: answer.content.slice(0, 100000) } : {}),
      truncated: answer.truncated,
      cached: takeCached(query),
      durationMs: Math.round(performance.now() - t0),
    };
  } catch (error) {
    return {
      query,
      error: cutText(String(error?.message ?? error), 4000) || 'search failed',
      outage: isOutage(error) || Boolean(signal?.aborted),
      durationMs: Math.round(performance.now() - t0),
      thrown: error,
    };
  }
}

export function apply(ctx, rawConfig) {
  try {
    install(ctx, rawConfig ?? {});
  } catch (error) {
    warn(ctx, 'bandit-search', 'bandit-search could not install; running without it', error);
  }
}

function install(ctx, raw) {
  const report = (message) => warn(ctx, 'bandit-search', message);
  const row = banditRow(raw, report);
  const timing = row.sidecar ?? {};
  const lease = acquireSidecar(ctx, 'bandit-search', timing, report);
  ctx.effect(() => () => lease.release(), 'bandit-search sidecar');
  lease.setBlock('bandit', row.bandit);
  const timeoutMs = Number.isFinite(timing.searchTimeoutMs) ? timing.searchTimeoutMs : SEARCH_TIMEOUT_MS;
  if (!tools?.defineTool) {
    warn(ctx, 'bandit-search', 'the harness\'s tool kit (@deepseek-ai/dsh-tools) is not resolvable; no search tool');
    return;
  }

  // answer-usage feedback: the searches of each agent since its last answer
  const pending = new WeakMap();
  const remember = (agent, searchId) => {
    if (!row.answerFeedback || !agent || !searchId) return;
    let list = pending.get(agent);
    if (!list) pending.set(agent, (list = []));
    list.push({ searchId });
    if (list.length > MAX_PENDING_FEEDBACK) list.shift();
  };
  // the router plugin's opt-in fan-out (web_search through dsh/search) is a bandit search too
  sharedSidecar().fanOutSearch = (agent, result) => remember(agent, result?.searchId);
  ctx.effect(() => () => {
    if (sharedSidecar().fanOutSearch) sharedSidecar().fanOutSearch = undefined;
  }, 'bandit-search fan-out feedback');

  const search = async (query, agent, signal) => {
    const q = cutText(String(query ?? '').trim(), MAX_QUERY_CHARS);
    if (!q) throw new Error('search: the query is empty');
    let plan;
    try {
      plan = await lease.request(Methods.searchPlan, { query: q }, { timeoutMs: 10000, signal, waitForStart: true });
    } catch (error) {
      if (signal?.aborted) throw error;
      // no sidecar: the seed's quick arm over ctx.web, unlearned
      note(ctx, 'bandit-search', 'sidecar unavailable; this search runs once, unlearned', error);
      const only = await runQuery(ctx, q, 5, signal);
      if (only.error) throw only.thrown;
      return { sources: only.sources.slice(0, 5), truncated: only.truncated || only.sources.length > 5, content: only.content };
    }
    const queries = (Array.isArray(plan?.queries) ? plan.queries : [q]).slice(0, 10).map((v) => cutText(String(v), MAX_QUERY_CHARS)).filter(Boolean);
    const cap = Number.isInteger(plan?.maxResults) ? plan.maxResults : 5;
    const t0 = performance.now();
    const runs = await Promise.all(queries.map((v) => runQuery(ctx, v, cap, signal)));
    const durationMs = Math.round(performance.now() - t0);
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    const wire = runs.map(({ thrown, ...run }) => run);
    let merged;
    try {
      merged = await lease.request(
        Methods.searchReport,
        { searchId: plan.searchId, runs: wire, durationMs },
        { timeoutMs: 10000, signal },
      );
    } catch (error) {
      note(ctx, 'bandit-search', 'the search could not be reported; its runs are merged here, unlearned', error);
      const answered = runs.filter((r) => !r.error);
      merged = { sources: answered.flatMap((r) => r.sources).slice(0, cap), truncated: false };
    }
    const answered = runs.filter((r) => !r.error);
    if (answered.length === 0) throw runs[0].thrown; // the original query's failure, as the seam gave it
    const sources = projectSources(merged.sources);
    remember(agent, plan.searchId);
    return { sources, truncated: Boolean(merged.truncated), content: merged.content ?? answered.find((r) => r.content)?.content };
  };

  // the bandit seed: the steer, and the `search` tool with its hidden arms
  ctx.systemPrompt.section({ name: 'tool:search', order: 111, text: STEER });
  ctx.tools.register(
    tools.defineTool({
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
          },
        },
        render: (_args, value) => renderSearch(value),
      },
      isConcurrencySafe: () => true,
      async execute(args, exec) {
        const result = await search(args?.query, exec?.agent, exec?.signal);
        return { ...(result.content ? { content: result.content } : {}), sources: result.sources, truncated: result.truncated };
      },
    }),
  );

  // the answer of the turn: which returned URLs it cites (each search reported once). The
  // event is awaited before the turn closes, so the reports land before a one-shot harness
  // exits (at most FEEDBACK_TIMEOUT_MS; a report answers in milliseconds)
  ctx.on('agent/turn-stopping', async (payload) => {
    try {
      const agent = payload?.agent;
      const list = agent ? pending.get(agent) : undefined;
      if (!list || list.length === 0) return;
      pending.delete(agent);
      // the sidecar matches them against each search's sources by normalised URL
      const usedUrls = citedUrls(finalAnswer(agent, payload?.turn), 1000);
      await Promise.all(
        list.map(({ searchId }) =>
          lease
            .request(Methods.searchFeedback, { searchId, usedUrls }, { timeoutMs: FEEDBACK_TIMEOUT_MS })
            .catch((error) => note(ctx, 'bandit-search', 'answer-usage feedback not recorded', error)),
        ),
      );
    } catch (error) {
      note(ctx, 'bandit-search', 'answer-usage feedback skipped', error);
    }
  });
}

/** The text of the turn's last assistant message (the answer), from the agent's session log. */
export function finalAnswer(agent, turn) {
  const events = agent?.session?.events;
  if (!Array.isArray(events)) return '';
  for (let i = events.length - 1, seen = 0; i >= 0 && seen < 10000; i--, seen++) {
    const event = events[i];
    if (event?.type === 'turn/start' && (turn === undefined || event.data?.turn === turn)) break;
    if (event?.type !== 'assistant/message') continue;
    if (turn !== undefined && event.data?.turn !== turn) continue;
    const content = event.data?.message?.content;
    if (!Array.isArray(content)) return '';
    return content.filter((b) => b?.type === 'text' && typeof b.text === 'string').map((b) => b.text).join('\n').slice(0, 200000);
  }
  return '';
}
