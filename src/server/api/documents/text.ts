import type { Actor } from '../../../access/access-control.js';
import { z } from 'zod';
import { notFound } from '../../../core/errors.js';
import { CITATION_UNITS, type DocumentType } from '../../../ingest/types.js';
import { type ChunkFields, parsePlacement } from '../../../store/lancedb/chunk-schema.js';
import type { Services } from '../../services.js';
import type { DocumentRecord } from '../../../store/sql/documents.js';
import { cursorRefused, scopeDigest } from '../pagination.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams } from '../schemas.js';
import { DocumentStatus } from './wire.js';

export const TextChunk = z.object({
  id: z.string(),
  index: z.number().int().describe('0-based position in the document'),
  text: z.string().describe('the text search matches and shows'),
  heading: z.string().nullable().describe('heading path, joined with " > "'),
  page_start: z.number().int().nullable(),
  page_end: z.number().int().nullable(),
  ocr: z.boolean().describe('the text was recognised by OCR from a page image'),
  placement: z
    .object({
      overlap: z.number().int().describe('UTF-16 characters at the start of `text` that the chunks before already hold (consecutive chunks of a section share a sentence or two)'),
      separator: z.string().describe('the document\'s text between the chunks before and this chunk\'s new text: a blank line between paragraphs, a space or line break within one; "" for the first chunk'),
      page_starts: z
        .array(z.tuple([z.number().int(), z.number().int()]))
        .describe('[offset into `text`, page] where each page (slide, row, chapter: see `unit`) in the chunk starts, in order; empty without pages'),
    })
    .nullable()
    .describe('where the chunk lies in the document\'s text, which is every chunk\'s `separator` and its text after `overlap`, in order; null for chunks indexed by an older release, which did not record it'),
});

export const DocumentText = z
  .object({
    document_id: z.string(),
    status: DocumentStatus,
    unit: z
      .enum(['page', 'slide', 'row', 'chapter'])
      .nullable()
      .describe('what `page`, `page_start` and `page_end` count for this type: PDF and image pages, PPTX/ODP slides, spreadsheet and CSV rows, EPUB chapters; null for types without (DOCX, TXT, HTML, e-mail…)'),
    pages: z.array(
      z.object({
        page: z.number().int().nullable().describe('the page the chunks start on; null for formats without pages (DOCX, TXT)'),
        chunks: z.array(TextChunk),
      }),
    ),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: 'DocumentText' });

export type TextPage = z.output<typeof DocumentText>['pages'][number];

/** Chunks in document order, grouped by the page each starts on (consecutive runs, so order is kept). */
export function pagesOf(chunks: ChunkFields[]): TextPage[] {
  const pages: TextPage[] = [];
  for (const c of chunks) {
    const chunk = {
      id: c.id,
      index: c.chunk_index,
      text: c.text,
      heading: c.heading,
      page_start: c.page_start,
      page_end: c.page_end,
      ocr: c.ocr === true,
      placement: parsePlacement(c.placement),
    };
    const last = pages.at(-1);
    if (last && last.page === c.page_start) last.chunks.push(chunk);
    else pages.push({ page: c.page_start, chunks: [chunk] });
  }
  return pages;
}

/** What a text cursor belongs to: the document as it was indexed (indexed again, its chunks are others). */
type TextOf = Pick<DocumentRecord, 'id' | 'readyAt'>;

/** The cursor of the text from chunk `index` on (the document page's and viewer's links into a long text). */
export const cursorAt = (doc: TextOf, index: number) => Buffer.from(`chunk:${index}.${scopeDigest(['text', doc.id, doc.readyAt])}`, 'utf8').toString('base64url');

function decodeFrom(doc: TextOf, cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const m = /^chunk:(\d{1,9})\./.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m || cursorAt(doc, Number(m[1])) !== cursor) throw cursorRefused();
  return Number(m[1]);
}

/**
 * A ready document's chunks from `cursor` on (or, without one, from the first chunk that reaches page `fromPage`), at
 * most `limit`, grouped by page; other states have none yet.
 */
export async function documentText(s: Services, actor: Actor, id: string, limit: number, cursor?: string, fromPage?: number): Promise<z.output<typeof DocumentText>> {
  const { document: doc } = await s.access.document(actor, id, 'read');
  // Chunks of a document still being written are not what search sees yet (it shows only ready documents).
  const all = doc.status === 'ready' ? await s.chunks.documentChunks(doc.id) : [];
  const reaching = cursor === undefined && fromPage !== undefined ? all.find((c) => (c.page_end ?? c.page_start ?? 0) >= fromPage) : undefined;
  const from = reaching ? reaching.chunk_index : decodeFrom(doc, cursor);
  const page = all.filter((c) => c.chunk_index >= from).slice(0, limit + 1);
  const more = page.length > limit;
  const unit = CITATION_UNITS[doc.contentType as DocumentType] ?? null;
  return { document_id: doc.id, status: doc.status, unit, pages: pagesOf(page.slice(0, limit)), next_cursor: more ? cursorAt(doc, page[limit]!.chunk_index) : null };
}

export const getDocumentText = (s: Services) =>
  defineRoute({
    name: 'documents.text',
    method: 'GET',
    path: '/documents/:id/text',
    scope: 'read:documents',
    tag: 'documents',
    summary:
      'What search sees of a document: its chunks in order, grouped by the page each starts on, with heading paths and OCR marked. ' +
      'Empty until the document is ready. Paged by chunks (`limit`, `next_cursor`).',
    params: IdParams,
    query: z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(100), cursor: z.string().max(100).optional() }),
    responses: { 200: { description: 'The text, by page', schema: DocumentText }, 404: { description: 'Not found', schema: ErrorBody } },
    async handler({ params, query, principal }) {
      return { status: 200, body: await documentText(s, principal, params.id, query.limit, query.cursor) };
    },
  });
