import type { Context } from 'koa';
import type { Actor } from '../../../access/access-control.js';
import { z } from 'zod';
import { AppError, notFound } from '../../../core/errors.js';
import { imageThumbnail } from '../../../ingest/image-thumbnail.js';
import { IMAGE_TYPES, PDF } from '../../../ingest/types.js';
import { MissingOriginal } from '../../../store/objects/originals.js';
import { notModified } from '../../middleware/caching.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';

/** `?page=N`: which page to draw (the document page's preview steps through them). */
export const ThumbnailQuery = z.strictObject({ page: z.coerce.number().int().min(1).max(100_000).default(1) });

/** Whether documents of `contentType` have thumbnails: PDFs and images (scans, photos). */
export const hasThumbnail = (contentType: string): boolean => contentType === PDF || IMAGE_TYPES.has(contentType);

/**
 * Answers with a page (the first by default) of a PDF or an image (a scan) as a WebP image; 404 when the actor may
 * not read the document, it is neither, has no such page, its stored file is missing or damaged, or its page cannot be
 * drawn. Shared by the API route and the document page, like the original.
 */
export async function sendThumbnail(ctx: Context, s: Services, actor: Actor, documentId: string, page = 1): Promise<void> {
  const { document: doc } = await s.access.document(actor, documentId, 'read');
  if (!(await s.files.stat(doc.sha256))) throw notFound('document');
  const image = IMAGE_TYPES.has(doc.contentType);
  if (!hasThumbnail(doc.contentType)) throw new AppError('not_found', 'only PDFs and images have a thumbnail');
  const noun = image ? 'image' : 'PDF';
  if (doc.pages !== null && page > doc.pages) throw new AppError('not_found', `this ${noun} has ${doc.pages} page${doc.pages === 1 ? '' : 's'}: there is no page ${page}`);
  // The same bytes always give the same image: the browser may keep it, privately, and a copy it holds is not drawn again.
  ctx.set('Cache-Control', 'private, max-age=86400');
  if (notModified(ctx, { etag: `"${doc.sha256.slice(0, 32)}-${s.thumbnails.width}${page === 1 ? '' : `-p${page}`}"` })) return;
  // An original the store no longer holds intact is this document's problem, said so (other storage errors stay 5xx).
  const read = () =>
    s.files.read(doc.sha256).catch((err: unknown) => {
      if (err instanceof MissingOriginal) throw new AppError('not_found', `the stored file of this ${noun} is missing or damaged: no page can be drawn`);
      throw err;
    });
  const webp = image ? await imageThumbnail(doc.sha256, read, page, s.thumbnails.width) : await s.thumbnails.render(doc.sha256, read, { owner: actor.userId, page });
  if (!webp) throw new AppError('not_found', `${page === 1 ? 'the first page' : `page ${page}`} of this ${noun} could not be drawn`);
  ctx.type = 'image/webp';
  ctx.body = Buffer.from(webp.buffer, webp.byteOffset, webp.byteLength);
}

export const getDocumentThumbnail = (s: Services) =>
  defineRoute({
    name: 'documents.thumbnail',
    method: 'GET',
    path: '/documents/:id/thumbnail',
    scope: 'read:documents',
    tag: 'documents',
    summary: 'A page of a PDF or an image (`page`, default the first) as a WebP image 320 pixels wide (other types have none: 404).',
    params: IdParams,
    query: ThumbnailQuery,
    responses: {
      200: { description: 'The image', media: ['image/webp'] },
      304: { description: 'Not modified: the ETag sent in If-None-Match is the image\'s (no body)' },
      404: { description: 'Not found, neither a PDF nor an image, no such page, its stored file missing or damaged, or the page could not be drawn', schema: ErrorBody },
      503: { description: 'Too many thumbnails being drawn at once; try again', schema: ErrorBody },
    },
    async handler({ params, query, principal, ctx }) {
      await sendThumbnail(ctx, s, principal, params.id, query.page);
      return { status: ctx.status };
    },
  });
