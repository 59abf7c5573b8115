/**
 * Blocks for a whole PDF from its laid-out pages: running headers, footers and page numbers dropped; a
 * paragraph that a column or page break cut inside a hyphenated word joined again; line-end hyphens undone
 * (hard ones only where the document never writes the word with its hyphen); larger-than-body short
 * paragraphs promoted to headings (levels by size; not when they read as sentences), heading path carried
 * across pages.
 */
import { sentenceLike } from '../heading-trail.js';
import type { Block } from '../types.js';
import type { Paragraph } from './pdf-layout.js';

export interface LaidOutPage {
  page: number;
  paragraphs: Paragraph[];
}

interface Placed extends Paragraph {
  page: number;
}

export function toBlocks(pages: LaidOutPage[]): { blocks: Block[]; firstHeading?: string } {
  const kept = withoutFurniture(pages);
  const forms = wordForms(kept);
  const paragraphs = joinBrokenWords(kept, forms)
    .map((p) => ({ ...p, text: joinLines(p.lines, forms) }))
    .filter((p) => p.text);

  const weights = new Map<number, number>();
  for (const p of paragraphs) {
    const k = Math.round(p.size * 2) / 2;
    weights.set(k, (weights.get(k) ?? 0) + p.text.length);
  }
  let body = 10;
  let most = -1;
  for (const [size, w] of weights) if (w > most) {
    most = w;
    body = size;
  }
  const headingSizes = [...weights.keys()].filter((s) => s >= body * 1.15).sort((a, b) => b - a).slice(0, 4);

  const blocks: Block[] = [];
  const path: string[] = [];
  const pathSizes: number[] = [];
  let firstHeading: string | undefined;
  for (const p of paragraphs) {
    const size = Math.round(p.size * 2) / 2;
    // A large paragraph that reads as running text (a big first line merged with body lines) is not a heading.
    const isHeading = headingSizes.includes(size) && p.lines.length <= 3 && p.text.length <= 200 && /\p{L}/u.test(p.text) && !sentenceLike(p.text);
    if (isHeading) {
      while (pathSizes.length && pathSizes[pathSizes.length - 1]! <= size) {
        pathSizes.pop();
        path.pop();
      }
      path.push(p.text);
      pathSizes.push(size);
      firstHeading ??= p.text;
      blocks.push({ text: p.text, page: p.page, headings: [...path], kind: 'heading' });
    } else {
      blocks.push({ text: p.text, page: p.page, headings: [...path], kind: 'paragraph' });
    }
  }
  return firstHeading === undefined ? { blocks } : { blocks, firstHeading };
}

/** "3", "-3-", "- 3 -", "— iv —", "Page 3", "Page 3 of 9", "3 / 9", "3 of 9". */
const PAGE_NUMBER = /^(page|p\.|seite|página|page n°)?\s*[-–—]?\s*([0-9]{1,4}|[ivxlc]{1,7})\s*[-–—]?\s*((of|\/|de|von|sur)\s*[0-9]{1,4})?$/i;

