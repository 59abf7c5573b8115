/**
 * What a search narrows to, each stated where other tests let a one-place break through (a mutation audit of the
 * search narrowing, helper-176):
 *
 * - the searched projects are in the first stage's prefilter, not only rechecked per hit: another person's project
 *   holding more than a first stage's depth (200) of better matches must not push the searcher's own out of the list;
 *   nor when the searcher's projects held every row when last counted, and another's rows came after (the search
 *   that meets them runs again with its projects);
 * - a search that reads every row (`soleScope`) keeps a trashed document's chunks out and reads as many more: a
 *   trashed document nearer the query in more chunks than the first stage's depth leaves the rest of the list whole;
 * - a later page keeps to its first page's moment in the vector list as in the keyword list: a document ready since
 *   then waits for a new search;
 * - the language facet of a search grouped by document counts a document under each language of its passages in the
 *   list, not only of those shown (docs/api.md#facets);
 * - a cursor's later pages keep to its search's filters;
 * - a weak answer grouped by document counts its facets over the documents it shows, the list its `total` counts.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

/** More sections than the first stage reads (vector depth 200, a first page's keyword depth 200): one chunk each. */
const CROWD_SECTIONS = 260;
const QUERY = 'the lighthouse keeper wrote in the logbook that the storm broke the lantern glass';
/** A document of CROWD_SECTIONS chunks, each a near copy of QUERY. */
const crowdText = Array.from({ length: CROWD_SECTIONS }, (_, i) => `## Night ${i + 1}\n\nThe lighthouse keeper wrote in the logbook that the storm broke the lantern glass on night ${i + 1}.\n`).join('\n');

