/**
 * The extension's settings (package.json `contributes.configuration`) → how to spawn the
 * sidecar and its `initializationOptions`. Settings are user input: wrong types are reported
 * as `Error`s naming the setting, never passed on.
 */

/** Raw values of the `dsh.*` settings, as the editor hands them over (any type). */
export interface RawSettings {
  command?: unknown;
  args?: unknown;
  initializationOptions?: unknown;
  suggesterEnabled?: unknown;
}

/** How to start the sidecar and what to send as `initializationOptions`. */
export interface SidecarLaunch {
  command: string;
  args: string[];
  initializationOptions: Record<string, unknown>;
}

/** Default command: the console script `pip install` puts on PATH (sidecar `pyproject.toml`). */
export const DEFAULT_COMMAND = 'dsh-search';
export const DEFAULT_ARGS = ['serve'];

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Resolve the settings. `suggesterEnabled` (default true: the "what would it say" command
 * needs the suggester, which ships disabled) fills `suggester.enabled` unless the
 * initialization options set it explicitly. Throws `Error` naming the bad setting.
 */
export function resolveLaunch(raw: RawSettings): SidecarLaunch {
  let command = DEFAULT_COMMAND;
  if (raw.command !== undefined && raw.command !== null && raw.command !== '') {
    if (typeof raw.command !== 'string' || !raw.command.trim()) {
      throw new Error('dsh.sidecar.command must be a non-empty string');
    }
    command = raw.command.trim();
  }
  let args = [...DEFAULT_ARGS];
  if (raw.args !== undefined && raw.args !== null) {
    if (!Array.isArray(raw.args) || !raw.args.every((a) => typeof a === 'string')) {
      throw new Error('dsh.sidecar.args must be a list of strings');
    }
    args = [...raw.args];
  }
  let options: Record<string, unknown> = {};
  if (raw.initializationOptions !== undefined && raw.initializationOptions !== null) {
    if (!isObj(raw.initializationOptions)) {
      throw new Error('dsh.initializationOptions must be an object {router, bandit, suggester}');
    }
    options = JSON.parse(JSON.stringify(raw.initializationOptions)) as Record<string, unknown>;
  }
  const enabled = raw.suggesterEnabled === undefined || raw.suggesterEnabled === null ? true : raw.suggesterEnabled;
  if (typeof enabled !== 'boolean') {
    throw new Error('dsh.suggester.enabled must be true or false');
  }
  if (options.suggester !== undefined && !isObj(options.suggester)) {
    throw new Error('dsh.initializationOptions.suggester must be an object');
  }
  const suggester = { ...((options.suggester as Record<string, unknown>) ?? {}) };
  if (!('enabled' in suggester)) {
    suggester.enabled = enabled;
  }
  options.suggester = suggester;
  return { command, args, initializationOptions: options };
}
