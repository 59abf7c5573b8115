/**
 * POST /api/v1/search over a library with a known number of matches, through a real daemon (built binary, real
 * built-in model, SQLite + LanceDB): paging to the end of the flat and the grouped list returns every result once,
 * counts say exactly what exists, cursors are bound to their user and search and hold still while the library
 * changes, nonsense is answered as weak, documents still being indexed are counted, and synced paths are shown.
 */
import { describe, expect, it } from 'vitest';
import { BUILTIN_EMBEDDER_IDS, DEFAULT_BUILTIN_PRECISION } from '../../src/models/builtin/minilm-embedder.js';
import { relevanceFloor } from '../../src/search/floor.js';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { chunkIndexesCurrent, storedChunks, uploadFiles, waitFor } from '../ingest/pipeline/helpers.js';
import { allPages } from './all-pages.js';

const txt = (s: string) => Buffer.from(s, 'utf8');
const WORD = 'zorblax';
const FLOOR = relevanceFloor(BUILTIN_EMBEDDER_IDS[DEFAULT_BUILTIN_PRECISION])!;

/** 30 short notes that contain the word, 10 that do not, and a long manual with the word in three places. */
function library(): { name: string; bytes: Buffer; path?: string }[] {
  const notes = Array.from({ length: 30 }, (_, i) => ({
    name: `note-${String(i + 1).padStart(2, '0')}.txt`,
    bytes: txt(`Specimen note ${i + 1}. The ${WORD} sample number ${i + 1} was catalogued on shelf ${i + 3} of the cold room, beside the mineral drawers.`),
    path: `notes/note-${String(i + 1).padStart(2, '0')}.txt`,
  }));
  const recipes = Array.from({ length: 10 }, (_, i) => ({
    name: `recipe-${i + 1}.txt`,
    bytes: txt(`Recipe ${i + 1}: simmer the lentils with cumin and garlic for ${20 + i} minutes, then stir in the spinach.`),
  }));
  const filler = (topic: string) =>
    Array.from({ length: 14 }, (_, i) => `Paragraph ${i + 1} on ${topic} describes the routine of the workshop in plain and unremarkable words.`).join(' ');
  const manual = [
    `The ${WORD} cabinet must stay locked outside opening hours.`,
    filler('opening hours'),
    `Report a cracked ${WORD} jar to the curator the same day.`,
    filler('cleaning'),
    `Label every ${WORD} drawer with the date it was last checked.`,
  ].join('\n\n');
  return [...notes, ...recipes, { name: 'manual.txt', bytes: txt(manual) }];
}

