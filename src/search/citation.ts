/**
 * What a passage cites, in the unit its document type has (ingest/types.ts CITATION_UNITS): PDF and image pages,
 * slides, spreadsheet rows (with the sheet: the passage's heading), EPUB chapters. The numbers are the chunk's
 * stored page range; this names what they count.
 */
import type { CitationFields } from '../core/citation-label.js';
import { CITATION_UNITS, type DocumentType } from '../ingest/types.js';

/** `sheet` is the sheet the rows are on (spreadsheets with named sheets); core/citation-label.ts reads it out. */
export type Citation = CitationFields;

export function citation(contentType: string, p: { page_start?: number; page_end?: number; heading?: string }): Citation | undefined {
  const unit = CITATION_UNITS[contentType as DocumentType];
  if (!unit || p.page_start === undefined) return undefined;
  const out: Citation = { unit, start: p.page_start, end: p.page_end ?? p.page_start };
  if (unit === 'row' && p.heading) out.sheet = p.heading;
  return out;
}
