/**
 * POST /api/v1/search behind a capability: retrieval (retrieve.ts) over the documents this search may show,
 * then grouping (group.ts) and the page the cursor points at (page.ts, cursor.ts), then hydration of the page's
 * chunks, documents and projects, then highlights.
 *
 * Counts say only what is known: `total` is the length of the result list, `eq` when both lists ended
 * before their depth, `gte` when one stopped while still matching. A first page reads a shorter keyword list
 * (retrieve.ts), later pages the full one. Paging to the end returns every result of the full list once, also
 * when the library changes meanwhile (see cursor.ts).
 */
import { AppError } from '../core/errors.js';
import type { ForegroundGate } from '../core/foreground.js';
import { answerUnits } from '../ingest/answer-units.js';
import type { ShownChunk } from '../store/lancedb/chunk-schema.js';
import { decodeUnits } from '../store/lancedb/unit-vectors.js';
import { type CursorCodec, type CursorState, searchDigest } from './cursor.js';
import { type DocumentGroup, groupByDocument } from './group.js';
import { analysedQueryWords, chooseAnswer, type QueryWords, scoresFromWindows } from './answer.js';
import { HAN, KANA } from '../language/scripts.js';
import { highlights, type Range } from './highlights.js';
import { cutPage, type PageCut } from './page.js';
import type { FacetCounter, FacetUnit, FacetValue } from './facets.js';
import type { FilterResolver } from './filters.js';
import type { SearchQuery } from './query.js';
import type { CandidateReranker } from './rerank/stage.js';
import type { RankedChunk, Retrieval, Retriever, ScoreSources } from './retrieve.js';
import { citation, type Citation } from './citation.js';
import type { SentenceWindow } from '../ingest/sentence-windows.js';
import { queryTerms, TermMatcher } from './terms.js';
import type { SearchTimings } from './timings.js';

export interface SearchPassage {
  chunk_id: string;
  score: number;
  scores: ScoreSources;
  text: string;
  /** The sentence(s) of `text` that best answer the query (answer.ts): a slice of `text`, marked in `highlights`. */
  snippet: string;
  highlights: Range[];
  page_start?: number;
  page_end?: number;
  heading?: string;
  /** Present (true) when the chunk's text was recognised by OCR from a page image. */
  ocr?: true;
  /** What `page_start`–`page_end` count (page, slide, row, chapter), for types that have such a unit. */
  citation?: Citation;
}

export interface DocumentRef {
  id: string;
  filename: string;
  content_type: string;
  /** The relative path it was synced from (`upload --sync`), when it has one. */
  path?: string;
}

export interface ProjectRef {
  id: string;
  name: string;
}

export interface SearchResult extends SearchPassage {
  document: DocumentRef;
  project: ProjectRef;
}

export interface DocumentResult {
  document: DocumentRef;
  project: ProjectRef;
  /** The document's score: its best passage's. */
  score: number;
  /** How many of its passages are in the result list. */
  matches: number;
  /** Its best passages, best first (at most `passages_per_document`). */
  passages: SearchPassage[];
}

/** How many results the whole list holds: exactly (`eq`), or at least (`gte`) when a list stopped at its depth. */
export interface Total {
  value: number;
  relation: 'eq' | 'gte';
}

interface ResponseBase {
  query: string;
  took_ms: number;
  /** Passages (or documents, when grouped) over all pages. */
  total: Total;
  /** No keyword match and nothing close by meaning: the results are only the nearest few (WEAK_RESULTS). */
  weak: boolean;
  /** The next page's cursor; null on the last page. */
  next_cursor: string | null;
  /** Documents in the searched scope still queued or being processed: results may be incomplete. */
  indexing: number;
  warnings?: string[];
  /** Per facet asked, how many results of the whole list carry each value (facets.ts). */
  facets?: Record<string, FacetValue[]>;
}

export interface PassagesResponse extends ResponseBase {
  results: SearchResult[];
}

export interface DocumentsResponse extends ResponseBase {
  documents: DocumentResult[];
}

export type SearchResponse = PassagesResponse | DocumentsResponse;

/** A response and where its page sits, for clients that page both ways (the web page). */
export interface SearchPage {
  response: SearchResponse;
  /** 0-based index of the page's first result in the whole list. */
  start: number;
  /** The cursor of the page before, or null on the first page. */
  previousCursor: string | null;
}

interface DocumentRow {
  id: string;
  filename: string;
  contentType: string;
  path: string | null;
}

