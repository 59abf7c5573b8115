/**
 * What micromark cannot read in reasonable time, found in linear passes before it is asked to. Its container
 * parsing costs grow with the square of the nesting depth (list items nested 2,000 deep on one line took seconds,
 * 1 MB of nested `>` or `- ` ran past any parse limit) and with the square of a list's or quote's length (20,000
 * lines of a list with sublists: 39 s), and its inline parsing with the square of the number of emphasis, link and
 * code-span delimiters in one paragraph (20,000 `*` around one word: 35 s; a 1 MB paragraph of `[`: out of memory).
 * Long lists and quotes are parsed in pieces (`markdownSegments`); a file nested or packed with delimiters past
 * the bounds below is read as plain text instead (`markdownTooComplex`).
 */

/** Deeper nesting of block quotes and list items is not Markdown a person wrote (markdown-it stops at 100 too). */
export const MAX_NESTING = 100;
/**
 * Bound on the sum, over lines, of the square of each one's nesting depth: micromark spends up to 5·10⁻⁷ s per
 * line and level squared (1 MB of lines quoted 99 deep: 12 s), so this keeps a file's container parsing to about two
 * seconds. A long document nested five deep on every line stays well below it.
 */
export const MAX_NESTING_WORK = 4_000_000;
/**
 * Bound on the sum, over paragraphs, of the square of each one's delimiter count: a paragraph costs micromark about
 * 2·10⁻⁸ s per pair of delimiters at worst, so this keeps a file's inline parsing to about two seconds. A long
 * document of ordinary paragraphs (tens of delimiters each) stays orders of magnitude below it.
 */
export const MAX_DELIMITER_WORK = 100_000_000;

const DELIMITERS = new Set(['*', '_', '[', ']', '<', '`']);

/** Why `text` (its newlines normalised, as decodeText gives it) is too deeply nested or too dense in delimiters to parse as Markdown, or undefined when it is fine. */
export function markdownTooComplex(text: string): string | undefined {
  const listColumns: number[] = []; // content column of each open list item
  let delimiters = 0;
  let work = 0;
  let nestingWork = 0;
  let fence: string | undefined;
  let fenceDepth = 0; // the containers a fenced code block sits in: markers past them are its text
  const endParagraph = (): void => {
    work += delimiters * delimiters;
    delimiters = 0;
  };
  for (let start = 0; start <= text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let i = start;
    let depth = 0;
    let column = 0;
    let first = true;
    // Container markers at the start of the line: block quotes ("> ") and list items ("- ", "1. ").
    for (;;) {
      let spaces = 0;
      while (i < end && (text[i] === ' ' || text[i] === '\t')) spaces += text[i++] === '\t' ? 4 : 1;
      column += spaces;
      if (first) {
        // A line indented less than an open item's content leaves that item (blank lines leave nothing).
        if (i < end) while (listColumns.length && column < listColumns[listColumns.length - 1]!) listColumns.pop();
        depth = listColumns.length;
        first = false;
      }
      if (fence !== undefined) {
        if (depth >= fenceDepth) break; // the rest of the line is code
        if (i < end && text[i] !== '>') fence = undefined; // its quote or list item has ended, and the fence with it
      }
      const marker = listMarker(text, i, end);
      if (text[i] === '>') {
        i++;
        column++;
      } else if (marker > 0) {
        i += marker;
        column += marker;
        listColumns.push(column + 1);
      } else break;
      if (++depth > MAX_NESTING) return `it nests block quotes or lists more than ${MAX_NESTING} deep`;
    }
    nestingWork += depth * depth;
    if (nestingWork > MAX_NESTING_WORK) return 'it nests block quotes or lists deep on too many lines';
    const line = text.slice(i, Math.min(end, i + 64));
    const fenceOpen = /^(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (fenceOpen && fenceOpen[0] === fence[0] && fenceOpen.length >= fence.length) fence = undefined;
    } else if (fenceOpen) {
      endParagraph();
      fence = fenceOpen;
      fenceDepth = depth;
    } else if (i >= end) {
      endParagraph(); // a blank line: inline markup never spans one
    } else {
      for (let j = i; j < end; j++) if (DELIMITERS.has(text[j]!)) delimiters++;
      if (work + delimiters * delimiters > MAX_DELIMITER_WORK) return 'its paragraphs hold too many emphasis, link or code delimiters';
    }
    start = end + 1;
  }
  return undefined;
}

/**
 * Lines micromark reads in one piece. Its cost grows with the square of the lists and quotes it has to close in one
 * piece (a list with sublists, 20,000 lines: 39 s; 2,000 short lists between paragraphs: 8 s).
 */
export const MAX_SEGMENT_LINES = 100;

