/**
 * One document through the stages, in order:
 *
 *   load original (file store) → extract (worker thread, time + memory limit) → OCR of pages without a
 *   text layer (ocr-stage.ts) → chunk (model tokens) → embed (batched) → write (LanceDB, idempotent per document)
 *
 * Progress: parse 0.1, OCR by pages 0.1 → 0.2, chunk 0.2, embed 0.2 → 0.9 by batches, write 1.0 (set by the worker with the ready
 * status). The pipeline owns no state: the worker passes everything in and decides what a failure means.
 */
import type { Embedder } from '../models/embedder.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import type { DocumentRecord } from '../store/sqlite/documents.js';
import { chunkDocument } from './chunk.js';
import { embedChunks } from './embed.js';
import type { Extractor } from './extract.js';
import type { FileStore } from './file-store.js';
import { applyOcr, type OcrStage } from './ocr-stage.js';
import { ParseError } from './parsers/errors.js';
import type { DocumentType } from './types.js';
import { writeChunks } from './write.js';

export interface PipelineDeps {
  files: FileStore;
  extractor: Pick<Extractor, 'extract'>;
  embedder: Embedder;
  chunks: ChunkIndex;
  /** Overlap between consecutive chunks, in model tokens. */
  overlapTokens: number;
  /** OCR of scanned pages; absent means none. */
  ocr?: OcrStage;
}

export interface PipelineHooks {
  /** Called between stages and batches. Returns false when the document is gone (deleted): the run stops. */
  progress(value: number): Promise<boolean>;
}

export interface PipelineResult {
  chunkCount: number;
  pages: number | null;
  warnings: string[];
  /** Milliseconds per stage, for the `document.ingested` event and the ingest bench. */
  timings: { parseMs: number; ocrMs: number; chunkMs: number; embedMs: number; writeMs: number };
}

/** Thrown when the document was deleted while it was being processed: nothing to report. */
export class DocumentGone extends Error {
  override name = 'DocumentGone';
}

export const PROGRESS = { parsed: 0.1, chunked: 0.2, embedEnd: 0.9 } as const;

export async function runPipeline(deps: PipelineDeps, doc: DocumentRecord, hooks: PipelineHooks): Promise<PipelineResult> {
  const step = async (value: number) => {
    if (!(await hooks.progress(value))) throw new DocumentGone(doc.id);
  };

  let t = performance.now();
  const lap = () => {
    const now = performance.now();
    const ms = Math.round(now - t);
    t = now;
    return ms;
  };
  let bytes: Buffer;
  try {
    bytes = await deps.files.read(doc.sha256);
  } catch (err) {
    throw new ParseError('the uploaded file is missing from the file store', { cause: err });
  }
  const type = doc.contentType as DocumentType;
  const extracted = await deps.extractor.extract(bytes, type, { filename: doc.filename });
  const parseMs = lap();
  await step(PROGRESS.parsed);
  const parsed = await applyOcr(deps.ocr, extracted, bytes, type, (share) => step(PROGRESS.parsed + (PROGRESS.chunked - PROGRESS.parsed) * share));
  const ocrMs = lap();

  const chunks = await chunkDocument(parsed, {
    tokenizer: deps.embedder.tokenizer,
    maxTokens: deps.embedder.maxTokens,
    overlapTokens: deps.overlapTokens,
    title: parsed.title ?? doc.filename,
  });
  const chunkMs = lap();
  await step(PROGRESS.chunked);

  await deps.embedder.init();
  const vectors = await embedChunks(deps.embedder, chunks, (done, total) =>
    step(PROGRESS.chunked + ((PROGRESS.embedEnd - PROGRESS.chunked) * done) / total),
  );

  const embedMs = lap();
  await step(PROGRESS.embedEnd);
  await writeChunks(
    deps.chunks,
    { id: deps.embedder.id, dimension: deps.embedder.dimension },
    { documentId: doc.id, userId: doc.userId, projectId: doc.projectId },
    chunks,
    vectors,
  );
  const writeMs = lap();
  return { chunkCount: chunks.length, pages: parsed.pages ?? null, warnings: parsed.warnings, timings: { parseMs, ocrMs, chunkMs, embedMs, writeMs } };
}
