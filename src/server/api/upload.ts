import { rm } from 'node:fs/promises';
import { z } from 'zod';
import { invalidRequest } from '../../core/errors.js';
import { firstUnstorable } from '../../core/storable-text.js';
import type { DocumentRecord } from '../../store/sql/documents.js';
import type { Services } from '../services.js';
import { legacyOffice, receiveMultipart } from './documents/multipart.js';
import { parsePaths } from './documents/paths.js';
import { documentsToWire, UploadedDocument } from './documents/wire.js';
import { parseLabelField } from './labels/names.js';
import { MAX_JSON_DEPTH, suspectKey, tooDeep } from '../../core/json-checks.js';
import { defineRoute } from './route.js';
import { ErrorBody } from './schemas.js';
import { resolveBearer, unauthorized } from '../middleware/bearer.js';
import { LANGUAGE_SETTING, OCR_LANGUAGES_SETTING } from '../../core/language-settings.js';
import type { UploadSettings } from '../../documents/lifecycle.js';

const MAX_WAIT_S = 600;

/** Form fields besides `file`. */
export const UPLOAD_FIELDS = ['project_id', 'metadata', 'paths', 'labels', 'language', 'ocr_languages'] as const;

const UploadQuery = z.strictObject({
  wait: z.enum(['true', 'false', '1', '0']).optional().describe('block until every document is ready or failed'),
  wait_timeout: z.coerce.number().int().min(1).max(MAX_WAIT_S).optional().describe(`seconds to wait at most (default ${MAX_WAIT_S})`),
});

function parseMetadata(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined || raw.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw invalidRequest('metadata: must be a JSON object (could not parse it as JSON)');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalidRequest('metadata: must be a JSON object');
  // As JSON bodies (json-body.ts): a `__proto__` key was kept where no filter, PATCH or MCP call could name it again.
  const suspect = suspectKey(raw);
  if (suspect) throw invalidRequest(`${suspect.path.replace(/^body/, 'metadata')}: ${suspect.problem}`);
  if (tooDeep(value)) throw invalidRequest(`metadata: nested deeper than ${MAX_JSON_DEPTH} levels`);
  const unstorable = firstUnstorable(value, 'metadata');
  if (unstorable) throw invalidRequest(`${unstorable.path}: ${unstorable.problem}`);
  return value as Record<string, unknown>;
}

/** The upload's `language` and `ocr_languages` fields (absent or empty: the project's settings). */
function parseSettings(fields: Partial<Record<(typeof UPLOAD_FIELDS)[number], string>>): UploadSettings {
  const language = fields.language?.trim().toLowerCase() || undefined;
  const ocr = fields.ocr_languages?.trim() || undefined;
  if (language !== undefined && !LANGUAGE_SETTING.test(language)) throw invalidRequest(`language: "${language}" is not an ISO 639-1 language code (such as de, zh)`);
  if (ocr !== undefined && !OCR_LANGUAGES_SETTING.test(ocr)) throw invalidRequest(`ocr_languages: "${ocr}" is not Tesseract language codes joined by "+" (such as deu, deu+eng, chi_sim)`);
  return { ...(language ? { language } : {}), ...(ocr ? { ocrLanguages: ocr } : {}) };
}

