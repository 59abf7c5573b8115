/**
 * The chunks table's columns: the rows written and read, the Arrow schema a table is made with, its scalar indexes,
 * and the upgrades a table written by an older release needs. The only file that knows the schema.
 */
import * as lancedb from '@lancedb/lancedb';
import { Binary, Bool, Field, FixedSizeList, Float32, Int32, Int64, List, Schema, type Table as ArrowTable, Utf8 } from 'apache-arrow';

/**
 * A chunk's id: its document's id and its index there, so a retried write is recognisable. A search's first stage
 * rebuilds it from `document_id` and `chunk_index` rather than reading `id` (see `hits` in chunk-search.ts), so every row's id is this.
 */
export const chunkId = (documentId: string, index: number): string => `${documentId}:${index}`;

export interface ChunkRow {
  /** `chunkId(document_id, chunk_index)`: `add` refuses any other. */
  id: string;
  user_id: string;
  project_id: string;
  document_id: string;
  chunk_index: number;
  /** Clean text, shown in results. */
  text: string;
  /** Title + heading path + text: what BM25 indexes and what was embedded. */
  search_text: string;
  /** Heading path joined with " > ", or null. */
  heading: string | null;
  page_start: number | null;
  page_end: number | null;
  /** The text came (partly) from OCR of a page image. Optional when writing: absent means false. */
  ocr?: boolean;
  /** `ChunkPlacement` as JSON; null in rows written before it was recorded. Optional when writing: absent means null. */
  placement?: string | null;
  /**
   * The chunk's answer units with their vectors (unit-vectors.ts), or null in rows written before units existed (the
   * backfill gives them theirs). Optional when writing: absent means null.
   */
  units?: Uint8Array | null;
  /**
   * The chunk's language (ISO 639-1: detected, or set on its document, project or source); null when it could not be
   * told, and in rows written before it was recorded until the background analysis reaches them. Optional when
   * writing: absent means null.
   */
  language?: string | null;
  /**
   * `search_text` analysed for keyword search in the chunk's language (src/language/analyse.ts): the forms the
   * keyword index holds, space-separated. Null in rows written before it was recorded. Optional when writing.
   */
  keyword_text?: string | null;
  /**
   * The version of the analysis `language` and `keyword_text` were written with (ANALYSIS_VERSION); null in rows written
   * before it was recorded (version 1, or none). Optional when writing.
   */
  keyword_analysis?: number | null;
  vector: Float32Array;
}

/**
 * What a chunk carries of its document, for the filters search pushes into LanceDB's prefilter (core/filters.ts,
 * chunk-filter.ts): written at ingest, kept in step when labels change or the document moves. Null in rows written
 * before they were recorded (until the background pass brings them up to date): such rows match no filter on them.
 * The uploader is `user_id`.
 */
export interface DocumentFields {
  /** The document's content type. */
  content_type: string;
  /** When it was uploaded (the document's `created_at`), epoch ms. */
  uploaded_at: number;
  /** Its upload or sync path, or null. */
  path: string | null;
  /** The source that keeps it current, or null. */
  source_id: string | null;
  /** Its labels' ids. */
  labels: string[];
  /** Its metadata as the filters compare it: core/metadata-entries.ts `metaList`. */
  meta: string[];
}

/** A chunk row and its document's fields (each optional when writing: absent means null). */
export type ChunkWrite = ChunkRow & Partial<DocumentFields>;

/** The document fields' columns, in the table's order. */
export const DOCUMENT_FIELD_COLUMNS = ['content_type', 'uploaded_at', 'path', 'source_id', 'labels', 'meta'] as const satisfies readonly (keyof DocumentFields)[];

/**
 * Where a chunk's text lies in its document's text (ingest/chunk.ts): the document's text is every chunk's
 * `separator` followed by its text after the first `overlap` characters, in chunk order. Offsets are UTF-16.
 */
export interface ChunkPlacement {
  /** Characters at the start of the text that the chunks before already hold (the overlap, and the separator after it). */
  overlap: number;
  /** The document's text between the chunks before and this chunk's new text: '' for the first chunk. */
  separator: string;
  /** [offset in the text, page] where each page (slide, row, chapter) in the text starts, in order; empty without pages. */
  page_starts: [number, number][];
}

/** A row's placement, or null when it has none (written before placements were recorded) or not one of this shape. */
export function parsePlacement(json: string | null | undefined): ChunkPlacement | null {
  if (!json) return null;
  const p = JSON.parse(json) as ChunkPlacement;
  return Number.isInteger(p.overlap) && typeof p.separator === 'string' && Array.isArray(p.page_starts) ? p : null;
}

export type ChunkFields = Omit<ChunkRow, 'vector' | 'units' | 'keyword_analysis'>;

/** What a search result shows of a chunk (and a reranker reads): no vector, no indexed text, no position; its units. */
export type ShownChunk = Omit<ChunkFields, 'search_text' | 'chunk_index' | 'keyword_text'> & { units: Uint8Array | null };

