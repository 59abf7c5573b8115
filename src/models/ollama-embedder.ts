/**
 * Embeddings from an Ollama server through the `ollama` client: `/api/embed` with a batched `input`
 * (one request per batch, not one per text), `truncate: true` so an over-long chunk is cut by the
 * server rather than failing the whole batch.
 */
import { Ollama } from 'ollama';
import type { ModelError } from './errors.js';
import { callOptions, callWithRetries, type RemoteCallOptions } from './remote-call.js';
import { RemoteEmbedder, type RemoteEmbedderTuning } from './remote-embedder.js';
import { classifyOllamaError, ollamaSaid } from './ollama-errors.js';

export interface OllamaEmbedderOptions extends RemoteEmbedderTuning {
  model: string;
  /** e.g. http://127.0.0.1:11434 */
  host: string;
}

export class OllamaEmbedder extends RemoteEmbedder {
  private readonly call: RemoteCallOptions;

  constructor(private readonly opts: OllamaEmbedderOptions) {
    super(`ollama:${opts.model}`, 'ollama', `Ollama at ${opts.host}`, opts, 32);
    this.call = callOptions(
      { service: 'Ollama', provider: 'ollama', location: opts.host },
      opts,
      { timeoutMs: 60_000, retries: 2, retryBaseDelayMs: 500 },
    );
  }

  protected request(texts: string[]): Promise<unknown[]> {
    return callWithRetries(
      this.call,
      async (fetchFn) => {
        const client = new Ollama({ host: this.opts.host, fetch: fetchFn });
        // Typed by the client, but it is whatever JSON the server sent: `{}`, or an `{error}` with HTTP 200.
        const res = (await client.embed({ model: this.opts.model, input: texts, truncate: true })) as unknown;
        const embeddings = (res as { embeddings?: unknown } | null)?.embeddings;
        if (!Array.isArray(embeddings)) throw this.malformed(`no \`embeddings\` list${ollamaSaid(res)}`);
        return embeddings;
      },
      (err): ModelError | undefined => classifyOllamaError(this.call, this.opts.model, err),
    );
  }
}
