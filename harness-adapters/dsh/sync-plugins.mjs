// Copy the shared plugin code (lib/, and client/ for the router) into each seed's own package
// under plugins/: a package installed with `file:` is copied into the profile without anything
// outside its folder (pnpm drops symlinked folders), so each carries the code it runs. The
// copies are generated, never edited: `node sync-plugins.mjs` writes them, and
// tests/harness/test_dsh_plugins.py fails while one differs from lib/ and client/.

import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Each seed's package folder and the shared folders it carries. */
export const PLUGINS = {
  'search-router': ['lib', 'client'],
  'bandit-search': ['lib'],
  'search-suggester': ['lib'],
};

for (const [plugin, folders] of Object.entries(PLUGINS)) {
  const target = join(here, 'plugins', plugin);
  if (!existsSync(join(target, 'package.json'))) throw new Error(`plugins/${plugin}/package.json is missing`);
  for (const folder of ['lib', 'client']) rmSync(join(target, folder), { recursive: true, force: true });
  for (const folder of folders) {
    if (!existsSync(join(here, folder))) continue;
    mkdirSync(join(target, folder), { recursive: true });
    cpSync(join(here, folder), join(target, folder), { recursive: true });
  }
  cpSync(join(here, 'LICENSE'), join(target, 'LICENSE'));
  process.stdout.write(`plugins/${plugin}: ${folders.join(', ')} (${readdirSync(join(target, 'lib')).length} entries in lib)\n`);
}
