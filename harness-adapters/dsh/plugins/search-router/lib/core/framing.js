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
exports.FramedClient = exports.RpcError = exports.FramingLost = exports.DEFAULT_TIMEOUT_MS = exports.MAX_HEADER_BYTES = exports.MAX_FRAME_BYTES = void 0;
const wire_1 = require("./wire");
const HEADER_END = Buffer.from('\r\n\r\n');
/** Largest frame accepted, bytes: a broken stream never grows memory without bound. */
exports.MAX_FRAME_BYTES = 64 * 1024 * 1024;
/**
 * Most bytes read before a header's end (`\r\n\r\n`), bytes: a header is one or two short
 * lines, so a stream that sends more without one has lost its framing (a child writing
 * something else on stdout), and is not buffered further.
 */
exports.MAX_HEADER_BYTES = 8 * 1024;
/** Default request timeout, milliseconds. */
exports.DEFAULT_TIMEOUT_MS = 30_000;
/** Why a connection's framing broke: the child is not speaking the protocol (any more). */
class FramingLost extends Error {
    constructor(message) {
        super(message);
        this.name = 'FramingLost';
    }
}
exports.FramingLost = FramingLost;
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
    /** The bytes of the header being read (at most {@link MAX_HEADER_BYTES} plus one chunk). */
    head = Buffer.alloc(0);
    /** Where the search for the header's end resumes in {@link head} (never rescans a byte). */
    scanned = 0;
    /** While a body is being read: its length, and its chunks so far (joined once, when complete). */
    bodyLength = -1;
    bodyChunks = [];
    bodyBytes = 0;
    closedFlag = false;
    /** Header blocks skipped because they named no usable `Content-Length` (stray writes). */
    skippedHeaders = 0;
    /** Called with every server→client notification (`window/logMessage`, `$/progress`, …). */
    onNotification = () => undefined;
    /** Called once when the connection closes, with the reason ({@link FramingLost} when the
     * stream stopped being LSP framing). */
    onClose = () => undefined;
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
    /**
     * Frame assembly, linear in the bytes received: a header is searched in at most
     * {@link MAX_HEADER_BYTES} (each byte once), and a body's chunks are joined once, when the
     * body is complete (joining the buffer with every chunk made a 24 MB frame cost seconds of
     * copying). A header block without a usable `Content-Length` (a stray write on the child's
     * stdout) is skipped and reading resynchronises on the next header; a stream that sends
     * {@link MAX_HEADER_BYTES} without a header end, or announces a frame over
     * {@link MAX_FRAME_BYTES}, has lost its framing: the connection closes ({@link FramingLost}).
     */
    feed(chunk) {
        let data = chunk;
        while (data !== undefined && data.length > 0 && !this.closedFlag) {
            if (this.bodyLength >= 0) {
                data = this.feedBody(data);
                continue;
            }
            const buf = this.head.length ? Buffer.concat([this.head, data]) : data;
            const end = buf.indexOf(HEADER_END, Math.max(0, this.scanned - (HEADER_END.length - 1)));
            if (end < 0 || end > exports.MAX_HEADER_BYTES) {
                if (end > exports.MAX_HEADER_BYTES || buf.length > exports.MAX_HEADER_BYTES + HEADER_END.length) {
                    this.close(new FramingLost(`sidecar framing lost: no header end within ${exports.MAX_HEADER_BYTES} bytes`));
                    return;
                }
                this.head = buf;
                this.scanned = buf.length;
                return;
            }
            this.head = Buffer.alloc(0);
            this.scanned = 0;
            const header = buf.subarray(0, end).toString('latin1');
            const rest = buf.subarray(end + HEADER_END.length);
            const match = /content-length:[ \t]*(\d{1,12})/i.exec(header);
            if (!match) {
                this.skippedHeaders += 1; // not a protocol header: skipped, resynchronise on the next one
                data = rest;
                continue;
            }
            const length = Number(match[1]);
            if (length > exports.MAX_FRAME_BYTES) {
                this.close(new FramingLost(`sidecar framing lost: a ${length}-byte frame (at most ${exports.MAX_FRAME_BYTES})`));
                return;
            }
            this.bodyLength = length;
            this.bodyChunks = [];
            this.bodyBytes = 0;
            data = rest;
            if (length === 0)
                data = this.feedBody(rest);
        }
    }
    /** Add `data` to the body being read; dispatch it when complete. Returns what follows it. */
    feedBody(data) {
        const missing = this.bodyLength - this.bodyBytes;
        const take = data.length <= missing ? data : data.subarray(0, missing);
        if (take.length) {
            this.bodyChunks.push(take);
            this.bodyBytes += take.length;
        }
        if (this.bodyBytes < this.bodyLength)
            return undefined;
        const body = this.bodyChunks.length === 1 ? this.bodyChunks[0] : Buffer.concat(this.bodyChunks, this.bodyBytes);
        this.bodyLength = -1;
        this.bodyChunks = [];
        this.bodyBytes = 0;
        let message;
        try {
            message = JSON.parse(body.toString('utf8'));
        }
        catch {
            message = undefined; // not JSON: the frame is dropped, the framing itself still holds
        }
        if (message !== undefined)
            this.dispatch(message);
        return data.length > take.length ? data.subarray(take.length) : undefined;
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
            const error = message.error;
            if (error !== undefined && error !== null) {
                const fields = typeof error === 'object' ? error : { code: NaN, message: String(error) };
                entry.reject(new RpcError(Number(fields.code), String(fields.message ?? 'error'), fields.data));
            }
            else
                entry.resolve(message.result);
        }
        else if (typeof message.method === 'string' && !hasId) {
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
    /** Reject every pending request and refuse new ones; {@link onClose} hears why. */
    close(reason) {
        if (this.closedFlag)
            return;
        this.closedFlag = true;
        const why = reason ?? new Error('sidecar connection closed');
        this.head = Buffer.alloc(0);
        this.bodyChunks = [];
        for (const entry of this.pending.values()) {
            entry.cleanup();
            entry.reject(why);
        }
        this.pending.clear();
        try {
            this.onClose(why);
        }
        catch {
            // a close handler never throws into the stream
        }
    }
}
exports.FramedClient = FramedClient;
