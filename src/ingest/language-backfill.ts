/**
 * The keyword analysis of chunks stored before today's (issue 59): a deriver for the chunk backfill (backfill.ts) that
 * detects each pending row's language (or takes its document's set one) and writes its `keyword_text` as ingestion
 * does today (write.ts `keywordFields`). Pending: rows an older release stored without `keyword_text` (until none is
 * left, the keyword index on `search_text` serves searches; then searches switch to `keyword_text`:
 * ChunkIndex.completeKeywordAnalysis), and rows an earlier analysis wrote whose text today's reads otherwise
 * (`REANALYSED`). Once none is pending it records each document's language from its chunks'.
 */
import { ANALYSIS_VERSION } from '../language/analyse.js';
import { mostCommonLanguage } from '../language/detect.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import { type DocumentStore, UNDETERMINED } from '../store/sql/documents.js';
import type { ChunkDeriver } from './backfill.js';
import { keywordFields } from './write.js';

/**
 * The rows analysis 1 wrote (`keyword_analysis` null) that analysis 2 may read otherwise, in LanceDB SQL: text with
 * the letters of the languages detection now tells by their own function words (Polish, Czech, Slovak, Slovene,
 * Croatian, Latvian, Lithuanian, Estonian, Vietnamese, Esperanto: it told them English), with a soft hyphen, ZWNJ,
 * ZWJ or word joiner, or Hebrew points; and Lithuanian and Serbian rows (their stop lists are read as meant now).
 * Every other row is analysed as before: an upgrade rewrites only these, not a whole English library.
 */
export const REANALYSED =
  "keyword_analysis IS NULL AND (language IN ('lt', 'sr') OR regexp_like(text, " +
  "'[ąćęłńśźżĄĆĘŁŃŚŹŻěčřšžťďňůĚČŘŠŽŤĎŇŮĺľŕĹĽŔđĐāēīūģķļņĀĒĪŪĢĶĻŅėįųĖĮŲõÕăơưĂƠƯĉĝĥĵŝŭĈĜĤĴŜŬ\u00ad\u200c\u200d\u2060\u0591-\u05c7]'))";

export function languageDeriver(deps: {
  chunks: Pick<ChunkIndex, 'completeKeywordAnalysis' | 'languageTally' | 'keywordAnalysis'>;
  documents: Pick<DocumentStore, 'readyWithoutLanguage' | 'setLanguages' | 'anyMany'>;
}): ChunkDeriver {
  return {
    name: 'language',
    reads: ['document_id', 'text', 'search_text'],
    writes: ['language', 'keyword_text', 'keyword_analysis'],
    // Once the index info records this analysis complete, no row needs it again: the text is not scanned at each start.
    get pending() {
      const recorded = deps.chunks.keywordAnalysis();
      return recorded !== undefined && recorded >= ANALYSIS_VERSION ? 'keyword_text IS NULL' : `keyword_text IS NULL OR (${REANALYSED})`;
    },
    async derive(rows) {
      // A document whose upload, source or project set its language keeps it (ingestion analyses its chunks so).
      const set = new Map((await deps.documents.anyMany([...new Set(rows.map((r) => r.document_id as string))])).map((d) => [d.id, d.languageSetting]));
      return rows.map((r) => keywordFields(r.text as string, r.search_text as string, set.get(r.document_id as string)));
    },
    async complete() {
      // Rows analysed again may have changed language: every document's is counted anew, once, before the version is
      // recorded (a crash in between counts again at the next start).
      const recorded = deps.chunks.keywordAnalysis();
      const reread = recorded !== undefined && recorded < ANALYSIS_VERSION;
      const unknown = reread ? [] : await deps.documents.readyWithoutLanguage();
      if (reread || unknown.length > 0) {
        const tally = await deps.chunks.languageTally();
        const ids = reread ? [...tally.keys()] : unknown;
        await deps.documents.setLanguages(new Map(ids.map((id) => [id, mostCommonLanguage(tally.get(id)) ?? UNDETERMINED])), { replace: reread });
      }
      await deps.chunks.completeKeywordAnalysis(ANALYSIS_VERSION);
    },
  };
}
