/**
 * A chunk's answer units: the pieces of its text a result may show first as the answer (search/answer.ts chooses
 * among them), each scored by its own vector, pooled at ingest from the chunk's one model pass (unit-vectors.ts).
 *
 * Units follow the text's structure, read from its lines (the chunk's text is all a stored row has; parsers separate
 * blocks by blank lines):
 * - a heading line is a unit of its own and never the answer: its words count for the units under it. A line is a
 *   heading when it has no closing punctuation, is short, and a line break follows it (not the start of the next
 *   sentence: "Library loans" over "Borrowed books must be returned within nineteen days."). Three or more such lines
 *   in a row are a list, not headings;
 * - a list item (a bullet or number, or a line of such a list) and a table row (cells apart by tabs, " | ", " · " or
 *   wide spaces) are units of their own; a table's first row, naming its columns, counts as its heading;
 * - other lines are running text: a paragraph's sentences (ICU's, 。！？ included), a fragment too short to mean
 *   anything alone ("Results.", "(n = 17).") joined to the next. A line break inside a paragraph (wrapped text) does
 *   not end a sentence.
 * A unit longer than MAX_UNIT_CHARS is cut at line breaks, then at word (or CJK clause) boundaries, so an answer is
 * always something a person reads at a glance.
 */
import type { UnitKind, UnitSpan } from '../store/lancedb/unit-vectors.js';
import { graphemeAfter } from '../core/code-points.js';
import { splitSentences } from './sentences.js';

/** A unit longer than this is cut (at line breaks, then words) into pieces of at most UNIT_PIECE_CHARS. */
export const MAX_UNIT_CHARS = 400;
const UNIT_PIECE_CHARS = 300;
/** Fewer words than this and a sentence is joined to the next one of its paragraph. */
const MIN_WORDS = 5;
/** A heading has at most this many words. */
const HEADING_WORDS = 12;
/** This many heading-like lines in a row are a list. */
const LIST_RUN = 3;

/** Ends running text: a line ending so is not a heading. A colon introduces what follows: such a line is one. */
const CLOSING = /[.!?。！？;,…)\]"'”’»]$/u;
const BULLET = /^(?:[-*+•‣◦▪●○–—]|\d{1,3}[.)]|[a-zA-Z][.)]|\(\w{1,3}\))\s+\S/u;
const TABLE_ROW = /\t|\s\|\s|\s·\s|\S {3,}\S/u;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;

/** Words, counting each character of text without spaces (Chinese, Japanese, Korean syllables) as one. */
function words(s: string): number {
  const cjk = s.match(CJK)?.length ?? 0;
  return s.replace(CJK, ' ').split(/\s+/).filter(Boolean).length + cjk;
}

interface Line {
  start: number;
  end: number;
  /** The line as written (trimmed). */
  text: string;
  /** It starts with white space (a wrapped continuation). */
  indented: boolean;
}

type LineKind = 'blank' | 'heading' | 'item' | 'row' | 'prose';

/** The units of `text`, in text order, covering all of it but white space. */
export function answerUnits(text: string): UnitSpan[] {
  const lines = splitLines(text);
  const kinds = classify(lines);
  const out: UnitSpan[] = [];
  for (let i = 0; i < lines.length; ) {
    const kind = kinds[i]!;
    if (kind === 'blank') {
      i++;
      continue;
    }
    let j = i + 1;
    if (kind === 'prose') {
      while (j < lines.length && kinds[j] === 'prose') j++;
      out.push(...sentences(text, lines[i]!.start, lines[j - 1]!.end));
    } else {
      // An item goes on over the indented lines after it (a wrapped list item).
      if (kind === 'item') while (j < lines.length && kinds[j] === 'prose' && lines[j]!.indented) j++;
      out.push({ start: lines[i]!.start, end: lines[j - 1]!.end, kind: kind === 'item' ? 'item' : kind === 'row' ? 'row' : 'heading' });
    }
    i = j;
  }
  return out.flatMap((u) => (u.end - u.start <= MAX_UNIT_CHARS ? [u] : cutUnit(text, u)));
}

function splitLines(text: string): Line[] {
  const out: Line[] = [];
  let at = 0;
  for (const raw of text.split('\n')) {
    const lead = raw.length - raw.trimStart().length;
    const trimmed = raw.trim();
    out.push({ start: at + lead, end: at + lead + trimmed.length, text: trimmed, indented: lead > 0 });
    at += raw.length + 1;
  }
  return out;
}

function classify(lines: Line[]): LineKind[] {
  const kinds: LineKind[] = lines.map((l) => (l.text === '' ? 'blank' : BULLET.test(l.text) ? 'item' : TABLE_ROW.test(l.text) ? 'row' : 'prose'));
  const nextText = (i: number): Line | undefined => lines.slice(i + 1).find((l) => l.text !== '');
  const candidate = lines.map((l, i) => {
    if (kinds[i] !== 'prose' || l.indented || words(l.text) > HEADING_WORDS || (CLOSING.test(l.text) && !l.text.endsWith(':'))) return false;
    if (/^\p{Ll}/u.test(l.text)) return false;
    const next = nextText(i);
    if (!next) return false; // a line break must follow it
    // Right under it, a line that goes on in lower case continues the same sentence (wrapped text).
    return !(lines[i + 1]?.text !== '' && /^\p{Ll}/u.test(next.text));
  });
  // A table's first row names its columns, as a heading names what follows (rows folded "column: value" have none).
  const rows = kinds.map((k) => k === 'row');
  const prevText = (i: number): number => {
    for (let j = i - 1; j >= 0; j--) if (lines[j]!.text !== '') return j;
    return -1;
  };
  for (let i = 0; i < lines.length; i++) {
    if (!rows[i] || rows[prevText(i)] || /:\s/.test(lines[i]!.text)) continue;
    const next = lines.slice(i + 1).findIndex((l) => l.text !== '');
    if (next >= 0 && rows[i + 1 + next]) kinds[i] = 'heading';
  }
  for (let i = 0; i < lines.length; ) {
    if (!candidate[i]) {
      i++;
      continue;
    }
    // A run of heading-like lines (blank lines between them allowed): a list when long enough.
    const run = [i];
    let j = i + 1;
    for (; j < lines.length; j++) {
      if (kinds[j] === 'blank') continue;
      if (!candidate[j]) break;
      run.push(j);
    }
    for (const k of run) kinds[k] = run.length >= LIST_RUN ? 'item' : 'heading';
    i = j;
  }
  return kinds;
}

