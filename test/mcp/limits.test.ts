/**
 * The MCP size limits docs/mcp.md promises (src/mcp/limits.ts), at and past each bound, through the official SDK's
 * client over the daemon's /mcp and over `docsearch mcp`:
 * - a search passage longer than 2,000 characters comes back cut to them, with `text_cut`, its highlights inside
 *   what is shown; a shorter one whole, without the flag;
 * - add_document takes a note of exactly 1,000,000 characters and refuses one more, naming the field and the limit;
 * - a resource read returns at most 100,000 characters and, when the text is longer, says where it was cut, from
 *   where get_document reads on to the end.
 * The long texts are words 20 spaces apart (kept as they are: a line's inner spaces are text), so that passages of 256
 * tokens are thousands of characters long and a million characters are a few hundred passages.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { call, callError, httpClient, stdioClient } from './mcp-client.js';

const MAX_PASSAGE_CHARS = 2000;
const MAX_NOTE_CHARS = 1_000_000;
const MAX_RESOURCE_CHARS = 100_000;

const WORDS = ['keeper', 'lighthouse', 'wind', 'tide', 'harbour', 'signal', 'beacon', 'rock', 'gull', 'fog', 'bell', 'pier', 'lantern', 'weather', 'shore', 'current'];
const GAP = 20;

/**
 * Exactly `length` characters: the words in turn, GAP spaces apart, on one line (so the text parser keeps it as it
 * is), ending in a letter (a trailing space would be trimmed).
 */
function spaced(length: number): string {
  const parts: string[] = [];
  let size = -GAP;
  for (let i = 0; size < length; i++) {
    const word = WORDS[i % WORDS.length]!;
    parts.push(word);
    size += word.length + GAP;
  }
  const text = parts.join(' '.repeat(GAP)).slice(0, length);
  return text.endsWith(' ') ? `${text.slice(0, -1)}x` : text;
}

interface Passage {
  chunk_id: string;
  text: string;
  text_cut?: boolean;
  highlights: [number, number][];
}

