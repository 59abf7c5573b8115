/**
 * Plain text: decode (see text-encoding.ts), split paragraphs on blank lines, and treat Markdown-style
 * `# Heading` lines as headings so Markdown notes chunk by section.
 */
import type { Block, ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { decodeText } from './text-encoding.js';

/** "# Title"; its closing "#"s are cut off apart (trimEnd): one regex for both backtracked quadratically on long lines. */
const HEADING = /^(#{1,6})[ \t]+(.*)$/;

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

  const lines = text.split('\n').map((l) => trimEnd(l, ' \t'));
  const commentBlock = commentLines(lines);
  lines.forEach((line, i) => {
    const heading = commentBlock.has(i) ? null : HEADING.exec(line);
    if (heading) {
      flush();
      const level = heading[1]!.length;
      const name = (trimEnd(trimEnd(heading[2]!, '#'), ' \t') || heading[2]!).trim();
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

/**
 * `s` without the trailing characters in `chars`, in one pass: `/[ \t]+$/` retries from every space of a long
 * run that is not at the end (a padded line of 100,000 characters took minutes).
 */
function trimEnd(s: string, chars: string): string {
  let end = s.length;
  while (end > 0 && chars.includes(s[end - 1]!)) end--;
  return s.slice(0, end);
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
