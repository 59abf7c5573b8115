/**
 * A result's snippet: the excerpt of the chunk that opens with its answer (core/excerpt.ts, the same window the CLI
 * shows), the answer as one styled run, with the query's terms in `<mark>`. Terms are found with the same matcher
 * the service uses, so the page and the API agree.
 */
import { EXCERPT_CHARS, excerpt, type TextRange } from '../core/excerpt.js';
import { termRanges } from '../search/highlights.js';
import { queryTerms } from '../search/terms.js';
import { withoutDirectionalControls } from './display-text.js';
import { type Html, html } from './html.js';

export function snippet(p: { text: string; snippet?: string; highlights: readonly TextRange[] }, query: string, max = EXCERPT_CHARS): Html {
  // An override in the text (an e-mail subject's U+202E) must not reverse what follows it: the From/To line. The
  // controls are replaced one for one, so the answer's offsets still hold.
  const text = withoutDirectionalControls(p.text);
  const { start, end, passage } = excerpt(text, p.snippet === undefined ? undefined : withoutDirectionalControls(p.snippet), p.highlights, max);
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
