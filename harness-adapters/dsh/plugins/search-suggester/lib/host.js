// The harness's own packages (`@deepseek-ai/*`), resolved from the running DeepSeek Harness, not
// from wherever this file lives.
//
// A `file:` install copies the plugin into the profile, whose parent folder DSH keeps as a flat
// module fallback (`$DSH_HOME/profiles/node_modules`: one link per package of the installation),
// so a bare import found them there. A `link:` install leaves the plugin in its checkout, and
// Node resolves a module's imports from its real path: the checkout has no `@deepseek-ai/*`
// (or, worse, a copy of its own), the import failed, and DSH refused to boot the whole profile.
// So every harness package is imported through `hostImport`, which asks, in order:
//
//   1. the profiles folder of `$DSH_HOME` (DSH_HOME, default ~/.dsh), the fallback DSH itself
//      maintains for out-of-tree plugins, pointing at the running installation;
//   2. the running `dsh` launcher's own installation (process.argv[1], its real path);
//   3. this file's own location (a plugin installed beside the harness's packages).
//
// and imports the package's ESM entry (its `exports["."]` import/default condition) by file URL,
// so the module instance is the one the harness itself loaded (Node keys ESM modules by real
// path): `defineTool`, schemastery schemas and settings registrations are the host's own.

import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The folders a harness package is looked up from, in order (see the module comment). */
export function hostAnchors(env = process.env, argv1 = process.argv[1], self = fileURLToPath(import.meta.url)) {
  const anchors = [];
  const home = env.DSH_HOME && env.DSH_HOME.trim() ? env.DSH_HOME.trim() : join(homedir(), '.dsh');
  anchors.push(join(resolve(home.replace(/^~(?=$|\/)/, homedir())), 'profiles', 'noop.js'));
  if (argv1 && isAbsolute(argv1)) {
    try {
      anchors.push(realpathSync(argv1));
    } catch {
      // a launcher path that is gone: skip it
    }
  }
  anchors.push(self);
  return anchors;
}

/** The ESM entry file of a package folder's manifest (`exports["."]`, then `module`, `main`). */
export function entryOf(dir, manifest) {
  const pick = (target) => {
    if (typeof target === 'string') return target;
    if (Array.isArray(target)) {
      for (const t of target) {
        const found = pick(t);
        if (found) return found;
      }
      return undefined;
    }
    if (target && typeof target === 'object') {
      for (const condition of ['node', 'import', 'default']) {
        if (condition in target) {
          const found = pick(target[condition]);
          if (found) return found;
        }
      }
    }
    return undefined;
  };
  const exp = manifest.exports;
  let rel;
  if (typeof exp === 'string' || Array.isArray(exp)) rel = pick(exp);
  else if (exp && typeof exp === 'object') rel = pick('.' in exp ? exp['.'] : exp);
  rel ??= manifest.module ?? manifest.main ?? 'index.js';
  return join(dir, rel);
}

/** Where `name`'s package folder is, from the first anchor that resolves it, or `undefined`. */
export function hostPackageDir(name, anchors = hostAnchors()) {
  for (const anchor of anchors) {
    let manifest;
    try {
      manifest = createRequire(anchor).resolve(`${name}/package.json`);
    } catch {
      continue;
    }
    if (existsSync(manifest)) return dirname(manifest);
  }
  return undefined;
}

const cache = new Map();

/** Import the harness's package `name` (see the module comment); rejects naming every place asked. */
export function hostImport(name, anchors = hostAnchors()) {
  let pending = cache.get(name);
  if (!pending) {
    const dir = hostPackageDir(name, anchors);
    if (dir === undefined) {
      pending = Promise.reject(
        new Error(`${name} is not resolvable from the running DeepSeek Harness (looked from: ${anchors.join(', ')})`),
      );
    } else {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      pending = import(pathToFileURL(entryOf(dir, manifest)).href);
    }
    cache.set(name, pending);
  }
  return pending;
}
