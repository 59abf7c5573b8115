/**
 * Embed stage: the chunks' `embedText` (contextual header + text) through the embedder in batches, reporting
 * after each batch so the worker can move progress and renew its lease.
 */
import type { Embedder } from '../models/embedder.js';
import { ModelError } from '../models/errors.js';
import type { Chunk } from './types.js';

/** Texts per embed() call: large enough to keep the model busy, small enough for frequent progress. */
export const EMBED_BATCH = 32;

/** A batch that takes longer than this is abandoned (a hung model server must not hold a job forever). */
export const EMBED_BATCH_TIMEOUT_MS = 5 * 60_000;

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ModelError('ingest', `embedding a batch took longer than ${Math.round(ms / 1000)} s`, { transient: true })), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function embedChunks(
  embedder: Pick<Embedder, 'embed'>,
  chunks: Chunk[],
  onBatch: (done: number, total: number) => Promise<void>,
  batchSize = EMBED_BATCH,
  batchTimeoutMs = EMBED_BATCH_TIMEOUT_MS,
): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for (let i = 0; i < chunks.length; i += batchSize) {
    const batch = chunks.slice(i, i + batchSize);
    const out = await withTimeout(
      embedder.embed(
        batch.map((c) => c.embedText),
        { kind: 'passage' },
      ),
      batchTimeoutMs,
    );
    if (out.length !== batch.length) throw new Error(`embedder returned ${out.length} vectors for ${batch.length} texts`);
    vectors.push(...out);
    await onBatch(vectors.length, chunks.length);
  }
  return vectors;
}
