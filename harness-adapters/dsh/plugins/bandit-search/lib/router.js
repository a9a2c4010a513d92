// The search-router seed as a DeepSeek Harness plugin (row id `search-router`): one native
// WebSearchProvider registered into `ctx.web`, forwarding every `web_search` query to the
// sidecar's router (`dsh/routeSearch`: one backend query, the chain in order with fallback,
// the seed's aggregated error when every provider fails) — no new tool, no reranking, no cache.
// Opt-in extensions on the row: `cache` (the sidecar's result cache), `fanOut: true` (each query
// through the bandit: quick or thorough, up to three reformulated queries merged), `deadlineMs`.
// The "Search router" card of `dsh web` edits the seed's fields live (settings.js, client/).
//
// Fail-open: with the sidecar missing or dead a search goes to the harness's own provider (the
// one DSH would pick without this plugin), so removing the sidecar never breaks `web_search`.

import { hostImport } from './host.js';
import { RpcError } from './core/framing.js';
import { MAX_QUERY_CHARS, MAX_RESULTS_LIMIT, Methods } from './core/protocol.js';
import { cutText } from './note.js';
import { webResult } from './results.js';
import { routerRow } from './rows.js';
import { compositionLayer, effectiveRouter, installRouterSettings } from './settings.js';
import { acquireSidecar, sharedSidecar } from './shared.js';
import { note, warn } from './warnings.js';

const z = (await hostImport('@deepseek-ai/schemastery').catch(() => undefined))?.default;

export const name = 'search-router';
export const inject = ['subprocess', 'web'];

/** The provider id the plugin's patch selects in the `web` row. */
export const PROVIDER_ID = 'dsh-search-sidecar';
/** Default bound of one search, the chain included, ms (the router's own deadline is 60 s). */
export const SEARCH_TIMEOUT_MS = 65000;
/** How long a cache hit's note waits for the bandit plugin to read it (same process), ms. */
const CACHED_NOTE_MS = 5000;

/** Remember that `query` was answered from the router's cache (the bandit plugin, running its
 * queries through `ctx.web`, reads it: a cached 0 ms answer is never credited as fast). */
export function noteCached(query) {
  const shared = sharedSidecar();
  shared.cached ??= new Map();
  const now = Date.now();
  for (const [key, expires] of shared.cached) if (expires < now) shared.cached.delete(key);
  if (shared.cached.size < 1000) shared.cached.set(query, now + CACHED_NOTE_MS);
}

/** The `dsh/routeSearch` params of a web seam request (query cut to the sidecar's limit, never in
 * half a surrogate pair: the sidecar refuses a query holding one, -32602). */
export function routeParams(request) {
  const query = cutText(String(request?.query ?? '').trim(), MAX_QUERY_CHARS);
  const params = { query };
  const max = request?.maxResults;
  if (Number.isInteger(max) && max >= 1) params.maxResults = Math.min(max, MAX_RESULTS_LIMIT);
  return params;
}

/** Longest text of the error a failed search throws to the web seam, UTF-16 units (DSH's
 * web_search gives it to the model as the tool's error; the child is untrusted: its message was
 * passed on whole, a million characters as readily as one line). */
export const MAX_ERROR_CHARS = 4000;

/** The error a failed search throws to the web seam: the seed's aggregated, key-free text (the
 * sidecar's `-32001` message, at most {@link MAX_ERROR_CHARS}, a longer one cut and marked `…`,
 * never in half a surrogate pair), marked `outage` when nothing was configured or reachable. */
export function searchError(error) {
  const text = String(error?.message ?? '');
  const out = new Error(text.length <= MAX_ERROR_CHARS ? text : `${cutText(text, MAX_ERROR_CHARS - 1)}…`);
  out.name = 'SearchRouterError';
  out.outage = Boolean(error?.data?.outage);
  return out;
}

export function apply(ctx, rawConfig) {
  try {
    install(ctx, rawConfig ?? {});
  } catch (error) {
    // a load error is fatal to the whole DSH profile: never let one out
    warn(ctx, 'search-router', 'search-router could not install; web_search goes to the harness\'s own provider', error);
  }
}

function install(ctx, raw) {
  const report = (message) => warn(ctx, 'search-router', message);
  const row = routerRow(raw, report);
  const timing = row.sidecar ?? {};
  const lease = acquireSidecar(ctx, 'search-router', timing, report);
  ctx.effect(() => () => lease.release(), 'search-router sidecar');
  if (z !== undefined) {
    installRouterSettings(ctx, z, row.router, (block) => lease.setBlock('router', block), report);
  } else {
    note(ctx, 'search-router', 'the harness\'s schemastery is not resolvable: no settings card');
    lease.setBlock('router', effectiveRouter(compositionLayer(row.router, report), undefined, row.router));
  }
  const timeoutMs = Number.isFinite(timing.searchTimeoutMs) ? timing.searchTimeoutMs : SEARCH_TIMEOUT_MS;

  // Without a usable sidecar the web seam must behave as without this plugin, whose patch
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

  const viaSidecar = async (request, signal) => {
    if (row.fanOut) {
      // opt-in: the query through the bandit (strategy auto), reformulated by the thorough arm
      const params = { ...routeParams(request) };
      const result = await lease.request(Methods.search, params, { timeoutMs, signal, waitForStart: true });
      const initiator = ctx.get?.('agents')?.currentInitiator?.();
      sharedSidecar().fanOutSearch?.(initiator, result);
      return result;
    }
    const result = await lease.request(Methods.routeSearch, routeParams(request), { timeoutMs, signal, waitForStart: true });
    if (result?.cached) noteCached(routeParams(request).query);
    return result;
  };

  ctx.web.registerSearchProvider({
    id: PROVIDER_ID,
    available: () => lease.searchable || fallbackProvider() !== undefined,
    async search(request, signal) {
      if (lease.searchable) {
        try {
          return webResult(await viaSidecar(request, signal));
        } catch (error) {
          if (error instanceof RpcError && error.code === -32001) throw searchError(error);
          // a live sidecar's answer (bad params, a timeout) and a cancellation stand
          if (lease.usable || signal?.aborted) throw error;
        }
      }
      const other = fallbackProvider();
      if (!other) throw new Error('search-router: the sidecar is unavailable and no other web search provider is');
      note(ctx, 'search-router', 'sidecar unavailable; this web search goes to the harness\'s own provider');
      return other.search(request, signal);
    },
  });
}
