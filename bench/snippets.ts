/**
 * npm run bench:snippets [-- --tune]
 *
 * How often the excerpt a person reads holds the answer: the excerpt the web page and the CLI show
 * (src/core/excerpt.ts, 320 characters), chosen four ways —
 * - "centred on the term-best sentence": the rule before answers (the sentence window with most query terms, the
 *   excerpt centred on it, an overlong one cut);
 * - "answer by terms": the answer unit (src/ingest/answer-units.ts) chosen by the query's terms alone, excerpt opening
 *   with it (what a search shows for a chunk not backfilled yet, or in keyword mode);
 * - "meaning from separate sentence passes": each unit embedded on its own as a passage (0.2's way, at search time);
 * - "meaning from the chunk's pass": the units' vectors pooled from the chunk's own pass at ingest (late chunking,
 *   src/ingest/unit-vectors.ts), stored with the chunk: the daemon's.
 *
 * Two sets:
 * 1. SciFact test claims whose judgments name rationale sentences (../shared/eval/scifact, queries' metadata): each
 *    claim through the daemon's retrieval (hybrid, first page, no reranker, bench/quality.ts's index); every judged
 *    abstract among its first 10 results counts once, a hit when its excerpt holds a rationale sentence whole.
 * 2. The hard files of ../shared/eval/docs, parsed (the daemon's parse worker, dist/) and chunked as the daemon does
 *    (no OCR): known items. From each
 *    document with text, up to 5 chunks; in each, a sentence that is not the chunk's first (at least 8 words); the
 *    query is half its content words (seeded), in order. A hit when the chunk's excerpt holds that sentence whole.
 *
 * Cost, in CPU time of this process (the model's worker threads included) over the same 256 SciFact chunks: a plain
 * pass per chunk (its vector only), the pass with its units pooled, and the separate passes over the units.
 * `--tune` prints SciFact TRAIN hit rates by TERM_WEIGHT and TERM_FLOOR (chosen on train; test's printed beside, not chosen on).
 * `--variants` prints them (today's weights, and those best on train for each way), and how often the chosen unit itself
 * holds the answer (as MCP's snippet shows it), for ways of pooling the units' vectors (UnitPooling: tokens of context
 * before and after, share of the chunk's mean taken away), each from a pass of its own over the cases' chunks, each with
 * the choice-time adjustments of ADJUSTMENTS; beside each, the answer set's misses (answerSetMisses: the 76 questions of
 * test/search/answer-snippets.test.ts, offline) and its right answers won by less than 0.01. Both need
 * `--judged-only` (the corpus then holds train's judged abstracts too) and stop after the SciFact figures.
 * Otherwise rewrites the "Answer snippets" section of docs/BENCHMARKS.md.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { type TextRange, excerptRange } from '../src/core/excerpt.js';
import { chunkDocument } from '../src/ingest/chunk.js';
import type { Chunk } from '../src/ingest/types.js';
import { splitSentences } from '../src/ingest/sentences.js';
import { DOCX, type DocumentType, PDF, TXT } from '../src/ingest/types.js';
import { BuiltinEmbedder, UNIT_POOLING, type UnitPooling } from '../src/models/builtin/minilm-embedder.js';
import { createEmbedder } from '../src/models/registry.js';
import { dot } from '../src/models/vector-math.js';
import { answerUnits } from '../src/ingest/answer-units.js';
import { type EmbeddedChunk, embedWithUnits } from '../src/ingest/unit-vectors.js';
import { type AnswerWeights, chooseAnswer, NEAR_TIE, TERM_FLOOR, TERM_WEIGHT } from '../src/search/answer.js';
import { decodeUnits } from '../src/store/lancedb/unit-vectors.js';
import { QueryVectorCache } from '../src/search/query-cache.js';
import { DEFAULT_RETRIEVE, Retriever } from '../src/search/retrieve.js';
import { type SentenceWindow, sentenceWindows } from '../src/ingest/sentence-windows.js';
import { queryTerms, stem, wordSpans } from '../src/search/terms.js';
import { buildChunks } from './quality.js';
import { available, readSplit, rng, SCIFACT } from './scifact.js';
import { VectorCache } from './vector-cache.js';

const REPO = resolve(import.meta.dirname, '..');
const CACHE = join(REPO, 'bench/.cache');
const DOCS = resolve(REPO, '../shared/eval/docs');
const PROJECT = 'scifact';
const log = (msg: string) => process.stderr.write(`${msg}\n`);
const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)} %`;

type Method = 'centred' | 'terms' | 'separate' | 'late';
const METHODS: Record<Method, string> = {
  centred: 'centred on the term-best sentence (0.1)',
  terms: 'answer by terms',
  separate: 'meaning from separate sentence passes + terms (0.2)',
  late: "meaning from the chunk's pass + terms (the daemon)",
};

/** One judged case: a chunk's text, its stored units (vectors pooled from its pass), the query, and the sentences any of which answers it. */
interface Case {
  query: string;
  text: string;
  units: Uint8Array;
  answers: string[];
  /** The chunk's vector (--variants' distinctness adjustment reads it). */
  vector?: Float32Array;
}

