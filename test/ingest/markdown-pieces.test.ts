/**
 * Long Markdown is parsed in pieces (markdown-guard.ts `markdownSegments`): the pieces read as the whole file does.
 * Front matter opens the file only — a piece that starts at a thematic break (`---`) and holds another further down
 * had what lay between them taken for front matter, and its text was lost.
 */
import { describe, expect, it } from 'vitest';
import { parse } from '../../src/ingest/parsers/markdown.js';

const text = async (markdown: string) => (await parse(new TextEncoder().encode(markdown))).blocks.map((b) => b.text).join('\n');

describe('Markdown read in pieces', () => {
  it('keeps the text between two thematic breaks where a piece begins', async () => {
    const filler = Array.from({ length: 150 }, (_, i) => `Paragraph number ${i} of filler text.\n`).join('\n');
    const all = await text(`${filler}\n---\n\nThe sentence between two rules.\n\n---\n\nAfter the second rule.\n`);
    expect(all).toContain('The sentence between two rules.');
    expect(all).toContain('After the second rule.');
    expect(all).toContain('Paragraph number 149 of filler text.');
  });

  it('still reads front matter at the top of the file', async () => {
    const doc = await parse(new TextEncoder().encode(`---\ntitle: Field guide\n---\n\n# Waders\n\nAvocets sweep the mud.\n`));
    expect(doc.title).toBe('Field guide');
    expect(doc.blocks.map((b) => b.text).join('\n')).not.toContain('title:');
  });
});
