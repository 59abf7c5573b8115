import type { Context } from 'koa';
import type { Actor } from '../../../access/access-control.js';
import { AppError, notFound } from '../../../core/errors.js';
import { DOCX, JPEG, PDF, PNG, TXT, WEBP } from '../../../ingest/types.js';
import { notModified, requestedRange } from '../../middleware/caching.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';

/** Originals browsers can show themselves open inline (a PDF at `#page=N`, an image the viewer shows); anything else downloads. */
const INLINE = new Set<string>([PDF, TXT, PNG, JPEG, WEBP]);

/** An RFC 6266 header: an ASCII fallback for old clients, and the exact name as RFC 5987 `filename*`. */
export function contentDisposition(kind: 'inline' | 'attachment', filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/**
 * Answers with a document's original file, or the one byte range a GET asks of it (206, read from the store as
 * that range only), streamed from the file store; 404 when the actor may not read it (or it is gone), before any
 * Range is looked at. Shared by the API route and the web page route, so both ask access/ alike and send the same
 * headers. HEAD asks the store for the size only: on object storage, opening the object would start a download
 * nobody reads.
 */
export async function sendOriginal(ctx: Context, s: Services, actor: Actor, documentId: string): Promise<void> {
  const { document: doc } = await s.access.document(actor, documentId, 'read');
  ctx.set('Content-Disposition', contentDisposition(INLINE.has(doc.contentType) ? 'inline' : 'attachment', doc.filename));
  // The browser may keep its copy, privately, but asks each time (access can be taken away): a large original then
  // costs a 304, not a download. The bytes are content-addressed, so their hash is a strong ETag.
  ctx.set('Cache-Control', 'private, no-cache');
  // PDF viewers, media players and resumed downloads ask for parts of large files.
  ctx.set('Accept-Ranges', 'bytes');
  if (notModified(ctx, { etag: `"${doc.sha256}"`, lastModified: new Date(doc.updatedAt) })) return;
  // The recorded size is that of the hashed bytes: the range is chosen without asking the store first.
  const range = requestedRange(ctx, doc.sizeBytes);
  if (range === 'unsatisfiable') {
    throw new AppError('range_not_satisfiable', `the Range asks for no byte of the file (${doc.sizeBytes} bytes)`, { headers: { 'Content-Range': `bytes */${doc.sizeBytes}` } });
  }
  const original = ctx.method === 'HEAD' ? await s.files.stat(doc.sha256) : await s.files.open(doc.sha256, range);
  if (!original) throw notFound('document');
  if (range && original.size !== doc.sizeBytes) {
    if ('body' in original) original.body.destroy();
    // Another object than the one hashed: its bytes at these offsets are not the range asked for.
    throw new Error(`original ${doc.sha256} is ${original.size} bytes in the store, not the ${doc.sizeBytes} recorded`);
  }
  // The bytes are the user's, not ours: no script, no styles, no framing. object-src stays open because
  // Chromium's built-in PDF viewer is an embedded plugin that `object-src 'none'` would refuse.
  ctx.set('Content-Security-Policy', "default-src 'none'; object-src 'self'; frame-ancestors 'none'; base-uri 'none'");
  ctx.set('Content-Type', doc.contentType === TXT ? 'text/plain; charset=utf-8' : doc.contentType);
  if (range) {
    ctx.status = 206;
    ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${original.size}`);
  }
  // Exactly the bytes that follow: the range's, or the stored object's.
  ctx.set('Content-Length', String(range ? range.end - range.start + 1 : original.size));
  if ('body' in original) ctx.body = original.body;
}

export const getDocumentFile = (s: Services) =>
  defineRoute({
    name: 'documents.file',
    method: 'GET',
    path: '/documents/:id/file',
    scope: 'read:documents',
    tag: 'documents',
    summary:
      'The original uploaded file, byte for byte, with its detected Content-Type. PDF and text are served inline ' +
      "(a browser opens a PDF at `#page=N`), DOCX as an attachment; the name is in Content-Disposition's `filename*`.",
    params: IdParams,
    responses: {
      200: { description: 'The original bytes (also for a Range this route answers whole: see 206)', media: [PDF, DOCX, TXT] },
      206: {
        description:
          'The bytes one `Range: bytes=…` asks for (`a-b`, `a-`, `-n`; ranges that overlap or touch are joined, ones that stay apart get the whole file, 200), ' +
          'with `Content-Range: bytes a-b/size`; an `If-Range` that is not the ETag or the Last-Modified date gets the whole file. GET only: HEAD describes the whole',
        media: [PDF, DOCX, TXT],
      },
      304: { description: 'Not modified: If-None-Match holds the ETag (the bytes\' SHA-256), or If-Modified-Since is not before Last-Modified (no body)' },
      404: { description: 'Not found (or a document the caller may not read)', schema: ErrorBody },
      416: { description: 'No byte of the file is in the Range (`range_not_satisfiable`); `Content-Range: bytes */size`', schema: ErrorBody },
    },
    async handler({ params, principal, ctx }) {
      await sendOriginal(ctx, s, principal, params.id);
      return { status: ctx.status };
    },
  });