/** Columns a chunks table may lack, with the value their rows have (see ensureColumns), and the SQL that says it. */
export const CHUNK_COLUMN_DEFAULTS = { ocr: false, placement: null, language: null, keyword_text: null, units: null, content_type: null, uploaded_at: null, path: null, source_id: null, labels: null, meta: null, keyword_analysis: null };
const DEFAULT_SQL: Record<keyof typeof CHUNK_COLUMN_DEFAULTS, string> = {
  ocr: 'false',
  placement: 'CAST(NULL AS STRING)',
  language: 'CAST(NULL AS STRING)',
  keyword_text: 'CAST(NULL AS STRING)',
  units: 'CAST(NULL AS BINARY)',
  content_type: 'CAST(NULL AS STRING)',
  uploaded_at: 'CAST(NULL AS BIGINT)',
  path: 'CAST(NULL AS STRING)',
  source_id: 'CAST(NULL AS STRING)',
  labels: "arrow_cast(NULL, 'List(Utf8)')",
  meta: "arrow_cast(NULL, 'List(Utf8)')",
  keyword_analysis: 'CAST(NULL AS INT)',
};
export const VECTOR_INDEX = 'vector_idx';

/**
 * The keyword index: BM25 over `keyword_text`, whose forms were analysed per language before they were written, so
 * LanceDB only splits at spaces (no stemming, stop words, case or folding of its own: docs/search.md#languages).
 * Tables written before it searched `search_text` with LanceDB's English analysis (`LEGACY_KEYWORD_COLUMN`) until
 * their rows were re-analysed.
 */
export const KEYWORD_COLUMN = 'keyword_text';
export const LEGACY_KEYWORD_COLUMN = 'search_text';
export type KeywordColumn = typeof KEYWORD_COLUMN | typeof LEGACY_KEYWORD_COLUMN;
/** LanceDB names an index after its column. */
export const keywordIndexName = (column: KeywordColumn): string => `${column}_idx`;
export const keywordIndex = (column: KeywordColumn): lancedb.Index =>
  column === KEYWORD_COLUMN
    ? lancedb.Index.fts({ baseTokenizer: 'whitespace', lowercase: false, stem: false, removeStopWords: false, asciiFolding: false, maxTokenLength: 64, withPosition: false })
    : lancedb.Index.fts();
/**
 * Scalar indexes. Every search filters on user_id, many on project_id: few distinct values, so bitmaps (the
 * tenant filter runs faster than with a btree: bench/results/search.md#chunks-table-figures).
 * Hydration looks rows up by id.
 */
export const SCALAR_INDEXES = [
  ['user_id', () => lancedb.Index.bitmap()],
  ['project_id', () => lancedb.Index.bitmap()],
  ['id', () => lancedb.Index.btree()],
  // The filters' (chunk-filter.ts): few types and sources (bitmaps), times and path prefixes (btrees: ranges and
  // `LIKE 'prefix%'`), label and metadata lists (label lists: array_has_any / array_has_all).
  ['content_type', () => lancedb.Index.bitmap()],
  ['uploaded_at', () => lancedb.Index.btree()],
  ['path', () => lancedb.Index.btree()],
  ['source_id', () => lancedb.Index.bitmap()],
  ['labels', () => lancedb.Index.labelList()],
  ['meta', () => lancedb.Index.labelList()],
  // lang's chunk language, for the `language` filter: few values.
  ['language', () => lancedb.Index.bitmap()],
] as const;

export const FIELDS = ['id', 'user_id', 'project_id', 'document_id', 'chunk_index', 'text', 'search_text', 'heading', 'page_start', 'page_end', 'ocr', 'placement', 'language', 'keyword_text', ...DOCUMENT_FIELD_COLUMNS] as const;
// A take reads each column's page apart: leaving out search_text and chunk_index nearly halves a page's take
// (bench/results/search.md#chunks-table-figures).
export const SHOWN_FIELDS = ['id', 'user_id', 'project_id', 'document_id', 'text', 'heading', 'page_start', 'page_end', 'ocr', 'language', 'units'] as const;

export function chunkSchema(dimension: number): Schema {
  return new Schema([
    new Field('id', new Utf8(), false),
    new Field('user_id', new Utf8(), false),
    new Field('project_id', new Utf8(), false),
    new Field('document_id', new Utf8(), false),
    new Field('chunk_index', new Int32(), false),
    new Field('text', new Utf8(), false),
    new Field('search_text', new Utf8(), false),
    new Field('heading', new Utf8(), true),
    new Field('page_start', new Int32(), true),
    new Field('page_end', new Int32(), true),
    new Field('ocr', new Bool(), true),
    new Field('placement', new Utf8(), true),
    new Field('language', new Utf8(), true),
    new Field('keyword_text', new Utf8(), true),
    new Field('vector', new FixedSizeList(dimension, new Field('item', new Float32(), true)), false),
    new Field('units', new Binary(), true),
    new Field('content_type', new Utf8(), true),
    new Field('uploaded_at', new Int64(), true),
    new Field('path', new Utf8(), true),
    new Field('source_id', new Utf8(), true),
    new Field('labels', new List(new Field('item', new Utf8(), true)), true),
    new Field('meta', new List(new Field('item', new Utf8(), true)), true),
    new Field('keyword_analysis', new Int32(), true),
  ]);
}

