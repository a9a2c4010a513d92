/**
 * Not a test: writes the status page the extension shows (DSH: Show sidecar status) for a real
 * sidecar after one search and one suggester question, for the README's screenshot.
 * Usage: node out/test/snapshot.js OUT.html
 */

import * as fs from 'node:fs';

import { renderStatusHtml, search, status, suggest } from '../src/core';
import { MockProvider, copyWorkspace, startSidecar } from './harness';

async function main(): Promise<void> {
  const out = process.argv[2];
  const mock = await MockProvider.start();
  mock.route('GET', '/search', 200, 'application/json', 'searxng', 'ok.200.json');
  const workspace = copyWorkspace();
  const sidecar = await startSidecar(
    { initializationOptions: { router: { provider: 'searxng', providers: { searxng: { baseUrl: mock.url } } }, bandit: { seed: 7 } } },
    workspace,
  );
  try {
    await search(sidecar.connection, 'bike chain cleaning');
    await search(sidecar.connection, 'how to clean a bike chain', { strategy: 'thorough' });
    await suggest(sidecar.connection, 'grep', '__version__', 'snapshot');
    fs.writeFileSync(out, renderStatusHtml(await status(sidecar.connection)));
  } finally {
    await sidecar.stop();
    await mock.close();
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${String(e)}\n`);
  process.exit(1);
});
