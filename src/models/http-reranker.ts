/**
 * A reranker behind the Cohere/Jina `/v1/rerank` wire format (also served by TEI, llama.cpp, vLLM):
 * POST {model?, query, documents, top_n} → {results: [{index, relevance_score}]}. `top_n` asks for every
 * document so each passage gets a score; any the server leaves out score -Infinity (last).
 */
import { CallHealth } from './call-health.js';
import type { ModelStatus } from './embedder.js';
import { ModelError } from './errors.js';
import { callOptions, callWithRetries, postJson, type RemoteCallOptions, type RemoteTuning } from './remote-call.js';
import type { RerankOptions, Reranker } from './reranker.js';

export interface HttpRerankerOptions extends RemoteTuning {
  /** The full endpoint (…/v1/rerank or …/rerank), or a base URL to which /v1/rerank is appended. */
  url: string;
  /** Sent as `model` when set (Cohere and Jina require it; TEI ignores it). */
  model?: string;
  apiKey?: string;
}

interface RerankResult {
  index?: unknown;
  relevance_score?: unknown;
}

interface RerankAnswer {
  results?: unknown;
}

/** The endpoint a reranker URL names: its path as given when it ends in /rerank, else the path + /v1/rerank; a query string kept. */
export function rerankUrl(url: string): string {
  const u = new URL(url);
  const path = u.pathname.replace(/\/+$/, '');
  u.pathname = /\/rerank$/.test(path) ? path : `${path}/v1/rerank`;
  return u.toString();
}

export class HttpReranker implements Reranker {
  readonly id: string;
  private readonly url: string;
  private readonly health = new CallHealth();

  constructor(private readonly opts: HttpRerankerOptions) {
    this.url = rerankUrl(opts.url);
    // The id shows in health and logs: leave out any query string (some services put keys there).
    const shown = new URL(this.url);
    this.id = `http:${shown.origin}${shown.pathname}${opts.model ? `#${opts.model}` : ''}`;
  }

  /** A one-document request, so a wrong URL or key shows in health at startup. */
  async init(): Promise<void> {
    await this.rerank('probe', ['probe']);
  }

  async rerank(query: string, passages: string[], opts: RerankOptions = {}): Promise<number[]> {
    if (passages.length === 0) return [];
    const call: RemoteCallOptions = callOptions(
      { service: 'Rerank endpoint', provider: 'http', location: this.url },
      this.opts,
      { timeoutMs: 30_000, retries: 1, retryBaseDelayMs: 300 },
      opts.signal,
    );
    const headers: Record<string, string> = this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {};
    const body = {
      ...(this.opts.model ? { model: this.opts.model } : {}),
      query,
      documents: passages,
      top_n: passages.length,
    };
    return this.health.track(
      () =>
        callWithRetries(call, async (fetchFn) => {
          const answer = (await postJson(fetchFn, this.url, body, headers)) as RerankAnswer | null;
          if (!Array.isArray(answer?.results)) throw this.malformed('no `results` array');
          const out = new Array<number>(passages.length).fill(Number.NEGATIVE_INFINITY);
          for (const r of answer.results as unknown[]) {
            const { index, relevance_score: score } = (r ?? {}) as RerankResult;
            if (typeof index !== 'number' || typeof score !== 'number' || !Number.isInteger(index) || !Number.isFinite(score) || index < 0 || index >= passages.length) {
              throw this.malformed('a result lacks a valid `index` or `relevance_score`');
            }
            out[index] = score;
          }
          return out;
        }),
      opts.signal,
    );
  }

  private malformed(why: string): ModelError {
    return new ModelError('http', `${this.url} returned a malformed rerank answer: ${why}`, { transient: false });
  }

  status(): ModelStatus {
    return this.health.status(this.id);
  }

  async close(): Promise<void> {}
}
