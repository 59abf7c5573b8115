/**
 * Reading order for pdf2json output. pdf2json gives positioned text runs, often split mid-word (kerning) or
 * holding whole lines; this turns them into paragraphs in reading order:
 *   runs → lines (same baseline) → segments (split at column-sized gaps) → paragraphs (vertical proximity,
 *   same column, same font size) → XY-cut ordering (columns before rows) → text with hyphenation undone.
 * Coordinates are pdf2json "form units" (1/16 pt at its 1.5 scale); run widths (`w`) come in an unknown scale
 * per document, so that scale is measured from runs that touch on the same line.
 */
import type { Block } from '../types.js';

export interface PdfText {
  x: number;
  y: number;
  w: number;
  R: { T: string; TS?: number[]; RA?: number }[];
}

export interface PdfPage {
  Width: number;
  Height: number;
  Texts: PdfText[];
}

interface Run {
  text: string;
  x: number;
  y: number;
  width: number;
  size: number;
}

interface Segment {
  x0: number;
  x1: number;
  y: number;
  size: number;
  text: string;
}

interface Paragraph {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  size: number;
  lines: Segment[];
  /** Line advance measured between the paragraph's first two lines. */
  advance: number;
}

export interface LaidOutPage {
  page: number;
  paragraphs: { text: string; size: number; lines: number }[];
}

/** Font sizes arrive in points; heights in form units are points / 16. */
const UNITS_PER_POINT = 1 / 16;

export function layoutPages(pages: PdfPage[]): LaidOutPage[] {
  const scale = widthScale(pages);
  return pages.map((page, i) => ({ page: i + 1, paragraphs: layoutPage(page, scale) }));
}

function layoutPage(page: PdfPage, scale: number): LaidOutPage['paragraphs'] {
  const upright: Run[] = [];
  const rotated: Run[] = [];
  for (const t of page.Texts) {
    const text = cleanText(t.R.map((r) => safeDecode(r.T)).join(''));
    if (!text.trim()) continue;
    const size = t.R[0]?.TS?.[1] ?? 10;
    const run = { text, x: t.x, y: t.y, width: t.w * scale, size: Math.max(1, size) * UNITS_PER_POINT };
    if (t.R.some((r) => r.RA !== undefined && r.RA !== 0)) rotated.push(run);
    else upright.push(run);
  }
  const segments = toSegments(toLines(upright));
  const paragraphs = readingOrder(toParagraphs(segments)).map((p) => ({
    text: joinLines(p.lines.map((l) => l.text)),
    size: p.size / UNITS_PER_POINT,
    lines: p.lines.length,
  }));
  if (rotated.length) {
    // Text at an angle (stamps, axis labels) has no dependable line structure; keep it as one paragraph.
    rotated.sort((a, b) => a.y - b.y || a.x - b.x);
    paragraphs.push({ text: rotated.map((r) => r.text.trim()).join(' '), size: rotated[0]!.size / UNITS_PER_POINT, lines: 1 });
  }
  return paragraphs.filter((p) => p.text.trim());
}

/**
 * Measures how `w` maps to form units. Usually it is points (1/16 of a form unit); when a generator scales text
 * through the text matrix it is not, which shows as same-line neighbours all far apart or all overlapping.
 * Then the scale is the low decile of advance/width: the runs that touch their neighbour.
 */
function widthScale(pages: PdfPage[]): number {
  const ratios: number[] = [];
  const gapsEm: number[] = [];
  for (const page of pages) {
    const ts = page.Texts;
    for (let i = 1; i < ts.length && ratios.length < 20000; i++) {
      const a = ts[i - 1]!;
      const b = ts[i]!;
      if (Math.abs(a.y - b.y) > 0.05 || b.x <= a.x || a.w <= 0) continue;
      const len = a.R.reduce((n, r) => n + safeDecode(r.T).length, 0);
      if (len < 3) continue;
      ratios.push((b.x - a.x) / a.w);
      const em = Math.max(1, a.R[0]?.TS?.[1] ?? 10) * UNITS_PER_POINT;
      gapsEm.push((b.x - a.x - a.w * UNITS_PER_POINT) / em);
    }
  }
  if (ratios.length < 20) return UNITS_PER_POINT;
  const typicalGap = median(gapsEm);
  if (typicalGap > -0.5 && typicalGap < 1.5) return UNITS_PER_POINT;
  ratios.sort((p, q) => p - q);
  const q = ratios[Math.floor(ratios.length * 0.1)]!;
  return q > 0 && Number.isFinite(q) ? q : UNITS_PER_POINT;
}

function toLines(runs: Run[]): Run[][] {
  runs.sort((a, b) => a.y - b.y || a.x - b.x);
  const lines: Run[][] = [];
  let current: Run[] = [];
  let lineY = 0;
  let lineSize = 0;
  for (const run of runs) {
    // Superscripts and subscripts sit a fraction of a line off the baseline and still belong to it.
    if (current.length && Math.abs(run.y - lineY) <= 0.5 * Math.min(lineSize, run.size)) {
      current.push(run);
      if (run.size > lineSize) {
        lineSize = run.size;
        lineY = run.y;
      }
    } else {
      if (current.length) lines.push(current);
      current = [run];
      lineY = run.y;
      lineSize = run.size;
    }
  }
  if (current.length) lines.push(current);
  return lines;
}

