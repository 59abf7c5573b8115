/**
 * Plain text: decode (see text-encoding.ts), split paragraphs on blank lines, and treat Markdown-style
 * `# Heading` lines as headings so Markdown notes chunk by section.
 */
import type { Block, ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { decodeText } from './text-encoding.js';

const HEADING = /^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$/;

export async function parse(bytes: Uint8Array, _opts: ParseOptions = {}): Promise<ParsedDocument> {
  const decoded = decodeText(bytes);
  if (decoded === null) throw new ParseError('binary file, not text');
  return fromText(decoded.text);
}

/** Builds blocks from already-decoded text. */
export function fromText(text: string): ParsedDocument {
  const blocks: Block[] = [];
  const path: string[] = [];
  let title: string | undefined;
  let paragraph: string[] = [];

  const flush = (): void => {
    const body = paragraph.join('\n').trim();
    if (body) blocks.push({ text: body, headings: [...path], kind: 'paragraph' });
    paragraph = [];
  };

  const lines = text.split('\n').map((l) => l.replace(/[ \t]+$/, ''));
  const commentBlock = commentLines(lines);
  lines.forEach((line, i) => {
    const heading = commentBlock.has(i) ? null : HEADING.exec(line);
    if (heading) {
      flush();
      const level = heading[1]!.length;
      const name = heading[2]!.trim();
      path.length = Math.min(path.length, level - 1);
      path.push(name);
      if (level === 1 && title === undefined) title = name;
      blocks.push({ text: name, headings: [...path], kind: 'heading' });
    } else if (line.trim() === '') {
      flush();
    } else {
      paragraph.push(line);
    }
  });
  flush();

  const doc: ParsedDocument = { blocks, warnings: blocks.length ? [] : ['no text found (empty file?)'] };
  if (title !== undefined) doc.title = title;
  return doc;
}

/** Three or more consecutive "# …" lines are a comment block (scripts, licence headers), not Markdown headings. */
function commentLines(lines: string[]): Set<number> {
  const out = new Set<number>();
  let runStart = -1;
  for (let i = 0; i <= lines.length; i++) {
    const hashed = i < lines.length && lines[i]!.startsWith('#');
    if (hashed && runStart < 0) runStart = i;
    if (!hashed && runStart >= 0) {
      if (i - runStart >= 3) for (let j = runStart; j < i; j++) out.add(j);
      runStart = -1;
    }
  }
  return out;
}
