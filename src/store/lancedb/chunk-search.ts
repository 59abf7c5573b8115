/**
 * The chunk searches: vector and keyword first stages and hydration by id, each within a set of projects — those
 * the searcher may read, as access/ decided.
 *
 * Scope: every search takes its project ids and filters on them inside LanceDB (`project_id IN (…)`, a bitmap
 * index), never as a post-filter in the caller. The one exception is a search whose projects hold every row of the
 * table (one person's library, or a team reading everything: `soleScope`): the project filter is skipped there (a
 * search's own filters stay in the prefilter), and each hit is rechecked — its project read from the row directory or
 * the row itself (`hits`) — and the search runs again with it should a row of another project turn up (`firstStage`). Hydration (`getMany`) checks each row's
 * project too.
 */
import { createHash } from 'node:crypto';
import type * as lancedb from '@lancedb/lancedb';
import type { Table as ArrowTable } from 'apache-arrow';
import { LRUCache } from 'lru-cache';
import { type ChunkFilter, chunkFilterSql } from './chunk-filter.js';
import { chunkId, KEYWORD_COLUMN, type KeywordColumn, LANGUAGE_TAKEN, languageRows, SHOWN_FIELDS, SHOWN_TAKEN, type ShownChunk, shownRows, toShown, VECTOR_INDEX } from './chunk-schema.js';
import { MemoryCopies } from './memory-copy.js';
import { inList, lit, type TableLog } from './owned-table.js';
import { columnRefs, REF_COLUMNS, type RowRef, type RowRefs } from './row-refs.js';

export interface ChunkSearchScope {
  /** The projects searched. An empty list matches nothing. */
  projectIds: readonly string[];
  limit: number;
  /** Restrict to these documents (of those projects). An empty list matches nothing. */
  documentIds?: string[];
  /** The search's filters on the chunks' document fields (chunk-filter.ts), pushed into the prefilter. */
  filter?: ChunkFilter;
  /**
   * Documents whose chunks the search leaves out (the trash), and how many chunks they hold: kept out inside LanceDB
   * (`document_id NOT IN (…)` in the prefilter), or, on the unfiltered path (`soleScope`), by reading that many more
   * candidates and dropping theirs, so they never take a place in the list.
   */
  exclude?: { documentIds: readonly string[]; rows: number };
}

/** What the first stage returns per chunk: enough to fuse and rank documents; the rest is hydrated by id. */
export interface ChunkRef {
  id: string;
  document_id: string;
  /** LanceDB's row address when read: a direct take. Compaction moves rows, so it is checked, never trusted. */
  _rowid?: bigint;
}

export interface VectorHit extends ChunkRef {
  /** Cosine distance (0 = same direction, 2 = opposite). */
  _distance: number;
}

/**
 * What keyword search looks for: the query's words as typed (`query`, for a table still searched on `search_text`,
 * whose index analyses them itself) and its forms analysed per language (`forms`, space-separated, for
 * `keyword_text`; src/language/analyse.ts). Without `forms`, `keyword_text` is searched for `query` lower-cased, which
 * finds only words whose forms are themselves (numbers, codes, words of unstemmed languages).
 */
export interface KeywordQuery {
  query: string;
  forms?: string;
}

export interface KeywordHit extends ChunkRef {
  /** BM25 score, higher is better. */
  _score: number;
}

const SOLE_SCOPE_TTL_MS = 30_000;

/**
 * The unfiltered search (`soleScope`) reads as many more candidates as the excluded documents hold chunks, up to
 * this many; a larger trash takes the filtered path (what each costs: `npm run bench:trash`, docs/BENCHMARKS.md#trashed-chunks).
 */
export const MAX_EXCLUDED_OVERREAD = 1000;

/**
 * A search's prefilter: its projects, documents, filters and excluded documents. Without `projects` (a search whose
 * projects hold every row: `soleScope`) the projects are left out, which spares LanceDB a bitmap of every row to
 * intersect with the filter's (bench/results/search.md#filtered-search-2026-11-28-later); empty when nothing is left.
 */
function scopeFilter(scope: Omit<ChunkSearchScope, 'limit'>, projects = true): string {
  const parts = projects ? [inList('project_id', scope.projectIds)] : [];
  if (scope.documentIds) parts.push(inList('document_id', scope.documentIds));
  const filter = scope.filter && chunkFilterSql(scope.filter);
  if (filter) parts.push(filter);
  if (scope.exclude?.documentIds.length) parts.push(`NOT (${inList('document_id', scope.exclude.documentIds)})`);
  return parts.join(' AND ');
}

