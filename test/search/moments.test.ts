/**
 * Moments read and shown alike on every surface (docs/api.md#conventions): a day is UTC, a time carries its offset,
 * a date or time no calendar or clock has is refused naming the field (never rolled over as Date.parse does), and
 * bounds are exact to the millisecond — the list (SQL), search (LanceDB's prefilter), its `year` facet, MCP, the CLI
 * and the web pages keep or drop a document uploaded at the bound the same way; a day as "at or before" takes in the
 * whole day. JSON answers every time as RFC 3339 UTC with milliseconds. On SQLite here and on PostgreSQL in the
 * `postgresql` project.
 */
import { describe, expect, it } from 'vitest';
import { filtersToParams } from '../../src/core/filter-params.js';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { cliEnv } from '../cli/cli-env.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { call, callError, httpClient } from '../mcp/mcp-client.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn, type WebClient } from '../server/web-client.js';

type Name = 'a' | 'b' | 'c';
const NAMES: Name[] = ['a', 'b', 'c'];
/** Each document's metadata date: late on Jan 31, the day itself, and the next day's first moment. */
const DATES: Record<Name, string> = { a: '2025-01-31T18:00:00Z', b: '2025-01-31', c: '2025-02-01T00:00:00Z' };
const DAY_MS = 86_400_000;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** `ms` as an RFC 3339 time at an offset of `minutes` (`…T02:20:00.123-01:00`). */
function inZone(ms: number, minutes: number): string {
  const local = new Date(ms + minutes * 60_000).toISOString().slice(0, 23);
  const m = Math.abs(minutes);
  return `${local}${minutes < 0 ? '-' : '+'}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

describe('moments on every surface', () => {
  let d: Daemon;
  let admin: TestUser;
  let alice: TestUser;
  let web: WebClient;
  const docs = {} as Record<Name, { id: string; at: string; ms: number }>;
  daemonForSuite(async (started) => {
    d = started;
    admin = await addUser(d); // the first account: an admin, who reads the audit log
    alice = await addUser(d);
    const project = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'moments' } })).body.id as string;
    for (const n of NAMES) {
      await new Promise((r) => setTimeout(r, 3)); // each in a millisecond of its own
      const res = await uploadFiles(d, alice.apiKey, [{ name: `moment-${n}.txt`, bytes: Buffer.from(`Note ${n}\n\nThe harbour master keeps the ledger of ships.\n`) }], {
        projectId: project,
        metadata: JSON.stringify({ d: DATES[n] }),
        query: '?wait=true',
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const doc = res.body.documents[0];
      expect(doc.status).toBe('ready');
      docs[n] = { id: doc.id, at: doc.created_at, ms: Date.parse(doc.created_at) };
    }
    web = await loggedIn(d, alice);
  });

  const named = (ids: string[]) => NAMES.filter((n) => ids.includes(docs[n].id));
  const onPage = (page: string) => NAMES.filter((n) => page.includes(`moment-${n}.txt`));
  const cli = (...args: string[]) => runCli([...args, '--server', d.url], { env: cliEnv(null, { DOCSEARCH_TOKEN: alice.apiKey }) });

  /** The documents `docsearch documents list` lists with these flags. */
  const listed = async (...flags: string[]) => {
    const res = await cli('documents', 'list', '--json', ...flags);
    expect(res.code, res.stderr).toBe(0);
    return named((JSON.parse(res.stdout) as { documents: { id: string }[] }).documents.map((x) => x.id));
  };

  /** The documents each surface keeps under `filters`: the REST list and search, search's year facet, MCP's two tools. */
  async function kept(filters: Record<string, unknown>): Promise<Record<string, unknown>> {
    const list = await api(d, `/api/v1/documents?${new URLSearchParams([...filtersToParams(filters), ['limit', '100']])}`, { token: alice.apiKey });
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    const search = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'harbour', mode: 'keyword', group: 'document', limit: 50, filters, facets: ['year'] } });
    expect(search.status, JSON.stringify(search.body)).toBe(200);
    const mcp = await httpClient(d, alice.apiKey);
    try {
      const mcpSearch = await call(mcp, 'search', { query: 'harbour', mode: 'keyword', group: 'document', limit: 50, filters });
      const mcpList = await call(mcp, 'list_documents', { limit: 100, filters });
      return {
        list: named(list.body.documents.map((x: { id: string }) => x.id)),
        search: named(search.body.documents.map((x: { document: { id: string } }) => x.document.id)),
        facet: Object.fromEntries((search.body.facets.year as { value: number; count: number }[]).map((y) => [y.value, y.count])),
        mcp_search: named(mcpSearch.documents.map((x: { document_id: string }) => x.document_id)),
        mcp_list: named(mcpList.documents.map((x: { id: string }) => x.id)),
      };
    } finally {
      await mcp.close();
    }
  }

  /** The same documents from every surface, and the year facet counting them by their UTC years. */
  const everywhere = (names: Name[]) => {
    const facet: Record<string, number> = {};
    for (const year of names.map((n) => new Date(docs[n].ms).getUTCFullYear())) facet[year] = (facet[year] ?? 0) + 1;
    return { list: names, search: names, facet, mcp_search: names, mcp_list: names };
  };

  it('keeps or drops a document uploaded at the bound to the millisecond, whatever the offset it is written at', async () => {
    const b = docs.b;
    expect(docs.a.ms).toBeLessThan(b.ms);
    expect(b.ms).toBeLessThan(docs.c.ms);
    expect(b.at).toMatch(ISO_MS);
    for (const at of [b.at, inZone(b.ms, -60), inZone(b.ms, 330), b.at.replace('T', ' ')]) {
      expect(await kept({ uploaded_since: at }), `since ${at}`).toEqual(everywhere(['b', 'c']));
      expect(await kept({ uploaded_before: at }), `before ${at}`).toEqual(everywhere(['a']));
    }
    // Digits past the millisecond (Python's isoformat writes microseconds): the document's millisecond is before it.
    const past = b.at.replace('Z', '4Z');
    expect(await kept({ uploaded_since: past }), `since ${past}`).toEqual(everywhere(['c']));
    expect(await kept({ uploaded_before: past }), `before ${past}`).toEqual(everywhere(['a', 'b']));
    const trailing = b.at.replace('Z', '000Z');
    expect(await kept({ uploaded_since: trailing, uploaded_before: inZone(b.ms + 1, 120) })).toEqual(everywhere(['b']));

    // The CLI's flags and the web search page, the same.
    expect(await listed('--since', inZone(b.ms, -60))).toEqual(['b', 'c']);
    expect(await listed('--before', past)).toEqual(['a', 'b']);
    const searched = async (params: Record<string, string>) => {
      const page = await web.get(`/search?${new URLSearchParams({ q: 'harbour', mode: 'keyword', ...params })}`);
      expect(page.status, page.text.slice(0, 300)).toBe(200);
      return onPage(page.text);
    };
    expect(await searched({ uploaded_since: past })).toEqual(['c']);
    expect(await searched({ uploaded_before: inZone(b.ms, 330) })).toEqual(['a']);
  });

  it('counts the year facet in UTC years, the years the day filters keep', async () => {
    const res = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'harbour', mode: 'keyword', group: 'document', limit: 50, facets: ['year'] } });
    const years = res.body.facets.year as { value: number; count: number }[];
    expect(years.reduce((s, y) => s + y.count, 0)).toBe(3);
    for (const { value, count } of years) {
      expect(NAMES.filter((n) => new Date(docs[n].ms).getUTCFullYear() === value).length).toBe(count);
      const same = await kept({ uploaded_since: `${value}-01-01`, uploaded_before: `${value + 1}-01-01` });
      expect(same).toEqual(everywhere(NAMES.filter((n) => new Date(docs[n].ms).getUTCFullYear() === value)));
    }
  });

  it('takes a day in a date bound on metadata as the whole day', async () => {
    const cases: [Record<string, string>, Name[]][] = [
      [{ $lte: '2025-01-31' }, ['a', 'b']],
      [{ $gt: '2025-01-31' }, ['c']],
      [{ $gte: '2025-01-31' }, ['a', 'b', 'c']],
      [{ $lt: '2025-01-31' }, []],
      [{ $lt: '2025-02-01' }, ['a', 'b']],
      [{ $lte: '2025-01-31T18:00:00+00:00' }, ['a', 'b']],
      [{ $gt: '2025-01-31T19:00:00+01:00' }, ['c']],
      [{ $gte: '2025-01-31T23:00:00-01:00' }, ['c']],
    ];
    for (const [condition, names] of cases) expect(await kept({ metadata: { d: condition } }), JSON.stringify(condition)).toEqual(everywhere(names));
    expect(await listed('--meta', 'd<=2025-01-31')).toEqual(['a', 'b']);
    expect(await listed('--meta', 'd>2025-01-31')).toEqual(['c']);
  });

  it('reads the web Documents page’s “to” day as including that whole day (UTC)', async () => {
    const day = docs.b.at.slice(0, 10);
    const start = Date.parse(`${day}T00:00:00Z`);
    const documents = async (params: Record<string, string>) => {
      const page = await web.get(`/documents?${new URLSearchParams(params)}`);
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('could not be used');
      return onPage(page.text);
    };
    expect(await documents({ to: day })).toEqual(NAMES.filter((n) => docs[n].ms < start + DAY_MS));
    expect(await documents({ from: day })).toEqual(NAMES.filter((n) => docs[n].ms >= start));
    expect(await documents({ to: new Date(start - DAY_MS).toISOString().slice(0, 10) })).toEqual(NAMES.filter((n) => docs[n].ms < start));
    expect(await documents({ to: docs.b.at })).toEqual(['a', 'b']);
    expect(await documents({ to: '9999-12-31' })).toEqual(NAMES);
  });

  it('refuses a date or time no calendar or clock has, naming the field, on every surface', async () => {
    const impossible: [string, RegExp][] = [
      ['2025-02-30', /is not a real date/],
      ['2025-13-01', /is not a real date/],
      ['0000-01-01', /is not a real date/],
      ['2025-01-01T24:00:00Z', /is not a real time/],
      ['2025-12-31T23:59:60Z', /is not a real time/],
      ['2025-06-01T12:00:00+24:00', /is not a real time/],
    ];
    const mcp = await httpClient(d, alice.apiKey);
    try {
      // Soft: every surface that takes an impossible value is reported, not only the first.
      for (const [value, why] of impossible) {
        const list = await api(d, `/api/v1/documents?${new URLSearchParams({ uploaded_since: value })}`, { token: alice.apiKey });
        expect.soft([list.status, list.body.error?.message], value).toEqual([400, expect.stringMatching(new RegExp(`^query\\.uploaded_since: ${why.source}`))]);
        const search = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'harbour', filters: { uploaded_before: value } } });
        expect.soft([search.status, search.body.error?.message], value).toEqual([400, expect.stringMatching(new RegExp(`^body\\.filters\\.uploaded_before: ${why.source}`))]);
        const meta = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'harbour', filters: { metadata: { d: { $lte: value } } } } });
        expect.soft([meta.status, meta.body.error?.message], value).toEqual([400, expect.stringMatching(/^body\.filters\.metadata\.d\.\$lte: /)]);
        expect.soft(meta.body.error?.message, value).toMatch(why);
        const audit = await api(d, `/api/v1/audit-events?${new URLSearchParams({ until: value })}`, { token: admin.apiKey });
        expect.soft([audit.status, audit.body.error?.message], value).toEqual([400, expect.stringMatching(new RegExp(`^query\\.until: ${why.source}`))]);
        expect.soft(await callError(mcp, 'list_documents', { filters: { uploaded_since: value } }).catch(String), value).toMatch(why);
        const flag = await cli('documents', 'list', '--since', value);
        expect.soft([flag.code, flag.stderr], value).toEqual([2, expect.stringContaining(`--since "${value}": ${why.source}`)]);
        for (const field of ['from', 'to']) {
          const page = await web.get(`/documents?${new URLSearchParams({ [field]: value })}`);
          expect.soft(page.text, `${field}=${value}`).toContain('This filter could not be used');
        }
      }
    } finally {
      await mcp.close();
    }
    // A key's expiry: hour 24 of a day ahead is no time either (Date.parse reads it as the next day's 00:00).
    const key = await api(d, '/api/v1/keys', { token: alice.apiKey, body: { name: 'k', expires_at: '2027-01-31T24:00:00Z' } });
    expect([key.status, key.body.error?.message]).toEqual([400, expect.stringMatching(/^body\.expires_at: must be a date/)]);
  });

  it('answers every time as RFC 3339 UTC with milliseconds', async () => {
    const key = await api(d, '/api/v1/keys', { token: alice.apiKey, body: { name: 'dated', expires_at: '2027-01-31' } });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    expect(key.body.expires_at).toBe('2027-01-31T00:00:00.000Z');
    const times: [string, unknown][] = [];
    const walk = (where: string, v: unknown): void => {
      if (Array.isArray(v)) v.forEach((x, i) => walk(`${where}.${i}`, x));
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) (/(^at|_at|_sync)$/.test(k) && x !== null ? times.push([`${where}.${k}`, x]) : walk(`${where}.${k}`, x));
    };
    for (const [path, token] of [
      ['/api/v1/documents', alice.apiKey],
      ['/api/v1/projects', alice.apiKey],
      ['/api/v1/keys', alice.apiKey],
      [`/api/v1/documents/${docs.a.id}`, alice.apiKey],
      ['/api/v1/audit-events?limit=20', admin.apiKey],
    ] as const) {
      const res = await api(d, path, { token });
      expect(res.status, path).toBe(200);
      walk(path, res.body);
    }
    expect(times.length).toBeGreaterThan(10);
    for (const [where, value] of times) expect(value, where).toMatch(ISO_MS);
  });
});
