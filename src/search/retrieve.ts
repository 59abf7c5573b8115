/**
 * First stage and second stage: embed the query (LRU-cached) → vector top-K and keyword top-K from the
 * chunk index (tenant- and filter-scoped inside LanceDB; ids only) → reciprocal rank fusion → reranker
 * on the top N with a deadline. Returns the ranking by chunk id; full rows are read by id only for what
 * is shown or reranked (`hydrate`), since reading text for 2×K candidates costs more than the search.
 * The search service adds documents, projects and highlights. The quality bench calls this directly.
 */
import type { Embedder } from '../models/embedder.js';
import type { ChunkFields, ChunkRef, ChunkSearchScope, KeywordHit, VectorHit } from '../store/lancedb/chunks.js';
import { byScoreThenId, reciprocalRankFusion } from './fusion.js';
import type { QueryVectorCache } from './query-cache.js';
import type { SearchMode } from './query.js';
import { type CandidateReranker, withDeadline } from './rerank/stage.js';
import { keywordQuery } from './terms.js';

export interface ChunkSearcher {
  vectorSearch(q: ChunkSearchScope & { vector: Float32Array }): Promise<VectorHit[]>;
  keywordSearch(q: ChunkSearchScope & { query: string }): Promise<KeywordHit[]>;
  getMany(userId: string, refs: ChunkRef[]): Promise<ChunkFields[]>;
}

export interface RetrieveOptions {
  /** Candidates taken from each first-stage list. */
  candidates: number;
  /** How many fused candidates the reranker sees. */
  rerankDepth: number;
  rerankTimeoutMs: number;
}

export const DEFAULT_RETRIEVE: RetrieveOptions = { candidates: 100, rerankDepth: 50, rerankTimeoutMs: 2000 };

/** What a result's score came from: its rank (1-based) in each first-stage list, and the reranker's score. */
export interface ScoreSources {
  /** Cosine similarity to the query (1 = same direction). */
  vector?: { rank: number; similarity: number };
  /** BM25 score of the keyword match. */
  keyword?: { rank: number; bm25: number };
  rerank?: number;
}

export interface RankedChunk {
  chunk: ChunkRef;
  score: number;
  scores: ScoreSources;
  /** Window scores from the builtin reranker, for highlighting. */
  windows?: { start: number; end: number; score: number }[];
}

export interface Retrieval {
  ranked: RankedChunk[];
  /** Full rows read so far (the reranked head), by chunk id: `hydrate` reuses them. */
  loaded: Map<string, ChunkFields>;
  warnings: string[];
  /** The reranker that ordered the top, when one ran and succeeded. */
  reranked?: string;
}

export interface RetrieveInput {
  userId: string;
  query: string;
  mode: SearchMode;
  /** Results wanted; the pools are at least this big. */
  limit: number;
  projectIds?: string[];
  documentIds?: string[];
  reranker: CandidateReranker | null;
}

export class Retriever {
  constructor(
    private readonly deps: {
      chunks: ChunkSearcher;
      embedder: Pick<Embedder, 'id' | 'embed'>;
      cache?: QueryVectorCache;
      log?: { warn(obj: object, msg: string): void };
    },
    private readonly opts: RetrieveOptions = DEFAULT_RETRIEVE,
  ) {}

  async queryVector(query: string): Promise<Float32Array> {
    const { embedder, cache } = this.deps;
    const hit = cache?.get(embedder.id, query);
    if (hit) return hit;
    const [v] = await embedder.embed([query], { kind: 'query' });
    cache?.set(embedder.id, query, v!);
    return v!;
  }