/**
 * A way of adjusting the units' cosines before the choice, tried by --variants with each pooling (none ships): a prior
 * on the unit's length (log of its characters / 100: short units' pooled vectors are means of few tokens), a share of
 * its best neighbour's cosine (context without mixing it into the vector), or less a share of its cosine to the chunk's
 * own vector (what sets it apart from the chunk's topic). `toChunk` gives each unit's cosine to the chunk's vector.
 */
interface Adjustment {
  name: string;
  apply(meaning: number[], units: readonly SentenceWindow[], toChunk: () => number[]): number[];
}

const ADJUSTMENTS: Adjustment[] = [
  { name: 'none', apply: (m) => m },
  ...[-0.03, 0.03, 0.06, 0.1].map((l): Adjustment => ({ name: `length ${l}`, apply: (m, u) => m.map((x, i) => x + l * Math.log((u[i]!.end - u[i]!.start) / 100)) })),
  ...[0.1, 0.2].map((b): Adjustment => ({ name: `neighbour ${b}`, apply: (m) => m.map((x, i) => x + b * Math.max(m[i - 1] ?? 0, m[i + 1] ?? 0, 0)) })),
  ...[0.2].map((g): Adjustment => ({
    name: `distinct ${g}`,
    apply: (m, _u, toChunk) => {
      const c = toChunk();
      return m.map((x, i) => x - g * c[i]!);
    },
  })),
];

/** The rule before answers: the window with most distinct query terms (earliest), the excerpt centred on it. */
function centredExcerpt(text: string, query: string): TextRange {
  const terms = queryTerms(query);
  const stems = new Set(terms.map((t) => t.stem));
  let best: SentenceWindow | undefined;
  let bestCount = 0;
  for (const w of sentenceWindows(text)) {
    const found = new Set(wordSpans(text.slice(w.start, w.end)).map((s) => stem(s.word.toLowerCase())).filter((s) => stems.has(s)));
    if (found.size > bestCount) [best, bestCount] = [w, found.size];
  }
  const max = 320;
  if (text.length <= max) return [0, text.length];
  const [ps, pe] = best ? [best.start, best.end] : [0, 0];
  if (pe - ps >= max) return [ps, ps + max];
  const start = Math.max(0, Math.min(ps - Math.floor((max - (pe - ps)) / 2), text.length - max));
  return [start, start + max];
}

