/**
 * OnnxReranker with a tiny cross-encoder the test builds itself (onnx-proto via GraphBuilder) plus a
 * BERT-style tokenizer.json: the "model" scores a pair as the sum of per-token weights over the passage
 * segment (token_type_ids = 1), so the expected ranking is known exactly.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ModelError } from '../../src/models/errors.js';
import { GraphBuilder } from '../../src/models/onnx/graph-builder.js';
import { OnnxReranker } from '../../src/models/onnx-reranker.js';

const VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', 'relevant', 'noise', 'the', 'query', 'doc', 'very'];
const WEIGHT: Record<string, number> = { relevant: 2, very: 1, noise: -1 };

function tinyCrossEncoder(): Uint8Array {
  const g = new GraphBuilder('tiny-cross-encoder');
  const ids = g.input('input_ids', 'int64', ['batch', 'seq']);
  const mask = g.input('attention_mask', 'int64', ['batch', 'seq']);
  const types = g.input('token_type_ids', 'int64', ['batch', 'seq']);
  const table = g.floats('token_weight', [VOCAB.length], Float32Array.from(VOCAB, (t) => WEIGHT[t] ?? 0));
  const w = g.op('Gather', [table, ids], { axis: { int: 0 } });
  const inPassage = g.op('Mul', [g.op('Cast', [types], { to: { int: 1 } }), g.op('Cast', [mask], { to: { int: 1 } })]);
  g.op('ReduceSum', [g.op('Mul', [w, inPassage]), g.ints('seq_axis', [1])], { keepdims: { int: 1 } }, 'logits');
  g.output('logits', 'float32', ['batch', 1]);
  return g.encode(17);
}

/**
 * docs/models.md's other shape: no `token_type_ids` input, and two logits (not relevant, relevant) per pair. Every
 * token counts (there is no segment to tell the passage by): logit₀ = −s/2 and logit₁ = s/2 + 1, so the score
 * logit₁ − logit₀ is s + 1, and reading either logit alone gives another number.
 */
function twoLogitCrossEncoder(): Uint8Array {
  const g = new GraphBuilder('tiny-two-logit-cross-encoder');
  const ids = g.input('input_ids', 'int64', ['batch', 'seq']);
  const mask = g.input('attention_mask', 'int64', ['batch', 'seq']);
  const table = g.floats('token_weight', [VOCAB.length], Float32Array.from(VOCAB, (t) => WEIGHT[t] ?? 0));
  const w = g.op('Gather', [table, ids], { axis: { int: 0 } });
  const sum = g.op('ReduceSum', [g.op('Mul', [w, g.op('Cast', [mask], { to: { int: 1 } })]), g.ints('seq_axis', [1])], { keepdims: { int: 1 } });
  const half = g.op('Mul', [sum, g.floats('half', [1], Float32Array.of(0.5))]);
  const notRelevant = g.op('Neg', [half]);
  const relevant = g.op('Add', [half, g.floats('one', [1], Float32Array.of(1))]);
  g.op('Concat', [notRelevant, relevant], { axis: { int: 1 } }, 'logits');
  g.output('logits', 'float32', ['batch', 2]);
  return g.encode(17);
}

const special = (content: string, id: number) => ({
  id,
  content,
  single_word: false,
  lstrip: false,
  rstrip: false,
  normalized: false,
  special: true,
});

const TOKENIZER = {
  version: '1.0',
  truncation: null,
  padding: null,
  added_tokens: [special('[PAD]', 0), special('[UNK]', 1), special('[CLS]', 2), special('[SEP]', 3)],
  normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
  pre_tokenizer: { type: 'BertPreTokenizer' },
  post_processor: {
    type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
    pair: [
      { SpecialToken: { id: '[CLS]', type_id: 0 } },
      { Sequence: { id: 'A', type_id: 0 } },
      { SpecialToken: { id: '[SEP]', type_id: 0 } },
      { Sequence: { id: 'B', type_id: 1 } },
      { SpecialToken: { id: '[SEP]', type_id: 1 } },
    ],
    special_tokens: {
      '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
      '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
    },
  },
  decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
  model: {
    type: 'WordPiece',
    unk_token: '[UNK]',
    continuing_subword_prefix: '##',
    max_input_chars_per_word: 100,
    vocab: Object.fromEntries(VOCAB.map((t, i) => [t, i])),
  },
};

