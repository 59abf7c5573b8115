/**
 * One document through the stages:
 *
 *   load original (file store) → extract (pooled worker thread, time + memory limit) → OCR of pages without a
 *   usable text layer (ocr-stage.ts) → in slices of SLICE chunks: chunk (model tokens) → embed (shared micro-batches) → write (group commit)
 *
 * Slices make a huge document stream: its chunks, vectors and rows exist a slice at a time, the work per slice
 * is the same whatever the document's size (linear time), progress moves after every slice, and between slices
 * the event loop and the embedder serve other documents and searches. The next slice is chunked and embedded
 * while the previous one is written.
 *
 * Progress: 0.1 parsed, OCR by pages 0.1 → 0.2, then up to 0.95 by the share of the text written, 1.0 with the ready status (set by
 * the worker). The pipeline owns no state: the worker passes everything in and decides what a failure means.
 */
import { storableValue } from '../core/storable-text.js';
import type { Embedder } from '../models/embedder.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import type { DocumentRecord } from '../store/sql/documents.js';
import { chunkStream } from './chunk.js';
import { embedChunks } from './embed.js';
import type { Extractor } from './extract.js';
import { DamagedOriginal, type FileStore, MissingOriginal } from '../store/objects/originals.js';
import { mostCommonLanguage } from '../language/detect.js';
import { applyOcr, type OcrStage } from './ocr-stage.js';
import { ParseError } from './parsers/errors.js';
import type { Attachment, Chunk, DocumentType, ParsedDocument } from './types.js';
import { type ChunkWriter, documentFields, toRows } from './write.js';

export interface PipelineDeps {
  files: FileStore;
  extractor: Pick<Extractor, 'extract'>;
  embedder: Embedder;
  chunks: Pick<ChunkIndex, 'deleteDocument'>;
  writer: Pick<ChunkWriter, 'write'>;
  /** Overlap between consecutive chunks, in model tokens. */
  overlapTokens: number;
  /** OCR of scanned pages; absent means none. */
  ocr?: OcrStage;
}

export interface PipelineHooks {
  /** Called between stages and slices. Returns false when the document is gone (deleted): the run stops. */
  progress(value: number): Promise<boolean>;
  /** An earlier run of this job (crashed, or handed back unfinished) may have written rows: removed first. */
  mayHaveRows: boolean;
  /** The document's labels (ids) as the run starts: its chunks carry them (the worker checks them again once ready). */
  labelIds: readonly string[];
}

export interface PipelineResult {
  chunkCount: number;
  pages: number | null;
  warnings: string[];
  /** What the file says about itself (ParsedDocument.metadata), for the document's metadata. */
  metadata?: Record<string, unknown>;
  /** Files it carries that become documents of their own (an e-mail's attachments). */
  attachments: Attachment[];
  /** The language most of its chunks are in (ISO 639-1), or null when none could be told. */
  language: string | null;
  /**
   * Milliseconds per stage, for the `document.ingested` event and the ingest bench. Slices overlap (one is
   * embedded while the previous one is written), so embed and write are each stage's own time, not a split.
   */
  timings: { parseMs: number; ocrMs: number; chunkMs: number; embedMs: number; writeMs: number };
}

/** Thrown when the document was deleted while it was being processed: nothing to report. */
export class DocumentGone extends Error {
  override name = 'DocumentGone';
}

export const PROGRESS = { parsed: 0.1, ocr: 0.2, written: 0.95 } as const;

/** Chunks per slice: 4 micro-batches of the built-in model, and a short enough hold of the event loop while chunking. */
export const SLICE = 64;
/**
 * A slice ends sooner once chunking it has held the event loop this long: text the tokenizer reads slowly (a base64
 * blob, ~8 µs a character) took seconds a slice.
 */
const SLICE_HOLD_MS = 50;

/** Its own function so the original's bytes are garbage once parsed (an async function keeps its locals). */
async function parse(deps: PipelineDeps, doc: DocumentRecord): Promise<ParsedDocument> {
  const parsed = await deps.extractor.extract(await original(deps, doc), doc.contentType as DocumentType, { filename: doc.filename });
  // What a file says about itself (an e-mail's Subject decoding to a NUL) is stored in SQL, where PostgreSQL refuses
  // a NUL that SQLite keeps: cleaned, so the document is ready on either engine. Its text goes to LanceDB as it is.
  return parsed.metadata ? { ...parsed, metadata: storableValue(parsed.metadata) as Record<string, unknown> } : parsed;
}

