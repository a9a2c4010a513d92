// The config rows of the three plugins, read the way their seeds write them, and checked:
// an unknown key is a visible warning (with the key it most likely meant), never silence, and
// is dropped rather than sent (the sidecar would refuse the whole block for it). Values are
// checked by the sidecar (a refused block is a visible warning too, and runs on its defaults).

/** The search-router seed's row (`search-router.README.txt`, "Full schema"). */
export const ROUTER_SEED_KEYS = ['provider', 'order', 'timeoutMs', 'emptyResultsFallback', 'providers'];
/** Our opt-in extensions of the router row: the result cache (off), web_search through the
 * bandit (off: one backend query per query), the whole-chain deadline, the searches at their
 * providers at once and those that may wait for a turn. */
export const ROUTER_EXTENSION_KEYS = ['cache', 'fanOut', 'deadlineMs', 'maxConcurrentSearches', 'maxQueuedSearches'];
/** The extensions that are keys of the sidecar's router block (`fanOut` is this plugin's own). */
export const ROUTER_BLOCK_EXTENSIONS = ROUTER_EXTENSION_KEYS.filter((key) => key !== 'fanOut');
/** The providers the router knows, in the seed's canonical (zero-config) order. */
export const PROVIDERS = ['exa', 'tavily', 'brave', 'perplexity', 'deepseek', 'searxng', 'duckduckgo'];
/** The keys each provider takes (the seed: `model` where the provider has one, `baseUrlEnv`
 * for SearXNG, no key for SearXNG and DuckDuckGo). */
export const PROVIDER_KEYS = {
  exa: ['apiKey', 'apiKeyEnv', 'baseURL', 'baseUrl'],
  tavily: ['apiKey', 'apiKeyEnv', 'baseURL', 'baseUrl'],
  brave: ['apiKey', 'apiKeyEnv', 'baseURL', 'baseUrl'],
  perplexity: ['apiKey', 'apiKeyEnv', 'baseURL', 'baseUrl', 'model'],
  deepseek: ['apiKey', 'apiKeyEnv', 'baseURL', 'baseUrl', 'model'],
  searxng: ['baseURL', 'baseUrl', 'baseUrlEnv'],
  duckduckgo: ['baseURL', 'baseUrl'],
};
/** Each provider's own key variable (seed "Supported providers"). */
export const PROVIDER_KEY_ENV = {
  exa: 'EXA_API_KEY',
  tavily: 'TAVILY_API_KEY',
  brave: 'BRAVE_SEARCH_API_KEY',
  perplexity: 'PPLX_API_KEY',
  deepseek: 'DEEPSEEK_API_KEY',
};

/** The bandit row: the seed documents no knobs; these are our opt-in extensions (the sidecar's
 * `bandit` block: `contextual`, `discount`, `evidenceScale` and the rest). */
export const BANDIT_KEYS = [
  'contextual', 'discount', 'evidenceScale', 'minClassEvidence', 'seed', 'speedMs', 'qualityWeight',
  'quickMaxResults', 'thoroughMaxResults', 'feedbackWeight', 'feedbackTtlS', 'feedbackMaxPending',
  'propensitySamples', 'persist', 'decisionLogMaxBytes', 'decisionLogBackups', 'answerFeedback',
];
/** The bandit seed's own learning rule (one posterior pair for every query, stationary, the
 * plain Beta posterior): the bandit-search row's defaults; the row's keys override them. */
export const BANDIT_SEED_DEFAULTS = Object.freeze({ contextual: false, discount: 1, evidenceScale: 1 });

/** The suggester's knobs (the plan's SCHEME.md: docs/SCHEME.md): every key of the sidecar's
 * suggester block (tests/harness/test_dsh_rows.py compares them). Activation is the row's
 * `disabled: false`, not a config key; `enabled` is accepted (false turns it off). */
export const SUGGESTER_KEYS = [
  'enabled', 'cooldownCalls', 'maxNotesPerTurn', 'recentWindow', 'maxTargets', 'bias', 'logFile', 'persistPath',
  'refreshOnBoot', 'indexPath', 'learn', 'seed', 'learnWindow', 'dismissTtl', 'sectionMode', 'sectionTtl',
  'builtinPacks', 'taskLead', 'minConfidence', 'firstCallWaitMs',
];