let dir: string;
let reranker: OnnxReranker;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docsearch-onnx-reranker-'));
  await writeFile(join(dir, 'model.onnx'), tinyCrossEncoder());
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(TOKENIZER));
  reranker = new OnnxReranker({ dir, batchSize: 2 });
  await reranker.init();
}, 60_000);

afterAll(async () => {
  await reranker?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('onnx cross-encoder reranker', () => {
  it('returns one score per passage, in input order, across batches', async () => {
    // The query's own tokens (segment A) must not count: "relevant" in the query scores nothing.
    const scores = await reranker.rerank('relevant query', ['the doc', 'relevant doc', 'noise noise', 'very relevant', 'RELEVANT']);
    expect(scores).toEqual([0, 2, -2, 3, 2]);
    expect(reranker.status()).toEqual({ loaded: true, id: `onnx:${dir}`, dimension: 0 });
  });

  it('opens a fresh session when its worker died: the reranks after it are scored', async () => {
    const r = new OnnxReranker({ dir });
    try {
      expect(await r.rerank('relevant query', ['relevant doc'])).toEqual([2]);
      // A worker that dies (an uncaught error or out of memory in its thread) is played by ending its thread.
      await (r as unknown as { loaded: { session: { worker: { terminate(): Promise<number> } } } }).loaded.session.worker.terminate();
      await vi.waitFor(() => expect(r.status().loaded).toBe(false));
      expect(await r.rerank('relevant query', ['relevant doc'])).toEqual([2]);
      expect(r.status()).toEqual({ loaded: true, id: `onnx:${dir}`, dimension: 0 });
    } finally {
      await r.close();
    }
  });

  it('returns [] for no passages', async () => {
    expect(await reranker.rerank('q', [])).toEqual([]);
  });

  it('cuts an over-long passage to the token limit', async () => {
    const short = new OnnxReranker({ dir, maxTokens: 8 });
    try {
      // [CLS] query [SEP] + passage + [SEP] must fit in 8 tokens: at most 4 passage tokens, all "very" (1 each), survive
      // (a limit off by one would let a fifth "very" in).
      const [score] = await short.rerank('query', ['very very very very very relevant relevant relevant']);
      expect(score).toBeLessThanOrEqual(4);
      expect(score).toBeGreaterThan(0);
    } finally {
      await short.close();
    }
  });

  it('scores a [batch, 2] model as logit₁ − logit₀, and reads a model that declares no token_type_ids input', async () => {
    const two = await mkdtemp(join(tmpdir(), 'docsearch-onnx-two-'));
    await writeFile(join(two, 'model.onnx'), twoLogitCrossEncoder());
    await writeFile(join(two, 'tokenizer.json'), JSON.stringify(TOKENIZER));
    const r = new OnnxReranker({ dir: two });
    try {
      // "query" and the special tokens weigh 0: s is the passage's weight.
      expect(await r.rerank('query', ['the doc', 'relevant doc', 'noise noise', 'very relevant'])).toEqual([1, 3, -1, 4]);
    } finally {
      await r.close();
      await rm(two, { recursive: true, force: true });
    }
  });

  it('explains a folder without model.onnx', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'docsearch-onnx-empty-'));
    const r = new OnnxReranker({ dir: empty });
    try {
      const err = await r.init().catch((x: unknown) => x);
      expect(err).toBeInstanceOf(ModelError);
      expect((err as ModelError).message).toBe(
        `cross-encoder in ${empty} failed to load: ${join(empty, 'model.onnx')} not found (the folder needs model.onnx and tokenizer.json)`,
      );
      expect(r.status()).toMatchObject({ loaded: false });
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
