/**
 * Excel workbooks (.xlsx): sheets in the workbook's order, each read row by row with saxes from its XML part
 * (shared strings and inline strings resolved, booleans as TRUE/FALSE, dates — cells whose number format is a date
 * — as ISO dates), then through sheet-rows.ts: header names, the sheet and row numbers a result cites.
 *
 * The ZIP goes through the zip guard first; a hidden sheet is read too (its rows are in the file all the same).
 */
import type { Block, ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { relationships } from './ooxml.js';
import { columnIndex, SheetBudget, SheetRows } from './sheet-rows.js';
import { local, walkXml } from './xml.js';
import { readZip, type ZipLimits } from './zip-guard.js';

const NOUN = 'the Excel workbook';
const KEEP = /^xl\/(workbook\.xml|sharedStrings\.xml|styles\.xml|worksheets\/[^/]+\.xml|_rels\/workbook\.xml\.rels)$/i;
/** Built-in number formats that show a date (ECMA-376 §18.8.30). */
const DATE_FORMATS = new Set([14, 15, 16, 17, 22, 27, 30, 36, 45, 46, 47, 50, 57]);

export async function parse(bytes: Uint8Array, opts: ParseOptions & { zipLimits?: Partial<ZipLimits> } = {}): Promise<ParsedDocument> {
  const { parts } = await readZip(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { noun: NOUN, keep: KEEP }, opts.zipLimits);
  const workbook = parts.get('xl/workbook.xml');
  if (!workbook) throw new ParseError(`${NOUN} could not be read: it has no xl/workbook.xml`);
  const rels = relationships(parts, 'xl/workbook.xml', NOUN);
  const sheets: { name: string; part: string | undefined }[] = [];
  walkXml(workbook, NOUN, {
    open(name, attrs) {
      if (local(name) === 'sheet') sheets.push({ name: attrs.name ?? `Sheet${sheets.length + 1}`, part: rels.get(attrs['r:id'] ?? '') });
    },
  });
  const strings = sharedStrings(parts.get('xl/sharedStrings.xml'));
  const dateStyles = dateStyleIndexes(parts.get('xl/styles.xml'));
  const budget = new SheetBudget(NOUN);
  const blocks: Block[] = [];
  for (const sheet of sheets) {
    const xml = sheet.part ? parts.get(sheet.part) : undefined;
    // one by one: a spread of 200,000 items overflows the call stack
    if (xml) for (const b of readSheet(xml, sheet.name, strings, dateStyles, budget, opts.cells)) blocks.push(b);
  }
  const doc: ParsedDocument = { blocks, warnings: blocks.length ? [] : ['no text found (empty workbook?)'] };
  return doc;
}

function readSheet(xml: Buffer, name: string, strings: string[], dateStyles: Set<number>, budget: SheetBudget, keepCells = false): Block[] {
  const rows = new SheetRows(name, keepCells);
  let row = 0;
  let cells: string[] = [];
  let cell: { col: number; type: string; style: number } | undefined;
  let value = '';
  let inValue = false;
  walkXml(xml, NOUN, {
    open(tag, attrs) {
      const n = local(tag);
      if (n === 'row') {
        row = attrs.r ? Number(attrs.r) : row + 1;
        cells = [];
      } else if (n === 'c') {
        const letters = /^[A-Z]+/i.exec(attrs.r ?? '')?.[0];
        cell = { col: letters ? columnIndex(letters) : cells.length, type: attrs.t ?? 'n', style: Number(attrs.s ?? 0) };
        value = '';
      } else if (cell && (n === 'v' || n === 't')) inValue = true;
    },
    text(t) {
      if (inValue) value += t;
    },
    close(tag) {
      const n = local(tag);
      if (n === 'v' || n === 't') inValue = false;
      else if (n === 'c' && cell) {
        const shown = display(value, cell.type, cell.style, strings, dateStyles);
        if (shown !== '') {
          budget.take();
          while (cells.length < cell.col) cells.push('');
          cells[cell.col] = shown;
        }
        cell = undefined;
      } else if (n === 'row') rows.add(row, cells);
    },
  });
  return rows.finish();
}

function display(raw: string, type: string, style: number, strings: string[], dateStyles: Set<number>): string {
  switch (type) {
    case 's':
      return strings[Number(raw)] ?? '';
    case 'b':
      return raw === '1' ? 'TRUE' : 'FALSE';
    case 'n': {
      const n = Number(raw);
      if (raw === '' || !Number.isFinite(n)) return raw;
      // Excel's day 0 is 1899-12-30 (its 1900 leap-year bug folded in); whole days show as a date.
      if (dateStyles.has(style)) return new Date(Date.UTC(1899, 11, 30) + n * 86_400_000).toISOString().slice(0, n % 1 === 0 ? 10 : 16).replace('T', ' ');
      return raw;
    }
    default:
      return raw;
  }
}

function sharedStrings(xml: Buffer | undefined): string[] {
  const out: string[] = [];
  if (!xml) return out;
  let current: string | null = null;
  let inText = false;
  let phonetic = false;
  walkXml(xml, NOUN, {
    open(tag) {
      const n = local(tag);
      if (n === 'si') current = '';
      else if (n === 'rPh') phonetic = true; // ruby readings are not the cell's text
      else if (n === 't' && !phonetic) inText = true;
    },
    text(t) {
      if (inText && current !== null) current += t;
    },
    close(tag) {
      const n = local(tag);
      if (n === 't') inText = false;
      else if (n === 'rPh') phonetic = false;
      else if (n === 'si') {
        out.push(current ?? '');
        current = null;
      }
    },
  });
  return out;
}

/** Indexes into `cellXfs` whose number format shows a date. */
function dateStyleIndexes(xml: Buffer | undefined): Set<number> {
  const out = new Set<number>();
  if (!xml) return out;
  const custom = new Set<number>();
  let inXfs = false;
  let index = 0;
  walkXml(xml, NOUN, {
    open(tag, attrs) {
      const n = local(tag);
      if (n === 'numFmt' && /(^|[^"\\])[dmy]/i.test((attrs.formatCode ?? '').replace(/"[^"]*"|\[[^\]]*\]/g, ''))) custom.add(Number(attrs.numFmtId));
      else if (n === 'cellXfs') inXfs = true;
      else if (n === 'xf' && inXfs) {
        const id = Number(attrs.numFmtId ?? 0);
        if (DATE_FORMATS.has(id) || custom.has(id)) out.add(index);
        index++;
      }
    },
    close(tag) {
      if (local(tag) === 'cellXfs') inXfs = false;
    },
  });
  return out;
}
