// One `dsh-search serve` per harness process, shared by the plugins of this adapter that are
// loaded (search-router, bandit-search, search-suggester: each installable alone, or together,
// from separate packages, so each has its own copy of this module): a process-wide registry
// under a `Symbol.for` key holds the one child and the config block each plugin contributes.
//
// A plugin `acquire`s a lease when it loads (the child is spawned and initialized then, on the
// next turn of the event loop, so the plugins loaded together start it with all their blocks:
// never on a tool call's path); a block it changes later (a hot-edited row, the settings card)
// reaches the live sidecar as one `workspace/didChangeConfiguration`; the last lease released
// stops the child (after a moment: a plugin reloaded for a config change takes its lease back
// first, and the sidecar keeps its state).

import { PROCESS_DEFAULTS, SidecarProcess } from './sidecar.js';
import { warn } from './warnings.js';

/** The registry's key: one per protocol generation of this module (see the module comment). */
export const SHARED_KEY = Symbol.for('dsh-search-sidecar.shared/2');

/** How long the sidecar outlives its last lease (a plugin reload re-acquires within it), ms. */
export const STOP_GRACE_MS = 500;

/** The process knobs a row's `sidecar:` block sets explicitly, validated (a bad value is
 * reported and left out). */
export function processKnobs(raw, report) {
  const knobs = {};
  if (raw === undefined) return knobs;
  if (Array.isArray(raw.command) && raw.command.length > 0 && raw.command.every((c) => typeof c === 'string' && c)) {
    knobs.command = [...raw.command];
  } else if (raw.command !== undefined) report('sidecar.command: must be a non-empty list of strings (argv); it is ignored');
  for (const key of ['startTimeoutMs', 'maxRestarts', 'restartResetMs']) {
    if (raw[key] === undefined) continue;
    if (Number.isFinite(raw[key]) && raw[key] >= 0) knobs[key] = raw[key];
    else report(`sidecar.${key}: must be a number >= 0; it is ignored`);
  }
  return knobs;
}

class SharedSidecar {
  constructor() {
    /** The plugins of this adapter loaded now, by row id (the retired row's shim reads it). */
    this.active = new Set();
    this.leases = new Set();
    this.process = undefined;
    this.spawnQueued = false;
    this.stopTimer = undefined;
    this.order = 0;
  }

  /** The latest live lease's context (spawns and logs go through a loaded plugin). */
  ctx() {
    let latest;
    for (const lease of this.leases) if (!latest || lease.order > latest.order) latest = lease;
    return latest?.ctx ?? this.lastCtx;
  }

  options() {
    const options = {};
    const leases = [...this.leases].sort((a, b) => a.order - b.order);
    for (const lease of leases) {
      for (const [name, value] of Object.entries(lease.blocks)) {
        if (value === undefined) continue;
        options[name] = name in options && isObject(options[name]) && isObject(value) ? { ...options[name], ...value } : value;
      }
    }
    return options;
  }

  acquire(ctx, plugin, knobs) {
    clearTimeout(this.stopTimer);
    this.stopTimer = undefined;
    const lease = new Lease(this, ctx, plugin, (this.order += 1));
    lease.knobs = knobs ?? {};
    this.leases.add(lease);
    this.active.add(plugin);
    this.lastCtx = ctx;
    if (!this.process || this.process.stopped) {
      this.process = new SidecarProcess(
        () => this.ctx(),
        () => this.knobs(),
        () => this.options(),
        (client) => {
          for (const lease of this.leases) lease.started?.(client);
        },
      );
      this.queueSpawn();
    }
    return lease;
  }

  /** The process knobs in force: each one as the rows that set it say (the first row loaded,
   * when two rows disagree: warned), else its default. */
  knobs() {
    const knobs = { ...PROCESS_DEFAULTS };
    const set = {};
    for (const lease of [...this.leases].sort((a, b) => a.order - b.order)) {
      for (const [key, value] of Object.entries(lease.knobs ?? {})) {
        if (!(key in set)) {
          set[key] = lease.plugin;
          knobs[key] = value;
        } else if (JSON.stringify(knobs[key]) !== JSON.stringify(value)) {
          warn(lease.ctx, lease.plugin, `sidecar.${key} differs from the ${set[key]} row's; one sidecar serves both, the ${set[key]} row's is used`);
        }
      }
    }
    return knobs;
  }

