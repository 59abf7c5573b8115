/**
 * The filters' edges, each stated on its own, from a mutation sweep of the filter code (h121): changes that every
 * other test let through — a path prefix holding LIKE's wildcards (`_`, `%`), a quote or a character outside the BMP,
 * compared exactly and in its case; a value with a quote; an uploader no account has; `source_id`; a URL's `$in`
 * list — and ones other tests caught only in passing: metadata numbers compared as numbers (9 < 10 < 100, which text
 * order breaks), a range no value falls in, `$eq` beside a range. And a defect it found: a label whose name holds a
 * capital outside ASCII was found by the list but not by search. Search (LanceDB's prefilter) and the document list
 * (SQL) must each answer exactly the documents named; on SQLite here and on PostgreSQL in the `postgresql` project.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { filtersToParams } from '../../src/core/filter-params.js';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

type Name = 'one' | 'two' | 'three' | 'four' | 'five' | 'six' | 'plain' | 'synced';

/** Uploaded documents: their paths, metadata and labels. `synced` comes from a folder source. */
const UPLOADS: { name: Exclude<Name, 'synced'>; path: string | null; metadata: Record<string, unknown>; labels?: string }[] = [
  { name: 'one', path: 'a_b/one.txt', metadata: { pages: 9, owner: "o'neil" }, labels: 'Ärger-Liste' },
  { name: 'two', path: 'axb/two.txt', metadata: { pages: 10 }, labels: 'ärger-liste' },
  { name: 'three', path: 'a%b/three.txt', metadata: { pages: 100 }, labels: 'Über,über' },
  { name: 'four', path: 'A_B/four.txt', metadata: { pages: 2 } },
  { name: 'five', path: "o'hara/five.txt", metadata: { owner: "o'hara" } },
  { name: 'six', path: '\u{1F6A2}/six.txt', metadata: {} },
  { name: 'plain', path: null, metadata: {} },
];

describe('filter edges found by mutation', () => {
  const dirs = tempDirs('docsearch-filter-edges');
  const root = dirs.make('root');
  afterAll(() => dirs.removeAll());
  let d: Daemon;
  let user: TestUser;
  let sourceId: string;
  const ids = {} as Record<Name, string>;

  daemonForSuite(
    async (started) => {
      d = started;
      user = await addUser(d);
      const projectId = (await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'edges' } })).body.id as string;
      for (const u of UPLOADS) {
        const res = await uploadFiles(d, user.apiKey, [{ name: `${u.name}.txt`, bytes: Buffer.from(`The harbour log of ${u.name}: every vessel reports on arrival.`) }], {
          projectId,
          metadata: JSON.stringify(u.metadata),
          query: '?wait=true',
          fields: { ...(u.labels ? { labels: u.labels } : {}), ...(u.path ? { paths: JSON.stringify([u.path]) } : {}) },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.documents[0].status).toBe('ready');
        ids[u.name] = res.body.documents[0].id;
      }
      const folder = join(root, 'kept');
      mkdirSync(folder);
      writeFileSync(join(folder, 'synced.txt'), 'The harbour log kept current by a folder: every vessel reports on arrival.');
      const sources = new SourceClient(d, user.apiKey);
      sourceId = (await sources.add(projectId, { url: `file://${folder}` })).id;
      await sources.sync(projectId, sourceId);
      const synced = await sources.settled(projectId, sourceId, 1);
      expect(synced.get('synced.txt')?.status).toBe('ready');
      ids.synced = synced.get('synced.txt')!.id;
    },
    { args: ['--source-roots', root], setupTimeoutMs: 180_000 },
  );

  /** The documents a keyword search for "harbour" and the document list each keep under `filters`, by name. */
  const answers = async (filters: Record<string, unknown>) => {
    const name = (id: string) => (Object.entries(ids).find(([, v]) => v === id)?.[0] ?? id) as Name;
    const found = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'harbour', mode: 'keyword', group: 'document', limit: 100, filters } });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    const listed = await api(d, `/api/v1/documents?${new URLSearchParams([...filtersToParams(filters), ['limit', '100']])}`, { token: user.apiKey });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    return {
      search: (found.body.documents as { document: { id: string } }[]).map((r) => name(r.document.id)).sort(),
      list: (listed.body.documents as { id: string }[]).map((r) => name(r.id)).sort(),
    };
  };

  const cases: [string, Record<string, unknown>, Name[]][] = [
    ['a prefix with "_" is no wildcard, and its case counts', { path_prefix: 'a_b/' }, ['one']],
    ['a prefix with "%" is no wildcard', { path_prefix: 'a%b/' }, ['three']],
    ['a prefix with a quote', { path_prefix: "o'hara/" }, ['five']],
    ['a prefix of a character outside the BMP', { path_prefix: '\u{1F6A2}/' }, ['six']],
    ['numbers compare as numbers ($gte 9: 9, 10, 100)', { metadata: { pages: { $gte: 9 } } }, ['one', 'three', 'two']],
    ['numbers compare as numbers ($lt 10: 2, 9)', { metadata: { pages: { $lt: 10 } } }, ['four', 'one']],
    ['a range no value falls in keeps nothing', { metadata: { pages: { $gt: 1000 } } }, []],
    ['$eq beside a range: both hold', { metadata: { pages: { $eq: 10, $gte: 9 } } }, ['two']],
    ['a value with a quote', { metadata: { owner: "o'neil" } }, ['one']],
    ['an e-mail no account has keeps nothing', { uploaded_by: 'nobody-at-all@example.com' }, []],
    ['a source id no source has keeps nothing', { source_id: 'src_none_such' }, []],
    ['a label spelled as it is, with a capital outside ASCII', { labels: 'Ärger-Liste' }, ['one']],
    ['a label in another ASCII case', { labels: 'Ärger-LISTE' }, ['one']],
    // Both databases fold A–Z only: "ärger-liste" is another label than "Ärger-Liste" (docs/api.md#labels).
    ['a label differing outside A–Z is another label', { labels: 'ärger-liste' }, ['two']],
    ['two labels differing outside A–Z, both on one document', { labels: ['Über', 'über'] }, ['three']],
  ];

  it.each(cases)('%s, in search and in the list', async (_what, filters, want) => {
    expect(await answers(filters)).toEqual({ search: [...want].sort(), list: [...want].sort() });
  });

  it('counts labels differing outside A–Z apart, as the store keeps them', async () => {
    const found = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'harbour', mode: 'keyword', group: 'document', limit: 100, facets: ['label'] } });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    const counts = Object.fromEntries((found.body.facets.label as { value: string; count: number }[]).map((v) => [v.value, v.count]));
    expect(counts).toEqual({ 'Ärger-Liste': 1, 'ärger-liste': 1, Über: 1, über: 1 });
  });

  it('reads a URL\'s metadata.<key>.$in as a comma-separated list', async () => {
    const listed = await api(d, '/api/v1/documents?metadata.pages.$in=9,100&limit=100', { token: user.apiKey });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect((listed.body.documents as { id: string }[]).map((r) => r.id).sort()).toEqual([ids.one, ids.three].sort());
  });

  it("keeps a source's documents by source_id, in search and in the list", async () => {
    expect(await answers({ source_id: sourceId })).toEqual({ search: ['synced'], list: ['synced'] });
    // Every document is in the answer unfiltered: the filters above had something to leave out.
    const all = (Object.keys(ids) as Name[]).sort();
    expect(await answers({})).toEqual({ search: all, list: all });
  });
});
