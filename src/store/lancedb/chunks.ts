/**
 * The chunks table: text, metadata and vector of every chunk, with a BM25 full-text index on `search_text`.
 * This is the only module that knows its schema. Every search takes a user id and filters on it inside
 * LanceDB (tenant isolation is part of the query, never a post-filter in the caller).
 *
 * Which embedder built the vectors is recorded in `<lancedb>/chunks-index.json` next to the table (written
 * atomically). When the configured embedder differs, `reindexRequired()` is true until `rebuild()` has
 * re-embedded every chunk into a fresh table and switched to it.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { Field, FixedSizeList, Float32, Int32, Schema, Utf8 } from 'apache-arrow';
import type { VectorStore } from './connection.js';
import { lit, OwnedRowsTable } from './owned-table.js';

export interface ChunkRow {
  /** Deterministic: `<document id>:<chunk index>`, so a retried write is recognisable. */
  id: string;
  user_id: string;
  project_id: string;
  document_id: string;
  chunk_index: number;
  /** Clean text, shown in results. */
  text: string;
  /** Title + heading path + text: what BM25 indexes and what was embedded. */
  search_text: string;
  /** Heading path joined with " > ", or null. */
  heading: string | null;
  page_start: number | null;
  page_end: number | null;
  vector: Float32Array;
}

export type ChunkFields = Omit<ChunkRow, 'vector'>;

export interface ChunkSearchScope {
  userId: string;
  limit: number;
  /** Restrict to these projects / documents (of the same user). Empty arrays match nothing. */
  projectIds?: string[];
  documentIds?: string[];
}

export interface VectorHit extends ChunkFields {
  /** Cosine distance (0 = same direction, 2 = opposite). */
  _distance: number;
}

export interface KeywordHit extends ChunkFields {
  /** BM25 score, higher is better. */
  _score: number;
}

export interface IndexInfo {
  /** LanceDB table holding the current chunks. */
  table: string;
  embedderId: string;
  dimension: number;
}

const INFO_FILE = 'chunks-index.json';
const FIELDS = ['id', 'user_id', 'project_id', 'document_id', 'chunk_index', 'text', 'search_text', 'heading', 'page_start', 'page_end'] as const;

function schema(dimension: number): Schema {
  return new Schema([
    new Field('id', new Utf8(), false),
    new Field('user_id', new Utf8(), false),
    new Field('project_id', new Utf8(), false),
    new Field('document_id', new Utf8(), false),
    new Field('chunk_index', new Int32(), false),
    new Field('text', new Utf8(), false),
    new Field('search_text', new Utf8(), false),
    new Field('heading', new Utf8(), true),
    new Field('page_start', new Int32(), true),
    new Field('page_end', new Int32(), true),
    new Field('vector', new FixedSizeList(dimension, new Field('item', new Float32(), true)), false),
  ]);
}

const inList = (column: string, values: string[]): string => (values.length === 0 ? 'false' : `${column} IN (${values.map(lit).join(', ')})`);

function scopeFilter(scope: Omit<ChunkSearchScope, 'limit'>): string {
  const parts = [`user_id = ${lit(scope.userId)}`];
  if (scope.projectIds) parts.push(inList('project_id', scope.projectIds));
  if (scope.documentIds) parts.push(inList('document_id', scope.documentIds));
  return parts.join(' AND ');
}

function toFields(r: Record<string, unknown>): ChunkFields {
  return {
    id: r.id as string,
    user_id: r.user_id as string,
    project_id: r.project_id as string,
    document_id: r.document_id as string,
    chunk_index: Number(r.chunk_index),
    text: r.text as string,
    search_text: r.search_text as string,
    heading: (r.heading as string | null) ?? null,
    page_start: r.page_start == null ? null : Number(r.page_start),
    page_end: r.page_end == null ? null : Number(r.page_end),
  };
}

export class ChunkIndex extends OwnedRowsTable {
  private constructor(
    private readonly store: VectorStore,
    private info: IndexInfo | null,
    private readonly configured: { embedderId: string },
  ) {
    super();
  }

