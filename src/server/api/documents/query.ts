import { z } from 'zod';
import { invalidRequest } from '../../../core/errors.js';
import { MOMENT, momentOf } from '../../../core/moment.js';
import { CSV, DOC, DOCX, EML, EPUB, HTML, JPEG, MARKDOWN, ODP, ODS, ODT, PDF, PNG, PPT, PPTX, RTF, TIFF, TSV, TXT, WEBP, XLS, XLSX } from '../../../ingest/types.js';
import { DOCUMENT_SORTS, type DocumentFilter, type DocumentPosition, type DocumentSort } from '../../../store/sql/documents.js';
import { decodeCursor, encodeCursor } from '../pagination.js';
import { MAX_PATH_CHARS } from './paths.js';
import { DocumentStatus } from './wire.js';

/**
 * The filters and order of a document list, shared by `GET /api/v1/documents` and the Documents page so both
 * accept the same words and mean the same by them.
 */

/** Short type names, as people and `--type` say them. */
export const DOCUMENT_TYPES = { pdf: PDF, docx: DOCX, txt: TXT, md: MARKDOWN, html: HTML, pptx: PPTX, xlsx: XLSX, odt: ODT, odp: ODP, ods: ODS, csv: CSV, tsv: TSV, rtf: RTF, epub: EPUB, eml: EML, png: PNG, jpeg: JPEG, tiff: TIFF, webp: WEBP, doc: DOC, xls: XLS, ppt: PPT } as const;
export type DocumentTypeName = keyof typeof DOCUMENT_TYPES;

/** A time as RFC 3339, or a day (YYYY-MM-DD, 00:00 UTC); epoch milliseconds after parsing. */
export const Time = z
  .string()
  .max(40)
  .regex(MOMENT, 'must be a date (2026-03-31) or an RFC 3339 time (2026-03-31T12:00:00Z)')
  .transform((v, ctx) => {
    const ms = momentOf(v);
    if (ms === null) {
      ctx.addIssue({ code: 'custom', message: 'is not a real date' });
      return z.NEVER;
    }
    return ms;
  });

export const DocumentListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(400).optional().describe('next_cursor of the previous page (with the same sort)'),
  project_id: z.string().min(1).max(100).optional(),
  status: DocumentStatus.optional(),
  type: z.enum(Object.keys(DOCUMENT_TYPES) as [DocumentTypeName, ...DocumentTypeName[]]).optional().describe(Object.keys(DOCUMENT_TYPES).join(', ')),
  path: z.string().min(1).max(MAX_PATH_CHARS).optional().describe('only documents uploaded from this relative path'),
  filename: z.string().min(1).max(255).optional().describe('only documents whose name contains this, any case'),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}(,[0-9a-f]{64}){0,99}$/, 'must be one to 100 lowercase hex SHA-256 digests, comma-separated')
    .optional()
    .describe('only documents with these contents: up to 100 SHA-256 digests, comma-separated (is this file already in my library, and where?)'),
  uploaded_since: Time.optional().describe('uploaded at or after this date or time'),
  uploaded_before: Time.optional().describe('uploaded before this date or time'),
  sort: z
    .enum(DOCUMENT_SORTS)
    .default('uploaded')
    .describe('uploaded (oldest first, the default), name (case-insensitive) or size; a leading - reverses'),
});
export type DocumentListQuery = z.output<typeof DocumentListQuery>;

export function toFilter(q: Pick<DocumentListQuery, 'project_id' | 'status' | 'type' | 'path' | 'filename' | 'sha256' | 'uploaded_since' | 'uploaded_before'>): DocumentFilter {
  return {
    ...(q.project_id ? { projectId: q.project_id } : {}),
    ...(q.status ? { status: q.status } : {}),
    ...(q.type ? { contentType: DOCUMENT_TYPES[q.type] } : {}),
    ...(q.path !== undefined ? { path: q.path } : {}),
    ...(q.filename ? { filename: q.filename } : {}),
    ...(q.sha256 ? { sha256: [...new Set(q.sha256.split(','))] } : {}),
    ...(q.uploaded_since !== undefined ? { uploadedFrom: q.uploaded_since } : {}),
    ...(q.uploaded_before !== undefined ? { uploadedBefore: q.uploaded_before } : {}),
  };
}

/**
 * Cursors are opaque. In upload order (the default) a cursor is the last id, as for every other list; in any
 * other order it also carries the order and the last sort value, and is refused under a different order.
 */
export function encodeListCursor(sort: DocumentSort, at: DocumentPosition): string {
  if (sort === 'uploaded') return encodeCursor(at.id);
  return Buffer.from(JSON.stringify([sort, at.key ?? null, at.id]), 'utf8').toString('base64url');
}

export function decodeListCursor(sort: DocumentSort, cursor: string | undefined): DocumentPosition | undefined {
  if (cursor === undefined) return undefined;
  if (sort === 'uploaded') return { id: decodeCursor(cursor)! };
  const bad = invalidRequest('query.cursor: not a cursor this server issued for this sort order');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad;
  }
  if (!Array.isArray(value) || value.length !== 3 || value[0] !== sort) throw bad;
  const [, key, id] = value as [string, unknown, unknown];
  const keyOk = sort.endsWith('size') ? Number.isSafeInteger(key) : sort.endsWith('name') ? typeof key === 'string' && key.length <= 1024 : key === null;
  if (!keyOk || typeof id !== 'string') throw bad;
  decodeCursor(encodeCursor(id)); // the id's own format check
  return key === null ? { id } : { id, key: key as string | number };
}
