/**
 * Word (.docx) with mammoth. mammoth's HTML is not what we want; its document model is, and the public
 * `transformDocument` hook hands it over. Walking that model keeps headings (Heading 1..6 → heading path),
 * list items, tables (one "cell | cell" line per row) and footnotes/endnotes (after the body). Headers and footers,
 * which mammoth skips, are read from their parts (see `furniture`): once each, not once per page.
 *
 * A .docx is a ZIP, so it is checked with yauzl, every entry inflated once, before mammoth (which inflates with
 * JSZip, unbounded) ever sees it.
 */
import mammoth from 'mammoth';
import { cutChars } from '../../core/code-points.js';
import type { Block, BlockKind, ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { readZip, type ZipLimits } from './zip-guard.js';

export interface DocxOptions extends ParseOptions {
  zipLimits?: Partial<ZipLimits>;
}

export const NO_TEXT = 'no text found (empty document?)';
const TOO_DEEP = 'the Word document nests tables or other elements too deep to read — refused (a hostile or broken file)';

/**
 * Parts kept inflated: the XML mammoth reads (handed to it when its body must be rewritten, see `withRubyBase`) and
 * altChunk HTML, which mammoth skips.
 */
const WORD = { noun: 'the Word document', keep: /\.(xml|rels|x?html?)$/i, inflatesItself: true };

const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

export async function parse(bytes: Uint8Array, opts: DocxOptions = {}): Promise<ParsedDocument> {
  // Word wraps a password-protected .docx in an OLE2 container, the same one a legacy .doc uses.
  if (CFB_MAGIC.every((b, i) => bytes[i] === b)) throw new ParseError('encrypted or legacy .doc — not supported');
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { parts, names } = await readZip(buffer, WORD, opts.zipLimits);
  if (!names.has('word/document.xml')) throw new ParseError('not a Word document (.docx)');

  let model: MammothDocument | undefined;
  try {
    await mammoth.convertToHtml(
      withRubyBase(buffer, parts),
      {
        transformDocument: (doc: MammothDocument) => {
          model = doc;
          return doc;
        },
        // Images are never read: text is all we index, and decoding them costs memory.
        convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
      },
    );
  } catch (err) {
    // mammoth reads the XML tree recursively: tables nested thousands deep exhaust the stack.
    if (err instanceof RangeError && /call stack/i.test(err.message)) throw new ParseError(TOO_DEEP, { cause: err });
    throw new ParseError(`the Word document is damaged (${shortReason(err)})`, { cause: err });
  }
  if (!model) throw new ParseError('the Word document is damaged: no document body');
  const doc = new Walker(model).run();
  // A header often names the document (its title, number, issuer): it goes first, where the first chunk holds it.
  doc.blocks = furniture(parts, 'header').concat(doc.blocks);
  // altChunk parts (imported HTML) are invisible to mammoth. Blocks are added one by one: a spread of 200,000
  // items overflows the call stack.
  for (const [name, content] of parts) if (/^word\/[^/]+\.x?html?$/i.test(name)) for (const b of htmlBlocks(content)) doc.blocks.push(b);
  for (const b of furniture(parts, 'footer')) doc.blocks.push(b);
  if (doc.blocks.length === 0) doc.warnings.push(NO_TEXT);
  return doc;
}

const PAGE_FIELD = /<w:instrText[^>]*>\s*(?:PAGE|NUMPAGES|SECTIONPAGES)\b|w:instr="\s*(?:PAGE|NUMPAGES|SECTIONPAGES)\b/;

/**
 * The paragraphs of the document's header or footer parts (word/header1.xml…), each distinct text once: Word keeps
 * one part per section and kind (first page, even, odd), never one per page, and the kinds often repeat each other.
 * A paragraph holding a page-number field ("Page 3 of 7") is page furniture and skipped, as is one without a letter.
 * Read from the XML: a paragraph of a text box nests inside another, so paragraphs are cut at each end tag; the
 * text box's fallback copy (mc:Fallback) is dropped.
 */
function furniture(parts: Map<string, Buffer>, kind: 'header' | 'footer'): Block[] {
  const name = new RegExp(`^word/${kind}(\\d*)\\.xml$`);
  const files = [...parts.keys()].filter((n) => name.test(n)).sort((a, b) => Number(name.exec(a)![1]) - Number(name.exec(b)![1]));
  const seen = new Set<string>();
  const blocks: Block[] = [];
  for (const file of files) {
    const xml = parts.get(file)!.toString('utf8').replace(/<mc:Fallback>[\s\S]*?<\/mc:Fallback>/g, '');
    for (const paragraph of xml.split('</w:p>')) {
      if (PAGE_FIELD.test(paragraph)) continue;
      const runs = paragraph.match(/<w:t(?:\s[^>]*)?>[^<]*<\/w:t>|<w:tab\s*\/>/g) ?? [];
      const text = decodeEntities(runs.map((r) => (r.startsWith('<w:tab') ? ' ' : r.replace(/<[^>]+>/g, ''))).join('')).replace(/\s+/g, ' ').trim();
      if (!/\p{L}/u.test(text) || seen.has(text)) continue;
      seen.add(text);
      blocks.push({ text, headings: [], kind: 'paragraph' });
    }
  }
  return blocks;
}

const DOCUMENT = 'word/document.xml';
const RUBY = /<w:ruby>[\s\S]*?<w:rubyBase>([\s\S]*?)<\/w:rubyBase>[\s\S]*?<\/w:ruby>/g;

/**
 * mammoth's input, with every w:ruby (a word with its reading set above it: furigana) replaced by its base text.
 * mammoth knows no w:ruby and drops it whole, so a Japanese sentence lost every word set with furigana. The base
 * runs' content goes into the run that held the ruby; the reading (w:rt) goes. Without a ruby, mammoth reads the
 * archive as uploaded; with one, it reads the parts the zip guard inflated, through its `file` input (an object
 * that reads named parts; not in its typings).
 */
function withRubyBase(buffer: Buffer, parts: Map<string, Buffer>): { buffer: Buffer } {
  const xml = parts.get(DOCUMENT);
  if (!xml?.includes('<w:ruby>')) return { buffer };
  const document = xml.toString('utf8').replace(RUBY, (_, base: string) => base.replace(/<\/?w:r(?:\s[^>]*)?>/g, ''));
  const file = {
    exists: (name: string) => parts.has(name),
    read: async (name: string, encoding?: string) => {
      const part = name === DOCUMENT ? Buffer.from(document, 'utf8') : parts.get(name);
      if (!part) throw new Error(`no part ${name}`);
      return encoding ? new TextDecoder(encoding).decode(part) : part;
    },
  };
  return { file } as unknown as { buffer: Buffer };
}

/** Text of an imported HTML part: block elements become paragraphs, table rows "cell | cell" lines. */
function htmlBlocks(html: Buffer): Block[] {
  const body = html
    .toString('utf8')
    .replace(/\s+/g, ' ')
    .replace(/<(script|style|head)[\s\S]*?<\/\1>/gi, '')
    .replace(/<\/t[dh]>\s*<t[dh][^>]*>/gi, ' | ')
    .replace(/<\/(p|div|li|tr|h[1-6]|table|blockquote)>|<br\s*\/?>/gi, '\n')
    .replace(/<[^>]+>/g, '');
  return decodeEntities(body)
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line) => line)
    .map((text) => ({ text, headings: [], kind: 'paragraph' as const }));
}

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos|nbsp);/gi, (_, e: string) => {
    const k = e.toLowerCase();
    if (k[0] === '#') return String.fromCodePoint(k[1] === 'x' ? parseInt(k.slice(2), 16) : parseInt(k.slice(1), 10));
    return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' } as Record<string, string>)[k] ?? '';
  });
}