async function scoreCases(cases: Case[], embedder: BuiltinEmbedder, vectors: VectorCache, weights: AnswerWeights[] = [{ weight: TERM_WEIGHT, floor: TERM_FLOOR }], adjust: Adjustment = ADJUSTMENTS[0]!): Promise<{ hits: Record<Method, number>; byWeight: number[]; unitHits: number; joined: number }> {
  const units = cases.map((c) => answerUnits(c.text));
  const unitTexts = cases.map((c, i) => units[i]!.map((u) => c.text.slice(u.start, u.end)));
  const queryVecs = await vectors.embed(embedder, cases.map((c) => c.query), 'query');
  const flat = await vectors.embed(embedder, unitTexts.flat(), 'passage', (d, t) => log(`  embedded sentences ${d}/${t}`));
  const hits: Record<Method, number> = { centred: 0, terms: 0, separate: 0, late: 0 };
  const byWeight = weights.map(() => 0);
  // The chosen unit itself (MCP's snippet) holds an answer sentence or lies within one: stricter than the excerpt.
  let unitHits = 0;
  // Answers that took in a neighbour scored within NEAR_TIE (answer.ts), the daemon's way.
  let joined = 0;
  const holds = (c: Case, [s, e]: TextRange) => c.answers.some((a) => c.text.slice(s, e).includes(a));
  let k = 0;
  cases.forEach((c, i) => {
    const separate = unitTexts[i]!.map(() => dot(queryVecs[i]!, flat[k++]!));
    const stored = decodeUnits(c.units)!;
    if (stored.units.length !== units[i]!.length) throw new Error('the stored units are not the ones answer-units.ts cuts now: rebuild the bench index');
    const late = adjust.apply(stored.scores(queryVecs[i]!), stored.units, () => stored.scores(c.vector!));
    const terms = queryTerms(c.query);
    const shown = (choice: ReturnType<typeof chooseAnswer>) => excerptRange(c.text, choice ? [choice.unit.start, choice.unit.end] : undefined);
    if (holds(c, centredExcerpt(c.text, c.query))) hits.centred++;
    // With the chunk's header as context for the units' words, as the daemon chooses.
    const context = stored.context;
    if (holds(c, shown(chooseAnswer(c.text, units[i]!, terms, undefined, context)))) hits.terms++;
    if (holds(c, shown(chooseAnswer(c.text, units[i]!, terms, separate, context)))) hits.separate++;
    const today = chooseAnswer(c.text, units[i]!, terms, late, context);
    const chosen = today && units[i]![today.index]!;
    if (chosen && (chosen.start !== today.unit.start || chosen.end !== today.unit.end)) joined++;
    const unit = today ? c.text.slice(today.unit.start, today.unit.end) : '';
    if (unit && c.answers.some((a) => a.includes(unit) || unit.includes(a))) unitHits++;
    weights.forEach((w, wi) => {
      const choice = w.weight === 0 ? chooseAnswer(c.text, units[i]!, [], late) : chooseAnswer(c.text, units[i]!, terms, late, context, w);
      if (holds(c, shown(choice))) byWeight[wi]!++;
    });
  });
  hits.late = byWeight[weights.findIndex((w) => w.weight === TERM_WEIGHT && w.floor === TERM_FLOOR)] ?? 0;
  return { hits, byWeight, unitHits, joined };
}

