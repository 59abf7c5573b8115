/**
 * POST /api/v1/search through a real daemon (built binary, real built-in model, real SQLite + LanceDB),
 * with the builtin reranker so window vectors are written at ingest and used at query time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

const txt = (s: string) => Buffer.from(s, 'utf8');

const GARDEN = `Growing tomatoes at home

Tomatoes need at least six hours of direct sunlight every day. Water the plants deeply twice a week rather than a little every day.
Pinch off the suckers that grow between the main stem and the branches to get larger fruit.`;
const ASTRONOMY = `Observing the night sky

Jupiter is the largest planet in the solar system and its four big moons are visible with ordinary binoculars.
Saturn's rings were first seen by Galileo in 1610, although he could not tell what they were.`;
const BAKING = `Sourdough baking notes

A sourdough starter is a culture of wild yeast and lactic acid bacteria kept alive with regular feedings of flour and water.
Bake the loaf in a preheated Dutch oven so the steam gives it a crisp, blistered crust.`;

async function search(d: Daemon, token: string, body: unknown) {
  return api(d, '/api/v1/search', { token, body });
}

async function upload(d: Daemon, user: TestUser, name: string, bytes: Buffer, projectId?: string): Promise<string> {
  const res = await uploadFiles(d, user.apiKey, [{ name, bytes }], { query: '?wait=true', ...(projectId ? { projectId } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(200); // ?wait=true answers once the document settled
  const doc = res.body.documents[0];
  expect(doc.status, JSON.stringify(doc)).toBe('ready');
  return doc.id as string;
}

describe('search API (builtin reranker)', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  const docs: Record<string, string> = {};
  let aliceProject2: string;
  let bobProject: string;

  daemonForSuite(async (started) => {
    d = started;
    [alice, bob, carol] = [await addUser(d), await addUser(d), await addUser(d)];
    // Empty-library search happens before anything is uploaded (carol never uploads).
    const p2 = await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'astronomy' } });
    aliceProject2 = p2.body.id;
    docs.aliceGarden = await upload(d, alice, 'garden.txt', txt(GARDEN));
    docs.aliceSky = await upload(d, alice, 'sky.txt', txt(ASTRONOMY), aliceProject2);
    // Bob holds the same garden text (overlapping content) plus his own baking notes.
    docs.bobGarden = await upload(d, bob, 'garden.txt', txt(GARDEN));
    docs.bobBaking = await upload(d, bob, 'baking.txt', txt(BAKING));
    bobProject = (await api(d, '/api/v1/projects', { token: bob.apiKey })).body.projects[0].id;
    // Each page holds more than one chunk of text, so the answer's chunk starts and ends on page 2.
    const filler = (topic: string, n: number) =>
      Array.from({ length: n }, (_, i) => `Line ${i + 1} about ${topic}: the committee reviewed the routine items and agreed them.`);
    const pdf = makePdf(
      [
        [{ lines: ['Annual report of the lighthouse keepers association.', ...filler('membership', 40)] }],
        [{ lines: [...filler('maintenance', 25), 'The Fresnel lens of the northern lighthouse was replaced in March', 'after a storm cracked two of its glass prisms.', ...filler('repairs', 25)] }],
        [{ lines: ['Treasurer statement: the accounts are balanced and audited.', ...filler('finances', 40)] }],
      ],
      { title: 'Lighthouse report' },
    );
    docs.alicePdf = await upload(d, alice, 'lighthouse.pdf', pdf);
  }, { args: ['--reranker', 'builtin'], timeoutMs: 60_000, setupTimeoutMs: 240_000, cleanExit: false });

  it('returns ranked, hydrated results with highlights inside the text', async () => {
    const res = await search(d, alice.apiKey, { query: 'how much sunlight do tomato plants need' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.query).toBe('how much sunlight do tomato plants need');
    expect(typeof res.body.took_ms).toBe('number');
    expect(res.body.warnings).toBeUndefined();
    const top = res.body.results[0];
    expect(top.document).toEqual({ id: docs.aliceGarden, filename: 'garden.txt', content_type: 'text/plain' });
    expect(top.project.name).toBe('default');
    // The reranker ordered it, and its score says so (docs/search.md#response).
    expect(top.score).toBe(top.scores.rerank);
    expect(top.text).toContain('six hours of direct sunlight');
    expect(top.highlights.length).toBeGreaterThan(0);
    for (const [s, e] of top.highlights) {
      expect(s).toBeGreaterThanOrEqual(0);
      expect(e).toBeLessThanOrEqual(top.text.length);
      expect(e).toBeGreaterThan(s);
    }
    const marked = top.highlights.map(([s, e]: [number, number]) => top.text.slice(s, e)).join(' | ');
    expect(marked).toContain('sunlight');
    const scores = res.body.results.map((r: { score: number }) => r.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it("never returns another user's chunks, even for identical content", async () => {
    for (const [user, own] of [
      [alice, [docs.aliceGarden, docs.aliceSky, docs.alicePdf]],
      [bob, [docs.bobGarden, docs.bobBaking]],
    ] as const) {
      for (const query of ['tomato suckers', 'sourdough starter', 'Jupiter moons', 'lighthouse lens']) {
        const res = await search(d, user.apiKey, { query, limit: 100 });
        expect(res.status).toBe(200);
        for (const r of res.body.results) expect(own).toContain(r.document.id);
      }
    }
    const bobs = await search(d, bob.apiKey, { query: 'tomato suckers' });
    expect(bobs.body.results[0].document.id).toBe(docs.bobGarden);
  });

  it('holds project and document filters, and an id that is not the caller\'s is a 404 naming it', async () => {
    const inP2 = await search(d, alice.apiKey, { query: 'tomatoes sunlight', project_ids: [aliceProject2], limit: 100 });
    expect(inP2.status).toBe(200);
    expect(inP2.body.results.length).toBeGreaterThan(0);
    for (const r of inP2.body.results) expect(r.project.id).toBe(aliceProject2);

    const byDoc = await search(d, alice.apiKey, { query: 'planets', document_ids: [docs.alicePdf], limit: 100 });
    expect(byDoc.status).toBe(200);
    expect(byDoc.body.results.length).toBeGreaterThan(0);
    for (const r of byDoc.body.results) expect(r.document.id).toBe(docs.alicePdf);

    // Not "no results": a filter that cannot match is a mistake to report (#49).
    const foreignProject = await search(d, alice.apiKey, { query: 'sourdough', project_ids: [aliceProject2, bobProject] });
    expect(foreignProject.status).toBe(404);
    expect(foreignProject.body.error.message).toBe(`project "${bobProject}" not found`);
    const unknownProject = await search(d, alice.apiKey, { query: 'sourdough', project_ids: ['prj_nope'] });
    expect(unknownProject.body.error.message).toBe('project "prj_nope" not found');
    const foreignDoc = await search(d, alice.apiKey, { query: 'sourdough', document_ids: [docs.alicePdf, docs.bobBaking] });
    expect(foreignDoc.status).toBe(404);
    expect(foreignDoc.body.error.message).toBe(`document "${docs.bobBaking}" not found`);
    const emptyFilter = await search(d, alice.apiKey, { query: 'tomatoes', project_ids: [] });
    expect(emptyFilter.body.results).toEqual([]);
  });

  it('returns the page numbers of the PDF page holding the answer', async () => {
    const res = await search(d, alice.apiKey, { query: 'why was the Fresnel lens replaced', document_ids: [docs.alicePdf] });
    expect(res.status).toBe(200);
    const top = res.body.results[0];
    expect(top.text).toContain('Fresnel lens');
    expect(top.page_start).toBe(2);
    expect(top.page_end).toBe(2);
    expect(top.document.content_type).toBe('application/pdf');
  });

  it.each([
    [0, 'body.limit: must be at least 1'],
    [101, 'body.limit: must be at most 100'],
    ['ten', 'body.limit: must be a number'],
  ])('rejects limit %j with 400 naming the field', async (limit, message) => {
    const res = await search(d, alice.apiKey, { query: 'tomatoes', limit });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toBe(message);
  });

  it('rejects empty, too long and unknown fields with the field named', async () => {
    const empty = await search(d, alice.apiKey, { query: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toBe('body.query: must not be empty');
    const long = await search(d, alice.apiKey, { query: 'x'.repeat(2001) });
    expect(long.body.error.message).toBe('body.query: must be at most 2000 characters');
    const mode = await search(d, alice.apiKey, { query: 'x', mode: 'fuzzy' });
    expect(mode.status).toBe(400);
    expect(mode.body.error.message).toMatch(/^body\.mode: /);
    const extra = await search(d, alice.apiKey, { query: 'x', page: 2 });
    expect(extra.body.error.message).toBe('unknown field "page" in body');
  });

  it.each([
    ['stop words only', 'the of and to is'],
    ['a 2,000-character query', 'tomato sunlight water '.repeat(100).slice(0, 2000)],
    ['emoji', '🍅🌞💧'],
    ['CJK', '番茄需要多少阳光'],
    ['query-language syntax', 'title:"tomato" OR (sun* AND ~water^2) -- \\ NOT'],
  ])('answers %s with 200 and a list', async (_name, query) => {
    for (const mode of ['hybrid', 'vector', 'keyword']) {
      const res = await search(d, alice.apiKey, { query, mode });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(Array.isArray(res.body.results)).toBe(true);
    }
  });

  it('skips keyword search for a query of no content words (stop words, emoji): hybrid answers from vectors alone', async () => {
    for (const query of ['the of and to is', '🍅🌞💧']) {
      const keyword = await search(d, alice.apiKey, { query, mode: 'keyword' });
      expect(keyword.status).toBe(200);
      expect(keyword.body.results, query).toEqual([]);
      const hybrid = await search(d, alice.apiKey, { query, mode: 'hybrid' });
      expect(hybrid.status).toBe(200);
      expect(hybrid.body.results.length, query).toBeGreaterThan(0);
      for (const r of hybrid.body.results as { scores: Record<string, unknown> }[]) {
        expect(r.scores.keyword, query).toBeUndefined();
        expect(r.scores.vector, query).toBeDefined();
      }
    }
  });

  it('reads query-language syntax as plain words: quotes, OR, *, field: and the like find what their words find', async () => {
    const ids = async (query: string) =>
      ((await search(d, alice.apiKey, { query, mode: 'keyword', limit: 20 })).body.results as { document: { id: string } }[]).map((r) => r.document.id);
    const plain = await ids('tomatoes water sunlight');
    expect(plain[0]).toBe(docs.aliceGarden);
    // Their word tokens are those three and stop words ("or", "and"): the same answer, in the same order.
    for (const query of ['"tomatoes" OR (water* AND ~sunlight)', '+tomatoes -water "sunlight', 'tomatoes:water || sunlight*']) {
      expect(await ids(query), query).toEqual(plain);
    }
  });

  it('answers an empty library with an empty list', async () => {
    const res = await search(d, carol.apiKey, { query: 'tomatoes' });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([]);
  });

  it('supports keyword and vector modes and rerank=false', async () => {
    const kw = await search(d, bob.apiKey, { query: 'sourdough Dutch oven', mode: 'keyword', rerank: false });
    expect(kw.body.results[0].document.id).toBe(docs.bobBaking);
    const vec = await search(d, bob.apiKey, { query: 'bread with a crunchy crust', mode: 'vector' });
    expect(vec.body.results[0].document.id).toBe(docs.bobBaking);
    const one = await search(d, bob.apiKey, { query: 'bread', limit: 1 });
    expect(one.body.results).toHaveLength(1);
  });

  it('needs read:documents and a credential', async () => {
    const writer = await addUser(d, { scopes: 'write:documents' });
    const res = await search(d, writer.apiKey, { query: 'tomatoes' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('insufficient_scope');
    const anon = await api(d, '/api/v1/search', { body: { query: 'tomatoes' } });
    expect(anon.status).toBe(401);
  });

  it('reports the reranker in health', async () => {
    const res = await api(d, '/api/v1/health');
    expect(res.body.components.reranker).toMatchObject({ status: 'up' });
  });
});

describe('search API with a reranker that fails', () => {
  let d: Daemon;
  let user: TestUser;

  beforeAll(async () => {
    const port = await freePort(); // nothing listens there
    d = await startDaemon({ args: ['--reranker', `http:http://127.0.0.1:${port}/v1/rerank`], timeoutMs: 60_000 });
    user = await addUser(d);
    await upload(d, user, 'garden.txt', txt(GARDEN));
  }, 180_000);

  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
  });

  it('degrades to the fused order with a warning, never a 500', async () => {
    const res = await search(d, user.apiKey, { query: 'tomato sunlight' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results.length).toBeGreaterThan(0);
    expect(res.body.warnings).toHaveLength(1);
    expect(res.body.warnings[0]).toMatch(/^reranker "http:.+" failed \(.+\); results are in first-stage \(fused\) order$/);
    const plain = await search(d, user.apiKey, { query: 'tomato sunlight', rerank: false });
    expect(plain.body.warnings).toBeUndefined();
    expect(plain.body.results.map((r: { chunk_id: string }) => r.chunk_id)).toEqual(res.body.results.map((r: { chunk_id: string }) => r.chunk_id));
    // Health names it, down (docs/search.md#rerankers).
    const health = await api(d, '/api/v1/health');
    expect(health.body.components.reranker).toMatchObject({ id: expect.stringMatching(/^http:/), status: 'down' });
  });
});
