/**
 * What goes into a chunk's heading trail (its stored `heading` and the header its embedding starts with). A
 * trail helps when it says where a passage sits; two kinds of "heading" only add noise, the same to every
 * passage:
 *
 * - furniture: a heading in effect on nearly every page of a paged document (a booklet's "INSTRUCTIONS" that
 *   opens page 1 and is never closed; a long section such as "Part II. Expenses" over 10 of 17 pages stays), or
 *   the same heading text repeated on most pages (a running title at heading size);
 * - sentences: a parser's heading that reads as running text (a large first line merged with the body's next
 *   lines, a whole instruction set in a heading style).
 *
 * Both stay in the text (the heading block itself is untouched, so it is still stored and searchable); only the
 * trails of the blocks under them lose them.
 */
import type { Block } from './types.js';

/** A paged document needs at least this many pages before a heading can be "on most of them". */
const MIN_PAGES = 5;
/** A heading in effect on more than this share of the pages is the whole document's. */
const NEARLY_ALL = 0.8;
/** A heading text repeated on more than this share of the pages is furniture. */
const MOST = 0.5;
/** A heading of more words than this is a sentence, not a heading. */
const MAX_HEADING_WORDS = 14;

/**
 * Whether `text` reads as a sentence rather than a heading: longer than a heading gets, two sentences of a few
 * words each ("Profit or Loss a profession you practiced as a sole proprietor. An activity qualifies …"), or a
 * long one that ends like a sentence. "Part II. Expenses" and "1.2. Scope" are headings.
 */
export function sentenceLike(text: string): boolean {
  const words = text.trim().split(/\s+/).filter(Boolean);
  if (words.length > MAX_HEADING_WORDS) return true;
  const sentences = text.split(/(?<=\p{Ll}{2}[.!?])\s+(?=\p{Lu})/u).map((s) => s.split(/\s+/).filter(Boolean).length);
  if (sentences.filter((n) => n >= 4).length >= 2) return true;
  return words.length >= 8 && /\p{Ll}{2}[.!?]$/u.test(text.trim());
}

/** The blocks with furniture and sentence headings taken out of their trails (the same array when none are). */
export function cleanTrails(blocks: Block[], pages: number | undefined): Block[] {
  const drop = new Set<string>();
  const paged = pages !== undefined && pages >= MIN_PAGES;
  const inEffect = new Map<string, Set<number>>();
  const asHeading = new Map<string, Set<number>>();
  for (const b of blocks) {
    for (const h of b.headings) {
      if (sentenceLike(h)) drop.add(h);
      if (paged && b.page !== undefined) (inEffect.get(h) ?? inEffect.set(h, new Set()).get(h)!).add(b.page);
    }
    if (paged && b.kind === 'heading' && b.page !== undefined) (asHeading.get(b.text) ?? asHeading.set(b.text, new Set()).get(b.text)!).add(b.page);
  }
  if (paged) {
    for (const [h, on] of inEffect) if (on.size > NEARLY_ALL * pages) drop.add(h);
    for (const [h, on] of asHeading) if (on.size > MOST * pages) drop.add(h);
  }
  if (drop.size === 0) return blocks;
  return blocks.map((b) => (b.headings.some((h) => drop.has(h)) ? { ...b, headings: b.headings.filter((h) => !drop.has(h)) } : b));
}
