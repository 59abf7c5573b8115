/**
 * Facet counts on the document list (issue 60): `GET /api/v1/documents?facets=…`, `docsearch documents list --facets`
 * and MCP's `list_documents` count the whole filtered list — every page, the same filters, only what the caller may
 * read — by the names search takes, and refuse an unknown one. Checked against an exact count over the filter
 * library (test/helpers/filter-library.ts: mixed types, labels, uploaders, metadata years, a project shared with a
 * person who reads only it, another whose owner no one else reads). On SQLite here and on PostgreSQL in the
 * `postgresql` project.
 */
import { describe, expect, it } from 'vitest';
import { filtersToParams } from '../../src/core/filter-params.js';
import { cliEnv } from '../cli/cli-env.js';
import { api, type Daemon, runCli } from '../helpers/daemon.js';
import { buildLibrary, expected, expectedFacets, type Library, type LibraryDoc, type Person } from '../helpers/filter-library.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, callError, httpClient, stdioClient } from '../mcp/mcp-client.js';

const FACETS = ['type', 'project', 'uploaded_by', 'year', 'label', 'language', 'metadata.team', 'metadata.year'];
type Counts = Record<string, Record<string, number>>;

/** A facet's values as the exact counts key them: labels in any case, metadata values by their JSON. */
const keyed = (facet: string, values: { value: unknown; count: number }[]): Record<string, number> =>
  Object.fromEntries(values.map((v) => [facet === 'label' ? String(v.value).toLowerCase() : facet.startsWith('metadata.') ? JSON.stringify(v.value) : String(v.value), v.count]));

const countsOf = (facets: Record<string, { value: unknown; count: number }[]>): Counts => Object.fromEntries(Object.entries(facets).map(([f, values]) => [f, keyed(f, values)]));

/** The exact counts of `docs` for FACETS (expectedFacets, and metadata.year: numbers and text apart, by their JSON). */
function exactCounts(lib: Library, docs: LibraryDoc[]): Counts {
  const years: Record<string, number> = {};
  for (const doc of docs) if (doc.metadata.year !== undefined) years[JSON.stringify(doc.metadata.year)] = (years[JSON.stringify(doc.metadata.year)] ?? 0) + 1;
  return { ...expectedFacets(lib, docs), 'metadata.year': years };
}

