// Search results on their way to the model: projected onto DSH's `WebSearchSource` shape and
// bounded (the sources come from a provider, and through a child process: untrusted sizes).

/** Most sources one answer carries (the sidecar's own limit for `maxResults`). */
export const MAX_SOURCES = 50;
/** Longest title, snippet and URL kept, characters (a longer one is cut, marked with `…`). */
export const MAX_TITLE_CHARS = 500;
export const MAX_SNIPPET_CHARS = 2000;
export const MAX_URL_CHARS = 4000;
/** Longest answer `content` kept (a provider's own summary, e.g. Perplexity's), characters. */
export const MAX_CONTENT_CHARS = 20000;

function cut(text, max) {
  if (typeof text !== 'string' || !text) return undefined;
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `sources` as DSH's WebSearchSource list: only string fields, each bounded, at most
 * {@link MAX_SOURCES}, a source without a URL dropped. */
export function projectSources(sources) {
  const out = [];
  for (const s of Array.isArray(sources) ? sources : []) {
    if (out.length >= MAX_SOURCES) break;
    if (!s || typeof s.url !== 'string' || !s.url || s.url.length > MAX_URL_CHARS) continue;
    const title = cut(s.title, MAX_TITLE_CHARS);
    const snippet = cut(s.snippet, MAX_SNIPPET_CHARS);
    const publishedAt = cut(s.publishedAt, 100);
    out.push({ url: s.url, ...(title ? { title } : {}), ...(snippet ? { snippet } : {}), ...(publishedAt ? { publishedAt } : {}) });
  }
  return out;
}

/** A search answer as DSH's WebSearchResult (`content` bounded, `truncated` a boolean). */
export function webResult(result) {
  const content = cut(result?.content, MAX_CONTENT_CHARS);
  const sources = projectSources(result?.sources);
  const dropped = Array.isArray(result?.sources) && result.sources.length > sources.length;
  return { ...(content ? { content } : {}), sources, truncated: Boolean(result?.truncated) || dropped };
}

/** The URLs an answer's text cites (plain or markdown links), trailing punctuation dropped. */
export function citedUrls(text, max = 200) {
  const out = [];
  const seen = new Set();
  if (typeof text !== 'string') return out;
  for (const match of text.matchAll(/https?:\/\/[^\s<>"'`\]\[)(]+/g)) {
    const url = match[0].replace(/[.,;:!?*_]+$/, '');
    if (!seen.has(url)) {
      seen.add(url);
      out.push(url);
      if (out.length >= max) break;
    }
  }
  return out;
}