/** A missing or damaged original fails the document; a store that cannot answer right now (object storage down) is retried. */
async function original(deps: PipelineDeps, doc: DocumentRecord): Promise<Buffer> {
  try {
    return await deps.files.read(doc.sha256);
  } catch (err) {
    if (err instanceof DamagedOriginal) throw new ParseError('the stored file is damaged (its bytes no longer match the SHA-256 they were stored under): delete this document and upload the file again', { cause: err });
    if (err instanceof MissingOriginal) throw new ParseError('the uploaded file is missing from the file store', { cause: err });
    throw err;
  }
}

/** OCR of the pages the parser found no usable text on; the original is read again only when there are some. */
async function ocr(deps: PipelineDeps, doc: DocumentRecord, parsed: ParsedDocument, progress: (share: number) => Promise<void>): Promise<ParsedDocument> {
  if (!deps.ocr || !parsed.ocrPages?.length) return parsed;
  return applyOcr(deps.ocr, parsed, await original(deps, doc), doc.contentType as DocumentType, progress, doc.ocrLanguages);
}

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function runPipeline(deps: PipelineDeps, doc: DocumentRecord, hooks: PipelineHooks): Promise<PipelineResult> {
  const step = async (value: number) => {
    if (!(await hooks.progress(value))) throw new DocumentGone(doc.id);
  };
  const timings = { parseMs: 0, ocrMs: 0, chunkMs: 0, embedMs: 0, writeMs: 0 };
  const since = (t: number) => performance.now() - t;

  let t = performance.now();
  const extracted = await parse(deps, doc);
  timings.parseMs = since(t);
  await step(PROGRESS.parsed);
  t = performance.now();
  const parsed = await ocr(deps, doc, extracted, (share) => step(PROGRESS.parsed + (PROGRESS.ocr - PROGRESS.parsed) * share));
  timings.ocrMs = since(t);
  if (hooks.mayHaveRows) await deps.chunks.deleteDocument(doc.id);
  await deps.embedder.init();

  let taken = 0;
  const chunks = chunkStream(parsed, {
    tokenizer: deps.embedder.tokenizer,
    maxTokens: deps.embedder.maxTokens,
    overlapTokens: deps.overlapTokens,
    title: parsed.title ?? doc.filename,
    onProgress: (done, total) => (taken = total > 0 ? done / total : 1),
  });
  // The metadata markReady records: what the uploader gave wins over what the file says.
  const fields = documentFields(doc, hooks.labelIds, { ...parsed.metadata, ...doc.metadata });
  const target = { documentId: doc.id, userId: doc.userId, projectId: doc.projectId, language: doc.languageSetting, fields };
  const languages = new Map<string | null, number>();
  const model = { id: deps.embedder.id, dimension: deps.embedder.dimension };
  let count = 0;
  let previous: Promise<void> | undefined;
  let previousShare = 0;
  // The newest slice's work; it waits for the slices before it, so awaiting it awaits them all.
  let latest: Promise<void> | undefined;
  try {
    for (;;) {
      t = performance.now();
      const slice: Chunk[] = [];
      while (slice.length < SLICE && (slice.length === 0 || since(t) < SLICE_HOLD_MS)) {
        const next = chunks.next();
        if (next.done) break;
        slice.push(next.value);
      }
      timings.chunkMs += since(t);
      if (slice.length === 0) break;
      count += slice.length;
      const before = previous;
      const work = (async () => {
        let s = performance.now();
        const embedded = await embedChunks(deps.embedder, slice);
        timings.embedMs += since(s);
        await before; // rows are committed in document order
        s = performance.now();
        const rows = await toRows(target, slice, embedded);
        for (const r of rows) languages.set(r.language ?? null, (languages.get(r.language ?? null) ?? 0) + 1);
        await deps.writer.write(rows);
        timings.writeMs += since(s);
      })();
      latest = work;
      work.catch(() => undefined); // awaited below; this only keeps a failure from counting as unhandled meanwhile
      if (before) {
        await before;
        await step(PROGRESS.ocr + (PROGRESS.written - PROGRESS.ocr) * previousShare);
      }
      previous = work;
      previousShare = taken;
      await yieldToLoop();
    }
    await previous;
  } catch (err) {
    // Nothing of this document may still be embedding or writing when the caller goes on: a shutdown closes the
    // model and the stores next, and a native call in flight then ends the process.
    await latest?.catch(() => undefined);
    throw err;
  }
  const ms = (v: number) => Math.round(v);
  return {
    chunkCount: count,
    pages: parsed.pages ?? null,
    warnings: parsed.warnings,
    ...(parsed.metadata ? { metadata: parsed.metadata } : {}),
    attachments: parsed.attachments ?? [],
    language: mostCommonLanguage(languages),
    timings: { parseMs: ms(timings.parseMs), ocrMs: ms(timings.ocrMs), chunkMs: ms(timings.chunkMs), embedMs: ms(timings.embedMs), writeMs: ms(timings.writeMs) },
  };
}
