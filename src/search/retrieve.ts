/**
 * First stage and second stage: embed the query (LRU-cached) → vector list and keyword list from the
 * chunk index (tenant- and filter-scoped inside LanceDB; ids only) → chunks of documents the search may
 * not show dropped → fusion (fusion.ts) → the relevance floor (floor.ts) → reranker on the top N with
 * a deadline. Returns the whole ranked result list by chunk id; full rows are read by id only for what is
 * shown or reranked (`hydrate`), since reading text for every candidate costs more than the search. The
 * search service adds grouping, pages, documents, projects and highlights. The quality bench calls this
 * directly.
 *
 * Both lists are taken to a fixed depth. A first page reads the keyword list less deep (`firstPageKeywordDepth`):
 * its top ranks the same (SciFact nDCG@10 by depth: docs/BENCHMARKS.md#search-quality) and at a million chunks the
 * keyword search to 1,000 is the largest cost of a search. Later pages read the full list; the cursor remembers
 * what was shown (cursor.ts), so the switch neither repeats nor skips a result.
 */
import { type AnalysedQuery, analyseQuery } from '../language/analyse.js';
import { queryLanguages } from '../language/detect.js';
import type { Embedder } from '../models/embedder.js';
import type { ShownChunk } from '../store/lancedb/chunk-schema.js';
import type { ChunkFilter } from '../store/lancedb/chunk-filter.js';
import type { ChunkRef, ChunkSearchScope, KeywordHit, KeywordQuery, VectorHit } from '../store/lancedb/chunk-search.js';
import { relevanceFloor } from './floor.js';
import { byScoreThenId, reciprocalRankFusion, scoreFusion } from './fusion.js';
import type { QueryVectorCache } from './query-cache.js';
import type { SearchMode } from './query.js';
import { type CandidateReranker, withDeadline } from './rerank/stage.js';
import { keywordQuery } from './terms.js';
import type { SearchStage, SearchTimings } from './timings.js';

export interface ChunkSearcher {
  vectorSearch(q: ChunkSearchScope & { vector: Float32Array }): Promise<VectorHit[]>;
  keywordSearch(q: ChunkSearchScope & KeywordQuery): Promise<KeywordHit[]>;
  getMany(projectIds: readonly string[], refs: ChunkRef[]): Promise<ShownChunk[]>;
}

/**
 * A convex combination of max-normalised scores, or reciprocal rank fusion with its k. `absent` (convex only): what a
 * candidate missing from a list that stopped at its depth counts as there, 0 or the list's last score (fusion.ts).
 */
export type Fusion =
  | { method: 'convex'; vectorWeight: number; keywordWeight: number; absent?: 'zero' | 'last' }
  | { method: 'rrf'; k: number; vectorWeight: number; keywordWeight: number };

export interface RetrieveOptions {
  /** Keyword matches taken (BM25 order) for the full list. A query matching more is answered "at least". */
  keywordDepth: number;
  /** Keyword matches taken for a search's first page (`list: 'first-page'`). */
  firstPageKeywordDepth: number;
  /** Nearest chunks taken from the vector list. */
  vectorDepth: number;
  /** How the two lists are fused (fusion.ts), and each list's weight. */
  fusion: Fusion;
  /**
   * Cosine similarity from which a vector neighbour counts as a match; undefined takes the embedder's
   * calibrated floor (floor.ts), null means none.
   */
  floor?: number | null;
  /** How many fused candidates the reranker sees. */
  rerankDepth: number;
  rerankTimeoutMs: number;
}

export const DEFAULT_RETRIEVE: RetrieveOptions = {
  keywordDepth: 1000,
  // SciFact ranks the same from depth 200 up, and at a million chunks a shallower list is a faster search
  // (docs/BENCHMARKS.md#search-quality, bench/results/search.md).
  firstPageKeywordDepth: 200,
  vectorDepth: 200,
  // Chosen on SciFact train (bench/quality.ts --tune): equal weights; better than every RRF k and weight tried.
  fusion: { method: 'convex', vectorWeight: 0.5, keywordWeight: 0.5, absent: 'last' },
  rerankDepth: 50,
  rerankTimeoutMs: 2000,
};

/**
 * Fusion weights for a query in a language the embedder does not read (bench:languages, docs/search.md#languages):
 * the vector list still counts, as a tie-breaker among keyword matches, but no longer outranks them.
 */