/** Whether a search narrows by the documents' fields (type, labels, …), beyond its projects and documents. */
const filtered = (q: Pick<ChunkSearchScope, 'filter'>): boolean => !!q.filter && !!chunkFilterSql(q.filter);

/**
 * A first-stage search's prefilter, and how many more candidates than asked it reads: its whole scope, or, when its
 * projects hold every row (`sole`), the scope without them — an unfiltered search then runs with no prefilter at all
 * and reads as many more candidates as the excluded documents hold chunks (`overread`), a filtered one with its filters
 * and excluded documents.
 */
function prefilter(q: Omit<ChunkSearchScope, 'limit'>, sole: boolean): { where: string; more: number } {
  if (!sole) return { where: scopeFilter(q), more: 0 };
  return filtered(q) ? { where: scopeFilter(q, false), more: 0 } : { where: '', more: overread(q) };
}

/** How long the count of a filtered scope's rows is kept (it decides between the vector index and an exact scan). */
const FILTERED_COUNT_TTL_MS = 30_000;

/** A set of projects as a short key (a team member may read thousands). */
const scopeKey = (projectIds: readonly string[]): string => createHash('sha256').update([...projectIds].sort().join('\n')).digest('base64url');

/** Rows written since the row directory's last scan are read as searches meet them; it is scanned again at most this often. */
export const ROW_REFS_RESCAN_MS = 300_000;

type Hit<S extends '_distance' | '_score'> = ChunkRef & Record<S, number>;

/**
 * First-stage hits read column-wise from the Arrow result (per-row proxies and `toArray()` cost as
 * much as the search itself), each row's project, document and chunk index from `refOf`: rows of any project
 * outside `scope` are left out (a search runs without its filter when its projects held every row: see `soleScope`). The score keeps its column's name, times `scale` (see `vectorSearch`). The id is rebuilt
 * (`chunkId`), never read, even where a search reads the row's REF_COLUMNS itself: a take reads a page of each column
 * for every row, and unique ids spread over many more pages than run-length document ids and small indexes
 * (bench/results/search.md#chunks-table-figures).
 */
function hits<S extends '_distance' | '_score'>(
  result: ArrowTable,
  score: S,
  scale: number,
  scope: Scope,
  refOf: (i: number, rowid: bigint) => RowRef,
): { found: Hit<S>[]; foreign: number } {
  const rowids = result.getChild('_rowid')!;
  const scores = result.getChild(score)!;
  const out: Hit<S>[] = [];
  let foreign = 0;
  for (let i = 0; i < result.numRows && out.length < scope.limit; i++) {
    const _rowid = rowids.get(i) as bigint;
    const { project_id, document_id, chunk_index } = refOf(i, _rowid);
    if (!scope.projects.has(project_id)) {
      foreign++;
      continue;
    }
    if (scope.excluded.has(document_id)) continue;
    const hit = { id: chunkId(document_id, chunk_index), document_id, _rowid } as Hit<S>;
    hit[score] = (Number(scores.get(i)) * scale) as Hit<S>[S];
    out.push(hit);
  }
  return { found: out, foreign };
}

/** What `hits` keeps: rows of these projects, not of the excluded documents, at most `limit`. */
interface Scope {
  projects: ReadonlySet<string>;
  excluded: ReadonlySet<string>;
  limit: number;
}

/**
 * Whether a filtered vector search scans its `rows` exactly rather than walk the HNSW index of a table of
 * `tableRows`: when they are few in number and in share. A walk that the filter leaves only a small share of the
 * graph's nodes could end before it met the nearest of them; a scan costs in proportion to its rows, and past ~2 % of a
 * 100k table the walk (refined) costs less at a recall@10 of 1.000 (docs/BENCHMARKS.md#filtered-search).
 */
export function scansExactly(rows: number, tableRows: number, limits: { exactBelow: number; exactShare: number }): boolean {
  return rows <= limits.exactBelow && rows <= limits.exactShare * tableRows;
}

/**
 * The candidate list (ef) of a filtered search that walks the vector index over `rows` rows (`scansExactly` false):
 * half the unfiltered one's when the filter keeps at most `exactBelow` rows — a walk that gathers its candidates among
 * so few rows finds the same nearest with half the list (at 100,000 chunks, 2–20 % of them: recall@10 1.000 at ef 200
 * and 400, for up to ~4 CPU-ms less a search) — and the whole of it past that (a million chunks, 10 %: ef 200 cost
 * recall@10 0.972 → 0.951; bench/results/search.md#filtered-search-2026-11-28). Never below the list's depth.
 */
