/**
 * A result's snippet: a short excerpt of the chunk around its best passage, with the query's terms in
 * `<mark>`. The passage is the search service's widest highlight (its best-matching sentence window);
 * terms inside it are found with the same matcher the service uses, so the page and the API agree.
 */
import { type Range, termRanges } from '../search/highlights.js';
import { queryTerms } from '../search/terms.js';
import { type Html, html } from './html.js';

export const SNIPPET_CHARS = 320;

/** Moves `i` back (or forward) to a word boundary, at most 30 characters, so words are not cut. */
function snap(text: string, i: number, dir: -1 | 1): number {
  for (let k = 0; k < 30; k++) {
    const j = i + dir * k;
    if (j <= 0 || j >= text.length) return Math.max(0, Math.min(text.length, j));
    if (/\s/.test(text[j]!)) return dir === 1 ? j + 1 : j;
  }
  return i;
}

/** The [start, end) excerpt of `text` centred on `passage`, at most `max` characters. */
export function excerptRange(text: string, passage: Range | undefined, max = SNIPPET_CHARS): Range {
  if (text.length <= max) return [0, text.length];
  const [ps, pe] = passage ?? [0, 0];
  if (pe - ps >= max) return [ps, snap(text, ps + max, -1)];
  const room = max - (pe - ps);
  let start = Math.max(0, ps - Math.floor(room / 2));
  const end = Math.min(text.length, start + max);
  start = Math.max(0, end - max);
  return [start === 0 ? 0 : snap(text, start, 1), end === text.length ? end : snap(text, end, -1)];
}

export function snippet(text: string, highlights: readonly Range[], query: string, max = SNIPPET_CHARS): Html {
  const passage = highlights.reduce<Range | undefined>((best, r) => (!best || r[1] - r[0] > best[1] - best[0] ? r : best), undefined);
  const [start, end] = excerptRange(text, passage, max);
  const marks = termRanges(text, queryTerms(query)).filter(([s, e]) => s >= start && e <= end);
  const parts: Html[] = [];
  let at = start;
  const plain = (to: number) => {
    if (to <= at) return;
    const [ps, pe] = passage ?? [0, 0];
    // Split the plain text where the passage begins and ends, so the passage is one styled run.
    for (const [a, b, inPassage] of [
      [at, Math.min(to, Math.max(at, ps)), false],
      [Math.max(at, ps), Math.min(to, pe), true],
      [Math.max(at, pe), to, false],
    ] as const) {
      if (b > a) parts.push(inPassage ? html`<span class="passage">${text.slice(a, b)}</span>` : html`${text.slice(a, b)}`);
    }
    at = to;
  };
  for (const [s, e] of marks) {
    if (s < at) continue;
    plain(s);
    parts.push(html`<mark>${text.slice(s, e)}</mark>`);
    at = e;
  }
  plain(end);
  return html`${start > 0 ? '… ' : ''}${parts}${end < text.length ? ' …' : ''}`;
}
