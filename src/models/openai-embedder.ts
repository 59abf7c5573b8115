/**
 * Embeddings from any OpenAI-compatible server (OpenAI, vLLM, TEI, LM Studio, llama.cpp):
 * POST <base>/v1/embeddings {model, input: string[]} → {data: [{index, embedding}]}. The key is
 * optional because local servers usually run without one.
 */
import { callOptions, callWithRetries, postJson, type RemoteCallOptions } from './remote-call.js';
import { RemoteEmbedder, type RemoteEmbedderTuning } from './remote-embedder.js';

export interface OpenAIEmbedderOptions extends RemoteEmbedderTuning {
  model: string;
  /** e.g. https://api.openai.com or http://127.0.0.1:8000 (a trailing /v1 is accepted). */
  baseUrl: string;
  apiKey?: string;
}

interface EmbeddingsItem {
  index?: unknown;
  embedding?: unknown;
}

interface EmbeddingsAnswer {
  data?: unknown;
}

/** `<base>/v1/embeddings`, whether or not the operator already wrote the /v1; a path prefix and a query string kept. */
export function embeddingsUrl(baseUrl: string): string {
  const u = new URL(baseUrl);
  const path = u.pathname.replace(/\/+$/, '');
  u.pathname = /\/v1$/.test(path) ? `${path}/embeddings` : `${path}/v1/embeddings`;
  u.hash = '';
  return u.toString();
}

export class OpenAIEmbedder extends RemoteEmbedder {
  private readonly call: RemoteCallOptions;
  private readonly url: string;

  constructor(private readonly opts: OpenAIEmbedderOptions) {
    const url = embeddingsUrl(opts.baseUrl);
    super(`openai:${opts.model}`, 'openai', `OpenAI-compatible embeddings endpoint at ${url}`, opts, 64);
    this.url = url;
    this.call = callOptions(
      { service: 'OpenAI-compatible embeddings endpoint', provider: 'openai', location: this.url },
      opts,
      { timeoutMs: 60_000, retries: 2, retryBaseDelayMs: 500 },
    );
  }

  protected request(texts: string[]): Promise<unknown[]> {
    const headers: Record<string, string> = this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {};
    return callWithRetries(this.call, async (fetchFn) => {
      const answer = (await postJson(fetchFn, this.url, { model: this.opts.model, input: texts }, headers)) as EmbeddingsAnswer | null;
      if (!Array.isArray(answer?.data)) throw this.malformed('no `data` array');
      const data: unknown[] = answer.data;
      // Filled, not sparse: `some` and `map` skip the holes a sparse array would keep for inputs no item named.
      const out = new Array<unknown>(texts.length).fill(undefined);
      data.forEach((item, pos) => {
        const { index: given, embedding } = (item ?? {}) as EmbeddingsItem;
        // `index` is optional in some servers' answers; fall back to the position.
        const index = typeof given === 'number' ? given : pos;
        if (!Array.isArray(embedding) || !Number.isInteger(index) || index < 0 || index >= texts.length) throw this.malformed(`bad item ${pos}`);
        out[index] = embedding;
      });
      if (data.length !== texts.length) throw this.malformed(`${data.length} embeddings for ${texts.length} inputs`);
      const missing = out.indexOf(undefined);
      if (missing >= 0) throw this.malformed(`no embedding for input ${missing} (an \`index\` repeats)`);
      return out;
    });
  }
}