describe('MCP size limits', () => {
  let d: Daemon;
  let alice: TestUser;
  let http: Client;
  let stdio: Client;
  /** 150,000 characters: passages of thousands of characters each, and a text longer than one resource read. */
  const long = spaced(150_000);
  let longId: string;
  /** Exactly one resource read long. */
  const fits = spaced(MAX_RESOURCE_CHARS);
  let fitsId: string;
  const short = 'The harbour keeper lit the beacon at dusk.';
  let shortId: string;

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });
  beforeAll(async () => {
    http = await httpClient(d, alice.apiKey);
    stdio = await stdioClient(d.url, alice.apiKey);
    for (const [filename, text] of [
      ['signal log.txt', long],
      ['tide table.txt', fits],
      ['dusk.txt', short],
    ] as const) {
      const out = await call(http, 'add_document', { filename, text });
      expect(out.document.status, JSON.stringify(out.document)).toBe('ready');
      if (text === long) longId = out.document.id;
      else if (text === fits) fitsId = out.document.id;
      else shortId = out.document.id;
    }
  }, 180_000);
  afterAll(async () => {
    await http?.close();
    await stdio?.close();
  });

  it('cuts a passage over 2,000 characters to them and says so (text_cut), over both transports and in both groupings', async () => {
    const query = { query: 'dusk beacon', mode: 'keyword', document_ids: [longId, shortId], limit: 20 };
    // The passages whole, as the REST API answers them: the long document's are far over the limit.
    const rest = await api(d, '/api/v1/search', { token: alice.apiKey, body: query });
    expect(rest.status, JSON.stringify(rest.body)).toBe(200);
    const whole = new Map<string, string>(rest.body.results.map((r: { chunk_id: string; text: string }) => [r.chunk_id, r.text]));
    const longOnes = rest.body.results.filter((r: { document: { id: string } }) => r.document.id === longId);
    expect(longOnes.length).toBeGreaterThan(1);
    for (const r of longOnes) expect(r.text.length).toBeGreaterThan(MAX_PASSAGE_CHARS);
    expect(rest.body.results.some((r: { document: { id: string } }) => r.document.id === shortId)).toBe(true);

    const check = (passages: Passage[]) => {
      expect(passages.length).toBe(whole.size);
      for (const p of passages) {
        const full = whole.get(p.chunk_id)!;
        expect(full, p.chunk_id).toEqual(expect.any(String));
        if (full.length > MAX_PASSAGE_CHARS) {
          expect(p.text).toBe(full.slice(0, MAX_PASSAGE_CHARS));
          expect(p.text_cut).toBe(true);
        } else {
          expect(p.text).toBe(full);
          expect(p).not.toHaveProperty('text_cut');
        }
        // Every highlight points into the text shown.
        for (const [start, end] of p.highlights) expect(start < end && end <= p.text.length, `${p.chunk_id} [${start}, ${end})`).toBe(true);
      }
    };
    for (const client of [http, stdio]) {
      const flat = await call(client, 'search', query);
      check(flat.results);
      const grouped = await call(client, 'search', { ...query, group: 'document', limit: 2 });
      expect(grouped.documents.map((g: { document_id: string }) => g.document_id).sort()).toEqual([longId, shortId].sort());
      const passages: Passage[] = grouped.documents.flatMap((g: { passages: Passage[] }) => g.passages);
      expect(passages.filter((p) => p.text_cut).length).toBeGreaterThan(0);
      for (const p of passages) {
        const full = whole.get(p.chunk_id);
        if (full === undefined) continue; // a passage beyond the flat list's first page
        expect(p.text).toBe(full.slice(0, MAX_PASSAGE_CHARS));
        expect(p.text_cut === true).toBe(full.length > MAX_PASSAGE_CHARS);
      }
    }
  });

  it('cuts a passage between characters, never inside an emoji, and marks a highlight across the cut up to it', async () => {
    // Words 20 spaces apart to 1,950 characters, then a sentence that crosses character 2,000, whose emoji straddles
    // it (its two UTF-16 halves at 1,999 and 2,000).
    const head = spaced(1950);
    const crossing = `${' '.repeat(2)}Puffins ${'x'.repeat(39)}😀 nest on the cliff ledges every spring.`;
    const text = `${head}${crossing}`;
    expect(text.codePointAt(1999)).toBe(0x1f600);
    const out = await call(http, 'add_document', { filename: 'puffins.txt', text });
    expect(out.document.status, JSON.stringify(out.document)).toBe('ready');
    const found = await call(http, 'search', { query: 'puffins nest cliff ledges spring', mode: 'keyword', document_ids: [out.document.id], limit: 5 });
    const p = (found.results as (Passage & { snippet: string })[]).find((r) => r.text_cut)!;
    expect(p, JSON.stringify(found.results)).toBeDefined();
    // The emoji is left out whole: no lone half, which strict UTF-8 clients refuse.
    expect(p.text).toBe(text.slice(0, 1999));
    // The answer sentence runs past the cut: its highlight is marked up to it, not dropped.
    const answerAt = text.indexOf('Puffins');
    expect(p.highlights.some(([start, end]) => start <= answerAt && end === 1999), JSON.stringify(p.highlights)).toBe(true);
    for (const [start, end] of p.highlights) expect(start < end && end <= p.text.length).toBe(true);
  });

  it('add_document takes a note of exactly 1,000,000 characters and refuses one character more, saying why', async () => {
    const atLimit = spaced(MAX_NOTE_CHARS);
    expect(atLimit.length).toBe(MAX_NOTE_CHARS);

    // One more: refused by both transports in the same words, naming the field and the limit; nothing is stored.
    const over = `${atLimit}x`;
    const [overHttp, overStdio] = [await callError(http, 'add_document', { filename: 'too long.txt', text: over }), await callError(stdio, 'add_document', { filename: 'too long.txt', text: over })];
    expect(overStdio).toBe(overHttp);
    expect(overHttp).toMatch(/Too big: expected string to have <=1000000 characters at text/);
    expect((await call(http, 'list_documents', { name: 'too long' })).documents).toEqual([]);

    // Exactly the limit: taken, and its text kept whole. (add_document waits up to a minute for the document to be
    // searchable; a loaded machine may take longer to embed a few hundred passages, so this waits on for it.)
    const added = await call(http, 'add_document', { filename: 'at the limit.txt', text: atLimit });
    expect(added.duplicate).toBe(false);
    expect(added.document.status, JSON.stringify(added.document)).not.toBe('failed');
    await waitFor(async () => (await api(d, `/api/v1/documents/${added.document.id}`, { token: alice.apiKey })).body.status === 'ready', 240_000, 'the note at the limit ready');
    const read = await call(http, 'get_document', { document_id: added.document.id, offset: MAX_NOTE_CHARS - 1000, max_chars: 100_000 });
    expect(read.total_chars).toBe(MAX_NOTE_CHARS);
    expect(read.text).toBe(atLimit.slice(MAX_NOTE_CHARS - 1000));
    expect(read.next_offset).toBeNull();
    // docsearch mcp (an upload over the REST API) takes it too: the same text, found as the same document.
    const again = await call(stdio, 'add_document', { filename: 'at the limit.txt', text: atLimit });
    expect(again).toMatchObject({ duplicate: true, document: { id: added.document.id } });
  }, 360_000);

  it('a resource read stops at 100,000 characters and says where; get_document reads on from there to the end', async () => {
    for (const client of [http, stdio]) {
      const read = await client.readResource({ uri: `docsearch://documents/${longId}` });
      const text = (read.contents[0] as { text: string }).text;
      const note = /\n\n\[cut at (\d+) of (\d+) characters: call get_document with offset (\d+) to read on\]$/.exec(text);
      expect(note, text.slice(-300)).not.toBeNull();
      const [end, total, offset] = [Number(note![1]), Number(note![2]), Number(note![3])];
      expect(total).toBe(long.length);
      expect(offset).toBe(end);
      // Cut at a word boundary within the limit, never more than it.
      expect(end).toBeLessThanOrEqual(MAX_RESOURCE_CHARS);
      expect(end).toBeGreaterThan(MAX_RESOURCE_CHARS / 2);
      expect(text.slice(0, note!.index)).toBe(long.slice(0, end));
      const rest = await call(client, 'get_document', { document_id: longId, offset: end, max_chars: 100_000 });
      expect(rest.text).toBe(long.slice(end));
      expect(rest.next_offset).toBeNull();

      // A text of exactly 100,000 characters comes whole, with no note.
      const whole = await client.readResource({ uri: `docsearch://documents/${fitsId}` });
      expect((whole.contents[0] as { text: string }).text).toBe(fits);
    }
  });
});
