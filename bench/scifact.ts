/**
 * SciFact (BEIR layout, ../shared/eval/scifact) for the benches: corpus, queries, qrels, and the
 * document → chunks step through the product's own chunker. Benchmark data only; never shipped.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chunkDocument } from '../src/ingest/chunk.js';
import type { Chunk, TokenCounter } from '../src/ingest/types.js';

export const SCIFACT = resolve(import.meta.dirname, '../../shared/eval/scifact');
export const available = (): boolean => existsSync(join(SCIFACT, 'corpus.jsonl'));

export interface CorpusDoc {
  id: string;
  title: string;
  text: string;
}

export function readCorpus(): CorpusDoc[] {
  return readFileSync(join(SCIFACT, 'corpus.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const d = JSON.parse(l) as { _id: string; title: string; text: string };
      return { id: d._id, title: d.title, text: d.text };
    });
}

/** Queries of a split (those with judgments in qrels/<split>.tsv), with their relevant doc ids. */
export function readSplit(split: 'train' | 'test'): { id: string; text: string; relevant: Map<string, number> }[] {
  const qrels = new Map<string, Map<string, number>>();
  for (const line of readFileSync(join(SCIFACT, 'qrels', `${split}.tsv`), 'utf8').split('\n').slice(1)) {
    const [q, d, s] = line.split('\t');
    if (!q || !d) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q)!.set(d, Number(s));
  }
  const queries = readFileSync(join(SCIFACT, 'queries.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { _id: string; text: string });
  return queries.filter((q) => qrels.has(q._id)).map((q) => ({ id: q._id, text: q.text, relevant: qrels.get(q._id)! }));
}

/** One abstract as the daemon would chunk an uploaded text: the title as the document title, the abstract as a paragraph. */
export function chunkAbstract(doc: CorpusDoc, tokenizer: TokenCounter, maxTokens: number, overlapTokens: number): Chunk[] {
  return chunkDocument(
    { title: doc.title, blocks: [{ text: doc.text, headings: [], kind: 'paragraph' }], warnings: [] },
    { tokenizer, maxTokens, overlapTokens, title: doc.title },
  );
}

/** nDCG@k with binary/graded gains (BEIR's definition: gain = rel, discount log2(rank+1)). */
export function ndcgAt(k: number, ranking: string[], relevant: Map<string, number>): number {
  let dcg = 0;
  ranking.slice(0, k).forEach((d, i) => (dcg += (relevant.get(d) ?? 0) / Math.log2(i + 2)));
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, k);
  let idcg = 0;
  ideal.forEach((g, i) => (idcg += g / Math.log2(i + 2)));
  return idcg > 0 ? dcg / idcg : 0;
}

export function recallAt(k: number, ranking: string[], relevant: Map<string, number>): number {
  const rel = [...relevant].filter(([, g]) => g > 0).map(([d]) => d);
  if (rel.length === 0) return 0;
  const top = new Set(ranking.slice(0, k));
  return rel.filter((d) => top.has(d)).length / rel.length;
}

/** Chunk ranking → document ranking, a document scoring as its best chunk (first occurrence). */
export function docRanking(chunkDocIds: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const d of chunkDocIds) if (!seen.has(d)) (seen.add(d), out.push(d));
  return out;
}

/** Deterministic PRNG (mulberry32), so benches that sample build and test the same way every run. */
import { rng } from '../test/helpers/rng.js';

export { rng };

/**
 * Two-sided paired randomization test on per-query scores (Smucker et al., CIKM 2007): how often
 * randomly swapping each query's pair gives a mean difference at least as large as the observed one.
 */
export function pairedPermutationP(a: number[], b: number[], rounds = 10_000): number {
  const diffs = a.map((x, i) => x - b[i]!);
  const observed = Math.abs(diffs.reduce((s, d) => s + d, 0));
  const rand = rng(1);
  let atLeast = 0;
  for (let r = 0; r < rounds; r++) {
    let sum = 0;
    for (const d of diffs) sum += rand() < 0.5 ? d : -d;
    if (Math.abs(sum) >= observed - 1e-12) atLeast++;
  }
  return (atLeast + 1) / (rounds + 1);
}
