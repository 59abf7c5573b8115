/**
 * A small LRU of query vectors. Queries repeat (people re-run and page through searches; clients
 * retry), and a query embedding is the one model pass on the search path. Keyed by embedder id and
 * the trimmed query text, so a model change never serves stale vectors. Map iteration order is
 * insertion order, which makes "delete and re-insert" an O(1) move-to-front.
 */
export class QueryVectorCache {
  private readonly map = new Map<string, Float32Array>();

  constructor(private readonly capacity = 512) {}

  get(embedderId: string, query: string): Float32Array | undefined {
    const key = `${embedderId}\0${query}`;
    const hit = this.map.get(key);
    if (hit) {
      this.map.delete(key);
      this.map.set(key, hit);
    }
    return hit;
  }

  set(embedderId: string, query: string, vector: Float32Array): void {
    const key = `${embedderId}\0${query}`;
    this.map.delete(key);
    this.map.set(key, vector);
    while (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value!);
  }

  get size(): number {
    return this.map.size;
  }
}