export interface SearchServiceDeps {
  retriever: Retriever;
  /** The configured reranker, or null for `none` (fusion order). */
  reranker: CandidateReranker | null;
  documents: {
    /**
     * Which candidate documents a search begun at `asOf` (wall clock, ms) shows: ready before then, not yet replaced
     * by then (the rule: DocumentStore.visibleAmong). A later page keeps its first page's moment.
     */
    visibleAmong(projectIds: readonly string[], ids: string[], asOf: number): Promise<ReadonlySet<string>>;
    /** What a result shows of each document (those outside the projects are absent). */
    searchFields(projectIds: readonly string[], ids: string[]): Promise<DocumentRow[]>;
    /** The projects' documents (of `documentIds`, when given) still queued or processing. */
    countIndexing(projectIds: readonly string[], documentIds?: string[]): Promise<number>;
    /** The projects' trashed documents and their chunks: kept out of the candidate lists (DocumentStore.trashedIn). */
    trashedIn?(projectIds: readonly string[]): Promise<{ documentIds: string[]; rows: number }>;
    /** The languages of the projects' ready documents, most documents first (DocumentStore.languagesIn). */
    languagesIn(projectIds: readonly string[]): Promise<{ language: string }[]>;
  };
  projects: { names(ids: readonly string[]): Promise<ProjectRef[]> };
  /** Seals and opens page cursors. */
  cursors: CursorCodec;
  /** True while the stored vectors come from another embedder (search answers 409). */
  reindexRequired: () => boolean;
  now?: () => number;
  /** Marks searches as foreground work, so ingestion gives way while one runs. */
  foreground?: Pick<ForegroundGate, 'run'>;
  /** Wall clock (ms), the one the document store stamps ready_at / replaced_at with. */
  clock?: () => number;
  /** Told how long each search and its page's hydration took (the retriever tells its own stages). */
  timings?: SearchTimings;
  /** Turns a search's filters into the chunk columns' values (without it, a search with filters is refused). */
  filters?: FilterResolver;
  /** Counts facets (without it, none are counted). */
  facets?: FacetCounter;
}

/** A weak answer (nothing matched) shows at most this many of the nearest results, on one page. */
export const WEAK_RESULTS = 5;

function cited<P extends SearchPassage>(p: P, d: DocumentRow): P {
  const c = citation(d.contentType, p);
  return c ? { ...p, citation: c } : p;
}

const documentRef = (d: DocumentRow): DocumentRef => ({
  id: d.id,
  filename: d.filename,
  content_type: d.contentType,
  ...(d.path !== null ? { path: d.path } : {}),
});

export class SearchService {
  constructor(private readonly deps: SearchServiceDeps) {}

  /** One page of results, as POST /api/v1/search answers. */
  async search(q: SearchQuery): Promise<SearchResponse> {
    return (await this.searchPage(q)).response;
  }

  searchPage(q: SearchQuery): Promise<SearchPage> {
    return this.deps.foreground ? this.deps.foreground.run(() => this.searchNow(q)) : this.searchNow(q);
  }

