/**
 * Reading order for one PDF page from pdf.js text items. pdf.js already turns glyph advances (Tc, Tw, TJ
 * offsets) into runs with their spaces; this file finds the page's structure:
 *   runs → regions by recursive XY-cut (column gutters first, then the widest horizontal gap) → lines
 *   (same baseline) → paragraphs (line advance, indent, size).
 * Coordinates are points in the page's viewport space (y grows downwards) after rotating each run into its
 * own writing direction, so rotated pages and text at an angle lay out like upright text.
 */

export interface TextRun {
  text: string;
  /** Baseline start and end along the writing direction, in points. */
  x0: number;
  x1: number;
  /** Baseline position across the writing direction (grows downwards), in points. */
  y: number;
  /** Font size in points. */
  size: number;
  /** pdf.js marks runs of right-to-left scripts; their order on a line is right to left. */
  rtl: boolean;
}

export interface Line {
  text: string;
  x0: number;
  x1: number;
  y: number;
  size: number;
}

export interface Paragraph {
  lines: string[];
  size: number;
  /** Top and bottom of the paragraph on its page, for telling running headers and footers. */
  y0: number;
  y1: number;
}

/** Share of the font size above and below the baseline that a run's box takes for the XY-cut. */
const ASCENT = 0.75;
const DESCENT = 0.2;

/** Paragraphs of one group of runs written in the same direction, in reading order. */
export function layoutRuns(input: TextRun[]): Paragraph[] {
  const runs = dropOverprints(input.filter((r) => r.text.trim() && r.size > 0 && Number.isFinite(r.x0 + r.y)));
  if (!runs.length) return [];
  const aside: TextRun[] = [];
  const lines = readingOrder(runs).flatMap((region) => toLines(region, aside));
  // Marks set apart from their lines (see withoutMarginMarks) read after the page's text, not inside a sentence.
  return toParagraphs(aside.length ? [...lines, ...toLines(aside)] : lines);
}

/**
 * Some producers imitate bold by drawing the same text twice, a fraction of a point apart; pdf.js reports both.
 */
function dropOverprints(runs: TextRun[]): TextRun[] {
  const seen = new Map<string, TextRun[]>();
  const out: TextRun[] = [];
  for (const r of runs) {
    const key = r.text;
    const near = seen.get(key);
    const tol = 0.3 * r.size;
    if (near?.some((o) => Math.abs(o.x0 - r.x0) < tol && Math.abs(o.y - r.y) < tol)) continue;
    if (near) near.push(r);
    else seen.set(key, [r]);
    out.push(r);
  }
  return out;
}

/** Recursive XY-cut, iterative so a page of thousands of lines cannot overflow the stack. */
function readingOrder(runs: TextRun[]): TextRun[][] {
  const leaves: TextRun[][] = [];
  const stack: TextRun[][] = [runs];
  while (stack.length) {
    const region = stack.pop()!;
    const parts = columnCut(region) ?? rowCut(region);
    if (!parts) {
      leaves.push(region);
      continue;
    }
    for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]!);
  }
  return leaves;
}

/**
 * Splits a region at vertical gutters, left to right. A gutter is an x-range no run crosses, at least 0.8 em
 * wide and bordered by three or more lines on each side (a column edge), or at least 3 em wide (a table or
 * form field). Word spaces, even stretched ones in justified text, never line up over several lines.
 */
function columnCut(region: TextRun[]): TextRun[][] | undefined {
  if (region.length < 2) return undefined;
  const em = median(region.map((r) => r.size));
  const sorted = [...region].sort((a, b) => a.x0 - b.x0);
  const cuts: number[] = [];
  let end = sorted[0]!.x1;
  for (let i = 1; i < sorted.length; i++) {
    const r = sorted[i]!;
    const gap = r.x0 - end;
    if (gap >= 0.8 * em && (gap >= 3 * em || bordered(region, end, r.x0, em))) cuts.push(i);
    end = Math.max(end, r.x1);
  }
  if (!cuts.length) return undefined;
  const parts: TextRun[][] = [];
  let start = 0;
  for (const c of [...cuts, sorted.length]) {
    parts.push(sorted.slice(start, c));
    start = c;
  }
  return parts;
}

