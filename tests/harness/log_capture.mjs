// A test-only DSH plugin: a logger exporter (DSH's logger service, `ctx.logger`, keeps its
// messages in memory unless an exporter is mounted) that appends every message as one JSON line
// `{name, type, text}` to `config.file`, formatted the way cordis' own exporters format them
// (a `%s` first argument is a format string). Mounted by tests/harness/scenario.py's `--log-capture`.
import { appendFileSync } from 'node:fs';

export const name = 'log-capture';

export function apply(ctx, config) {
  ctx.logger.exporter({
    export(message) {
      const [first, ...rest] = message.args ?? [];
      const text = typeof first === 'string' && first.includes('%s') ? first.replace('%s', String(rest.shift())) : String(first);
      const line = [text, ...rest.map(String)].join(' ');
      try {
        appendFileSync(config.file, JSON.stringify({ name: message.name, type: message.type, text: line }) + '\n');
      } catch {
        // a test exporter never fails the harness
      }
    },
  });
}
