/**
 * The relevance floor: the cosine similarity below which a chunk is not a "match" by meaning, only a
 * nearest neighbour. The vector list never ends (every chunk has a nearest-neighbour rank), so without a
 * floor a hybrid search would answer anything, nonsense included, with a full page. With it:
 *
 * - a result list is the keyword matches plus the chunks at or above the floor (rank fusion orders them);
 * - a query with neither is `weak`: the response says so and shows only the nearest few.
 *
 * Similarities are on each model's own scale, so the floor is calibrated per embedder (`npm run
 * bench:quality -- --tune`: SciFact train queries against generated nonsense queries, bench/nonsense.ts).
 * An embedder without a calibrated floor has none: every vector neighbour counts, and nothing is weak.
 */
import { BUILTIN_EMBEDDER_IDS } from '../models/builtin/minilm-embedder.js';

// The int8 model's similarities follow fp32's closely (docs/models.md), and the same floor measured the same on
// SciFact and the nonsense queries for both (docs/search.md).
const FLOORS: Readonly<Record<string, number>> = {
  [BUILTIN_EMBEDDER_IDS.fp32]: 0.35,
  [BUILTIN_EMBEDDER_IDS.int8]: 0.35,
};

/** The calibrated floor for vectors of `embedderId`, or null when it has none. */
export function relevanceFloor(embedderId: string): number | null {
  return FLOORS[embedderId] ?? null;
}
