/**
 * The end of writing a bench library straight into its chunk index: the full-text and scalar indexes built on the
 * rows, then the vector index the daemon's own upkeep would build (ChunkIndex's defaults), and the store closed.
 */
import { ChunkIndex } from '../src/store/lancedb/chunks.js';
import type { VectorStore } from '../src/store/lancedb/connection.js';

export async function indexWrittenLibrary(store: VectorStore, chunks: ChunkIndex, embedderId: string, log: (line: string) => void): Promise<void> {
  log('  building the indexes (full-text, scalar, vector)');
  await chunks.optimize();
  await chunks.close();
  const vectorIndexed = await ChunkIndex.open(store, { embedderId });
  await vectorIndexed.optimize();
  await vectorIndexed.close();
  store.close();
}
