/**
 * The sidecar's JSON-RPC methods and their wire shapes (camelCase), mirrored from the
 * sidecar's `protocol/models.py` and README "How a harness talks to it".
 *
 * This module and everything under `src/core/` never import `vscode`: the extension and the
 * Node tests share them, and the tests drive the real sidecar through `vscode-jsonrpc`.
 */

/** JSON-RPC method names (sidecar `protocol/methods.py`). */
export const Methods = {
  search: 'dsh/search',
  status: 'dsh/status',
  postExecute: 'dsh/postExecute',
  dismiss: 'dsh/dismiss',
  logMessage: 'window/logMessage',
} as const;

/** `dsh/search` failed in every provider (sidecar `protocol/errors.py`). */
export const ALL_PROVIDERS_FAILED = -32001;
/** JSON-RPC "invalid params": the message names the offending field. */
export const INVALID_PARAMS = -32602;

/** Bounds of `dsh/search` params, from the sidecar's `protocol/models.py`. */
export const MAX_RESULTS_LIMIT = 50;
export const MAX_QUERY_CHARS = 2000;

export type Strategy = 'auto' | 'quick' | 'thorough';

export interface SearchParams {
  query: string;
  maxResults?: number;
  strategy?: Strategy;
  deadlineMs?: number;
}

export interface Source {
  url: string;
  title?: string;
  snippet?: string;
  publishedAt?: string;
}

export interface Attempt {
  provider: string;
  outcome: string;
  ms: number;
}

export interface SearchResult {
  searchId: string;
  strategy: 'quick' | 'thorough';
  sources: Source[];
  content?: string;
  truncated: boolean;
  attempts: Attempt[];
  durationMs: number;
  reward: number;
}

export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
}

export interface PostExecuteParams {
  sessionId: string;
  turn: number;
  tool: ToolCall;
}

export interface NoteSource {
  kind: string;
  form: string;
  summary: string;
  intent: string;
  targets: string[];
}

export interface AdditionalContext {
  source: NoteSource;
  text: string;
}

export interface PostExecuteResult {
  additionalContexts: AdditionalContext[];
}

export interface DismissParams {
  family: string;
  path?: string;
}

export interface DismissResult {
  record: string;
  expiresAt: string;
}

/** `window/logMessage` params (LSP): `type` 1 error, 2 warning, 3 info, 4 log, 5 debug. */
export interface LogMessageParams {
  type: number;
  message: string;
}

/** `dsh/status` is open-ended (it grows as the sidecar grows): render it defensively. */
export type Status = Record<string, unknown>;
