/**
 * The sidecar's JSON-RPC methods and their wire shapes (camelCase): the types generated
 * from the sidecar's `protocol/dsh_protocol/models.py` (`wire.ts`) plus the client-side names.
 *
 * This module and everything under `src/core/` never import `vscode`: the extension and the
 * Node tests share them, and the tests drive the real sidecar through `vscode-jsonrpc`.
 */

import { ErrorCode, Method, SearchParams } from './wire';

/**
 * The wire types are generated from the sidecar's pydantic models (`wire.ts`, by
 * `python -m dsh_protocol.typescript`; CI fails when it drifts): this module re-exports them
 * under the names the clients use.
 */
export type {
  AdditionalContext,
  AssembleSectionParams,
  AssembleSectionResult,
  Attempt,
  DismissParams,
  DismissResult,
  NoteSource,
  PostExecuteParams,
  PostExecuteResult,
  RouteSearchParams,
  RouteSearchResult,
  SearchFeedbackParams,
  SearchFeedbackResult,
  SearchParams,
  SearchPlanParams,
  SearchPlanResult,
  SearchReportParams,
  SearchReportResult,
  SearchResult,
  SearchRun,
  Section,
  Source,
  ToolCall,
  ToolResult,
} from './wire';
export { ErrorCode, MAX_DEADLINE_MS, MAX_QUERY_CHARS, MAX_RESULTS_LIMIT, Method, MIN_DEADLINE_MS } from './wire';

/** JSON-RPC method names the clients send (a view of the generated `Method`). */
export const Methods = {
  search: Method.SEARCH,
  searchFeedback: Method.SEARCH_FEEDBACK,
  routeSearch: Method.ROUTE_SEARCH,
  searchPlan: Method.SEARCH_PLAN,
  searchReport: Method.SEARCH_REPORT,
  status: Method.STATUS,
  postExecute: Method.POST_EXECUTE,
  dismiss: Method.DISMISS,
  assembleSection: Method.ASSEMBLE_SECTION,
  taskLead: Method.TASK_LEAD,
  toolsChanged: Method.TOOLS_CHANGED,
  logMessage: Method.LOG_MESSAGE,
} as const;

/** `dsh/search` failed in every provider (sidecar `protocol/errors.py`). */
export const ALL_PROVIDERS_FAILED = ErrorCode.SEARCH_FAILED;
/** JSON-RPC "invalid params": the message names the offending field. */
export const INVALID_PARAMS = ErrorCode.INVALID_PARAMS;

export type Strategy = NonNullable<SearchParams['strategy']>;

/** `window/logMessage` params (LSP): `type` 1 error, 2 warning, 3 info, 4 log, 5 debug. */
export interface LogMessageParams {
  type: number;
  message: string;
}

/** `dsh/status` is open-ended (it grows as the sidecar grows): render it defensively. */
export type Status = Record<string, unknown>;
