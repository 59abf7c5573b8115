/**
 * Word (.docx) with mammoth. mammoth's HTML is not what we want; its document model is, and the public
 * `transformDocument` hook hands it over. Walking that model keeps headings (Heading 1..6 → heading path),
 * list items, tables (one "cell | cell" line per row) and footnotes/endnotes (after the body).
 *
 * A .docx is a ZIP, so it is checked with yauzl, every entry inflated once, before mammoth (which inflates with
 * JSZip, unbounded) ever sees it.
 */
import mammoth from 'mammoth';
import type { Block, BlockKind, ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { readZip, type ZipLimits } from './zip-guard.js';

export interface DocxOptions extends ParseOptions {
  zipLimits?: Partial<ZipLimits>;
}

export const NO_TEXT = 'no text found (empty document?)';
const TOO_DEEP = 'the Word document nests tables or other elements too deep to read — refused (a hostile or broken file)';

/** Parts read here when mammoth yields nothing (ruby-only text) or skips them (altChunk HTML). */
const WORD = { noun: 'the Word document', keep: /^word\/(document\.xml|[^/]+\.x?html?)$/i, inflatesItself: true };

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
      { buffer },
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
  // mammoth skips w:ruby runs entirely; a document made only of them would otherwise come out empty.
  // Blocks are added one by one here: a spread of 200,000 items overflows the call stack.
  if (doc.blocks.length === 0) for (const b of rawXmlBlocks(parts.get('word/document.xml'))) doc.blocks.push(b);
  // altChunk parts (imported HTML) are invisible to mammoth.
  for (const [name, content] of parts) if (/\.x?html?$/i.test(name)) for (const b of htmlBlocks(content)) doc.blocks.push(b);
  if (doc.blocks.length === 0) doc.warnings.push(NO_TEXT);
  return doc;
}

/** Paragraph text straight from WordprocessingML: base text of <w:t> runs, ruby readings (<w:rt>) left out. */
function rawXmlBlocks(xml: Buffer | undefined): Block[] {
  if (!xml) return [];
  const source = xml.toString('utf8').replace(/<w:rt>[\s\S]*?<\/w:rt>/g, '');
  const blocks: Block[] = [];
  for (const p of source.matchAll(/<w:p[ >][\s\S]*?<\/w:p>/g)) {
    const text = [...p[0].matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)].map((m) => decodeEntities(m[1]!)).join('').trim();
    if (text) blocks.push({ text, headings: [], kind: 'paragraph' });
  }
  return blocks;
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
  return message.split('\n')[0]!.slice(0, 160);
}
