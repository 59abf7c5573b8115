/**
 * Embeddings from any OpenAI-compatible server (OpenAI, vLLM, TEI, LM Studio, llama.cpp):
 * POST <base>/v1/embeddings {model, input: string[]} → {data: [{index, embedding}]}. The key is
 * optional because local servers usually run without one.
 */
import { ModelError } from './errors.js';
import { callOptions, callWithRetries, postJson, type RemoteCallOptions } from './remote-call.js';
import { RemoteEmbedder, type RemoteEmbedderTuning } from './remote-embedder.js';

export interface OpenAIEmbedderOptions extends RemoteEmbedderTuning {
  model: string;
  /** e.g. https://api.openai.com or http://127.0.0.1:8000 (a trailing /v1 is accepted). */
  baseUrl: string;
  apiKey?: string;
}

interface EmbeddingsAnswer {
  data?: { index?: unknown; embedding?: unknown }[];
}

/** `<base>/v1/embeddings`, whether or not the operator already wrote the /v1. */
export function embeddingsUrl(baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  return /\/v1$/.test(base) ? `${base}/embeddings` : `${base}/v1/embeddings`;
}

export class OpenAIEmbedder extends RemoteEmbedder {
  private readonly call: RemoteCallOptions;
  private readonly url: string;

  constructor(private readonly opts: OpenAIEmbedderOptions) {
    super(`openai:${opts.model}`, 'openai', opts, 64);
    this.url = embeddingsUrl(opts.baseUrl);
    this.call = callOptions(
      { service: 'OpenAI-compatible embeddings endpoint', provider: 'openai', location: this.url },
      opts,
      { timeoutMs: 60_000, retries: 2, retryBaseDelayMs: 500 },
    );
  }

  protected request(texts: string[]): Promise<number[][]> {
    const headers: Record<string, string> = this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {};
    return callWithRetries(this.call, async (fetchFn) => {
      const answer = (await postJson(fetchFn, this.url, { model: this.opts.model, input: texts }, headers)) as EmbeddingsAnswer;
      if (!Array.isArray(answer.data)) throw this.malformed('no `data` array');
      // Filled, not sparse: `some` and `map` skip the holes a sparse array would keep for inputs no item named.
      const out = new Array<number[] | undefined>(texts.length).fill(undefined);
      answer.data.forEach((item, pos) => {
        // `index` is optional in some servers' answers; fall back to the position.
        const index = typeof item.index === 'number' ? item.index : pos;
        if (!Array.isArray(item.embedding) || index < 0 || index >= texts.length) throw this.malformed(`bad item ${pos}`);
        out[index] = item.embedding as number[];
      });
      if (answer.data.length !== texts.length) throw this.malformed(`${answer.data.length} embeddings for ${texts.length} inputs`);
      const missing = out.indexOf(undefined);
      if (missing >= 0) throw this.malformed(`no embedding for input ${missing} (an \`index\` repeats)`);
      return out as number[][];
    });
  }

  private malformed(why: string): ModelError {
    return new ModelError('openai', `${this.url} returned a malformed embeddings answer: ${why}`, { transient: false });
  }
}
