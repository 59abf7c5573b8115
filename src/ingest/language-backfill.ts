/**
 * The keyword analysis of chunks an older release stored (issue 59): a deriver for the chunk backfill
 * (backfill.ts) that detects each pending row's language and writes its `keyword_text` as ingestion does today
 * (write.ts `keywordFields`). Until every row has it the keyword index on `search_text` serves searches; once none
 * is pending it switches them to `keyword_text` (ChunkIndex.completeKeywordAnalysis) and records each document's
 * language from its chunks'.
 */
import { ANALYSIS_VERSION } from '../language/analyse.js';
import { mostCommonLanguage } from '../language/detect.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import { type DocumentStore, UNDETERMINED } from '../store/sql/documents.js';
import type { ChunkDeriver } from './backfill.js';
import { keywordFields } from './write.js';

export function languageDeriver(deps: {
  chunks: Pick<ChunkIndex, 'completeKeywordAnalysis' | 'languageTally'>;
  documents: Pick<DocumentStore, 'readyWithoutLanguage' | 'setLanguages'>;
}): ChunkDeriver {
  return {
    name: 'language',
    reads: ['text', 'search_text'],
    writes: ['language', 'keyword_text'],
    pending: 'keyword_text IS NULL',
    async derive(rows) {
      return rows.map((r) => keywordFields(r.text as string, r.search_text as string, null));
    },
    async complete() {
      await deps.chunks.completeKeywordAnalysis(ANALYSIS_VERSION);
      const unknown = await deps.documents.readyWithoutLanguage();
      if (unknown.length === 0) return;
      const tally = await deps.chunks.languageTally();
      await deps.documents.setLanguages(new Map(unknown.map((id) => [id, mostCommonLanguage(tally.get(id)) ?? UNDETERMINED])));
    },
  };
}
