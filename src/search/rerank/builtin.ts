/**
 * The builtin reranker: no extra weights, a finer grain of the built-in model. Each chunk's sentence
 * windows were embedded at ingest (store/lancedb/chunk-windows.ts); at query time a candidate's score is
 * its first-stage (fused) score plus LAMBDA × the best cosine between the query and any of its windows.
 * A claim usually matches one sentence of a passage, which the whole-chunk vector dilutes. Query-time
 * cost: one window lookup and ~N×6 dot products of 384 floats — no model pass beyond the query's.
 *
 * LAMBDA was tuned on SciFact train only (`npm run bench:quality -- --tune`); see docs/search.md.
 */
import type { Embedder, ModelStatus } from '../../models/embedder.js';
import type { Reranker, RerankOptions } from '../../models/reranker.js';
import { dot } from '../../models/vector-math.js';
import type { StoredWindow } from '../../store/lancedb/chunk-windows.js';
import { sentenceWindows } from '../../ingest/sentence-windows.js';
import type { CandidateReranker, RerankCandidate, RerankOutcome } from './stage.js';

export const BUILTIN_RERANKER_ID = 'builtin';

export interface BuiltinRerankParams {
  /** Weight of the best window cosine against the [0, 1]-scaled first-stage score. */
  lambda: number;
}

export const DEFAULT_BUILTIN_PARAMS: BuiltinRerankParams = { lambda: 0.5 };

export interface WindowSource {
  windowsFor(projectIds: readonly string[], chunkIds: string[]): Promise<Map<string, StoredWindow[]>>;
}

/**
 * Pure scoring: first stage + λ·max window cosine. A candidate without stored windows (ingested before
 * windows existed) gets the mean of the others' best cosines, so it neither jumps nor sinks for that.
 */
export function builtinScores(
  queryVector: Float32Array,
  candidates: { firstStage: number; windows: StoredWindow[] | undefined }[],
  params: BuiltinRerankParams = DEFAULT_BUILTIN_PARAMS,
): { scores: number[]; windowScores: (number[] | undefined)[] } {
  const windowScores = candidates.map((c) => (c.windows?.length ? c.windows.map((w) => dot(queryVector, w.vector)) : undefined));
  const best = windowScores.map((ws) => (ws ? Math.max(...ws) : undefined));
  const known = best.filter((b): b is number => b !== undefined);
  const neutral = known.length ? known.reduce((a, b) => a + b, 0) / known.length : 0;
  const scores = candidates.map((c, i) => c.firstStage + params.lambda * (best[i] ?? neutral));
  return { scores, windowScores };
}

export class BuiltinReranker implements Reranker, CandidateReranker {
  readonly id = BUILTIN_RERANKER_ID;

  constructor(
    /** The built-in embedder: its vectors are what the windows were embedded with. */
    private readonly embedder: Embedder,
    private readonly windows: WindowSource,
    private readonly params: BuiltinRerankParams = DEFAULT_BUILTIN_PARAMS,
  ) {}

  init(): Promise<void> {
    return this.embedder.init();
  }

  async score(
    input: { projectIds: readonly string[]; query: string; queryVector: Float32Array | undefined; candidates: RerankCandidate[] },
    signal: AbortSignal,
  ): Promise<RerankOutcome> {
    const queryVector = input.queryVector ?? (await this.embedder.embed([input.query], { kind: 'query' }))[0]!;
    const stored = await this.windows.windowsFor(
      input.projectIds,
      input.candidates.map((c) => c.id),
    );
    signal.throwIfAborted();
    const { scores, windowScores } = builtinScores(
      queryVector,
      input.candidates.map((c) => ({ firstStage: c.firstStage, windows: stored.get(c.id) })),
      this.params,
    );
    const perChunk = new Map<string, { start: number; end: number; score: number }[]>();
    input.candidates.forEach((c, i) => {
      const ws = windowScores[i];
      const list = stored.get(c.id);
      if (ws && list) perChunk.set(c.id, list.map((w, j) => ({ start: w.start, end: w.end, score: ws[j]! })));
    });
    return { scores, windowScores: perChunk };
  }

  /**
   * The generic model-reranker contract (texts only, no stored windows): embeds each passage's sentence
   * windows now. Correct but a model pass per window — the search service uses `score` instead.
   */
  async rerank(query: string, passages: string[], opts?: RerankOptions): Promise<number[]> {
    const [q] = await this.embedder.embed([query], { kind: 'query' });
    const spans = passages.map((p) => sentenceWindows(p));
    const texts = passages.flatMap((p, i) => spans[i]!.map((w) => p.slice(w.start, w.end)));
    opts?.signal?.throwIfAborted();
    const vectors = await this.embedder.embed(texts, { kind: 'passage' });
    let k = 0;
    return builtinScores(
      q!,
      spans.map((s) => ({ firstStage: 0, windows: s.map((w) => ({ start: w.start, end: w.end, vector: vectors[k++]! })) })),
      this.params,
    ).scores;
  }

  status(): ModelStatus {
    const s = this.embedder.status();
    return { ...s, id: this.id };
  }

  async close(): Promise<void> {
    // The embedder is shared with the rest of the daemon, which closes it.
  }
}
