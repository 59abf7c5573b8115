import type Router from '@koa/router';
import { decodeText } from '../../ingest/parsers/text-encoding.js';
import { CITATION_UNITS, CSV, type DocumentType, EML, HTML, JPEG, MARKDOWN, ODP, ODS, PDF, PNG, PPT, PPTX, TSV, WEBP, XLS, XLSX } from '../../ingest/types.js';
import { MissingOriginal } from '../../store/objects/originals.js';
import type { DocumentRecord } from '../../store/sql/documents.js';
import { type OpenedPassage, type ViewBody, type ViewSheet, viewPage } from '../../web/pages/view.js';
import { cursorAt, documentText } from '../api/documents/text.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { openedPassage, queryString, readableAttachments } from './library-common.js';
import { documentFor } from './library-documents.js';
import { render } from './render.js';
import { requireUser, type WebUser } from './session.js';

/** Types the browser shows as they are, at full size. */
export const VIEWABLE_IMAGES = new Set<string>([PNG, JPEG, WEBP]);
/** Types shown as tables of their rows, and as slides. */
const SHEETS = new Set<string>([CSV, TSV, XLSX, ODS, XLS]);
const SLIDES = new Set<string>([PPTX, ODP, PPT]);
/** Chunks of text the viewer shows of a document it shows as text (slides, office files, plain text). */
const TEXT_CHUNKS = 500;
/** Originals the viewer reads and renders on the request (larger ones: their text, as for other types). */
const MAX_RENDERED_BYTES = 10 * 1024 * 1024;
/** Rows of a sheet the viewer shows at once: the first ones, or those around the passage opened. */
const SHEET_ROWS = 2_000;

/** The original's bytes, or null when the store has none intact (missing, or damaged since): the viewer then shows its indexed text. */
async function intactOriginal(s: Services, doc: DocumentRecord): Promise<Uint8Array | null> {
  try {
    return new Uint8Array(await s.files.read(doc.sha256));
  } catch (err) {
    if (err instanceof MissingOriginal) return null;
    throw err;
  }
}

const list = (v: unknown): string => (Array.isArray(v) ? v.filter((x) => typeof x === 'string').join(', ') : typeof v === 'string' ? v : '');

/**
 * A sheet's rows as tables (through the extractor's workers, as ingest parses them), with the opened passage's row:
 * the row of its range whose text holds the answer, else the first. Rows past SHEET_ROWS are left out, but those of
 * the passage are kept.
 */
async function sheetBody(s: Services, doc: DocumentRecord, passage: OpenedPassage | null): Promise<ViewBody | null> {
  const bytes = await intactOriginal(s, doc);
  if (!bytes) return null;
  const parsed = await s.extractor.extract(bytes, doc.contentType as DocumentType, { cells: true }).catch(() => null);
  if (!parsed) return null;
  const sheets = new Map<string | null, ViewSheet>();
  const [from, to] = passage?.rows ?? [0, 0];
  const window = (row: number) => row >= from - 50 && row <= to + 50;
  for (const b of parsed.blocks) {
    if (!b.cells || b.page === undefined) continue;
    const name = b.headings[0] ?? null;
    let sheet = sheets.get(name);
    if (!sheet) sheets.set(name, (sheet = { name, columns: b.cells.columns, rows: [], omitted: 0 }));
    const here = passage && (passage.sheet ?? null) === name && window(b.page);
    if (sheet.rows.length < SHEET_ROWS || here) sheet.rows.push({ row: b.page, cells: b.cells.values });
    else sheet.omitted++;
    if (passage && (passage.sheet ?? null) === name && b.page >= from && b.page <= to && passage.row === undefined) {
      if (!passage.answer || passage.answer.includes(b.text) || b.text.includes(passage.answer)) passage.row = b.page;
    }
  }
  if (passage && passage.row === undefined && passage.rows) passage.row = passage.rows[0];
  // A CSV file has one unnamed sheet: its passage's heading is not a sheet name.
  if (passage && sheets.size === 1 && sheets.has(null)) passage.sheet = null;
  return sheets.size ? { kind: 'sheet', sheets: [...sheets.values()] } : null;
}