describe('search narrowing found by mutation', () => {
  let d: Daemon;
  let owner: TestUser;
  let crowd: TestUser;
  let ownDoc: string;
  let crowdProject: string;
  let ownProject: string;
  let upload: (u: TestUser, projectId: string, name: string, text: string) => Promise<string>;

  daemonForSuite(
    async (started) => {
      d = started;
      [owner, crowd] = [await addUser(d), await addUser(d)];
      const project = async (u: TestUser, name: string) => (await api(d, '/api/v1/projects', { token: u.apiKey, body: { name } })).body.id as string;
      upload = async (u, projectId, name, text) => {
        const res = await uploadFiles(d, u.apiKey, [{ name, bytes: Buffer.from(text) }], { projectId, query: '?wait=true' });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.documents[0].status).toBe('ready');
        return res.body.documents[0].id as string;
      };
      // The searcher's own document: one word of the query, far from it in meaning.
      ownProject = await project(owner, 'own');
      ownDoc = await upload(owner, ownProject, 'pie.txt', 'Apple pie: butter, flour, cinnamon and sliced apples, baked for forty minutes. Served warm beside the lighthouse.');
      crowdProject = await project(crowd, 'crowd');
    },
    { setupTimeoutMs: 300_000 },
  );

  /** The documents of a search's first page in each mode, vector first (see below). */
  const ownSearch = async () => {
    const found: Record<string, string[]> = {};
    // Vector mode first: a later unfiltered vector search of the same table version may be answered from its copy in
    // memory, which keeps to the projects itself.
    for (const mode of ['vector', 'keyword', 'hybrid'] as const) {
      const res = await api(d, '/api/v1/search', { token: owner.apiKey, body: { query: QUERY, mode, limit: 10 } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      found[mode] = (res.body.results as { document: { id: string } }[]).map((r) => r.document.id);
    }
    return found;
  };

  // The cases run in order: this one needs the searcher alone in the library, the next brings the crowd in.
  it("keeps a trashed document's chunks out of a search that reads every row: the rows it drops are made up for", async () => {
    // The searcher alone in the library: their searches run without the project filter (`soleScope`), reading as many
    // more candidates as the trash holds chunks and dropping those. A document nearer the query than any other, in more
    // chunks than the first stage's depth, is trashed.
    const nights = await upload(owner, ownProject, 'nights.md', crowdText);
    const vector = async () => {
      const res = await api(d, '/api/v1/search', { token: owner.apiKey, body: { query: QUERY, mode: 'vector', limit: 10 } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return [...new Set((res.body.results as { document: { id: string } }[]).map((r) => r.document.id))];
    };
    expect(await vector()).toEqual([nights]);
    expect((await api(d, `/api/v1/documents/${nights}`, { method: 'DELETE', token: owner.apiKey })).status).toBe(204);
    // A write moves the table on, so the next search reads LanceDB rather than a copy in memory of the version before.
    const tide = await upload(owner, ownProject, 'tide.txt', 'A harbour tide table for the spring months.');
    expect((await vector()).sort()).toEqual([ownDoc, tide].sort());
    // Back to the searcher's one document, the trash empty.
    expect((await api(d, `/api/v1/documents/${tide}`, { method: 'DELETE', token: owner.apiKey })).status).toBe(204);
    for (const id of [nights, tide]) expect((await api(d, `/api/v1/trash/${id}`, { method: 'DELETE', token: owner.apiKey })).status).toBe(204);
  });

  it("keeps another person's better matches out of the first stage: the searcher's own document is found, in every mode", async () => {
    const alone = { vector: [ownDoc], keyword: [ownDoc], hybrid: [ownDoc] };
    // Alone in the library, the searcher's projects hold every row: their searches run without the project filter
    // (`soleScope`), and keep doing so for a while after the count.
    expect(await ownSearch()).toEqual(alone);
    // The crowd: another person's project, every section a near copy of the query, each its own chunk. The first
    // search after it meets the crowd's rows and must search again with the projects; every later one filters.
    await upload(crowd, crowdProject, 'keeper.md', crowdText);
    expect(await ownSearch()).toEqual(alone);
    expect(await ownSearch()).toEqual(alone);
    // The crowd is there to be found: its owner's search is full of it.
    const theirs = await api(d, '/api/v1/search', { token: crowd.apiKey, body: { query: QUERY, mode: 'vector', limit: 10 } });
    expect(theirs.body.results).toHaveLength(10);
    expect(theirs.body.total.value).toBeGreaterThanOrEqual(200);
  });

  it("keeps a document that became ready after a search's first page off its later pages, in every list", async () => {
    // A project of a few matches, every one on a page of 100: each mode's first page (of one) is taken, then a document
    // with the query's words twice becomes ready. Each later page could hold it, were it let in.
    const project = (await api(d, '/api/v1/projects', { token: crowd.apiKey, body: { name: 'few' } })).body.id as string;
    for (const night of [1, 2, 3]) await upload(crowd, project, `night-${night}.txt`, `The lighthouse keeper wrote in the logbook that the storm broke the lantern glass on night ${night}.`);
    const page = async (mode: string, limit: number, cursor?: string) => {
      const res = await api(d, '/api/v1/search', { token: crowd.apiKey, body: { query: QUERY, mode, limit, project_ids: [project], ...(cursor ? { cursor } : {}) } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return { ids: (res.body.results as { document: { id: string } }[]).map((r) => r.document.id), next: res.body.next_cursor as string | null };
    };
    const modes = ['vector', 'keyword', 'hybrid'] as const;
    const cursors: Record<string, string> = {};
    for (const mode of modes) {
      const first = await page(mode, 1);
      expect(first.next, mode).not.toBeNull();
      cursors[mode] = first.next!;
    }
    const late = await upload(crowd, project, 'late.txt', `${QUERY}. ${QUERY}.`);
    for (const mode of modes) {
      const later = await page(mode, 100, cursors[mode]);
      expect(later.ids, mode).toHaveLength(2);
      expect(later.ids, mode).not.toContain(late);
      // A new search finds it: the later page had it to leave out.
      expect((await page(mode, 100)).ids, mode).toContain(late);
    }
  });

  it("counts a grouped document under the language of each of its passages in the list, shown or not", async () => {
    const project = (await api(d, '/api/v1/projects', { token: owner.apiKey, body: { name: 'two languages' } })).body.id as string;
    const text = [
      '## Harbour',
      '',
      'The harbour master keeps the register KV-90417 in the tower office. Every ship that enters the harbour is written into it with its cargo and its crew.',
      '',
      '## Hafen',
      '',
      'Der Hafenmeister führt das Register KV-90417 im Büro des Turms. Jedes Schiff, das in den Hafen einläuft, wird mit seiner Ladung und seiner Besatzung darin eingetragen.',
      '',
    ].join('\n');
    const id = await upload(owner, project, 'register.md', text);
    const res = await api(d, '/api/v1/search', {
      token: owner.apiKey,
      body: { query: 'KV-90417', mode: 'keyword', project_ids: [project], group: 'document', passages_per_document: 1, facets: ['language'] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // One document, both passages in the list, one shown.
    expect(res.body.documents.map((g: { document: { id: string }; matches: number; passages: unknown[] }) => [g.document.id, g.matches, g.passages.length])).toEqual([[id, 2, 1]]);
    expect(res.body.facets.language).toEqual(
      expect.arrayContaining([
        { value: 'en', count: 1 },
        { value: 'de', count: 1 },
      ]),
    );
    expect(res.body.facets.language).toHaveLength(2);
  });

  it("keeps a cursor's later pages to its search's filters", async () => {
    const project = (await api(d, '/api/v1/projects', { token: owner.apiKey, body: { name: 'shelves' } })).body.id as string;
    const onShelf: Record<string, string[]> = { a: [], b: [] };
    for (const [shelf, n] of [['a', 1], ['b', 1], ['a', 2], ['b', 2], ['a', 3], ['b', 3]] as const) {
      const res = await uploadFiles(d, owner.apiKey, [{ name: `reading-${shelf}${n}.txt`, bytes: Buffer.from(`Barometer reading ${n} from shelf ${shelf}: the pressure fell before the storm.`) }], {
        projectId: project,
        metadata: JSON.stringify({ shelf }),
        query: '?wait=true',
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      onShelf[shelf]!.push(res.body.documents[0].id as string);
    }
    for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
      const body = { query: 'barometer reading', mode, project_ids: [project], filters: { metadata: { shelf: 'a' } } };
      const first = await api(d, '/api/v1/search', { token: owner.apiKey, body: { ...body, limit: 1 } });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.next_cursor, mode).toEqual(expect.any(String));
      const later = await api(d, '/api/v1/search', { token: owner.apiKey, body: { ...body, limit: 100, cursor: first.body.next_cursor } });
      expect(later.status, JSON.stringify(later.body)).toBe(200);
      const ids = [...first.body.results, ...later.body.results].map((r: { document: { id: string } }) => r.document.id);
      expect(ids.sort(), mode).toEqual([...onShelf.a!].sort());
    }
  });

  it('counts a weak grouped answer\'s facets over the documents it shows, as its total', async () => {
    const project = (await api(d, '/api/v1/projects', { token: owner.apiKey, body: { name: 'weak' } })).body.id as string;
    for (const n of [1, 2, 3, 4]) await upload(owner, project, `tide-${n}.txt`, `Tide table ${n}: high water at dawn, low water at noon.`);
    const res = await api(d, '/api/v1/search', {
      token: owner.apiKey,
      body: { query: 'zqxv plorth wubblegrax', project_ids: [project], group: 'document', limit: 2, facets: ['type', 'project'] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Nothing matches: the nearest few, on one page; the list its facets count is that page.
    expect(res.body.weak).toBe(true);
    expect(res.body.total).toEqual({ value: 2, relation: 'eq' });
    expect(res.body.documents).toHaveLength(2);
    expect(res.body.facets.type).toEqual([{ value: 'txt', count: 2 }]);
    expect(res.body.facets.project).toEqual([{ value: project, count: 2, name: 'weak' }]);
  });
});
