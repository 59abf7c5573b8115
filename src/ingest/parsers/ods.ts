/**
 * OpenDocument spreadsheets (.ods): sheets (`table:table`) in order, rows read with their repeat counts (a producer
 * writes a run of empty rows or cells as one element repeated up to a million times: only filled cells are ever
 * expanded), each cell's displayed text (ODF stores it in the cell's `text:p`), then sheet-rows.ts: header names,
 * the sheet and row numbers a result cites.
 */
import type { Block, ParsedDocument, ParseOptions } from '../types.js';
import { readOdf, walkOdf } from './odf.js';
import { SheetBudget, SheetRows } from './sheet-rows.js';
import type { ZipLimits } from './zip-guard.js';

const NOUN = 'the OpenDocument spreadsheet (.ods)';

export async function parse(bytes: Uint8Array, opts: ParseOptions & { zipLimits?: Partial<ZipLimits> } = {}): Promise<ParsedDocument> {
  const pkg = await readOdf(bytes, NOUN, opts.zipLimits);
  const budget = new SheetBudget(NOUN);
  const blocks: Block[] = [];
  let sheet: SheetRows | undefined;
  let row = 0;
  let rowRepeat = 1;
  let cells: string[] = [];
  let col = 0;
  let colRepeat = 1;
  let cell: string | null = null;
  let paragraphs = 0;

  walkOdf(pkg.content, NOUN, {
    open(name, attrs) {
      if (name === 'table:table') {
        sheet = new SheetRows(attrs['table:name'], opts.cells);
        row = 0;
      } else if (name === 'table:table-row') {
        rowRepeat = Math.max(1, Number(attrs['table:number-rows-repeated'] ?? 1) || 1);
        cells = [];
        col = 0;
      } else if (name === 'table:table-cell' || name === 'table:covered-table-cell') {
        colRepeat = Math.max(1, Number(attrs['table:number-columns-repeated'] ?? 1) || 1);
        cell = '';
        paragraphs = 0;
      } else if (name === 'text:p' && cell !== null && paragraphs++ > 0) cell += '\n';
    },
    text(t) {
      if (cell !== null) cell += t;
    },
    close(name) {
      if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && cell !== null) {
        const text = cell.trim();
        if (text) {
          for (let i = 0; i < colRepeat; i++) {
            budget.take();
            cells[col + i] = text;
          }
        }
        col += colRepeat;
        cell = null;
      } else if (name === 'table:table-row') {
        const filled = cells.some((c) => c);
        for (let i = 0; i < rowRepeat; i++) {
          row++;
          if (!filled) continue;
          if (i > 0) for (const c of cells) if (c) budget.take();
          sheet?.add(row, Array.from(cells, (c) => c ?? ''));
        }
      } else if (name === 'table:table' && sheet) {
        // one by one: a spread of 200,000 items overflows the call stack
        for (const b of sheet.finish()) blocks.push(b);
        sheet = undefined;
      }
    },
  });
  const doc: ParsedDocument = { blocks, warnings: blocks.length ? [] : ['no text found (empty spreadsheet?)'] };
  if (pkg.title !== undefined) doc.title = pkg.title;
  return doc;
}