/** SciFact claims of a split with rationale sentences: their judged abstracts among the first 10 results. */
async function scifactCases(split: 'train' | 'test', retriever: Retriever): Promise<{ cases: Case[]; claims: number; unaligned: number }> {
  const ids = new Set(
    readFileSync(join(SCIFACT, 'qrels', `${split}.tsv`), 'utf8')
      .split('\n')
      .slice(1)
      .map((l) => l.split('\t')[0]),
  );
  const corpus = new Map(
    readFileSync(join(SCIFACT, 'corpus.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { _id: string; text: string })
      .map((d) => [d._id, d.text]),
  );
  const claims = readFileSync(join(SCIFACT, 'queries.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { _id: string; text: string; metadata: Record<string, { sentences: number[] }[]> })
    .filter((q) => ids.has(q._id) && Object.keys(q.metadata).length > 0);
  const cases: Case[] = [];
  let unaligned = 0;
  for (const claim of claims) {
    const { ranked } = await retriever.retrieve({ projectIds: [PROJECT], asker: 'bench', query: claim.text, mode: 'hybrid', reranker: null, list: 'first-page' });
    const top = ranked.slice(0, 10);
    const rows = await retriever.hydrate([PROJECT], top);
    const seen = new Set<string>();
    for (const r of top) {
      const doc = r.chunk.document_id;
      const evidence = claim.metadata[doc];
      const row = rows.get(r.chunk.id);
      if (!evidence || !row || seen.has(doc)) continue;
      seen.add(doc);
      // Rationale sentences by index into the abstract's sentences (the corpus joined them with single spaces).
      const abstract = corpus.get(doc)!;
      const sentences = splitSentences(abstract).map(([s, e]) => abstract.slice(s, e));
      const wanted = [...new Set(evidence.flatMap((e) => e.sentences))];
      if (wanted.some((i) => i >= sentences.length)) unaligned++;
      cases.push({ query: claim.text, text: row.text, units: row.units!, answers: wanted.map((i) => sentences[i]).filter((s): s is string => s !== undefined) });
    }
  }
  return { cases, claims: claims.length, unaligned };
}

/** The abstracts that `split`'s claims' judgments name (their rationale sentences). */
function judgedAbstracts(split: 'train' | 'test'): Set<string> {
  const ids = new Set(readSplit(split).map((q) => q.id));
  const out = new Set<string>();
  for (const line of readFileSync(join(SCIFACT, 'queries.jsonl'), 'utf8').split('\n').filter(Boolean)) {
    const q = JSON.parse(line) as { _id: string; metadata: Record<string, unknown> };
    if (ids.has(q._id)) for (const doc of Object.keys(q.metadata)) out.add(doc);
  }
  return out;
}

/** Known items from the hard files: a sentence of a chunk (not its first) and a query of half its content words. */
async function hardFileCases(embedder: BuiltinEmbedder): Promise<{ cases: Case[]; files: number; withText: number }> {
  const { tokenizer, maxTokens } = embedder;
  const manifest = readFileSync(join(DOCS, 'manifest.tsv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t')[0]!);
  // The daemon's parse worker, from dist/ (the worker file exists only built).
  const { createExtractor } = (await import(join(REPO, 'dist/ingest/extract.js'))) as typeof import('../src/ingest/extract.js');
  const extractor = createExtractor({ timeoutMs: 60_000 });
  const random = rng(7);
  const cases: (Omit<Case, 'units'> & { chunk: Chunk })[] = [];
  let withText = 0;
  try {
    for (const file of manifest) {
      const bytes = new Uint8Array(readFileSync(join(DOCS, file)));
      // The set is PDF, DOCX and TXT by folder; files that are not what their folder says fail to parse and are left out.
      const type: DocumentType = file.startsWith('pdf/') ? PDF : file.startsWith('docx/') ? DOCX : TXT;
      const parsed = await extractor.extract(bytes, type).catch(() => null);
      if (!parsed || !parsed.blocks.some((b) => b.text.trim())) continue;
      const chunks = chunkDocument(parsed, { tokenizer, maxTokens, overlapTokens: 32, title: file });
      if (chunks.length === 0) continue;
      withText++;
      const step = Math.max(1, Math.floor(chunks.length / 5));
      for (let i = 0; i < chunks.length && cases.filter((c) => c.query.startsWith(`${file}\0`)).length < 5; i += step) {
        const text = chunks[i]!.text;
        const units = answerUnits(text).slice(1).filter((u) => text.slice(u.start, u.end).split(/\s+/).length >= 8);
        if (units.length === 0) continue;
        const unit = units[Math.floor(random() * units.length)]!;
        const sentence = text.slice(unit.start, unit.end);
        const words = queryTerms(sentence).map((t) => t.text);
        const kept = words.filter(() => random() < 0.5);
        if (kept.length < 3) continue;
        cases.push({ query: `${file}\0${kept.join(' ')}`, text, chunk: chunks[i]!, answers: [sentence] });
      }
    }
  } finally {
    await extractor.close();
  }
  const embedded = await embedWithUnits(embedder, cases.map((c) => c.chunk), { kind: 'passage' });
  return { cases: cases.map(({ chunk: _c, ...c }, i) => ({ ...c, units: embedded[i]!.units, query: c.query.split('\0')[1]! })), files: manifest.length, withText };
}

/** CPU-ms (this process, every thread) per chunk: a plain pass, the pass with its units pooled, the separate passes over its units. */
async function costPerChunk(embedder: BuiltinEmbedder, chunks: readonly { text: string; embedText: string }[]): Promise<{ plain: number; pooled: number; separate: number; units: number }> {
  const cpu = async (work: () => Promise<unknown>) => {
    const before = process.cpuUsage();
    await work();
    const d = process.cpuUsage(before);
    return (d.user + d.system) / 1000 / chunks.length;
  };
  const unitTexts = chunks.flatMap((c) => answerUnits(c.text).map((u) => c.text.slice(u.start, u.end)));
  await embedder.embed(chunks.slice(0, 16).map((c) => c.embedText), { kind: 'passage' }); // the passage session opens
  const best = async (work: () => Promise<unknown>) => Math.min(await cpu(work), await cpu(work), await cpu(work));
  return {
    plain: await best(() => embedder.embed(chunks.map((c) => c.embedText), { kind: 'passage' })),
    pooled: await best(() => embedWithUnits(embedder, chunks, { kind: 'passage' })),
    separate: await best(() => embedder.embed(unitTexts, { kind: 'passage' })),
    units: unitTexts.length / chunks.length,
  };
}

/** A question of the answer set (test/search/answer-snippets.test.ts): its document's chunks, the answer it must show. */
interface AnswerSetCase {
  question: string;
  answer: string;
  /** Indexes into the set's chunks: its document's. */
  chunks: number[];
}

/**
 * The answer set's documents, parsed (the daemon's parse worker, dist/) and chunked as an upload is, and its 76
 * questions. Which chunk a question's search shows first does not depend on how units are pooled; it is taken here as
 * the chunk of its document that holds the answer (of two, the one whose vector is nearer the question's): misses
 * here are the units' choice alone (the test's "machine room", a keyword rank of another document, is not one).
 */
async function answerSet(embedder: BuiltinEmbedder): Promise<{ chunks: Chunk[]; cases: AnswerSetCase[] }> {
  const { ANSWER_DOCUMENTS, STRUCTURED_DOCUMENTS } = await import('../test/search/answer-documents.js');
  const { sniffType } = await import('../src/ingest/sniff.js');
  const { createExtractor } = (await import(join(REPO, 'dist/ingest/extract.js'))) as typeof import('../src/ingest/extract.js');
  const files = [
    ...ANSWER_DOCUMENTS.map((d, i) => ({ name: `doc-${i + 1}.txt`, body: `${d.before} ${d.answer} ${d.after}`, questions: [{ question: d.question, answer: d.answer }] })),
    ...STRUCTURED_DOCUMENTS.map((d) => ({ name: d.name, body: d.body, questions: d.questions })),
  ];
  const extractor = createExtractor({ timeoutMs: 60_000 });
  const chunks: Chunk[] = [];
  const cases: AnswerSetCase[] = [];
  try {
    for (const f of files) {
      const bytes = new Uint8Array(Buffer.from(f.body));
      const parsed = await extractor.extract(bytes, sniffType(bytes, f.name) as DocumentType, { filename: f.name });
      const own = chunkDocument(parsed, { tokenizer: embedder.tokenizer, maxTokens: embedder.maxTokens, overlapTokens: 32, title: parsed.title ?? f.name });
      const at = chunks.push(...own) - own.length;
      for (const q of f.questions) cases.push({ ...q, chunks: own.map((_, i) => at + i) });
    }
  } finally {
    await extractor.close();
  }
  return { chunks, cases };
}

/** Whitespace collapsed, as the answer-set test reads what a surface shows. */
const collapse = (s: string) => s.replace(/\s+/g, ' ');

/**
 * The answer set's misses with units pooled one way: MCP's (the chosen unit alone must hold the answer) and the web's
 * and CLI's (the 320-character excerpt opening with it), and how many right answers won by less than 0.01.
 */
async function answerSetMisses(set: Awaited<ReturnType<typeof answerSet>>, embedded: EmbeddedChunk[], embedder: BuiltinEmbedder, vectors: VectorCache, weights: AnswerWeights, adjust: Adjustment): Promise<{ mcp: string[]; web: number; close: string[] }> {
  const queryVecs = await vectors.embed(embedder, set.cases.map((c) => c.question), 'query');
  const out = { mcp: [] as string[], web: 0, close: [] as string[] };
  set.cases.forEach((c, i) => {
    const q = queryVecs[i]!;
    const holding = c.chunks.filter((k) => collapse(set.chunks[k]!.text).includes(c.answer));
    const top = (holding.length ? holding : c.chunks).reduce((a, b) => (dot(q, embedded[b]!.vector) > dot(q, embedded[a]!.vector) ? b : a));
    const text = set.chunks[top]!.text;
    const stored = decodeUnits(embedded[top]!.units)!;
    const meaning = adjust.apply(stored.scores(q), stored.units, () => stored.scores(embedded[top]!.vector));
    const choice = chooseAnswer(text, stored.units, queryTerms(c.question), meaning, stored.context, weights);
    const unit: TextRange | undefined = choice ? [choice.unit.start, choice.unit.end] : undefined;
    const [s, e] = excerptRange(text, unit);
    if (!collapse(text.slice(s, e)).includes(c.answer)) out.web++;
    if (!unit || !collapse(text.slice(...unit)).includes(c.answer)) out.mcp.push(c.question);
    else if (choice!.margin < 0.01) out.close.push(`${c.question} (${choice!.margin.toFixed(3)})`);
  });
  return out;
}

/**
 * SciFact train and test hit rates with the units pooled each of several ways (today's marked), with today's weights
 * and with the weights best on train for that way; and the answer set's misses (answerSetMisses) with each.
 */
async function poolingVariants(chunks: Awaited<ReturnType<typeof buildChunks>>['chunks'], retriever: Retriever, embedder: BuiltinEmbedder, vectors: VectorCache, weights: AnswerWeights[]): Promise<void> {
  const rows = await chunks.rowsWhere('true', ['text', 'search_text'], 1_000_000);
  const embedTextOf = new Map(rows.map((r) => [r.text as string, r.search_text as string]));
  const splits = { train: (await scifactCases('train', retriever)).cases, test: (await scifactCases('test', retriever)).cases };
  const texts = [...new Set([...splits.train, ...splits.test].map((c) => c.text))];
  const set = await answerSet(embedder);
  log(`${texts.length} SciFact chunks and ${set.chunks.length} of the answer set's (${set.cases.length} questions) a way`);
  const grid: UnitPooling[] = [
    UNIT_POOLING,
    ...[0.25, 0.5].map((centre) => ({ before: 0, after: 0, centre })),
    ...[0, 0.5].flatMap((centre) => [{ before: 0, after: 2, centre }, { before: 2, after: 0, centre }, { before: 2, after: 2, centre }]),
  ];
  const today = weights.findIndex((w) => w.weight === TERM_WEIGHT && w.floor === TERM_FLOOR);
  for (const pooling of grid) {
    const variant = new BuiltinEmbedder({ modelCacheDir: join(CACHE, 'models'), precision: embedder.precision, unitPooling: pooling });
    const inputs = [...texts.map((text) => ({ text, embedText: embedTextOf.get(text)! })), ...set.chunks];
    const embedded = await embedWithUnits(variant, inputs, { kind: 'passage' });
    await variant.close();
    const of = new Map(texts.map((t, i) => [t, embedded[i]!]));
    const name = `before ${pooling.before}, after ${pooling.after}, centre ${pooling.centre}${pooling === UNIT_POOLING ? ' (today)' : ''}`;
    for (const adjust of ADJUSTMENTS) {
      // Today's weights, and (without an adjustment) the weights best on train for this pooling.
      const ws = adjust === ADJUSTMENTS[0] ? weights : [weights[today]!];
      const score = (cases: Case[]) => scoreCases(cases.map((c) => ({ ...c, units: of.get(c.text)!.units, vector: of.get(c.text)!.vector })), embedder, vectors, ws, adjust);
      const train = await score(splits.train);
      const test = await score(splits.test);
      const at = ws.indexOf(weights[today]!);
      const best = train.byWeight.indexOf(Math.max(...train.byWeight));
      for (const wi of best === at ? [at] : [at, best]) {
        const w = ws[wi]!;
        const misses = await answerSetMisses(set, embedded.slice(texts.length), embedder, vectors, w, adjust);
        log(
          `${name}; adjustment ${adjust.name}; w=${w.weight}/f=${w.floor}${wi === best && best !== at ? ' (best on train)' : ''}: train ${pct(train.byWeight[wi]!, splits.train.length)} of ${splits.train.length}, ` +
            `test ${pct(test.byWeight[wi]!, splits.test.length)} of ${splits.test.length} (the unit itself, today's weights: train ${pct(train.unitHits, splits.train.length)}, test ${pct(test.unitHits, splits.test.length)}); ` +
            `answer set: MCP misses ${misses.mcp.length}, web ${misses.web} of ${set.cases.length}, right by < 0.01: ${misses.close.length}` +
            `${misses.mcp.length ? `\n    missed: ${misses.mcp.join('; ')}` : ''}${misses.close.length ? `\n    close: ${misses.close.join('; ')}` : ''}`,
        );
      }
    }
  }
}

async function main(): Promise<void> {
  if (!available()) {
    log(`skipped: ${SCIFACT} is not there (the shared eval data is needed)`);
    return;
  }
  const load = loadavg()[0]!;
  const embedder = createEmbedder({ embedder: 'builtin', reranker: 'none', modelCacheDir: join(CACHE, 'models'), ollamaHost: '', openaiBaseUrl: '' });
  if (!(embedder instanceof BuiltinEmbedder)) throw new Error('the built-in embedder is needed');
  await embedder.init();
  const vectors = VectorCache.open(join(CACHE, 'vectors-builtin.bin'), embedder.id, embedder.dimension);
  // --judged-only: a corpus of the abstracts the test claims' judgments name, and nothing else (minutes rather than
  // hours of embedding on a busy machine); the methods are compared on the same cases, but retrieval is easier than on
  // the whole corpus, so its figures are not the full run's.
  const judgedOnly = process.argv.includes('--judged-only');
  const tune = process.argv.includes('--tune');
  const variants = process.argv.includes('--variants');
  // Tuning reads the train claims' judged abstracts too (with --judged-only they must be in the corpus).
  const built = await buildChunks(embedder, judgedOnly ? new Set([...judgedAbstracts('test'), ...(tune || variants ? judgedAbstracts('train') : [])]) : undefined);
  const retriever = new Retriever({ chunks: built.chunks, embedder, cache: new QueryVectorCache(10_000) }, DEFAULT_RETRIEVE);

  const weights: AnswerWeights[] = [{ weight: 0, floor: 0 }, ...[0, 0.25, 0.5, 0.67].flatMap((floor) => [0.1, 0.25, 0.5, 1, 2].map((weight) => ({ weight, floor })))];
  const label = (w: AnswerWeights) => `w=${w.weight}/f=${w.floor}`;
  if (tune) {
    const train = await scifactCases('train', retriever);
    const { hits, byWeight } = await scoreCases(train.cases, embedder, vectors, weights);
    log(`\nSciFact TRAIN: ${train.cases.length} judged abstracts in the first 10 of ${train.claims} claims`);
    log(`  terms only: ${pct(hits.terms, train.cases.length)}; meaning + w × terms past f: ${weights.map((w, i) => `${label(w)} ${pct(byWeight[i]!, train.cases.length)}`).join(', ')}`);
  }

  if (variants) {
    await poolingVariants(built.chunks, retriever, embedder, vectors, weights);
    return;
  }
  const test = await scifactCases('test', retriever);
  const scifact = await scoreCases(test.cases, embedder, vectors, tune ? weights : undefined);
  log(`SciFact test: ${test.cases.length} cases; ${JSON.stringify(scifact.hits)}`);
  if (tune) {
    log(`  test (reported, not chosen on): ${weights.map((w, i) => `${label(w)} ${pct(scifact.byWeight[i]!, test.cases.length)}`).join(', ')}`);
    log('--tune: the hard files, cost and docs/BENCHMARKS.md are left to a run without it');
    return;
  }
  const hard = existsSync(join(DOCS, 'manifest.tsv')) ? await hardFileCases(embedder) : null;
  const hardScores = hard ? await scoreCases(hard.cases, embedder, vectors) : null;
  if (hard) log(`hard files: ${hard.cases.length} cases; ${JSON.stringify(hardScores!.hits)}`);
  const sample = (await built.chunks.rowsWhere('true', ['text', 'search_text'], 256)).map((r) => ({ text: r.text as string, embedText: r.search_text as string }));
  const cost = await costPerChunk(embedder, sample);
  log(`cost per chunk: ${JSON.stringify(cost)}`);

  const machine = `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${availableParallelism()} cores, Node ${process.version}, 1-min load average at start ${load.toFixed(1)}`;
  const row = (name: string, n: number, hits: Record<Method, number>) => `| ${name} | ${n} | ${(Object.keys(METHODS) as Method[]).map((m) => pct(hits[m], n)).join(' | ')} |`;
  const ms = (v: number) => `${v.toFixed(1)} CPU-ms`;
  const section =
    `\`npm run bench:snippets\`, ${new Date().toISOString().slice(0, 10)}, ${machine}, embedder ${embedder.id}. ` +
    'The share of results whose excerpt (what the web page and the CLI show, 320 characters) holds the answer sentence whole.\n\n' +
    `- SciFact: the ${test.claims} test claims with rationale sentences, retrieved as the daemon does (hybrid, first page); each judged abstract in a claim's first 10 results is a case` +
    `${test.unaligned ? ` (${test.unaligned} cases name a sentence past the abstract's last by our splitter, and can never hit)` : ''}.\n` +
    (hard ? `- Hard files: ${hard.withText} of the ${hard.files} files of ../shared/eval/docs yield text (no OCR here); known items: a sentence of a chunk that is not its first, the query half its content words.\n` : '') +
    `- Cost per chunk (${sample.length} SciFact chunks, ${cost.units.toFixed(1)} units each; CPU of the whole process, the least of 3 runs): its own pass ${ms(cost.plain)}; ` +
    `that pass with its units pooled ${ms(cost.pooled)} (${(cost.pooled / cost.plain).toFixed(2)}×), made once at ingest; separate passes over its units ${ms(cost.separate)} ` +
    `(${(cost.separate / cost.plain).toFixed(2)}× a chunk's pass, at every search that shows the chunk in 0.2).\n\n` +
    `| set | cases | ${(Object.keys(METHODS) as Method[]).map((m) => METHODS[m]).join(' | ')} |\n|---|---|${'---|'.repeat(4)}\n` +
    `${row('SciFact test', test.cases.length, scifact.hits)}\n${hard ? `${row('hard files', hard.cases.length, hardScores!.hits)}\n` : ''}\n` +
    `The daemon's answer takes in a neighbour scored within ${NEAR_TIE} of it (answer.ts \`NEAR_TIE\`) in ${scifact.joined} of ${test.cases.length} SciFact cases` +
    `${hard ? ` and ${hardScores!.joined} of ${hard.cases.length} hard-file cases` : ''}; the chosen unit itself (as MCP's snippet shows it) holds or lies in an answer sentence in ${pct(scifact.unitHits, test.cases.length)} of SciFact's.\n`;
  process.stdout.write(`\n${section}\n`);
  if (judgedOnly) {
    log('--judged-only: docs/BENCHMARKS.md left as it is');
    return;
  }
  const bm = join(REPO, 'docs/BENCHMARKS.md');
  const doc = readFileSync(bm, 'utf8');
  const heading = '## Answer snippets';
  writeFileSync(bm, doc.includes(heading) ? doc.replace(/## Answer snippets\n[\s\S]*?(?=\n## |$)/, `${heading}\n\n${section}`) : `${doc.trimEnd()}\n\n${heading}\n\n${section}`);
  built.store.close();
  await embedder.close();
}

await main();
