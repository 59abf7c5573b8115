/**
 * The chunk_windows table: one row per sentence window of a chunk (see ingest/sentence-windows.ts) with
 * its vector from the builtin model, computed at ingest so the builtin reranker never re-encodes text at
 * query time. Keyed by chunk id; rows carry user and document ids so lookups stay tenant-scoped and a
 * document's windows can be replaced or removed with it.
 */
import * as lancedb from '@lancedb/lancedb';
import { Field, FixedSizeList, Float32, Int32, Schema, Utf8 } from 'apache-arrow';
import type { RecordBatch } from './arrow-batches.js';
import type { VectorStore } from './connection.js';
import { inList, lit, OwnedRowsTable, type TableLog } from './owned-table.js';

export interface WindowRow {
  chunk_id: string;
  user_id: string;
  project_id: string;
  document_id: string;
  window_index: number;
  /** [start, end) UTF-16 offsets into the chunk's text. */
  start: number;
  end: number;
  vector: Float32Array;
}

export interface StoredWindow {
  start: number;
  end: number;
  vector: Float32Array;
}

export const WINDOWS_TABLE = 'chunk_windows';
const TABLE = WINDOWS_TABLE;

function schema(dimension: number): Schema {
  return new Schema([
    new Field('chunk_id', new Utf8(), false),
    new Field('user_id', new Utf8(), false),
    new Field('project_id', new Utf8(), false),
    new Field('document_id', new Utf8(), false),
    new Field('window_index', new Int32(), false),
    new Field('start', new Int32(), false),
    new Field('end', new Int32(), false),
    new Field('vector', new FixedSizeList(dimension, new Field('item', new Float32(), true)), false),
  ]);
}

export class ChunkWindowIndex extends OwnedRowsTable {
  private constructor(
    private readonly store: VectorStore,
    private readonly dimension: number,
    log?: TableLog,
  ) {
    super({ log }, TABLE, store.shared);
  }

  static async open(store: VectorStore, dimension: number, log?: TableLog): Promise<ChunkWindowIndex> {
    const index = new ChunkWindowIndex(store, dimension, log);
    if ((await store.connection.tableNames()).includes(TABLE)) index.table = await store.connection.openTable(TABLE);
    return index;
  }

  private async ensureTable(): Promise<lancedb.Table> {
    if (this.table) return this.table;
    const create = async () => {
      // Shared mode never replaces the table: another replica may have made it a moment ago.
      const mode = this.store.shared ? { mode: 'create' as const, existOk: true } : { mode: 'overwrite' as const };
      const table = await this.store.connection.createEmptyTable(TABLE, schema(this.dimension), mode);
      await table.createIndex('chunk_id', { config: lancedb.Index.btree(), replace: true });
      return (this.table = table);
    };
    const shared = this.store.shared;
    if (!shared) return create();
    // Replicas writing their first windows at once: one creates the table, the others open it.
    return shared.locks.withLock(`lancedb:${TABLE}-create`, async () => {
      await this.discover();
      return this.table ?? create();
    });
  }

  /** Shared mode: opens the table once another replica has made it. */
  protected override async discover(): Promise<void> {
    if (!this.table && (await this.store.connection.tableNames()).includes(TABLE)) this.table = await this.store.connection.openTable(TABLE);
  }

  /** Replaces a document's windows with `rows` (idempotent per document, like the chunks write). */
  replaceDocument(documentId: string, rows: WindowRow[]): Promise<void> {
    return this.serial(async () => {
      const table = await this.ensureTable();
      await this.commit(() => table.delete(`document_id = ${lit(documentId)}`), table);
      for (let i = 0; i < rows.length; i += 5000) {
        const slice = rows.slice(i, i + 5000) as unknown as Record<string, unknown>[];
        await this.commit(() => table.add(slice));
      }
    });
  }

  /** Appends rows without deleting first (bulk loads of fresh tables). */
  add(rows: WindowRow[]): Promise<void> {
    return this.serial(async () => {
      if (!rows.length) return;
      const table = await this.ensureTable();
      await this.commit(() => table.add(rows as unknown as Record<string, unknown>[]));
    });
  }

  /** Appends window rows read from another library's table (`docsearch migrate`) in one commit, vectors as stored. */
  addBatches(batches: RecordBatch[]): Promise<void> {
    return this.serial(async () => {
      if (batches.every((b) => b.numRows === 0)) return;
      await this.appendBatches(await this.ensureTable(), batches);
    });
  }

  async count(): Promise<number> {
    return this.table ? this.table.countRows() : 0;
  }

  /** The windows of `chunkIds` (within `projectIds` only), each chunk's in window order. Chunks without windows are absent. */
  async windowsFor(projectIds: readonly string[], chunkIds: string[]): Promise<Map<string, StoredWindow[]>> {
    const out = new Map<string, StoredWindow[]>();
    if (!this.table || chunkIds.length === 0) return out;
    const rows = (await this.table
      .query()
      .where(`${inList('project_id', projectIds)} AND chunk_id IN (${chunkIds.map(lit).join(', ')})`)
      .select(['chunk_id', 'window_index', 'start', 'end', 'vector'])
      .limit(chunkIds.length * 64)
      .toArray()) as { chunk_id: string; window_index: number; start: number; end: number; vector: { toArray(): Float32Array } | Float32Array }[];
    rows.sort((a, b) => (a.chunk_id < b.chunk_id ? -1 : a.chunk_id > b.chunk_id ? 1 : a.window_index - b.window_index));
    for (const r of rows) {
      const vector = r.vector instanceof Float32Array ? r.vector : Float32Array.from(r.vector.toArray());
      let list = out.get(r.chunk_id);
      if (!list) out.set(r.chunk_id, (list = []));
      list.push({ start: Number(r.start), end: Number(r.end), vector });
    }
    return out;
  }
}
