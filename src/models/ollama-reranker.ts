/**
 * Reranking with an Ollama chat/generate model. Ollama has no rerank endpoint, so each passage is
 * judged by the model through /api/generate:
 *
 * 1. Ask for a one-token yes/no answer with `logprobs` and read P(yes) / (P(yes) + P(no)) from the first
 *    token's top log-probabilities — a smooth score, not a coin flip. (Ollama ≥ 0.12.11 returns them.)
 * 2. A server that returns no log-probabilities is asked instead for a JSON `{"score": 0-10}` constrained
 *    by `format` (a JSON schema), scaled to 0-1. The answer is remembered, so later calls skip step 1.
 *
 * Temperature 0 for repeatable scores; a few passages at a time to bound load on the Ollama server.
 */
import { Ollama, type GenerateResponse, type Logprob } from 'ollama';
import { CallHealth } from './call-health.js';
import type { ModelStatus } from './embedder.js';
import { ModelError } from './errors.js';
import { classifyOllamaError, ollamaSaid } from './ollama-errors.js';
import { callOptions, callWithRetries, type RemoteCallOptions, type RemoteTuning } from './remote-call.js';
import type { RerankOptions, Reranker } from './reranker.js';
import { cutUnits } from '../core/code-points.js';

export interface OllamaRerankerOptions extends RemoteTuning {
  model: string;
  host: string;
  /** Passages judged in parallel. */
  concurrency?: number;
  /** Characters of each passage shown to the model. */
  maxPassageChars?: number;
}

const SCORE_SCHEMA = {
  type: 'object',
  properties: { score: { type: 'integer', minimum: 0, maximum: 10 } },
  required: ['score'],
};

export class OllamaReranker implements Reranker {
  readonly id: string;
  private logprobs: boolean | undefined;
  private readonly health = new CallHealth();

  constructor(private readonly opts: OllamaRerankerOptions) {
    this.id = `ollama:${opts.model}`;
  }

  async init(): Promise<void> {
    await this.rerank('probe', ['probe']);
  }

  async rerank(query: string, passages: string[], opts: RerankOptions = {}): Promise<number[]> {
    // The first failure fails the call: its siblings in flight are aborted and no further passage is sent, as when the
    // caller aborts (a failing server gets no more load, and nothing runs on for an answer that is thrown away).
    const failed = new AbortController();
    const signal = opts.signal ? AbortSignal.any([opts.signal, failed.signal]) : failed.signal;
    const call: RemoteCallOptions = callOptions(
      { service: 'Ollama', provider: 'ollama', location: this.opts.host },
      this.opts,
      { timeoutMs: 60_000, retries: 1, retryBaseDelayMs: 300 },
      signal,
    );
    const scores = new Array<number>(passages.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      try {
        while (next < passages.length && !signal.aborted) {
          const i = next++;
          scores[i] = await this.score(call, query, passages[i]!);
        }
      } catch (err) {
        failed.abort(err);
        throw err;
      }
    };
    const lanes = Math.min(this.opts.concurrency ?? 4, passages.length);
    return this.health.track(async () => {
      await Promise.all(Array.from({ length: lanes }, worker));
      // A caller's abort between two requests ends the workers without an error: the scores are incomplete.
      signal.throwIfAborted();
      return scores;
    }, opts.signal);
  }

  private async score(call: RemoteCallOptions, query: string, passage: string): Promise<number> {
    const doc = passage.slice(0, this.opts.maxPassageChars ?? 4000);
    if (this.logprobs !== false) {
      const res = await this.generate(call, {
        prompt:
          `Query: ${query}\n\nDocument: ${doc}\n\n` +
          'Does the document answer or directly relate to the query? Answer with one word: yes or no.',
        logprobs: true,
        top_logprobs: 10,
        options: { temperature: 0, num_predict: 1 },
      });
      const first = res.logprobs?.[0];
      if (first) {
        this.logprobs = true;
        return yesProbability(first);
      }
      this.logprobs = false;
    }
    const res = await this.generate(call, {
      prompt:
        `Query: ${query}\n\nDocument: ${doc}\n\n` +
        'Rate how relevant the document is to the query from 0 (unrelated) to 10 (answers it exactly). ' +
        'Reply as JSON: {"score": <integer>}.',
      format: SCORE_SCHEMA,
      options: { temperature: 0, num_predict: 16 },
    });
    return parseScore(res.response, this.opts.model);
  }

  private generate(
    call: RemoteCallOptions,
    req: { prompt: string; logprobs?: boolean; top_logprobs?: number; format?: object; options: Record<string, number> },
  ): Promise<GenerateResponse & { response: string }> {
    return callWithRetries(
      call,
      async (fetchFn) => {
        // Typed by the client, but it is whatever JSON the server sent: `{}`, or an `{error}` with HTTP 200.
        const res = (await new Ollama({ host: this.opts.host, fetch: fetchFn }).generate({ model: this.opts.model, stream: false, ...req })) as unknown;
        if (typeof (res as { response?: unknown } | null)?.response !== 'string') {
          throw new ModelError('ollama', `Ollama at ${this.opts.host} sent a malformed /api/generate answer: no \`response\` text${ollamaSaid(res)}`, {
            transient: false,
          });
        }
        return res as GenerateResponse & { response: string };
      },
      (err) => classifyOllamaError(call, this.opts.model, err),
    );
  }

  status(): ModelStatus {
    return this.health.status(this.id);
  }

  async close(): Promise<void> {}
}

/** P(yes) among the yes/no candidates of the first generated token; 0.5 when neither appears. */
export function yesProbability(first: Logprob): number {
  // The top alternatives include the sampled token itself; without them only the sampled one is known.
  const candidates = first.top_logprobs?.length ? first.top_logprobs : [first];
  let yes = 0;
  let no = 0;
  for (const c of candidates) {
    if (typeof c?.token !== 'string' || typeof c.logprob !== 'number') continue;
    const word = c.token.trim().toLowerCase();
    if (word === 'yes') yes += Math.exp(c.logprob);
    else if (word === 'no') no += Math.exp(c.logprob);
  }
  return yes + no > 0 ? yes / (yes + no) : 0.5;
}

function parseScore(text: string, model: string): number {
  let score: unknown;
  try {
    score = (JSON.parse(text) as { score?: unknown }).score;
  } catch {
    score = Number(/\d+/.exec(text)?.[0]);
  }
  if (typeof score !== 'number' || !Number.isFinite(score)) {
    throw new ModelError('ollama', `model ${model} gave no relevance score (answer: ${JSON.stringify(cutUnits(text, 80))})`, {
      transient: false,
    });
  }
  return Math.min(10, Math.max(0, score)) / 10;
}