  async retrieve(input: RetrieveInput): Promise<Retrieval> {
    const k = Math.max(this.opts.candidates, input.limit);
    const scope: ChunkSearchScope = { userId: input.userId, limit: k };
    if (input.projectIds) scope.projectIds = input.projectIds;
    if (input.documentIds) scope.documentIds = input.documentIds;

    const keywords = input.mode === 'vector' ? '' : keywordQuery(input.query);
    const needVector = input.mode !== 'keyword' || input.reranker !== null;
    const vectorP = needVector ? this.queryVector(input.query) : Promise.resolve(undefined);
    const [vector, keywordHits] = await Promise.all([
      vectorP,
      keywords ? this.deps.chunks.keywordSearch({ ...scope, query: keywords }) : Promise.resolve([]),
    ]);
    const vectorHits = input.mode === 'keyword' ? [] : await this.deps.chunks.vectorSearch({ ...scope, vector: vector! });

    const lists: ChunkRef[][] = [];
    if (input.mode !== 'keyword') lists.push(vectorHits);
    if (input.mode !== 'vector') lists.push(keywordHits);
    const fused = reciprocalRankFusion(lists);
    const vectorById = new Map(vectorHits.map((h) => [h.id, h]));
    const keywordById = new Map(keywordHits.map((h) => [h.id, h]));
    const sources = (id: string, ranks: (number | undefined)[]): ScoreSources => {
      const [vRank, kRank] = input.mode === 'keyword' ? [undefined, ranks[0]] : ranks;
      const v = vectorById.get(id);
      const k = keywordById.get(id);
      return {
        ...(vRank && v ? { vector: { rank: vRank, similarity: 1 - v._distance } } : {}),
        ...(kRank && k ? { keyword: { rank: kRank, bm25: k._score } } : {}),
      };
    };
    let ranked: RankedChunk[] = fused.map((c) => ({ chunk: c.item, score: c.score, scores: sources(c.id, c.ranks) }));

    const warnings: string[] = [];
    let loaded = new Map<string, ChunkFields>();
    let reranked: string | undefined;
    if (input.reranker && ranked.length > 0) {
      const depth = Math.max(this.opts.rerankDepth, input.limit);
      const head = ranked.slice(0, depth);
      const top = head[0]!.score || 1;
      const reranker = input.reranker;
      try {
        loaded = await this.hydrate(input.userId, head);
        const outcome = await withDeadline(this.opts.rerankTimeoutMs, (signal) =>
          reranker.score(
            {
              userId: input.userId,
              query: input.query,
              queryVector: vector,
              candidates: head.map((r) => ({ id: r.chunk.id, text: loaded.get(r.chunk.id)?.text ?? '', firstStage: r.score / top })),
            },
            signal,
          ),
        );
        const rescored = head.map((r, i) => ({
          ...r,
          id: r.chunk.id,
          score: outcome.scores[i]!,
          scores: { ...r.scores, rerank: outcome.scores[i]! },
          ...(outcome.windowScores?.get(r.chunk.id) ? { windows: outcome.windowScores.get(r.chunk.id)! } : {}),
        }));
        if (rescored.some((r) => !Number.isFinite(r.score))) throw new Error('reranker returned a non-finite score');
        rescored.sort(byScoreThenId);
        ranked = [...rescored.map(({ id: _id, ...r }) => r), ...ranked.slice(depth)];
        reranked = reranker.id;
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        this.deps.log?.warn({ err, reranker: reranker.id }, 'reranker failed; returning fused order');
        warnings.push(`reranker "${reranker.id}" failed (${why}); results are in first-stage (fused) order`);
      }
    }
    const out: Retrieval = { ranked, loaded, warnings };
    if (reranked) out.reranked = reranked;
    return out;
  }

  /** Full rows of `ranked` by chunk id, reading only those not in `loaded`. A chunk deleted meanwhile is absent. */
  async hydrate(userId: string, ranked: RankedChunk[], loaded: Map<string, ChunkFields> = new Map()): Promise<Map<string, ChunkFields>> {
    const missing = ranked.map((r) => r.chunk).filter((c) => !loaded.has(c.id));
    const out = new Map(loaded);
    for (const c of await this.deps.chunks.getMany(userId, missing)) out.set(c.id, c);
    return out;
  }
}
