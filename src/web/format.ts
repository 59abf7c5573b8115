/** How pages write sizes, times, counts, types, languages and statuses for people. */
import { TYPE_FILTER_NAMES } from '../core/document-types.js';

export { formatBytes } from '../core/bytes.js';

/** "1 chunk", "2 chunks", "1,204 documents": a count and its noun, agreeing. `many` defaults to `one` + "s". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

/** `2026-11-22 12:30 UTC` from epoch milliseconds: every page shows times in UTC, the zone a day typed in a filter is read in. */
export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

const TYPE_NAMES: Record<string, string> = {
  'application/pdf': 'PDF',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'DOCX',
  'text/plain': 'Text',
  'text/markdown': 'Markdown',
  'text/html': 'HTML',
  'text/csv': 'CSV',
  'text/tab-separated-values': 'TSV',
  'application/rtf': 'RTF',
  'message/rfc822': 'E-mail',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'PPTX',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'XLSX',
  'application/vnd.oasis.opendocument.text': 'ODT',
  'application/vnd.oasis.opendocument.presentation': 'ODP',
  'application/vnd.oasis.opendocument.spreadsheet': 'ODS',
  'application/epub+zip': 'EPUB',
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/tiff': 'TIFF',
  'image/webp': 'WebP',
  'application/msword': 'DOC',
  'application/vnd.ms-excel': 'XLS',
  'application/vnd.ms-powerpoint': 'PPT',
};

export const typeName = (contentType: string): string => TYPE_NAMES[contentType] ?? contentType;

/** A type as filters name it (`txt`, `eml`) as pages write it ("Text", "E-mail"). */
export const filterTypeName = (name: string): string => {
  const contentType = TYPE_FILTER_NAMES[name];
  return contentType ? typeName(contentType) : name;
};

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' });
/**
 * "German" for a language code (the code itself for one Intl does not know). A code that is no language tag at all
 * (`constructor`, `1`, from a URL the search then refuses) makes Intl throw: the chip shows it as typed, not a 500.
 */
export const languageTitle = (code: string): string => {
  try {
    return languageNames.of(code) ?? code;
  } catch {
    return code;
  }
};
/** "German (de)" for a language code; "not determined" for und. */
export const languageName = (code: string): string => (code === 'und' ? 'not determined' : `${languageTitle(code)} (${code})`);

/** "p. 3" or "pp. 3–4" for a result's page span. */
export function pageSpan(start?: number, end?: number): string | null {
  if (start === undefined) return null;
  return end !== undefined && end !== start ? `pp. ${start}–${end}` : `p. ${start}`;
}

/**
 * An error message as a sentence of its own: "the file is empty" → "The file is empty." One that opens with an
 * e-mail address keeps it as written ("bob@example.com owns …").
 */
export function sentence(text: string): string {
  const s = text.trim();
  const first = /^[^\s@]+@/.test(s) ? s.charAt(0) : s.charAt(0).toUpperCase();
  return first + s.slice(1) + (/[.!?…]$/.test(s) ? '' : '.');
}
