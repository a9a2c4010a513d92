"use strict";
/**
 * A JSON-RPC 2.0 client over LSP framing (`Content-Length: N\r\n\r\n<JSON>`) for one
 * `dsh-search serve` child: requests with a timeout and an `AbortSignal` (an abort or a
 * timeout sends `$/cancelRequest`), notifications both ways, and every pending request
 * rejected when the stream closes. Transport-agnostic: it writes to a `Writable` and reads a
 * `Readable`, so the DeepSeek Harness bundle hands it `ctx.subprocess`'s pipes; it is also a
 * {@link RequestSender} for the request helpers of `requests.ts`.
 *
 * No `vscode` import: the extension, its Node tests and the DSH bundle share it.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.FramedClient = exports.RpcError = exports.DEFAULT_TIMEOUT_MS = exports.MAX_FRAME_BYTES = void 0;
const wire_1 = require("./wire");
const HEADER_END = Buffer.from('\r\n\r\n');
/** Largest frame accepted, bytes: a broken stream never grows memory without bound. */
exports.MAX_FRAME_BYTES = 64 * 1024 * 1024;
/** Default request timeout, milliseconds. */
exports.DEFAULT_TIMEOUT_MS = 30_000;
/** A JSON-RPC error reply: `code` (e.g. -32001 all providers failed), `message`, `data`. */
class RpcError extends Error {
    code;
    data;
    constructor(code, message, data) {
        super(message);
        this.code = code;
        this.data = data;
        this.name = 'RpcError';
    }
}
exports.RpcError = RpcError;
/** One framed JSON-RPC connection. */
class FramedClient {
    writable;
    nextId = 1;
    pending = new Map();
    buffer = Buffer.alloc(0);
    closedFlag = false;
    /** Called with every server→client notification (`window/logMessage`, `$/progress`, …). */
    onNotification = () => undefined;
    constructor(writable, readable) {
        this.writable = writable;
        readable.on('data', (chunk) => this.feed(chunk));
        readable.on('end', () => this.close(new Error('sidecar stdout closed')));
        readable.on('error', (err) => this.close(err));
        writable.on('error', (err) => this.close(err));
    }
    /** Whether the connection is closed (every later request rejects at once). */
    get closed() {
        return this.closedFlag;
    }
    feed(chunk) {
        this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
        for (;;) {
            const end = this.buffer.indexOf(HEADER_END);
            if (end < 0)
                return;
            const header = this.buffer.subarray(0, end).toString('ascii');
            const match = /content-length:\s*(\d+)/i.exec(header);
            const length = match ? Number(match[1]) : NaN;
            if (!Number.isFinite(length) || length > exports.MAX_FRAME_BYTES) {
                this.close(new Error('sidecar framing lost'));
                return;
            }
            const start = end + HEADER_END.length;
            if (this.buffer.length < start + length)
                return;
            const body = this.buffer.subarray(start, start + length).toString('utf8');
            this.buffer = this.buffer.subarray(start + length);
            let message;
            try {
                message = JSON.parse(body);
            }
            catch {
                continue;
            }
            this.dispatch(message);
        }
    }
    dispatch(message) {
        if (message === null || typeof message !== 'object')
            return;
        const hasId = message.id !== undefined && message.id !== null;
        if (hasId && !message.method) {
            const entry = this.pending.get(message.id);
            if (!entry)
                return;
            this.pending.delete(message.id);
            entry.cleanup();
            if (message.error)
                entry.reject(new RpcError(message.error.code, message.error.message, message.error.data));
            else
                entry.resolve(message.result);
        }
        else if (message.method && !hasId) {
            try {
                this.onNotification(message.method, message.params);
            }
            catch {
                // a notification handler never breaks the stream
            }
        }
    }
    send(message) {
        if (this.closedFlag)
            throw new Error('sidecar connection closed');
        const body = Buffer.from(JSON.stringify(message), 'utf8');
        this.writable.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
    }
    /** Send one notification (no reply). Throws when the connection is closed. */
    notify(method, params) {
        this.send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
    }
    /** One request: resolves with `result`, rejects with {@link RpcError}, a timeout, an abort, or a closed stream. */
    request(method, params, options = {}) {
        if (this.closedFlag)
            return Promise.reject(new Error('sidecar connection closed'));
        const id = this.nextId++;
        const timeoutMs = options.timeoutMs ?? exports.DEFAULT_TIMEOUT_MS;
        const signal = options.signal;
        return new Promise((resolve, reject) => {
            const cancel = (reason) => {
                if (!this.pending.has(id))
                    return;
                this.pending.delete(id);
                cleanup();
                try {
                    this.notify(wire_1.Method.CANCEL_REQUEST, { id });
                }
                catch {
                    // closed: nothing to cancel
                }
                reject(reason);
            };
            const timer = setTimeout(() => cancel(new Error(`${method}: no answer within ${timeoutMs} ms`)), timeoutMs);
            const onAbort = () => cancel(signal?.reason ?? new Error('aborted'));
            const cleanup = () => {
                clearTimeout(timer);
                signal?.removeEventListener('abort', onAbort);
            };
            if (signal?.aborted) {
                clearTimeout(timer);
                reject(signal.reason ?? new Error('aborted'));
                return;
            }
            signal?.addEventListener('abort', onAbort, { once: true });
            this.pending.set(id, { resolve: resolve, reject, cleanup });
            try {
                this.send({ jsonrpc: '2.0', id, method, params });
            }
            catch (err) {
                this.pending.delete(id);
                cleanup();
                reject(err);
            }
        });
    }
    /** {@link RequestSender} for the helpers of `requests.ts` (default timeout). */
    sendRequest(method, params) {
        return this.request(method, params);
    }
    /** Reject every pending request and refuse new ones. */
    close(reason) {
        if (this.closedFlag)
            return;
        this.closedFlag = true;
        for (const entry of this.pending.values()) {
            entry.cleanup();
            entry.reject(reason ?? new Error('sidecar connection closed'));
        }
        this.pending.clear();
    }
}
exports.FramedClient = FramedClient;