interface MammothNode {
  type: string;
  children?: MammothNode[];
  value?: string;
  styleId?: string | null;
  styleName?: string | null;
  numbering?: { isOrdered?: boolean; level?: string } | null;
  noteType?: string;
  noteId?: string;
  body?: MammothNode[];
  breakType?: string;
}

interface MammothDocument extends MammothNode {
  notes?: { resolve(ref: MammothNode): MammothNode | null; _notes?: Record<string, MammothNode> };
}

const HEADING_STYLE = /^(?:heading|überschrift|titre|título|titolo|kop)\s*([1-9])$/i;

class Walker {
  private readonly blocks: Block[] = [];
  private readonly notes: MammothNode[] = [];
  private readonly path: string[] = [];
  private title: string | undefined;

  constructor(private readonly doc: MammothDocument) {}

  run(): ParsedDocument {
    for (const child of this.doc.children ?? []) this.visit(child);
    this.emitNotes();
    const result: ParsedDocument = { blocks: this.blocks, warnings: [] };
    if (this.title !== undefined) result.title = this.title;
    return result;
  }

  private visit(node: MammothNode): void {
    if (node.type === 'paragraph') this.paragraph(node);
    else if (node.type === 'table') this.table(node);
    else for (const child of node.children ?? []) this.visit(child);
  }