export const UNREAD_LANGUAGE_FUSION = { vectorWeight: 0.25, keywordWeight: 0.75 } as const;

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
  /**
   * The result list, best first: the keyword matches and the vector neighbours at or above the floor — or,
   * when there are none (`weak`), the nearest neighbours.
   */
  ranked: RankedChunk[];
  /** No keyword match and no neighbour at the floor: `ranked` holds only the nearest neighbours. */
  weak: boolean;
  /** False when a list stopped at its depth while still matching: more matches may exist than `ranked` holds. */
  complete: boolean;
  /** The keyword list stopped at its depth: a deeper one may hold more. */
  keywordsCut: boolean;
  /** Full rows read so far (the reranked head), by chunk id: `hydrate` reuses them. */
  loaded: Map<string, ShownChunk>;
  warnings: string[];
  /** The reranker that ordered the top, when one ran and succeeded. */
  reranked?: string;
  /** The query's vector, when the search embedded it (not in keyword mode): answers are scored against it. */
  queryVector?: Float32Array;
  /** The query's keyword forms in the languages it was read in (language/analyse.ts): what highlights look for. */
  forms: string[];
  /** The query's own language, when it could be told (its script, or tinyld sure of it); else null. */
  queryLanguage: string | null;
}

export interface RetrieveInput {
  /** The projects searched (the caller may read each). */
  projectIds: string[];
  /** Who searches (a user id): the query-vector cache reuses only their own queries' vectors. */
  asker: string;
  query: string;
  mode: SearchMode;
  documentIds?: string[];
  reranker: CandidateReranker | null;
  /**
   * The documents (among `documentIds`) whose chunks the search may show; the others' chunks leave both
   * lists before fusion, so they take no rank. Absent: every document.
   */
  visible?: (documentIds: string[]) => Promise<ReadonlySet<string>>;
  /** How deep the keyword list is read: for a first page, or the full list (the default). */
  list?: 'first-page' | 'full';
  /** The search's filters, pushed into both lists' prefilter. */
  filter?: ChunkFilter;
  /** Documents kept out of both lists inside the chunk index (the trash), so their chunks take no place there. */
  exclude?: ChunkSearchScope['exclude'];
}

/**
 * The first-stage ranking of two lists (either may be empty): rank fusion, then the floor. A match has a keyword
 * hit or a similarity at the floor; when nothing matches, the nearest neighbours stand in (`weak`). Pure, so the
 * quality bench can tune fusion and floor over lists it read once.
 */
export function rankFirstStage(
  lists: { vector: readonly VectorHit[]; keyword: readonly KeywordHit[] },
  fusion: RetrieveOptions['fusion'],
  floor: number | null,
  /** The last hit of each list as read, when it stopped at its depth: what lies beyond scored at most that. */
  cut: { vector?: VectorHit; keyword?: KeywordHit } = {},
): { ranked: RankedChunk[]; weak: boolean } {
  const vectorById = new Map(lists.vector.map((h) => [h.id, h]));
  const keywordById = new Map(lists.keyword.map((h) => [h.id, h]));
  const bound = fusion.method === 'convex' && fusion.absent === 'last';
  const fused =
    fusion.method === 'rrf'
      ? reciprocalRankFusion<ChunkRef>([lists.vector, lists.keyword], { k: fusion.k, weights: [fusion.vectorWeight, fusion.keywordWeight] })
      : scoreFusion<ChunkRef>([
          { items: lists.vector, score: (h) => 1 - vectorById.get(h.id)!._distance, weight: fusion.vectorWeight, ...(bound && cut.vector ? { absent: 1 - cut.vector._distance } : {}) },
          { items: lists.keyword, score: (h) => keywordById.get(h.id)!._score, weight: fusion.keywordWeight, ...(bound && cut.keyword ? { absent: cut.keyword._score } : {}) },
        ]);
  const all = fused.map((c): RankedChunk => {
    const [vRank, kRank] = c.ranks;
    const v = vectorById.get(c.id);
    const kw = keywordById.get(c.id);
    const scores: ScoreSources = {
      ...(vRank && v ? { vector: { rank: vRank, similarity: 1 - v._distance } } : {}),
      ...(kRank && kw ? { keyword: { rank: kRank, bm25: kw._score } } : {}),
    };
    return { chunk: c.item, score: c.score, scores };
  });
  const isMatch = (r: RankedChunk) => r.scores.keyword !== undefined || (r.scores.vector !== undefined && (floor === null || r.scores.vector.similarity >= floor));
  const matches = all.filter(isMatch);
  const weak = matches.length === 0 && all.length > 0;
  return { ranked: weak ? all : matches, weak };
}

/**
 * A keyword search's input (the index's words and forms), the analysed query it came from (highlights read its forms)
 * and the query's own language, when it could be told.
 */
