import type Router from '@koa/router';
import PostalMime from 'postal-mime';
import { decodeText } from '../../ingest/parsers/text-encoding.js';
import { CITATION_UNITS, type DocumentType, EML, HTML, JPEG, MARKDOWN, PDF, PNG, WEBP } from '../../ingest/types.js';
import type { DocumentRecord } from '../../store/sql/documents.js';
import { type ViewBody, viewPage } from '../../web/pages/view.js';
import { documentText } from '../api/documents/text.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { readableAttachments } from './library-common.js';
import { documentFor } from './library-documents.js';
import { render } from './render.js';
import { requireUser, type WebUser } from './session.js';

/** Types the browser shows as they are, at full size. */
export const VIEWABLE_IMAGES = new Set<string>([PNG, JPEG, WEBP]);
/** Chunks of text the viewer shows of a document it shows as text (slides, sheets, office files, plain text). */
const TEXT_CHUNKS = 500;
/** Originals the viewer reads and renders on the request (larger ones: their text, as for other types). */
const MAX_RENDERED_BYTES = 10 * 1024 * 1024;

const list = (v: unknown): string => (Array.isArray(v) ? v.filter((x) => typeof x === 'string').join(', ') : typeof v === 'string' ? v : '');

/** What the viewer shows of `doc`: rendered from its original for images, HTML, Markdown and e-mail; else its text by page. */
async function viewBody(s: Services, user: WebUser, doc: DocumentRecord): Promise<ViewBody> {
  if (VIEWABLE_IMAGES.has(doc.contentType)) return { kind: 'image' };
  if ([HTML, MARKDOWN, EML].includes(doc.contentType) && doc.sizeBytes <= MAX_RENDERED_BYTES) {
    const bytes = new Uint8Array(await s.files.read(doc.sha256));
    if (doc.contentType === EML) {
      const mail = await PostalMime.parse(bytes, { maxNestingDepth: 50, maxHeadersSize: 1024 * 1024 });
      const email = (doc.metadata.email ?? {}) as Record<string, unknown>;
      const attachments = await readableAttachments(s, user, doc.id);
      return {
        kind: 'email',
        headers: { from: list(email.from), to: list(email.to), cc: list(email.cc), date: list(email.date), subject: list(email.subject) },
        html: mail.html ?? null,
        text: mail.text ?? '',
        attachments,
      };
    }
    const text = decodeText(bytes)?.text ?? '';
    return doc.contentType === HTML ? { kind: 'html', html: text } : { kind: 'markdown', markdown: text };
  }
  const t = await documentText(s, user.actor, doc.id, TEXT_CHUNKS);
  // Each chunk's new text (past what the chunk before already held), under the page, slide or rows it starts on.
  const pages = t.pages.map((p) => ({ page: p.page, text: p.chunks.map((c) => (c.placement ? c.placement.separator.trimStart() + c.text.slice(c.placement.overlap) : `${c.text}\n\n`)).join('') }));
  return { kind: 'text', unit: CITATION_UNITS[doc.contentType as DocumentType] ?? null, pages, next: t.next_cursor };
}

/** The viewer page: any document shown in the browser (a PDF goes to its original, which the browser's viewer shows). */
export function viewRoutes(router: Router<AppState>, s: Services): void {
  router.get('document.view', '/documents/:id/view', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const doc = await documentFor(ctx, s, user, ctx.params.id!, 'read');
    if (!doc) return;
    if (doc.contentType === PDF) return ctx.redirect(`/documents/${doc.id}/file`);
    const body = await viewBody(s, user, doc);
    render(ctx, viewPage({ user, csrfToken: ctx.state.session!.csrfToken, document: { id: doc.id, filename: doc.filename, contentType: doc.contentType }, body }));
  });
}
