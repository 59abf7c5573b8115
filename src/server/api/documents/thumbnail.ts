import type { Context } from 'koa';
import type { Actor } from '../../../access/access-control.js';
import { z } from 'zod';
import { AppError, notFound } from '../../../core/errors.js';
import { PDF } from '../../../ingest/types.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';

/** `?page=N`: which page to draw (the document page's preview steps through them). */
export const ThumbnailQuery = z.strictObject({ page: z.coerce.number().int().min(1).max(100_000).default(1) });

/**
 * Answers with a page (the first by default) of a PDF as a WebP image; 404 when the actor may not read the document,
 * it is no PDF, has no such page, or its page cannot be drawn. Shared by the API route and the document page, like the
 * original.
 */
export async function sendThumbnail(ctx: Context, s: Services, actor: Actor, documentId: string, page = 1): Promise<void> {
  const { document: doc } = await s.access.document(actor, documentId, 'read');
  if (!(await s.files.stat(doc.sha256))) throw notFound('document');
  if (doc.contentType !== PDF) throw new AppError('not_found', 'only PDFs have a thumbnail');
  if (doc.pages !== null && page > doc.pages) throw new AppError('not_found', `this PDF has ${doc.pages} page${doc.pages === 1 ? '' : 's'}: there is no page ${page}`);
  const image = await s.thumbnails.render(doc.sha256, () => s.files.read(doc.sha256), { owner: actor.userId, page });
  if (!image) throw new AppError('not_found', `${page === 1 ? 'the first page' : `page ${page}`} of this PDF could not be drawn`);
  ctx.status = 200;
  ctx.type = 'image/webp';
  // The same bytes always give the same image: the browser may keep it, privately.
  ctx.set('Cache-Control', 'private, max-age=86400');
  ctx.set('ETag', `"${doc.sha256.slice(0, 32)}-${s.thumbnails.width}${page === 1 ? '' : `-p${page}`}"`);
  ctx.body = Buffer.from(image.buffer, image.byteOffset, image.byteLength);
}

export const getDocumentThumbnail = (s: Services) =>
  defineRoute({
    name: 'documents.thumbnail',
    method: 'GET',
    path: '/documents/:id/thumbnail',
    scope: 'read:documents',
    tag: 'documents',
    summary: 'A page of a PDF (`page`, default the first) as a WebP image 320 pixels wide (DOCX and TXT have none: 404).',
    params: IdParams,
    query: ThumbnailQuery,
    responses: {
      200: { description: 'The image', media: ['image/webp'] },
      404: { description: 'Not found, not a PDF, no such page, or the page could not be drawn', schema: ErrorBody },
      503: { description: 'Too many thumbnails being drawn at once; try again', schema: ErrorBody },
    },
    async handler({ params, query, principal, ctx }) {
      await sendThumbnail(ctx, s, principal, params.id, query.page);
      return { status: 200 };
    },
  });