const CJK = /[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/;

/**
 * pdf2json hands Hebrew/Arabic lines over in visual (left-to-right) order; reverse to logical order, then turn
 * embedded left-to-right runs (numbers, Latin words) back around and swap mirrored brackets.
 */
function visualToLogical(text: string): string {
  const reversed = [...text].reverse().join('');
  return reversed
    .replace(/[0-9A-Za-z][0-9A-Za-z.,:%/+-]*[0-9A-Za-z%]|[0-9A-Za-z]/g, (m) => [...m].reverse().join(''))
    .replace(/[()[\]{}<>]/g, (c) => ({ '(': ')', ')': '(', '[': ']', ']': '[', '{': '}', '}': '{', '<': '>', '>': '<' })[c]!);
}

const RTL = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]/g;

function toSegments(lines: Run[][]): Segment[] {
  const segments: Segment[] = [];
  for (const line of lines) {
    const sample = line.map((r) => r.text).join('');
    const rtl = (sample.match(RTL)?.length ?? 0) > sample.replace(/\s/g, '').length / 2;
    line.sort((a, b) => a.x - b.x);
    let seg: Run[] = [];
    const flush = (): void => {
      if (!seg.length) return;
      let text = '';
      for (let i = 0; i < seg.length; i++) {
        const r = seg[i]!;
        if (i > 0) {
          const prev = seg[i - 1]!;
          const gap = r.x - (prev.x + prev.width);
          const needsSpace =
            gap > 0.12 * Math.max(prev.size, r.size) &&
            !/\s$/.test(text) &&
            !/^\s/.test(r.text) &&
            !(CJK.test(text.slice(-1)) && CJK.test(r.text.charAt(0)));
          if (needsSpace) text += ' ';
        }
        text += r.text;
      }
      if (rtl) text = visualToLogical(text);
      const last = seg[seg.length - 1]!;
      segments.push({
        x0: seg[0]!.x,
        x1: Math.max(...seg.map((r) => r.x + r.width), last.x),
        y: Math.min(...seg.map((r) => r.y)),
        size: median(seg.map((r) => r.size)),
        text: text.replace(/\s+/g, ' ').trim(),
      });
      seg = [];
    };
    for (const run of line) {
      const prev = seg[seg.length - 1];
      // A gap wider than ~1.5 em is a column gutter or a table cell border, not a word space.
      if (prev && run.x - (prev.x + prev.width) > 1.5 * Math.max(prev.size, run.size)) flush();
      seg.push(run);
    }
    flush();
  }
  return segments.filter((s) => s.text);
}

