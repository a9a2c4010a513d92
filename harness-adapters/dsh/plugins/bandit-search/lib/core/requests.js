"use strict";
/**
 * Requests of the four commands, over anything with a JSON-RPC `sendRequest(method, params)`:
 * a `vscode-languageclient` LanguageClient in the extension, a `vscode-jsonrpc`
 * MessageConnection in the tests.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.SUGGEST_TOOLS = void 0;
exports.searchParams = searchParams;
exports.search = search;
exports.status = status;
exports.buildToolCall = buildToolCall;
exports.suggestParams = suggestParams;
exports.suggest = suggest;
exports.dismissParams = dismissParams;
exports.dismiss = dismiss;
exports.postExecute = postExecute;
exports.assembleSection = assembleSection;
const protocol_1 = require("./protocol");
/**
 * `dsh/search` params for a typed query. Throws `Error` on an empty or over-long query
 * (the sidecar would refuse it with -32602 anyway; this gives the user a plain message).
 */
function searchParams(query, options = {}) {
    const q = query.trim();
    if (!q) {
        throw new Error('Type something to search for.');
    }
    if (q.length > protocol_1.MAX_QUERY_CHARS) {
        throw new Error(`A query is at most ${protocol_1.MAX_QUERY_CHARS} characters (this one has ${q.length}).`);
    }
    const params = { query: q };
    if (options.maxResults !== undefined && options.maxResults !== null) {
        if (!Number.isInteger(options.maxResults) || options.maxResults < 1 || options.maxResults > protocol_1.MAX_RESULTS_LIMIT) {
            throw new Error(`maxResults must be an integer from 1 to ${protocol_1.MAX_RESULTS_LIMIT}.`);
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
function search(client, query, options = {}) {
    return client.sendRequest(protocol_1.Methods.search, searchParams(query, options));
}
/** `dsh/status {}`: the sidecar's open-ended status object. */
function status(client) {
    return client.sendRequest(protocol_1.Methods.status, {});
}
/** Which input field each tool class reads (sidecar `server/suggester/probe.py`). */
const TOOL_FIELD = {
    grep: 'pattern', search: 'pattern', rg: 'pattern', ripgrep: 'pattern',
    glob: 'pattern', find: 'pattern', ls: 'pattern', list: 'pattern',
    read: 'path', view: 'path', cat: 'path', open: 'path',
    bash: 'command', shell: 'command', exec: 'command', run: 'command',
};
/** The tools offered by "What would the suggester say?" (the suggester's four search classes). */
exports.SUGGEST_TOOLS = ['grep', 'glob', 'read', 'bash'];
/**
 * Build the tool call the user means: `text` is either a JSON object (the tool's whole input)
 * or plain text put in the tool's main field (`grep`/`glob` → pattern, `read` → path,
 * `bash` → command, anything else → pattern). Throws `Error` on an empty tool or text, or on
 * JSON that is not an object.
 */
function buildToolCall(tool, text) {
    const name = tool.trim();
    if (!name) {
        throw new Error('Name a tool (grep, glob, read or bash).');
    }
    const body = text.trim();
    if (!body) {
        throw new Error('Type what the tool was called with (a pattern, a path, a command or a JSON object).');
    }
    if (body.startsWith('{')) {
        let parsed;
        try {
            parsed = JSON.parse(body);
        }
        catch (e) {
            throw new Error(`The input is not valid JSON: ${e.message}`);
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
            throw new Error('The JSON input must be an object, e.g. {"pattern": "__version__"}.');
        }
        return { name, input: parsed };
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
function suggestParams(tool, text, sessionPrefix = 'editor') {
    suggestCounter += 1;
    return {
        sessionId: `${sessionPrefix}-${process.pid}-${Date.now()}-${suggestCounter}`,
        turn: 0,
        tool: buildToolCall(tool, text),
    };
}
/** `dsh/postExecute` for a typed tool call (see {@link buildToolCall}). */
function suggest(client, tool, text, sessionPrefix = 'editor') {
    return client.sendRequest(protocol_1.Methods.postExecute, suggestParams(tool, text, sessionPrefix));
}
/** `dsh/dismiss` params; an empty path means the whole family. Throws `Error` on an empty family. */
function dismissParams(family, path) {
    const f = family.trim();
    if (!f) {
        throw new Error('Name the suggestion family to dismiss (e.g. Version).');
    }
    const params = { family: f };
    const p = path?.trim();
    if (p) {
        params.path = p;
    }
    return params;
}
/** `dsh/dismiss`: silences a family (or one path of it) until the returned `expiresAt`. */
function dismiss(client, family, path) {
    return client.sendRequest(protocol_1.Methods.dismiss, dismissParams(family, path));
}
/** `dsh/postExecute` for a tool call the harness ran (the DSH bundle's post-execute listener). */
function postExecute(client, params) {
    return client.sendRequest(protocol_1.Methods.postExecute, params);
}
/** `dsh/assembleSection`: the sticky section, `section: null` while sticky mode is off. */
function assembleSection(client, sessionId) {
    return client.sendRequest(protocol_1.Methods.assembleSection, sessionId ? { sessionId } : {});
}
