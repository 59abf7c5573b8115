/**
 * Chunk rows with synthetic vectors, for tests of the chunk store on object storage: they test the store, not a
 * model. Each row's text has a unique `item<i>` word and its vector is a fixed function of `i`.
 */
import type { ChunkRow } from '../../src/store/lancedb/chunk-schema.js';
import type { ChunkIndex } from '../../src/store/lancedb/chunks.js';

export const DIM = 16;
export const EMBEDDER = { id: 'builtin:all-MiniLM-L6-v2', dimension: DIM };
const WORDS = ['penguin', 'glacier', 'krill', 'colony', 'ocean', 'nest', 'ice', 'storm', 'winter', 'chick', 'feather', 'dive'];

export function vector(seed: number): Float32Array {
  const v = Float32Array.from({ length: DIM }, (_, i) => Math.sin(seed * 12.9898 + i * 78.233));
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

/** `count` rows of document `doc` for user u1, items `from`… */
export function rows(doc: string, count: number, from = 0): ChunkRow[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    const text = `${doc} ${Array.from({ length: 40 }, (_, w) => WORDS[(i * 7 + w * 3) % WORDS.length]).join(' ')} item${i}`;
    return { id: `${doc}:${i}`, user_id: 'u1', project_id: 'p', document_id: doc, chunk_index: i, text, search_text: text, heading: null, page_start: null, page_end: null, vector: vector(i) };
  });
}

/** A hybrid search's three reads, as the daemon makes them. */
export async function search(index: ChunkIndex, seed: number) {
  const vec = await index.vectorSearch({ projectIds: ['p'], vector: vector(seed), limit: 20 });
  const kw = await index.keywordSearch({ projectIds: ['p'], query: `krill item${seed}`, limit: 50 });
  const shown = await index.getMany(['p'], [...vec.slice(0, 10), ...kw.slice(0, 10)]);
  return { vec: vec.map((h) => [h.id, h._distance]), kw: kw.map((h) => [h.id, h._score]), shown: shown.map((c) => [c.id, c.text]) };
}
