/**
 * Which embedder built the vectors, and the table holding them: `chunks-index.json` next to the tables (in the data
 * dir, or on the object store where every replica reads it; written atomically).
 */
import { NewerLibraryError } from '../../core/newer-library.js';
import type { VectorStore } from './connection.js';

export interface IndexInfo {
  /** LanceDB table holding the current chunks. */
  table: string;
  embedderId: string;
  dimension: number;
  /**
   * The keyword analysis (src/language/analyse.ts ANALYSIS_VERSION) every row's `keyword_text` was written with, and
   * so the keyword index searches `keyword_text`; absent while some rows lack it (a library an older release wrote,
   * until the background analysis is through), and keyword search reads `search_text` meanwhile.
   */
  keywordAnalysis?: number;
}

const INFO_FILE = 'chunks-index.json';
/**
 * The layout of the chunk index this build writes and reads, recorded as `format` in the index info (absent, as
 * 0.1.0 wrote it: 1). A release that changes the tables so that older builds would misread them raises it, and an
 * older build refuses the library instead of writing to it. 2: the keyword index may be on `keyword_text` alone.
 */
export const INDEX_FORMAT = 2;
/** Shared mode: how often the index info is re-read, should an `index_changed` event have been missed. */
export const INFO_POLL_MS = 30_000;

/** The index info a library's store holds (null before its first chunk was written). */
export async function readIndexInfo(store: VectorStore): Promise<IndexInfo | null> {
  const bytes = await store.meta.get(INFO_FILE);
  if (!bytes) return null;
  const { format = 1, ...info } = JSON.parse(bytes.toString('utf8')) as IndexInfo & { format?: number };
  if (format > INDEX_FORMAT) throw new NewerLibraryError('chunk index format', format, INDEX_FORMAT);
  return info;
}

/** Records `info` where every replica reads it. */
export async function writeIndexInfo(store: VectorStore, info: IndexInfo): Promise<void> {
  await store.meta.put(INFO_FILE, JSON.stringify({ ...info, format: INDEX_FORMAT }));
}
