/**
 * The keyword analysis of chunks stored before today's (issue 59): a deriver for the chunk backfill (backfill.ts) that
 * detects each pending row's language (or takes its document's set one) and writes its `keyword_text` as ingestion
 * does today (write.ts `keywordFields`). Pending: rows an older release stored without `keyword_text` (until none is
 * left, the keyword index on `search_text` serves searches; then searches switch to `keyword_text`:
 * ChunkIndex.completeKeywordAnalysis), and rows an earlier analysis wrote whose text today's reads otherwise
 * (`REANALYSED`). Once none is pending it records each document's language from its chunks'.
 */
import { mapInTurns } from '../core/loop-turns.js';
import { ANALYSIS_VERSION } from '../language/analyse.js';
import { JOINERS } from '../language/joined-words.js';
import { mostCommonLanguage } from '../language/detect.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import { type DocumentStore, UNDETERMINED } from '../store/sql/documents.js';
import type { ChunkDeriver } from './backfill.js';
import { keywordFields } from './write.js';

/** A character in a Rust regex class (LanceDB's `regexp_like`), whatever it is. */
const literal = (chars: string) => [...chars].map((c) => `\\x{${c.codePointAt(0)!.toString(16)}}`).join('');

/** The characters that join word runs into one word, but the point and the digit-group spaces: between letters. */
const LETTER_JOINERS = literal(JOINERS.replace(/[.,\u00a0\u202f\u2009]/g, ''));

/**
 * The rows analysis 1 wrote (`keyword_analysis` null) that analysis 2 may read otherwise: text with the letters of
 * the languages detection tells by their own function words since (Polish, Czech, Slovak, Slovene, Croatian, Latvian,
 * Lithuanian, Estonian, Vietnamese, Esperanto: it told them English), with a soft hyphen, ZWNJ, ZWJ or word joiner, or
 * Hebrew points; and Lithuanian and Serbian rows (their stop lists are read as meant now).
 */
const SINCE_1 =
  "language IN ('lt', 'sr') OR regexp_like(text, " +
  "'[ąćęłńśźżĄĆĘŁŃŚŹŻěčřšžťďňůĚČŘŠŽŤĎŇŮĺľŕĹĽŔđĐāēīūģķļņĀĒĪŪĢĶĻŅėįųĖĮŲõÕăơưĂƠƯĉĝĥĵŝŭĈĜĤĴŜŬ\u00ad\u200c\u200d\u2060\u0591-\u05c7]')";

/**
 * Rows analysis 1 labelled English that are Afrikaans, Latin or Tagalog, which detection tells by their function
 * words since analysis 2 (function-words.ts): text with one of their common ones English does not have.
 */
const AF_LA_TL =
  "language = 'en' AND regexp_like(text, '\\b(?:nie|het|hulle|vir|ons|ek|jy|sal|baie|sed|quod|atque|autem|quae|quam|sunt|neque|etiam|tamen|mga|ang|ay|hindi|ito|siya|kanyang)\\b')";

/**
 * The rows analyses 1 and 2 wrote that analysis 3 may read otherwise (joined-words.ts, and the stem of a Latin word
 * without its diacritics): analysed text (`search_text`, the title and headings with the text) with a letter or digit,
 * then a hyphen, underscore, apostrophe, middle dot or ampersand, then a letter or digit (e-mail, parse_config, O'Brien,
 * R&D); digits with a point, comma or spacing between them (3.14, 1,500); a letter standing alone before a point and a
 * letter (U.S.A., e.g.); a capital after two letters and before two lower-case ones (parseConfig); a Latin letter
 * with a diacritic (résumé). In English prose that is most rows (96 % of SciFact's abstracts, by their hyphens and
 * decimals): the analysis is read again, not the embedding, in the background, while searches use the forms as they
 * were.
 */
const SINCE_2 =
  'regexp_like(search_text, ' +
  `'[\\p{L}\\p{N}][${LETTER_JOINERS}][\\p{L}\\p{N}]` +
  `|\\p{N}[${literal('.,\u00a0\u202f\u2009')}]\\p{N}` +
  '|(?:^|[^\\p{L}\\p{N}])\\p{L}\\.\\p{L}(?:[^\\p{L}\\p{N}]|$)' +
  '|\\p{L}\\p{L}\\p{Lu}\\p{Ll}\\p{Ll}' +
  "|[\\p{Latin}&&[^\\x00-\\x7F]]|[A-Za-z]\\p{M}')";

/**
 * The rows analyses 1 to 3 wrote that analysis 4 may read otherwise: a letter standing alone before ++ or # (C++,
 * C#: symbol-words.ts); a point between a letter and two, or two and one (Ph.D., M.Sc.); an ampersand in a word of
 * three letters or more (AT&T, also att), or in a longer joined one (R&D-team); an underscore after a word of letters
 * and digits and before digits (x86_64, now x86-64). Rare outside technical text.
 */
const SINCE_3 =
  'regexp_like(search_text, ' +
  "'(?:^|[^\\p{L}\\p{M}\\p{N}])\\p{L}(?:\\+\\+|#)(?:[^+#\\p{L}]|$)" +
  '|(?:^|[^\\p{L}\\p{N}])(?:\\p{L}\\.\\p{L}\\p{L}|\\p{L}\\p{L}\\.\\p{L})(?:[^\\p{L}\\p{N}]|$)' +
  `|\\p{L}\\p{L}&\\p{L}|\\p{L}&\\p{L}\\p{L}|\\p{L}&\\p{L}[${LETTER_JOINERS}]|[${LETTER_JOINERS}]\\p{L}&\\p{L}` +
  "|\\p{L}[\\p{L}\\p{N}]*\\p{N}_\\p{N}')";

/**
 * The rows an earlier analysis wrote whose text today's (4) may read otherwise, in LanceDB SQL. Every other row is
 * analysed as before: an upgrade rewrites only these.
 */
export const REANALYSED =
  `(keyword_analysis IS NULL AND ((${SINCE_1}) OR (${AF_LA_TL}))) OR ((keyword_analysis IS NULL OR keyword_analysis < 3) AND ${SINCE_2})` +
  ` OR ((keyword_analysis IS NULL OR keyword_analysis < 4) AND ${SINCE_3})`;

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
      return mapInTurns(rows, (r) => keywordFields(r.text as string, r.search_text as string, set.get(r.document_id as string)));
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
