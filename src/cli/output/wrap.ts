import { fitColumns, stringWidth, wrapColumns } from './columns.js';

/**
 * Units a word handed to wrap-ansi may have: it measures each word whole, in time that grows with the square of its
 * graphemes (a run of 200,000 zero-width characters, no column wide, never ended). Only text of over a dozen code
 * units a column (marks piled on letters, invisible characters) comes near it.
 */
const MAX_WORD_UNITS = 1024;

// eslint-disable-next-line no-control-regex
const STYLING = /\x1b\[[0-9;]*m/g;

/**
 * `word` in pieces of at most `columns` columns and MAX_WORD_UNITS units, styling sequences kept whole (one that
 * closes the word stays with its last piece): wrap-ansi measures each word whole, which for a word of a million
 * letters never ended. A line's worth over MAX_WORD_UNITS units is cut there with "…" (the rest of the word would be
 * put on lines of little but spaces); its styling is kept, so none runs on.
 */
function lineSized(word: string, columns: number): string[] {
  const out: string[] = [];
  let rest = word;
  while (rest.length > MAX_WORD_UNITS || stringWidth(rest, columns) > columns) {
    const head = fitColumns(rest, columns, false, MAX_WORD_UNITS + 1);
    if (head.length > MAX_WORD_UNITS) {
      const kept = fitColumns(head, columns - 1, false, MAX_WORD_UNITS);
      out.push(`${kept}…${(rest.slice(kept.length).match(STYLING) ?? []).join('')}`);
      return out;
    }
    out.push(head);
    rest = rest.slice(head.length);
  }
  if (out.length > 0 && stringWidth(rest, 0) === 0) out[out.length - 1] += rest;
  else out.push(rest);
  return out;
}

/**
 * Word-wraps `text` to `width` columns (wrap-ansi), the first line starting with `indent` and the others with `hang`
 * (so wrapped lines never fall back to column 0). White space, line breaks included, is one space; styling
 * sequences are carried along and not counted. A word longer than a line is broken over lines of its own, so no
 * line is wider than `width`.
 */
export function wrap(text: string, width: number, indent = '', hang = indent): string[] {
  const room = (prefix: string) => Math.max(20, width - prefix.length);
  const words = text
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((w) => lineSized(w, Math.min(room(indent), room(hang))))
    .join(' ');
  if (!words) return [];
  const [first = '', ...rest] = wrapColumns(words, room(indent));
  // A hang of another width than the indent gives the later lines another width: they are wrapped again to theirs.
  const later = rest.length > 0 && room(hang) !== room(indent) ? wrapColumns(rest.join(' '), room(hang)) : rest;
  return [indent + first, ...later.map((l) => hang + l)];
}

export interface Field {
  text: string;
  /** Styling for the field's words (applied after layout, so it never counts or gets cut). */
  style?: (s: string) => string;
}

/**
 * Lays out `fields` (each a few words of plain text) on lines of at most `width` columns, two spaces between
 * fields, breaking between fields where it can and between words where it must; lines after the first start with
 * `hang`. A word wider than a whole line is cut, so no line is ever wider than `width` (a terminal would break it
 * anywhere).
 */
export function wrapFields(fields: Field[], width: number, hang: string): string[] {
  type Run = { field: number; words: string[] };
  const lines: Run[][] = [[]];
  let len = 0;
  const room = () => Math.max(20, width - (lines.length === 1 ? 0 : hang.length));
  const newLine = () => {
    lines.push([]);
    len = 0;
  };
  const put = (field: number, word: string) => {
    const line = lines.at(-1)!;
    const run = line.at(-1);
    const sep = len === 0 ? 0 : run?.field === field ? 1 : 2;
    if (run?.field === field) run.words.push(word);
    else line.push({ field, words: [word] });
    len += sep + stringWidth(word, room());
  };
  fields.forEach((f, fi) => {
    const words = f.text.split(/\s+/).filter(Boolean);
    const whole = stringWidth(words.join(' '), width);
    // A field that does not fit on this line but fits on a fresh one starts a fresh one.
    if (len > 0 && len + 2 + whole > room() && whole <= Math.max(20, width - hang.length)) newLine();
    words.forEach((word, wi) => {
      let w = word;
      const sep = len === 0 ? 0 : wi === 0 ? 2 : 1;
      if (len > 0 && len + sep + stringWidth(w, room()) > room()) newLine();
      while (stringWidth(w, room()) > room()) {
        if (len > 0) newLine();
        const head = fitColumns(w, room());
        put(fi, head);
        w = w.slice(head.length);
        newLine();
      }
      if (w) put(fi, w);
    });
  });
  return lines
    .filter((l) => l.length > 0)
    .map((l, i) => (i === 0 ? '' : hang) + l.map((r) => (fields[r.field]!.style ?? ((s: string) => s))(r.words.join(' '))).join('  '));
}