describe('facet counts on the document list', () => {
  let d: Daemon;
  let lib: Library;
  daemonForSuite(
    async (started) => {
      d = started;
      lib = await buildLibrary(d);
    },
    { setupTimeoutMs: 240_000 },
  );

  const list = async (token: string, params: [string, string][]) => {
    const res = await api(d, `/api/v1/documents?${new URLSearchParams(params)}`, { token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { documents: { id: string }[]; next_cursor: string | null; facets?: Record<string, { value: unknown; count: number; name?: string; color?: string }[]> };
  };

  /** Every page of the list, two documents a page, each asked with the facets: the ids and each page's counts. */
  const allPages = async (token: string, params: [string, string][]) => {
    const ids: string[] = [];
    const counts: Counts[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(token, [...params, ['limit', '2'], ['facets', FACETS.join(',')], ...(cursor ? [['cursor', cursor] as [string, string]] : [])]);
      ids.push(...page.documents.map((x) => x.id));
      counts.push(countsOf(page.facets!));
      cursor = page.next_cursor;
    } while (cursor);
    return { ids: ids.sort(), counts };
  };

  it('counts the whole filtered list, every page alike, only documents the caller may read', async () => {
    const cases: Record<string, unknown>[] = [{}, { labels: 'unpaid' }, { type: ['pdf', 'txt'] }, { metadata: { team: 'ops' } }, { uploaded_since: lib.between }, { metadata: { year: { $gte: 2020 } } }];
    for (const filters of cases) {
      for (const who of ['alice', 'bob', 'carol'] as Person[]) {
        const docs = expected(lib, who, filters);
        const { ids, counts } = await allPages(lib.users[who].apiKey, filtersToParams(filters));
        expect(ids, `${who} ${JSON.stringify(filters)}`).toEqual(docs.map((x) => x.id).sort());
        const exact = exactCounts(lib, docs);
        // More than one page whenever the list holds more than two: paging does not change the counts.
        if (docs.length > 2) expect(counts.length).toBeGreaterThan(1);
        for (const got of counts) expect(got, `${who} ${JSON.stringify(filters)}`).toEqual(exact);
        // Eve's documents carry the same labels, types and teams: none of them counts for anyone else.
        expect(Object.keys(counts[0]!.project!)).not.toContain(lib.projects.eves);
      }
    }
    // The library mixes what is counted: several types, labels, uploaders and metadata years in one list.
    const alices = exactCounts(lib, expected(lib, 'alice', {}));
    for (const facet of ['type', 'label', 'uploaded_by', 'metadata.year', 'language']) expect(Object.keys(alices[facet]!).length, facet).toBeGreaterThan(1);
  });

  it('counts with the list\'s other filters and order, names projects, colours labels, and leaves facets out unless asked', async () => {
    const alice = lib.users.alice.apiKey;
    const inShared = expected(lib, 'alice', {}).filter((x) => x.projectId === lib.projects.shared);
    for (const sort of ['-uploaded', 'name', '-size']) {
      const page = await list(alice, [['project_id', lib.projects.shared], ['sort', sort], ['limit', '1'], ['facets', 'project,type'], ['facets', 'label']]);
      expect(countsOf(page.facets!), sort).toEqual({ project: { [lib.projects.shared]: inShared.length }, type: exactCounts(lib, inShared).type, label: exactCounts(lib, inShared).label });
      expect(page.facets!.project![0]!.name).toBe('shared');
      expect(page.facets!.label!.every((v) => typeof v.color === 'string')).toBe(true);
    }
    const named = await list(alice, [['filename', 'TIDE'], ['facets', 'type']]);
    expect(named.facets).toEqual({ type: [{ value: 'pdf', count: 1 }] });
    expect((await list(alice, [])).facets).toBeUndefined();
    // A key limited to one project counts only that project's documents, as its list shows only them.
    const key = await api(d, '/api/v1/keys', { token: lib.users.carol.apiKey, body: { name: 'carols only', project_ids: [lib.projects.carols] } });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    const carols = expected(lib, 'carol', {}).filter((x) => x.projectId === lib.projects.carols);
    expect(carols.length).toBeLessThan(expected(lib, 'carol', {}).length);
    expect(countsOf((await list(key.body.key, [['facets', 'project,label']])).facets!)).toEqual({ project: { [lib.projects.carols]: carols.length }, label: exactCounts(lib, carols).label });
  });

  it('refuses an unknown facet with a 400 naming it, as search does', async () => {
    const res = await api(d, '/api/v1/documents?facets=type,colour', { token: lib.users.alice.apiKey });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^query\.facets\.1: unknown facet "colour": one of type, project, uploaded_by, year, label, language, or metadata\.<key>/);
    const search = await api(d, '/api/v1/search', { token: lib.users.alice.apiKey, body: { query: 'harbour', facets: ['colour'] } });
    expect(search.status).toBe(400);
    expect(res.body.error.message.replace(/^query\.facets\.1/, '')).toBe(search.body.error.message.replace(/^body\.facets\.0/, ''));
    expect((await api(d, '/api/v1/documents?facets=metadata.', { token: lib.users.alice.apiKey })).status).toBe(400);
  });

  it('counts a document not yet ready under no language (null), and under the filters that list it', async () => {
    const carol = lib.users.carol.apiKey;
    const res = await uploadFiles(d, carol, [{ name: 'broken.pdf', bytes: Buffer.from('%PDF-1.7\nthis is not a PDF at all\n%%EOF\n') }], { projectId: lib.projects.carols, query: '?wait=true' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.documents[0].status).toBe('failed');
    try {
      const failed = await list(carol, [['status', 'failed'], ['facets', 'language,type,project']]);
      expect(failed.facets).toEqual({ language: [{ value: null, count: 1 }], type: [{ value: 'pdf', count: 1 }], project: [{ value: lib.projects.carols, count: 1, name: 'carols' }] });
      const all = await list(carol, [['facets', 'language']]);
      const languages = countsOf(all.facets!).language!;
      expect(languages.null).toBe(1);
      expect(Object.values(languages).reduce((a, b) => a + b, 0)).toBe(expected(lib, 'carol', {}).length + 1);
    } finally {
      expect((await api(d, `/api/v1/documents/${res.body.documents[0].id}`, { method: 'DELETE', token: carol })).status).toBe(204);
    }
  });

  it('prints the counts as a table after the documents, gives them as `facets` with --json, and completes the names', async () => {
    const cli = (...args: string[]) => runCli([...args, '--server', d.url], { env: cliEnv(null, { DOCSEARCH_TOKEN: lib.users.bob.apiKey }) });
    const exact = exactCounts(lib, expected(lib, 'bob', { labels: 'unpaid' }));
    const table = await cli('documents', 'list', '--label', 'unpaid', '--facets', 'type,label,metadata.team');
    expect(table.code, table.stderr).toBe(0);
    const rows = (facet: string) => Object.fromEntries([...table.stdout.matchAll(new RegExp(`^${facet.replace('.', '\\.')}\\t([^\\t\\n]+)\\t(\\d+)$`, 'gm'))].map((m) => [facet === 'label' ? m[1]!.toLowerCase() : m[1]!, Number(m[2])]));
    expect(rows('type'), table.stdout).toEqual(exact.type);
    expect(rows('label'), table.stdout).toEqual(exact.label);
    expect(rows('metadata.team'), table.stdout).toEqual(Object.fromEntries(Object.entries(exact['metadata.team']!).map(([k, n]) => [JSON.parse(k) as string, n])));
    // After the documents (every one of them listed), not instead of them.
    const firstCount = table.stdout.search(/^type\t/m);
    for (const doc of expected(lib, 'bob', { labels: 'unpaid' })) {
      expect(table.stdout.indexOf(doc.id)).toBeGreaterThanOrEqual(0);
      expect(table.stdout.indexOf(doc.id)).toBeLessThan(firstCount);
    }

    const json = await cli('documents', 'list', '--label', 'unpaid', '--facets', 'type,label,metadata.team', '--json');
    expect(json.code, json.stderr).toBe(0);
    const answer = JSON.parse(json.stdout) as { documents: { id: string }[]; facets: Record<string, { value: unknown; count: number }[]> };
    expect(answer.documents.map((x) => x.id).sort()).toEqual(expected(lib, 'bob', { labels: 'unpaid' }).map((x) => x.id).sort());
    expect(countsOf(answer.facets)).toEqual({ type: exact.type, label: exact.label, 'metadata.team': exact['metadata.team'] });
    // Without --facets the JSON is the documents alone, as before.
    expect(Object.keys(JSON.parse((await cli('documents', 'list', '--json')).stdout))).toEqual(['documents']);

    // --facets alone: every facet but metadata's.
    const all = await cli('documents', 'list', '--facets');
    expect(all.code, all.stderr).toBe(0);
    expect(new Set([...all.stdout.matchAll(/^([\w.]+)\t[^\t\n]+\t\d+$/gm)].map((m) => m[1]))).toEqual(new Set(['type', 'project', 'uploaded_by', 'year', 'label', 'language']));

    const bad = await cli('documents', 'list', '--facets', 'colour');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/unknown facet "colour"/);

    const complete = await runCli(['__complete', 'documents', 'list', '--facets', ''], { env: cliEnv(null, { DOCSEARCH_URL: d.url, DOCSEARCH_TOKEN: lib.users.bob.apiKey }) });
    expect(complete.code, complete.stderr).toBe(0);
    expect(complete.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0])).toEqual(expect.arrayContaining(['type', 'project', 'uploaded_by', 'year', 'label', 'language']));
  });

  it('counts through MCP list_documents, in the daemon and over stdio, and refuses an unknown facet', async () => {
    const clients = [await httpClient(d, lib.users.bob.apiKey), await stdioClient(d.url, lib.users.bob.apiKey)];
    try {
      const exact = exactCounts(lib, expected(lib, 'bob', { metadata: { team: 'ops' } }));
      for (const [n, client] of clients.entries()) {
        const page = await call(client, 'list_documents', { limit: 1, filters: { metadata: { team: 'ops' } }, facets: ['type', 'label', 'year', 'language'] });
        expect(page.documents.length, `client ${n}`).toBe(1);
        expect(countsOf(page.facets), `client ${n}`).toEqual({ type: exact.type, label: exact.label, year: exact.year, language: exact.language });
        expect((await call(client, 'list_documents', { limit: 1 })).facets, `client ${n}`).toBeUndefined();
        expect(await callError(client, 'list_documents', { facets: ['colour'] })).toMatch(/unknown facet "colour"/);
      }
    } finally {
      for (const c of clients) await c.close();
    }
  });
});
