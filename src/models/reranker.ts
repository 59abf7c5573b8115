import type { ModelStatus } from './embedder.js';

/** Second-stage scorer: re-orders first-stage candidates for a query. */
export interface Reranker {
  readonly id: string;
  init(): Promise<void>;
  /** One score per passage, in input order; higher = more relevant. Scales differ by provider. */
  rerank(query: string, passages: string[], opts?: RerankOptions): Promise<number[]>;
  status(): ModelStatus;
  close(): Promise<void>;
}

export interface RerankOptions {
  signal?: AbortSignal;
}
