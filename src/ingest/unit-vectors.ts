/**
 * Unit vectors at ingest: a chunk's answer units (answer-units.ts), each with a vector pooled from the chunk's own
 * model pass (Embedder.embedUnits: late chunking), stored encoded in the chunk's row (store/lancedb/unit-vectors.ts),
 * so a search scores a result's units against its query vector without a model pass. Pooling the pass the chunk
 * takes anyway costs a few percent of it; embedding each unit again would cost a second pass
 * (docs/BENCHMARKS.md#answer-snippets). The units' vectors see the chunk's header (title, headings) and their
 * neighbours, as the chunk's own vector does.
 *
 * Embedders without token states (Ollama, OpenAI-compatible) store the spans alone: their results' answers are
 * chosen by the query's terms (docs/search.md).
 *
 * `unitsDeriver` gives stored chunks without units (written by an earlier release) theirs, in the background
 * (backfill.ts).
 */
import { mapInTurns } from '../core/loop-turns.js';
import type { Embedder, EmbedOptions } from '../models/embedder.js';
import { encodeUnits, type UnitSpan } from '../store/lancedb/unit-vectors.js';
import { answerUnits } from './answer-units.js';
import type { ChunkDeriver } from './backfill.js';

export interface EmbeddedChunk {
  vector: Float32Array;
  /** The encoded units (the row's `units`). */
  units: Uint8Array;
}

interface UnitInput {
  /** The chunk's text (what results show; the units are spans of it). */
  text: string;
  /** What is embedded: a header, then `text`. */
  embedText: string;
}

/** Where `text` starts in `embedText` (which ends with it), or -1 when it does not end with it. */
const textOffset = (c: UnitInput): number => (c.embedText.endsWith(c.text) ? c.embedText.length - c.text.length : -1);

/** Each chunk's vector and encoded units; with an embedder that pools units, from one pass per chunk. */
/** The header `text` was embedded under (title, heading path), trimmed: context for its units' terms. */
const headerOf = (c: UnitInput): string => (textOffset(c) > 0 ? c.embedText.slice(0, textOffset(c)).trim() : '');

export async function embedWithUnits(embedder: Pick<Embedder, 'embed' | 'embedUnits'>, chunks: readonly UnitInput[], opts: EmbedOptions): Promise<EmbeddedChunk[]> {
  const spans = await mapInTurns(chunks, (c) => answerUnits(c.text));
  if (!embedder.embedUnits) {
    const vectors = await embedder.embed(chunks.map((c) => c.embedText), opts);
    return vectors.map((vector, i) => ({ vector, units: encodeUnits(spans[i]!, null, headerOf(chunks[i]!)) }));
  }
  const out = await embedder.embedUnits(
    chunks.map((c, i) => {
      const at = textOffset(c);
      return { text: c.embedText, units: at < 0 ? [] : spans[i]!.map((u) => [u.start + at, u.end + at] as const) };
    }),
    opts,
  );
  return out.map((r, i) => ({ vector: r.vector, units: encodeUnits(spans[i]!, withVectors(spans[i]!, r.units), headerOf(chunks[i]!)) }));
}

/** One vector (or null) per unit; all null when the model pooled none (the text was not at the end of what it embedded). */
const withVectors = (spans: UnitSpan[], vectors: (Float32Array | null)[]): (Float32Array | null)[] => spans.map((_, i) => vectors[i] ?? null);

/** The backfill's deriver: units for stored chunks without them, from their stored text and `search_text`. */
export function unitsDeriver(embedder: Pick<Embedder, 'embed' | 'embedUnits'>): ChunkDeriver {
  return {
    name: 'units',
    reads: ['text', 'search_text'],
    writes: ['units'],
    pending: 'units IS NULL',
    // A batch is ~64 model passes: a few seconds of background work, and a shutdown waits no longer.
    batchRows: 64,
    async derive(rows) {
      const chunks = rows.map((r) => ({ text: r.text as string, embedText: r.search_text as string }));
      if (!embedder.embedUnits) return mapInTurns(chunks, (c) => ({ units: encodeUnits(answerUnits(c.text), null, headerOf(c)) }));
      return (await embedWithUnits(embedder, chunks, { kind: 'passage' })).map((e) => ({ units: e.units }));
    },
  };
}