  /**
   * Opens the chunks table recorded in the index info. `embedderId` is the configured embedder; a table
   * built by another one is kept (search answers 409 until re-indexed) unless it is empty.
   */
  static async open(store: VectorStore, configured: { embedderId: string }): Promise<ChunkIndex> {
    const path = join(store.dir, INFO_FILE);
    const info = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as IndexInfo) : null;
    const index = new ChunkIndex(store, info, configured);
    if (info) {
      const names = await store.connection.tableNames();
      if (names.includes(info.table)) index.table = await store.connection.openTable(info.table);
      else index.info = null; // the table was removed by hand: start over
    }
    if (index.info && index.info.embedderId !== configured.embedderId && (await index.count()) === 0) {
      await index.store.connection.dropTable(index.info.table);
      index.table = undefined;
      index.info = null;
    }
    return index;
  }

  /** The embedder and dimension the stored vectors were made with; null before the first write. */
  indexInfo(): IndexInfo | null {
    return this.info ? { ...this.info } : null;
  }

  /** True when stored vectors come from another embedder than the configured one: search must wait (409). */
  reindexRequired(): boolean {
    return this.info !== null && this.info.embedderId !== this.configured.embedderId;
  }

  private saveInfo(info: IndexInfo | null): void {
    const path = join(this.store.dir, INFO_FILE);
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, JSON.stringify(info), { mode: 0o600 });
    renameSync(tmp, path);
    this.info = info;
  }

  private async createTable(name: string, dimension: number): Promise<lancedb.Table> {
    const table = await this.store.connection.createEmptyTable(name, schema(dimension), { mode: 'overwrite' });
    await table.createIndex('search_text', { config: lancedb.Index.fts(), replace: true });
    return table;
  }

  /** Adds rows (vectors of the configured embedder's dimension); creates the table on first use. */
  add(rows: ChunkRow[], embedder: { id: string; dimension: number }): Promise<void> {
    return this.serial(async () => {
      if (rows.length === 0) return;
      if (this.reindexRequired()) throw new Error('the chunk index needs re-indexing before new chunks can be written');
      if (!this.table) {
        const name = 'chunks';
        this.table = await this.createTable(name, embedder.dimension);
        this.saveInfo({ table: name, embedderId: embedder.id, dimension: embedder.dimension });
      }
      for (const r of rows) {
        if (r.vector.length !== this.info!.dimension) throw new Error(`vector of length ${r.vector.length}, index expects ${this.info!.dimension}`);
      }
      await this.table.add(rows as unknown as Record<string, unknown>[]);
    });
  }

  /** Chunk rows, all or of one document. */
  async count(documentId?: string): Promise<number> {
    if (!this.table) return 0;
    return this.table.countRows(documentId === undefined ? undefined : `document_id = ${lit(documentId)}`);
  }

  /** A document's chunks in order, without vectors (inspection, hydration). */
  async documentChunks(documentId: string): Promise<ChunkFields[]> {
    if (!this.table) return [];
    const rows = await this.table.query().where(`document_id = ${lit(documentId)}`).select([...FIELDS]).toArray();
    return rows.map((r: Record<string, unknown>) => toFields(r)).sort((a, b) => a.chunk_index - b.chunk_index);
  }

  /** Nearest chunks to `vector` by cosine distance, within the user's (and optional projects'/documents') chunks. */
  async vectorSearch(q: ChunkSearchScope & { vector: Float32Array | number[] }): Promise<VectorHit[]> {
    if (!this.table || q.limit <= 0) return [];
    const rows = await this.table
      .vectorSearch(q.vector)
      .distanceType('cosine')
      .where(scopeFilter(q))
      .select([...FIELDS, '_distance'])
      .limit(q.limit)
      .toArray();
    return rows.map((r: Record<string, unknown>) => ({ ...toFields(r), _distance: Number(r._distance) }));
  }

  /** BM25 matches of `query` on search_text, within the user's (and optional projects'/documents') chunks. */
  async keywordSearch(q: ChunkSearchScope & { query: string }): Promise<KeywordHit[]> {
    if (!this.table || q.limit <= 0 || q.query.trim() === '') return [];
    const rows = await this.table
      .query()
      .fullTextSearch(q.query, { columns: 'search_text' })
      .where(scopeFilter(q))
      .select([...FIELDS, '_score'])
      .limit(q.limit)
      .toArray();
    return rows.map((r: Record<string, unknown>) => ({ ...toFields(r), _score: Number(r._score) }));
  }

  /**
   * Re-embeds every stored chunk from its `search_text` into a fresh table with `embedder`'s dimension, then
   * switches to it and drops the old one. The old table keeps answering until the switch; `onProgress` gets
   * (done, total). Writes are held back meanwhile (callers also pause ingestion).
   */
  rebuild(
    embedder: { id: string; dimension: number; embed(texts: string[]): Promise<Float32Array[]> },
    onProgress: (done: number, total: number) => void,
    batchSize = 64,
  ): Promise<{ chunks: number }> {
    return this.serial(async () => {
      const old = this.table;
      const oldName = this.info?.table;
      const total = old ? await old.countRows() : 0;
      const name = `chunks_${Date.now().toString(36)}`;
      const fresh = await this.createTable(name, embedder.dimension);
      onProgress(0, total);
      let done = 0;
      if (old) {
        let batch: ChunkFields[] = [];
        const flush = async () => {
          if (batch.length === 0) return;
          const vectors = await embedder.embed(batch.map((b) => b.search_text));
          await fresh.add(batch.map((b, i) => ({ ...b, vector: vectors[i]! })) as unknown as Record<string, unknown>[]);
          done += batch.length;
          batch = [];
          onProgress(done, total);
        };
        // A query is an async iterable of Arrow record batches: the table is streamed, never loaded whole.
        for await (const rb of old.query().select([...FIELDS]) as AsyncIterable<{ toArray(): { toJSON(): Record<string, unknown> }[] }>) {
          for (const r of rb.toArray()) {
            batch.push(toFields(r.toJSON()));
            if (batch.length >= batchSize) await flush();
          }
        }
        await flush();
      }
      await fresh.optimize();
      this.table = fresh;
      this.saveInfo({ table: name, embedderId: embedder.id, dimension: embedder.dimension });
      if (oldName && oldName !== name) await this.store.connection.dropTable(oldName).catch(() => undefined);
      return { chunks: done };
    });
  }
}
