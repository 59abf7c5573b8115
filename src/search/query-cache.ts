import { LRUCache } from 'lru-cache';

/**
 * A small LRU of query vectors. Queries repeat (people re-run and page through searches; clients
 * retry), and a query embedding is the one model pass on the search path. Keyed by embedder id, so a
 * model change never serves stale vectors, and by who asks: a vector one person's query left is never
 * another's hit, which would answer faster and skip the model pass `/metrics` counts, telling them
 * that someone searched those words.
 */
export class QueryVectorCache {
  private readonly lru: LRUCache<string, Float32Array>;

  constructor(capacity = 512) {
    this.lru = new LRUCache({ max: capacity });
  }

  get(embedderId: string, asker: string, query: string): Float32Array | undefined {
    return this.lru.get(`${embedderId}\0${asker}\0${query}`);
  }

  set(embedderId: string, asker: string, query: string, vector: Float32Array): void {
    this.lru.set(`${embedderId}\0${asker}\0${query}`, vector);
  }

  get size(): number {
    return this.lru.size;
  }
}
