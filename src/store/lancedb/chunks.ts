/**
 * The chunks index: text, metadata and vector of every chunk, with a BM25 full-text index on `search_text`. This
 * file keeps its table's life: opening, first write, the background index upkeep (HNSW, scalar and FTS indexes),
 * and re-index. The columns are in chunk-schema.ts, the index info in chunk-index-info.ts, the searches and their
 * tenant check in chunk-search.ts, the handle they read in shared mode in chunk-search-handle.ts.
 *
 * When the configured embedder differs from the one in the index info, `reindexRequired()` is true until
 * `rebuild()` has re-embedded every chunk into a fresh table and switched to it.
 */
import * as lancedb from '@lancedb/lancedb';
import { type RecordBatch, rowsTable, type Schema } from './arrow-batches.js';
import { INFO_POLL_MS, type IndexInfo, readIndexInfo, writeIndexInfo } from './chunk-index-info.js';
import {
  CHUNK_COLUMN_DEFAULTS,
  chunkId,
  chunkSchema,
  type ChunkFields,
  type ChunkWrite,
  DOCUMENT_FIELD_COLUMNS,
  type DocumentFields,
  ensureColumns,
  ensureScalarIndexes,
  FIELDS,
  KEYWORD_COLUMN,
  type KeywordColumn,
  keywordIndex,
  keywordIndexName,
  LEGACY_KEYWORD_COLUMN,
  type ShownChunk,
  toFields,
  VECTOR_INDEX,
} from './chunk-schema.js';
import { type ChunkRef, type ChunkSearchScope, ChunkSearches, type KeywordHit, type KeywordQuery, ROW_REFS_RESCAN_MS, type VectorHit } from './chunk-search.js';
import { SearchHandles } from './chunk-search-handle.js';
import type { VectorStore } from './connection.js';
import { lit, OwnedRowsTable, sqlValue, type TableOptions, upkeepLockKey } from './owned-table.js';
import { RowRefs } from './row-refs.js';

export interface AnnOptions {
  /**
   * Rows from which an HNSW vector index is kept. Below it a flat scan is about as fast, and no index
   * needs building (bench/results/search.md#chunks-table-figures). Default 10,000.
   */
  minRows: number;
  /**
   * Each optimize folds new rows into a small delta index, and every search visits each one; past this many
   * the index is rebuilt whole, which costs in proportion to the rows
   * (bench/results/search.md#chunks-table-figures). Default 16.
   */
  maxSegments: number;
  /**
   * HNSW candidate list size. Against exact search, recall@100 gains little past 400 and smaller lists save
   * little time (bench/results/search.md#chunks-table-figures). Default 400.
   */
  ef: number;
  /**
   * A filtered search whose rows number at most this, and at most `exactShare` of the table's, scans them exactly
   * rather than walk the HNSW index, whose recall falls when the filter leaves few of its nodes
   * (docs/BENCHMARKS.md#filtered-search). Default 20,000.
   */
  exactBelow: number;
  /**
   * See `exactBelow`: past this share of the table's rows a filtered search walks the index (re-ranking its
   * nearest candidates by exact distance), which then costs less than a scan and keeps its recall. Default 0.02.
   */
  exactShare: number;
  /**
   * A table without a vector index of at most this many rows is held in memory for its flat scans and takes
   * (memory-copy.ts); 0 never. Default 10,000, the table the vector index is built from (`minRows`).
   */
  memoryRows: number;
}

/** What the daemon is configured with: the embedder, and the keyword analysis ingestion writes (ANALYSIS_VERSION). */
export interface ConfiguredIndex {
  embedderId: string;
  /**
   * The embedder's dimension once known (a remote one learns it from its first answer; 0 before): a model that
   * changed behind the same id (re-pulled, re-created) makes vectors of another size, and is another embedder.
   */
  dimension?: () => number;
  /** Absent: this process writes no keyword_text (a tool that only copies or counts rows). */
  keywordAnalysis?: number;
}

/** Whether the stored vectors come from another embedder than the configured one: another id, or another size. */
function madeByAnother(info: IndexInfo, configured: ConfiguredIndex): boolean {
  const dimension = configured.dimension?.() ?? 0;
  return info.embedderId !== configured.embedderId || (dimension > 0 && info.dimension !== dimension);
}

