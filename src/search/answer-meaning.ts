/**
 * Meaning scores for answer units (answer.ts): the cosine between the query and each unit of the shown results,
 * embedded by the retrieval embedder at search time (no index holds sentence vectors unless the builtin reranker
 * runs). Only the page's passages are embedded, in one call that jumps ahead of queued ingest batches; vectors are
 * kept in an LRU by text, so paging back, re-running a search or another query hitting the same chunks costs no
 * model pass. A deadline bounds the wait: past it (or when the model fails) the answer is chosen by the query's terms
 * alone, and the embedding still finishes into the cache. Cost per result: docs/BENCHMARKS.md#answer-snippets.
 */
import { LRUCache } from 'lru-cache';
import type { Embedder } from '../models/embedder.js';
import { dot } from '../models/vector-math.js';
import { withDeadline } from './rerank/stage.js';

export const ANSWER_MEANING_DEADLINE_MS = 2000;

export class AnswerMeaning {
  private readonly vectors: LRUCache<string, Float32Array>;

  constructor(
    private readonly deps: {
      embedder: Pick<Embedder, 'id' | 'embed'>;
      /** The query's vector (the retriever's, cached). */
      queryVector: (query: string) => Promise<Float32Array>;
      log?: { warn(obj: object, msg: string): void };
    },
    private readonly opts: { deadlineMs?: number; capacity?: number } = {},
  ) {
    this.vectors = new LRUCache({ max: opts.capacity ?? 20_000 });
  }

  /** For each passage, one cosine per unit text (in order); undefined for all when the model did not answer in time. */
  async scores(query: string, units: readonly (readonly string[])[]): Promise<number[][] | undefined> {
    const key = (text: string) => `${this.deps.embedder.id}\0${text}`;
    const missing = [...new Set(units.flat().filter((t) => !this.vectors.has(key(t))))];
    try {
      const [q] = await withDeadline(this.opts.deadlineMs ?? ANSWER_MEANING_DEADLINE_MS, async () => {
        const embedded = missing.length ? this.deps.embedder.embed(missing, { kind: 'passage', foreground: true }) : Promise.resolve([]);
        const [queryVector, vectors] = await Promise.all([this.deps.queryVector(query), embedded]);
        missing.forEach((t, i) => this.vectors.set(key(t), vectors[i]!));
        return [queryVector] as const;
      });
      return units.map((list) => list.map((t) => dot(q, this.vectors.get(key(t)) ?? q.map(() => 0))));
    } catch (err) {
      this.deps.log?.warn({ err }, 'answer sentences chosen by terms alone: the model did not score them in time');
      return undefined;
    }
  }
}
