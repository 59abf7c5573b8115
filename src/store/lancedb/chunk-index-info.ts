/**
 * Which embedder built the vectors, and the table holding them: `chunks-index.json` next to the tables (in the data
 * dir, or on the object store where every replica reads it; written atomically).
 */
import type { VectorStore } from './connection.js';

export interface IndexInfo {
  /** LanceDB table holding the current chunks. */
  table: string;
  embedderId: string;
  dimension: number;
}

const INFO_FILE = 'chunks-index.json';
/** Shared mode: how often the index info is re-read, should an `index_changed` event have been missed. */
export const INFO_POLL_MS = 30_000;

/** The index info a library's store holds (null before its first chunk was written). */
export async function readIndexInfo(store: VectorStore): Promise<IndexInfo | null> {
  const bytes = await store.meta.get(INFO_FILE);
  return bytes ? (JSON.parse(bytes.toString('utf8')) as IndexInfo) : null;
}

/** Records `info` where every replica reads it. */
export async function writeIndexInfo(store: VectorStore, info: IndexInfo): Promise<void> {
  await store.meta.put(INFO_FILE, JSON.stringify(info));
}
