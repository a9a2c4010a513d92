// The retired `search-sidecar` row (one bundle for all three seeds, before each seed became a
// plugin of its own). A profile that still restates it gets a visible warning saying where each
// of its settings moved, and its settings still apply, so an upgrade never silently turns a
// feature off: its router and bandit settings join the active rows' blocks, and a suggester it
// enabled runs (mounted here when the search-suggester row is not active). Without config (the
// combined bundle's own row) it does nothing.

import * as bandit from './bandit.js';
import * as router from './router.js';
import { retiredRow } from './rows.js';
import { acquireSidecar, sharedSidecar } from './shared.js';
import * as suggester from './suggester.js';
import { warn } from './warnings.js';

export const name = 'search-sidecar';
export const inject = ['subprocess'];

export function apply(ctx, rawConfig) {
  try {
    install(ctx, rawConfig ?? {});
  } catch (error) {
    warn(ctx, 'search-sidecar', 'the retired search-sidecar row could not be applied', error);
  }
}

function install(ctx, raw) {
  const report = (message) => warn(ctx, 'search-sidecar', message);
  const moved = retiredRow(raw, report);
  if (moved.moves.length === 0) return;
  warn(
    ctx,
    'search-sidecar',
    `the search-sidecar row is retired (each seed is a plugin with its own row now: search-router, bandit-search, search-suggester); its settings apply meanwhile, move them: ${moved.moves.join('; ')}`,
  );
  const lease = acquireSidecar(ctx, 'search-sidecar', moved.sidecar, report);
  ctx.effect(() => () => lease.release(), 'search-sidecar (retired) sidecar');
  // after the rows composed with it have loaded (they start the sidecar on the same turn)
  const timer = setImmediate(() => {
    const active = sharedSidecar().active;
    if (moved.router !== undefined) {
      if (active.has('search-router')) lease.setBlock('router', moved.router);
      else ctx.plugin(router, { ...moved.router, ...(moved.sidecar ? { sidecar: moved.sidecar } : {}) });
    }
    if (moved.bandit !== undefined) {
      if (active.has('bandit-search')) lease.setBlock('bandit', moved.bandit);
      else ctx.plugin(bandit, { ...moved.bandit, ...(moved.sidecar ? { sidecar: moved.sidecar } : {}) });
    }
    if (moved.suggester?.enabled === true) {
      const { enabled, ...knobs } = moved.suggester;
      if (active.has('search-suggester')) lease.setBlock('suggester', { enabled, ...knobs });
      else ctx.plugin(suggester, { ...knobs, ...(moved.sidecar ? { sidecar: moved.sidecar } : {}) });
    }
  });
  ctx.effect(() => () => clearImmediate(timer), 'search-sidecar (retired) mount');
}