/** Paragraphs at a page's top or bottom edge that are page numbers, or recur on several pages, are furniture. */
function withoutFurniture(pages: LaidOutPage[]): Placed[] {
  const edges = pages.map((p) => edgeParagraphs(p.paragraphs));
  const counts = new Map<string, number>();
  for (const e of edges) {
    const keys = new Set([...e.entries()].map(([para, where]) => `${where}:${marginKey(para)}`));
    for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const needed = Math.max(2, Math.min(5, Math.ceil(pages.length * 0.3)));
  const out: Placed[] = [];
  pages.forEach((p, i) => {
    const edge = edges[i]!;
    for (const para of p.paragraphs) {
      const where = edge.get(para);
      if (where !== undefined) {
        const text = para.lines.join(' ').trim();
        // A bare number larger than the document could number its pages ("2021" under a letter) is content.
        const bare = /^\d+$/.test(text) && Number(text) > pages.length + 50;
        if (PAGE_NUMBER.test(text) && !bare) continue;
        if ((counts.get(`${where}:${marginKey(para)}`) ?? 0) >= needed) continue;
      }
      out.push({ ...para, page: p.page });
    }
  });
  return out;
}

/** The two top-most and two bottom-most short paragraphs of a page, by position (not reading order). */
function edgeParagraphs(paragraphs: Paragraph[]): Map<Paragraph, 'top' | 'bottom'> {
  const short = paragraphs.filter((p) => p.lines.length <= 2 && p.lines.join(' ').length <= 160);
  const out = new Map<Paragraph, 'top' | 'bottom'>();
  if (!paragraphs.length) return out;
  const byTop = [...paragraphs].sort((a, b) => a.y0 - b.y0);
  const byBottom = [...paragraphs].sort((a, b) => b.y1 - a.y1);
  for (const p of byTop.slice(0, 2)) if (short.includes(p)) out.set(p, 'top');
  for (const p of byBottom.slice(0, 2)) if (short.includes(p) && !out.has(p)) out.set(p, 'bottom');
  return out;
}

function marginKey(p: Paragraph): string {
  return p.lines.join(' ').toLowerCase().replace(/[0-9]+|\b[ivxlc]+\b/g, '#').replace(/\s+/g, ' ').trim();
}

const TRAILING_HYPHEN = /\p{L}[-\u2010\u00ad]$/u;
const LEADING_LOWER = /^\p{Ll}/u;

/**
 * A paragraph that ends inside a word at the foot of a column or page (a hyphen, or a word fragment whose
 * join with what follows is a word of the document), followed by one that starts in lower case, is the same
 * paragraph: join them so the word comes back whole.
 */
function joinBrokenWords(paragraphs: Placed[], forms: WordForms): Placed[] {
  const out: Placed[] = [];
  for (const p of paragraphs) {
    const prev = out[out.length - 1];
    const last = prev?.lines[prev.lines.length - 1];
    const first = p.lines[0] ?? '';
    if (prev && last && LEADING_LOWER.test(first) && (TRAILING_HYPHEN.test(last) || lostHyphen(last, first, forms))) {
      out[out.length - 1] = { ...prev, lines: [...prev.lines, ...p.lines], y1: Math.max(prev.y1, p.y1) };
      continue;
    }
    out.push(p);
  }
  return out;
}

interface WordForms {
  /** Words written whole inside lines (never a line's first or last word, which may be fragments), counted. */
  joined: Map<string, number>;
  /** Hyphenated compounds written inside lines, by their letters without hyphens, counted. */
  compounds: Map<string, { form: string; count: number }>;
}

/** Words as the document writes them inside its lines, to judge line ends by its own usage. */
function wordForms(paragraphs: Paragraph[]): WordForms {
  const joined = new Map<string, number>();
  const compounds = new Map<string, { form: string; count: number }>();
  for (const p of paragraphs) {
    for (const line of p.lines) {
      const words = [...line.matchAll(/\p{L}+(?:[-\u2010]\p{L}+)*/gu)].map((m) => m[0].toLowerCase());
      for (const w of words.slice(1, -1)) {
        if (/[-\u2010]/.test(w)) {
          const key = w.replace(/[-\u2010]/g, '');
          compounds.set(key, { form: w, count: (compounds.get(key)?.count ?? 0) + 1 });
        } else {
          joined.set(w, (joined.get(w) ?? 0) + 1);
        }
      }
    }
  }
  return { joined, compounds };
}

const NO_FORMS: WordForms = { joined: new Map(), compounds: new Map() };

/**
 * Joins a paragraph's lines. A soft hyphen (U+00AD) at a line end always joins the word; a hard one joins it
 * ("reada-" + "ble" → "readable") unless the document's own usage says it is a compound (see keepsHyphen). A dash or a hyphen before a capital or digit keeps the hyphen without a space.
 * pdf.js drops soft hyphens that fonts map to U+00AD, so a line ending in a fragment whose join with the next
 * line's first word is a word of the document ("ali" + "ens") is joined too, and a word that is a known
 * compound without its hyphen ("dualstatus") gets it back.
 */
export function joinLines(lines: string[], forms: WordForms = NO_FORMS): string {
  let out = '';
  for (const raw of lines) {
    const line = raw.trim();
    if (!line) continue;
    if (!out) {
      out = line;
      continue;
    }
    if (/\p{L}\u00ad$/u.test(out)) {
      out = out.slice(0, -1) + line;
    } else if (/\p{L}[-\u2010]$/u.test(out) && /^\p{L}/u.test(line)) {
      const lower = LEADING_LOWER.test(line);
      // Before a capital the hyphen is usually real ("non-English"), unless the document writes the join
      // ("Trace-" + "Monkey" where it says "TraceMonkey").
      if (lower ? !keepsHyphen(out, line, forms) : knownJoin(out, line, forms)) out = out.slice(0, -1) + line;
      else out += line;
    } else if (/[\u2013\u2014]$/.test(out) && !/\s[\u2013\u2014]$/.test(out)) {
      out += line;
    } else if (CJK.test(out.slice(-1)) && CJK.test(line.charAt(0))) {
      out += line;
    } else if (LEADING_LOWER.test(line) && lostHyphen(out, line, forms)) {
      out += line;
    } else {
      out += ' ' + line;
    }
  }
  // Soft hyphens inside a line are invisible break hints, not text.
  out = out.replace(/\u00ad/g, '');
  if (!forms.compounds.size) return out;
  return out.replace(/\p{L}+/gu, (w) => {
    const lower = w.toLowerCase();
    // Where the document writes it both ways, the more frequent form wins.
    const compound = forms.compounds.get(lower);
    return compound && compound.count >= (forms.joined.get(lower) ?? 0) ? rehyphenate(w, compound.form) : w;
  });
}

function keepsHyphen(before: string, after: string, forms: WordForms): boolean {
  const left = /(\p{L}+)[-\u2010]$/u.exec(before)?.[1]?.toLowerCase();
  const right = /^\p{L}+/u.exec(after)?.[0]?.toLowerCase();
  if (!left || !right) return false;
  const joined = forms.joined.get(left + right) ?? 0;
  if ((forms.compounds.get(left + right)?.count ?? 0) > joined) return true;
  // "general-" + "purpose": both halves are words and their join is not.
  return joined === 0 && forms.joined.has(left) && forms.joined.has(right);
}

function knownJoin(before: string, after: string, forms: WordForms): boolean {
  const left = /(\p{L}+)[-\u2010]$/u.exec(before)?.[1]?.toLowerCase();
  const right = /^\p{L}+/u.exec(after)?.[0]?.toLowerCase();
  if (!left || !right) return false;
  return (forms.joined.get(left + right) ?? 0) > (forms.compounds.get(left + right)?.count ?? 0);
}

/** Whether `before` ends and `after` starts with fragments of one word of the document. */
function lostHyphen(before: string, after: string, forms: WordForms): boolean {
  const left = /(\p{L}+)$/u.exec(before)?.[1]?.toLowerCase();
  const right = /^\p{L}+/u.exec(after)?.[0]?.toLowerCase();
  if (!left || !right) return false;
  if (forms.joined.has(left) && forms.joined.has(right)) return false;
  return forms.joined.has(left + right) || forms.compounds.has(left + right);
}

/** Puts a compound's hyphens back into `word` (same letters), keeping the word's own capitals. */
function rehyphenate(word: string, compound: string): string {
  let out = '';
  let i = 0;
  for (const ch of compound) {
    if (ch === '-' || ch === '\u2010') out += ch;
    else out += word[i++] ?? '';
  }
  return out;
}

const CJK = /[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/;