  private async searchNow(q: SearchQuery): Promise<SearchPage> {
    const now = this.deps.now ?? (() => performance.now());
    const started = now();
    if (this.deps.reindexRequired()) {
      throw new AppError('conflict', 'the index is being rebuilt for a new embedding model; search is available again when re-indexing finishes (see `docsearch reindex`)');
    }
    const digest = searchDigest(q);
    const cursor: CursorState | null = q.cursor === undefined ? null : this.deps.cursors.decode(q.userId, digest, q.cursor);
    // The moment this search looks at (see `visibleAmong`): its first page's, on every later page.
    const asOf = cursor?.asOf ?? (this.deps.clock ?? Date.now)();
    const documents = q.documentIds ? { documentIds: q.documentIds } : {};

    const visible = (ids: string[]) => this.deps.documents.visibleAmong(q.scope, ids, asOf);
    const [filter, exclude] = await Promise.all([q.filters ? this.chunkFilter(q) : undefined, this.deps.documents.trashedIn?.(q.scope)]);
    const retrieve = (list: 'first-page' | 'full') =>
      this.deps.retriever.retrieve({
        projectIds: q.scope,
        asker: q.userId,
        query: q.query,
        mode: q.mode,
        reranker: q.rerank ? this.deps.reranker : null,
        visible,
        list,
        ...documents,
        ...(filter ? { filter } : {}),
        ...(exclude ? { exclude } : {}),
      });
    // A first page (nothing shown yet; also the web page's way back to it) reads the shorter first-page list.
    const firstPage = (cursor?.shown.length ?? 0) === 0;
    const [first, indexing] = await Promise.all([retrieve(firstPage ? 'first-page' : 'full'), this.deps.documents.countIndexing(q.scope, q.documentIds)]);
    let retrieval = first;
    let cut = this.cut(q, retrieval, cursor);
    // The short list ran out before the page did (grouping folds many chunks into few documents) while the
    // keyword list holds more: this page needs the full list.
    if (firstPage && retrieval.keywordsCut && cut.page.next === null) {
      retrieval = await retrieve('full');
      cut = this.cut(q, retrieval, cursor);
    }
    const { ranked, weak, complete, warnings } = retrieval;
    const { groups, length, page } = cut;
    const seal = (shown: number[] | null) => (shown ? this.deps.cursors.encode(q.userId, digest, { asOf, shown }) : null);

    const base = {
      query: q.query,
      took_ms: 0,
      total: { value: length, relation: complete ? 'eq' : 'gte' } as Total,
      weak,
      next_cursor: seal(page.next),
      indexing,
    };
    const shown = (groups ? page.at.map((i) => groups[i]!.passages) : page.at.map((i) => [ranked[i]!])).flat();
    const hydrateStarted = performance.now();
    const [passage, docs, facets] = await Promise.all([this.passages(q, shown, retrieval, new Set(retrieval.forms)), this.documentsOf(q.scope, shown), this.facets(q, cut, ranked)]);
    this.deps.timings?.stage('hydrate', (performance.now() - hydrateStarted) / 1000);
    let response: SearchResponse;
    if (groups) {
      const documents: DocumentResult[] = [];
      for (const g of page.at.map((i) => groups[i]!)) {
        const doc = docs.get(g.documentId);
        const passages = g.passages.map(passage).filter((p) => p !== null);
        if (!doc || !passages[0]) continue;
        // A weak answer's list is nearest neighbours, not matches: it counts only the passages it shows.
        const matches = weak ? passages.length : g.matches;
        documents.push({ document: documentRef(doc), project: passages[0].project, score: g.score, matches, passages: passages.map(({ project: _p, ...p }) => cited(p, doc)) });
      }
      response = { ...base, documents };
    } else {
      const results: SearchResult[] = [];
      for (const r of shown) {
        const p = passage(r);
        const doc = docs.get(r.chunk.document_id);
        if (p && doc) results.push({ ...cited(p, doc), document: documentRef(doc) });
      }
      response = { ...base, results };
    }
    if (warnings.length) response.warnings = warnings;
    if (facets) response.facets = facets;
    response.took_ms = Math.round(now() - started);
    this.deps.timings?.search((now() - started) / 1000);
    return { response, start: page.start, previousCursor: seal(page.previous) };
  }

  /** The search's filters as the chunk columns' values (resolved in the projects searched). */
  private async chunkFilter(q: SearchQuery) {
    if (!this.deps.filters) throw new AppError('invalid_request', 'this server cannot filter searches');
    const started = performance.now();
    const filter = await this.deps.filters.chunkFilter(q.scope, q.filters!);
    this.deps.timings?.stage('filters', (performance.now() - started) / 1000);
    return filter;
  }

  /** The facets asked, counted over the whole list in the response's unit (the list `total` counts). */
  private async facets(q: SearchQuery, cut: { groups: DocumentGroup[] | null; length: number }, ranked: RankedChunk[]): Promise<Record<string, FacetValue[]> | undefined> {
    if (!q.facets?.length || !this.deps.facets) return undefined;
    // A document counts under the values of all its passages in the list (its language facet), not only those shown.
    const passagesOf = new Map<string, RankedChunk['chunk'][]>();
    if (cut.groups) for (const r of ranked) passagesOf.set(r.chunk.document_id, [...(passagesOf.get(r.chunk.document_id) ?? []), r.chunk]);
    const units: FacetUnit[] = cut.groups
      ? cut.groups.slice(0, cut.length).map((g) => ({ documentId: g.documentId, chunks: passagesOf.get(g.documentId) ?? g.passages.map((p) => p.chunk) }))
      : ranked.slice(0, cut.length).map((r) => ({ documentId: r.chunk.document_id, chunks: [r.chunk] }));
    const started = performance.now();
    const counts = await this.deps.facets.count(q.scope, units, q.facets);
    this.deps.timings?.stage('facets', (performance.now() - started) / 1000);
    return counts;
  }

  /** The whole list in the response's unit (a weak answer is only its first page: the nearest, not matches) and the page of it the cursor points at. */
  private cut(q: SearchQuery, retrieval: Retrieval, cursor: CursorState | null): { groups: DocumentGroup[] | null; length: number; page: PageCut } {
    const { ranked, weak } = retrieval;
    const groups = q.group === 'document' ? groupByDocument(ranked, q.passagesPerDocument) : null;
    const ids = groups ? groups.map((g) => g.documentId) : ranked.map((r) => r.chunk.id);
    const length = weak ? Math.min(ids.length, q.limit, WEAK_RESULTS) : ids.length;
    return { groups, length, page: cutPage(ids.slice(0, length), cursor?.shown ?? [], q.limit) };
  }