export const DEFAULT_ANN: AnnOptions = { minRows: 10_000, maxSegments: 16, ef: 400, exactBelow: 20_000, exactShare: 0.02, memoryRows: 10_000 };

/**
 * How long a chunks table of `rows` waits between background optimizes: 1 s per 20k rows, at least 5 s, at most
 * 30 s: 16 segments then span several times a whole rebuild. The 5 s floor batches index upkeep under bulk
 * ingestion (each optimize compacts and updates the FTS index, at a cost that grows little with what it adds);
 * rows written meanwhile are scanned, which costs a search little at a few hundred rows
 * (bench/results/search.md#chunks-table-figures).
 */
export function chunkOptimizeGapMs(rows: number): number {
  return Math.min(30_000, Math.max(5000, rows / 20));
}

/** Document fields as the SQL values of an update. */
const fieldValues = (fields: Partial<DocumentFields>): Record<string, string> =>
  Object.fromEntries(DOCUMENT_FIELD_COLUMNS.filter((c) => fields[c] !== undefined).map((c) => [c, sqlValue(fields[c]!)]));

export class ChunkIndex extends OwnedRowsTable {
  /** Row count at the last optimize: sets the background optimize interval. */
  private rows = 0;
  /** The current table's row directory (row-refs.ts), by table name. */
  private rowRefs: { table: string; refs: RowRefs } | undefined;
  /** Told once: the indexes need more cache than the store was opened with. */
  private cacheOutgrown = false;
  private infoPoll: NodeJS.Timeout | undefined;
  /** The handle searches read (the table itself, or through the file cache in shared mode). */
  private readonly handles: SearchHandles;
  private readonly searches: ChunkSearches;

  private constructor(
    private readonly store: VectorStore,
    private info: IndexInfo | null,
    private readonly configured: ConfiguredIndex,
    private readonly ann: AnnOptions,
    opts: TableOptions,
  ) {
    super(opts, 'chunks', store.shared);
    this.handles = new SearchHandles(store, () => ({ table: this.table, commits: this.commits, refreshes: this.refreshes, committedVersion: this.committedVersion }), this.log, this.kind);
    this.searches = new ChunkSearches({ table: () => this.handles.table(), refsOf: (table) => this.refsOf(table), ef: ann.ef, exactBelow: ann.exactBelow, exactShare: ann.exactShare, memoryRows: ann.memoryRows, log: this.log, keywordColumn: () => this.keywordColumn() });
    const shared = store.shared;
    if (shared) {
      const follow = () => void this.discover().catch((err: unknown) => this.log?.warn({ err }, 'could not re-read the chunk index info; trying again later'));
      this.subscriptions.push(shared.events.subscribe('index_changed', follow));
      this.infoPoll = setInterval(follow, INFO_POLL_MS);
      this.infoPoll.unref();
    }
  }

