"use strict";
/**
 * The sidecar's JSON-RPC methods and their wire shapes (camelCase): the types generated
 * from the sidecar's `protocol/dsh_protocol/models.py` (`wire.ts`) plus the client-side names.
 *
 * This module and everything under `src/core/` never import `vscode`: the extension and the
 * Node tests share them, and the tests drive the real sidecar through `vscode-jsonrpc`.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.INVALID_PARAMS = exports.ALL_PROVIDERS_FAILED = exports.Methods = exports.MIN_DEADLINE_MS = exports.Method = exports.MAX_RESULTS_LIMIT = exports.MAX_QUERY_CHARS = exports.MAX_DEADLINE_MS = exports.ErrorCode = void 0;
const wire_1 = require("./wire");
var wire_2 = require("./wire");
Object.defineProperty(exports, "ErrorCode", { enumerable: true, get: function () { return wire_2.ErrorCode; } });
Object.defineProperty(exports, "MAX_DEADLINE_MS", { enumerable: true, get: function () { return wire_2.MAX_DEADLINE_MS; } });
Object.defineProperty(exports, "MAX_QUERY_CHARS", { enumerable: true, get: function () { return wire_2.MAX_QUERY_CHARS; } });
Object.defineProperty(exports, "MAX_RESULTS_LIMIT", { enumerable: true, get: function () { return wire_2.MAX_RESULTS_LIMIT; } });
Object.defineProperty(exports, "Method", { enumerable: true, get: function () { return wire_2.Method; } });
Object.defineProperty(exports, "MIN_DEADLINE_MS", { enumerable: true, get: function () { return wire_2.MIN_DEADLINE_MS; } });
/** JSON-RPC method names the clients send (a view of the generated `Method`). */
exports.Methods = {
    search: wire_1.Method.SEARCH,
    searchFeedback: wire_1.Method.SEARCH_FEEDBACK,
    routeSearch: wire_1.Method.ROUTE_SEARCH,
    searchPlan: wire_1.Method.SEARCH_PLAN,
    searchReport: wire_1.Method.SEARCH_REPORT,
    status: wire_1.Method.STATUS,
    postExecute: wire_1.Method.POST_EXECUTE,
    dismiss: wire_1.Method.DISMISS,
    assembleSection: wire_1.Method.ASSEMBLE_SECTION,
    taskLead: wire_1.Method.TASK_LEAD,
    toolsChanged: wire_1.Method.TOOLS_CHANGED,
    logMessage: wire_1.Method.LOG_MESSAGE,
};
/** `dsh/search` failed in every provider (sidecar `protocol/errors.py`). */
exports.ALL_PROVIDERS_FAILED = wire_1.ErrorCode.SEARCH_FAILED;
/** JSON-RPC "invalid params": the message names the offending field. */
exports.INVALID_PARAMS = wire_1.ErrorCode.INVALID_PARAMS;
