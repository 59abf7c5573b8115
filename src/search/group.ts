/**
 * Results grouped by document: one entry per document, ranked by its best passage, holding its best few
 * passages in rank order. (Ranking a document by its best passage measured best on SciFact; see
 * docs/search.md for the alternatives tried.)
 */
import type { RankedChunk } from './retrieve.js';

export interface DocumentGroup {
  documentId: string;
  /** The document's score: its best passage's. */
  score: number;
  /** Its best passages, best first, at most the number asked for. */
  passages: RankedChunk[];
  /** How many of its passages are in the result list (passages holds the first few). */
  matches: number;
}

export function groupByDocument(ranked: readonly RankedChunk[], perDocument: number): DocumentGroup[] {
  const groups = new Map<string, DocumentGroup>();
  for (const r of ranked) {
    const id = r.chunk.document_id;
    let g = groups.get(id);
    if (!g) {
      g = { documentId: id, score: r.score, passages: [], matches: 0 };
      groups.set(id, g);
    }
    g.matches++;
    if (g.passages.length < perDocument) g.passages.push(r);
  }
  return [...groups.values()];
}
