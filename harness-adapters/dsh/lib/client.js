// A JSON-RPC 2.0 client over LSP framing (`Content-Length: N\r\n\r\n<JSON>`) for one
// `dsh-search serve` child: requests with timeouts and cancellation ($/cancelRequest),
// `initialize`/`initialized`, `shutdown`/`exit`. Transport-agnostic: it writes to a Writable
// and is fed bytes from a Readable, so the bundle can hand it ctx.subprocess's pipes.

const HEADER_END = Buffer.from('\r\n\r\n');
/** Largest frame accepted from the sidecar, bytes (a broken stream never grows memory without bound). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

export class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

export class FramedClient {
  constructor(writable, readable) {
    this.writable = writable;
    this.nextId = 1;
    this.pending = new Map();
    this.buffer = Buffer.alloc(0);
    this.closed = false;
    this.onNotification = () => {};
    readable.on('data', (chunk) => this.feed(chunk));
    readable.on('end', () => this.close(new Error('sidecar stdout closed')));
    readable.on('error', (err) => this.close(err));
    writable.on('error', (err) => this.close(err));
  }

  feed(chunk) {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      const end = this.buffer.indexOf(HEADER_END);
      if (end < 0) return;
      const header = this.buffer.subarray(0, end).toString('ascii');
      const match = /content-length:\s*(\d+)/i.exec(header);
      const length = match ? Number(match[1]) : NaN;
      if (!Number.isFinite(length) || length > MAX_FRAME_BYTES) {
        this.close(new Error('sidecar framing lost'));
        return;
      }
      const start = end + HEADER_END.length;
      if (this.buffer.length < start + length) return;
      const body = this.buffer.subarray(start, start + length).toString('utf8');
      this.buffer = this.buffer.subarray(start + length);
      let message;
      try {
        message = JSON.parse(body);
      } catch {
        continue;
      }
      this.dispatch(message);
    }
  }

  dispatch(message) {
    if (message && message.id !== undefined && message.id !== null && !message.method) {
      const entry = this.pending.get(message.id);
      if (!entry) return;
      this.pending.delete(message.id);
      entry.cleanup();
      if (message.error) entry.reject(new RpcError(message.error.code, message.error.message, message.error.data));
      else entry.resolve(message.result);
    } else if (message && message.method && (message.id === undefined || message.id === null)) {
      try {
        this.onNotification(message.method, message.params);
      } catch {
        // a notification handler never breaks the stream
      }
    }
  }

  send(message) {
    if (this.closed) throw new Error('sidecar connection closed');
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    this.writable.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
  }

  notify(method, params) {
    this.send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
  }

  /** One request; rejects after `timeoutMs` or when `signal` aborts (then sends $/cancelRequest). */
  request(method, params, { timeoutMs = 30000, signal } = {}) {
    if (this.closed) return Promise.reject(new Error('sidecar connection closed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const cancel = (reason) => {
        if (!this.pending.has(id)) return;
        this.pending.delete(id);
        cleanup();
        try {
          this.notify('$/cancelRequest', { id });
        } catch {
          // closed: nothing to cancel
        }
        reject(reason);
      };
      const timer = setTimeout(() => cancel(new Error(`${method}: no answer within ${timeoutMs} ms`)), timeoutMs);
      const onAbort = () => cancel(signal.reason ?? new Error('aborted'));
      const cleanup = () => {
        clearTimeout(timer);
        if (signal) signal.removeEventListener('abort', onAbort);
      };
      if (signal) {
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
      }
      this.pending.set(id, { resolve, reject, cleanup });
      try {
        this.send({ jsonrpc: '2.0', id, method, params });
      } catch (err) {
        this.pending.delete(id);
        cleanup();
        reject(err);
      }
    });
  }

  close(reason) {
    if (this.closed) return;
    this.closed = true;
    for (const entry of this.pending.values()) {
      entry.cleanup();
      entry.reject(reason ?? new Error('sidecar connection closed'));
    }
    this.pending.clear();
  }
}
