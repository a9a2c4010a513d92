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

import type { Readable, Writable } from 'node:stream';

import { Method } from './wire';

const HEADER_END = Buffer.from('\r\n\r\n');
/** Largest frame accepted, bytes: a broken stream never grows memory without bound. */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;
/** Default request timeout, milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** A JSON-RPC error reply: `code` (e.g. -32001 all providers failed), `message`, `data`. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/** Options of one request. */
export interface RequestOptions {
  /** Reject (and send `$/cancelRequest`) after this many milliseconds. */
  timeoutMs?: number;
  /** Reject (and send `$/cancelRequest`) when this signal aborts. */
  signal?: AbortSignal;
}

interface Pending {
  resolve(value: unknown): void;
  reject(reason: unknown): void;
  cleanup(): void;
}

/** One framed JSON-RPC connection. */
export class FramedClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private buffer: Buffer = Buffer.alloc(0);
  private closedFlag = false;
  /** Called with every server→client notification (`window/logMessage`, `$/progress`, …). */
  onNotification: (method: string, params: unknown) => void = () => undefined;

  constructor(
    private readonly writable: Writable,
    readable: Readable,
  ) {
    readable.on('data', (chunk: Buffer) => this.feed(chunk));
    readable.on('end', () => this.close(new Error('sidecar stdout closed')));
    readable.on('error', (err: Error) => this.close(err));
    writable.on('error', (err: Error) => this.close(err));
  }

  /** Whether the connection is closed (every later request rejects at once). */
  get closed(): boolean {
    return this.closedFlag;
  }

  private feed(chunk: Buffer): void {
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
      let message: { id?: number | string | null; method?: string; params?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };
      try {
        message = JSON.parse(body);
      } catch {
        continue;
      }
      this.dispatch(message);
    }
  }

  private dispatch(message: { id?: number | string | null; method?: string; params?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } }): void {
    if (message === null || typeof message !== 'object') return;
    const hasId = message.id !== undefined && message.id !== null;
    if (hasId && !message.method) {
      const entry = this.pending.get(message.id as number);
      if (!entry) return;
      this.pending.delete(message.id as number);
      entry.cleanup();
      if (message.error) entry.reject(new RpcError(message.error.code, message.error.message, message.error.data));
      else entry.resolve(message.result);
    } else if (message.method && !hasId) {
      try {
        this.onNotification(message.method, message.params);
      } catch {
        // a notification handler never breaks the stream
      }
    }
  }

  private send(message: object): void {
    if (this.closedFlag) throw new Error('sidecar connection closed');
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    this.writable.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
  }

  /** Send one notification (no reply). Throws when the connection is closed. */
  notify(method: string, params?: unknown): void {
    this.send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
  }

  /** One request: resolves with `result`, rejects with {@link RpcError}, a timeout, an abort, or a closed stream. */
  request<R>(method: string, params: unknown, options: RequestOptions = {}): Promise<R> {
    if (this.closedFlag) return Promise.reject(new Error('sidecar connection closed'));
    const id = this.nextId++;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const signal = options.signal;
    return new Promise<R>((resolve, reject) => {
      const cancel = (reason: unknown): void => {
        if (!this.pending.has(id)) return;
        this.pending.delete(id);
        cleanup();
        try {
          this.notify(Method.CANCEL_REQUEST, { id });
        } catch {
          // closed: nothing to cancel
        }
        reject(reason);
      };
      const timer = setTimeout(() => cancel(new Error(`${method}: no answer within ${timeoutMs} ms`)), timeoutMs);
      const onAbort = (): void => cancel(signal?.reason ?? new Error('aborted'));
      const cleanup = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      if (signal?.aborted) {
        clearTimeout(timer);
        reject(signal.reason ?? new Error('aborted'));
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, cleanup });
      try {
        this.send({ jsonrpc: '2.0', id, method, params });
      } catch (err) {
        this.pending.delete(id);
        cleanup();
        reject(err);
      }
    });
  }

  /** {@link RequestSender} for the helpers of `requests.ts` (default timeout). */
  sendRequest<R>(method: string, params: unknown): Promise<R> {
    return this.request<R>(method, params);
  }

  /** Reject every pending request and refuse new ones. */
  close(reason?: Error): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    for (const entry of this.pending.values()) {
      entry.cleanup();
      entry.reject(reason ?? new Error('sidecar connection closed'));
    }
    this.pending.clear();
  }
}
