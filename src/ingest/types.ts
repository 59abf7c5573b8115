/**
 * Shapes shared by the parse → chunk stages. Parsers produce a `ParsedDocument`; the chunker turns it into
 * `Chunk`s sized in the embedder's own tokens.
 */

import type { CitationUnit } from '../core/citation-label.js';
import { CSV, DOC, DOCX, type DocumentType, EPUB, JPEG, ODP, ODS, PDF, PNG, PPT, PPTX, TIFF, TSV, WEBP, XLS, XLSX } from '../core/document-types.js';
import type { ChunkPlacement } from '../store/lancedb/chunk-schema.js';

// The types themselves live in core/ (filters and the CLI name them too).
export {
  CSV, DOC, DOCUMENT_TYPES, DOCX, type DocumentType, EML, EPUB, HTML, JPEG, MARKDOWN, ODP, ODS, ODT, PDF, PNG, PPT, PPTX, RTF, TIFF, TSV, TXT, TYPE_NAMES, WEBP, XLS, XLSX,
} from '../core/document-types.js';

export type LegacyOfficeType = typeof DOC | typeof XLS | typeof PPT;
/** What LibreOffice converts each legacy type to: the type whose parser then reads it. */
export const CONVERTED_TO = { [DOC]: DOCX, [XLS]: XLSX, [PPT]: PPTX } as const satisfies Record<LegacyOfficeType, DocumentType>;
/** The types a parser reads directly (parsers/index.ts). */
export type ParsedType = Exclude<DocumentType, LegacyOfficeType>;
export const isLegacyOffice = (type: string): type is LegacyOfficeType => type in CONVERTED_TO;

/** Images: no text of their own, every page goes through OCR. */
export const IMAGE_TYPES: ReadonlySet<string> = new Set([PNG, JPEG, TIFF, WEBP]);

/**
 * What a chunk's `pageStart`/`pageEnd` count for each type: PDF and image pages, slides, spreadsheet rows (the
 * sheet is the heading), EPUB chapters in spine order. Types absent here have no unit (the heading trail is the
 * citation).
 */
export const CITATION_UNITS: Partial<Record<DocumentType, CitationUnit>> = {
  [PDF]: 'page', [PNG]: 'page', [JPEG]: 'page', [TIFF]: 'page', [WEBP]: 'page',
  [PPTX]: 'slide', [ODP]: 'slide', [PPT]: 'slide',
  [XLSX]: 'row', [ODS]: 'row', [CSV]: 'row', [TSV]: 'row', [XLS]: 'row',
  [EPUB]: 'chapter',
};

export type BlockKind = 'heading' | 'paragraph' | 'list' | 'table' | 'footnote';

export interface Block {
  text: string;
  /** 1-based page number, for formats that have pages (PDF, images), or the slide, row or chapter (CITATION_UNITS). */
  page?: number;
  /**
   * Heading path in effect at this block, outermost first. A heading block's own path ends with itself, so a
   * "section" is a run of blocks with the same path.
   */
  headings: string[];
  kind: BlockKind;
  /** The text was recognised by OCR from the page image, not read from a text layer. */
  ocr?: boolean;
  /** A table row's cells and its sheet's column names, when the parse was asked for them (ParseOptions.cells). */
  cells?: { columns: string[]; values: string[] };
}

export interface ParsedDocument {
  title?: string;
  pages?: number;
  blocks: Block[];
  /**
   * 1-based pages whose text layer is missing or garbage (mostly U+FFFD / private-use glyphs, or almost no
   * text): the parser gives no blocks for them, and OCR may read them.
   */
  ocrPages?: number[];
  /** Human-readable notes shown on the document (e.g. "no text layer (scanned?)"). */
  warnings: string[];
  /** What the file says about itself, merged into the document's metadata (an e-mail's From, To, Date …). */
  metadata?: Record<string, unknown>;
  /** Files the document carries that become documents of their own (an e-mail's attachments), in order. */
  attachments?: Attachment[];
}

/** A file found inside a document, of a type the pipeline reads (decided from its bytes). */
export interface Attachment {
  filename: string;
  contentType: DocumentType;
  bytes: Uint8Array;
}

export interface ParseOptions {
  /** Filename as uploaded; only used for a fallback title, never to decide the type. */
  filename?: string;
  /** The type the bytes were sniffed as (one parser serves CSV and TSV, ODP and PPTX …). */
  type?: ParsedType;
  /** Keep each table row's cells on its block (the web viewer's tables); ingest does not ask for them. */
  cells?: boolean;
}

/**
 * The tokenizer view the chunker needs. Structural on purpose: src/models/embedder.ts defines the same shape for
 * the embedder's tokenizer, so either can be passed without an import between the two folders.
 *
 * `count(text)` is the number of model tokens for `text`; the chunker also reserves room for the model's special
 * tokens ([CLS]/[SEP]), so an implementation that already includes them only costs two tokens of slack.
 * `encode(text).offsets[i]` is the [start, end) UTF-16 range of token i in `text` (special tokens may be [0, 0]).
 */
export interface TokenCounter {
  count(text: string): number;
  encode(text: string): { ids: number[]; offsets: [number, number][] };
}

export interface Chunk {
  index: number;
  /** Clean text, stored and shown in results. */
  text: string;
  /** Short contextual header (document title, heading path) + text: what gets embedded. */
  embedText: string;
  pageStart?: number;
  pageEnd?: number;
  headings: string[];
  /** Tokens of `embedText` as counted by the tokenizer (what the embedder sees). */
  tokenCount: number;
  /** Some of the text came from OCR. */
  ocr?: boolean;
  /** Where the text lies in the document's text: how it rebuilds without the overlaps. */
  placement: ChunkPlacement;
}

/** The accepted types as a person reads them, for messages ("accepted: …"); legacy Office where LibreOffice converts it. */
export function acceptedTypes(legacyOffice: boolean): string {
  const read = 'PDF, DOCX, ODT, RTF, EPUB, PPTX, ODP, XLSX, ODS, CSV, TSV, TXT, Markdown, HTML, EML, PNG, JPEG, TIFF, WebP';
  return legacyOffice ? `${read}; DOC, XLS and PPT through LibreOffice` : read;
}
