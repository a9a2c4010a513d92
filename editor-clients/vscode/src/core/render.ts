/**
 * Rendering of the sidecar's results for people: quick-pick items, the status page (HTML for a
 * webview), the suggester's note, the dismissal, and log lines. Pure functions of the wire
 * objects; every field is treated as untrusted (missing, wrong type, extra keys) and every
 * string is HTML-escaped.
 */

import {
  ALL_PROVIDERS_FAILED,
  DismissResult,
  LogMessageParams,
  PostExecuteResult,
  SearchResult,
  Status,
} from './protocol';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** Longest snippet shown under a quick-pick item, characters. */
export const SNIPPET_CHARS = 200;

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** One quick-pick row: `label` title (or URL), `description` host, `detail` snippet, `url` to open. */
export interface SearchItem {
  label: string;
  description: string;
  detail: string;
  url: string;
}

/** The sources of a search as quick-pick rows, in the sidecar's order; sources without a URL are dropped. */
export function searchItems(result: SearchResult): SearchItem[] {
  const sources = Array.isArray(result?.sources) ? result.sources : [];
  return sources
    .filter((s) => isObj(s) && str(s.url))
    .map((s) => {
      const date = str(s.publishedAt) ? `${str(s.publishedAt).slice(0, 10)} · ` : '';
      return {
        label: clip(str(s.title) || s.url, 120),
        description: hostOf(s.url),
        detail: clip(date + str(s.snippet), SNIPPET_CHARS),
        url: s.url,
      };
    });
}

/** `searxng=ok (12 ms), duckduckgo=HTTP 403 (40 ms)`: each provider attempt of a search or an error. */
export function attemptsLine(attempts: unknown): string {
  if (!Array.isArray(attempts)) {
    return '';
  }
  return attempts
    .filter(isObj)
    .map((a) => `${str(a.provider) || '?'}=${str(a.outcome) || '?'}${num(a.ms) !== undefined ? ` (${num(a.ms)} ms)` : ''}`)
    .join(', ');
}

/** One line for the quick pick's title: `quick · 5 results (truncated) · 120 ms · reward 0.912 · searxng=ok (12 ms)`. */
export function searchSummary(result: SearchResult): string {
  const n = Array.isArray(result?.sources) ? result.sources.length : 0;
  const parts = [
    str(result?.strategy) || '?',
    `${n} result${n === 1 ? '' : 's'}${result?.truncated === true ? ' (truncated)' : ''}`,
  ];
  if (num(result?.durationMs) !== undefined) {
    parts.push(`${result.durationMs} ms`);
  }
  if (num(result?.reward) !== undefined) {
    parts.push(`reward ${result.reward.toFixed(3)}`);
  }
  const attempts = attemptsLine(result?.attempts);
  if (attempts) {
    parts.push(attempts);
  }
  return parts.join(' · ');
}

/**
 * The text to show for a failed request: a JSON-RPC error's message (for -32001 the sidecar's
 * aggregated, key-free text, one line per provider), else the error's message.
 */
export function errorText(error: unknown): string {
  if (isObj(error) || error instanceof Error) {
    const e = error as Obj;
    const message = str(e.message) || 'unknown error';
    if (e.code === ALL_PROVIDERS_FAILED) {
      return message;
    }
    if (typeof e.code === 'number') {
      return `${message} (JSON-RPC error ${e.code})`;
    }
    return message;
  }
  return String(error);
}

/**
 * What the suggester said, for a message box: `title` one line, `text` the note, `targets` the
 * exact paths (to open) and `labels` their display forms (to show: a file name with a line break,
 * a control or a bidi character must not forge a button), index for index.
 */
export interface SuggestionView {
  said: boolean;
  title: string;
  text: string;
  targets: string[];
  labels: string[];
}

/**
 * A path as it may be shown: C0/C1 controls, DEL, line/paragraph separators, bidi controls and
 * zero-width characters as `\\uXXXX` (a sidecar without `displayTargets` sent the raw name).
 */
