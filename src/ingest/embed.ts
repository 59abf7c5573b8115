/**
 * Embed stage: one slice of chunks' `embedText` (contextual header + text) through the embedder, with each chunk's
 * answer units and their vectors from the same pass (unit-vectors.ts). The embedder forms its own micro-batches from
 * every document's waiting texts, so one call per slice is enough here.
 */
import type { Embedder } from '../models/embedder.js';
import { ModelError } from '../models/errors.js';
import type { Chunk } from './types.js';
import { type EmbeddedChunk, embedWithUnits } from './unit-vectors.js';

/** A slice that takes longer than this is abandoned (a hung model server must not hold a job forever). */
export const EMBED_SLICE_TIMEOUT_MS = 5 * 60_000;

export async function embedChunks(embedder: Pick<Embedder, 'embed' | 'embedUnits'>, chunks: Chunk[], timeoutMs = EMBED_SLICE_TIMEOUT_MS): Promise<EmbeddedChunk[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ModelError('ingest', `embedding ${chunks.length} chunks took longer than ${Math.round(timeoutMs / 1000)} s`, { transient: true })),
      timeoutMs,
    );
  });
  try {
    const out = await Promise.race([embedWithUnits(embedder, chunks, { kind: 'passage' }), timeout]);
    if (out.length !== chunks.length) throw new Error(`embedder returned ${out.length} vectors for ${chunks.length} texts`);
    return out;
  } finally {
    clearTimeout(timer);
  }
}
