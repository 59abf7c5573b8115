/**
 * A result's snippet: the excerpt of the chunk that opens with its answer (core/excerpt.ts, the same window the CLI
 * shows), the answer as one styled run, with the query's terms in `<mark>`. Terms are found with the same matcher
 * the service uses, so the page and the API agree.
 */
import { EXCERPT_CHARS, excerpt, type TextRange } from '../core/excerpt.js';
import { termRanges } from '../search/highlights.js';
import { queryTerms } from '../search/terms.js';
import { withoutDirectionalControls } from './display-text.js';
import { formatTime } from './format.js';
import { type Html, html } from './html.js';

/** An ISO 8601 moment as the e-mail parser writes a Date header: shown as people read times. */
const ISO_MOMENT = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})/g;

/** `text` with each ISO moment in it as a <time> ("2026-03-03 09:00 UTC"), the rest escaped. */
export function readableTimes(text: string): Html {
  const parts: Html[] = [];
  let at = 0;
  for (const m of text.matchAll(ISO_MOMENT)) {
    const ms = Date.parse(m[0]);
    if (Number.isNaN(ms)) continue;
    parts.push(html`${text.slice(at, m.index)}<time datetime="${m[0]}">${formatTime(ms)}</time>`);
    at = m.index + m[0].length;
  }
  return html`${parts}${text.slice(at)}`;
}

/**
 * Where the excerpt may start past the headings its chunk opens with: they are said once, above the snippet (the
 * result's "p. 3 · Library loans" line), not again as the snippet's first words. A chunk may open with more than one
 * line of its heading path (a title with nothing under it opens the next section: "Lighthouse Keeping", "Lamps").
 */
function pastHeading(text: string, start: number, heading: string | undefined): number {
  const path = heading?.split(' > ').map((h) => h.trim()) ?? [];
  let at = start;
  for (let from = 0; ; ) {
    const next = path.findIndex((h, i) => i >= from && h !== '' && text.startsWith(h, at) && gapAfter(text, at + h.length) !== null);
    if (next < 0) return at;
    at += path[next]!.length + gapAfter(text, at + path[next]!.length)!;
    from = next + 1;
  }
}

/** The length of what separates a heading from the text after it (a line break, or a colon or dash and spaces). */
function gapAfter(text: string, at: number): number | null {
  return /^[ \t]*\r?\n\s*|^[ \t]*[:.—–-]?[ \t]+/.exec(text.slice(at, at + 20))?.[0].length ?? null;
}

export function snippet(p: { text: string; snippet?: string; highlights: readonly TextRange[]; heading?: string }, query: string, max = EXCERPT_CHARS): Html {
  // An override in the text (an e-mail subject's U+202E) must not reverse what follows it: the From/To line. The
  // controls are replaced one for one, so the answer's offsets still hold.
  const text = withoutDirectionalControls(p.text);
  const found = excerpt(text, p.snippet === undefined ? undefined : withoutDirectionalControls(p.snippet), p.highlights, max);
  const start = pastHeading(text, found.start, p.heading);
  const { end, passage } = found;
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
      if (b > a) parts.push(inPassage ? html`<span class="passage">${readableTimes(text.slice(a, b))}</span>` : readableTimes(text.slice(a, b)));
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
  return html`${found.start > 0 ? '… ' : ''}${parts}${end < text.length ? ' …' : ''}`;
}

/**
 * A passage that is only a weak match: not close in meaning (under the embedder's relevance floor) and holding at
 * most half of the query's words — one that matched only "per" of "per diem rates". Without a floor nothing is weak.
 */
export function weakPassage(p: { text: string; scores: { vector?: { similarity: number } } }, query: string, floor: number | null): boolean {
  if (floor === null || (p.scores.vector?.similarity ?? 0) >= floor) return false;
  const terms = queryTerms(query);
  if (terms.length === 0) return false;
  const found = terms.filter((t) => termRanges(p.text, [t]).length > 0).length;
  return found * 2 <= terms.length;
}
