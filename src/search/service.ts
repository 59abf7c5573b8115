/**
 * POST /api/v1/search behind a capability: retrieval (retrieve.ts), then hydration of each chunk's
 * document and project through the SQLite stores, then highlights. Results whose document vanished
 * between the two reads are dropped, never returned half-filled.
 */
import { AppError } from '../core/errors.js';
import type { ForegroundGate } from '../core/foreground.js';
import { highlights, type Range } from './highlights.js';
import type { SearchQuery } from './query.js';
import type { CandidateReranker } from './rerank/stage.js';
import type { Retriever, ScoreSources } from './retrieve.js';
import { sentenceWindows } from './sentence-windows.js';
import { queryTerms } from './terms.js';

export interface SearchResult {
  chunk_id: string;
  score: number;
  scores: ScoreSources;
  text: string;
  highlights: Range[];
  page_start?: number;
  page_end?: number;
  heading?: string;
  /** Present (true) when the chunk's text was recognised by OCR from a page image. */
  ocr?: true;
  document: { id: string; filename: string; content_type: string };
  project: { id: string; name: string };
}

export interface SearchResponse {
  query: string;
  took_ms: number;
  results: SearchResult[];
  warnings?: string[];
}

export interface SearchServiceDeps {
  retriever: Retriever;
  /** The configured reranker, or null for `none` (fusion order). */
  reranker: CandidateReranker | null;
  documents: {
    getMany(
      userId: string,
      ids: string[],
    ): Promise<{ id: string; filename: string; contentType: string; status: string; readyAt: number | null; replacedAt: number | null }[]>;
  };
  projects: { names(userId: string, ids: string[]): Promise<{ id: string; name: string }[]> };
  /** True while the stored vectors come from another embedder (search answers 409). */
  reindexRequired: () => boolean;
  now?: () => number;
  /** Marks searches as foreground work, so ingestion gives way while one runs. */
  foreground?: Pick<ForegroundGate, 'run'>;
  /** Wall clock (ms), the one the document store stamps ready_at / replaced_at with. */
  clock?: () => number;
}

/**
 * Whether a search that began at `asOf` shows a document: it was ready before then, and not yet replaced by a
 * newer version at its path. Chunks of a document still being written never show. When a new version becomes
 * ready, the old one is replaced in the same transaction at the same instant, so each search sees exactly one of
 * them: a search begun before the swap keeps the old one (its chunks are kept for a grace period), one begun after
 * sees the new one (its chunks were durable before it became ready). Strict `<`: a swap in the search's own
 * millisecond counts as after it.
 */
export function visibleAt(d: { status: string; readyAt: number | null; replacedAt: number | null }, asOf: number): boolean {
  return d.status === 'ready' && (d.readyAt ?? 0) < asOf && (d.replacedAt === null || d.replacedAt >= asOf);
}

export class SearchService {
  constructor(private readonly deps: SearchServiceDeps) {}

  search(q: SearchQuery): Promise<SearchResponse> {
    return this.deps.foreground ? this.deps.foreground.run(() => this.searchNow(q)) : this.searchNow(q);
  }

  private async searchNow(q: SearchQuery): Promise<SearchResponse> {
    const now = this.deps.now ?? (() => performance.now());
    const started = now();
    // The moment this search looks at: documents as they were then (see `visibleAt`).
    const asOf = (this.deps.clock ?? Date.now)();
    if (this.deps.reindexRequired()) {
      throw new AppError('conflict', 'the index is being rebuilt for a new embedding model; search is available again when re-indexing finishes (see `docsearch reindex`)');
    }
    const input = {
      userId: q.userId,
      query: q.query,
      mode: q.mode,
      limit: q.limit,
      reranker: q.rerank ? this.deps.reranker : null,
      ...(q.projectIds ? { projectIds: q.projectIds } : {}),
      ...(q.documentIds ? { documentIds: q.documentIds } : {}),
    };
    const { ranked, loaded, warnings } = await this.deps.retriever.retrieve(input);

    // Hydrate a little more than asked, so chunks of a just-deleted document can be skipped.
    const head = ranked.slice(0, q.limit + 10);
    const [rows, docList] = await Promise.all([
      this.deps.retriever.hydrate(q.userId, head, loaded),
      this.deps.documents.getMany(q.userId, [...new Set(head.map((r) => r.chunk.document_id))]),
    ]);
    const docs = new Map(docList.filter((d) => visibleAt(d, asOf)).map((d) => [d.id, d]));
    const projectIds = [...new Set([...rows.values()].map((c) => c.project_id))];
    const projects = new Map((await this.deps.projects.names(q.userId, projectIds)).map((p) => [p.id, p]));

    const terms = queryTerms(q.query);
    const results: SearchResult[] = [];
    for (const r of head) {
      if (results.length >= q.limit) break;
      const chunk = rows.get(r.chunk.id);
      const doc = docs.get(r.chunk.document_id);
      const project = chunk && projects.get(chunk.project_id);
      if (!chunk || !doc || !project) continue;
      const windows = r.windows ?? sentenceWindows(chunk.text);
      const result: SearchResult = {
        chunk_id: chunk.id,
        score: r.score,
        scores: r.scores,
        text: chunk.text,
        highlights: highlights(chunk.text, windows, terms, r.windows?.map((w) => w.score)),
        document: { id: doc.id, filename: doc.filename, content_type: doc.contentType },
        project: { id: project.id, name: project.name },
      };
      if (chunk.page_start !== null) result.page_start = chunk.page_start;
      if (chunk.page_end !== null) result.page_end = chunk.page_end;
      if (chunk.heading !== null) result.heading = chunk.heading;
      if (chunk.ocr) result.ocr = true;
      results.push(result);
    }
    const response: SearchResponse = { query: q.query, took_ms: Math.round(now() - started), results };
    if (warnings.length) response.warnings = warnings;
    return response;
  }
}
