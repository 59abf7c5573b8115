import type * as lancedb from '@lancedb/lancedb';
import { Int32, LargeUtf8, type RecordBatch, Table, Uint64, Utf8, vectorFromArray } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { RowRefs } from '../../src/store/lancedb/row-refs.js';

/**
 * The directory's scan reads LanceDB's batches from their Arrow buffers when they have the layout LanceDB gives
 * today (checked on real tables by chunks-index.test.ts), and through Arrow's `get()` otherwise. Only the first
 * layout comes out of LanceDB, so the other is fed here as real Arrow batches through the one call the scan makes.
 */
const rows = [
  // Two projects; document ids repeat over runs of rows and recur after another's; one id a prefix of the next.
  { user: 'p_1', doc: 'doc_a', index: 0, fragment: 0, offset: 0 },
  { user: 'p_1', doc: 'doc_a', index: 1, fragment: 0, offset: 1 },
  { user: 'p_1', doc: 'doc_ab', index: 0, fragment: 0, offset: 2 },
  { user: 'p_2', doc: 'doc_b', index: 7, fragment: 3, offset: 0 },
  { user: 'p_2', doc: 'doc_b', index: 8, fragment: 3, offset: 5 },
  { user: 'p_1', doc: 'doc_a', index: 2, fragment: 4_000_000, offset: 70_000 },
  { user: 'p_1', doc: 'dóc_ü', index: 3, fragment: 4_000_000, offset: 70_001 },
];
const rowid = (r: (typeof rows)[number]) => (BigInt(r.fragment) << 32n) | BigInt(r.offset);

function batches(ids: Utf8 | LargeUtf8, sliced: boolean): RecordBatch[] {
  const table = new Table({
    project_id: vectorFromArray(rows.map((r) => r.user), ids),
    document_id: vectorFromArray(rows.map((r) => r.doc), ids),
    chunk_index: vectorFromArray(rows.map((r) => r.index), new Int32()),
    _rowid: vectorFromArray(rows.map(rowid), new Uint64()),
  });
  // A slice keeps the whole buffers and starts at an offset into them.
  return sliced ? [...table.slice(0, 3).batches, ...table.slice(3).batches] : table.batches;
}

function scanning(of: RecordBatch[]): lancedb.Table {
  const stream = { [Symbol.asyncIterator]: async function* () { yield* of; } };
  return { query: () => ({ select: () => ({ withRowId: () => stream }) }) } as unknown as lancedb.Table;
}

describe('RowRefs scan', () => {
  for (const [layout, of] of [
    ['plain Utf8 batches (read from their buffers)', batches(new Utf8(), false)],
    ['sliced batches (the first read from its buffers, the second, at an offset into them, through get())', batches(new Utf8(), true)],
    ['LargeUtf8 ids (read through get())', batches(new LargeUtf8(), false)],
  ] as const) {
    it(`names every row of ${layout}`, async () => {
      const refs = new RowRefs();
      await refs.scan(scanning(of));
      for (const r of rows) expect(refs.get(rowid(r))).toEqual({ project_id: r.user, document_id: r.doc, chunk_index: r.index });
      expect(refs.has((3n << 32n) | 1n)).toBe(false); // an offset not read (a deleted row)
      expect(refs.get(1n << 32n)).toBeUndefined(); // a fragment not read
    });
  }
});
