/**
 * An operator-supplied cross-encoder: a folder with `model.onnx` and `tokenizer.json` (e.g. an export of
 * cross-encoder/ms-marco-MiniLM-L-6-v2), run with onnxruntime in a worker thread like the built-in model.
 *
 * The model gets (query, passage) pairs the way the tokenizer's pair template builds them, with
 * `input_ids`, `attention_mask` and, when the graph declares it, `token_type_ids`. The first output is
 * the relevance logit: [batch, 1] is used as is; [batch, 2] (not-relevant / relevant) scores
 * logit₁ − logit₀. Pairs longer than the model's limit lose the end of the passage.
 */
import { access, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { BatchQueue } from './batch-queue.js';
import { boundWordPiece } from './builtin/wordpiece-longest-match.js';
import type { ModelStatus } from './embedder.js';
import { ModelError } from './errors.js';
import { OnnxSession, type TensorData } from './onnx/session.js';
import type { RerankOptions, Reranker } from './reranker.js';

export interface OnnxRerankerOptions {
  /** Folder with model.onnx and tokenizer.json (tokenizer_config.json optional). */
  dir: string;
  /** Pairs per forward pass. */
  batchSize?: number;
  /** Token limit per pair; default: tokenizer.json's truncation.max_length, else 512. */
  maxTokens?: number;
  intraOpThreads?: number;
}

interface Loaded {
  session: OnnxSession;
  tokenizer: Tokenizer;
  maxTokens: number;
  typeIds: boolean;
}

const PROVIDER = 'onnx';

export class OnnxReranker implements Reranker {
  readonly id: string;
  private loaded: Loaded | undefined;
  private loading: Promise<Loaded> | undefined;
  private lastError: string | undefined;
  private readonly queue = new BatchQueue(PROVIDER, 10_000);

  constructor(private readonly opts: OnnxRerankerOptions) {
    this.id = `onnx:${opts.dir}`;
  }

  async init(): Promise<void> {
    await this.load();
  }

  private load(): Promise<Loaded> {
    // A session whose worker died is not reused: the next call opens a fresh one, as the built-in model's are.
    if (this.loaded?.session.error) {
      void this.loaded.session.close();
      this.loaded = undefined;
      this.loading = undefined;
    }
    this.loading ??= this.open().catch((err: unknown) => {
      this.loading = undefined;
      this.lastError = err instanceof Error ? err.message : String(err);
      throw new ModelError(PROVIDER, `cross-encoder in ${this.opts.dir} failed to load: ${this.lastError}`, {
        transient: false,
        cause: err,
      });
    });
    return this.loading;
  }

  private async open(): Promise<Loaded> {
    const modelPath = join(this.opts.dir, 'model.onnx');
    const tokenizerPath = join(this.opts.dir, 'tokenizer.json');
    for (const f of [modelPath, tokenizerPath]) {
      await access(f).catch(() => {
        throw new Error(`${f} not found (the folder needs model.onnx and tokenizer.json)`);
      });
    }
    const json = JSON.parse(await readFile(tokenizerPath, 'utf8')) as { truncation?: { max_length?: number } | null };
    const config = await readFile(join(this.opts.dir, 'tokenizer_config.json'), 'utf8').then(
      (t) => JSON.parse(t) as object,
      () => ({}),
    );
    // Below searches' query embeddings (their own session, at normal priority): a query never waits for the cores.
    const session = await OnnxSession.open(modelPath, { intraOpThreads: this.opts.intraOpThreads ?? availableParallelism(), background: true });
    for (const name of ['input_ids', 'attention_mask']) {
      if (!session.inputNames.includes(name)) {
        await session.close();
        throw new Error(`model.onnx has no input "${name}" (inputs: ${session.inputNames.join(', ')})`);
      }
    }
    const tokenizer = new Tokenizer(json, config);
    boundWordPiece(tokenizer); // a long word (base64, minified code) in a passage costs its length, not its cube
    this.loaded = {
      session,
      tokenizer,
      maxTokens: this.opts.maxTokens ?? json.truncation?.max_length ?? 512,
      typeIds: session.inputNames.includes('token_type_ids'),
    };
    this.lastError = undefined;
    return this.loaded;
  }

  async rerank(query: string, passages: string[], opts: RerankOptions = {}): Promise<number[]> {
    if (passages.length === 0) return [];
    const model = await this.load();
    const batchSize = this.opts.batchSize ?? 16;
    const scores = new Array<number>(passages.length);
    const batches: Promise<void>[] = [];
    for (let start = 0; start < passages.length; start += batchSize) {
      const slice = passages.slice(start, start + batchSize);
      batches.push(
        this.queue.push('high', slice.length, async () => {
          opts.signal?.throwIfAborted();
          const out = await this.score(model, query, slice);
          out.forEach((s, k) => (scores[start + k] = s));
        }),
      );
    }
    await Promise.all(batches);
    return scores;
  }

  private async score(model: Loaded, query: string, passages: string[]): Promise<number[]> {
    const pairs = passages.map((p) => this.encodePair(model, query, p));
    const seq = Math.max(...pairs.map((p) => p.ids.length));
    const n = pairs.length;
    const ids = new BigInt64Array(n * seq);
    const mask = new BigInt64Array(n * seq);
    const types = new BigInt64Array(n * seq);
    pairs.forEach((p, row) => {
      p.ids.forEach((id, t) => {
        ids[row * seq + t] = BigInt(id);
        mask[row * seq + t] = 1n;
        types[row * seq + t] = BigInt(p.types[t] ?? 0);
      });
    });
    const dims = [n, seq];
    const feeds: Record<string, TensorData> = {
      input_ids: { type: 'int64', data: ids, dims },
      attention_mask: { type: 'int64', data: mask, dims },
    };
    if (model.typeIds) feeds.token_type_ids = { type: 'int64', data: types, dims };
    let logits: TensorData;
    try {
      const outName = model.session.outputNames[0]!;
      logits = (await model.session.run(feeds, [outName]))[outName]!;
    } catch (err) {
      throw new ModelError(PROVIDER, `cross-encoder inference failed: ${err instanceof Error ? err.message : String(err)}`, {
        transient: false,
        cause: err,
      });
    }
    const data = logits.data as Float32Array;
    const width = data.length / n;
    if (!Number.isInteger(width) || width < 1 || width > 2) {
      throw new ModelError(PROVIDER, `cross-encoder output has shape [${logits.dims.join(', ')}]; expected [batch, 1] or [batch, 2]`, {
        transient: false,
      });
    }
    return Array.from({ length: n }, (_, row) => (width === 1 ? data[row]! : data[row * 2 + 1]! - data[row * 2]!));
  }

  /** The tokenizer's own pair template; an over-long passage is cut (by characters) until the pair fits. */
  private encodePair(model: Loaded, query: string, passage: string): { ids: number[]; types: number[] } {
    let text = passage;
    for (;;) {
      const enc = model.tokenizer.encode(query, { text_pair: text, return_token_type_ids: true });
      if (enc.ids.length <= model.maxTokens || text.length === 0) {
        return { ids: enc.ids.slice(0, model.maxTokens), types: enc.token_type_ids.slice(0, model.maxTokens) };
      }
      text = text.slice(0, Math.floor((text.length * model.maxTokens) / enc.ids.length * 0.95));
    }
  }

  status(): ModelStatus {
    const crashed = this.loaded?.session.error;
    const s: ModelStatus = { loaded: this.loaded !== undefined && !crashed, id: this.id, dimension: 0 };
    const error = this.lastError ?? crashed?.message;
    if (error) s.error = error;
    return s;
  }

  async close(): Promise<void> {
    const loaded = await this.loading?.catch(() => undefined);
    await loaded?.session.close();
    this.loaded = undefined;
  }
}
