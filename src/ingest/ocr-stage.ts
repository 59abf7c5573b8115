/**
 * OCR stage, between parse and chunk: the pages the parser found without a usable text layer (every page of an
 * uploaded image)
 * (`ParsedDocument.ocrPages`) are recognised by the OCR engine and their text goes into the document as blocks
 * marked `ocr`, on their own pages, in page order. The document's warnings say which pages were OCR'd, with
 * which languages and how confident Tesseract was, and which pages OCR could not read.
 */
import type { OcrEngine, OcrPage } from './ocr/engine.js';
import { ocrPackageHint } from './ocr/languages.js';
import { IMAGE_TYPES, PDF, type Block, type DocumentType, type ParsedDocument } from './types.js';

const LOW_CONFIDENCE = 50;
/** How the note on what OCR read starts (splitOcrNote finds it among the warnings by it). */
const OCR_NOTE = 'OCR: ';
const LOW_HINT = ' — low: is the text in a language missing from --ocr-languages?';
const NO_TEXT_LAYER = /\bno (usable )?text layer\b/;

/** The OCR engine as this stage uses it; absent when OCR is off. */
export type OcrStage = Pick<OcrEngine, 'recognize' | 'languages' | 'languagesFor'>;

/**
 * Returns `parsed` with OCR text added (a new object; `parsed` is not changed). `progress` gets the share of
 * pages done, 0–1, after each page. `setting` is the document's OCR languages from its upload or project ("deu+eng";
 * null: the operator's `--ocr-languages`); a language of it not installed here is named in a warning, and the pages
 * are read with the rest of it, or with the operator's languages when none of it is installed.
 */
export async function applyOcr(
  ocr: OcrStage | undefined,
  parsed: ParsedDocument,
  bytes: Uint8Array,
  type: DocumentType,
  progress: (share: number) => Promise<void>,
  setting: string | null = null,
): Promise<ParsedDocument> {
  const wanted = parsed.ocrPages ?? [];
  if (!ocr || (type !== PDF && !IMAGE_TYPES.has(type)) || wanted.length === 0) return parsed;

  const asked = setting ? await ocr.languagesFor(setting) : { missing: [] };
  const languages = asked.languages;
  const used = languages?.code ?? ocr.languages;
  const missed = asked.missing.map((code) => `OCR language "${code}" is not installed on this server (${ocrPackageHint(code)}): read with ${used} instead`);
  const run = await ocr.recognize(bytes, wanted, { onPage: (done, total) => progress(done / total), ...(languages ? { languages } : {}) });
  const read = run.pages.filter((p) => p.text.trim() !== '');
  // The parser's "no text layer (scanned?)" notes are answered once OCR found text.
  const warnings = [...parsed.warnings.filter((w) => read.length === 0 || !NO_TEXT_LAYER.test(w)), ...missed];
  if (read.length > 0) {
    const confidence = Math.round(read.reduce((sum, p) => sum + p.confidence, 0) / read.length);
    // Low confidence over whole pages usually means text in a language OCR was not told about.
    const hint = confidence < LOW_CONFIDENCE ? LOW_HINT : '';
    warnings.push(`${OCR_NOTE}${pageList(read.map((p) => p.page))} (${used}), mean confidence ${confidence} %${hint}`);
  }
  const blank = run.pages.filter((p) => p.text.trim() === '').map((p) => p.page);
  if (blank.length > 0) warnings.push(`OCR found no text on ${pageList(blank)}`);
  for (const f of run.failed) warnings.push(`OCR failed on page ${f.page}: ${f.reason}`);

  return { ...parsed, blocks: merge(parsed.blocks, read), warnings };
}

/**
 * Parser blocks of an OCR'd page are dropped (that page's text layer was judged unusable); OCR blocks go
 * before the first block of a later page, so the document stays in page order.
 */
function merge(blocks: Block[], pages: OcrPage[]): Block[] {
  const replaced = new Set(pages.map((p) => p.page));
  const out = blocks.filter((b) => b.page === undefined || !replaced.has(b.page));
  for (const page of pages) {
    const at = out.findIndex((b) => b.page !== undefined && b.page > page.page);
    const added = paragraphs(page.text).map((text): Block => ({ text, page: page.page, headings: [], kind: 'paragraph', ocr: true }));
    out.splice(at < 0 ? out.length : at, 0, ...added);
  }
  return out;
}

/**
 * Tesseract's text: paragraphs separated by blank lines, lines by newlines. Lines are joined with a space; a
 * word hyphenated at a line end is rejoined, without the hyphen when the next line goes on in lower case
 * (a typesetter's break) and with it otherwise ("Well-Known").
 */
export function paragraphs(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .map((para) => joinLines(para.split('\n').map((line) => line.trim()).filter((line) => line !== '')))
    .filter((para) => para !== '');
}

function joinLines(lines: string[]): string {
  let out = '';
  for (const line of lines) {
    if (out === '') out = line;
    else if (!/\p{L}-$/u.test(out)) out += ` ${line}`;
    else out = /^\p{Ll}/u.test(line) ? out.slice(0, -1) + line : out + line;
  }
  return out;
}

/**
 * The note applyOcr leaves on what OCR read ("pages 1–2 (eng), mean confidence 96 %"), taken out of a document's
 * warnings (null: no page was OCR'd). It is information unless its confidence is low: then it stays a warning too.
 */
export function splitOcrNote(warnings: string[]): { ocr: { text: string; low: boolean } | null; warnings: string[] } {
  const note = warnings.find((w) => w.startsWith(OCR_NOTE));
  if (note === undefined) return { ocr: null, warnings };
  const low = note.endsWith(LOW_HINT);
  return { ocr: { text: note.slice(OCR_NOTE.length), low }, warnings: low ? warnings : warnings.filter((w) => w !== note) };
}

/** "pages 1–3, 5" / "page 2". */
export function pageList(pages: number[]): string {
  const sorted = [...new Set(pages)].sort((a, b) => a - b);
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    ranges.push(j === i ? `${sorted[i]}` : `${sorted[i]}–${sorted[j]}`);
    i = j + 1;
  }
  return `${sorted.length === 1 ? 'page' : 'pages'} ${ranges.join(', ')}`;
}
