/**
 * Shapes shared by the parse → chunk stages. Parsers produce a `ParsedDocument`; the chunker turns it into
 * `Chunk`s sized in the embedder's own tokens.
 */

/** The content types the pipeline accepts, decided from the bytes (see sniff.ts). */
export type DocumentType =
  | 'application/pdf'
  | 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
  | 'text/plain';

export const PDF: DocumentType = 'application/pdf';
export const DOCX: DocumentType = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
export const TXT: DocumentType = 'text/plain';

export type BlockKind = 'heading' | 'paragraph' | 'list' | 'table' | 'footnote';

export interface Block {
  text: string;
  /** 1-based page number, for formats that have pages (PDF). */
  page?: number;
  /**
   * Heading path in effect at this block, outermost first. A heading block's own path ends with itself, so a
   * "section" is a run of blocks with the same path.
   */
  headings: string[];
  kind: BlockKind;
  /** The text was recognised by OCR from the page image, not read from a text layer. */
  ocr?: boolean;
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
}

export interface ParseOptions {
  /** Filename as uploaded; only used for a fallback title, never to decide the type. */
  filename?: string;
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
}
