/**
 * What docs/search.md promises of a request and its response, through a real daemon (built binary, real built-in
 * model, no reranker: the default): the request's rules (empty and long id lists, passages per document, the cursor's
 * size and what it is bound to, a query trimmed and counted in characters by the API and the CLI), how `score` is
 * made of `scores` (the fusion weights, also for a query in a language the model does not read), vector mode and the
 * floor, a weak answer's size, `rerank` under `none`, `indexing` within `document_ids`, a cursor across a restart;
 * and, on a second daemon, a reranker that never answers is waited for `--rerank-timeout` only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_EMBEDDER_IDS, DEFAULT_BUILTIN_PRECISION } from '../../src/models/builtin/minilm-embedder.js';
import { relevanceFloor } from '../../src/search/floor.js';
import { UNREAD_LANGUAGE_FUSION } from '../../src/search/retrieve.js';
import { WEAK_RESULTS } from '../../src/search/service.js';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { chunkIndexesCurrent, uploadFiles, waitFor } from '../ingest/pipeline/helpers.js';

const FLOOR = relevanceFloor(BUILTIN_EMBEDDER_IDS[DEFAULT_BUILTIN_PRECISION])!;
const NONSENSE = 'xyzzyplugh frobnicate';
const WORD = 'brindlewick';

const txt = (s: string) => Buffer.from(s, 'utf8');
const LIBRARY = [
  { name: 'garden.txt', bytes: txt('Tomatoes need six hours of direct sunlight every day. Water the plants deeply twice a week rather than a little every day.') },
  { name: 'sky.txt', bytes: txt('Jupiter is the largest planet in the solar system, and its four big moons are visible with ordinary binoculars.') },
  { name: 'bread.txt', bytes: txt('A sourdough starter is a culture of wild yeast kept alive with regular feedings of flour and water.') },
  {
    name: 'bibliothek.txt',
    bytes: txt('Die Stadtbibliothek öffnet montags bis freitags um neun Uhr. Bücher können drei Wochen lang ausgeliehen und zweimal verlängert werden.'),
  },
  {
    // Eight sections far apart, each naming the word, so that the word has more matching chunks than a document shows.
    name: 'almanac.txt',
    bytes: txt(
      Array.from({ length: 8 }, (_, i) =>
        [
          `Section ${i + 1}. The ${WORD} lantern of the ${['north', 'south', 'east', 'west', 'upper', 'lower', 'inner', 'outer'][i]} tower is trimmed at dusk.`,
          ...Array.from({ length: 9 }, (_, j) => `Line ${j + 1} of section ${i + 1} lists the routine chores of the keepers, the oil, the wicks and the logbook entries.`),
        ].join(' '),
      ).join('\n\n'),
    ),
  },
];

interface Passage {
  chunk_id: string;
  score: number;
  scores: { vector?: { rank: number; similarity: number }; keyword?: { rank: number; bm25: number }; rerank?: number };
  highlights: [number, number][];
  text: string;
  snippet: string;
  document: { id: string; filename: string };
}

describe('what a search request and its response promise', () => {
  let d: Daemon;
  let alice: TestUser;
  const ids: Record<string, string> = {};

  // Not daemonForSuite: the last test restarts the daemon on its data.
  beforeAll(async () => {
    d = await startDaemon({ timeoutMs: 60_000 });
    alice = await addUser(d);
    const res = await uploadFiles(d, alice.apiKey, LIBRARY, { query: '?wait=true' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const doc of res.body.documents) {
      expect(doc.status).toBe('ready');
      ids[doc.filename] = doc.id;
    }
    // Scores are compared between searches: the optimize after the last write would move BM25's statistics.
    await waitFor(() => chunkIndexesCurrent(d.dataDir), 60_000, 'the chunk indexes to cover every row');
  }, 240_000);
  afterAll(async () => {
    if (!d) return;
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  const search = (body: Record<string, unknown>) => api(d, '/api/v1/search', { token: alice.apiKey, body });
  const results = async (body: Record<string, unknown>): Promise<Passage[]> => {
    const res = await search({ limit: 100, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.results;
  };

  it('matches nothing for an empty document_ids, as for an empty project_ids', async () => {
    for (const scope of [{ document_ids: [] }, { project_ids: [] }]) {
      for (const mode of ['hybrid', 'vector', 'keyword']) {
        const res = await search({ query: 'tomatoes sunlight', mode, ...scope });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body, `${mode} ${JSON.stringify(scope)}`).toMatchObject({ results: [], total: { value: 0, relation: 'eq' }, next_cursor: null, weak: false });
      }
    }
  });

  it('takes at most 1,000 project or document ids, and says so naming the field', async () => {
    for (const field of ['project_ids', 'document_ids']) {
      const res = await search({ query: 'tomatoes', [field]: Array.from({ length: 1001 }, (_, i) => `x${i}`) });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe(`body.${field}: must have at most 1000 items`);
    }
  });

  it('shows 3 passages of a document by default, up to passages_per_document (1..5), and refuses 0 and 6 naming the field', async () => {
    const grouped = async (extra: Record<string, unknown>) => {
      const res = await search({ query: WORD, mode: 'keyword', group: 'document', ...extra });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.documents as { document: { id: string }; matches: number; passages: Passage[] }[];
    };
    const [almanac] = await grouped({});
    expect(almanac!.document.id).toBe(ids['almanac.txt']);
    expect(almanac!.matches).toBeGreaterThan(5);
    expect(almanac!.passages).toHaveLength(3);
    expect((await grouped({ passages_per_document: 5 }))[0]!.passages).toHaveLength(5);
    expect((await grouped({ passages_per_document: 1 }))[0]!.passages).toHaveLength(1);
    for (const n of [0, 6]) {
      const res = await search({ query: WORD, group: 'document', passages_per_document: n });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.message).toMatch(/^body\.passages_per_document: /);
    }
  });

  it('trims the query and counts its characters (an emoji is one), in the API and the CLI alike', async () => {
    const res = await search({ query: '  tomatoes sunlight \n' });
    expect(res.status).toBe(200);
    expect(res.body.query).toBe('tomatoes sunlight');
    const tomatoes = '🍅'.repeat(1500); // 1,500 characters, 3,000 UTF-16 units
    for (const query of [` ${'tomatoes '.repeat(250).slice(0, 2000)} `, tomatoes]) {
      const ok = await search({ query });
      expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).toBe(200);
    }
    const over = await search({ query: 'é'.repeat(2001) });
    expect(over.body.error.message).toBe('body.query: must be at most 2000 characters');

    const env = cliEnv(d, { DOCSEARCH_TOKEN: alice.apiKey });
    const cli = await runCli(['search', tomatoes, '--json'], { env });
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout).query).toBe(tomatoes);
    const refused = await runCli(['search', 'é'.repeat(2001)], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('the query is 2001 characters long; at most 2000 are allowed');
  });

  it('binds a cursor to the query, mode, rerank, grouping, passages per document, filters, projects and documents, not to the limit; refuses one over 10,000 characters', async () => {
    const body = { query: WORD, mode: 'keyword', limit: 2 };
    const first = await search(body);
    const cursor = first.body.next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    expect((await search({ ...body, limit: 5, cursor })).status).toBe(200);
    for (const changed of [
      { query: `${WORD} lantern` },
      { mode: 'hybrid' },
      { rerank: false },
      { group: 'document' },
      { filters: { type: ['txt'] } },
      { document_ids: [ids['almanac.txt']] },
      { project_ids: [first.body.results[0].project.id] },
    ]) {
      const res = await search({ ...body, ...changed, cursor });
      expect(res.status, JSON.stringify(changed)).toBe(400);
      expect(res.body.error.message, JSON.stringify(changed)).toMatch(/^body\.cursor: belongs to another search; /);
    }
    const grouped = { query: 'water', mode: 'keyword', group: 'document', limit: 1 };
    const byDocument = (await search(grouped)).body.next_cursor as string;
    expect(byDocument).toEqual(expect.any(String));
    expect((await search({ ...grouped, cursor: byDocument })).status).toBe(200);
    expect((await search({ ...grouped, passages_per_document: 2, cursor: byDocument })).body.error.message).toMatch(/^body\.cursor: belongs to another search; /);
    const huge = await search({ ...body, cursor: 'A'.repeat(10_001) });
    expect(huge.status).toBe(400);
    expect(huge.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^body\.cursor: /) });
  });

  it('makes score of scores: ½ · similarity / best similarity + ½ · BM25 / best BM25, each 0..1', async () => {
    const list = await results({ query: 'how much water do tomatoes and a sourdough starter need' });
    expect(new Set(list.filter((r) => r.scores.keyword).map((r) => r.document.id))).toEqual(new Set([ids['garden.txt'], ids['bread.txt']]));
    // A library this small is all in the vector list, so every result has a similarity and the best is the first by it.
    const bestSimilarity = Math.max(...list.map((r) => r.scores.vector!.similarity));
    const bestBm25 = Math.max(...list.map((r) => r.scores.keyword?.bm25 ?? 0));
    for (const r of list) {
      const expected = (0.5 * r.scores.vector!.similarity) / bestSimilarity + (0.5 * (r.scores.keyword?.bm25 ?? 0)) / bestBm25;
      expect(r.score, r.chunk_id).toBeCloseTo(expected, 6);
      expect(r.score).toBeGreaterThanOrEqual(0);
      expect(r.score).toBeLessThanOrEqual(1);
      // A result found by one list alone scores at most ½.
      if (!r.scores.keyword) expect(r.score).toBeLessThanOrEqual(0.5);
      expect(r.scores.rerank).toBeUndefined();
      // Its answer, a slice of its text.
      expect(r.snippet.length).toBeGreaterThan(0);
      expect(r.text).toContain(r.snippet);
      // Highlights: sorted, non-overlapping [start, end) offsets into the text.
      let end = 0;
      for (const [s, e] of r.highlights) {
        expect(s).toBeGreaterThanOrEqual(end);
        expect(e).toBeGreaterThan(s);
        end = e;
      }
      expect(end).toBeLessThanOrEqual(r.text.length);
    }
    expect([...list].sort((a, b) => b.score - a.score).map((r) => r.chunk_id)).toEqual(list.map((r) => r.chunk_id));
    const [top] = await results({ query: 'sunlight tomatoes water', mode: 'keyword' });
    expect(top!.score).toBeCloseTo(0.5, 6);
  });

  it('weighs the keyword list ¾ for a query in a language the model does not read', async () => {
    const query = 'Wann öffnet die Stadtbibliothek am Montag';
    const list = await results({ query });
    expect(list[0]!.document.id).toBe(ids['bibliothek.txt']);
    const bestSimilarity = Math.max(...list.map((r) => r.scores.vector!.similarity));
    const bestBm25 = Math.max(...list.map((r) => r.scores.keyword?.bm25 ?? 0));
    for (const r of list) {
      const expected =
        (UNREAD_LANGUAGE_FUSION.vectorWeight * r.scores.vector!.similarity) / bestSimilarity +
        (UNREAD_LANGUAGE_FUSION.keywordWeight * (r.scores.keyword?.bm25 ?? 0)) / bestBm25;
      expect(r.score, r.chunk_id).toBeCloseTo(expected, 6);
    }
    // So the keyword list alone scores up to ¾ here, not ½.
    const [top] = await results({ query, mode: 'keyword' });
    expect(top!.score).toBeCloseTo(UNREAD_LANGUAGE_FUSION.keywordWeight, 6);
  });

  it('vector mode keeps only neighbours at the floor, or is weak', async () => {
    const list = await results({ query: 'which planet is the biggest', mode: 'vector' });
    expect(list.length).toBeGreaterThan(0);
    expect(list.length).toBeLessThan(Object.keys(ids).length + 16);
    for (const r of list) {
      expect(r.scores.keyword).toBeUndefined();
      expect(r.scores.vector!.similarity).toBeGreaterThanOrEqual(FLOOR);
    }
    const all = await search({ query: 'which planet is the biggest', mode: 'vector', limit: 100 });
    expect(all.body.weak).toBe(false);
    expect(all.body.total).toEqual({ value: list.length, relation: 'eq' });
    const nonsense = await search({ query: NONSENSE, mode: 'vector', limit: 100 });
    expect(nonsense.body.weak).toBe(true);
    for (const r of nonsense.body.results as Passage[]) expect(r.scores.vector!.similarity).toBeLessThan(FLOOR);
  });

  it(`answers a weak query with the nearest ${WEAK_RESULTS} at most, or fewer as limit says, on one page`, async () => {
    for (const [limit, shown] of [[undefined, WEAK_RESULTS], [100, WEAK_RESULTS], [2, 2]] as const) {
      const res = await search({ query: NONSENSE, ...(limit ? { limit } : {}) });
      expect(res.body, String(limit)).toMatchObject({ weak: true, total: { value: shown, relation: 'eq' }, next_cursor: null });
      expect(res.body.results, String(limit)).toHaveLength(shown);
    }
  });

  it('changes nothing with rerank under --reranker none, and health names the reranker none, up', async () => {
    for (const query of ['tomatoes sunlight', 'which planet is the biggest']) {
      const reranked = await search({ query, rerank: true, limit: 100 });
      const plain = await search({ query, rerank: false, limit: 100 });
      expect(reranked.body.warnings).toBeUndefined();
      const { took_ms: _a, next_cursor: _c, ...a } = reranked.body;
      const { took_ms: _b, next_cursor: _d, ...b } = plain.body;
      expect(a).toEqual(b);
    }
    const health = await api(d, '/api/v1/health');
    expect(health.body.components.reranker).toMatchObject({ id: 'none', status: 'up' });
  });

  it('answers the same search the same way twice (every stage ends in a fixed order)', async () => {
    for (const body of [{ query: WORD }, { query: 'the keepers trim the lantern', mode: 'hybrid' }, { query: WORD, group: 'document' }]) {
      const a = await search({ ...body, limit: 100 });
      const b = await search({ ...body, limit: 100 });
      const order = (r: { body: { results?: Passage[]; documents?: { document: { id: string } }[] } }) =>
        r.body.results ? r.body.results.map((x) => [x.chunk_id, x.score]) : r.body.documents!.map((x) => x.document.id);
      expect(order(a)).toEqual(order(b));
    }
  });

  it('counts the documents still being indexed within the documents searched', async () => {
    const carol = await addUser(d);
    const lines = Array.from({ length: 800 }, (_, i) => `Line ${i + 1} of the long inventory lists one more jar of preserved samples.`).join('\n');
    const slow = await uploadFiles(d, carol.apiKey, [{ name: 'inventory.txt', bytes: txt(lines) }]);
    const done = await uploadFiles(d, carol.apiKey, [{ name: 'note.txt', bytes: txt('A jar of preserved plums.') }], { query: '?wait=true' });
    const [slowId, doneId] = [slow.body.documents[0].id, done.body.documents[0].id];
    const indexing = async (scope: Record<string, unknown>) => (await api(d, '/api/v1/search', { token: carol.apiKey, body: { query: 'jar', ...scope } })).body.indexing;
    expect((await api(d, `/api/v1/documents/${slowId}`, { token: carol.apiKey })).body.status).not.toBe('ready');
    expect(await indexing({})).toBe(1);
    expect(await indexing({ document_ids: [slowId] })).toBe(1);
    expect(await indexing({ document_ids: [doneId] })).toBe(0);
    await waitFor(async () => (await api(d, `/api/v1/documents/${slowId}`, { token: carol.apiKey })).body.status === 'ready', 120_000, 'the inventory to be indexed');
    expect(await indexing({ document_ids: [slowId] })).toBe(0);
  });

  it('opens a cursor after a restart (its key is kept in the library, not in memory), and pages on without repeats', async () => {
    const body = { query: WORD, mode: 'keyword', limit: 3 };
    const first = await search(body);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expect(await d.stop()).toBe(0);
    d = await startDaemon({ dataDir: d.dataDir, ...(d.databaseUrl ? { databaseUrl: d.databaseUrl } : {}), timeoutMs: 60_000 });
    const seen: string[] = first.body.results.map((r: Passage) => r.chunk_id);
    let cursor: string | null = first.body.next_cursor;
    while (cursor) {
      const page = await search({ ...body, cursor });
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      seen.push(...page.body.results.map((r: Passage) => r.chunk_id));
      cursor = page.body.next_cursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(first.body.total.value);
  });
});

describe('a reranker that does not answer', () => {
  // Takes the request and never answers it.
  const silent: Server = createServer(() => undefined);
  let d: Daemon;
  let token: string;
  beforeAll(async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    d = await startDaemon({ args: ['--reranker', `http:http://127.0.0.1:${port}/rerank`, '--rerank-timeout', '300'], timeoutMs: 60_000 });
    token = (await addUser(d)).apiKey;
    await uploadFiles(d, token, [LIBRARY[0]!], { query: '?wait=true' });
  }, 120_000);
  afterAll(async () => {
    silent.closeAllConnections();
    silent.close();
    if (!d) return;
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  it('is waited for --rerank-timeout, then the search answers in fused order, saying so', async () => {
    const started = performance.now();
    const res = await api(d, '/api/v1/search', { token, body: { query: 'tomatoes sunlight' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(performance.now() - started).toBeLessThan(2000); // the default deadline
    expect(res.body.results.length).toBeGreaterThan(0);
    expect(res.body.warnings).toEqual([expect.stringMatching(/^reranker "http:.+" failed \(timed out after 300 ms\); results are in first-stage \(fused\) order$/)]);
  });
});
