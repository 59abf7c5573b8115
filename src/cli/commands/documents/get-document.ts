import type { DocumentRecord } from '../../api-types.js';
import type { Context } from '../../context.js';
import { ApiError, CliError } from '../../../terminal/errors.js';

/** The one error for documents that do not exist, naming each id (like projectNotFound): exit 1. */
export function documentsNotFound(ids: string[], baseUrl: string): CliError {
  const named = ids.map((id) => `"${id}"`).join(', ');
  return new CliError(`${ids.length === 1 ? 'document' : 'documents'} ${named} not found on ${baseUrl}`, undefined, 'see your documents with `docsearch documents list`');
}

/**
 * Looks each document up (GET /api/v1/documents/{id}), all at once. Ids the server does not know are named
 * together, so a typo among several is found before anything is done to the others.
 */
export async function getDocuments(ctx: Context, ids: string[]): Promise<DocumentRecord[]> {
  const http = ctx.http();
  const results = await Promise.allSettled(ids.map((id) => http.get<DocumentRecord>(`/api/v1/documents/${encodeURIComponent(id)}`)));
  const missing = ids.filter((_, i) => {
    const r = results[i]!;
    return r.status === 'rejected' && r.reason instanceof ApiError && r.reason.status === 404;
  });
  if (missing.length > 0) throw documentsNotFound(missing, http.baseUrl);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return results.map((r) => (r as PromiseFulfilledResult<DocumentRecord>).value);
}
