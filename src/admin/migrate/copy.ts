/**
 * The copying half of a migration, in the order a half-finished target is safest in: the database's tables
 * (parents first), then the originals the documents use, then the chunk index (chunks, then the builtin
 * reranker's windows) read and written as Arrow record batches, vectors as stored. Every step can run again on
 * a target it already filled: tables are upserted and trimmed to the source, an original already there is left,
 * a document whose chunks are all there is skipped and one with only some is written again whole.
 */
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { FileStore } from '../../store/objects/originals.js';
import { batchBytes, filterRows, type RecordBatch } from '../../store/lancedb/arrow-batches.js';
import { ChunkWindowIndex } from '../../store/lancedb/chunk-windows.js';
import { ChunkIndex } from '../../store/lancedb/chunks.js';
import { readStoredIndex, type TableReader } from '../../store/lancedb/table-reader.js';
import { copyTable, countKept, LIBRARY_TABLES, referencedOriginals } from '../../store/sql/library-copy.js';
import { SecretSealer } from '../../core/sealed-secret.js';
import { placeSecretsKey, readSecretsKey, SECRETS_KEY_FILE } from '../../server/secrets-key.js';
import { eachLimited } from '../each-limited.js';
import { hashingTap } from '../hashing-tap.js';
import type { OpenedLibrary } from './libraries.js';
import type { Progress } from './progress.js';
import type { Redo } from './record.js';

export interface CopyContext {
  source: OpenedLibrary;
  target: OpenedLibrary;
  cutoff: number;
  /** Index rows per commit, and database rows per transaction (at most 1,000). */
  batchRows: number;
  progress: Progress;
  redo: Redo | undefined;
}

export interface TableCount {
  name: string;
  rows: number;
}

/** Originals the source could not give: a document's file missing from its store, or bytes that no longer hash to their name. */
export interface SourceProblems {
  missing: string[];
  damaged: string[];
}

export interface OriginalsCount {
  files: number;
  bytes: number;
  copied: number;
  copiedBytes: number;
}

export interface IndexCount {
  rows: number;
  documents: number;
  copied: number;
  /** Bytes of the rows copied, as Arrow held them. */
  copiedBytes: number;
}

/** Database rows per transaction. */
const SQL_PAGE = 1000;
/** Originals moved at once (object stores answer each request in tens of milliseconds: keep several in flight). */
const FILES_AT_ONCE = 4;

export async function copyTables(ctx: CopyContext): Promise<TableCount[]> {
  const out: TableCount[] = [];
  for (const table of LIBRARY_TABLES) {
    const total = await countKept(ctx.source.database!.db, table, ctx.cutoff);
    const step = ctx.progress.step(table.name, total);
    const rows = await copyTable(ctx.source.database!.db, ctx.target.database!.db, table, {
      cutoff: ctx.cutoff,
      batchRows: Math.min(SQL_PAGE, ctx.batchRows),
      onRows: (n) => step.add(n),
    });
    step.end();
    out.push({ name: table.name, rows });
  }
  return out;
}

/** Streams one original into the target, hashing it on the way: bytes that do not match their name are not placed. */
async function copyOriginal(from: FileStore, to: FileStore, sha256: string): Promise<number | 'missing' | 'damaged'> {
  const src = await from.open(sha256);
  if (!src) return 'missing';
  const tmp = to.tempFile();
  const tap = hashingTap();
  try {
    await pipeline(src.body, tap.stream, tmp.stream);
  } catch (err) {
    await rm(tmp.path, { force: true });
    throw err;
  }
  if (tap.sha256() !== sha256) {
    await rm(tmp.path, { force: true });
    return 'damaged';
  }
  await to.place(tmp.path, sha256);
  return tap.size();
}

export async function copyOriginals(ctx: CopyContext, problems: SourceProblems): Promise<OriginalsCount> {
  const originals = await referencedOriginals(ctx.source.database!.db);
  const bytes = originals.reduce((sum, o) => sum + o.size, 0);
  const from = (await ctx.source.storage()).files;
  const to = (await ctx.target.storage()).files;
  const redo = new Set(ctx.redo?.originals);
  const step = ctx.progress.step('originals', originals.length, 'files');
  let copied = 0;
  let copiedBytes = 0;
  await eachLimited(originals, FILES_AT_ONCE, async ({ sha256 }) => {
    if (redo.has(sha256)) await to.remove(sha256);
    else if (await to.stat(sha256)) return step.add(1);
    const got = await copyOriginal(from, to, sha256);
    if (got === 'missing') problems.missing.push(sha256);
    else if (got === 'damaged') problems.damaged.push(sha256);
    else {
      copied++;
      copiedBytes += got;
    }
    step.add(1, typeof got === 'number' ? got : 0);
  });
  step.end();
  return { files: originals.length, bytes, copied, copiedBytes };
}

/** A table being filled from its source's rows: what copyIndexTable needs of ChunkIndex and ChunkWindowIndex. */
interface RowsWriter {
  addBatches(batches: RecordBatch[]): Promise<void>;
  deleteDocuments(documentIds: string[]): Promise<void>;
  optimize(): Promise<void>;
}

/**
 * Copies one index table: documents whose rows are all in the target already are skipped, those with some (an
 * interrupted commit cannot leave those, but a changed source can), or named in `redo`, are removed and written
 * again, and the rest are streamed over `batchRows` rows per commit. Then the target's indexes are brought up to
 * date (full-text, scalar, and the vector index when the table is big enough for one).
 */
