/**
 * Text the tokenizer reads as next to nothing: a run of letters without a space longer than WordPiece's per-word
 * limit, or in a script its vocabulary lacks, is one [UNK] token however long. Sized in tokens alone, one such run of
 * 160,000 characters made a single chunk of 7 tokens, returned whole by every search that showed it. Every chunk now
 * holds at most 12 characters other than whitespace per token of the model's window (chunk.ts `MAX_CHARS_PER_TOKEN`),
 * cut between graphemes, and the document's text still rebuilds exactly from its chunks. Text spaced for layout is
 * sized by its tokens as before.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { rng } from '../helpers/rng.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from './pipeline/helpers.js';

/** The built-in model's window (256 tokens) × 12 characters a token, whitespace left out. */
const MAX_CHUNK_CHARS = 256 * 12;
const printing = (text: string) => text.replace(/\s/gu, '').length;

/** `length` characters drawn from `alphabet` (code points), without a space. */
function run(alphabet: string, length: number, seed: number): string {
  const random = rng(seed);
  const chars = [...alphabet];
  let out = '';
  while (out.length < length) out += chars[Math.floor(random() * chars.length)]!;
  return out;
}

const LATIN = 'abcdefghijklmnopqrstuvwxyz';
// Latin, Cyrillic, Greek, Hebrew, Devanagari with its vowel signs (graphemes of two code points), emoji (surrogate pairs).
const MIXED = `${LATIN}абвгдежзиклмнопрстуфхцчшщ${'αβγδεζηθικλμνξοπρστυφχψω'}אבגדהוזחטיכלמנסעפצקרשת${'कखगघचछजझटठडढणतथदधनपफबभमयरलवशसह'}ि॒ी🦀🐙`;
const BASE64 = `${LATIN}${LATIN.toUpperCase()}0123456789+/`;
const minifiedJson = (n: number): string => JSON.stringify(Array.from({ length: n }, (_, i) => ({ id: i, name: `berth${i}`, depth: (i * 7) % 13 })));

const FILES: Record<string, string> = {
  'latin.txt': run(LATIN, 300_000, 1),
  'mixed.txt': run(MIXED, 200_000, 2),
  'digits.txt': run('0123456789', 100_000, 3),
  'base64.txt': run(BASE64, 60_000, 4),
  'minified.json.txt': minifiedJson(2_000),
  'prose-around-run.txt': `The harbour master logs every ferry that enters the bay. ${run(LATIN, 150_000, 5)} The lighthouse keeper rings the fog bell at dawn.`,
  // Words of 150 letters, each one [UNK]: 256 of them were one chunk of 38,000 characters.
  'long-words.txt': Array.from({ length: 400 }, (_, i) => run(LATIN, 150, 100 + i)).join(' '),
};

/**
 * A wide table laid out with spaces, cells 60 spaces apart: sized by its tokens (~2 a cell), so a chunk holds more
 * characters than the bound allows printing ones.
 */
const SPACED = Array.from({ length: 600 }, (_, i) => `cell${i % 10}`).join(' '.repeat(60));

describe('a run of text the tokenizer reads as one token, through the daemon', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  /** Every chunk of a document, in order, from its text (all pages, every page of the list). */
  async function chunksOf(id: string): Promise<{ text: string; placement: { overlap: number; separator: string } }[]> {
    const chunks = [];
    let cursor: string | null = null;
    do {
      const res = await api(d, `/api/v1/documents/${id}/text?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: alice.apiKey });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      chunks.push(...res.body.pages.flatMap((p: any) => p.chunks));
      cursor = res.body.next_cursor;
    } while (cursor);
    return chunks;
  }

  it('cuts it into chunks of bounded length, between graphemes, that rebuild the text exactly', async () => {
    const files = Object.entries(FILES).map(([name, body]) => ({ name, bytes: Buffer.from(body) }));
    const res = await uploadFiles(d, alice.apiKey, files, { query: '?wait=true&wait_timeout=600' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const doc of res.body.documents) {
      expect(doc, doc.error).toMatchObject({ status: 'ready', error: null });
      const original = FILES[doc.filename]!;
      const chunks = await chunksOf(doc.id);
      const longest = Math.max(...chunks.map((c) => printing(c.text)));
      expect(longest, doc.filename).toBeLessThanOrEqual(MAX_CHUNK_CHARS);
      // A run read as one token fills chunks to at least a quarter of that: it is not cut into crumbs either. (Base64
      // and JSON are dense in tokens, ~2 characters each: their chunks end at the token budget.)
      if (!/base64|json/.test(doc.filename)) expect(chunks.length, doc.filename).toBeLessThanOrEqual(Math.ceil(original.length / (MAX_CHUNK_CHARS / 4)));
      // Cut between graphemes: no chunk starts with a vowel sign or the low half of a surrogate pair.
      for (const c of chunks) expect(c.text, doc.filename).not.toMatch(/^[\p{M}\udc00-\udfff]|[\ud800-\udbff]$/u);
      const rebuilt = chunks.map((c) => c.placement.separator + c.text.slice(c.placement.overlap)).join('');
      expect(rebuilt === original, `${doc.filename}: the chunks rebuild the uploaded text`).toBe(true);
    }
  }, 900_000);

  it('sizes text spaced for layout by its tokens: the bound counts no whitespace', async () => {
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'spaced.txt', bytes: Buffer.from(SPACED) }], { query: '?wait=true&wait_timeout=120' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const chunks = await chunksOf(res.body.documents[0].id);
    expect(Math.max(...chunks.map((c) => c.text.length))).toBeGreaterThan(MAX_CHUNK_CHARS);
  }, 120_000);

  it('returns a chunk of bounded length, highlighted within it, to a search for the prose beside a run', async () => {
    const res = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'lighthouse keeper fog bell', limit: 5 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const hit = res.body.results.find((r: any) => r.document.filename === 'prose-around-run.txt' && r.text.includes('fog bell'));
    expect(hit, JSON.stringify(res.body.results.map((r: any) => [r.document.filename, r.text.length]))).toBeDefined();
    expect(printing(hit.text)).toBeLessThanOrEqual(MAX_CHUNK_CHARS);
    for (const r of res.body.results) expect(printing(r.text)).toBeLessThanOrEqual(MAX_CHUNK_CHARS);
    const marked = hit.highlights.map(([s, e]: [number, number]) => hit.text.slice(s, e).toLowerCase());
    expect(marked.join(' ')).toMatch(/lighthouse|keeper|fog|bell/);
  }, 120_000);
});
