/**
 * Long Markdown is parsed in pieces (markdown-guard.ts `markdownSegments`): the pieces read as the whole file does.
 * Front matter opens the file only — a piece that starts at a thematic break (`---`) and holds another further down
 * had what lay between them taken for front matter, and its text was lost. A reference link resolves against its
 * definition in any piece, a comment or `<style>` with blank lines in it is not cut (its rest read as text), nor a
 * paragraph before a line of it that looks like a list item.
 */
import { describe, expect, it } from 'vitest';
import { parse } from '../../src/ingest/parsers/markdown.js';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from './pipeline/helpers.js';

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

describe('long Markdown through the daemon reads as a short file does', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });
  // 150 paragraphs: the file is cut into pieces (100 lines each) between the text and what follows it.
  const filler = Array.from({ length: 150 }, (_, i) => `Filler paragraph ${i} about the harbour.\n`).join('\n');

  /** Each file uploaded, ready, and the text of its chunks. */
  async function chunkTexts(files: Record<string, string>): Promise<Record<string, string>> {
    const res = await uploadFiles(d, alice.apiKey, Object.entries(files).map(([name, body]) => ({ name, bytes: Buffer.from(body) })), { query: '?wait=true&wait_timeout=120' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const out: Record<string, string> = {};
    for (const doc of res.body.documents) {
      expect(doc, doc.error).toMatchObject({ status: 'ready', content_type: 'text/markdown', error: null });
      const res = await api(d, `/api/v1/documents/${doc.id}/text`, { token: alice.apiKey });
      out[doc.filename] = res.body.pages.flatMap((p: any) => p.chunks.map((c: any) => c.text)).join('\n');
    }
    return out;
  }

  it('keeps the words of reference links whose definitions are in another piece, and not the definitions', async () => {
    // Labels with emphasis are split across text nodes: [*tidal* streams] and [**slack** water][] kept their brackets.
    const links = 'Read the [tide tables][tides], the [harbour map], the [*tidal* streams], [**slack** water][] and the [pilot notes][] before ![the chart of the bay][chart] sailing.\n\n';
    const definitions =
      '[tides]: https://example.org/tides\n[Harbour  Map]: https://example.org/map "The map"\n[*tidal* streams]: https://example.org/streams\n[**Slack** water]: https://example.org/slack\n[pilot notes]: <https://example.org/pilot>\n[chart]: chart.png\n';
    const sentence = 'Read the tide tables, the harbour map, the tidal streams, slack water and the pilot notes before the chart of the bay sailing.';
    const texts = await chunkTexts({ 'short.md': links + definitions, 'long.md': `# Sailing\n\n${links}${filler}\n${definitions}`, 'first.md': `${definitions}\n${filler}\n${links}` });
    expect(texts['short.md']).toContain(sentence);
    for (const name of ['long.md', 'first.md']) {
      expect(texts[name], name).toContain(sentence);
      expect(texts[name], name).not.toMatch(/\[|\]|example\.org/);
    }
  }, 120_000);

  it('keeps a wrapped line that starts with a number in its paragraph where a piece would begin', async () => {
    // A paragraph's line "2019. After" is its text, not a list item (only an item numbered 1 interrupts a paragraph):
    // a cut before it lost "2019." and split the paragraph.
    const opening = Array.from({ length: 98 }, (_, i) => `Opening line ${i} of a long paragraph.\n`).join('');
    const sentence = 'The harbour was dredged again in\n2019. After that the ferries ran\nthrough the winter as well.';
    const texts = await chunkTexts({ 'wrapped.md': `${opening}\n${sentence}\n` });
    expect(texts['wrapped.md']).toContain(sentence);
  }, 120_000);

  it('leaves out a comment or a style sheet with blank lines in it that a piece would have cut', async () => {
    const drafts = Array.from({ length: 150 }, (_, i) => `Draft paragraph ${i} not for readers.\n`).join('\n');
    const rules = Array.from({ length: 150 }, (_, i) => `.berth-${i} { colour: navy }\n`).join('\n');
    const texts = await chunkTexts({
      'comment.md': `# Notes\n\nBefore the comment.\n\n<!-- drafts\n\n${drafts}\nend of drafts -->\n\nAfter the comment.\n`,
      'style.md': `# Styled\n\nBefore the style.\n\n<style>\n${rules}</style>\n\nAfter the style.\n`,
    });
    expect(texts['comment.md']).toMatch(/Before the comment\.\s+After the comment\.$/);
    expect(texts['style.md']).toMatch(/Before the style\.\s+After the style\.$/);
  }, 120_000);
});