async function copyIndexTable(ctx: CopyContext, label: string, from: TableReader, to: RowsWriter, present: TableReader | null, redo: string[] = []): Promise<IndexCount> {
  const counts = await from.documentCounts();
  const already = present ? await present.documentCounts() : new Map<string, number>();
  const again = new Set(redo);
  const done = new Set<string>();
  const stale: string[] = [];
  for (const [id, n] of already) {
    if (n === counts.get(id) && !again.has(id)) done.add(id);
    else stale.push(id);
  }
  await to.deleteDocuments(stale);
  let rows = 0;
  let total = 0;
  for (const [id, n] of counts) {
    rows += n;
    if (!done.has(id)) total += n;
  }
  const step = ctx.progress.step(label, total);
  let pending: RecordBatch[] = [];
  let pendingRows = 0;
  let pendingBytes = 0;
  let copied = 0;
  let copiedBytes = 0;
  const flush = async () => {
    if (pendingRows === 0) return;
    await to.addBatches(pending);
    copied += pendingRows;
    copiedBytes += pendingBytes;
    step.add(pendingRows, pendingBytes);
    pending = [];
    pendingRows = 0;
    pendingBytes = 0;
  };
  for await (const batch of from.scan()) {
    const kept = done.size === 0 ? [batch] : filterRows(batch, 'document_id', (id) => !done.has(id));
    const keptRows = kept.reduce((n, b) => n + b.numRows, 0);
    if (keptRows === 0) continue;
    pending.push(...kept);
    pendingRows += keptRows;
    pendingBytes += Math.round((batchBytes(batch) * keptRows) / batch.numRows);
    if (pendingRows >= ctx.batchRows) await flush();
  }
  await flush();
  step.end();
  const indexing = ctx.progress.step(`${label} indexes`, undefined, 'rows');
  await to.optimize();
  indexing.end('up to date');
  return { rows, documents: counts.size, copied, copiedBytes };
}

export interface IndexCopy {
  embedderId: string | null;
  dimension: number | null;
  chunks: IndexCount | null;
  windows: IndexCount | null;
}

export async function copyIndex(ctx: CopyContext): Promise<IndexCopy> {
  const fromStore = (await ctx.source.storage()).vectors;
  const toStore = (await ctx.target.storage()).vectors;
  const from = await readStoredIndex(fromStore);
  const present = await readStoredIndex(toStore);
  const out: IndexCopy = { embedderId: from.info?.embedderId ?? null, dimension: from.info?.dimension ?? null, chunks: null, windows: null };
  if (from.info && from.chunks) {
    const embedder = { id: from.info.embedderId, dimension: from.info.dimension };
    const chunks = await ChunkIndex.open(toStore, { embedderId: embedder.id });
    try {
      out.chunks = await copyIndexTable(ctx, 'chunks', from.chunks, { addBatches: (b) => chunks.addBatches(b, embedder), deleteDocuments: (ids) => chunks.deleteDocuments(ids), optimize: () => chunks.optimize() }, present.chunks, ctx.redo?.documents);
      // No row copied makes no table: the source has one all the same (an empty one records its embedder too).
      await chunks.create(embedder);
      // The rows carry keyword_text as the source analysed it: the target's keyword search reads that column too
      // (not search_text until a background pass re-analyses rows that need nothing).
      if (from.info.keywordAnalysis !== undefined) await chunks.completeKeywordAnalysis(from.info.keywordAnalysis);
    } finally {
      await chunks.close();
    }
  }
  if (from.windows) {
    const windows = await ChunkWindowIndex.open(toStore, await from.windows.dimension());
    try {
      out.windows = await copyIndexTable(ctx, 'chunk windows', from.windows, windows, present.windows, ctx.redo?.windows);
    } finally {
      await windows.close();
    }
  }
  return out;
}

/**
 * The secrets key goes along, to where the target's daemon looks for it (server/secrets-key.ts): without it the
 * copy's second factors and source credentials would not open, and its daemon would not start. A key the operator
 * gives as an option (DOCSEARCH_SECRETS_KEY, DOCSEARCH_SECRETS_KEY_FILE) stays theirs to give the target's daemon.
 * Returns its id, or null when the source has none yet.
 */
export async function copySecretsKey(ctx: Pick<CopyContext, 'source' | 'target' | 'progress'>, env: NodeJS.ProcessEnv): Promise<string | null> {
  const found = await readSecretsKey({ secretsKey: env.DOCSEARCH_SECRETS_KEY || undefined, secretsKeyFile: env.DOCSEARCH_SECRETS_KEY_FILE || undefined }, await ctx.source.root());
  if (!found) return null;
  const id = new SecretSealer(found.key).keyId;
  if (found.from === 'option') {
    ctx.progress.line(`the secrets key (id ${id}) comes from DOCSEARCH_SECRETS_KEY(_FILE): give the target's daemon the same`);
    return id;
  }
  const target = await ctx.target.root();
  const there = await placeSecretsKey(target, found.key);
  if (there.equals(found.key)) ctx.progress.line(`secrets key (id ${id}): in place as ${SECRETS_KEY_FILE} in ${target.location}`);
  else ctx.progress.line(`warning: ${target.location} already holds another ${SECRETS_KEY_FILE} (id ${new SecretSealer(there).keyId}): replace it with the source's (id ${id}), or the target's second factors and source credentials will not open`);
  return id;
}
