import { type Library, LibraryError, type WireDocument, type WireTextChunk, type WireUnit } from './library.js';

/** Chunks asked for per request while a document's text is read (the API's most). */
const CHUNKS_PER_REQUEST = 500;

/** A document's chunks in order, and what their pages count (GET /documents/{id}/text). */
export interface DocumentChunks {
  unit: WireUnit | null;
  chunks: WireTextChunk[];
}

export interface AssembledText {
  text: string;
  /** Each marker line ("[page N]") in order: where it starts in `text`, and the pages it stands for. */
  pages: { page: number; last: number; offset: number }[];
  /**
   * The chunks were indexed by an older release, which did not record where each lies in the text: they are
   * joined whole, so the sentences consecutive chunks share appear twice.
   */
  overlapsKept: boolean;
}

/** Every chunk of a document, in order, read a request at a time. */
export async function readChunks(library: Library, documentId: string): Promise<DocumentChunks> {
  const chunks: WireTextChunk[] = [];
  let unit: WireUnit | null = null;
  let cursor: string | undefined;
  do {
    const page = await library.documentText(documentId, { limit: CHUNKS_PER_REQUEST, ...(cursor ? { cursor } : {}) });
    unit = page.unit;
    for (const p of page.pages) chunks.push(...p.chunks);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return { unit, chunks };
}

/**
 * A document's text as one string, rebuilt from its chunks by where the chunker recorded each lies (each chunk's
 * separator, then its text after the overlap): the document's text exactly, never guessed from repeated words.
 * A line "[page N]" ("[slide N]", "[row N]", "[chapter N]" by the type's unit) marks where each page starts, so
 * an agent can cite it. Chunks without placements (an older release's) are joined whole, a blank line between.
 */
export function assembleText({ unit, chunks }: DocumentChunks): AssembledText {
  const label = unit ?? 'page';
  const pages: AssembledText['pages'] = [];
  let text = '';
  const mark = (page: number, last = page) => {
    pages.push({ page, last, offset: text.length });
    text += last > page ? `[${label}s ${page}–${last}]\n` : `[${label} ${page}]\n`;
  };
  if (chunks.every((c) => c.placement)) {
    let current: number | undefined;
    for (const { text: chunkText, placement } of chunks) {
      const { overlap, separator, page_starts } = placement!;
      text += separator;
      let from = overlap;
      for (const [at, page] of page_starts) {
        if (at < overlap || page === current) continue;
        text += chunkText.slice(from, at);
        mark(page);
        from = at;
        current = page;
      }
      text += chunkText.slice(from);
    }
    return { text, pages, overlapsKept: false };
  }
  let previous: number | null = null;
  for (const c of chunks) {
    if (text) text += '\n\n';
    if (c.page_start !== null && c.page_start !== previous) mark(c.page_start, c.page_end ?? c.page_start);
    previous = c.page_start;
    text += c.text;
  }
  return { text, pages, overlapsKept: true };
}

/**
 * The stretch of `text` that holds pages `from` to `to`: from the first marker of a page in the range to the
 * first marker past it (a marker of a span of pages counts when it reaches into the range). Null when none does.
 */
export function pagesRange(assembled: AssembledText, from = 1, to = Infinity): { start: number; end: number } | null {
  const { pages, text } = assembled;
  const first = pages.findIndex((p) => p.last >= from && p.page <= to);
  if (first < 0) return null;
  const after = pages.findIndex((p, i) => i > first && p.page > to);
  return { start: pages[first]!.offset, end: after < 0 ? text.length : pages[after]!.offset };
}

/** The end of a window of at most `max` characters from `start`, moved back to a space so a word is not cut. */
export function windowEnd(text: string, start: number, max: number): number {
  const end = Math.min(text.length, start + max);
  if (end === text.length) return end;
  const space = text.lastIndexOf(' ', end - 1);
  const newline = text.lastIndexOf('\n', end - 1);
  const cut = Math.max(space, newline);
  return cut > start + max / 2 ? cut + 1 : end;
}

/** A window of a document's text, as get_document and get_documents answer it. */
export interface TextWindow {
  text: string;
  offset: number;
  end: number;
  total_chars: number;
  next_offset: number | null;
  cut: boolean;
  note?: string;
}

/**
 * Up to `max_chars` of a document's text (or of its pages `page_from`–`page_to`) from `offset`, ending at a space.
 * A document that is not ready has no text yet: an empty window and a note that says why.
 */
export async function readWindow(
  library: Library,
  document: WireDocument,
  want: { page_from?: number; page_to?: number; offset?: number; max_chars: number },
): Promise<TextWindow> {
  if (document.status !== 'ready') {
    const note =
      document.status === 'failed'
        ? `the document failed to process: ${document.error ?? 'no reason recorded'}`
        : `the document is ${document.status}: its text is available once it is ready`;
    return { text: '', offset: 0, end: 0, total_chars: 0, next_offset: null, cut: false, note };
  }
  const read = await readChunks(library, document.id);
  const assembled = assembleText(read);
  let text = assembled.text;
  if (want.page_from !== undefined || want.page_to !== undefined) {
    const range = pagesRange(assembled, want.page_from, want.page_to);
    if (!range) {
      const unit = read.unit ?? 'page';
      const last = assembled.pages.at(-1)?.last ?? 0;
      throw new LibraryError(400, 'invalid_request', last === 0 ? 'this document has no pages: read it by offset instead' : `${unit} ${want.page_from ?? want.page_to} is past the document's last ${unit} (${last})`);
    }
    text = text.slice(range.start, range.end).trimEnd();
  }
  const start = Math.min(want.offset ?? 0, text.length);
  const end = windowEnd(text, start, want.max_chars);
  const cut = end < text.length;
  return {
    text: text.slice(start, end),
    offset: start,
    end,
    total_chars: text.length,
    next_offset: cut ? end : null,
    cut,
    ...(assembled.overlapsKept
      ? { note: 'indexed by an older release, which did not record where its passages overlap: the sentences two passages share appear twice' }
      : {}),
  };
}
