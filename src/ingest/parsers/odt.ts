/**
 * OpenDocument text (.odt): headings (`text:h` with its outline level) make the heading trail, paragraphs and
 * list items are blocks, a table is one block of "cell | cell" rows, notes (footnotes, endnotes) come after the
 * body. Read with saxes from content.xml (odf.ts).
 */
import type { Block, BlockKind, ParsedDocument, ParseOptions } from '../types.js';
import { clean, readOdf, walkOdf } from './odf.js';
import type { ZipLimits } from './zip-guard.js';

const NOUN = 'the OpenDocument text (.odt)';

export async function parse(bytes: Uint8Array, opts: ParseOptions & { zipLimits?: Partial<ZipLimits> } = {}): Promise<ParsedDocument> {
  const pkg = await readOdf(bytes, NOUN, opts.zipLimits);
  const blocks: Block[] = [];
  const notes: Block[] = [];
  const path: string[] = [];
  /** Paragraphs open now (a note's paragraphs sit inside the paragraph that cites it). */
  const open: { text: string; level: number; kind: BlockKind; note: boolean }[] = [];
  let lists = 0;
  let noteBodies = 0;
  let tables = 0;
  let rows: string[][] = [];
  let firstHeading: string | undefined;

  walkOdf(pkg.content, NOUN, {
    open(name, attrs) {
      if (name === 'text:p' || name === 'text:h') {
        const level = name === 'text:h' ? Math.min(6, Number(attrs['text:outline-level'] ?? 1) || 1) : 0;
        open.push({ text: '', level, kind: lists > 0 ? 'list' : 'paragraph', note: noteBodies > 0 });
      } else if (name === 'text:list') lists++;
      else if (name === 'text:note-body') noteBodies++;
      else if (name === 'table:table') {
        if (tables++ === 0) rows = [];
      } else if (name === 'table:table-row' && tables === 1) rows.push([]);
      else if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && tables === 1) rows.at(-1)?.push('');
    },
    text(t) {
      const p = open.at(-1);
      if (p) p.text += t;
    },
    close(name) {
      if (name === 'text:p' || name === 'text:h') {
        const p = open.pop()!;
        const text = clean(p.text);
        if (!text) return;
        const row = rows.at(-1);
        if (tables > 0 && !p.note && row) {
          row[row.length - 1] = row.at(-1) ? `${row.at(-1)} ${text}` : text;
        } else if (p.note) {
          notes.push({ text, headings: [...path], kind: 'footnote' });
        } else if (p.level > 0) {
          path.length = Math.min(path.length, p.level - 1);
          path.push(text);
          firstHeading ??= text;
          blocks.push({ text, headings: [...path], kind: 'heading' });
        } else blocks.push({ text, headings: [...path], kind: p.kind });
      } else if (name === 'text:list') lists--;
      else if (name === 'text:note-body') noteBodies--;
      else if (name === 'table:table' && --tables === 0) {
        const text = rows.map((r) => r.map((c) => c.replace(/\s+/g, ' ')).join(' | ')).filter((r) => r.replace(/[ |]/g, '')).join('\n');
        if (text) blocks.push({ text, headings: [...path], kind: 'table' });
      }
    },
  });
  // one by one: a spread of 200,000 items overflows the call stack
  for (const note of notes) blocks.push(note);
  const doc: ParsedDocument = { blocks, warnings: blocks.length ? [] : ['no text found (empty document?)'] };
  const title = pkg.title ?? firstHeading;
  if (title !== undefined) doc.title = title;
  return doc;
}
