/**
 * Write stage: a document's chunks into the chunks table. Idempotent per document: whatever an earlier
 * (crashed or retried) attempt left is deleted first, and chunk ids are deterministic (`<doc>:<index>`),
 * so a document never ends up with duplicate chunks.
 */
import type { ChunkIndex, ChunkRow } from '../store/lancedb/chunks.js';
import type { Chunk } from './types.js';

/** Rows per LanceDB add(): one fragment per call, so fewer calls mean less compaction later. */
const WRITE_BATCH = 2000;

export interface WriteTarget {
  documentId: string;
  userId: string;
  projectId: string;
}

export const chunkId = (documentId: string, index: number): string => `${documentId}:${index}`;

export function toRows(target: WriteTarget, chunks: Chunk[], vectors: Float32Array[]): ChunkRow[] {
  return chunks.map((c, i) => ({
    id: chunkId(target.documentId, c.index),
    user_id: target.userId,
    project_id: target.projectId,
    document_id: target.documentId,
    chunk_index: c.index,
    text: c.text,
    search_text: c.embedText,
    heading: c.headings.length > 0 ? c.headings.join(' > ') : null,
    page_start: c.pageStart ?? null,
    page_end: c.pageEnd ?? null,
    ocr: c.ocr === true,
    vector: vectors[i]!,
  }));
}

export async function writeChunks(
  index: ChunkIndex,
  embedder: { id: string; dimension: number },
  target: WriteTarget,
  chunks: Chunk[],
  vectors: Float32Array[],
): Promise<void> {
  await index.deleteDocument(target.documentId);
  const rows = toRows(target, chunks, vectors);
  for (let i = 0; i < rows.length; i += WRITE_BATCH) await index.add(rows.slice(i, i + WRITE_BATCH), embedder);
  if (rows.length > 0) index.optimizeSoon();
}