/** The sentences of the paragraph [start, end), short ones joined to the next; wrapped lines do not end one. */
function sentences(text: string, start: number, end: number): UnitSpan[] {
  // Same length, so offsets carry over: a single line break reads as a space.
  const flat = text.slice(start, end).replace(/\n/g, ' ');
  const out: UnitSpan[] = [];
  let open: UnitSpan | undefined;
  for (const [s, e] of joinDateOrdinals(flat, splitSentences(flat))) {
    if (open) open.end = start + e;
    else open = { start: start + s, end: start + e, kind: 'sentence' };
    if (words(text.slice(open.start, open.end)) >= MIN_WORDS) {
      out.push(open);
      open = undefined;
    }
  }
  if (open) {
    // A short tail joins the sentence before it rather than standing alone.
    const last = out.at(-1);
    if (last) last.end = open.end;
    else out.push(open);
  }
  return out;
}

/**
 * A day written as an ordinal before its month ("bis zum 31. März", "den 1. maj", "do 5. května"): ICU ends a sentence
 * at the day's dot when a capital follows, so the month would open the next unit. The months are those of the
 * languages that write ordinals with a dot (German, Danish, Norwegian, Swedish dates, Czech, Slovak, Finnish, …).
 */
const MONTH_AFTER_ORDINAL =
  /^(?:jan(?:uar|uary|vier|uari)?|jänner|feb(?:ruar|ruary|ruari)?|märz|marts|mars|mar(?:ch|s)?|apr(?:il)?|mai|maj|may|jun[ie]?|jul[iy]?|aug(?:ust[ia]?)?|sep(?:tember)?|okt(?:ober)?|oct(?:ober)?|nov(?:ember)?|de[cz](?:ember)?|desember|ledna|února|března|dubna|května|června|července|srpna|září|října|listopadu|prosince|januára|februára|marca|apríla|mája|júna|júla|augusta|septembra|októbra|novembra|decembra|tammikuuta|helmikuuta|maaliskuuta|huhtikuuta|toukokuuta|kesäkuuta|heinäkuuta|elokuuta|syyskuuta|lokakuuta|marraskuuta|joulukuuta)\b/iu;
const ENDS_WITH_DAY = /(?:^|\s)\d{1,2}\.$/u;

function joinDateOrdinals(text: string, spans: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const span of spans) {
    const last = out.at(-1);
    if (last && ENDS_WITH_DAY.test(text.slice(last[0], last[1])) && MONTH_AFTER_ORDINAL.test(text.slice(span[0], span[1]))) last[1] = span[1];
    else out.push([...span]);
  }
  return out;
}

/** An overlong unit in pieces: its lines, and a line still too long at word boundaries into near-equal parts. */
function cutUnit(text: string, u: UnitSpan): UnitSpan[] {
  const out: UnitSpan[] = [];
  for (const m of text.slice(u.start, u.end).matchAll(/[^\n]+/g)) {
    const start = u.start + m.index + (m[0].length - m[0].trimStart().length);
    const end = u.start + m.index + m[0].trimEnd().length;
    if (end <= start) continue;
    if (end - start <= MAX_UNIT_CHARS) out.push({ start, end, kind: u.kind });
    else out.push(...pieces(text, start, end, u.kind));
  }
  return out;
}

/** [start, end) cut at white space (or after a CJK comma or full stop) into near-equal parts of at most UNIT_PIECE_CHARS. */
function pieces(text: string, start: number, end: number, kind: UnitKind): UnitSpan[] {
  const parts = Math.ceil((end - start) / UNIT_PIECE_CHARS);
  const target = (end - start) / parts;
  const out: UnitSpan[] = [];
  let open = start;
  for (const m of text.slice(start, end).matchAll(/\s+|(?<=[，、；：。！？])/gu)) {
    const at = start + m.index;
    if (at - open >= target && end - at > target / 3) {
      out.push({ start: open, end: at, kind });
      open = at + m[0].length;
    }
  }
  out.push({ start: open, end, kind });
  // A part with no place to cut (a run without spaces, after a few words or alone): at near-equal lengths.
  return out.flatMap((p) => (p.end - p.start > MAX_UNIT_CHARS ? evenParts(text, p) : [p]));
}

/**
 * A unit without white space in near-equal parts of about UNIT_PIECE_CHARS, whole graphemes each: a part is a snippet
 * people read, and a cut inside a grapheme shows a Thai consonant without its vowel sign, half a family emoji.
 */
function evenParts(text: string, u: UnitSpan): UnitSpan[] {
  const step = Math.ceil((u.end - u.start) / Math.ceil((u.end - u.start) / UNIT_PIECE_CHARS));
  const out: UnitSpan[] = [];
  let open = u.start;
  for (let at = u.start + step; at < u.end; at += step) {
    const cut = Math.min(u.end, graphemeAfter(text, at));
    if (cut <= open) continue;
    out.push({ start: open, end: cut, kind: u.kind });
    open = cut;
  }
  out.push({ start: open, end: u.end, kind: u.kind });
  return out;
}