export function walkEf(rows: number, limit: number, limits: { ef: number; exactBelow: number }): number {
  return Math.max(limit, rows <= limits.exactBelow ? Math.ceil(limits.ef / 2) : limits.ef);
}

/**
 * How many of a walk's nearest candidates are re-ranked by exact distance, at least: the index's 8-bit distances
 * cannot order close neighbours (recall@10 0.96 at 50 % unrefined, 0.996–1.000 with its 20 nearest re-ranked:
 * docs/BENCHMARKS.md#filtered-search). A search of a partly indexed table has LanceDB refine this many times the
 * limit (`refineFactor`); a filtered walk re-ranks its head itself (`rerankHead`).
 */
const REFINED_CANDIDATES = 20;
const refineFactor = (limit: number): number => Math.max(1, Math.ceil(REFINED_CANDIDATES / limit));

/** Cosine distance of two vectors (1 − cos; 0 = same direction). */
function cosineDistance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 1 : 1 - dot / Math.sqrt(na * nb);
}

/** How many more candidates an unfiltered search reads, to make up for the excluded documents' chunks it drops. */
const overread = (q: Omit<ChunkSearchScope, 'limit'>): number => q.exclude?.rows ?? 0;

export interface SearchDeps {
  /** The handle searches read (see SearchHandles); undefined before the first write. */
  table: () => Promise<lancedb.Table | undefined>;
  /** The row directory of a table (row-refs.ts). */
  refsOf: (table: lancedb.Table) => RowRefs;
  /** HNSW candidate list size (AnnOptions.ef). */
  ef: number;
  /**
   * A filtered search whose scope holds at most this many rows, and at most `exactShare` of the table's, scans them
   * exactly instead of walking the vector index (AnnOptions.exactBelow, see `scansExactly`).
   */
  exactBelow: number;
  exactShare: number;
  /** A table without a vector index of at most this many rows is held in memory (AnnOptions.memoryRows). */
  memoryRows: number;
  log: TableLog | undefined;
  /** The column keyword search reads (ChunkIndex.keywordColumn). */
  keywordColumn: () => KeywordColumn;
}

export class ChunkSearches {
  /** Per set of projects searched: whether they held every row when last counted (see `soleProjects`). */
  private readonly sole = new LRUCache<string, boolean>({ max: 256, ttl: SOLE_SCOPE_TTL_MS });
  /** Per table handle: how much of its last-asked version the vector index covers (see `vectorCoverage`). */
  private readonly coverage = new WeakMap<lancedb.Table, { version: number; coverage: 'all' | 'part' | 'none' }>();
  /** Rows of a filtered scope, by its predicate: whether a search of it scans exactly (see `filteredRowCount`). */
  private readonly filteredRows = new LRUCache<string, number>({ max: 256, ttl: FILTERED_COUNT_TTL_MS });
  private readonly memory: MemoryCopies;

  constructor(private readonly deps: SearchDeps) {
    this.memory = new MemoryCopies(deps.memoryRows, deps.log);
  }

  /** The version and rows of `table` held in memory (memory-copy.ts), if any. */
  inMemory(table: lancedb.Table): { version: number; rows: number } | undefined {
    return this.memory.held(table);
  }

  /**
   * The chunks among `refs` in these projects (any order; other projects' and deleted chunks are absent). Rows are
   * taken by address (less than half the time of an `id IN` lookup: bench/results/search.md#chunks-table-figures);
   * a row that moved since (compaction) is looked up by id.
   */
  async getMany(projectIds: readonly string[], refs: Pick<ChunkRef, 'id' | '_rowid'>[]): Promise<ShownChunk[]> {
    return [...(await this.take(projectIds, refs, SHOWN_TAKEN, shownRows, (row) => row)).values()];
  }

  /**
   * The language of each chunk among `refs` in these projects (its `language` column, null where none could be told),
   * by id: a search's language facet, which counts passages by their own language as its filter does. Two columns
   * taken rather than the shown ones: the facet reads the whole result list.
   */
  async languagesOf(projectIds: readonly string[], refs: Pick<ChunkRef, 'id' | '_rowid'>[]): Promise<Map<string, string | null>> {
    const rows = await this.take(projectIds, refs, LANGUAGE_TAKEN, languageRows, (row) => ({ id: row.id, project_id: row.project_id, language: row.language ?? null }));
    return new Map([...rows].map(([id, row]) => [id, row.language]));
  }

