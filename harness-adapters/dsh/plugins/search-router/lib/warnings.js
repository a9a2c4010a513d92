// Warnings a user must see. DSH's logger service (`ctx.logger`) is where plugins log, but
// rc.8 composes no exporter that prints it (its messages stay in the logger's in-memory
// buffer unless a logger exporter is mounted), so a warning about a user's own configuration
// (a retired row, a misspelt key, a value the sidecar refused) also goes to the harness's
// stderr, once per distinct text: the terminal `dsh` and `dsh web` run in. No warning ever
// carries a value (a key could be one), only names.

import { cutText } from './note.js';

const printed = new Set();

/** Most distinct warning texts remembered (a flood of distinct ones stops being printed). */
export const MAX_WARNINGS = 200;
/** Longest warning text, UTF-16 units before escaping (a longer one is cut and marked `…`): a
 * text from the child (its refusal of `initialize`, an error) is untrusted and was printed, and
 * remembered, whole. */
export const MAX_WARNING_CHARS = 2000;

/** `text` for a terminal: every control character (C0 but the tab, DEL, C1), line and paragraph
 * separator and bidi control shown as an escape (`\x1b`, `\n`, `\u202e`), so a warning is one
 * line and a text from the child (`the sidecar says: …`) never writes a terminal sequence (an
 * OSC 52 clipboard write, a cursor move) to the user's terminal. */
export function forTerminal(text) {
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Log `message` as a warning of `scope` through DSH's logger; print it once on stderr. */
export function warn(ctx, scope, message, error) {
  const whole = `${message}${error ? `: ${error?.message ?? error}` : ''}`;
  const text = whole.length <= MAX_WARNING_CHARS ? whole : `${cutText(whole, MAX_WARNING_CHARS - 1)}…`;
  try {
    ctx?.logger?.(scope)?.warn?.('%s', text);
  } catch {
    // logging never throws into the harness
  }
  if (printed.has(`${scope}\0${text}`) || printed.size >= MAX_WARNINGS) return;
  printed.add(`${scope}\0${text}`);
  try {
    process.stderr.write(`[${scope}] warning: ${forTerminal(text)}\n`);
  } catch {
    // a closed stderr is no reason to fail
  }
}

/** A quiet diagnostic (DSH's logger only): things that fail open and are no user's doing. */
export function note(ctx, scope, message, error) {
  try {
    ctx?.logger?.(scope)?.warn?.('%s', `${message}${error ? `: ${error?.message ?? error}` : ''}`);
  } catch {
    // logging never throws into the harness
  }
}

/** One line of the sidecar's own log (the bandit seed's `[bandit-search] …` line, a ledger line)
 * through DSH's logger service, byte-exact (`%s`: the logger formats its first argument). */
export function info(ctx, scope, line) {
  try {
    ctx?.logger?.(scope)?.info?.('%s', line);
  } catch {
    // logging never throws into the harness
  }
}
