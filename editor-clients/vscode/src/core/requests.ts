/**
 * Requests of the four commands, over anything with a JSON-RPC `sendRequest(method, params)`:
 * a `vscode-languageclient` LanguageClient in the extension, a `vscode-jsonrpc`
 * MessageConnection in the tests.
 */

import {
  AssembleSectionResult,
  DismissParams,
  DismissResult,
  MAX_QUERY_CHARS,
  MAX_RESULTS_LIMIT,
  Methods,
  PostExecuteParams,
  PostExecuteResult,
  SearchParams,
  SearchResult,
  Status,
  Strategy,
  ToolCall,
} from './protocol';

/** The part of a JSON-RPC client these requests need. */
export interface RequestSender {
  sendRequest<R>(method: string, params: unknown): Promise<R>;
}

/** Options of a search; `maxResults` null/undefined = the strategy's own cap. */
export interface SearchOptions {
  maxResults?: number | null;
  strategy?: Strategy;
  deadlineMs?: number | null;
}

/**
 * `dsh/search` params for a typed query. Throws `Error` on an empty or over-long query
 * (the sidecar would refuse it with -32602 anyway; this gives the user a plain message).
 */
export function searchParams(query: string, options: SearchOptions = {}): SearchParams {
  const q = query.trim();
  if (!q) {
    throw new Error('Type something to search for.');
  }
  if (q.length > MAX_QUERY_CHARS) {
    throw new Error(`A query is at most ${MAX_QUERY_CHARS} characters (this one has ${q.length}).`);
  }
  const params: SearchParams = { query: q };
  if (options.maxResults !== undefined && options.maxResults !== null) {
    if (!Number.isInteger(options.maxResults) || options.maxResults < 1 || options.maxResults > MAX_RESULTS_LIMIT) {
      throw new Error(`maxResults must be an integer from 1 to ${MAX_RESULTS_LIMIT}.`);
    }
    params.maxResults = options.maxResults;
  }
  if (options.strategy && options.strategy !== 'auto') {
    params.strategy = options.strategy;
  }
  if (options.deadlineMs !== undefined && options.deadlineMs !== null) {
    params.deadlineMs = options.deadlineMs;
  }
  return params;
}

/** `dsh/search`: rejects with the JSON-RPC error (-32001 all providers failed, -32602 bad params). */
export function search(client: RequestSender, query: string, options: SearchOptions = {}): Promise<SearchResult> {
  return client.sendRequest<SearchResult>(Methods.search, searchParams(query, options));
}

/** `dsh/status {}`: the sidecar's open-ended status object. */
export function status(client: RequestSender): Promise<Status> {
  return client.sendRequest<Status>(Methods.status, {});
}

/** Which input field each tool class reads (sidecar `server/suggester/probe.py`). */
const TOOL_FIELD: Record<string, string> = {
  grep: 'pattern', search: 'pattern', rg: 'pattern', ripgrep: 'pattern',
  glob: 'pattern', find: 'pattern', ls: 'pattern', list: 'pattern',
  read: 'path', view: 'path', cat: 'path', open: 'path',
  bash: 'command', shell: 'command', exec: 'command', run: 'command',
};

/** The tools offered by "What would the suggester say?" (the suggester's four search classes). */
export const SUGGEST_TOOLS = ['grep', 'glob', 'read', 'bash'] as const;

/**
 * Build the tool call the user means: `text` is either a JSON object (the tool's whole input)
 * or plain text put in the tool's main field (`grep`/`glob` → pattern, `read` → path,
 * `bash` → command, anything else → pattern). Throws `Error` on an empty tool or text, or on
 * JSON that is not an object.
 */
export function buildToolCall(tool: string, text: string): ToolCall {
  const name = tool.trim();
  if (!name) {
    throw new Error('Name a tool (grep, glob, read or bash).');
  }
  const body = text.trim();
  if (!body) {
    throw new Error('Type what the tool was called with (a pattern, a path, a command or a JSON object).');
  }
  if (body.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (e) {
      throw new Error(`The input is not valid JSON: ${(e as Error).message}`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new Error('The JSON input must be an object, e.g. {"pattern": "__version__"}.');
    }
    return { name, input: parsed as Record<string, unknown> };
  }
  const field = TOOL_FIELD[name.toLowerCase()] ?? 'pattern';
  return { name, input: { [field]: body } };
}

let suggestCounter = 0;

/**
 * `dsh/postExecute` params for one "what would it say?" question. Each question is a fresh
 * session (turn 0), so the answer is what an agent starting now would be told; dismissals
 * still apply because they are not per session.
 */
export function suggestParams(tool: string, text: string, sessionPrefix = 'editor'): PostExecuteParams {
  suggestCounter += 1;
  return {
    sessionId: `${sessionPrefix}-${process.pid}-${Date.now()}-${suggestCounter}`,
    turn: 0,
    tool: buildToolCall(tool, text),
  };
}

/** `dsh/postExecute` for a typed tool call (see {@link buildToolCall}). */
export function suggest(client: RequestSender, tool: string, text: string, sessionPrefix = 'editor'): Promise<PostExecuteResult> {
  return client.sendRequest<PostExecuteResult>(Methods.postExecute, suggestParams(tool, text, sessionPrefix));
}

/** `dsh/dismiss` params; an empty path means the whole family. Throws `Error` on an empty family. */
export function dismissParams(family: string, path?: string): DismissParams {
  const f = family.trim();
  if (!f) {
    throw new Error('Name the suggestion family to dismiss (e.g. Version).');
  }
  const params: DismissParams = { family: f };
  const p = path?.trim();
  if (p) {
    params.path = p;
  }
  return params;
}

/** `dsh/dismiss`: silences a family (or one path of it) until the returned `expiresAt`. */
export function dismiss(client: RequestSender, family: string, path?: string): Promise<DismissResult> {
  return client.sendRequest<DismissResult>(Methods.dismiss, dismissParams(family, path));
}

/** `dsh/postExecute` for a tool call the harness ran (the DSH bundle's post-execute listener). */
export function postExecute(client: RequestSender, params: PostExecuteParams): Promise<PostExecuteResult> {
  return client.sendRequest<PostExecuteResult>(Methods.postExecute, params);
}

/** `dsh/assembleSection`: the sticky section, `section: null` while sticky mode is off. */
export function assembleSection(client: RequestSender, sessionId?: string): Promise<AssembleSectionResult> {
  return client.sendRequest<AssembleSectionResult>(Methods.assembleSection, sessionId ? { sessionId } : {});
}
