/**
 * A document's text through MCP is the document's text: get_document and resources/read rebuild it from the chunks
 * by where the chunker recorded each lies, so lines that repeat where one chunk ends and the next begins are
 * neither dropped nor doubled. Over the daemon's /mcp (the route handlers in-process) and `docsearch mcp` (the REST
 * API over HTTP), with the SDK's client.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { rng } from '../helpers/rng.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, httpClient, stdioClient } from './mcp-client.js';

/** Invoice, log and contract lines: long enough (≥ 16 characters) to look like an overlap when they repeat. */
const LINES = [
  'Total due: 1,250.00 EUR, payable within 30 days.',
  'ERROR 2026-03-01T10:00:00Z disk /var is full, retrying.',
  'The tenant shall keep the premises in good repair.',
  'Item 4711 Widget, blue, 12 pieces at 3.50 each.',
  'This clause survives the end of the agreement.',
  'See the appendix.',
];

/**
 * A text as the text parser keeps it (paragraphs one blank line apart, no trailing spaces): every line repeats at
 * random three times in a row, and whole paragraphs repeat, so there are repeats wherever a chunk boundary falls.
 */
function generate(rand: () => number): string {
  const paragraphs: string[] = [];
  const count = 8 + Math.floor(rand() * 12);
  for (let p = 0; p < count; p++) {
    if (paragraphs.length && rand() < 0.2) {
      paragraphs.push(paragraphs[Math.floor(rand() * paragraphs.length)]!);
      continue;
    }
    const lines: string[] = [];
    for (let l = 0; l < 2 + Math.floor(rand() * 14); l++) {
      const line = LINES[Math.floor(rand() * LINES.length)]!;
      for (let r = rand() < 0.5 ? 3 : 1; r > 0; r--) lines.push(line);
    }
    // Lines of a paragraph joined by line breaks, or run together as one long line.
    paragraphs.push(lines.join(rand() < 0.7 ? '\n' : ' '));
  }
  return paragraphs.join('\n\n');
}

/** The whole text through get_document, window after window. */
async function readAll(client: Client, documentId: string, maxChars: number): Promise<string> {
  let text = '';
  let offset: number | undefined;
  for (let calls = 0; calls < 200; calls++) {
    const out = await call(client, 'get_document', { document_id: documentId, max_chars: maxChars, ...(offset !== undefined ? { offset } : {}) });
    expect(out.offset).toBe(offset ?? 0);
    text += out.text;
    if (out.next_offset === null) return text;
    offset = out.next_offset;
  }
  throw new Error('get_document never reached the end');
}

describe('document text through MCP', () => {
  let d: Daemon;
  let alice: TestUser;
  let client: Client;
  const texts: { id: string; text: string }[] = [];
  let pdfId: string;

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });
  beforeAll(async () => {
    client = await httpClient(d, alice.apiKey);
    const rand = rng(49);
    for (let i = 0; i < 8; i++) {
      const text = generate(rand);
      const out = await call(client, 'add_document', { filename: `repeats-${i}.txt`, text });
      expect(out.document.status).toBe('ready');
      texts.push({ id: out.document.id, text });
    }
    // Three pages, each long enough for chunks of its own and some that run into the next.
    const pages = [1, 2, 3].map((n) => [
      { lines: Array.from({ length: 30 }, (_, i) => `Page ${n} line ${i}: the keeper logged the lamp and the wind again today.`), size: 8 },
    ]);
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'log.pdf', bytes: makePdf(pages) }], { query: '?wait=true' });
    expect(up.status).toBe(200);
    pdfId = up.body.documents[0].id;
  }, 300_000);
  afterAll(async () => {
    await client?.close();
  });

  it('the generated texts have chunk boundaries where lines repeat', async () => {
    let boundaries = 0;
    for (const { id } of texts) {
      const res = await api(d, `/api/v1/documents/${id}/text?limit=500`, { token: alice.apiKey });
      const chunks = res.body.pages.flatMap((p: { chunks: unknown[] }) => p.chunks);
      expect(chunks.length).toBeGreaterThan(1);
      boundaries += chunks.length - 1;
      // The REST API says where each chunk lies; its separators and texts after the overlaps are the text.
      const rebuilt = chunks.map((c: { text: string; placement: { overlap: number; separator: string } }) => c.placement.separator + c.text.slice(c.placement.overlap)).join('');
      expect(rebuilt).toBe(texts.find((t) => t.id === id)!.text);
    }
    expect(boundaries).toBeGreaterThan(30);
  });

  it('get_document returns each text exactly, whole or window by window', async () => {
    for (const { id, text } of texts) {
      const whole = await call(client, 'get_document', { document_id: id, max_chars: 100_000 });
      expect(whole.text).toBe(text);
      expect(whole.total_chars).toBe(text.length);
      expect(await readAll(client, id, 700)).toBe(text);
    }
  });

  it('resources/read returns each text exactly', async () => {
    for (const { id, text } of texts) {
      const read = await client.readResource({ uri: `docsearch://documents/${id}` });
      expect((read.contents[0] as { text: string }).text).toBe(text);
    }
  });

  it('docsearch mcp (over the REST API) returns the same texts', async () => {
    const stdio = await stdioClient(d.url, alice.apiKey);
    try {
      for (const { id, text } of texts.slice(0, 3)) {
        expect((await call(stdio, 'get_document', { document_id: id, max_chars: 100_000 })).text).toBe(text);
        expect(((await stdio.readResource({ uri: `docsearch://documents/${id}` })).contents[0] as { text: string }).text).toBe(text);
      }
    } finally {
      await stdio.close();
    }
  });

  it('marks where every page of a PDF starts, the last one too, and reads a page range exactly', async () => {
    const out = await call(client, 'get_document', { document_id: pdfId, max_chars: 100_000 });
    const markers = [...out.text.matchAll(/^\[page (\d+)\]$/gm)].map((m) => Number(m[1]));
    expect(markers).toEqual([1, 2, 3]);
    // Each page's lines come after its own marker and before the next.
    for (const n of [1, 2, 3]) {
      const page = out.text.slice(out.text.indexOf(`[page ${n}]`), n < 3 ? out.text.indexOf(`[page ${n + 1}]`) : undefined);
      expect(page).toContain(`Page ${n} line 0:`);
      expect(page).toContain(`Page ${n} line 29:`);
      expect(page).not.toMatch(new RegExp(`Page ${n === 1 ? 2 : 1} line`));
    }
    const third = await call(client, 'get_document', { document_id: pdfId, page_from: 3 });
    expect(third.text.startsWith('[page 3]\nPage 3 line 0:')).toBe(true);
    expect(third.text).not.toContain('Page 2 line');
    const second = await call(client, 'get_document', { document_id: pdfId, page_from: 2, page_to: 2 });
    expect(second.text.startsWith('[page 2]\n')).toBe(true);
    expect(second.text).toContain('Page 2 line 29:');
    expect(second.text).not.toMatch(/Page [13] line/);
  });
});
