// The suggester's note as a DSH user message: labelled with the plugin's own source
// ({kind: "search-suggester", form: "notice", summary}, plan "The delivery"), because an
// unlabeled context would render as a user prompt in derived history. No DSH import, so it
// is tested on its own (tests/harness/test_dsh_note.py).

import { randomUUID } from 'node:crypto';

/** Seed: a notice summary is at most 120 characters (dsh-llm CONTEXT_SUMMARY_MAX_CHARS). */
export const SUMMARY_MAX = 120;
export const NOTE_SOURCE_KIND = 'search-suggester';

/** `text` cut to at most `max` UTF-16 units, never in the middle of a surrogate pair: half an
 * emoji is not text, and the sidecar refuses a request holding one (-32602: a tool result or
 * a task cut there lost its note or its lead). */
export function cutText(text, max) {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

export function noticeSummary(text) {
  return text.length <= SUMMARY_MAX ? text : `${cutText(text, SUMMARY_MAX - 1)}…`;
}

/** One suggester note as a labelled user message (never a content replacement). The child is
 * untrusted: a summary that is not a non-empty string (an array, an object, a number: each
 * slipped past the 120-character bound, an array of strings as a summary of megabytes) is
 * replaced by the note's first line. */
export function noteMessage(context) {
  const given = context.source?.summary;
  const summary = typeof given === 'string' && given ? given : context.text.split('\n')[0];
  return Object.freeze({
    id: randomUUID(),
    role: 'user',
    content: [{ type: 'text', text: context.text }],
    source: Object.freeze({
      kind: NOTE_SOURCE_KIND,
      form: 'notice',
      summary: noticeSummary(summary),
    }),
  });
}

/** Longest task text sent to `dsh/taskLead`, characters (the wire's `MAX_TASK_CHARS`). */
export const MAX_TASK_CHARS = 200000;

/** The task text of a step's messages (the task lead's): the text blocks of its user messages
 * that are no plugin's or harness's context (a labelled `source.form`: a suggester note, a
 * runtime snapshot), joined; at most {@link MAX_TASK_CHARS} characters. */
export function taskText(messages) {
  const parts = [];
  for (const m of Array.isArray(messages) ? messages : []) {
    if (m?.role !== 'user' || (m.source?.kind && m.source.kind !== 'user') || m.source?.form) continue;
    for (const block of Array.isArray(m.content) ? m.content : []) {
      if (block?.type === 'text' && typeof block.text === 'string') parts.push(block.text);
    }
  }
  return cutText(parts.join('\n\n'), MAX_TASK_CHARS).trim();
}
