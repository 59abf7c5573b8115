import { ROLES } from '../../access/roles.js';
import { z } from 'zod';
import { SCOPES } from '../../auth/scopes.js';
import { unsafeTextProblem } from '../../core/unsafe-text.js';

/** Shared wire schemas of /api/v1. Each is also a named component of the OpenAPI document. */

export const Timestamp = z.string().describe('RFC 3339 UTC time');

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.unknown().optional(),
      request_id: z.string(),
    }),
  })
  .meta({ id: 'Error' });

export const Pagination = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(200).optional(),
});

/** A name people read: refuses controls, bidi formatting and lone surrogates (core/unsafe-text.ts), naming the character. */
export function readableText(value: string, ctx: z.RefinementCtx): void {
  const problem = unsafeTextProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
}

export const Metadata = z.record(z.string(), z.unknown());

export const Project = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    metadata: Metadata,
    is_default: z.boolean(),
    document_count: z.number().int(),
    chunk_count: z.number().int(),
    size_bytes: z.number().int(),
    created_at: Timestamp,
    updated_at: Timestamp,
    role: z.enum(ROLES).describe("the caller's role on the project: viewer, editor or owner (docs/permissions.md)"),
    owner: z.string().nullable().describe("the e-mail of the project's owner of record (null when that account is gone)"),
    language: z.string().nullable().describe('the language its uploads are analysed in (ISO 639-1), or null: detected per chunk (docs/search.md#languages)'),
    ocr_languages: z.string().nullable().describe('the OCR languages its uploads\' scanned pages are read in (Tesseract codes, "deu+eng"), or null: the server\'s --ocr-languages'),
  })
  .meta({ id: 'Project' });

export const ScopeSchema = z.enum(SCOPES);

export const ApiKey = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    prefix: z.string().describe('first characters of the key, for recognising it'),
    last4: z.string(),
    scopes: z.array(ScopeSchema),
    project_ids: z.array(z.string()).nullable().describe('the projects the key is limited to; null: every project its user may read'),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable(),
    expires_at: Timestamp.nullable().describe('from when the key no longer authenticates; null: never'),
    expired: z.boolean().describe('true once `expires_at` has passed: the key gets 401 until it is revoked and replaced'),
  })
  .meta({ id: 'ApiKey' });

export const IdParams = z.strictObject({ id: z.string().min(1).max(100) });