  private paragraph(node: MammothNode): void {
    const text = this.inlineText(node).replace(/[ \t]+/g, ' ').trim();
    if (!text) return;
    const level = headingLevel(node);
    if (level === 'title') {
      this.title ??= text;
      this.push(text, 'heading', 1);
    } else if (level !== null) {
      this.push(text, 'heading', level);
    } else {
      this.push(text, node.numbering ? 'list' : 'paragraph');
    }
  }

  private table(node: MammothNode): void {
    const rows: string[] = [];
    for (const row of node.children ?? []) {
      if (row.type !== 'tableRow') continue;
      const cells = (row.children ?? []).map((cell) =>
        this.cellText(cell).replace(/\s+/g, ' ').trim(),
      );
      if (cells.some((c) => c)) rows.push(cells.join(' | '));
    }
    if (rows.length) this.push(rows.join('\n'), 'table');
  }

  private cellText(cell: MammothNode): string {
    const parts: string[] = [];
    for (const child of cell.children ?? []) {
      if (child.type === 'table') {
        const nested = new Walker({ type: 'document', children: [child] });
        for (const b of nested.run().blocks) parts.push(b.text);
      } else {
        parts.push(this.inlineText(child));
      }
    }
    return parts.join(' ');
  }

  private inlineText(node: MammothNode): string {
    switch (node.type) {
      case 'text':
        return node.value ?? '';
      case 'tab':
        return '\t';
      case 'break':
        return node.breakType === 'line' ? '\n' : ' ';
      case 'noteReference': {
        const note = this.doc.notes?.resolve(node);
        if (note && !this.notes.includes(note)) this.notes.push(note);
        return '';
      }
      case 'paragraph':
        return (node.children ?? []).map((c) => this.inlineText(c)).join('') + '\n';
      default:
        return (node.children ?? []).map((c) => this.inlineText(c)).join('');
    }
  }

  private emitNotes(): void {
    // Notes nobody references (mammoth keeps them all) still hold text worth finding.
    for (const note of Object.values(this.doc.notes?._notes ?? {})) if (!this.notes.includes(note)) this.notes.push(note);
    for (const note of this.notes) {
      const text = (note.body ?? []).map((p) => this.inlineText(p)).join('\n').replace(/[ \t]+/g, ' ').replace(/\n{2,}/g, '\n').trim();
      if (text) this.blocks.push({ text, headings: [...this.path], kind: 'footnote' });
    }
  }

  private push(text: string, kind: BlockKind, level?: number): void {
    if (kind === 'heading' && level !== undefined) {
      this.path.length = Math.min(this.path.length, level - 1);
      this.path.push(text);
    }
    this.blocks.push({ text, headings: [...this.path], kind });
  }
}

function headingLevel(node: MammothNode): number | 'title' | null {
  const name = (node.styleName ?? node.styleId ?? '').trim();
  if (/^title$/i.test(name)) return 'title';
  const m = HEADING_STYLE.exec(name) ?? /^heading([1-9])$/i.exec(node.styleId ?? '');
  if (!m) return null;
  return Math.min(6, Number(m[1]));
}

function shortReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return cutChars(message.split('\n')[0]!, 160);
}