function bordered(region: TextRun[], left: number, right: number, em: number): boolean {
  const leftLines = new Set<number>();
  const rightLines = new Set<number>();
  for (const r of region) {
    if (r.x1 <= left && r.x1 >= left - 2 * em) leftLines.add(Math.round(r.y / (0.5 * em)));
    if (r.x0 >= right && r.x0 <= right + 2 * em) rightLines.add(Math.round(r.y / (0.5 * em)));
  }
  return leftLines.size >= 3 && rightLines.size >= 3;
}

/**
 * Splits a region top to bottom at its widest horizontal gaps (those within 90 % of the widest). Cutting only
 * at the widest keeps a two-column body whole under a full-width title or header, so the next column cut can
 * separate its columns instead of reading them band by band.
 */
function rowCut(region: TextRun[]): TextRun[][] | undefined {
  if (region.length < 2) return undefined;
  const sorted = [...region].sort((a, b) => top(a) - top(b));
  const gaps: { index: number; size: number }[] = [];
  let bottom = bottomOf(sorted[0]!);
  for (let i = 1; i < sorted.length; i++) {
    const r = sorted[i]!;
    if (top(r) > bottom) gaps.push({ index: i, size: top(r) - bottom });
    bottom = Math.max(bottom, bottomOf(r));
  }
  if (!gaps.length) return undefined;
  const widest = gaps.reduce((max, g) => Math.max(max, g.size), 0);
  const parts: TextRun[][] = [];
  let start = 0;
  for (const g of gaps) {
    if (g.size < 0.9 * widest) continue;
    parts.push(sorted.slice(start, g.index));
    start = g.index;
  }
  parts.push(sorted.slice(start));
  return parts;
}

const top = (r: TextRun): number => r.y - ASCENT * r.size;
const bottomOf = (r: TextRun): number => r.y + DESCENT * r.size;

const CJK = /[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u{20000}-\u{3134f}]/u;

/**
 * A leaf region holds one line, or several whose boxes overlap (tight leading, superscripts). With `aside`,
 * marks in the margin beside a line are moved there.
 */
function toLines(region: TextRun[], aside?: TextRun[]): Line[] {
  const sorted = [...region].sort((a, b) => a.y - b.y || a.x0 - b.x0);
  const groups: TextRun[][] = [];
  let current: TextRun[] = [];
  let lineY = 0;
  let lineSize = 0;
  for (const run of sorted) {
    // Superscripts and subscripts sit a fraction of a line off the baseline and still belong to it.
    if (current.length && Math.abs(run.y - lineY) <= 0.5 * Math.min(lineSize, run.size)) {
      current.push(run);
      if (run.size > lineSize) {
        lineSize = run.size;
        lineY = run.y;
      }
    } else {
      if (current.length) groups.push(current);
      current = [run];
      lineY = run.y;
      lineSize = run.size;
    }
  }
  if (current.length) groups.push(current);
  return groups.map((g) => assembleLine(aside ? withoutMarginMarks(g, aside) : g));
}

/**
 * A short run at either end of a line, in a clearly different size and apart from the line's text by most of
 * an em, is a mark in the margin beside it (the IRS booklets' large "!" and small "CAUTION" icon next to an
 * indented paragraph), not part of the line: left in, it lands between a hyphenated word's halves ("addi- !
 * tional"). Superscripts and drop caps touch their text, so they stay. Moves such runs to `aside`.
 */
function withoutMarginMarks(runs: TextRun[], aside: TextRun[]): TextRun[] {
  if (runs.length < 2) return runs;
  const sorted = [...runs].sort((a, b) => a.x0 - b.x0);
  const weight = new Map<number, number>();
  for (const r of sorted) weight.set(r.size, (weight.get(r.size) ?? 0) + r.text.length);
  const body = [...weight.entries()].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  const mark = (r: TextRun, gap: number): boolean => {
    const ratio = r.size / body;
    return r.text.trim().length <= 12 && (ratio >= 1.6 || ratio <= 0.625) && gap >= 0.8 * body;
  };
  let from = 0;
  let to = sorted.length;
  while (to - from > 1 && mark(sorted[from]!, sorted[from + 1]!.x0 - sorted[from]!.x1)) aside.push(sorted[from++]!);
  while (to - from > 1 && mark(sorted[to - 1]!, sorted[to - 1]!.x0 - sorted[to - 2]!.x1)) aside.push(sorted[--to]!);
  return from === 0 && to === sorted.length ? runs : sorted.slice(from, to);
}