function toParagraphs(segments: Segment[]): Paragraph[] {
  segments.sort((a, b) => a.y - b.y || a.x0 - b.x0);
  const paragraphs: Paragraph[] = [];
  for (const seg of segments) {
    let best: Paragraph | undefined;
    let bestDy = Infinity;
    for (let i = paragraphs.length - 1; i >= 0 && i >= paragraphs.length - 60; i--) {
      const p = paragraphs[i]!;
      const last = p.lines[p.lines.length - 1]!;
      const dy = seg.y - last.y;
      if (dy <= 0.3 * seg.size || dy >= bestDy) continue;
      const sizeRatio = seg.size / p.size;
      if (sizeRatio < 0.85 || sizeRatio > 1.18) continue;
      const limit = p.lines.length >= 2 ? p.advance * 1.3 : 1.75 * Math.max(seg.size, p.size);
      if (dy > limit) continue;
      const overlap = Math.min(seg.x1, p.x1) - Math.max(seg.x0, p.x0);
      if (overlap <= 0) continue;
      // A first-line indent after a line that ended a sentence starts a new paragraph.
      const indent = seg.x0 - p.x0;
      if (indent > 1.0 * seg.size && indent < 8 * seg.size && /[.!?:]["')\]]?$/.test(last.text)) continue;
      best = p;
      bestDy = dy;
    }
    if (best) {
      if (best.lines.length === 1) best.advance = seg.y - best.lines[0]!.y;
      best.lines.push(seg);
      best.x0 = Math.min(best.x0, seg.x0);
      best.x1 = Math.max(best.x1, seg.x1);
      best.y1 = Math.max(best.y1, seg.y + seg.size);
    } else {
      paragraphs.push({ x0: seg.x0, x1: seg.x1, y0: seg.y, y1: seg.y + seg.size, size: seg.size, lines: [seg], advance: 0 });
    }
  }
  return paragraphs;
}

/**
 * Recursive XY-cut: split at a vertical gutter that no paragraph crosses (columns are read left to right),
 * otherwise at a horizontal gap (top to bottom); a full-width title or caption blocks the vertical cut and so
 * is read in its place between the column groups.
 */
function readingOrder(paragraphs: Paragraph[], depth = 0): Paragraph[] {
  if (paragraphs.length <= 1 || depth > 50) return paragraphs;
  const em = median(paragraphs.map((p) => p.size));
  const columns = cut(paragraphs, (p) => [p.x0, p.x1], em);
  if (columns.length > 1) return columns.flatMap((group) => readingOrder(group, depth + 1));
  const rows = cut(paragraphs, (p) => [p.y0, p.y1], 0);
  if (rows.length > 1) return rows.flatMap((group) => readingOrder(group, depth + 1));
  return [...paragraphs].sort((a, b) => a.y0 - b.y0 || a.x0 - b.x0);
}

function cut(items: Paragraph[], span: (p: Paragraph) => [number, number], minGap: number): Paragraph[][] {
  const sorted = [...items].sort((a, b) => span(a)[0] - span(b)[0]);
  const groups: Paragraph[][] = [];
  let group: Paragraph[] = [];
  let end = -Infinity;
  for (const item of sorted) {
    const [start, stop] = span(item);
    if (group.length && start - end > minGap) {
      groups.push(group);
      group = [];
    }
    group.push(item);
    end = Math.max(end, stop);
  }
  if (group.length) groups.push(group);
  return groups;
}


/** Joins a paragraph's lines, undoing end-of-line hyphenation ("reada-" + "ble" → "readable"). */
export function joinLines(lines: string[]): string {
  let out = '';
  for (const line of lines) {
    if (!out) {
      out = line;
      continue;
    }
    if (/\p{Ll}-$/u.test(out) && /^\p{Ll}/u.test(line)) out = out.slice(0, -1) + line;
    else if (CJK.test(out.slice(-1)) && CJK.test(line.charAt(0))) out += line;
    else out += ' ' + line;
  }
  return out;
}

/** NFKC folds ligatures (ﬁ) and full-width Latin so text is searchable; private-use glyphs carry no text. */
function cleanText(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/[\p{Co}\u0000-\u0008\u000b\u000e-\u001f\u007f\ufffd]/gu, '')
    .replace(/[\u00ad]/g, '');
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    // pdf2json escapes with encodeURIComponent, but lone surrogates from broken fonts make that throw.
    return s.replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
}

function median(values: number[]): number {
  if (!values.length) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * Blocks for the whole document: repeated running headers/footers and bare page numbers dropped, larger-than-body
 * short paragraphs promoted to headings (levels by size), heading path carried across pages.
 */
export function toBlocks(pages: LaidOutPage[]): { blocks: Block[]; firstHeading?: string } {
  const repeated = repeatedMargins(pages);
  const weights = new Map<number, number>();
  for (const p of pages) for (const para of p.paragraphs) {
    const k = Math.round(para.size * 2) / 2;
    weights.set(k, (weights.get(k) ?? 0) + para.text.length);
  }
  let body = 10;
  let most = -1;
  for (const [size, w] of weights) if (w > most) {
    most = w;
    body = size;
  }
  const headingSizes = [...weights.keys()].filter((s) => s >= body * 1.2).sort((a, b) => b - a).slice(0, 4);

  const blocks: Block[] = [];
  const path: string[] = [];
  const pathSizes: number[] = [];
  let firstHeading: string | undefined;
  for (const p of pages) {
    p.paragraphs.forEach((para, i) => {
      const edge = i < 2 || i >= p.paragraphs.length - 2;
      if (edge && (repeated.has(marginKey(para.text)) || PAGE_NUMBER.test(para.text))) return;
      const size = Math.round(para.size * 2) / 2;
      const isHeading =
        headingSizes.includes(size) && para.lines <= 3 && para.text.length <= 200 && /\p{L}/u.test(para.text);
      if (isHeading) {
        while (pathSizes.length && pathSizes[pathSizes.length - 1]! <= size) {
          pathSizes.pop();
          path.pop();
        }
        path.push(para.text);
        pathSizes.push(size);
        firstHeading ??= para.text;
        blocks.push({ text: para.text, page: p.page, headings: [...path], kind: 'heading' });
      } else {
        blocks.push({ text: para.text, page: p.page, headings: [...path], kind: 'paragraph' });
      }
    });
  }
  return firstHeading === undefined ? { blocks } : { blocks, firstHeading };
}

const PAGE_NUMBER = /^(page\s+)?([0-9]{1,4}|[ivxlc]{1,6})(\s*(of|\/)\s*[0-9]{1,4})?$/i;

function marginKey(text: string): string {
  return text.toLowerCase().replace(/[0-9]+|\b[ivxlc]+\b/g, '#').replace(/\s+/g, ' ').trim();
}

/** First/last paragraphs that recur on many pages are running headers and footers. */
function repeatedMargins(pages: LaidOutPage[]): Set<string> {
  if (pages.length < 4) return new Set();
  const counts = new Map<string, number>();
  for (const p of pages) {
    const n = p.paragraphs.length;
    const edges = new Set([...p.paragraphs.slice(0, 2), ...p.paragraphs.slice(Math.max(2, n - 2))].map((x) => marginKey(x.text)));
    for (const k of edges) if (k.length <= 120) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const out = new Set<string>();
  for (const [k, n] of counts) if (n >= 3 && n >= pages.length * 0.3) out.add(k);
  return out;
}
