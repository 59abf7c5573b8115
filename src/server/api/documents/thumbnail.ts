import type { Context } from 'koa';
import { AppError, notFound } from '../../../core/errors.js';
import { PDF } from '../../../ingest/types.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';

/**
 * Answers with the first page of a user's PDF as a WebP image; 404 when the document is not theirs, is no PDF, or
 * its page cannot be drawn. Shared by the API route and the document page, like the original.
 */
export async function sendThumbnail(ctx: Context, s: Services, userId: string, documentId: string): Promise<void> {
  const doc = await s.documents.get(userId, documentId);
  if (!doc || !(await s.files.stat(doc.sha256))) throw notFound('document');
  if (doc.contentType !== PDF) throw new AppError('not_found', 'only PDFs have a thumbnail');
  const image = await s.thumbnails.render(doc.sha256, () => s.files.read(doc.sha256), { owner: userId });
  if (!image) throw new AppError('not_found', 'the first page of this PDF could not be drawn');
  ctx.status = 200;
  ctx.type = 'image/webp';
  // The same bytes always give the same image: the browser may keep it, privately.
  ctx.set('Cache-Control', 'private, max-age=86400');
  ctx.set('ETag', `"${doc.sha256.slice(0, 32)}-${s.thumbnails.width}"`);
  ctx.body = Buffer.from(image.buffer, image.byteOffset, image.byteLength);
}

export const getDocumentThumbnail = (s: Services) =>
  defineRoute({
    name: 'documents.thumbnail',
    method: 'GET',
    path: '/documents/:id/thumbnail',
    scope: 'read:documents',
    tag: 'documents',
    summary: 'The first page of a PDF as a WebP image 320 pixels wide (DOCX and TXT have none: 404).',
    params: IdParams,
    responses: {
      200: { description: 'The image', media: ['image/webp'] },
      404: { description: 'Not found, not a PDF, or the page could not be drawn', schema: ErrorBody },
      503: { description: 'Too many thumbnails being drawn at once; try again', schema: ErrorBody },
    },
    async handler({ params, principal, ctx }) {
      await sendThumbnail(ctx, s, principal.userId, params.id);
      return { status: 200 };
    },
  });