/** The process knobs every row takes under `sidecar:` (the first plugin loaded starts it). */
export const SIDECAR_KEYS = ['command', 'startTimeoutMs', 'maxRestarts', 'restartResetMs'];
/** Per-plugin time bounds under `sidecar:`. */
export const ROUTER_TIMING_KEYS = ['searchTimeoutMs', 'startWaitMs'];
export const BANDIT_TIMING_KEYS = ['searchTimeoutMs', 'startWaitMs'];
export const SUGGESTER_TIMING_KEYS = [
  'postExecuteTimeoutMs', 'firstPostExecuteTimeoutMs', 'startWaitMs', 'sectionTimeoutMs', 'firstSectionTimeoutMs',
  'dismissTimeoutMs', 'prepareWaitMs', 'leadTimeoutMs',
];

/** Damerau-free edit distance (small strings): how far a written key is from a known one. */
export function distance(a, b) {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let prev = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[y.length];
}

/** The known key `key` most likely meant, or `undefined` (a misspelling is close, or differs
 * in case, or in one letter's plural). */
export function nearest(key, known) {
  let best;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(key, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const bound = Math.max(2, Math.floor(String(key).length / 4));
  return best !== undefined && bestDistance <= bound ? best : undefined;
}

/** The warning text for an unknown `key` of `where` (a row, or a key path). */
export function unknownKey(where, key, known) {
  const guess = nearest(String(key), known);
  const printable = JSON.stringify(String(key).slice(0, 80));
  return `${where}: unknown key ${printable}${guess ? ` (did you mean "${guess}"?)` : ''}; it is ignored`;
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Keep the `known` keys of `raw` (an object), reporting every other one. */
export function pick(raw, known, where, report) {
  const out = {};
  if (raw === undefined || raw === null) return out;
  if (!isObject(raw)) {
    report(`${where}: must be a mapping of keys; it is ignored`);
    return out;
  }
  for (const [key, value] of Object.entries(raw)) {
    if (known.includes(key)) out[key] = value;
    else report(unknownKey(where, key, known));
  }
  return out;
}

/** A row's `sidecar:` block: process knobs and this plugin's time bounds. */
export function sidecarBlock(raw, timingKeys, row, report) {
  return pick(raw, [...SIDECAR_KEYS, ...timingKeys], `${row} row, sidecar`, report);
}

/**
 * The search-router row: the seed's keys (checked: known providers and per-provider keys), our
 * extensions, and `sidecar:`. Returns `{router, fanOut, sidecar}`: `router` is the sidecar's
 * router block (the cache off unless the row turns it on: the seed caches nothing).
 */
export function routerRow(raw, report) {
  const row = pick(raw, [...ROUTER_SEED_KEYS, ...ROUTER_EXTENSION_KEYS, 'sidecar'], 'search-router row', report);
  const router = {};
  for (const key of [...ROUTER_SEED_KEYS, ...ROUTER_BLOCK_EXTENSIONS]) if (key in row) router[key] = row[key];
  if ('providers' in row) router.providers = routerProviders(row.providers, 'search-router row, providers', report);
  for (const key of ['order']) {
    if (Array.isArray(router[key])) {
      const known = router[key].filter((id) => PROVIDERS.includes(id));
      for (const id of router[key]) {
        if (!PROVIDERS.includes(id)) {
          report(`search-router row, order: unknown provider ${JSON.stringify(String(id).slice(0, 40))}${nearest(String(id), PROVIDERS) ? ` (did you mean "${nearest(String(id), PROVIDERS)}"?)` : ''}; it is left out`);
        }
      }
      router[key] = known;
    }
  }
  if ('provider' in router && 'order' in router) {
    report('search-router row: give either provider (single) or order (chain), not both; order is used');
    delete router.provider;
  }
  if (!('cache' in router)) router.cache = false; // the seed: "no caching"
  const out = { router, fanOut: row.fanOut === true };
  if (row.sidecar !== undefined) out.sidecar = sidecarBlock(row.sidecar, ROUTER_TIMING_KEYS, 'search-router', report);
  return out;
}

/** `providers:` of the router row: known ids, each with its known keys. */
export function routerProviders(raw, where, report) {
  const out = {};
  if (!isObject(raw)) {
    if (raw !== undefined) report(`${where}: must be a mapping of provider ids; it is ignored`);
    return out;
  }
  for (const [id, block] of Object.entries(raw)) {
    if (!PROVIDERS.includes(id)) {
      report(unknownKey(where, id, PROVIDERS));
      continue;
    }
    const kept = pick(block, PROVIDER_KEYS[id], `${where}.${id}`, report);
    if ('baseURL' in kept && 'baseUrl' in kept) {
      report(`${where}.${id}: give baseURL or baseUrl, not both; baseURL is used`);
      delete kept.baseUrl;
    }
    out[id] = kept;
  }
  return out;
}

/** The bandit-search row: the sidecar's bandit block (the seed's learning rule unless the row
 * says otherwise), whether answer-usage feedback is sent (default on), and `sidecar:`. */
export function banditRow(raw, report) {
  const row = pick(raw, [...BANDIT_KEYS, 'sidecar'], 'bandit-search row', report);
  const bandit = { ...BANDIT_SEED_DEFAULTS };
  for (const key of BANDIT_KEYS) if (key in row && key !== 'answerFeedback') bandit[key] = row[key];
  const out = { bandit, answerFeedback: row.answerFeedback !== false };
  if (row.sidecar !== undefined) out.sidecar = sidecarBlock(row.sidecar, BANDIT_TIMING_KEYS, 'bandit-search', report);
  return out;
}

/** The search-suggester row: the sidecar's suggester block (on: the row is active; only the
 * repository's own pack unless `builtinPacks: true`), `sidecar:`. */
export function suggesterRow(raw, report) {
  const row = pick(raw, [...SUGGESTER_KEYS, 'sidecar'], 'search-suggester row', report);
  // the seed: "a repository without a pack stays silent"; our built-in generic and language
  // packs (activated by a repository's root markers) are opt-in: `builtinPacks: true`
  const suggester = { enabled: true, builtinPacks: false };
  for (const key of SUGGESTER_KEYS) if (key in row) suggester[key] = row[key];
  if (suggester.enabled === false) {
    report('search-suggester row: enabled: false keeps it silent although the row is active (disabled: true is the way to turn it off)');
  }
  const out = { suggester };
  if (row.sidecar !== undefined) out.sidecar = sidecarBlock(row.sidecar, SUGGESTER_TIMING_KEYS, 'search-suggester', report);
  return out;
}

/**
 * The retired `search-sidecar` row (one bundle for all three seeds): its shape, mapped onto the
 * three rows that replaced it. Returns `{router, bandit, suggester, sidecar, moves}`: the blocks
 * it sets (each `undefined` when it sets none) and the migration each needs, in words.
 */
export function retiredRow(raw, report) {
  const moves = [];
  if (!isObject(raw) || Object.keys(raw).length === 0) return { moves };
  const known = ['command', 'sidecar', 'startTimeoutMs', 'searchTimeoutMs', 'postExecuteTimeoutMs', 'startWaitMs',
    'sectionTimeoutMs', 'firstSectionTimeoutMs', 'maxRestarts', 'restartResetMs'];
  const row = pick(raw, known, 'search-sidecar row (retired)', report);
  const blocks = pick(row.sidecar, ['router', 'bandit', 'suggester', 'state', 'logMessages'], 'search-sidecar row (retired), sidecar', report);
  const out = { moves };
  if (blocks.router !== undefined) {
    out.router = routerRow(blocks.router, report).router;
    moves.push('sidecar.router → the search-router row\'s config');
  }
  if (blocks.bandit !== undefined) {
    out.bandit = pick(blocks.bandit, BANDIT_KEYS, 'search-sidecar row (retired), sidecar.bandit', report);
    moves.push('sidecar.bandit → the bandit-search row\'s config');
  }
  if (blocks.suggester !== undefined) {
    // the retired row ran our built-in packs by default: kept, so the upgrade silences nothing
    out.suggester = { builtinPacks: true, ...pick(blocks.suggester, SUGGESTER_KEYS, 'search-sidecar row (retired), sidecar.suggester', report) };
    moves.push('sidecar.suggester → the search-suggester row\'s config (and disabled: false to activate it)');
  }
  const process = {};
  for (const key of ['command', 'startTimeoutMs', 'maxRestarts', 'restartResetMs']) if (key in row) process[key] = row[key];
  if (Object.keys(process).length) {
    out.sidecar = process;
    moves.push(`${Object.keys(process).join(', ')} → sidecar.${Object.keys(process)[0]} in each row`);
  }
  for (const key of ['state', 'logMessages']) if (key in blocks) moves.push(`sidecar.${key} has no row of its own any more; it is not applied`);
  return out;
}
