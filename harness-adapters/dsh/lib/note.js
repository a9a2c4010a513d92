// The suggester's note as a DSH user message: labelled with the plugin's own source
// ({kind: "search-suggester", form: "notice", summary}, plan "The delivery"), because an
// unlabeled context would render as a user prompt in derived history. No DSH import, so it
// is tested on its own (tests/harness/test_dsh_note.py).

import { randomUUID } from 'node:crypto';

/** Seed: a notice summary is at most 120 characters (dsh-llm CONTEXT_SUMMARY_MAX_CHARS). */
export const SUMMARY_MAX = 120;
export const NOTE_SOURCE_KIND = 'search-suggester';

export function noticeSummary(text) {
  return text.length <= SUMMARY_MAX ? text : `${text.slice(0, SUMMARY_MAX - 1)}…`;
}

/** One suggester note as a labelled user message (never a content replacement). */
export function noteMessage(context) {
  const source = context.source ?? {};
  return Object.freeze({
    id: randomUUID(),
    role: 'user',
    content: [{ type: 'text', text: context.text }],
    source: Object.freeze({
      kind: NOTE_SOURCE_KIND,
      form: 'notice',
      summary: noticeSummary(source.summary ?? context.text.split('\n')[0]),
    }),
  });
}

