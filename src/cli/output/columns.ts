/**
 * Terminal columns, not UTF-16 units: a CJK character or most emoji take two columns, a combining mark none, and
 * ANSI styling none (string-width, which follows Unicode's East Asian Width). `.length` misaligned tables and
 * wrapped lines of non-Latin names.
 */
let measure: ((text: string) => number) | undefined;
/** wrap-ansi: word-wraps by the same columns, closing and reopening styling at line ends. */
let wrapper: ((text: string, columns: number, options: { trim: boolean }) => string) | undefined;

/**
 * Loads string-width and wrap-ansi, before a command that prints runs (commands/global-options.ts). Loading them
 * builds a Unicode segmenter, a noticeable pause that `--version` and shell completion, run on every Tab, should not
 * pay.
 */
export async function loadColumns(): Promise<void> {
  measure ??= (await import('string-width')).default;
  wrapper ??= (await import('wrap-ansi')).default;
}

// eslint-disable-next-line no-control-regex
const STYLING = /\x1b\[[0-9;]*m/y;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The longest stretch handed to the grapheme segmenter (and string-width, which segments) at once. V8's
 * Intl.Segmenter takes time proportional to the whole string for each grapheme it steps over (80,000 CJK characters:
 * 11 s), so a server's name of 200,000 letters took string-width 17 s and ran the heap out. Walked in windows of this
 * size, a measure is linear in what it reads, and it reads no further than the columns it is asked about.
 */
const WINDOW = 16;

let segmenter: Intl.Segmenter | undefined;
const graphemes = (text: string) => (segmenter ??= new Intl.Segmenter()).segment(text);

/** Whether `text` may be split at `i`: not inside a surrogate pair. */
const splittable = (text: string, i: number): boolean => !(/[\ud800-\udbff]/.test(text[i - 1] ?? '') && /[\udc00-\udfff]/.test(text[i] ?? ''));

type Piece = { text: string; styling: boolean };

/**
 * `text` from its start in pieces of at most WINDOW units, each whole graphemes (a longer grapheme, a run of marks,
 * split) or one whole styling sequence (width 0). Lazy, and it never looks further than the piece it yields: a
 * caller that stops early reads only what it kept.
 */
function* pieces(text: string): Generator<Piece> {
  let at = 0;
  while (at < text.length) {
    if (text.charCodeAt(at) === 0x1b) {
      STYLING.lastIndex = at;
      const m = STYLING.exec(text);
      if (m) {
        yield { text: m[0], styling: true };
        at += m[0].length;
        continue;
      }
    }
    let stop = Math.min(text.length, at + WINDOW);
    if (!splittable(text, stop)) stop--;
    // A styling sequence ends the piece before it (an escape character is a grapheme of its own).
    const escape = text.slice(at + 1, stop).indexOf('\x1b');
    let end = escape >= 0 ? at + 1 + escape : stop;
    if (escape < 0 && stop < text.length) {
      // The window's last grapheme may go on past it (printable ASCII too: a combining mark may follow): the piece
      // ends before it, unless it is the whole window.
      if (PRINTABLE_ASCII.test(text.slice(at, stop))) end = stop - 1;
      else {
        end = at;
        for (const { index } of graphemes(text.slice(at, stop))) end = at + index;
        if (end === at) end = stop;
      }
    }
    yield { text: text.slice(at, end), styling: false };
    at = end;
  }
}

/**
 * The same pieces from the end, last first, of plain text (no styling: only file names are kept by their end). A
 * window's first grapheme may have begun before it: it is left for the next.
 */
function* piecesFromEnd(text: string): Generator<Piece> {
  let end = text.length;
  while (end > WINDOW) {
    const start = splittable(text, end - WINDOW) ? end - WINDOW : end - WINDOW + 1;
    let at = start;
    let n = 0;
    for (const { index } of graphemes(text.slice(start, end))) if (n++ === 1) at = start + index;
    yield { text: text.slice(at, end), styling: false };
    end = at;
  }
  if (end > 0) yield { text: text.slice(0, end), styling: false };
}

/**
 * Columns one grapheme takes, remembered: cutting a line measures each grapheme of its last piece, and string-width's
 * cost is per call (a segmenter each time), far more than the lookup. At most MAX_REMEMBERED (each under WINDOW units).
 */
const graphemeWidths = new Map<string, number>();
const MAX_REMEMBERED = 10_000;
function graphemeWidth(g: string): number {
  if (!measure) return g.length;
  let w = graphemeWidths.get(g);
  if (w === undefined) {
    if (graphemeWidths.size >= MAX_REMEMBERED) graphemeWidths.clear();
    w = measure(g);
    graphemeWidths.set(g, w);
  }
  return w;
}

/** Columns a piece takes: string-width, reading at most WINDOW units (or its visible length before loadColumns). */
const pieceWidth = (piece: Piece): number => (piece.styling ? 0 : measure ? measure(piece.text) : piece.text.length);

/**
 * Columns `text` takes, counting no further than `limit` (past it, some number over it): a cell of a million
 * letters is measured as far as a terminal could show it. Before loadColumns (an early usage error), its visible length.
 */
export function stringWidth(text: string, limit = Infinity): number {
  let width = 0;
  for (const piece of pieces(text)) {
    width += pieceWidth(piece);
    if (width > limit) break;
  }
  return width;
}

/** `text` word-wrapped to `columns` columns (a word wider than that alone on its line); before loadColumns, one line. */
export const wrapColumns = (text: string, columns: number): string[] => (wrapper ? wrapper(text, columns, { trim: true }) : text).split('\n');

/** `text` followed by spaces up to `columns` columns. */
export const padColumns = (text: string, columns: number): string => text + ' '.repeat(Math.max(0, columns - stringWidth(text, columns)));

/**
 * The longest start (or, with `fromEnd`, end) of `text` that fits in `columns` columns, in whole characters, styling
 * sequences kept whole, and in at most `units` UTF-16 units (for who measures it whole after); reads no further than
 * what it keeps.
 */
export function fitColumns(text: string, columns: number, fromEnd = false, units = Infinity): string {
  const kept: string[] = [];
  let used = 0;
  let length = 0;
  for (const piece of fromEnd ? piecesFromEnd(text) : pieces(text)) {
    const w = pieceWidth(piece);
    if (used + w <= columns && length + piece.text.length <= units) {
      kept.push(piece.text);
      used += w;
      length += piece.text.length;
      continue;
    }
    if (piece.styling) break;
    // The piece that does not fit whole: as many of its characters as do.
    const chars = [...graphemes(piece.text)].map((g) => g.segment);
    for (const ch of fromEnd ? chars.reverse() : chars) {
      const cw = graphemeWidth(ch);
      if (used + cw <= columns && length + ch.length <= units) {
        kept.push(ch);
        used += cw;
        length += ch.length;
        continue;
      }
      // A grapheme wider than any character (a letter with a run of spacing marks, each a column) is cut between
      // its code points, as a terminal draws them: else a line of it could never be filled, nor wrapped.
      if (cw > 2 || length + ch.length > units) {
        const points = [...ch];
        for (const p of fromEnd ? points.reverse() : points) {
          const pw = graphemeWidth(p);
          if (used + pw > columns || length + p.length > units) break;
          kept.push(p);
          used += pw;
          length += p.length;
        }
      }
      break;
    }
    break;
  }
  return (fromEnd ? kept.reverse() : kept).join('');
}

/** `text` whole when it fits in `columns` columns, else its start cut to leave room for "…" after it. */
export const cutColumns = (text: string, columns: number): string => {
  const head = fitColumns(text, columns);
  return head.length === text.length ? text : `${fitColumns(head, columns - 1)}…`;
};
