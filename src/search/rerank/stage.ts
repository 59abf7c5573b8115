/**
 * The second stage behind one interface: a `CandidateReranker` re-scores the fused top-N candidates.
 * The builtin reranker implements it directly (it needs chunk ids to find its stored window vectors);
 * any model `Reranker` (http, ollama, onnx) is adapted by `fromModelReranker`, which scores texts.
 */
import type { Reranker } from '../../models/reranker.js';

export interface RerankCandidate {
  id: string;
  text: string;
  /** First-stage (fused) score scaled to [0, 1] by the best candidate's. */
  firstStage: number;
}

export interface RerankOutcome {
  /** One score per candidate, input order, higher is better. */
  scores: number[];
  /** Per-candidate window scores for highlighting (builtin only), keyed by chunk id. */
  windowScores?: Map<string, { start: number; end: number; score: number }[]>;
}

export interface CandidateReranker {
  readonly id: string;
  score(
    input: { projectIds: readonly string[]; query: string; queryVector: Float32Array | undefined; candidates: RerankCandidate[] },
    signal: AbortSignal,
  ): Promise<RerankOutcome>;
}

export function fromModelReranker(model: Reranker): CandidateReranker {
  return {
    id: model.id,
    async score({ query, candidates }, signal) {
      const scores = await model.rerank(
        query,
        candidates.map((c) => c.text),
        { signal },
      );
      if (scores.length !== candidates.length) throw new Error(`reranker returned ${scores.length} scores for ${candidates.length} passages`);
      return { scores };
    },
  };
}

/** Runs `work` with a deadline; the signal aborts when the deadline passes so the provider can stop. */
export async function withDeadline<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`timed out after ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([work(controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