describe('search pages, counts and the relevance floor', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  /** Alice's chunks whose text holds the word: the keyword list's exact answer. */
  let matching: Set<string>;
  const docIds: Record<string, string> = {};

  daemonForSuite(
    async (started) => {
      d = started;
      [alice, bob] = [await addUser(d), await addUser(d)];
      const files = library();
      for (let i = 0; i < files.length; i += 20) {
        const batch = files.slice(i, i + 20);
        const paths = batch.map((f) => f.path ?? null);
        const res = await uploadFiles(d, alice.apiKey, batch, { query: '?wait=true', fields: { paths: JSON.stringify(paths) } });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        for (const doc of res.body.documents) {
          expect(doc.status).toBe('ready');
          docIds[doc.filename] = doc.id;
        }
      }
      matching = new Set();
      for (const id of Object.values(docIds)) {
        for (const row of (await storedChunks(d.dataDir, id)).rows) if (row.text.includes(WORD)) matching.add(row.id);
      }
      // Pages are compared with each other: the optimize after the last write would change BM25 scores between them.
      await waitFor(() => chunkIndexesCurrent(d.dataDir), 60_000, 'the chunk indexes to cover every row');
    },
    { timeoutMs: 60_000, setupTimeoutMs: 300_000 },
  );

  const search = (token: string, body: Record<string, unknown>) => api(d, '/api/v1/search', { token, body });

  it('knows the library: 33 chunks hold the word (30 notes, 3 in the manual)', () => {
    expect(matching.size).toBeGreaterThanOrEqual(33);
    expect([...matching].filter((id) => id.startsWith(docIds['manual.txt']!)).length).toBeGreaterThanOrEqual(3);
  });

  it('pages through every keyword match once, with the exact count on every page', async () => {
    const pages = await allPages(d, alice.apiKey, { query: WORD, mode: 'keyword', limit: 7 });
    const ids = pages.flatMap((p) => p.results.map((r: { chunk_id: string }) => r.chunk_id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(matching);
    expect(pages).toHaveLength(Math.ceil(matching.size / 7));
    for (const p of pages) {
      expect(p.total).toEqual({ value: matching.size, relation: 'eq' });
      expect(p.weak).toBe(false);
    }
    expect(pages.at(-1).next_cursor).toBeNull();
    // One page that holds everything has no next page.
    const one = await search(alice.apiKey, { query: WORD, mode: 'keyword', limit: 100 });
    expect(one.body.results).toHaveLength(matching.size);
    expect(one.body.next_cursor).toBeNull();
  });

  it('groups by document: one entry each, its best passages in rank order, counted in documents', async () => {
    const pages = await allPages(d, alice.apiKey, { query: WORD, mode: 'keyword', group: 'document', limit: 4, passages_per_document: 2 });
    const docs = pages.flatMap((p) => p.documents);
    const ids = docs.map((x: { document: { id: string } }) => x.document.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(31);
    for (const p of pages) expect(p.total).toEqual({ value: 31, relation: 'eq' });
    for (const p of pages) expect(p.results).toBeUndefined();
    const manual = docs.find((x: { document: { filename: string } }) => x.document.filename === 'manual.txt');
    expect(manual.matches).toBe([...matching].filter((id) => id.startsWith(docIds['manual.txt']!)).length);
    expect(manual.passages).toHaveLength(2);
    expect(manual.passages[0].score).toBeGreaterThanOrEqual(manual.passages[1].score);
    expect(manual.score).toBe(manual.passages[0].score);
    for (const p of manual.passages) expect(p.text).toContain(WORD);
    // Documents are in order of their best passage.
    const scores = docs.map((x: { score: number }) => x.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // The passages carry no document of their own (it is the entry's).
    expect(manual.passages[0].document).toBeUndefined();
  });

  it('hybrid: the keyword matches plus the close neighbours, paged to the end without repeats, as many as counted', async () => {
    for (const group of ['none', 'document'] as const) {
      const pages = await allPages(d, alice.apiKey, { query: `${WORD} specimen catalogue`, group, limit: 9 });
      const items = pages.flatMap((p) => (group === 'none' ? p.results : p.documents));
      const ids = items.map((x: { chunk_id?: string; document: { id: string } }) => (group === 'none' ? x.chunk_id : x.document.id));
      expect(new Set(ids).size).toBe(ids.length);
      expect(pages[0].total.relation).toBe('eq');
      expect(ids.length).toBe(pages[0].total.value);
      if (group === 'none') {
        for (const id of matching) expect(ids).toContain(id);
        for (const r of items) expect(r.scores.keyword !== undefined || r.scores.vector.similarity >= FLOOR).toBe(true);
      }
    }
  });

  it('answers nonsense as weak: the nearest few on one page, said so; keyword mode answers nothing', async () => {
    const res = await search(alice.apiKey, { query: 'xyzzyplugh frobnicate', limit: 5 });
    expect(res.status).toBe(200);
    expect(res.body.weak).toBe(true);
    expect(res.body.results).toHaveLength(5);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.total).toEqual({ value: 5, relation: 'eq' });
    const grouped = await search(alice.apiKey, { query: 'xyzzyplugh frobnicate', group: 'document', limit: 3 });
    expect(grouped.body).toMatchObject({ weak: true, total: { value: 3, relation: 'eq' }, next_cursor: null });
    expect(grouped.body.documents).toHaveLength(3);
    // Nothing matched, so no document claims matching passages beyond those it shows (the manual has several near ones).
    for (const doc of grouped.body.documents) expect(doc.matches).toBe(doc.passages.length);
    const manual = await search(alice.apiKey, { query: 'xyzzyplugh frobnicate', group: 'document', passages_per_document: 1, document_ids: [docIds['manual.txt']] });
    expect(manual.body.weak).toBe(true);
    expect(manual.body.documents).toHaveLength(1);
    expect(manual.body.documents[0].matches).toBe(1);
    const keyword = await search(alice.apiKey, { query: 'xyzzyplugh frobnicate', mode: 'keyword' });
    expect(keyword.body).toMatchObject({ results: [], weak: false, total: { value: 0, relation: 'eq' }, next_cursor: null });
    // A real question is not weak.
    expect((await search(alice.apiKey, { query: 'how long do the lentils simmer' })).body.weak).toBe(false);
  });

  it("refuses a cursor of another user, another search or altered bytes, and shows nothing of the owner's", async () => {
    const first = await search(alice.apiKey, { query: WORD, mode: 'keyword', limit: 5 });
    const cursor = first.body.next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    expect(cursor).not.toContain(alice.apiKey.slice(4, 12));
    const asBob = await search(bob.apiKey, { query: WORD, mode: 'keyword', limit: 5, cursor });
    expect(asBob.status).toBe(400);
    expect(asBob.body.error).toMatchObject({ code: 'invalid_request', message: 'body.cursor: not a cursor this server issued to you, or no longer valid; leave it out to start again from the first page' });
    const other = await search(alice.apiKey, { query: 'lentils', mode: 'keyword', limit: 5, cursor });
    expect(other.status).toBe(400);
    expect(other.body.error.message).toBe(
      'body.cursor: belongs to another search; send it with the same query, filters, mode and grouping as the page it came from',
    );
    const grouped = await search(alice.apiKey, { query: WORD, mode: 'keyword', limit: 5, cursor, group: 'document' });
    expect(grouped.status).toBe(400);
    const bytes = Buffer.from(cursor, 'base64url');
    bytes[20]! ^= 0xff;
    const tampered = await search(alice.apiKey, { query: WORD, mode: 'keyword', limit: 5, cursor: bytes.toString('base64url') });
    expect(tampered.status).toBe(400);
    // Bob's own search for the same words finds none of Alice's documents.
    expect((await search(bob.apiKey, { query: WORD, mode: 'keyword' })).body.results).toEqual([]);
    // A changed page size is fine: the cursor marks a position, not a page.
    expect((await search(alice.apiKey, { query: WORD, mode: 'keyword', limit: 20, cursor })).status).toBe(200);
  });

  it('holds still while the library changes: later pages neither repeat nor skip, and a newer document waits for a new search', async () => {
    const body = { query: WORD, mode: 'keyword', limit: 10 };
    const first = await search(alice.apiKey, body);
    const seen: string[] = first.body.results.map((r: { chunk_id: string }) => r.chunk_id);
    // A new matching document arrives, and a document shown on the first page is deleted.
    const added = await uploadFiles(d, alice.apiKey, [{ name: 'late.txt', bytes: txt(`A late ${WORD} specimen arrived after the search began.`) }], { query: '?wait=true' });
    expect(added.body.documents[0].status).toBe('ready');
    // A note (one matching chunk, so all of it was on this page), not the one a later test looks for.
    const gone = first.body.results.find((r: { document: { filename: string } }) => /^note-/.test(r.document.filename) && r.document.filename !== 'note-07.txt').document.id as string;
    expect((await api(d, `/api/v1/documents/${gone}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    let cursor = first.body.next_cursor as string | null;
    while (cursor) {
      const page = await search(alice.apiKey, { ...body, cursor });
      expect(page.status).toBe(200);
      seen.push(...page.body.results.map((r: { chunk_id: string }) => r.chunk_id));
      cursor = page.body.next_cursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(new Set(seen)).toEqual(matching);
    // A new search sees the change.
    const fresh = await search(alice.apiKey, { ...body, limit: 100 });
    const freshDocs = new Set(fresh.body.results.map((r: { document: { id: string } }) => r.document.id));
    expect(freshDocs.has(added.body.documents[0].id)).toBe(true);
    expect(freshDocs.has(gone)).toBe(false);
    for (const id of [...matching]) if (id.startsWith(`${gone}:`)) matching.delete(id);
  });

  it('shows the sync path of a document that has one', async () => {
    const res = await search(alice.apiKey, { query: 'specimen note 7 shelf 9', limit: 50 });
    const note = res.body.results.find((r: { document: { filename: string } }) => r.document.filename === 'note-07.txt');
    expect(note.document).toEqual({ id: docIds['note-07.txt'], filename: 'note-07.txt', content_type: 'text/plain', path: 'notes/note-07.txt' });
    // A document uploaded without a path has none in its answer.
    const recipes = await search(alice.apiKey, { query: 'simmer the lentils with cumin and garlic', limit: 5 });
    const recipe = recipes.body.results.find((r: { document: { filename: string } }) => r.document.filename.startsWith('recipe-'));
    expect(Object.keys(recipe.document).sort()).toEqual(['content_type', 'filename', 'id']);
    const grouped = await search(alice.apiKey, { query: 'specimen note 7 shelf 9', group: 'document', limit: 50 });
    expect(grouped.body.documents.find((x: { document: { filename: string } }) => x.document.filename === 'note-07.txt').document.path).toBe('notes/note-07.txt');
  });

  it('counts the documents of the searched scope still being indexed', async () => {
    const carol = await addUser(d);
    expect((await search(carol.apiKey, { query: 'anything' })).body.indexing).toBe(0);
    const long = Array.from({ length: 400 }, (_, i) => `Line ${i + 1} of the long inventory lists one more jar of preserved samples.`).join('\n');
    const up = await uploadFiles(d, carol.apiKey, [{ name: 'inventory.txt', bytes: txt(long) }]);
    expect(up.status).toBe(202);
    const during = await search(carol.apiKey, { query: 'preserved samples' });
    expect(during.body.indexing).toBe(1);
    // Another project's scope does not count it.
    const other = await api(d, '/api/v1/projects', { token: carol.apiKey, body: { name: 'elsewhere' } });
    expect((await search(carol.apiKey, { query: 'preserved samples', project_ids: [other.body.id] })).body.indexing).toBe(0);
    const id = up.body.documents[0].id as string;
    for (let i = 0; i < 600; i++) {
      const doc = await api(d, `/api/v1/documents/${id}`, { token: carol.apiKey });
      if (doc.body.status === 'ready') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect((await search(carol.apiKey, { query: 'preserved samples' })).body.indexing).toBe(0);
  });
});
