/**
 * Rows of a table (a spreadsheet's sheet, a CSV file) as blocks: the first filled row names the columns, and every
 * later row reads "vessel: Aurora · berth: north", so a passage makes sense on its own. A block's `page` is its
 * row number (1-based, as the spreadsheet shows it) and its heading is the sheet's name: a result cites the sheet
 * and the range of rows. Filled cells are counted across the whole file and bounded (SheetBudget).
 */
import type { Block } from '../types.js';
import { ParseError } from './errors.js';

/** Most filled cells one file may have: past this a spreadsheet is refused, not cut short silently. */
export const MAX_CELLS = 1_000_000;

export class SheetBudget {
  private cells = 0;
  constructor(private readonly noun: string, private readonly max = MAX_CELLS) {}

  /** Counts one filled cell; throws when the file has more than the limit. */
  take(): void {
    if (++this.cells > this.max) {
      throw new ParseError(`${this.noun} has more than ${this.max.toLocaleString('en')} filled cells — too large to index; split it into smaller files`);
    }
  }
}

/** Collects one sheet's rows (in order, row numbers increasing) and turns them into blocks. */
export class SheetRows {
  private header: string[] | undefined;
  readonly blocks: Block[] = [];

  /** `keepCells`: each row's block also carries its cells and the column names (ParseOptions.cells). */
  constructor(
    private readonly sheet: string | undefined,
    private readonly keepCells = false,
  ) {}

  /** `cells[i]` is column i's displayed value ('' for an empty cell). */
  add(row: number, cells: string[]): void {
    // Only runs that are not already one space are replaced: a match per word ran a cell of millions of words
    // out of memory.
    const values = cells.map((c) => c.replace(/\s{2,}|[^\S ]/g, ' ').trim());
    if (!values.some((v) => v)) return;
    if (!this.header) {
      this.header = values;
      return;
    }
    const text = values
      .map((v, i) => (v ? `${this.header![i] || `column ${columnName(i)}`}: ${v}` : ''))
      .filter((s) => s)
      .join(' · ');
    this.blocks.push({ text, page: row, headings: this.sheet ? [this.sheet] : [], kind: 'table', ...(this.keepCells ? { cells: { columns: this.header, values } } : {}) });
  }

  /** A sheet of a single filled row still says what it holds. */
  finish(): Block[] {
    if (this.blocks.length === 0 && this.header) {
      const text = this.header.filter((v) => v).join(' · ');
      return [{ text, page: 1, headings: this.sheet ? [this.sheet] : [], kind: 'table' }];
    }
    return this.blocks;
  }
}

/** 0 → "A", 27 → "AB". */
export function columnName(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/** "AB" → 27. */
export function columnIndex(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}
