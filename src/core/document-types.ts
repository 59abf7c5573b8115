/**
 * The document types docsearch reads, by content type, and the names people know them by. Ingest decides a file's
 * type from its bytes (ingest/sniff.ts); filters (core/filters.ts) and the CLI name types by these names.
 */
import { ownTable } from './own-table.js';

/** The content types the pipeline accepts, decided from the bytes (see ingest/sniff.ts and sniff-zip.ts). */
export const PDF = 'application/pdf';
export const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
export const TXT = 'text/plain';
export const MARKDOWN = 'text/markdown';
export const HTML = 'text/html';
export const CSV = 'text/csv';
export const TSV = 'text/tab-separated-values';
export const RTF = 'application/rtf';
export const EML = 'message/rfc822';
export const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
export const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
export const ODT = 'application/vnd.oasis.opendocument.text';
export const ODP = 'application/vnd.oasis.opendocument.presentation';
export const ODS = 'application/vnd.oasis.opendocument.spreadsheet';
export const EPUB = 'application/epub+zip';
export const PNG = 'image/png';
export const JPEG = 'image/jpeg';
export const TIFF = 'image/tiff';
export const WEBP = 'image/webp';
/** Legacy binary Office (OLE2): read after LibreOffice converts them (ingest/office/libreoffice.ts), when it is installed. */
export const DOC = 'application/msword';
export const XLS = 'application/vnd.ms-excel';
export const PPT = 'application/vnd.ms-powerpoint';

export const DOCUMENT_TYPES = [PDF, DOCX, TXT, MARKDOWN, HTML, CSV, TSV, RTF, EML, PPTX, XLSX, ODT, ODP, ODS, EPUB, PNG, JPEG, TIFF, WEBP, DOC, XLS, PPT] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** The short name a person knows each type by (the upload page, the CLI, the 415 text, error messages). */
export const TYPE_NAMES: Record<DocumentType, string> = {
  [PDF]: 'PDF', [DOCX]: 'DOCX', [TXT]: 'TXT', [MARKDOWN]: 'Markdown', [HTML]: 'HTML', [CSV]: 'CSV', [TSV]: 'TSV',
  [RTF]: 'RTF', [EML]: 'EML', [PPTX]: 'PPTX', [XLSX]: 'XLSX', [ODT]: 'ODT', [ODP]: 'ODP', [ODS]: 'ODS',
  [EPUB]: 'EPUB', [PNG]: 'PNG', [JPEG]: 'JPEG', [TIFF]: 'TIFF', [WEBP]: 'WebP', [DOC]: 'DOC', [XLS]: 'XLS', [PPT]: 'PPT',
};

/**
 * The names a `type` filter takes (any case): each type's name as docs/ingest.md writes it, lowercased, and the
 * other names people use for some (`md`, `jpg`, `email` …). Without a prototype: the names are looked up as typed, and
 * `constructor` or `__proto__` must not be found on Object's (a 500 once, from the filter that took the function).
 */
export const TYPE_FILTER_NAMES = ownTable<Record<string, DocumentType>>({
  ...Object.fromEntries(DOCUMENT_TYPES.map((t) => [TYPE_NAMES[t].toLowerCase(), t])),
  md: MARKDOWN,
  htm: HTML,
  text: TXT,
  email: EML,
  jpg: JPEG,
  tif: TIFF,
});

/** A content type's filter name (`application/pdf` → `pdf`), or the content type itself for one not read here. */
export const typeFilterName = (contentType: string): string => (contentType in TYPE_NAMES ? TYPE_NAMES[contentType as DocumentType].toLowerCase() : contentType);
