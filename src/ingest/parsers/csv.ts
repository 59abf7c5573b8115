/**
 * CSV and TSV (RFC 4180: quoted fields may hold separators, quotes and line breaks). A small state machine rather
 * than a library: the format is one page of rules, and the rows go straight into sheet-rows.ts with the cell
 * budget checked as they are read. The separator is the tab for TSV; for CSV, a semicolon when the first line with
 * text has more of them than commas (what spreadsheets write in locales with a decimal comma).
 */
import { TSV, type ParsedDocument, type ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { SheetBudget, SheetRows } from './sheet-rows.js';
import { decodeText } from './text-encoding.js';

export async function parse(bytes: Uint8Array, opts: ParseOptions = {}): Promise<ParsedDocument> {
  const noun = opts.type === TSV ? 'the TSV file' : 'the CSV file';
  const decoded = decodeText(bytes);
  if (decoded === null) throw new ParseError(`${noun} could not be read: it is not text`);
  const text = decoded.text.replace(/^\uFEFF/, '');
  // The first line with text: an export that opens with a blank line still names its columns with semicolons.
  const firstLine = /^[^\n]*\S[^\n]*/m.exec(text)?.[0] ?? '';
  const separator = opts.type === TSV ? '\t' : count(firstLine, ';') > count(firstLine, ',') ? ';' : ',';
  const budget = new SheetBudget(noun);
  const sheet = new SheetRows(undefined, opts.cells);
  let row = 1;
  for (const cells of records(text, separator)) {
    for (const c of cells) if (c !== '') budget.take();
    sheet.add(row++, cells);
  }
  const blocks = sheet.finish();
  return { blocks, warnings: blocks.length ? [] : ['no text found (empty file?)'] };
}

function count(s: string, ch: string): number {
  return s.split(ch).length - 1;
}

/** The records of `text`, each an array of fields, quotes removed. */
export function* records(text: string, separator: string): Generator<string[]> {
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    // Text runs are taken in one slice each: appending character by character builds a string of millions of
    // pieces, and a single field of tens of megabytes ran the parser out of memory.
    if (quoted) {
      const close = text.indexOf('"', i);
      field += text.slice(i, close < 0 ? text.length : close);
      if (close < 0) break;
      i = close;
      if (text[i + 1] === '"') {
        field += '"';
        i++;
      } else quoted = false;
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === separator) {
      fields.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      fields.push(field);
      yield fields;
      fields = [];
      field = '';
    } else {
      let end = i + 1;
      while (end < text.length && text[end] !== separator && text[end] !== '\n' && text[end] !== '\r') end++;
      field += text.slice(i, end);
      i = end - 1;
    }
  }
  if (field !== '' || fields.length > 0) {
    fields.push(field);
    yield fields;
  }
}
