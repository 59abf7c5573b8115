/**
 * Write stage: chunk rows into the chunks table, committed in groups. Every write that arrives while one is
 * being committed joins the next commit, so a burst of small documents costs one LanceDB `add` (one fragment,
 * one table version) instead of one per document, with no added wait when writes are sparse.
 *
 * Idempotent per document: chunk ids are deterministic (`<doc>:<index>`), and a retried job deletes what an
 * earlier attempt left before writing (pipeline.ts), so a document never ends up with duplicate chunks.
 */
import type { Yielder } from '../core/foreground.js';
import { mapInTurns } from '../core/loop-turns.js';
import { ANALYSIS_VERSION, analyseText } from '../language/analyse.js';
import { detectLanguage } from '../language/detect.js';
import { metadataEntries, metaList } from '../core/metadata-entries.js';
import { type ChunkWrite, chunkId, type DocumentFields } from '../store/lancedb/chunk-schema.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import type { DocumentRecord } from '../store/sql/documents.js';
import type { Chunk } from './types.js';
import type { EmbeddedChunk } from './unit-vectors.js';

export interface WriteTarget {
  documentId: string;
  userId: string;
  projectId: string;
  /** The language its document, project or source is set to (ISO 639-1); absent: each chunk's is detected. */
  language?: string | null;
  /** What each chunk carries of its document, for filters (absent: nothing, as rows of older releases). */
  fields?: DocumentFields;
}

/**
 * A chunk's language (set, or detected from its text) and its keyword forms in it (language/analyse.ts): the
 * title and headings of `search_text` are analysed with the text, as they are searched with it.
 */
export function keywordFields(text: string, searchText: string, language: string | null | undefined): { language: string | null; keyword_text: string; keyword_analysis: number } {
  const lang = language ?? detectLanguage(text);
  return { language: lang, keyword_text: analyseText(searchText, lang), keyword_analysis: ANALYSIS_VERSION };
}

/**
 * What a document's chunks carry of it for filters: its type, upload time, path, source, labels (ids) and metadata
 * (`metadata`: the document's, with what its file says merged in, as markReady records it).
 */
export function documentFields(doc: Pick<DocumentRecord, 'contentType' | 'createdAt' | 'path' | 'sourceId'>, labelIds: readonly string[], metadata: Record<string, unknown>): DocumentFields {
  return {
    content_type: doc.contentType,
    uploaded_at: doc.createdAt,
    path: doc.path,
    source_id: doc.sourceId,
    labels: [...labelIds].sort(),
    meta: metaList(metadataEntries(metadata)),
  };
}

/** The slice's rows; their keyword analysis runs in turns (core/loop-turns.ts), so searches are served between chunks. */
export function toRows(target: WriteTarget, chunks: Chunk[], embedded: (Pick<EmbeddedChunk, 'vector'> & { units: Uint8Array | null })[]): Promise<ChunkWrite[]> {
  return mapInTurns(chunks, (c, i) => ({
    ...target.fields,
    ...keywordFields(c.text, c.embedText, target.language),
    id: chunkId(target.documentId, c.index),
    user_id: target.userId,
    project_id: target.projectId,
    document_id: target.documentId,
    chunk_index: c.index,
    text: c.text,
    search_text: c.embedText,
    heading: c.headings.length > 0 ? c.headings.join(' > ') : null,
    page_start: c.pageStart ?? null,
    page_end: c.pageEnd ?? null,
    ocr: c.ocr === true,
    placement: JSON.stringify(c.placement),
    units: embedded[i]!.units,
    vector: embedded[i]!.vector,
  }));
}

interface Waiting {
  rows: ChunkWrite[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Rows per commit at most: one group's Arrow batch stays a few MB. */
const MAX_GROUP_ROWS = 4000;

export class ChunkWriter {
  private waiting: Waiting[] = [];
  private committing = false;
  /** Commits so far (for the bench and tests: far fewer than documents under load). */
  commits = 0;

  constructor(
    private readonly index: Pick<ChunkIndex, 'add' | 'optimizeSoon'>,
    private readonly embedder: { id: string; dimension: number },
    /** Commits give way to searches in flight (core/foreground.ts). */
    private readonly background?: Yielder,
  ) {}

  /** Resolves once `rows` are committed (durable and searchable). */
  write(rows: ChunkWrite[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiting.push({ rows, resolve, reject });
      if (!this.committing) void this.commitLoop();
    });
  }

  private async commitLoop(): Promise<void> {
    this.committing = true;
    try {
      while (this.waiting.length > 0) {
        let rows = 0;
        let n = 0;
        while (n < this.waiting.length && (n === 0 || rows + this.waiting[n]!.rows.length <= MAX_GROUP_ROWS)) rows += this.waiting[n++]!.rows.length;
        await this.background?.yieldToForeground();
        const group = this.waiting.splice(0, n);
        await this.commit(group);
      }
      // One index upkeep for the whole burst (the index spaces these out itself).
      this.index.optimizeSoon();
    } finally {
      this.committing = false;
    }
  }

  private async commit(group: Waiting[]): Promise<void> {
    try {
      await this.index.add(
        group.flatMap((w) => w.rows),
        this.embedder,
      );
      this.commits++;
      for (const w of group) w.resolve();
    } catch (err) {
      if (group.length === 1) return group[0]!.reject(err);
      // One bad document must not fail its neighbours: write them one by one to find out which.
      for (const w of group) await this.commit([w]);
    }
  }
}