/** What the viewer shows of `doc`: rendered from its original for images, HTML, Markdown, e-mail and sheets; else (or without an intact original) its text. */
async function viewBody(s: Services, user: WebUser, doc: DocumentRecord, passage: OpenedPassage | null): Promise<ViewBody> {
  if (VIEWABLE_IMAGES.has(doc.contentType)) return { kind: 'image' };
  const small = doc.sizeBytes <= MAX_RENDERED_BYTES;
  const bytes = [HTML, MARKDOWN, EML].includes(doc.contentType) && small ? await intactOriginal(s, doc) : null;
  if (bytes) {
    // Loaded with the first document shown so: a daemon that shows none does not hold them (docs/ingest.md).
    const { markdownHtml, safeHtml } = await import('../../web/sanitize.js');
    if (doc.contentType === EML) {
      const { default: PostalMime } = await import('postal-mime');
      const mail = await PostalMime.parse(bytes, { maxNestingDepth: 50, maxHeadersSize: 1024 * 1024 });
      const email = (doc.metadata.email ?? {}) as Record<string, unknown>;
      const attachments = await readableAttachments(s, user, doc.id);
      const dateText = list(email.date);
      const date = Date.parse(dateText);
      return {
        kind: 'email',
        headers: { from: list(email.from), to: list(email.to), cc: list(email.cc), subject: list(email.subject) },
        date: Number.isNaN(date) ? null : date,
        dateText,
        html: mail.html === undefined ? null : safeHtml(mail.html),
        text: mail.text ?? '',
        attachments,
      };
    }
    const text = decodeText(bytes)?.text ?? '';
    return { kind: 'rendered', html: doc.contentType === HTML ? safeHtml(text) : markdownHtml(text) };
  }
  if (SHEETS.has(doc.contentType) && small && doc.status === 'ready') {
    const sheet = await sheetBody(s, doc, passage);
    if (sheet) return sheet;
  }
  // From the opened passage's page on, when it lies past the first window.
  const cursor = passage && passage.index >= TEXT_CHUNKS ? cursorAt(doc, passage.index) : undefined;
  const t = await documentText(s, user.actor, doc.id, TEXT_CHUNKS, cursor);
  // Each chunk's new text (past what the chunk before already held) after the space or blank line between them, under
  // the page, slide or rows it starts on; a page's first chunk begins the page's block, without a blank line above.
  const pages = t.pages.map((p) => ({
    page: p.page,
    chunks: p.chunks.map((c, i) => ({ index: c.index, text: c.placement ? (i === 0 ? c.placement.separator.trimStart() : c.placement.separator) + c.text.slice(c.placement.overlap) : `${c.text}\n\n` })),
  }));
  return { kind: SLIDES.has(doc.contentType) ? 'slides' : 'text', unit: CITATION_UNITS[doc.contentType as DocumentType] ?? null, pages, next: t.next_cursor };
}

/**
 * The viewer page: any document shown in the browser. A PDF has none of its own: the browser's viewer shows its
 * original, and a passage of it opens on the document page (its page's preview, its text marked).
 */
export function viewRoutes(router: Router<AppState>, s: Services): void {
  router.get('document.view', '/documents/:id/view', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const doc = await documentFor(ctx, s, user, ctx.params.id!, 'read');
    if (!doc) return;
    if (doc.contentType === PDF) return ctx.redirect(ctx.querystring ? `/documents/${doc.id}?${ctx.querystring}#chunk-${queryString(ctx, 'chunk')}` : `/documents/${doc.id}/file`);
    const passage = await openedPassage(ctx, s, user, doc);
    const [[project], body] = await Promise.all([s.projects.names([doc.projectId]), viewBody(s, user, doc, passage)]);
    render(
      ctx,
      viewPage({
        user,
        csrfToken: ctx.state.session!.csrfToken,
        document: { id: doc.id, filename: doc.filename, contentType: doc.contentType, language: doc.languageSetting ?? doc.language },
        project: project ?? { id: doc.projectId, name: 'its project' },
        body,
        passage,
      }),
    );
  });
}