  /** The shown chunks' documents by id; one deleted since the search checked it is absent (its results are left out). */
  private async documentsOf(scope: readonly string[], shown: RankedChunk[]): Promise<Map<string, DocumentRow>> {
    const ids = [...new Set(shown.map((r) => r.chunk.document_id))];
    return new Map((await this.deps.documents.searchFields(scope, ids)).map((d) => [d.id, d]));
  }

  /**
   * The shown chunks' rows (reading only those not loaded yet) and projects, and each one's answer; then each chunk
   * as a passage with its snippet and highlights, or null when it was deleted since the lists were read.
   */
  private async passages(
    q: SearchQuery,
    shown: RankedChunk[],
    retrieval: Retrieval,
    forms: ReadonlySet<string>,
  ): Promise<(r: RankedChunk) => (SearchPassage & { project: ProjectRef }) | null> {
    const rows = await this.deps.retriever.hydrate(q.scope, shown, retrieval.loaded);
    const projectIds = [...new Set([...rows.values()].map((c) => c.project_id))];
    const projects = new Map((await this.deps.projects.names(projectIds)).map((p) => [p.id, p]));
    const terms = new TermMatcher(queryTerms(q.query));
    const answers = this.answers(q.query, retrieval.queryLanguage, terms, shown, rows, retrieval.queryVector);
    return (r) => {
      const chunk = rows.get(r.chunk.id);
      const project = chunk && projects.get(chunk.project_id);
      if (!chunk || !project) return null;
      const answer = answers.get(chunk.id);
      const p: SearchPassage & { project: ProjectRef } = {
        chunk_id: chunk.id,
        score: r.score,
        scores: r.scores,
        text: chunk.text,
        snippet: answer ? chunk.text.slice(answer.start, answer.end) : '',
        highlights: highlights(chunk.text, answer, terms, { forms, language: chunk.language ?? null }),
        project,
      };
      if (chunk.page_start !== null) p.page_start = chunk.page_start;
      if (chunk.page_end !== null) p.page_end = chunk.page_end;
      if (chunk.heading !== null) p.heading = chunk.heading;
      if (chunk.ocr) p.ocr = true;
      return p;
    };
  }

  /**
   * Each shown chunk's answer unit, chosen with the query's terms and, where known, each unit's meaning: the cosine of
   * its stored vector (ingest/unit-vectors.ts) to the query's, or the builtin reranker's window scores. No model call:
   * a chunk stored before units existed (the backfill has not reached it yet) is answered by terms, as is a
   * keyword-mode search (no query vector).
   */
  private answers(
    query: string,
    queryLanguage: string | null,
    terms: TermMatcher,
    shown: RankedChunk[],
    rows: Map<string, ShownChunk>,
    queryVector: Float32Array | undefined,
  ): Map<string, SentenceWindow> {
    const out = new Map<string, SentenceWindow>();
    // A question in another language than English, asked of a chunk in that language, is read as the keyword index
    // reads them both; any other pair (an English question, one in another language than the chunk's, one whose
    // language could not be told) by English stems and meaning, as before. Han alone does not tell Chinese from
    // Japanese: such a question is read in the chunk's language of the two.
    const own = queryLanguage && queryLanguage !== 'en' ? queryLanguage : null;
    const cj = own === null && (HAN.test(query) || KANA.test(query));
    const readAs = (language: string | null): string | null =>
      language && language !== 'en' && (language === own || (cj && (language === 'zh' || language === 'ja'))) ? language : null;
    const readers = new Map<string, QueryWords>();
    for (const r of shown) {
      const row = rows.get(r.chunk.id);
      if (!row || out.has(row.id)) continue;
      const stored = row.units ? decodeUnits(row.units) : null;
      const units = stored?.units ?? answerUnits(row.text);
      const language = readAs(row.language ?? null);
      let words: QueryWords | undefined;
      if (language) {
        words = readers.get(language);
        if (!words) readers.set(language, (words = analysedQueryWords(query, language)));
      }
      // The meaning of a unit in a language the model does not read is noise that outweighed the words (of the
      // evaluation set's Chinese questions words alone showed the answer for 8 of 10, with meaning for 1).
      const meaning = language && !this.deps.retriever.reads(language)
        ? undefined
        : stored?.scored && queryVector
          ? stored.scores(queryVector)
          : r.windows
            ? scoresFromWindows(units, r.windows)
            : undefined;
      const choice = chooseAnswer(row.text, units, words ?? terms, meaning, stored?.context ?? row.heading);
      if (choice) out.set(row.id, choice.unit);
    }
    return out;
  }
}
