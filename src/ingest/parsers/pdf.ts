/**
 * PDF text with pdf.js, opened by pdf/load.ts on this thread: extract.ts already gives every parse its own
 * worker thread with a time and memory limit. Pages are read one at a time; a page pdf.js cannot read is a warning naming it, and the
 * rest of the document is kept. Pages without a usable text layer (almost no text, or mojibake: pdf-garbled.ts) are
 * listed in `ocrPages` and give no blocks (the OCR stage reads them). A page tree that loops, lists what is not a page or miscounts its pages, where
 * pdf.js gives up or loses pages, is repaired (pdf-page-tree.ts) and the file read again; the reading that read more
 * pages is kept. A pure XFA form's pages are only a "Please wait..." placeholder: its text is read from the form pdf.js
 * lays out (pdf-xfa.ts), and from its pages as any PDF's where the form gives none.
 */
import { cutChars } from '../../core/code-points.js';
import { Util, type PDFDocumentProxy, type PDFPageProxy, type TextItem } from '../../pdf/pdfjs.js';
import { loadPdf } from '../../pdf/load.js';
import type { ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { toBlocks, type LaidOutPage } from './pdf-blocks.js';
import { layoutRuns, type Paragraph, type TextRun } from './pdf-layout.js';
import { markSoftHyphens, unmarkSoftHyphens } from './pdf-soft-hyphen.js';
import { PAGE_TREE_DAMAGE, PAGE_TREE_LOOP, repairPageTree, type PageTreeProblem, type PageTreeRepair } from './pdf-page-tree.js';
import { isGarbled } from './pdf-garbled.js';
import { checkStreams } from './pdf-stream-guard.js';
import { xfaParagraphs, type XfaNode } from './pdf-xfa.js';

export const ENCRYPTED = 'the PDF is locked with a password (encrypted) — not supported: upload a copy saved without the password';
export const NO_TEXT_LAYER = 'no text layer (scanned?)';
/** PDF 2.0's Brotli filter: pdf.js (like poppler) cannot decode it, and reads the file as damaged or textless. */
export const BROTLI = 'the PDF is compressed with Brotli (/BrotliDecode, new in PDF 2.0), which docsearch cannot read yet';
/** What each damage to the page tree is called, and what its repair let be read. */
const TREE: Record<PageTreeProblem, [damage: string, repaired: string]> = {
  loop: ['its page tree loops back on itself', 'each page it lists was read once, in order'],
  entries: ['its page tree lists entries that are not pages', 'they were skipped and the pages after them read'],
  count: ['its page tree miscounts its pages', 'every page it lists was read'],
};

/**
 * What one reading gave: how many distinct pages it read (a page the tree lists twice counts once), and whether
 * pdf.js lost a page to the page tree on the way.
 */
type Reading = ParsedDocument & { read: number; treeDamage?: boolean };

export async function parse(bytes: Uint8Array, _opts: ParseOptions = {}): Promise<ParsedDocument> {
  let first: Reading | undefined;
  let failure: unknown;
  try {
    first = await readPdf(bytes);
  } catch (err) {
    // Only a reading the page tree failed can be saved by repairing the tree.
    if (!(err instanceof ParseError) || !PAGE_TREE_DAMAGE.test(errorMessage(err.cause))) throw err;
    failure = err;
  }
  // Walked even when pdf.js said nothing: a /Count too small loses pages silently.
  const repair = repairPageTree(bytes);
  if (!repair) {
    if (first) return finished(first);
    throw failure;
  }
  let second: Reading;
  try {
    second = await readPdf(repair.bytes);
  } catch (err) {
    // The first error names what is wrong with the file; this one, what is wrong with the repair.
    if (!first) throw failure;
    return kept(first, repair, `failed (${err instanceof ParseError ? err.message : damageReason(repair.bytes, errorMessage(err))})`);
  }
  if (!first || second.read > first.read || (second.read === first.read && !second.treeDamage)) return repaired(second, repair);
  // The repair sees the tree as pdf-page-tree.ts reads the file, which can differ from how pdf.js reads it.
  return kept(first, repair, second.read < first.read ? `gave fewer pages (${second.read} of ${first.read})` : 'still lost pages');
}

function kept(first: Reading, repair: PageTreeRepair, outcome: string): ParsedDocument {
  const doc = finished(first);
  doc.warnings.push(`${TREE[repair.problems[0]!][0]}: reading it repaired ${outcome}, so the pages read before are kept`);
  return doc;
}

function repaired(reading: Reading, repair: PageTreeRepair): ParsedDocument {
  const doc = finished(reading);
  for (const problem of repair.problems) doc.warnings.push(TREE[problem].join(': '));
  return doc;
}

function finished(reading: Reading): ParsedDocument {
  const { treeDamage: _, read: __, ...doc } = reading;
  return doc;
}

async function readPdf(uploaded: Uint8Array, xfa = true): Promise<Reading> {
  const head = latin1(uploaded.subarray(0, 1024));
  if (!head.includes('%PDF-')) throw new ParseError('not a PDF file (no %PDF header)');
  const bytes = withRootTrailer(uploaded);
  // pdf.js inflates streams into ArrayBuffers, which the worker's heap limit does not cover.
  checkStreams(bytes);

  let pdf: PDFDocumentProxy;
  // pdf.js may transfer or detach what it is given; it gets its own copy, with hyphens drawn as U+00AD marked.
  const marked = markSoftHyphens(bytes);
  let task = loadPdf(marked, { xfa });
  const warnings = pdfjsWarnings();
  try {
    try {
      pdf = await task.promise;
    } catch (err) {
      if (marked.length === bytes.length) throw err;
      // The marking update must never cost a file its text: the original bytes are tried as they are.
      await task.destroy().catch(() => {});
      task = loadPdf(new Uint8Array(bytes), { xfa });
      pdf = await task.promise;
      warnings.take(); // what the failed attempt logged is not about any page
    }
  } catch (err) {
    // pdf.js fails the whole file when it cannot lay out its XFA form (it warns "XFA - …" first).
    const form = xfa && warnings.take().some((w) => /\bXFA\b/.test(w));
    warnings.stop();
    await task.destroy().catch(() => {});
    if (form) return readPdf(uploaded, false);
    const message = errorMessage(err);
    if (/password|encrypt/i.test(message)) throw new ParseError(ENCRYPTED, { cause: err });
    throw new ParseError(unreadable(bytes, message), { cause: err });
  }

  try {
    if (pdf.isPureXfa) {
      const form = await readForm(pdf);
      if (form) return form;
      await pdf.destroy().catch(() => {});
      warnings.stop();
      // A form without text (images only, or what pdf.js could not lay out) keeps what its pages say.
      return await readPdf(uploaded, false);
    }
    return await read(pdf, bytes, warnings);
  } finally {
    await pdf.destroy().catch(() => {});
    warnings.stop();
  }
}

/** Content-stream errors pdf.js recovers from by skipping what it cannot parse: the page's text is partial. */
const PAGE_DAMAGE = /Unknown command|Unterminated string|expected \d+ args|Invalid (stream|dictionary|object|hex)|FormatError|Unexpected|Illegal character|bad (stream|object)/i;

interface WarningLog {
  /** Takes the warnings pdf.js logged since the last call. */
  take(): string[];
  stop(): void;
}

/**
 * pdf.js reports what it skips only through console.warn; collect it while this document is parsed (pages are
 * read one after the other, so what a page's reading logged belongs to that page).
 */
function pdfjsWarnings(): WarningLog {
  const original = console.warn;
  let logged: string[] = [];
  console.warn = (...args: unknown[]) => {
    if (logged.length < 1000) logged.push(args.map(String).join(' '));
  };
  return {
    take: () => {
      const out = logged;
      logged = [];
      return out;
    },
    stop: () => {
      if (console.warn !== original) console.warn = original;
    },
  };
}

async function read(pdf: PDFDocumentProxy, bytes: Uint8Array, log: WarningLog): Promise<Reading> {
  const warnings: string[] = [];
  const damagedPages: number[] = [];
  const laidOut: LaidOutPage[] = [];
  const ocrPages: number[] = [];
  const badPages: number[] = [];
  let firstError = '';
  let treeDamage = false;
  const read = new Set<string>();
  for (let n = 1; n <= pdf.numPages; n++) {
    let runs: TextRun[][];
    let raw: string;
    log.take();
    try {
      const page = await pdf.getPage(n);
      ({ runs, raw } = await pageRuns(page));
      read.add(page.ref ? `${page.ref.num} ${page.ref.gen}` : `#${n}`);
    } catch (err) {
      badPages.push(n);
      firstError ||= errorMessage(err);
      treeDamage ||= PAGE_TREE_DAMAGE.test(errorMessage(err));
      continue;
    }
    if (log.take().some((w) => PAGE_DAMAGE.test(w))) damagedPages.push(n);
    // Mojibake (fonts without a Unicode map) is no text layer either.
    if (!hasTextLayer(runs.flat()) || isGarbled(raw)) {
      ocrPages.push(n);
      continue;
    }
    laidOut.push({ page: n, paragraphs: runs.flatMap((group): Paragraph[] => layoutRuns(group)) });
  }
  if (pdf.numPages === 0) throw new ParseError('the PDF has no pages');
  if (badPages.length === pdf.numPages) {
    throw new ParseError(unreadable(bytes, firstError), { cause: firstError });
  }
  if (badPages.length) {
    const reason = damageReason(bytes, firstError);
    warnings.push(`${plural(badPages.length, 'page')} could not be read and ${badPages.length === 1 ? 'was' : 'were'} skipped (${pageList(badPages)}): ${reason}`);
  } else if (!latin1(bytes.subarray(Math.max(0, bytes.length - 2048))).includes('%%EOF')) {
    warnings.push('the file ends early (an interrupted upload or download?); the text is from the part that could be read');
  }

  if (damagedPages.length) {
    warnings.push(`${pageList(damagedPages)} ${damagedPages.length === 1 ? 'is' : 'are'} damaged: only part of ${damagedPages.length === 1 ? 'its' : 'their'} text could be read`);
  }

  const { blocks, firstHeading } = toBlocks(laidOut);
  if (blocks.length === 0) {
    warnings.push(usesBrotli(bytes) ? BROTLI : NO_TEXT_LAYER);
  } else if (ocrPages.length) {
    warnings.push(`${ocrPages.length} of ${pdf.numPages} pages have no usable text layer (scanned?): ${pageList(ocrPages)}`);
  }

  const doc: Reading = { pages: pdf.numPages, blocks, warnings, read: read.size };
  if (ocrPages.length) doc.ocrPages = ocrPages;
  if (treeDamage) doc.treeDamage = true;
  const title = (await metaTitle(pdf)) ?? firstHeading;
  if (title) doc.title = title;
  return doc;
}

/** A pure XFA form's text, page by page as pdf.js laid it out; undefined when the form has none. */
async function readForm(pdf: PDFDocumentProxy): Promise<Reading | undefined> {
  const pages = ((pdf.allXfaHtml as XfaNode | null)?.children ?? []).map((page, i): LaidOutPage => ({
    page: i + 1,
    paragraphs: xfaParagraphs(page)
      .map((p) => ({ ...p, lines: p.lines.map(cleanText).filter((line) => line.trim()) }))
      .filter((p) => p.lines.length),
  }));
  const { blocks, firstHeading } = toBlocks(pages);
  if (!blocks.length) return undefined;
  const doc: Reading = { pages: pdf.numPages, blocks, warnings: [], read: pdf.numPages };
  const title = (await metaTitle(pdf)) ?? firstHeading;
  if (title) doc.title = title;
  return doc;
}

/**
 * A page's text runs, grouped by writing direction (upright first), in points of its rotated viewport; and its
 * content's text as pdf.js decoded it, before cleaning (what tells mojibake).
 */
async function pageRuns(page: PDFPageProxy): Promise<{ runs: TextRun[][]; raw: string }> {
  try {
    const viewport = page.getViewport({ scale: 1 });
    const content = await page.getTextContent();
    const groups = new Map<number, TextRun[]>();
    let raw = '';
    for (const item of content.items) {
      if (!('str' in item) || !item.str) continue;
      const str = unmarkSoftHyphens(item.str);
      raw += `${str} `;
      const text = cleanText(str);
      if (!text.trim()) continue;
      const tx = Util.transform(viewport.transform, item.transform) as number[];
      let angle = Math.atan2(tx[1]!, tx[0]!);
      if (content.styles[item.fontName]?.vertical) angle += Math.PI / 2;
      const degrees = ((Math.round((angle * 180) / Math.PI) % 360) + 360) % 360;
      const run = toRun(item, text, tx, degrees);
      if (!run) continue;
      const group = groups.get(degrees);
      if (group) group.push(run);
      else groups.set(degrees, [run]);
    }
    const upright = groups.get(0) ?? [];
    // One by one: a spread of a page's thousands of annotations would overflow the call stack.
    for (const run of await annotationRuns(page, viewport.transform)) upright.push(run);
    if (upright.length) groups.set(0, upright);
    const runs = [...groups.entries()].sort(([a], [b]) => (a === 0 ? -1 : b === 0 ? 1 : a - b)).map(([, group]) => group);
    return { runs, raw };
  } finally {
    page.cleanup();
  }
}

interface AnnotationText {
  annotationType?: number;
  fieldType?: string;
  fieldValue?: unknown;
  contentsObj?: { str?: string };
  rect?: number[];
  hidden?: boolean;
  noView?: boolean;
  defaultAppearanceData?: { fontSize?: number };
}

const FREETEXT = 3;
const WIDGET = 20;

/**
 * Text that lives in annotations rather than the page's content: free-text notes and filled-in form fields
 * (pdf.js leaves both out of getTextContent). Placed at the annotation's rectangle so it reads in place.
 */
async function annotationRuns(page: PDFPageProxy, transform: number[]): Promise<TextRun[]> {
  const annotations = (await page.getAnnotations({ intent: 'display' }).catch(() => [])) as AnnotationText[];
  const runs: TextRun[] = [];
  for (const a of annotations) {
    if (a.hidden || a.noView || !a.rect || a.rect.length < 4) continue;
    let text: string | undefined;
    if (a.annotationType === FREETEXT) text = a.contentsObj?.str;
    else if (a.annotationType === WIDGET && (a.fieldType === 'Tx' || a.fieldType === 'Ch')) {
      text = Array.isArray(a.fieldValue) ? a.fieldValue.filter((v) => typeof v === 'string').join(', ') : typeof a.fieldValue === 'string' ? a.fieldValue : undefined;
    }
    if (!text?.trim()) continue;
    // Util.applyTransform maps the point in place.
    const topLeft = [a.rect[0]!, a.rect[3]!];
    const bottomRight = [a.rect[2]!, a.rect[1]!];
    Util.applyTransform(topLeft, transform);
    Util.applyTransform(bottomRight, transform);
    const [x0, y0] = topLeft;
    const [x1] = bottomRight;
    const left = Math.min(x0!, x1!);
    const size = Math.min(Math.max(a.defaultAppearanceData?.fontSize || 10, 4), 24);
    cleanText(text).split(/\r\n|\r|\n/).forEach((line, i) => {
      if (!line.trim()) return;
      const y = y0! + (i + 1) * size * 1.2;
      runs.push({ text: line, x0: left, x1: left + Math.min(Math.abs(x1! - x0!), 0.5 * size * line.length), y, size, rtl: false });
    });
  }
  return runs;
}

/** Rotates the run's baseline origin into its own writing direction, so every group lays out as upright text. */
function toRun(item: TextItem, text: string, tx: number[], degrees: number): TextRun | undefined {
  const size = Math.hypot(tx[2]!, tx[3]!);
  if (!(size > 0)) return undefined;
  const a = (degrees * Math.PI) / 180;
  const cos = Math.cos(a);
  const sin = Math.sin(a);
  const x = tx[4]! * cos + tx[5]! * sin;
  const y = -tx[4]! * sin + tx[5]! * cos;
  // item.width is in the page's user space along the text direction; scale 1 keeps it in points.
  const width = Math.abs(item.width) || size * 0.5 * text.length;
  return { text, x0: x, x1: x + width, y, size, rtl: item.dir === 'rtl' };
}

/** A page has almost no text (a scan with a stray caption, a page number): OCR reads it instead. */
function hasTextLayer(runs: TextRun[]): boolean {
  let good = 0;
  for (const r of runs) for (const ch of r.text) if (/[\p{L}\p{N}]/u.test(ch) && ++good >= 3) return true;
  return false;
}

/**
 * pdf.js has already folded ligatures; this only folds full-width Latin (for search) and drops control codes
 * and private-use glyphs, which carry no text. Characters outside the BMP (math letters) stay as they are.
 */
function cleanText(text: string): string {
  return text
    .replace(/[\uff01-\uff5e]/g, (c) => c.normalize('NFKC'))
    .replace(/[\p{Co}\u0000-\u0008\u000b\u000e-\u001f\u007f\ufffd]/gu, '');
}

/**
 * A file cut off before its trailer, with no cross-reference stream naming its root either: pdf.js finds no root and
 * reads nothing ("Invalid PDF structure"), though the catalog, the page tree and the first pages may all be there
 * (writers that put them first, as reportlab does). A trailer naming the first catalog is appended, so pdf.js's
 * recovery reads what survived; pages cut off are skipped with their warning, and the file still ends early. The
 * object the cut went through is closed first: pdf.js reads an unterminated object to the end of the file, trailer
 * and all.
 */
function withRootTrailer(bytes: Uint8Array): Uint8Array {
  if (latin1(bytes.subarray(Math.max(0, bytes.length - 2048))).includes('%%EOF')) return bytes;
  const text = latin1(bytes);
  if (/\btrailer\b|\/Root\b/.test(text)) return bytes;
  const catalog = /(?<!\d)(\d+)\s+(\d+)\s+obj\s*<<[^>]*?\/Type\s*\/Catalog\b/.exec(text);
  if (!catalog) return bytes;
  return Buffer.concat([bytes, Buffer.from(`\nendstream\nendobj\ntrailer\n<< /Root ${catalog[1]} ${catalog[2]} R >>\n`, 'latin1')]);
}

function unreadable(bytes: Uint8Array, message: string): string {
  return usesBrotli(bytes) ? BROTLI : `the PDF is damaged or truncated: ${damageReason(bytes, message)}`;
}

function usesBrotli(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes('/BrotliDecode', 0, 'latin1');
}

/** pdf.js messages mean little to a person; say what is wrong with the file instead where we can tell. */
function damageReason(bytes: Uint8Array, message: string): string {
  const tail = latin1(bytes.subarray(Math.max(0, bytes.length - 2048)));
  if (!tail.includes('%%EOF')) return 'the file ends early (an interrupted upload or download?)';
  if (PAGE_TREE_LOOP.test(message)) return TREE.loop[0];
  if (/kid reference points to wrong type/.test(message)) return TREE.entries[0];
  if (/kids object is not an array/.test(message)) return 'its page tree has a /Pages node without a list of pages';
  if (/Page index \d+ not found/.test(message)) return 'its page tree lists fewer pages than it counts';
  if (/xref|Invalid PDF structure|Invalid Root reference|trailer/i.test(message)) return 'its cross-reference table is broken';
  if (/stream|compression|flate|filter|decode/i.test(message)) return 'a content stream cannot be decoded';
  if (/TypeError|RangeError|undefined|null|is not a function|Cannot read/i.test(message)) {
    return 'its internal structure cannot be read';
  }
  return cutChars(message.replace(/^(\w*(Error|Exception):\s*)+/, '').split('\n')[0]!, 120) || 'its internal structure cannot be read';
}

async function metaTitle(pdf: PDFDocumentProxy): Promise<string | undefined> {
  const meta = await pdf.getMetadata().catch(() => undefined);
  const raw = (meta?.info as Record<string, unknown> | undefined)?.['Title'];
  if (typeof raw !== 'string') return undefined;
  const title = raw.replace(/^Microsoft (Word|PowerPoint) - /, '').replace(/\s+/g, ' ').trim();
  // Generator defaults ("Untitled", a file name) say nothing about the content.
  if (!title || /^untitled|\.(docx?|pdf|pptx?|tex|dvi)$/i.test(title)) return undefined;
  return title;
}

function pageList(pages: number[]): string {
  const shown = pages.slice(0, 10).join(', ');
  return `page${pages.length === 1 ? '' : 's'} ${shown}${pages.length > 10 ? `, … (${pages.length})` : ''}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  if (typeof err === 'object' && err !== null && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}
