/**
 * A library's index tables as stored, read only: what `docsearch migrate` copies from and checks against. Opening
 * through ChunkIndex would write (it adds missing columns and indexes, and optimizes a table that is behind); this
 * opens the tables the index info names and only reads them, as Arrow record batches.
 */
import type * as lancedb from '@lancedb/lancedb';
import { type Cell, RowDigest, rowHasher } from '../row-digest.js';
import type { ColumnDefaults, RecordBatch, Schema } from './arrow-batches.js';
import { WINDOWS_TABLE } from './chunk-windows.js';
import { type IndexInfo, readIndexInfo } from './chunk-index-info.js';
import { CHUNK_COLUMN_DEFAULTS } from './chunk-schema.js';
import type { VectorStore } from './connection.js';

/** Row count and checksum per document, and of the whole table. */
export interface TableDigest {
  table: RowDigest;
  documents: Map<string, RowDigest>;
}

export class TableReader {
  private constructor(
    /** The LanceDB table's name. */
    readonly name: string,
    private readonly table: lancedb.Table,
    /** Values of columns the table may lack (see conformBatch). */
    readonly defaults: ColumnDefaults,
  ) {}

  static async open(store: VectorStore, name: string, defaults: ColumnDefaults = {}): Promise<TableReader | null> {
    if (!(await store.connection.tableNames()).includes(name)) return null;
    return new TableReader(name, await store.connection.openTable(name), defaults);
  }

  schema(): Promise<Schema> {
    return this.table.schema() as Promise<Schema>;
  }

  /** The dimension of the `vector` column. */
  async dimension(): Promise<number> {
    const field = (await this.schema()).fields.find((f) => f.name === 'vector');
    const size = (field?.type as { listSize?: number } | undefined)?.listSize;
    if (!size) throw new Error(`table ${this.name} has no fixed-size vector column`);
    return size;
  }

  countRows(): Promise<number> {
    return this.table.countRows();
  }

  /** Every row, streamed as Arrow record batches (all columns, or these). */
  scan(columns?: string[]): AsyncIterable<RecordBatch> {
    const query = this.table.query();
    return (columns ? query.select(columns) : query) as unknown as AsyncIterable<RecordBatch>;
  }

  /** Rows per document (reads only the document_id column). */
  async documentCounts(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for await (const batch of this.scan(['document_id'])) {
      const ids = batch.getChild('document_id')!;
      for (let i = 0; i < batch.numRows; i++) {
        const id = ids.get(i) as string;
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
    }
    return counts;
  }

  /**
   * Row counts and checksums of every column, vectors' float32 bytes included, per document and in all. A column
   * this table lacks counts as its default, so a table written before the column existed checks against a copy
   * that has it.
   */
  async digest(): Promise<TableDigest> {
    const names = [...new Set([...(await this.schema()).fields.map((f) => f.name), ...Object.keys(this.defaults)])].sort();
    const hash = rowHasher();
    const table = new RowDigest();
    const documents = new Map<string, RowDigest>();
    for await (const batch of this.scan()) {
      const columns = names.map((name) => [name, batch.getChild(name)] as const);
      const docs = batch.getChild('document_id')!;
      for (let i = 0; i < batch.numRows; i++) {
        const row = columns.map(([name, column]): [string, Cell] => [name, column ? cell(column.get(i)) : this.defaults[name]]);
        const id = docs.get(i) as string;
        let doc = documents.get(id);
        if (!doc) documents.set(id, (doc = new RowDigest()));
        doc.addHash(hash(row));
      }
    }
    for (const doc of documents.values()) table.merge(doc);
    return { table, documents };
  }
}

/** A column value as read from Arrow: scalars as they are, a vector as its float32 array, binary as its bytes, a list of text as JSON. */
function cell(value: unknown): Cell {
  if (value === null || value === undefined || typeof value !== 'object') return value as Cell;
  if (value instanceof Float32Array || value instanceof Uint8Array) return value;
  const array = (value as { toArray?: () => unknown }).toArray?.();
  if (array instanceof Float32Array) return array;
  // A list of text (labels, meta): its items in order, as one canonical string.
  if (Array.isArray(array) && array.every((v) => v === null || typeof v === 'string')) return JSON.stringify(array);
  throw new Error(`cannot checksum a column value of type ${Object.prototype.toString.call(value)}`);
}

/** A library's chunk index as stored: the info file and the tables it uses (null where there is none yet). */
export interface StoredIndex {
  info: IndexInfo | null;
  chunks: TableReader | null;
  windows: TableReader | null;
}

export async function readStoredIndex(store: VectorStore): Promise<StoredIndex> {
  const info = await readIndexInfo(store);
  return {
    info,
    chunks: info ? await TableReader.open(store, info.table, CHUNK_COLUMN_DEFAULTS) : null,
    windows: await TableReader.open(store, WINDOWS_TABLE),
  };
}
