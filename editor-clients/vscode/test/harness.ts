/**
 * Test harness: the REAL sidecar (`dsh-search serve` from the repo's venv) spawned over stdio
 * and driven with vscode-jsonrpc — the JSON-RPC library vscode-languageclient is built on —
 * plus a loopback SearXNG that replays the repo's captured provider fixtures.
 */

import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

import { MessageConnection, StreamMessageReader, StreamMessageWriter, createMessageConnection } from 'vscode-jsonrpc/node';

import { LogMessageParams, Methods, resolveLaunch, RawSettings } from '../src/core';

/** The repository root (this file runs from editor-clients/vscode/out/test/). */
export const REPO = path.resolve(__dirname, '..', '..', '..', '..');
export const PROVIDERS = path.join(REPO, 'tests', 'data', 'providers');

/** Provider credentials of the host that would leak into the sidecar's auto-detection. */
const PROVIDER_VARS = ['EXA_API_KEY', 'TAVILY_API_KEY', 'BRAVE_SEARCH_API_KEY', 'PPLX_API_KEY', 'DEEPSEEK_API_KEY', 'SEARXNG_BASE_URL'];

/**
 * The sidecar executable: `$DSH_SEARCH_COMMAND` (the pytest wrapper sets it to the venv's
 * console script), else the README's `.venv/bin/dsh-search`, else `dsh-search` on PATH.
 */
export function sidecarCommand(): string {
  if (process.env.DSH_SEARCH_COMMAND) {
    return process.env.DSH_SEARCH_COMMAND;
  }
  const venv = path.join(REPO, '.venv', 'bin', 'dsh-search');
  return fs.existsSync(venv) ? venv : 'dsh-search';
}

/** A loopback HTTP server: `routes['GET /search']` = [status, content-type, body file]. */
export class MockProvider {
  readonly requests: { method: string; path: string; query: URLSearchParams }[] = [];
  private server: http.Server;
  private routes = new Map<string, [number, string, Buffer]>();

  private constructor() {
    this.server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      this.requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams });
      const route = this.routes.get(`${req.method} ${url.pathname}`);
      req.resume();
      if (!route) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('no route');
        return;
      }
      const [status, type, body] = route;
      res.writeHead(status, { 'content-type': type, 'content-length': body.length }).end(body);
    });
  }

  static async start(): Promise<MockProvider> {
    const mock = new MockProvider();
    await new Promise<void>((resolve) => mock.server.listen(0, '127.0.0.1', resolve));
    return mock;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answer `method path` with a fixture file of `tests/data/providers/<provider>/`. */
  route(method: string, urlPath: string, status: number, contentType: string, provider: string, file: string): void {
    this.routes.set(`${method} ${urlPath}`, [status, contentType, fs.readFileSync(path.join(PROVIDERS, provider, file))]);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A copy of the repo's Python workspace fixture (the suggester's test repository). */
export function copyWorkspace(): string {
  const dest = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-vscode-ws-'));
  fs.cpSync(path.join(REPO, 'tests', 'data', 'workspaces', 'pyproj'), dest, { recursive: true });
  return dest;
}

/** A running sidecar: the connection, every `window/logMessage` it sent, and its temp $DSH_HOME. */
export interface Sidecar {
  connection: MessageConnection;
  logs: LogMessageParams[];
  home: string;
  stop(): Promise<void>;
  /** Resolves once a log line matching `re` has arrived (rejects after `ms`). */
  waitForLog(re: RegExp, ms?: number): Promise<LogMessageParams>;
}

/**
 * Spawn the sidecar as the extension does (settings → command, args, initializationOptions),
 * send `initialize` with `root` as rootUri and `initialized`.
 */
export async function startSidecar(settings: RawSettings, root?: string): Promise<Sidecar> {
  const launch = resolveLaunch({ command: sidecarCommand(), ...settings });
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-vscode-home-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DSH_HOME: home };
  for (const name of PROVIDER_VARS) {
    delete env[name];
  }
  const child: ChildProcessWithoutNullStreams = spawn(launch.command, launch.args, { cwd: root ?? REPO, env, stdio: 'pipe' });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const spawnError = new Promise<never>((_, reject) => child.on('error', (e) => reject(new Error(`cannot start ${launch.command}: ${e.message}`))));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const logs: LogMessageParams[] = [];
  const waiters: { re: RegExp; resolve: (p: LogMessageParams) => void }[] = [];
  connection.onNotification(Methods.logMessage, (p: LogMessageParams) => {
    logs.push(p);
    for (const w of waiters.filter((x) => x.re.test(p.message))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(p);
    }
  });
  connection.listen();
  await Promise.race([
    spawnError,
    connection.sendRequest('initialize', {
      processId: process.pid,
      capabilities: {},
      rootUri: root ? pathToFileURL(root).href : null,
      workspaceFolders: root ? [{ uri: pathToFileURL(root).href, name: path.basename(root) }] : null,
      initializationOptions: launch.initializationOptions,
    }),
  ]).catch(async (e) => {
    connection.dispose();
    child.kill();
    child.stdin.destroy();
    child.stdout.destroy();
    child.stderr.destroy();
    throw new Error(`${(e as Error).message}\nsidecar stderr:\n${stderr}`);
  });
  await connection.sendNotification('initialized', {});
  return {
    connection,
    logs,
    home,
    waitForLog(re: RegExp, ms = 10_000): Promise<LogMessageParams> {
      const seen = logs.find((p) => re.test(p.message));
      if (seen) {
        return Promise.resolve(seen);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no log line matching ${re} within ${ms} ms`)), ms);
        waiters.push({ re, resolve: (p) => { clearTimeout(timer); resolve(p); } });
      });
    },
    async stop(): Promise<void> {
      try {
        await connection.sendRequest('shutdown');
        await connection.sendNotification('exit');
      } catch {
        // already gone
      }
      const timer = setTimeout(() => child.kill(), 10_000);
      await exited;
      clearTimeout(timer);
      connection.dispose();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}