function assembleLine(runs: TextRun[]): Line {
  const rtl = runs.filter((r) => r.rtl).length > runs.length / 2;
  runs.sort((a, b) => (rtl ? b.x1 - a.x1 : a.x0 - b.x0));
  let text = '';
  for (let i = 0; i < runs.length; i++) {
    const r = runs[i]!;
    if (i > 0) {
      const prev = runs[i - 1]!;
      const gap = rtl ? prev.x0 - r.x1 : r.x0 - prev.x1;
      // pdf.js puts spaces inside a run itself; between runs the gap decides (0.12 em, its own threshold ~0.1).
      const needsSpace =
        gap > 0.12 * Math.min(prev.size, r.size) &&
        !/\s$/.test(text) &&
        !/^\s/.test(r.text) &&
        !(CJK.test(text.slice(-1)) && CJK.test(r.text.charAt(0)));
      if (needsSpace) text += ' ';
    }
    text += r.text;
  }
  return {
    text: text.replace(/\s+/g, ' ').trim(),
    // Folded, not spread: a line can hold more runs than a call takes arguments.
    x0: runs.reduce((min, r) => Math.min(min, r.x0), Infinity),
    x1: runs.reduce((max, r) => Math.max(max, r.x1), -Infinity),
    y: runs.reduce((max, r) => Math.max(max, r.y), -Infinity),
    size: runs.reduce((max, r) => Math.max(max, r.size), -Infinity),
  };
}

/**
 * Consecutive lines (in reading order) form a paragraph while they keep the size, the line advance and the
 * horizontal extent; a first-line indent after a line that ends a sentence starts a new one.
 */
function toParagraphs(lines: Line[]): Paragraph[] {
  const out: Paragraph[] = [];
  let para: (Paragraph & { x0: number; x1: number; last: Line; advance: number }) | undefined;
  for (const line of lines) {
    if (!line.text) continue;
    if (para && continues(para, line)) {
      const dy = line.y - para.last.y;
      if (Math.abs(dy) < 0.3 * line.size) {
        const prev = para.lines[para.lines.length - 1]!;
        para.lines[para.lines.length - 1] = prev + (CJK.test(prev.slice(-1)) && CJK.test(line.text.charAt(0)) ? '' : ' ') + line.text;
      } else {
        if (para.lines.length === 1) para.advance = dy;
        para.lines.push(line.text);
      }
      para.x0 = Math.min(para.x0, line.x0);
      para.x1 = Math.max(para.x1, line.x1);
      para.y1 = Math.max(para.y1, line.y + DESCENT * line.size);
      para.last = line;
      continue;
    }
    para = { lines: [line.text], size: line.size, y0: line.y - ASCENT * line.size, y1: line.y + DESCENT * line.size, x0: line.x0, x1: line.x1, last: line, advance: 0 };
    out.push(para);
  }
  return out.map(({ lines, size, y0, y1 }) => ({ lines, size, y0, y1 }));
}

function continues(p: { size: number; x0: number; x1: number; last: Line; advance: number; lines: string[] }, line: Line): boolean {
  const ratio = line.size / p.size;
  if (ratio < 0.85 || ratio > 1.18) return false;
  const dy = line.y - p.last.y;
  // The same baseline further right: a piece of the same line that a gutter-sized gap had split off.
  if (Math.abs(dy) < 0.3 * line.size) return line.x0 >= p.last.x1 - 0.5 * line.size;
  if (dy <= 0) return false;
  const limit = p.lines.length >= 2 && p.advance > 0 ? p.advance * 1.3 : 1.75 * Math.max(line.size, p.size);
  if (dy > limit) return false;
  if (Math.min(line.x1, p.x1) - Math.max(line.x0, p.x0) <= 0) return false;
  const indent = line.x0 - p.x0;
  if (indent > 0.8 * line.size && indent < 8 * line.size && /[.!?:]["'’”)\]]?$/.test(p.last.text)) return false;
  return true;
}

function median(values: number[]): number {
  if (!values.length) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
