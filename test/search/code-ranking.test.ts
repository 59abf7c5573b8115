/**
 * Ranks that hold when vectors move (#49 item 10): a library of look-alike records differing only in their codes —
 * incident numbers, invoice numbers, hex fault codes — through the real chunker, the built-in model, a LanceDB chunk
 * index and the retriever with the daemon's defaults. Each code query puts its record first; so it does after that
 * record's vector is perturbed as a re-embedding would (written again, its document's rows replaced): the vectors of
 * look-alikes are nearly the same, so the record's vector rank is a coin toss among them and may fall out of the
 * vector list, and a lone, overwhelming keyword match must not lose to them for that.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/ingest/chunk.js';
import { toRows } from '../../src/ingest/write.js';
import { BuiltinEmbedder } from '../../src/models/builtin/minilm-embedder.js';
import { DEFAULT_RETRIEVE, Retriever } from '../../src/search/retrieve.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { rng } from '../helpers/rng.js';
import { TEST_MODEL_CACHE } from '../helpers/daemon.js';

const PROJECT = 'p';
const random = rng(49);
const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;

/** Distinct codes made by `make` from a random number. */
function codes(n: number, make: (x: number) => string): string[] {
  const out = new Set<string>();
  while (out.size < n) out.add(make(Math.floor(random() * 1e6)));
  return [...out];
}

const KINDS = [
  {
    codes: codes(250, (x) => `INC-${String(x).padStart(6, '0')}`),
    text: (code: string) =>
      `Incident report ${code}. The badge reader at the north entrance stopped accepting cards during the morning shift. ` +
      'Facilities reset the controller and the reader worked again. The root cause is under review by the security team.',
  },
  {
    codes: codes(250, (x) => `INV-2024-${String(x % 10000).padStart(4, '0')}${String.fromCharCode(65 + (x % 26))}`),
    text: (code: string) =>
      `Invoice ${code} from Nordic Paper Supplies for forty boxes of A4 copy paper, due within thirty days. ` +
      'Payment goes to the account ending 4471; questions to the accounts payable desk.',
  },
  {
    codes: codes(250, (x) => `0x${(0x1000 + (x % 0xefff)).toString(16).toUpperCase()}`),
    text: (code: string) =>
      `Controller fault ${code} reported by pump station 7: the pressure sensor reading was out of range, ` +
      'so the pump was stopped and restarted by the operator on duty. No damage was found.',
  },
];

const records = KINDS.flatMap((k, ki) => k.codes.map((code, i) => ({ id: `doc-${ki}-${i}`, code, text: k.text(code) })));

describe('code queries over look-alike records', () => {
  let dir: string;
  let store: VectorStore;
  let chunks: ChunkIndex;
  let embedder: BuiltinEmbedder;
  let retriever: Retriever;

  const rowsOf = (r: (typeof records)[number], vectors: Float32Array[]) =>
    toRows(
      { documentId: r.id, userId: 'u', projectId: PROJECT },
      chunkDocument({ title: `record ${r.id}`, blocks: [{ text: r.text, headings: [], kind: 'paragraph' }], warnings: [] }, { tokenizer: embedder.tokenizer, maxTokens: embedder.maxTokens, overlapTokens: 32, title: `record ${r.id}` }),
      vectors.map((vector) => ({ vector, units: null })),
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'docsearch-codes-'));
    embedder = new BuiltinEmbedder({ modelCacheDir: TEST_MODEL_CACHE });
    await embedder.init();
    store = await VectorStore.open(dir);
    chunks = await ChunkIndex.open(store, { embedderId: embedder.id });
    const rows = await Promise.all(records.map((r) => rowsOf(r, [new Float32Array(embedder.dimension)])));
    const vectors = await embedder.embed(rows.map((rs) => rs[0]!.search_text), { kind: 'passage' });
    await chunks.add(rows.map((rs, i) => ({ ...rs[0]!, vector: vectors[i]! })), embedder);
    await chunks.optimize();
    retriever = new Retriever({ chunks, embedder }, DEFAULT_RETRIEVE);
  }, 300_000);

  afterAll(async () => {
    await embedder?.close();
    store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The records whose code query does not rank them first, with where they came and the winner's code. */
  async function misses(sample: typeof records, phrase: (code: string) => string, mode: 'hybrid' | 'vector' = 'hybrid') {
    const out: string[] = [];
    for (const r of sample) {
      const { ranked } = await retriever.retrieve({ projectIds: [PROJECT], asker: 'test', query: phrase(r.code), mode, reranker: null, list: 'first-page' });
      const at = ranked.findIndex((x) => x.chunk.document_id === r.id);
      if (at !== 0) out.push(`${r.code} at #${at + 1} (first: ${records.find((x) => x.id === ranked[0]?.chunk.document_id)?.code})`);
    }
    return out;
  }

  it('puts the record first for its code, alone or in a question', async () => {
    const sample = KINDS.flatMap((_, ki) => records.filter((r) => r.id.startsWith(`doc-${ki}-`)).slice(0, 15));
    expect(await misses(sample, (c) => c)).toEqual([]);
    expect(await misses(sample.slice(0, 10), (c) => `what happened in ${c}?`)).toEqual([]);
  }, 300_000);

  it('still does after the record is re-embedded with a perturbed vector', async () => {
    const moved = KINDS.flatMap((_, ki) => Array.from({ length: 5 }, () => pick(records.filter((r) => r.id.startsWith(`doc-${ki}-`)))));
    for (const r of new Set(moved)) {
      const [row] = await rowsOf(r, [new Float32Array(embedder.dimension)]);
      const [v] = await embedder.embed([row!.search_text], { kind: 'passage' });
      // Noise of about a third of the vector's length: cosine ~0.95 to the original, what another model build or
      // precision moves a vector by at most, and enough to reorder look-alikes.
      const noisy = v!.map((x) => x + (random() - 0.5) * 0.06);
      const norm = Math.hypot(...noisy);
      await chunks.deleteDocument(r.id);
      await chunks.add([{ ...row!, vector: noisy.map((x) => x / norm) }], embedder);
    }
    await chunks.optimize();
    // By meaning alone some of them no longer come first (so the keyword match is what holds them); together, all do.
    expect((await misses([...new Set(moved)], (c) => c, 'vector')).length).toBeGreaterThan(0);
    expect(await misses([...new Set(moved)], (c) => c)).toEqual([]);
  }, 300_000);
});
