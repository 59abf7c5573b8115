/**
 * Keeps the builtin reranker's window vectors in step with the chunks table without a stage of its own:
 * the chunk index handed to the ingest pipeline and to document/project removal is wrapped so that every
 * add() also embeds and stores the added chunks' sentence windows, every delete removes them and a move moves them. The
 * write stage deletes a document's chunks before adding them, so windows are replaced per document too.
 * Costs ingest time (one extra model pass over each chunk's sentences) — see docs/BENCHMARKS.md#search-quality.
 */
import type { Embedder } from '../../models/embedder.js';
import type { ChunkWindowIndex, WindowRow } from '../../store/lancedb/chunk-windows.js';
import type { ChunkRow } from '../../store/lancedb/chunk-schema.js';
import type { ChunkIndex } from '../../store/lancedb/chunks.js';
import { sentenceWindows } from '../../ingest/sentence-windows.js';

export async function windowRows(embedder: Pick<Embedder, 'embed'>, rows: Pick<ChunkRow, 'id' | 'user_id' | 'project_id' | 'document_id' | 'text'>[]): Promise<WindowRow[]> {
  const spans = rows.map((r) => sentenceWindows(r.text));
  const texts = rows.flatMap((r, i) => spans[i]!.map((w) => r.text.slice(w.start, w.end)));
  const vectors = await embedder.embed(texts, { kind: 'passage' });
  const out: WindowRow[] = [];
  let k = 0;
  rows.forEach((r, i) =>
    spans[i]!.forEach((w, wi) =>
      out.push({
        chunk_id: r.id,
        user_id: r.user_id,
        project_id: r.project_id,
        document_id: r.document_id,
        window_index: wi,
        start: w.start,
        end: w.end,
        vector: vectors[k++]!,
      }),
    ),
  );
  return out;
}

export function withWindowWrites(chunks: ChunkIndex, embedder: Pick<Embedder, 'embed'>, windows: ChunkWindowIndex): ChunkIndex {
  const overrides: Partial<Record<keyof ChunkIndex, unknown>> = {
    async add(rows: ChunkRow[], model: { id: string; dimension: number }) {
      const made = await windowRows(embedder, rows);
      await chunks.add(rows, model);
      await windows.add(made);
    },
    async optimize() {
      await chunks.optimize();
      await windows.optimize();
    },
    optimizeSoon() {
      chunks.optimizeSoon();
      windows.optimizeSoon();
    },
    async deleteDocument(documentId: string) {
      await chunks.deleteDocument(documentId);
      await windows.deleteDocument(documentId);
    },
    async moveDocument(documentId: string, projectId: string, fields?: Parameters<ChunkIndex['moveDocument']>[2]) {
      await chunks.moveDocument(documentId, projectId, fields);
      await windows.moveDocument(documentId, projectId);
    },
    async deleteDocuments(documentIds: string[]) {
      await chunks.deleteDocuments(documentIds);
      await windows.deleteDocuments(documentIds);
    },
    async documentIds() {
      return new Set([...(await chunks.documentIds()), ...(await windows.documentIds())]);
    },
    async deleteProject(projectId: string) {
      await chunks.deleteProject(projectId);
      await windows.deleteProject(projectId);
    },
  };
  return new Proxy(chunks, {
    get(target, prop, receiver) {
      if (prop in overrides) return overrides[prop as keyof ChunkIndex];
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