/**
 * `text` cut into pieces of about MAX_SEGMENT_LINES lines, which micromark reads in about linear time: between
 * top-level blocks after a blank line, or inside a long list or quote before an item or quote line (the rest reads
 * as a list or quote of its own, which gives the same blocks). Nothing is cut inside front matter, a fenced code
 * block or an HTML block that blank lines do not end (a comment, `<pre>`, `<script>`, `<style>`: the rest of one cut
 * read as text); one indented in a list item ends with the item. The parser resolves a reference link whose
 * definition is in another piece.
 */
export function markdownSegments(text: string): string[] {
  const segments: string[] = [];
  let segmentStart = 0;
  let lines = 0; // since the last cut
  let blank = false; // the line before was blank
  let fence: string | undefined = /^(---|\+\+\+)\r?$/.exec(text.slice(0, text.indexOf('\n') >>> 0))?.[1];
  let first = fence !== undefined;
  let html: RegExp | undefined; // the end of the open HTML block
  let indent = 0; // of the open code block's or HTML block's first line
  let list = false; // since an item line, until a paragraph after a blank line
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let i = start;
    while (i < end && (text[i] === ' ' || text[i] === '\t')) i++;
    const line = text.slice(i, Math.min(end, i + 64));
    // A line indented less than an indented block's first ends the list item holding it, and the block with it:
    // else a fence never closed in a list item kept everything after it in one piece (a long list: a minute).
    if (i < end && i - start < indent) fence = html = undefined;
    if (first) first = false; // the front matter's opening line
    else if (fence !== undefined) {
      const close = /^(`{3,}|~{3,}|---|\+\+\+)/.exec(line)?.[1];
      if (close && close[0] === fence[0] && close.length >= fence.length) fence = undefined;
    } else if (html !== undefined) {
      if (html.test(text.slice(i, end))) html = undefined;
    } else {
      const marker = listMarker(text, i, end);
      // An item line in a paragraph outside a list ("in\n2019. After") may be the paragraph's text: not cut before.
      const item = marker > 0 && (blank || list || interruptsParagraph(text, i, end, marker));
      if (i < end && lines >= MAX_SEGMENT_LINES && (text[i] === '>' || item || (i === start && blank))) {
        segments.push(text.slice(segmentStart, start));
        segmentStart = start;
        lines = 0;
      }
      if (marker > 0) list = true;
      else if (i === start && i < end && blank) list = false;
      fence = /^(`{3,}|~{3,})/.exec(line)?.[1];
      html = fence === undefined ? htmlBlockEnd(text.slice(i, end)) : undefined;
      indent = i - start;
    }
    lines++;
    blank = i >= end;
    start = end + 1;
  }
  segments.push(text.slice(segmentStart));
  return segments;
}

/** `text` without the quote and list markers that open its lines: how a file past the bounds is read as plain text. */
export function withoutContainerMarkers(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      let i = 0;
      for (;;) {
        while (line[i] === ' ' || line[i] === '\t') i++;
        const marker = line[i] === '>' ? 1 : listMarker(line, i, line.length);
        if (marker === 0) break;
        i += marker;
      }
      return line.slice(i);
    })
    .join('\n');
}

/**
 * The end of the HTML block that `line` opens when it is of a kind that blank lines do not end (CommonMark's kinds 1
 * to 5) and it does not end on the same line, else undefined.
 */
function htmlBlockEnd(line: string): RegExp | undefined {
  const open = /^<(?:(pre|script|style|textarea)(?=[\s>]|$)|(!--)|(\?)|(!\[CDATA\[)|(![a-z]))/i.exec(line);
  if (!open) return undefined;
  const end = open[1] ? /<\/(pre|script|style|textarea)>/i : open[2] ? /-->/ : open[3] ? /\?>/ : open[4] ? /\]\]>/ : />/;
  return end.test(line.slice(open[0].length)) ? undefined : end;
}

/**
 * Whether the list item opening at `i` with a marker `marker` long can interrupt a paragraph (CommonMark): it has
 * text, and is a bullet or numbered 1. Else the line goes on the paragraph before it.
 */
function interruptsParagraph(text: string, i: number, end: number, marker: number): boolean {
  return text.slice(i + marker, end).trim() !== '' && (/[-*+]/.test(text[i]!) || Number(text.slice(i, i + marker - 1)) === 1);
}

/** Length of the list marker ("-", "*", "+", "1.", "1)") at `i` when a space, a tab or the line's end follows it. */
function listMarker(text: string, i: number, end: number): number {
  let j = i;
  if (text[j] === '-' || text[j] === '*' || text[j] === '+') j++;
  else {
    while (j < end && j - i < 9 && text[j]! >= '0' && text[j]! <= '9') j++;
    if (j === i || (text[j] !== '.' && text[j] !== ')')) return 0;
    j++;
  }
  return j >= end || text[j] === ' ' || text[j] === '\t' ? j - i : 0;
}