  /**
   * `refs`' rows in these projects, by id: from the table's copy in memory where it holds them, else taken by address
   * (`columns` decoded by `decode`), else (moved since: compaction) looked up by id.
   */
  private async take<T extends { id: string; project_id: string }>(
    projectIds: readonly string[],
    refs: Pick<ChunkRef, 'id' | '_rowid'>[],
    columns: readonly string[],
    decode: (result: ArrowTable) => T[],
    held: (row: ShownChunk) => T,
  ): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    const table = refs.length === 0 ? undefined : await this.deps.table();
    if (!table) return found;
    const wanted = new Set(refs.map((r) => r.id));
    const scope = new Set(projectIds);
    const keep = (row: T) => {
      if (scope.has(row.project_id) && wanted.has(row.id)) found.set(row.id, row);
    };
    const addressed = refs.flatMap((r) => (r._rowid === undefined ? [] : [r._rowid]));
    // Rows the table's copy in memory holds (memory-copy.ts) are not taken again.
    const taken = addressed.filter((address) => {
      const row = this.memory.row(table, address);
      if (row) keep(held(row));
      return !row;
    });
    if (taken.length > 0) for (const row of decode(await table.takeRowIds(taken).select([...columns]).toArrow())) keep(row);
    const rest = [...wanted].filter((id) => !found.has(id));
    if (rest.length > 0) {
      const rows = await table
        .query()
        .where(`${inList('project_id', projectIds)} AND id IN (${rest.map(lit).join(', ')})`)
        .select([...columns])
        .limit(rest.length)
        .toArrow();
      for (const row of decode(rows)) found.set(row.id, row);
    }
    return found;
  }

  /**
   * Nearest chunks to `vector` by cosine distance, within the scope's projects (and documents, when given). Uses the HNSW index when there is one (the filter is applied before the graph search, so a
   * narrow scope still gets its nearest rows); rows written since the last optimize are scanned exactly.
   */
  async vectorSearch(q: ChunkSearchScope & { vector: Float32Array | number[] }): Promise<VectorHit[]> {
    const table = q.limit > 0 ? await this.deps.table() : undefined;
    if (!table) return [];
    // A table without a vector index is scanned whole; an unfiltered scan of it is answered from its copy in memory
    // once one is held (memory-copy.ts).
    let version: number | undefined;
    if (!filtered(q) && this.deps.memoryRows > 0) {
      version = await table.version();
      if ((await this.vectorCoverage(table, version)) !== 'none') this.memory.forget(table);
      else {
        const held = this.memory.search(table, version, q.vector, q);
        if (held) return held;
      }
    }
    // Filtering before the graph search passes over every row of the scope in each search (most of a vector
    // search's time in a large table). When the scope's projects hold every row (`soleScope`) the search runs
    // without them (unfiltered, or with its filters alone: `prefilter`), the same rows, and each hit's project is
    // checked by `firstStage` (cheaper than LanceDB's
    // post-filter reading `project_id` for the 400 candidates the graph visits: bench/results/search.md#chunks-table-figures).
    // Its fallback reads the columns with the filter, applied before the search (after it, rows of other projects or
    // excluded documents could take every place in the list and leave it empty).
    const sole = await this.soleScope(table, q);
    const counted = await this.filteredRowCount(table, q);
    const exact = counted !== undefined && scansExactly(counted.scope, counted.table, this.deps);
    const search = (refine: boolean, columns: readonly string[] = []) => {
      const { where, more } = prefilter(q, sole && columns.length === 0);
      let query = table.vectorSearch(q.vector).distanceType('cosine');
      if (where) query = query.where(where);
      if (exact) query = query.bypassVectorIndex();
      const limit = q.limit + more;
      if (!exact) query = query.ef(counted === undefined ? Math.max(this.deps.ef, limit) : walkEf(counted.scope, limit, this.deps));
      if (refine && !exact) query = query.refineFactor(refineFactor(limit));
      return query.select([...columns, '_distance']).withRowId().limit(limit).toArrow();
    };
    const resolve = (rows: ArrowTable, refine: boolean, scale: number) => this.firstStage(table, q, sole, rows, '_distance', scale, () => search(refine, REF_COLUMNS));
    // An exact scan answers the cosine distance of every row it reads.
    if (exact) return resolve(await search(false), false, 1);
    // The HNSW-SQ index answers the squared L2 distance of its 8-bit vectors (2 − 2·cos), a flat scan of rows
    // written since the last optimize 1 − cos, and LanceDB merges the two lists as they are. Refining re-reads the
    // candidates' vectors for their exact cosine distance (a large share of a vector search's CPU), needed only when
    // both answered: when the index holds every row of the version searched, halving its distance gives the cosine
    // distance closely enough (bench/results/search.md#chunks-table-figures); with no index every distance is
    // exact. A search whose version moved under it (an index built, rows added) runs again, refined.
    version ??= await table.version();
    const coverage = await this.vectorCoverage(table, version);
    if (coverage === 'part') return resolve(await search(true), true, 1);
    // A filtered search walking the index (not `scansExactly`) re-ranks its head by exact distance, for its recall:
    // LanceDB's refine would re-read every candidate's vector, ~1.5× the cost. Its ef is `walkEf`'s.
    if (coverage === 'all' && filtered(q)) {
      const walked = await resolve(await search(false), false, 0.5);
      return (await this.rerankHead(table, version, q.vector, walked)) ?? resolve(await search(true), true, 1);
    }
    const rows = await search(false);
    if ((await table.version()) !== version) return resolve(await search(true), true, 1);
    return resolve(rows, false, coverage === 'all' ? 0.5 : 1);
  }

  /**
   * `hits` nearest first, the REFINED_CANDIDATES nearest by the index's distance re-ranked by their exact cosine
   * distance to `vector` (their vectors taken by row address). Undefined when the table moved past `version` (a row
   * address may name another row by then) or a row is not found: the caller searches again, refined by LanceDB.
   */
  private async rerankHead(table: lancedb.Table, version: number, vector: Float32Array | number[], found: VectorHit[]): Promise<VectorHit[] | undefined> {
    const sorted = [...found].sort((a, b) => a._distance - b._distance);
    const head = sorted.slice(0, REFINED_CANDIDATES);
    if (head.length === 0) return sorted;
    if (head.some((h) => h._rowid === undefined)) return undefined;
    const read = await table
      .takeRowIds(head.map((h) => h._rowid!))
      .select(['vector'])
      .withRowId()
      .toArrow()
      .catch(() => null);
    if (!read || (await table.version()) !== version) return undefined;
    const rowids = read.getChild('_rowid')!;
    const vectors = read.getChild('vector')!;
    const exact = new Map<bigint, number>();
    for (let i = 0; i < read.numRows; i++) exact.set(rowids.get(i) as bigint, cosineDistance(vectors.get(i)!.toArray() as Float32Array, vector));
    for (const h of head) {
      const d = exact.get(h._rowid!);
      if (d === undefined) return undefined;
      h._distance = d;
    }
    return sorted.sort((a, b) => a._distance - b._distance);
  }

  /**
   * The rows a filtered search's scope keeps and the table's (undefined unfiltered), which decide whether it scans
   * them exactly (`scansExactly`) and its walk's ef (`walkEf`). The counts come from the scalar indexes and are kept
   * FILTERED_COUNT_TTL_MS.
   */
  private async filteredRowCount(table: lancedb.Table, q: Omit<ChunkSearchScope, 'limit'>): Promise<{ scope: number; table: number } | undefined> {
    if (!filtered(q)) return undefined;
    const count = async (where: string): Promise<number> => {
      let rows = this.filteredRows.get(where);
      if (rows === undefined) {
        rows = await (where === '' ? table.countRows() : table.countRows(where));
        this.filteredRows.set(where, rows);
      }
      return rows;
    };
    return { scope: await count(scopeFilter(q)), table: await count('') };
  }

  /**
   * Whether the vector index covers every row of `version` of `table` ('all'), some ('part') or none ('none':
   * no index, every search is a flat scan), remembered for the version the table was last asked at.
   */
  private async vectorCoverage(table: lancedb.Table, version: number): Promise<'all' | 'part' | 'none'> {
    const known = this.coverage.get(table);
    if (known?.version === version) return known.coverage;
    const stats = await table.indexStats(VECTOR_INDEX);
    const coverage = !stats ? 'none' : stats.numUnindexedRows === 0 ? 'all' : 'part';
    // Only what was read at `version` is remembered: the table may have moved while the stats were read.
    if ((await table.version()) === version) this.coverage.set(table, { version, coverage });
    return coverage;
  }

  /**
   * Whether a search's projects hold every row of the table (one person's library, or someone who reads every
   * project): it may then run without its projects in the prefilter (`prefilter`), each hit's project checked as it is
   * named (`hits`). A search that meets another project's rows anyway (added since the count) runs again with them
   * (`firstStage`).
   */
  private async soleScope(table: lancedb.Table, q: Omit<ChunkSearchScope, 'limit'>): Promise<boolean> {
    return (
      !q.documentIds &&
      (filtered(q) || overread(q) <= MAX_EXCLUDED_OVERREAD) &&
      q.projectIds.length > 0 &&
      (await this.soleProjects(table, q.projectIds))
    );
  }

  /**
   * Whether every row of the table is in these projects: counted at most every SOLE_SCOPE_TTL_MS (the search that
   * counts waits for it: bench/results/search.md#chunks-table-figures).
   */
  private async soleProjects(table: lancedb.Table, projectIds: readonly string[]): Promise<boolean> {
    const key = scopeKey(projectIds);
    const known = this.sole.get(key);
    if (known !== undefined) return known;
    const [inScope, all] = await Promise.all([table.countRows(inList('project_id', projectIds)), table.countRows()]);
    const sole = all > 0 && inScope === all;
    this.sole.set(key, sole);
    return sole;
  }

  /** BM25 matches of the query on the keyword column, within the scope's projects (and documents, when given). */
  async keywordSearch(q: ChunkSearchScope & KeywordQuery): Promise<KeywordHit[]> {
    const column = this.deps.keywordColumn();
    const text = column === KEYWORD_COLUMN ? (q.forms ?? q.query.toLowerCase()) : q.query;
    const table = q.limit > 0 && text.trim() !== '' ? await this.deps.table() : undefined;
    if (!table) return [];
    // As `vectorSearch`: without the filter when the projects hold every row, which is faster here too
    // (bench/results/search.md#chunks-table-figures).
    const sole = await this.soleScope(table, q);
    const search = (columns: readonly string[] = []) => {
      const { where, more } = prefilter(q, sole && columns.length === 0);
      let query = table.query().fullTextSearch(text, { columns: column });
      if (where) query = query.where(where);
      return query
        .select([...columns, '_score'])
        .withRowId()
        .limit(q.limit + more)
        .toArrow();
    };
    return this.firstStage(table, q, sole, await search(), '_score', 1, () => search(REF_COLUMNS));
  }

  /**
   * The scope's hits of a first-stage search that read scores and row addresses only, each row's project, document
   * and chunk index from the row directory; the rows it lacks (written since its scan) are taken from the table in
   * one read and kept. The search runs again reading the columns itself, with its filter (`withColumns`), should
   * one be gone by then (an optimize compacted it away in between), or should a search run `unfiltered`
   * (`soleScope`) have met another project's rows: they would have taken places in its list, and later searches of
   * the same projects filter until the next count.
   */
  private async firstStage<S extends '_distance' | '_score'>(
    table: lancedb.Table,
    q: ChunkSearchScope,
    unfiltered: boolean,
    result: ArrowTable,
    score: S,
    scale: number,
    withColumns: () => Promise<ArrowTable>,
  ): Promise<Hit<S>[]> {
    const scope: Scope = { projects: new Set(q.projectIds), excluded: new Set(q.exclude?.documentIds), limit: q.limit };
    const again = async () => {
      const rows = await withColumns();
      return hits(rows, score, scale, scope, columnRefs(rows)).found;
    };
    const directory = this.deps.refsOf(table);
    const rowids = result.getChild('_rowid')!;
    const missing: bigint[] = [];
    for (let i = 0; i < result.numRows; i++) {
      const rowid = rowids.get(i) as bigint;
      if (!directory.has(rowid)) missing.push(rowid);
    }
    if (missing.length > 0) {
      void directory.scan(table, ROW_REFS_RESCAN_MS).catch((err: unknown) => this.deps.log?.warn({ err }, 'could not read the chunk row directory; searches read their rows meanwhile'));
      const read = await table.takeRowIds(missing).select([...REF_COLUMNS]).withRowId().toArrow().catch(() => null);
      const refOf = read && columnRefs(read);
      const readIds = read?.getChild('_rowid');
      for (let i = 0; refOf && readIds && i < read.numRows; i++) directory.remember(readIds.get(i) as bigint, refOf(i));
      if (missing.some((rowid) => !directory.has(rowid))) return again();
    }
    const { found, foreign } = hits(result, score, scale, scope, (_, rowid) => directory.get(rowid)!);
    if (unfiltered && foreign > 0) {
      this.sole.set(scopeKey(q.projectIds), false);
      return again();
    }
    return found;
  }
}