  queueSpawn() {
    if (this.spawnQueued) return;
    this.spawnQueued = true;
    // the plugins composed together load in the same turn: they start it with all their blocks
    setImmediate(() => {
      this.spawnQueued = false;
      if (this.leases.size > 0 && this.process && !this.process.stopped) this.process.start();
    });
  }

  /** A block changed: sent once per turn of the event loop (a plugin reloaded for a hot edit
   * releases its lease and takes a new one in the same turn: one reconfiguration, not two). */
  changed(block) {
    if (!this.process || this.spawnQueued) return; // the start sends them
    if (block) (this.changedBlocks ??= new Set()).add(block);
    if (this.pushQueued) return;
    this.pushQueued = true;
    setImmediate(() => {
      this.pushQueued = false;
      const blocks = [...(this.changedBlocks ?? [])];
      this.changedBlocks = undefined;
      if (!this.process) return;
      if (blocks.length === 0) this.process.optionsChanged();
      for (const name of blocks) this.process.optionsChanged(name);
    });
  }

  release(lease) {
    if (!this.leases.delete(lease)) return;
    if (![...this.leases].some((other) => other.plugin === lease.plugin)) this.active.delete(lease.plugin);
    this.lastCtx = lease.ctx;
    if (this.leases.size > 0) {
      this.changed();
      return;
    }
    clearTimeout(this.stopTimer);
    const process = this.process;
    this.stopTimer = setTimeout(() => {
      if (this.leases.size > 0 || this.process !== process) return;
      this.process = undefined;
      process?.stop().catch(() => undefined);
    }, STOP_GRACE_MS);
    this.stopTimer.unref?.();
  }
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** One plugin's hold on the shared sidecar. */
class Lease {
  constructor(shared, ctx, plugin, order) {
    this.shared = shared;
    this.ctx = ctx;
    this.plugin = plugin;
    this.order = order;
    this.blocks = {};
    this.released = false;
  }

  /** Contribute (or, with `undefined`, withdraw) this plugin's config `block`. */
  setBlock(name, value) {
    if (this.released) return;
    const before = JSON.stringify(this.blocks[name]);
    if (value === undefined) delete this.blocks[name];
    else this.blocks[name] = value;
    if (JSON.stringify(this.blocks[name]) !== before) this.shared.changed(name);
  }

  get sidecar() {
    return this.shared.process;
  }

  /** Whether a call may still be answered by the sidecar (see {@link SidecarProcess.searchable}). */
  get searchable() {
    const process = this.shared.process;
    return Boolean(process && process.searchable);
  }

  get usable() {
    return Boolean(this.shared.process?.usable);
  }

  request(method, params, options) {
    const process = this.shared.process;
    if (!process || this.released) return Promise.reject(new Error('sidecar unavailable'));
    return process.request(method, params, options);
  }

  notify(method, params) {
    this.shared.process?.notify(method, params);
  }

  /** Call `listener(client)` after every start of the sidecar (a restart included). */
  onStarted(listener) {
    this.started = listener;
  }

  release() {
    if (this.released) return;
    this.released = true;
    this.shared.release(this);
  }
}

/** The process-wide shared sidecar (created on first use). */
export function sharedSidecar() {
  globalThis[SHARED_KEY] ??= new SharedSidecar();
  return globalThis[SHARED_KEY];
}

/** A lease on the shared sidecar for `plugin` (its row's `sidecar:` knobs, validated). */
export function acquireSidecar(ctx, plugin, rawKnobs, report) {
  return sharedSidecar().acquire(ctx, plugin, processKnobs(rawKnobs, report));
}
