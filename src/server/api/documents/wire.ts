import { z } from 'zod';
import { toIso } from '../../../core/clock.js';
import { MAX_FILENAME_CHARS } from '../../../core/name-limits.js';
import { DOCUMENT_STATUSES, type DocumentRecord } from '../../../store/sql/documents.js';
import type { Services } from '../../services.js';
import { nameTextProblem } from '../../../core/unsafe-text.js';
import { Metadata, Timestamp } from '../schemas.js';

export const DocumentStatus = z.enum(DOCUMENT_STATUSES);

/**
 * A name to show: 1–255 characters, no control, bidi formatting or invisible characters (core/unsafe-text.ts) and no folder
 * separators (the path says where it came from); composed (NFC), as an uploaded file's name is (multipart.ts).
 */
export const DocumentFilename = z
  .string()
  .trim()
  .normalize('NFC')
  .min(1)
  .max(MAX_FILENAME_CHARS)
  .superRefine((value, ctx) => {
    const problem = nameTextProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .regex(/^[^/\\]+$/, 'must not contain / or \\')
  .refine((name) => name !== '.' && name !== '..', 'must not be "." or ".."');

export const DocumentSchema = z
  .object({
    id: z.string(),
    project_id: z.string(),
    filename: z.string(),
    content_type: z.string().describe('decided from the bytes (a ZIP by what it holds): application/pdf, text/plain, text/markdown, text/html, text/csv, image/png … — docs/ingest.md lists them'),
    size_bytes: z.number().int(),
    sha256: z.string(),
    status: DocumentStatus,
    progress: z.number().min(0).max(1).describe('0.1 parsed, 0.1 → 0.2 while scanned pages are OCR\'d, up to 0.95 by the share of the text written, 1 ready (docs/ingest.md#documents)'),
    chunk_count: z.number().int(),
    pages: z.number().int().nullable(),
    warnings: z.array(z.string()),
    error: z.string().nullable().describe('why the document failed, for people'),
    metadata: Metadata,
    path: z.string().nullable().describe('the relative path it was uploaded from (multipart `paths`), or null'),
    attached_to: z
      .string()
      .nullable()
      .describe('the id of the e-mail this document was attached to (deleted with it; `path` is then under the message\'s), or null'),
    uploaded_by: z.string().nullable().describe('the e-mail of who uploaded it (null when that account was deleted: the document stays)'),
    source_id: z.string().nullable().describe('the source that keeps this document current (GET /projects/{id}/sources/{source_id}), or null: an upload'),
    source_path: z.string().nullable().describe("the document's path in its source (a file's path in the folder or bucket, a page's path on the site, a message's folder and id), or null"),
    language: z
      .string()
      .nullable()
      .describe('the language most of its chunks are in (ISO 639-1, e.g. "de"; "und" when none could be told), once it is ready; null before (docs/search.md#languages)'),
    language_setting: z
      .string()
      .nullable()
      .describe('the language its upload, source or project set it to (its chunks are analysed in it rather than detected), or null'),
    ocr_languages: z
      .string()
      .nullable()
      .describe('the OCR languages its upload or project set for its scanned pages (Tesseract codes, "deu+eng"), or null: the server\'s --ocr-languages. What read it is in `warnings`\' OCR note; a language not installed there is a warning of its own'),
    labels: z.array(z.string()).describe('its labels\' names, from its project\'s vocabulary (GET /projects/{id}/labels), sorted (an extra of docsearch: docs/api.md#labels)'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Document' });

export const UploadedDocument = DocumentSchema.extend({
  duplicate: z.boolean().optional().describe('true when the project already held these bytes: that document is returned'),
}).meta({ id: 'UploadedDocument' });

export const documentToWire = (d: DocumentRecord, uploadedBy: string | null, labels: readonly string[]) => ({
  id: d.id,
  project_id: d.projectId,
  filename: d.filename,
  content_type: d.contentType,
  size_bytes: d.sizeBytes,
  sha256: d.sha256,
  status: d.status,
  progress: d.progress,
  chunk_count: d.chunkCount,
  pages: d.pages,
  warnings: d.warnings,
  error: d.error,
  metadata: d.metadata,
  path: d.path,
  attached_to: d.attachedTo,
  uploaded_by: uploadedBy,
  source_id: d.sourceId,
  source_path: d.sourcePath,
  language: d.language,
  language_setting: d.languageSetting,
  ocr_languages: d.ocrLanguages,
  labels: [...labels],
  created_at: toIso(d.createdAt),
  updated_at: toIso(d.updatedAt),
});

/** Documents on the wire, each with its uploader's e-mail and its labels (one lookup of each for all). */
export async function documentsToWire(s: Pick<Services, 'users' | 'labels'>, docs: DocumentRecord[]) {
  const [emails, labels] = await Promise.all([s.users.emails(docs.map((d) => d.userId)), s.labels.ofDocuments(docs.map((d) => d.id))]);
  return docs.map((d) => documentToWire(d, emails.get(d.userId) ?? null, (labels.get(d.id) ?? []).map((l) => l.name)));
}

export const oneDocumentToWire = async (s: Pick<Services, 'users' | 'labels'>, doc: DocumentRecord) => (await documentsToWire(s, [doc]))[0]!;
