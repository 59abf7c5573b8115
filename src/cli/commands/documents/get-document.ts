import { spellings } from '../../../core/name-spellings.js';
import { DOCUMENT, type DocumentRecord } from '../../api-types.js';
import type { Context } from '../../context.js';
import { ApiError, CliError } from '../../../terminal/errors.js';
import { listDocuments } from './list.js';

/** The one error for documents that do not exist, naming each id (like projectNotFound): exit 1. */
export function documentsNotFound(ids: string[], baseUrl: string): CliError {
  const named = ids.map((id) => `"${id}"`).join(', ');
  return new CliError(`${ids.length === 1 ? 'document' : 'documents'} ${named} not found on ${baseUrl}`, undefined, 'see your documents with `docsearch documents list`');
}

const DOCUMENT_ID = /^doc_[0-9a-z]{9}[0-9A-Za-z]{12}$/;

/**
 * Every document `query` finds under either spelling of `name` (in `field`), each once: a macOS file name comes
 * decomposed, the same name typed elsewhere composed, and the server compares paths byte for byte.
 */
async function listUnder(ctx: Context, field: 'path' | 'filename', name: string): Promise<DocumentRecord[]> {
  const pages = await Promise.all(spellings(name).map((n) => listDocuments(ctx.http(), { [field]: n })));
  return [...new Map(pages.flat().map((d) => [d.id, d])).values()];
}

/**
 * The document a name means: the one uploaded from that path (`upload --sync`), else the one of that file name, in
 * either Unicode spelling; a name several documents share is refused, listing them, so nothing is done by guess.
 * Null when none has it. Every page is read: `filename` matches names that contain it, so an exact match can lie
 * past the first page.
 */
async function byName(ctx: Context, name: string): Promise<DocumentRecord | null> {
  const nfc = name.normalize('NFC');
  let found = await listUnder(ctx, 'path', name);
  if (found.length === 0) found = (await listUnder(ctx, 'filename', name)).filter((d) => d.filename.normalize('NFC') === nfc);
  if (found.length <= 1) return found[0] ?? null;
  const lines = found.map((d) => `  ${d.id}  ${d.path ?? d.filename}`).join('\n');
  throw new CliError(`${found.length} documents are named "${name}":\n${lines}`, undefined, 'name one by its id');
}

/**
 * Looks each document up, all at once: by id (GET /api/v1/documents/{id}), or by sync path or file name. References
 * the server does not know are named together, so a typo among several is found before anything is done to the others.
 */
export async function getDocuments(ctx: Context, refs: string[]): Promise<DocumentRecord[]> {
  const http = ctx.http();
  const lookup = async (ref: string): Promise<DocumentRecord | null> => {
    if (!DOCUMENT_ID.test(ref)) return byName(ctx, ref);
    try {
      return await http.get(`/api/v1/documents/${encodeURIComponent(ref)}`, { shape: DOCUMENT });
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }
  };
  const found = await Promise.all(refs.map(lookup));
  const missing = refs.filter((_, i) => found[i] === null);
  if (missing.length > 0) throw documentsNotFound(missing, http.baseUrl);
  return found as DocumentRecord[];
}