export const upload = (s: Services) =>
  defineRoute({
    name: 'upload',
    method: 'POST',
    path: '/upload',
    scope: 'write:documents',
    tag: 'documents',
    summary:
      'Upload documents (multipart/form-data: `file` repeatable, `project_id`, `metadata`, `paths`, `labels`, `language`, `ocr_languages`). The type comes from the bytes; ' +
        '`language` (ISO 639-1) sets the language its text is analysed in instead of detecting it, `ocr_languages` (Tesseract codes, "deu+eng") the ' +
        'languages its scanned pages are read in (a language not installed is named in the document\'s warnings); each unset one is the project\'s. ' +
      'the same bytes already in the project return that document with `duplicate: true` (and `labels` added to it). `labels`: label names, ' +
      'comma-separated or a JSON array, put on every file (made in the project\'s vocabulary where missing; an extra of docsearch). `paths` is a JSON array with one ' +
      'relative path (or null) per file, in order: new bytes at a path that already holds a document replace it, and the old ' +
      'version leaves search in the same transaction that makes the new one searchable (it stays if the new one fails). ' +
      'With `?wait=true` the answer comes when each document is ready or failed.',
    query: UploadQuery,
    rawBody: true,
    responses: {
      200: { description: 'With ?wait=true: every document settled (ready or failed)', schema: z.object({ documents: z.array(UploadedDocument) }) },
      202: { description: 'Accepted and queued (or, with ?wait=true, still processing when the wait ran out or the server began shutting down)', schema: z.object({ documents: z.array(UploadedDocument) }) },
      400: { description: 'Malformed form, unknown field, bad metadata, too many files', schema: ErrorBody },
      401: { description: 'Missing, malformed, unknown, expired or revoked credential (see WWW-Authenticate), also when it ended (revoked, expired, its account disabled) while the body was arriving: nothing was stored', schema: ErrorBody },
      404: { description: 'Project not found', schema: ErrorBody },
      413: { description: 'A file is larger than the limit', schema: ErrorBody },
      415: { description: 'Not multipart, or a file of a type docsearch does not read (accepted, by their bytes: PDF, DOCX, ODT, RTF, EPUB, PPTX, ODP, XLSX, ODS, CSV, TSV, TXT, Markdown, HTML, EML, PNG, JPEG, TIFF, WebP; legacy DOC, XLS and PPT when the server has LibreOffice, else refused saying what to install; an encrypted Office file is refused)', schema: ErrorBody },
      507: { description: 'The server is out of disk space (`insufficient_storage`), or the upload would pass a quota (`quota_exceeded`): nothing was stored', schema: ErrorBody },
    },
    async handler({ query, principal, ctx }) {
      const received = await receiveMultipart(ctx.req, s.files, {
        maxFileBytes: s.config.maxUploadMb * 1024 * 1024,
        maxFiles: s.config.maxFiles,
        idleMs: s.config.uploadIdleTimeout * 1000,
        fields: UPLOAD_FIELDS,
        legacyOffice: legacyOffice(s),
      });
      const temps = received.files.map((f) => f.tempPath);
      try {
        const metadata = parseMetadata(received.fields.metadata);
        const labels = parseLabelField(received.fields.labels, 'labels');
        const paths = parsePaths(received.fields.paths, received.files.length);
        const settings = parseSettings(received.fields);
        // The body can take minutes to arrive: a key revoked or an account disabled meanwhile stores nothing.
        const still = await resolveBearer(s.bearerResolvers, ctx.get('authorization') || undefined);
        if (!still.ok) throw unauthorized(`${still.message} while the upload was arriving: nothing of it was stored`, still.withError);
        const projectId = await s.access.uploadTarget(principal, received.fields.project_id);
        const files = received.files.map((f, i) => ({ ...f, path: paths[i] ?? null }));
        const accepted = await s.ingest.accept(principal.userId, projectId, files, metadata, labels, settings);
        temps.length = 0;
        const dup = new Map(accepted.map((a) => [a.document.id, a.duplicate]));
        // A duplicate is the document someone uploaded before: its own uploader.
        const wire = async (docs: DocumentRecord[]) => (await documentsToWire(s, docs)).map((d) => ({ ...d, ...(dup.get(d.id) ? { duplicate: true } : {}) }));
        if (query.wait === 'true' || query.wait === '1') {
          const ids = [...new Set(accepted.map((a) => a.document.id))];
          const { documents, settled } = await s.ingest.waitSettled(ids, (query.wait_timeout ?? MAX_WAIT_S) * 1000);
          const byId = new Map(documents.map((d) => [d.id, d]));
          return { status: settled ? 200 : 202, body: { documents: await wire(accepted.map((a) => byId.get(a.document.id) ?? a.document)) } };
        }
        return { status: 202, body: { documents: await wire(accepted.map((a) => a.document)) } };
      } finally {
        // Temp files not handed to the file store (a 404 project, bad metadata) are not kept.
        await Promise.all(temps.map((p) => rm(p, { force: true })));
      }
    },
  });
