import type { Library, WireTextChunk } from './library.js';

/** Chunks asked for per request while a document's text is read (the API's most). */
const CHUNKS_PER_REQUEST = 500;
/** How far back a chunk's start is looked for in the text before it (chunks overlap by a few sentences). */
const OVERLAP_WINDOW = 4000;
/** Shortest run taken as the overlap: shorter ones are coincidences (a repeated word). */
const MIN_OVERLAP = 16;

export interface AssembledText {
  text: string;
  /** Where each page's text starts in `text`, in page order; empty for formats without pages. */
  pages: { page: number; offset: number }[];
}

/** Every chunk of a document, in order, read a request at a time. */
export async function readChunks(library: Library, documentId: string): Promise<WireTextChunk[]> {
  const chunks: WireTextChunk[] = [];
  let cursor: string | undefined;
  do {
    const page = await library.documentText(documentId, { limit: CHUNKS_PER_REQUEST, ...(cursor ? { cursor } : {}) });
    for (const p of page.pages) chunks.push(...p.chunks);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return chunks;
}

/**
 * Where `next` starts repeating the end of `text`: consecutive chunks of a section share their overlapping
 * sentences verbatim (ingest/chunk.ts), so the longest suffix of `text` that is a prefix of `next` is the overlap.
 * Found by searching the text's tail for the chunk's first characters, then checking each candidate in full.
 */
function overlapLength(text: string, next: string): number {
  const from = Math.max(0, text.length - OVERLAP_WINDOW);
  const probe = next.slice(0, MIN_OVERLAP);
  if (probe.length < MIN_OVERLAP) return 0;
  for (let at = text.indexOf(probe, from); at !== -1; at = text.indexOf(probe, at + 1)) {
    const length = text.length - at;
    if (length <= next.length && next.startsWith(text.slice(at))) return length;
  }
  return 0;
}

/** The line that says where a chunk's page (or pages) start. */
const pageLine = (c: WireTextChunk) => (c.page_end !== null && c.page_end > c.page_start! ? `[pages ${c.page_start}–${c.page_end}]` : `[page ${c.page_start}]`);

/**
 * A document's text as one string, rebuilt from its chunks without their overlaps, with a `[page N]` line where
 * a chunk on a new page starts (`[pages N–M]` for a chunk that runs across pages), so an agent can cite pages.
 */
export function assembleText(chunks: readonly WireTextChunk[]): string {
  let text = '';
  let lastPage: number | null = null;
  for (const chunk of chunks) {
    const overlap = text ? overlapLength(text, chunk.text) : 0;
    const rest = chunk.text.slice(overlap);
    const page = chunk.page_start;
    if (page !== null && page !== lastPage) {
      text += `${text ? '\n\n' : ''}${pageLine(chunk)}\n${rest.trimStart()}`;
      lastPage = chunk.page_end ?? page;
    } else {
      text += overlap > 0 ? rest : `${text ? '\n\n' : ''}${rest}`;
    }
  }
  return text;
}

/** The chunks that hold any of the pages from `from` to `to` (a chunk runs across pages: it is in if it touches one). */
export function chunksOnPages(chunks: readonly WireTextChunk[], from = 1, to = Infinity): WireTextChunk[] {
  return chunks.filter((c) => c.page_start !== null && c.page_start <= to && (c.page_end ?? c.page_start) >= from);
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