  /**
   * Opens the chunks table recorded in the index info. `embedderId` is the configured embedder; a table
   * built by another one is kept (search answers 409 until re-indexed) unless it is empty.
   */
  static async open(
    store: VectorStore,
    configured: ConfiguredIndex,
    opts: { ann?: Partial<AnnOptions> } & TableOptions = {},
  ): Promise<ChunkIndex> {
    const info = await readIndexInfo(store);
    const index = new ChunkIndex(store, info, configured, { ...DEFAULT_ANN, ...opts.ann }, opts);
    if (info) {
      const names = await store.connection.tableNames();
      if (names.includes(info.table)) {
        const table = (index.table = await store.connection.openTable(info.table));
        // Tables made before these columns and indexes existed; replicas starting together upgrade one at a time,
        // each reading the table as the one before it left it (`table` checked out again under the commit lock: the
        // handle opened before it would show the old schema, and adding a column again is refused).
        await index.commit(async () => {
          await ensureColumns(table);
          await ensureScalarIndexes(table);
        }, table);
        index.rows = await index.table.countRows();
        if (await index.behindOnIndexes(index.table)) index.optimizeSoon();
      } else index.info = null; // the table was removed by hand: start over
    }
    // Shared mode keeps it: another replica may be writing it with the embedder it was made with.
    if (!store.shared && index.info && madeByAnother(index.info, configured) && (await index.count()) === 0) {
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

  /**
   * The column keyword search reads: `keyword_text` once every row has it (the index info says with which analysis),
   * `search_text` before (a library an older release wrote, while the background analysis goes through it).
   */
  keywordColumn(): KeywordColumn {
    return this.info?.keywordAnalysis === undefined && this.info ? LEGACY_KEYWORD_COLUMN : KEYWORD_COLUMN;
  }

  /**
   * Every row has `keyword_text` written with `version` of the analysis: keyword search switches to its index (built
   * first, if this table lacks it), and the index on `search_text` is dropped. Shared mode: the other replicas follow
   * the index info. Nothing to do when the info already says so.
   */
  /** The analysis version the index info records every row's `keyword_text` complete in (undefined: none yet). */
  keywordAnalysis(): number | undefined {
    return this.info?.keywordAnalysis;
  }

  completeKeywordAnalysis(version: number): Promise<void> {
    return this.serial(async () => {
      const table = this.table;
      const info = this.info;
      if (!table || !info || info.keywordAnalysis === version) return;
      const indexes = new Set((await table.listIndices()).map((i) => i.name));
      if (!indexes.has(keywordIndexName(KEYWORD_COLUMN))) await this.commit(() => table.createIndex(KEYWORD_COLUMN, { config: keywordIndex(KEYWORD_COLUMN), replace: true }));
      await this.saveInfo({ ...info, keywordAnalysis: version });
      if (indexes.has(keywordIndexName(LEGACY_KEYWORD_COLUMN))) {
        await this.commit(() => table.dropIndex(keywordIndexName(LEGACY_KEYWORD_COLUMN))).catch((err: unknown) =>
          this.log?.warn({ err }, 'could not drop the index on search_text that keyword_text replaced; it stays until the next re-index'),
        );
      }
    });
  }

  /** True when stored vectors come from another embedder than the configured one: search must wait (409). */
  reindexRequired(): boolean {
    return this.info !== null && madeByAnother(this.info, this.configured);
  }

  private async saveInfo(info: IndexInfo): Promise<void> {
    await writeIndexInfo(this.store, info);
    this.info = info;
    await this.store.shared?.events.publish('index_changed', '');
  }

  /**
   * A new empty table. `analysed`: every row written to it will have `keyword_text` (ingestion writes it), so only
   * that column is indexed; a table that rows are copied into from an older one (a re-index, `migrate`) keeps the
   * index on `search_text` too, until its rows are analysed.
   */
  private async createTable(name: string, dimension: number, analysed: boolean): Promise<lancedb.Table> {
    // Shared mode never replaces a table: another replica may have made it a moment ago and be writing to it.
    const mode = this.store.shared ? { mode: 'create' as const, existOk: true } : { mode: 'overwrite' as const };
    const table = await this.store.connection.createEmptyTable(name, chunkSchema(dimension), mode);
    // A table made again under a name starts its fragment ids over: what the directory knew of the old one is void.
    if (this.rowRefs?.table === name) this.rowRefs = undefined;
    await table.createIndex(KEYWORD_COLUMN, { config: keywordIndex(KEYWORD_COLUMN), replace: true });
    if (!analysed) await table.createIndex(LEGACY_KEYWORD_COLUMN, { config: keywordIndex(LEGACY_KEYWORD_COLUMN), replace: true });
    await ensureScalarIndexes(table);
    return table;
  }

  /**
   * The table rows are written to, made on first use. Shared mode: under a lock, after re-reading the index info,
   * so replicas writing their first chunks at once end up with one table (another's, when it got there first).
   */
  private async ensureTable(embedder: { id: string; dimension: number }, analysed: boolean): Promise<lancedb.Table> {
    if (this.table) return this.table;
    const create = async () => {
      const name = 'chunks';
      const table = await this.createTable(name, embedder.dimension, analysed);
      this.table = table;
      const keywordAnalysis = analysed ? this.configured.keywordAnalysis : undefined;
      await this.saveInfo({ table: name, embedderId: embedder.id, dimension: embedder.dimension, ...(keywordAnalysis !== undefined ? { keywordAnalysis } : {}) });
      return table;
    };
    const shared = this.store.shared;
    if (!shared) return create();
    return shared.locks.withLock('lancedb:chunks-index', async () => ((await this.follow(await readIndexInfo(this.store))) ? this.table! : create()));
  }

  /** Switches to the table `info` names when it exists; false when there is none to switch to. */
  private async follow(info: IndexInfo | null): Promise<boolean> {
    if (!info || !(await this.store.connection.tableNames()).includes(info.table)) return false;
    if (this.info?.table !== info.table || !this.table) {
      this.table = await this.store.connection.openTable(info.table);
      this.rows = await this.table.countRows();
    }
    this.info = info;
    return true;
  }

  /** Shared mode: follows the index info another replica wrote (its first table, or a re-index's switch). */
  protected override async discover(): Promise<void> {
    const info = await readIndexInfo(this.store);
    if (!info || (info.table === this.info?.table && info.embedderId === this.info.embedderId && info.keywordAnalysis === this.info.keywordAnalysis && this.table)) return;
    await this.serial(() => this.follow(info));
  }

  override async close(): Promise<void> {
    clearInterval(this.infoPoll);
    await this.rowRefs?.refs.settled();
    await this.handles.close();
    await super.close();
  }

  /** Work a previous run left: rows written after its last optimize, or a table past the HNSW threshold without one. */
  private async behindOnIndexes(table: lancedb.Table): Promise<boolean> {
    const fts = await table.indexStats(keywordIndexName(this.keywordColumn()));
    const vector = await table.indexStats(VECTOR_INDEX);
    return (fts?.numUnindexedRows ?? 0) > 0 || (vector ? vector.numUnindexedRows > 0 : this.rows >= this.ann.minRows);
  }

  /** See chunkOptimizeGapMs. */
  protected override optimizeGapMs(): number {
    return chunkOptimizeGapMs(this.rows);
  }

  /**
   * Drops the table a rebuild replaced. Shared mode: under the upkeep lock, so that a pass the upkeep leader began
   * on it before the switch ends first: its commit would otherwise bring the table back after its files went (seen
   * in the replicas' re-index test once a pass waited its gap after the replicas restarted). A failure leaves the
   * old table's files behind, said in the log.
   */
  private async dropReplaced(name: string): Promise<void> {
    const drop = () => this.store.connection.dropTable(name);
    try {
      await (this.shared ? this.shared.locks.withLock(upkeepLockKey(this.kind), drop) : drop());
    } catch (err) {
      this.log?.warn({ err, table: name }, 'could not drop the chunks table the re-index replaced; its files stay in the store');
    }
  }

  protected override async afterOptimize(table: lancedb.Table): Promise<void> {
    this.rows = await table.countRows();
    await this.maintainVectorIndex(table, this.rows);
  }

  /**
   * Loads the table's indexes into memory, so the first search after a start does not pay for it
   * (bench/results/search.md#chunks-table-figures). The daemon runs it in the background at startup.
   */
  async prewarm(): Promise<void> {
    if (!this.table) return;
    for (const index of await this.table.listIndices()) await this.table.prewarmIndex(index.name);
    const table = await this.handles.table();
    if (table) await this.refsOf(table).scan(table);
  }

  /**
   * The ids of the documents that have rows, from the row directory the startup preload read (the same rows,
   * which are costly to read again in a large table); scanned now if it was not.
   */
  override async documentIds(): Promise<Set<string>> {
    const table = await this.handles.table();
    if (!table) return new Set();
    const refs = this.refsOf(table);
    await refs.scan(table, ROW_REFS_RESCAN_MS);
    return refs.documentIds();
  }

  private refsOf(table: lancedb.Table): RowRefs {
    if (this.rowRefs?.table !== table.name) this.rowRefs = { table: table.name, refs: new RowRefs() };
    return this.rowRefs.refs;
  }

  /**
   * The table's version and the rows each index has not taken in yet, as this handle sees them (metrics, read at
   * each scrape): index statistics come from the manifest, no rows are read. Null before the first write.
   */
  async indexState(): Promise<{ version: number; unindexed: { fts: number; vector: number }; rowsInMemory: number } | null> {
    const table = this.table;
    if (!table) return null;
    const held = await this.inMemory();
    const [version, fts, vector] = await Promise.all([table.version(), table.indexStats(keywordIndexName(this.keywordColumn())), table.indexStats(VECTOR_INDEX)]);
    // No vector index yet (a small table): every row is searched by a flat scan, which is what it is built for.
    return { version, unindexed: { fts: fts?.numUnindexedRows ?? 0, vector: vector ? vector.numUnindexedRows : 0 }, rowsInMemory: held?.rows ?? 0 };
  }

  /** The HNSW index's state (null when there is none yet: the table is small or not optimized since). */
  async vectorIndex(): Promise<{ segments: number; indexedRows: number } | null> {
    const stats = this.table ? await this.table.indexStats(VECTOR_INDEX) : undefined;
    return stats ? { segments: stats.numIndices ?? 1, indexedRows: stats.numIndexedRows } : null;
  }

  /** Builds the HNSW index once the table is big enough, and rebuilds it when delta segments pile up. */
  private async maintainVectorIndex(table: lancedb.Table, rows: number): Promise<void> {
    const stats = await table.indexStats(VECTOR_INDEX);
    if (stats ? (stats.numIndices ?? 1) <= this.ann.maxSegments : rows < this.ann.minRows) return;
    // One partition: at this scale IVF adds nothing but recall loss, and SQ keeps the graph's vectors at 1 byte/dim.
    await table.createIndex('vector', { config: lancedb.Index.hnswSq({ distanceType: 'cosine', numPartitions: 1 }), replace: true });
    const short = this.store.cacheShortfall(await table.listIndices());
    if (short && !this.cacheOutgrown) {
      this.cacheOutgrown = true;
      this.log?.warn(
        short,
        'the chunk indexes have outgrown the index cache sized at start: searches read them from disk until the daemon is restarted (it sizes the cache for the library it opens)',
      );
    }
  }

  /** Adds rows (vectors of the configured embedder's dimension); creates the table on first use. */
  add(rows: ChunkWrite[], embedder: { id: string; dimension: number }): Promise<void> {
    return this.serial(async () => {
      if (rows.length === 0) return;
      const table = await this.ensureTable(embedder, this.configured.keywordAnalysis !== undefined && rows.every((r) => typeof r.keyword_text === 'string'));
      if (this.reindexRequired()) throw new Error('the chunk index needs re-indexing before new chunks can be written');
      for (const r of rows) {
        if (r.vector.length !== this.info!.dimension) throw new Error(`vector of length ${r.vector.length}, index expects ${this.info!.dimension}`);
        if (r.id !== chunkId(r.document_id, r.chunk_index)) throw new Error(`chunk id ${r.id} is not ${chunkId(r.document_id, r.chunk_index)}`);
      }
      const data = rows.map((r) => ({ ...CHUNK_COLUMN_DEFAULTS, ...r, ocr: r.ocr ?? false })) as unknown as Record<string, unknown>[];
      await this.commit(() => table.add(data));
    });
  }

  /**
   * Appends chunk rows read from another library's table (`docsearch migrate`) in one commit: their vectors as
   * stored, nothing embedded. Makes the table and writes the index info (`embedder`'s id and dimension) on first
   * use, as `add` does; rows of another dimension are refused.
   */
  /**
   * Makes the table (and the index info naming it and the embedder) if there is none yet, empty: a copy of a library
   * whose table holds no rows — its documents still queued, or all purged — records the embedder as the source does
   * (admin/migrate/copy.ts), or verification finds the info missing.
   */
  create(embedder: { id: string; dimension: number }): Promise<void> {
    return this.serial(async () => void (await this.ensureTable(embedder, false)));
  }

  addBatches(batches: RecordBatch[], embedder: { id: string; dimension: number }): Promise<void> {
    return this.serial(async () => {
      if (batches.every((b) => b.numRows === 0)) return;
      const table = await this.ensureTable(embedder, false);
      if (this.reindexRequired()) throw new Error('the chunk index needs re-indexing before new chunks can be written');
      await this.appendBatches(table, batches, CHUNK_COLUMN_DEFAULTS);
    });
  }

  /**
   * Searches read a handle of their own where there is a file cache, and it catches up when a search asks (the
   * refresh count tells it to): the main handle, which writes and counts use, re-checks by itself once
   * READ_CONSISTENCY_S has passed. Refreshing it on every other replica's commit listed the table's versions on the
   * store up to 2.5 times a second on each replica while they all ingested, for no search.
   */
  protected override async refreshView(table: lancedb.Table): Promise<void> {
    if (this.store.searchConnection === this.store.connection) await table.checkoutLatest();
  }

  /**
   * Sets document fields (chunk-schema.ts DocumentFields) on every row of these documents, in one commit: their
   * labels changed, or the background pass fills rows written before the fields were recorded.
   */
  setDocumentFields(documentIds: readonly string[], fields: Partial<DocumentFields>): Promise<void> {
    const values = fieldValues(fields);
    return Object.keys(values).length === 0 ? Promise.resolve() : this.updateDocuments(documentIds, values);
  }

  /** Moves a document's rows to another project with the fields that change with it (its labels), in one commit. */
  override moveDocument(documentId: string, projectId: string, fields: Partial<DocumentFields> = {}): Promise<void> {
    return this.updateDocuments([documentId], { project_id: lit(projectId), ...fieldValues(fields) });
  }

  /** Chunk rows, all or of one document. */
  async count(documentId?: string): Promise<number> {
    if (!this.table) return 0;
    return this.table.countRows(documentId === undefined ? undefined : `document_id = ${lit(documentId)}`);
  }

  /**
   * For the backfill (ingest/backfill.ts): at most `limit` rows for which `predicate` holds, with `columns`, as this
   * handle sees the table. None while the index waits for a re-index (its rows are another embedder's).
   */
  async rowsWhere(predicate: string, columns: readonly string[], limit: number): Promise<Record<string, unknown>[]> {
    const table = this.table;
    if (!table || this.reindexRequired()) return [];
    return (await table.query().where(predicate).select([...columns]).limit(limit).toArray()) as Record<string, unknown>[];
  }

  /**
   * How many chunks of each document are in each language (null: not told), read in one pass over two small
   * columns: the documents an older release made ready get their language from it (ingest/language-backfill.ts).
   */
  async languageTally(): Promise<Map<string, Map<string | null, number>>> {
    const out = new Map<string, Map<string | null, number>>();
    const table = this.table;
    if (!table) return out;
    for await (const batch of table.query().select(['document_id', 'language']) as AsyncIterable<{ getChild(name: string): { get(i: number): unknown } | null; numRows: number }>) {
      const docs = batch.getChild('document_id')!;
      const langs = batch.getChild('language')!;
      for (let i = 0; i < batch.numRows; i++) {
        const doc = docs.get(i) as string;
        const lang = (langs.get(i) as string | null) ?? null;
        const tally = out.get(doc) ?? new Map<string | null, number>();
        out.set(doc, tally);
        tally.set(lang, (tally.get(lang) ?? 0) + 1);
      }
    }
    return out;
  }

  /** Rows for which `predicate` holds (0 before the first write). */
  async countWhere(predicate: string): Promise<number> {
    return this.table ? this.table.countRows(predicate) : 0;
  }

  /**
   * Writes `columns` of existing rows by id (each of `rows` has `id` and those columns): for the backfill, whose
   * values are a function of each row's other columns, so a row written again meanwhile with the same text
   * (ingestion's retry) gets the same values it was given; one written again with other text is read back and made
   * pending again by the backfill (ingest/backfill.ts). A row deleted since it was read stays deleted (ids not in the
   * table are ignored). LanceDB rewrites the rows it changes: the indexes take them in again at the next optimize
   * (they are scanned meanwhile). Returns how many rows were written.
   *
   * Unconditional: LanceDB 0.33 panics on a merge with a `where` on a table whose merge key has a btree index.
   */
  writeColumns(rows: Record<string, unknown>[], columns: readonly string[]): Promise<number> {
    return this.serial(async () => {
      const table = this.table;
      if (!table || rows.length === 0) return 0;
      if (this.reindexRequired()) throw new Error('the chunk index needs re-indexing before its rows can be written');
      const data = rowsTable((await table.schema()) as unknown as Schema, ['id', ...columns], rows);
      const result = await this.commit(() => table.mergeInsert('id').whenMatchedUpdateAll().execute(data as unknown as lancedb.Data), table);
      this.optimizeSoon();
      return result.numUpdatedRows;
    });
  }

  /**
   * A document's chunks in order, without vectors (inspection, hydration). Read through the search handle: in
   * shared mode it catches up when a document settles anywhere, so a document the database calls ready has its
   * chunks here too; the main handle could be a consistency interval behind another replica's write.
   */
  async documentChunks(documentId: string): Promise<ChunkFields[]> {
    const table = await this.handles.table();
    if (!table) return [];
    const rows = await table.query().where(`document_id = ${lit(documentId)}`).select([...FIELDS]).toArray();
    return rows.map((r: Record<string, unknown>) => toFields(r)).sort((a, b) => a.chunk_index - b.chunk_index);
  }

  /** The user's chunks among `refs` (see ChunkSearches.getMany). */
  getMany(projectIds: readonly string[], refs: Pick<ChunkRef, 'id' | '_rowid'>[]): Promise<ShownChunk[]> {
    return this.searches.getMany(projectIds, refs);
  }

  /** The language of each of the user's chunks among `refs` (see ChunkSearches.languagesOf). */
  languagesOf(projectIds: readonly string[], refs: Pick<ChunkRef, 'id' | '_rowid'>[]): Promise<Map<string, string | null>> {
    return this.searches.languagesOf(projectIds, refs);
  }

  /** The version and rows of the table searches read that are held in memory (memory-copy.ts), if any. */
  async inMemory(): Promise<{ version: number; rows: number } | undefined> {
    const table = await this.handles.table();
    return table && this.searches.inMemory(table);
  }

  /** Nearest chunks to `vector` within the scope (see ChunkSearches.vectorSearch). */
  vectorSearch(q: ChunkSearchScope & { vector: Float32Array | number[] }): Promise<VectorHit[]> {
    return this.searches.vectorSearch(q);
  }

  /** BM25 matches of `query` within the scope (see ChunkSearches.keywordSearch). */
  keywordSearch(q: ChunkSearchScope & KeywordQuery): Promise<KeywordHit[]> {
    return this.searches.keywordSearch(q);
  }

  /**
   * Re-embeds every stored chunk from its fields (its `search_text`, and its units) into a fresh table with `embedder`'s dimension, then
   * switches to it and drops the old one. The old table keeps answering until the switch; `onProgress` gets
   * (done, total). Writes are held back meanwhile (callers also pause ingestion).
   */
  rebuild(
    embedder: { id: string; dimension: number; embed(rows: ChunkFields[]): Promise<{ vector: Float32Array; units: Uint8Array | null }[]> },
    onProgress: (done: number, total: number) => void,
    batchSize = 64,
  ): Promise<{ chunks: number }> {
    return this.serial(async () => {
      // Another replica may have switched the index since this one last looked (shared mode: the caller holds
      // the re-index lease now, so nobody else is rebuilding): nothing is left to do then.
      const current = await readIndexInfo(this.store);
      if (current && !madeByAnother(current, { embedderId: embedder.id, dimension: () => embedder.dimension })) {
        await this.follow(current);
        return { chunks: 0 };
      }
      const old = this.table;
      const oldName = this.info?.table;
      const total = old ? await old.countRows() : 0;
      const name = `chunks_${Date.now().toString(36)}`;
      // The rows are copied with their keyword_text: as complete as the old table's.
      const keywordAnalysis = this.info?.keywordAnalysis;
      const fresh = await this.createTable(name, embedder.dimension, keywordAnalysis !== undefined || !old);
      onProgress(0, total);
      let done = 0;
      if (old) {
        let batch: ChunkFields[] = [];
        const flush = async () => {
          if (batch.length === 0) return;
          const embedded = await embedder.embed(batch);
          await fresh.add(batch.map((b, i) => ({ ...b, vector: embedded[i]!.vector, units: embedded[i]!.units })) as unknown as Record<string, unknown>[]);
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
      this.rows = await fresh.countRows();
      await this.maintainVectorIndex(fresh, this.rows);
      this.table = fresh;
      const analysis = keywordAnalysis ?? (old ? undefined : this.configured.keywordAnalysis);
      await this.saveInfo({ table: name, embedderId: embedder.id, dimension: embedder.dimension, ...(analysis !== undefined ? { keywordAnalysis: analysis } : {}) });
      if (oldName && oldName !== name) await this.dropReplaced(oldName);
      return { chunks: done };
    });
  }
}