export function displayPath(path: string): string {
  // eslint-disable-next-line no-control-regex
  return path.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g, (c) =>
    `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The text shown when the suggester stays silent. */
export const SILENCE =
  'The suggester stays silent for this call: no intent matched, or the suggestion was dismissed, ' +
  'or the suggester is disabled (dsh.suggester.enabled / suggester.enabled).';

/** Render a `dsh/postExecute` result (at most one note; an empty list is silence). */
export function renderSuggestion(result: PostExecuteResult): SuggestionView {
  const notes = Array.isArray(result?.additionalContexts) ? result.additionalContexts.filter(isObj) : [];
  if (notes.length === 0) {
    return { said: false, title: 'The suggester would say nothing.', text: SILENCE, targets: [], labels: [] };
  }
  const source: Obj = isObj(notes[0].source) ? notes[0].source : {};
  const raw: unknown[] = Array.isArray(source.targets) ? source.targets : [];
  const shown: unknown[] = Array.isArray(source.displayTargets) ? source.displayTargets : [];
  const targets: string[] = [];
  const labels: string[] = [];
  raw.forEach((t, i) => {
    if (typeof t === 'string') {
      targets.push(t);
      const label = shown[i];
      labels.push(typeof label === 'string' ? displayPath(label) : displayPath(t));
    }
  });
  const intent = str(source.intent);
  return {
    said: true,
    title: `The suggester would say${intent ? ` (${intent})` : ''}: ${str(source.summary)}`,
    text: notes.map((n) => str(n.text)).join('\n\n'),
    targets,
    labels,
  };
}

/** `Dismissed until 2026-12-01T04:54:26Z (dismissed Version *).` */
export function renderDismiss(result: DismissResult): string {
  return `Dismissed until ${str(result?.expiresAt) || '?'} (${str(result?.record) || 'no record'}).`;
}

const LEVELS: Record<number, string> = { 1: 'error', 2: 'warning', 5: 'debug' };

/**
 * A `window/logMessage` as one Output-channel line. Info and log lines (the ledger and
 * `[bandit-search]` lines) stay byte-exact; errors, warnings and debug get a `[level] ` prefix.
 */
export function formatLogLine(params: LogMessageParams): string {
  const message = str(params?.message);
  const level = LEVELS[params?.type];
  return level ? `[${level}] ${message}` : message;
}

// --------------------------------------------------------------------------- status page

/** Escape text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) {
    return '—';
  }
  if (typeof v === 'boolean') {
    return v ? 'yes' : 'no';
  }
  if (typeof v === 'number' || typeof v === 'string') {
    return escapeHtml(String(v));
  }
  return '';
}

/** Any JSON value as HTML: scalars escaped, lists of scalars comma-joined, objects as nested lists. */
export function valueHtml(v: unknown, depth = 0): string {
  if (depth > 6) {
    return '…';
  }
  if (Array.isArray(v)) {
    if (v.length === 0) {
      return '<span class="none">none</span>';
    }
    if (v.every((x) => !isObj(x) && !Array.isArray(x))) {
      return v.map(scalar).join(', ');
    }
    if (v.every(isObj)) {
      return tableHtml(v as Obj[], depth + 1);
    }
    return `<ul>${v.map((x) => `<li>${valueHtml(x, depth + 1)}</li>`).join('')}</ul>`;
  }
  if (isObj(v)) {
    const keys = Object.keys(v);
    if (keys.length === 0) {
      return '<span class="none">none</span>';
    }
    return `<dl>${keys.map((k) => `<dt>${escapeHtml(k)}</dt><dd>${valueHtml(v[k], depth + 1)}</dd>`).join('')}</dl>`;
  }
  return scalar(v);
}

/** A list of objects as a table whose columns are the union of their keys (first-seen order). */
export function tableHtml(rows: Obj[], depth = 0, first: string[] = []): string {
  const columns: string[] = [];
  for (const key of [...first, ...rows.flatMap((r) => Object.keys(r))]) {
    if (!columns.includes(key)) {
      columns.push(key);
    }
  }
  const head = columns.map((c) => `<th>${escapeHtml(c)}</th>`).join('');
  const body = rows
    .map((r) => `<tr>${columns.map((c) => `<td>${valueHtml(r[c], depth + 1)}</td>`).join('')}</tr>`)
    .join('');
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** One Beta posterior found in the bandit's status: `cls` is the path of keys above the arm. */
export interface PosteriorRow {
  cls: string;
  arm: string;
  alpha: number;
  beta: number;
  mean: number;
  /** Scalar fields beside the arms in the same object (e.g. a class's `evidence`). */
  extra: Record<string, unknown>;
}

function isPosterior(v: unknown): v is Obj {
  return isObj(v) && num(v.alpha) !== undefined && num(v.beta) !== undefined;
}

/**
 * Every `{alpha, beta}` object under the bandit's status, wherever it sits (`arms.quick`,
 * per-class tables such as `classes.factoid.quick`, whatever the sidecar grows next), in the
 * order found. `mean` is the one reported, else α/(α+β).
 */
export function posteriors(bandit: unknown): PosteriorRow[] {
  const rows: PosteriorRow[] = [];
  const walk = (node: unknown, path: string[]): void => {
    if (!isObj(node) || path.length > 6) {
      return;
    }
    const extra: Obj = {};
    for (const [k, v] of Object.entries(node)) {
      if (!isObj(v) && !Array.isArray(v)) {
        extra[k] = v;
      }
    }
    const cls = path.filter((p) => p !== 'arms' && p !== 'posteriors' && p !== 'classes').join(' / ');
    for (const [k, v] of Object.entries(node)) {
      if (isPosterior(v)) {
        const alpha = num(v.alpha) as number;
        const beta = num(v.beta) as number;
        const mean = num(v.mean) ?? (alpha + beta > 0 ? alpha / (alpha + beta) : 0);
        rows.push({ cls, arm: k, alpha, beta, mean, extra: path.length ? extra : {} });
      } else {
        walk(v, [...path, k]);
      }
    }
  };
  walk(bandit, []);
  return rows;
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(3);
}

function posteriorTable(rows: PosteriorRow[]): string {
  const withClass = rows.some((r) => r.cls);
  const extras: string[] = [];
  for (const key of rows.flatMap((r) => Object.keys(r.extra))) {
    if (!extras.includes(key)) {
      extras.push(key);
    }
  }
  const head =
    `${withClass ? '<th>class</th>' : ''}<th>arm</th><th>α</th><th>β</th><th>mean</th><th></th>` +
    extras.map((k) => `<th>${escapeHtml(k)}</th>`).join('');
  const body = rows
    .map((r) => {
      const pct = Math.max(0, Math.min(100, r.mean * 100)).toFixed(1);
      return (
        `<tr>${withClass ? `<td>${escapeHtml(r.cls || 'all')}</td>` : ''}<td>${escapeHtml(r.arm)}</td>` +
        `<td class="n">${fmt(r.alpha)}</td><td class="n">${fmt(r.beta)}</td><td class="n">${r.mean.toFixed(3)}</td>` +
        `<td><div class="bar"><div style="width:${pct}%"></div></div></td>` +
        extras.map((k) => `<td>${k in r.extra ? valueHtml(r.extra[k], 1) : ''}</td>`).join('') +
        '</tr>'
      );
    })
    .join('');
  return `<table class="posteriors"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

function fields(obj: Obj, skip: string[]): string {
  const rest = Object.keys(obj).filter((k) => !skip.includes(k));
  if (rest.length === 0) {
    return '';
  }
  return `<dl>${rest.map((k) => `<dt>${escapeHtml(k)}</dt><dd>${valueHtml(obj[k], 1)}</dd>`).join('')}</dl>`;
}

function routerSection(router: Obj): string {
  // provider health (a list of records keyed by provider) joins the chain table
  const health = Array.isArray(router.health) && router.health.every((h) => isObj(h) && str(h.provider)) ? (router.health as Obj[]) : null;
  const chain = (Array.isArray(router.chain) ? router.chain.filter(isObj) : []).map((c) => {
    const h = health?.find((x) => x.provider === c.provider);
    return h ? { ...c, ...h, provider: c.provider } : c;
  });
  const parts = ['<h2>Router</h2>'];
  parts.push(
    chain.length
      ? `<p>Provider chain, tried in order, with each provider's health:</p>${tableHtml(chain, 0, ['provider', 'baseUrl', 'state'])}`
      : '<p class="warn">No provider configured: searches will fail.</p>',
  );
  // each provider named but not used, with why: a malformed setting's reason is its health
  // record's last outcome (``skipped: invalid config ($VAR: …)``); otherwise no key or endpoint
  const unavailable = Array.isArray(router.unavailable) ? router.unavailable : [];
  if (unavailable.length) {
    const why = (pid: unknown): string => str(health?.find((h) => h.provider === pid)?.lastOutcome) || 'not configured (no key or endpoint)';
    const items = unavailable.map((pid) => `<li>${valueHtml(pid, 1)}: ${escapeHtml(why(pid))}</li>`).join('');
    parts.push(`<p>Not used:</p><ul class="unavailable">${items}</ul>`);
  }
  parts.push(fields(router, health ? ['chain', 'unavailable', 'health'] : ['chain', 'unavailable']));
  return parts.join('\n');
}

function banditSection(bandit: Obj): string {
  const rows = posteriors(bandit);
  const parts = ['<h2>Bandit</h2>'];
  parts.push(
    rows.length
      ? `<p>Beta posteriors of each arm (mean = expected reward):</p>${posteriorTable(rows)}`
      : '<p class="none">No posteriors reported.</p>',
  );
  const skip = Object.keys(bandit).filter((k) => isPosterior(bandit[k]) || posteriors(bandit[k]).length > 0);
  parts.push(fields(bandit, skip));
  return parts.join('\n');
}

function suggesterSection(sg: Obj): string {
  const parts = ['<h2>Suggester</h2>'];
  parts.push(`<p>${sg.enabled === true ? 'Enabled' : '<span class="warn">Disabled</span> (set suggester.enabled: true)'}</p>`);
  if (isObj(sg.counters)) {
    const counters = Object.entries(sg.counters);
    parts.push(
      `<table class="counters"><thead><tr>${counters.map(([k]) => `<th>${escapeHtml(k)}</th>`).join('')}</tr></thead>` +
        `<tbody><tr>${counters.map(([, v]) => `<td class="n">${valueHtml(v, 1)}</td>`).join('')}</tr></tbody></table>`,
    );
  }
  const errors = Array.isArray(sg.packErrors) ? sg.packErrors : [];
  if (errors.length) {
    parts.push(`<p class="warn">Pack errors:</p><ul>${errors.map((e) => `<li>${valueHtml(e, 1)}</li>`).join('')}</ul>`);
  }
  parts.push(fields(sg, ['enabled', 'counters', 'packErrors']));
  return parts.join('\n');
}

const STYLE = `
body { font-family: var(--vscode-font-family, system-ui, sans-serif); font-size: 13px; margin: 1.2em;
  color: var(--vscode-foreground, #222); background: var(--vscode-editor-background, #fff); }
h1 { font-size: 1.4em; margin: 0 0 .6em; } h2 { font-size: 1.15em; margin: 1.4em 0 .4em; border-bottom: 1px solid #8884; }
table { border-collapse: collapse; margin: .3em 0; } th, td { border: 1px solid #8886; padding: 2px 8px; text-align: left; vertical-align: top; }
th { background: #8882; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; margin: .3em 0; } dt { font-weight: 600; } dd { margin: 0; }
.bar { width: 120px; height: 10px; background: #8883; } .bar div { height: 10px; background: #3a7bd5; }
.warn { color: #c05000; } .none { color: #888; }
`;

/**
 * The whole `dsh/status` as a self-contained HTML page (no scripts; a CSP allows inline styles
 * only): sidecar facts, the router's chain, the bandit's posteriors, the suggester's counters,
 * and any other top-level field generically.
 */
export function renderStatusHtml(status: Status): string {
  const s: Obj = isObj(status) ? status : {};
  const sections: string[] = [];
  const facts: Obj = {};
  for (const key of ['version', 'workspace']) {
    if (key in s) {
      facts[key] = s[key];
    }
  }
  if (isObj(s.state)) {
    Object.assign(facts, s.state);
  }
  sections.push(`<h2>Sidecar</h2>${fields(facts, [])}`);
  if (isObj(s.router)) {
    sections.push(routerSection(s.router));
  }
  if (isObj(s.bandit)) {
    sections.push(banditSection(s.bandit));
  }
  if (isObj(s.suggester)) {
    sections.push(suggesterSection(s.suggester));
  }
  const known = ['version', 'workspace', 'state', 'router', 'bandit', 'suggester'];
  const other = fields(s, known);
  if (other) {
    sections.push(`<h2>Other</h2>${other}`);
  }
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';">`,
    `<title>DSH sidecar status</title><style>${STYLE}</style></head>`,
    `<body><h1>DSH sidecar status</h1>\n${sections.join('\n')}\n</body></html>`,
  ].join('\n');
}
