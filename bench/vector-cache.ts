/**
 * Content-addressed cache of embedded texts for the benches: sha1(model id + built-in graph revision + kind + text)
 * → vector, in an append-only binary file under bench/.cache/. Keyed by content, so a chunker change re-embeds only
 * the texts that changed and a rerun embeds nothing; a new graph (GRAPH_REVISION) computes other vectors under the
 * same model id, so it keys them too.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { GRAPH_REVISION } from '../src/models/builtin/graph-cache.js';
import type { EmbedKind, Embedder } from '../src/models/embedder.js';

const KEY_BYTES = 20;

export class VectorCache {
  private readonly map = new Map<string, Float32Array>();

  private constructor(
    private readonly file: string,
    private readonly modelId: string,
    private readonly dim: number,
  ) {}

  static open(file: string, modelId: string, dim: number): VectorCache {
    const cache = new VectorCache(file, modelId, dim);
    mkdirSync(dirname(file), { recursive: true });
    if (existsSync(file)) {
      const buf = readFileSync(file);
      const rec = KEY_BYTES + dim * 4;
      const whole = buf.length - (buf.length % rec); // a torn last record (killed mid-append) is ignored
      for (let off = 0; off < whole; off += rec) {
        const key = buf.subarray(off, off + KEY_BYTES).toString('hex');
        const vec = new Float32Array(dim);
        Buffer.from(vec.buffer).set(buf.subarray(off + KEY_BYTES, off + rec));
        cache.map.set(key, vec);
      }
    }
    return cache;
  }

  get size(): number {
    return this.map.size;
  }

  private key(kind: EmbedKind, text: string): string {
    return createHash('sha1').update(`${this.modelId}\0g${GRAPH_REVISION}\0${kind}\0${text}`).digest('hex');
  }

  get(kind: EmbedKind, text: string): Float32Array | undefined {
    return this.map.get(this.key(kind, text));
  }

  /**
   * Vectors for `texts`, embedding (in slices of `step`, appended to the file as they finish) only the
   * ones not cached yet. `progress` is told how many are done.
   */
  async embed(
    embedder: Embedder,
    texts: string[],
    kind: EmbedKind,
    progress?: (done: number, total: number) => void,
    step = 256,
  ): Promise<Float32Array[]> {
    const keys = texts.map((t) => this.key(kind, t));
    const missing = [...new Set(keys.map((k, i) => (this.map.has(k) ? -1 : i)).filter((i) => i >= 0).map((i) => keys[i]!))];
    const firstIndex = new Map<string, number>();
    keys.forEach((k, i) => firstIndex.has(k) || firstIndex.set(k, i));
    for (let s = 0; s < missing.length; s += step) {
      const slice = missing.slice(s, s + step);
      const vecs = await embedder.embed(
        slice.map((k) => texts[firstIndex.get(k)!]!),
        { kind },
      );
      const out = Buffer.alloc(slice.length * (KEY_BYTES + this.dim * 4));
      slice.forEach((k, j) => {
        const off = j * (KEY_BYTES + this.dim * 4);
        Buffer.from(k, 'hex').copy(out, off);
        Buffer.from(vecs[j]!.buffer, vecs[j]!.byteOffset, this.dim * 4).copy(out, off + KEY_BYTES);
        this.map.set(k, vecs[j]!);
      });
      appendFileSync(this.file, out);
      progress?.(Math.min(s + step, missing.length), missing.length);
    }
    return keys.map((k) => this.map.get(k)!);
  }
}