/**
 * Tables written by older releases lack columns added since: `ocr` (their chunks were all read from text layers),
 * `placement` (unknown for their chunks), `language` and `keyword_text` (filled by the background analysis),
 * `units` (given by the backfill: ingest/unit-vectors.ts) and the document fields (null until the background pass
 * fills them).
 */
export async function ensureColumns(table: lancedb.Table): Promise<void> {
  const have = new Set((await table.schema()).fields.map((f) => f.name));
  const missing = Object.entries(DEFAULT_SQL).filter(([name]) => !have.has(name));
  if (missing.length) await table.addColumns(missing.map(([name, valueSql]) => ({ name, valueSql })));
}

export async function ensureScalarIndexes(table: lancedb.Table): Promise<void> {
  const have = new Set((await table.listIndices()).flatMap((i) => i.columns));
  for (const [column, config] of SCALAR_INDEXES) {
    if (!have.has(column)) await table.createIndex(column, { config: config() });
  }
}

export function toShown(r: Record<string, unknown>): ShownChunk {
  return {
    id: r.id as string,
    user_id: r.user_id as string,
    project_id: r.project_id as string,
    document_id: r.document_id as string,
    text: r.text as string,
    heading: (r.heading as string | null) ?? null,
    page_start: r.page_start == null ? null : Number(r.page_start),
    page_end: r.page_end == null ? null : Number(r.page_end),
    ...(r.ocr === true ? { ocr: true } : {}),
    ...(typeof r.language === 'string' ? { language: r.language } : {}),
    units: r.units instanceof Uint8Array ? r.units : null,
  };
}

/**
 * What a take by row address reads of a shown chunk: SHOWN_FIELDS but its id, which is rebuilt from its document and
 * index (`chunkId`) — a take reads a page of each column for every row, and the unique ids spread over the most pages
 * (10 rows: ~0.4 CPU-ms of ~1.7) — read column-wise (row proxies cost as much again).
 */
export const SHOWN_TAKEN = [...SHOWN_FIELDS.filter((f) => f !== 'id'), 'chunk_index'];

/** The shown chunks of a result (a table or a record batch) that read SHOWN_TAKEN. */
export function shownRows(result: Pick<ArrowTable, 'numRows' | 'getChild'>): ShownChunk[] {
  const columns = Object.fromEntries(SHOWN_TAKEN.map((c) => [c, result.getChild(c)!]));
  const out: ShownChunk[] = [];
  for (let i = 0; i < result.numRows; i++) {
    const r: Record<string, unknown> = {};
    for (const c of SHOWN_TAKEN) r[c] = columns[c]!.get(i);
    r.id = chunkId(r.document_id as string, Number(r.chunk_index));
    out.push(toShown(r));
  }
  return out;
}

/** What a take reads for a chunk's language (`languageRows`): its id rebuilt as for shown chunks. */
export const LANGUAGE_TAKEN = ['project_id', 'document_id', 'chunk_index', 'language'] as const;

/** The chunks' languages of a result that read LANGUAGE_TAKEN. */
export function languageRows(result: Pick<ArrowTable, 'numRows' | 'getChild'>): { id: string; project_id: string; language: string | null }[] {
  const [project, document, index, language] = LANGUAGE_TAKEN.map((c) => result.getChild(c)!);
  return Array.from({ length: result.numRows }, (_, i) => ({
    id: chunkId(document!.get(i) as string, Number(index!.get(i))),
    project_id: project!.get(i) as string,
    language: (language!.get(i) as string | null) ?? null,
  }));
}

/** A list column's value as read (an Arrow vector, or null). */
const listOf = (v: unknown): string[] | null => (v == null ? null : [...(v as Iterable<string>)]);

/** A chunk's document fields as read; null for a row written before they were recorded. */
export function toDocumentFields(r: Record<string, unknown>): DocumentFields | null {
  if (r.content_type == null) return null;
  return {
    content_type: r.content_type as string,
    uploaded_at: Number(r.uploaded_at),
    path: (r.path as string | null) ?? null,
    source_id: (r.source_id as string | null) ?? null,
    labels: listOf(r.labels) ?? [],
    meta: listOf(r.meta) ?? [],
  };
}

export function toFields(r: Record<string, unknown>): ChunkFields & Partial<DocumentFields> {
  const { units: _units, ...shown } = toShown(r);
  return {
    ...shown,
    chunk_index: Number(r.chunk_index),
    search_text: r.search_text as string,
    placement: (r.placement as string | null) ?? null,
    language: (r.language as string | null) ?? null,
    keyword_text: (r.keyword_text as string | null) ?? null,
    ...toDocumentFields(r),
  };
}
