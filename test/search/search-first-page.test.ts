/**
 * A first page reads the keyword list to 200, later pages to 1,000 (src/search/retrieve.ts), through a real daemon
 * (built binary, real built-in model, SQLite + LanceDB) over a library where more than 200 chunks hold the word:
 * the first page says "at least", paging on from it returns every match once with no gap at the switch, and a
 * grouped first page that the short list cannot fill is cut from the full list (it neither ends early nor
 * undercounts a document's matches).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRIEVE } from '../../src/search/retrieve.js';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { chunkIndexesCurrent, storedChunks, uploadFiles, waitFor } from '../ingest/pipeline/helpers.js';
import { allPages } from './all-pages.js';
import { loggedIn } from '../web/library-client.js';

const WORD = 'quillfeather';
const SHALLOW = DEFAULT_RETRIEVE.firstPageKeywordDepth;

/** A ledger of `entries` paragraphs, each about a chunk long and holding the word once. */
function ledger(n: number, entries: number): Buffer {
  const paragraphs = Array.from({ length: entries }, (_, i) =>
    [
      `Entry ${i + 1} of ledger ${n}: the ${WORD} consignment ${n * 1000 + i} reached the harbour office on day ${(i % 28) + 1}.`,
      `The clerk weighed ${40 + (i % 17)} crates of slate, ${12 + (i % 9)} barrels of pitch and ${3 + (i % 5)} bales of wool,`,
      `noted the master's name, the berth and the tide, and sent the bill of lading on to the warehouse by the evening cart.`,
      `Nothing was found missing at the count; the seals on the hatches were whole and the manifest agreed with the hold.`,
      `Harbour dues of ${(i % 13) + 2} shillings were paid in coin, and the receipt was filed under the vessel's home port.`,
    ].join(' '),
  );
  return Buffer.from(paragraphs.join('\n\n'), 'utf8');
}

describe('a first page reads a shorter keyword list', () => {
  let d: Daemon;
  let alice: TestUser;
  /** Alice's chunks whose text holds the word, by document id. */
  const matching = new Map<string, Set<string>>();
  const all = () => new Set([...matching.values()].flatMap((s) => [...s]));

  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
      const files = [1, 2, 3].map((n) => ({ name: `ledger-${n}.txt`, bytes: ledger(n, 140) }));
      const res = await uploadFiles(d, alice.apiKey, files, { query: '?wait=true' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      for (const doc of res.body.documents) {
        expect(doc.status).toBe('ready');
        matching.set(doc.id, new Set((await storedChunks(d.dataDir, doc.id)).rows.filter((r) => r.text.includes(WORD)).map((r) => r.id)));
      }
      // Pages are compared with each other: the optimize after the last write would change BM25 scores between them.
      await waitFor(() => chunkIndexesCurrent(d.dataDir), 60_000, 'the chunk indexes to cover every row');
    },
    { timeoutMs: 60_000, setupTimeoutMs: 300_000 },
  );

  const search = (body: Record<string, unknown>) => api(d, '/api/v1/search', { token: alice.apiKey, body });

  it('knows the library: more matching chunks than a first page reads, fewer than the full list', () => {
    expect(all().size).toBeGreaterThan(SHALLOW + 20);
    expect(all().size).toBeLessThan(DEFAULT_RETRIEVE.keywordDepth);
  });

  it('counts "at least" on the first page, exactly on the next, and pages through every match once', async () => {
    const pages = await allPages(d, alice.apiKey, { query: WORD, mode: 'keyword', limit: 100 });
    expect(pages[0].total).toEqual({ value: SHALLOW, relation: 'gte' });
    for (const p of pages.slice(1)) expect(p.total).toEqual({ value: all().size, relation: 'eq' });
    const ids = pages.flatMap((p) => p.results.map((r: { chunk_id: string }) => r.chunk_id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(all());
    expect(pages).toHaveLength(Math.ceil(all().size / 100));
    // Keyword mode: the first page is the full list's first page, so the order holds across the switch.
    const scores = pages.flatMap((p) => p.results.map((r: { score: number }) => r.score));
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('hybrid: no repeat and no gap where the first page hands over to the full list', async () => {
    const pages = await allPages(d, alice.apiKey, { query: `${WORD} harbour consignment`, limit: 50 });
    expect(pages[0].total.relation).toBe('gte');
    // Every ledger chunk is a close neighbour too, so the full list's vector side is cut at 200: "at least" still.
    expect(pages.at(-1).total.value).toBeGreaterThan(pages[0].total.value);
    const ids = pages.flatMap((p) => p.results.map((r: { chunk_id: string }) => r.chunk_id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(pages.at(-1).total.value);
    for (const id of all()) expect(ids).toContain(id);
  });

  it('cuts a grouped first page from the full list when the short one cannot fill it', async () => {
    const res = await search({ query: WORD, mode: 'keyword', group: 'document', limit: 20 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.total).toEqual({ value: 3, relation: 'eq' });
    // The page holds all three ledgers (`total` counts the groups; a page could still leave one out).
    expect(res.body.documents.map((doc: { document: { id: string } }) => doc.document.id).sort()).toEqual([...matching.keys()].sort());
    for (const doc of res.body.documents) expect(doc.matches).toBe(matching.get(doc.document.id)!.size);
  });

  it('reads the shorter list again on the web page\'s way back to the first page', async () => {
    const web = await loggedIn(d, alice);
    const status = (page: string) => /<p class="[^"]*" role="status">([\s\S]*?)<\/p>/.exec(page.slice(page.indexOf('</form>')))?.[1] ?? null;
    const link = (page: string, rel: string) => new RegExp(`<a href="([^"]+)" rel="${rel}">`).exec(page)?.[1]?.replaceAll('&amp;', '&') ?? null;
    const first = await web.get(`/search?q=${WORD}&mode=keyword&view=passages`);
    expect(first.status).toBe(200);
    expect(status(first.text)).toBe(`1–20 of at least ${SHALLOW} passages for “${WORD}”`);
    const second = await web.get(link(first.text, 'next')!);
    expect(status(second.text)).toBe(`21–40 of ${all().size} passages for “${WORD}”`);
    // Previous from page 2 is a cursor that has shown nothing: the first page as it was, short list and all.
    const back = await web.get(link(second.text, 'prev')!);
    expect(status(back.text)).toBe(status(first.text));
  });
});