export type KeywordInput = Required<KeywordQuery> & { analysed: AnalysedQuery; own: string | null };

/**
 * What the keyword list is asked for a query: its words as typed, and its forms in the languages it is read in
 * (language/detect.ts; `library` is asked for the searched library's languages only when the query's own cannot be
 * told). Benches that read keyword lists themselves ask through it, so that they read the lists a search reads
 * (without `forms` the index matches only words that are their own stem).
 */
export async function keywordInput(query: string, library: () => Promise<readonly string[]>): Promise<KeywordInput> {
  const read = await queryLanguages(query, library);
  const analysed = analyseQuery(query, read.languages);
  return { query: keywordQuery(query), forms: analysed.text, analysed, own: read.own };
}

/** The vector list's order: nearest first, equal distances by id (the index returns ties in no fixed order). */
export const nearestFirst = (a: VectorHit, b: VectorHit): number => a._distance - b._distance || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The keyword list's order: best BM25 first, equal scores by id. */
export const bestMatchFirst = (a: KeywordHit, b: KeywordHit): number => b._score - a._score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export class Retriever {
  private readonly floor: number | null;

  constructor(
    private readonly deps: {
      chunks: ChunkSearcher;
      embedder: Pick<Embedder, 'id' | 'embed' | 'languages'>;
      cache?: QueryVectorCache;
      log?: { warn(obj: object, msg: string): void };
      /** Told each stage's time. */
      timings?: Pick<SearchTimings, 'stage'>;
      /**
       * The languages the documents of these projects are in, most documents first: what a query whose own language
       * cannot be told is analysed in (language/detect.ts). Absent: English.
       */
      libraryLanguages?: (projectIds: readonly string[]) => Promise<readonly string[]>;
    },
    private readonly opts: RetrieveOptions = DEFAULT_RETRIEVE,
  ) {
    this.floor = opts.floor === undefined ? relevanceFloor(deps.embedder.id) : opts.floor;
  }

  /** The embedder whose vectors this retriever compares (its floor is that embedder's). */
  get embedderId(): string {
    return this.deps.embedder.id;
  }

  /** The query's vector, from `asker`'s own cached ones when it is there (query-cache.ts). */
  async queryVector(query: string, asker: string): Promise<Float32Array> {
    const { embedder, cache } = this.deps;
    const hit = cache?.get(embedder.id, asker, query);
    if (hit) return hit;
    const started = performance.now();
    const [v] = await embedder.embed([query], { kind: 'query' });
    this.deps.timings?.stage('embed', (performance.now() - started) / 1000);
    cache?.set(embedder.id, asker, query, v!);
    return v!;
  }

  /**
   * The fusion for a query in `language`: the configured one, unless the embedder is known not to read that language
   * (the built-in model reads English): its neighbours of a Korean question are then little more than chance, and
   * the keyword list leads (UNREAD_LANGUAGE_FUSION).
   */
  private fusionFor(language: string | null): Fusion {
    const fusion = this.opts.fusion;
    if (this.reads(language) || fusion.method !== 'convex') return fusion;
    return { ...fusion, ...UNREAD_LANGUAGE_FUSION };
  }

  /** False when the embedder is known not to read `language` (a text in it has vectors little better than chance). */
  reads(language: string | null | undefined): boolean {
    const reads = this.deps.embedder.languages;
    return !language || !reads || reads.includes(language);
  }

  /** What the keyword list is asked for a query searched in these projects (`keywordInput`, with their languages). */
  keywordInput(query: string, projectIds: readonly string[]): Promise<KeywordInput> {
    const library = this.deps.libraryLanguages;
    return keywordInput(query, async () => (library ? library(projectIds) : []));
  }

  async retrieve(input: RetrieveInput): Promise<Retrieval> {
    const scope: Omit<ChunkSearchScope, 'limit'> = { projectIds: input.projectIds };
    if (input.documentIds) scope.documentIds = input.documentIds;
    if (input.filter) scope.filter = input.filter;
    if (input.exclude?.documentIds.length) scope.exclude = input.exclude;
    const { vectorDepth } = this.opts;
    const keywordDepth = input.list === 'first-page' ? Math.min(this.opts.firstPageKeywordDepth, this.opts.keywordDepth) : this.opts.keywordDepth;

    const needVector = input.mode !== 'keyword' || input.reranker !== null;
    const vectorP = needVector ? this.queryVector(input.query, input.asker) : Promise.resolve(undefined);
    const asked = await this.keywordInput(input.query, input.projectIds);
    const { analysed } = asked;
    const keywords = input.mode === 'vector' ? '' : asked.query;
    const forms = input.mode === 'vector' ? '' : asked.forms;
    const fusion = this.fusionFor(asked.own);
    // The vector list starts once the query is embedded, beside the keyword list rather than after it: at a
    // million chunks the keyword list outlasts the embedding, and the two searches overlap (stage times:
    // docs/BENCHMARKS.md#search-latency).
    const timed = this.deps.timings ? timedStage(this.deps.timings) : <T>(_: SearchStage, work: () => Promise<T>) => work();
    const [vector, keywordAll, vectorAll] = await Promise.all([
      vectorP,
      keywords || forms ? timed('keyword', () => this.deps.chunks.keywordSearch({ ...scope, limit: keywordDepth, query: keywords, forms })) : Promise.resolve([]),
      input.mode === 'keyword' ? Promise.resolve([]) : vectorP.then((v) => timed('vector', () => this.deps.chunks.vectorSearch({ ...scope, limit: vectorDepth, vector: v! }))),
    ]);

    // Equal scores come back from the index in no fixed order: order them by id, so every page ranks alike.
    vectorAll.sort(nearestFirst);
    keywordAll.sort(bestMatchFirst);
    const visible = input.visible;
    const shown = visible ? await timed('visibility', () => visible([...new Set([...vectorAll, ...keywordAll].map((h) => h.document_id))])) : null;
    const vectorHits = shown ? vectorAll.filter((h) => shown.has(h.document_id)) : vectorAll;
    const keywordHits = shown ? keywordAll.filter((h) => shown.has(h.document_id)) : keywordAll;

    const fusionStarted = performance.now();
    const cut = { ...(vectorAll.length >= vectorDepth ? { vector: vectorAll.at(-1) } : {}), ...(keywordAll.length >= keywordDepth ? { keyword: keywordAll.at(-1) } : {}) };
    const first = rankFirstStage({ vector: vectorHits, keyword: keywordHits }, fusion, this.floor, cut);
    this.deps.timings?.stage('fusion', (performance.now() - fusionStarted) / 1000);
    const { weak } = first;
    let { ranked } = first;
    const floor = this.floor;
    // More matches may exist than were read: the keyword list filled its depth, or the vector list did with its last at the floor.
    const lastVector = vectorAll.at(-1);
    const vectorTruncated = vectorAll.length >= vectorDepth && lastVector !== undefined && (floor === null || 1 - lastVector._distance >= floor);
    const keywordsCut = keywordAll.length >= keywordDepth;
    const complete = weak || (!keywordsCut && !vectorTruncated);

    const warnings: string[] = [];
    let loaded = new Map<string, ShownChunk>();
    let reranked: string | undefined;
    if (input.reranker && ranked.length > 0) {
      const depth = this.opts.rerankDepth;
      const head = ranked.slice(0, depth);
      const top = head[0]!.score || 1;
      const reranker = input.reranker;
      const rerankStarted = performance.now();
      try {
        loaded = await this.hydrate(input.projectIds, head);
        const outcome = await withDeadline(this.opts.rerankTimeoutMs, (signal) =>
          reranker.score(
            {
              projectIds: input.projectIds,
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
        this.deps.timings?.stage('rerank', (performance.now() - rerankStarted) / 1000);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        this.deps.log?.warn({ err, reranker: reranker.id }, 'reranker failed; returning fused order');
        warnings.push(`reranker "${reranker.id}" failed (${why}); results are in first-stage (fused) order`);
      }
    }
    const out: Retrieval = { ranked, weak, complete, keywordsCut, loaded, warnings, forms: analysed.forms, queryLanguage: asked.own };
    if (reranked) out.reranked = reranked;
    if (vector) out.queryVector = vector;
    return out;
  }

  /** Full rows of `ranked` by chunk id, reading only those not in `loaded`. A chunk deleted meanwhile is absent. */
  async hydrate(projectIds: readonly string[], ranked: RankedChunk[], loaded: Map<string, ShownChunk> = new Map()): Promise<Map<string, ShownChunk>> {
    const missing = ranked.map((r) => r.chunk).filter((c) => !loaded.has(c.id));
    const out = new Map(loaded);
    for (const c of await this.deps.chunks.getMany(projectIds, missing)) out.set(c.id, c);
    return out;
  }
}

/** Runs `work` and tells `timings` how long it took (when it succeeded). */
function timedStage(timings: Pick<SearchTimings, 'stage'>) {
  return async <T>(stage: SearchStage, work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const out = await work();
    timings.stage(stage, (performance.now() - started) / 1000);
    return out;
  };
}
