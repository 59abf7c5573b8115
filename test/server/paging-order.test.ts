/**
 * Paged lists through the built daemon: every cursor a list issues is taken back (a page ending on a long name in
 * another script included), and a cursor belongs to its list — the person it was issued to, the filters and the
 * order — so one sent with other filters, by another person, or to another list is refused with the words every
 * list uses, never read as a place in a list it did not come from: documents (REST, MCP's list_documents and the
 * Documents page, which starts again and says so), a document's text, the trash, projects, and the audit log (a page,
 * the JSON Lines export before it starts, and the Admin page). Orders on both engines: test/store/paging-order.test.ts.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, callError, httpClient } from '../mcp/mcp-client.js';
import { loggedIn } from './web-client.js';

const REFUSED = 'query.cursor: not a cursor this server issued for this list, or no longer valid; leave it out to start again from the first page';
/** 250 characters of 3 UTF-8 bytes each (and an extension): the longest names' cursors are over 1,000 characters. */
const LONG = `${'報'.repeat(246)}.txt`;

describe('paged lists: every cursor issued is taken, and only by its own list', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let home: string;
  let second: string;
  let third: string;
  let mcp: Client;
  let bobs: string[];

  /** Uploads notes of these names, each a sentence long, or `words` long (several chunks). */
  async function upload(user: TestUser, projectId: string, names: string[], words = 0): Promise<string[]> {
    const text = (name: string) => (words ? Array.from({ length: words }, (_, i) => `${name.slice(0, 4)} tide ${i} came in at dusk.`).join(' ') : `Notes kept in ${name.slice(0, 8)}, about the tide.`);
    const res = await uploadFiles(d, user.apiKey, names.map((name) => ({ name, bytes: Buffer.from(text(name)) })), { projectId, query: '?wait=true' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.documents as { id: string }[]).map((x) => x.id);
  }

  const project = async (user: TestUser, name: string) => (await api(d, '/api/v1/projects', { token: user.apiKey, body: { name } })).body.id as string;

  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d); // the first account: the admin
      bob = await addUser(d);
      home = (await api(d, '/api/v1/projects', { token: alice.apiKey })).body.projects[0].id;
      [second, third] = [await project(alice, 'second'), await project(alice, 'third')];
      await upload(alice, home, [LONG, 'b.txt', 'C.txt', 'd.txt']);
      await upload(alice, second, ['q1.txt', 'q2.txt', 'q3.txt']);
      await upload(alice, third, ['t1.txt', 't2.txt']);
      bobs = await upload(bob, (await api(d, '/api/v1/projects', { token: bob.apiKey })).body.projects[0].id, ['bob1.txt', 'bob2.txt'], 300);
    },
    { setupTimeoutMs: 300_000 },
  );

  beforeAll(async () => {
    mcp = await httpClient(d, alice.apiKey);
  });
  afterAll(async () => {
    await mcp?.close();
  });

  const get = (path: string, user = alice) => api(d, path, { token: user.apiKey });

  /** Every page of a list, one item a page, by the cursors it issues; each page a 200. */
  async function pages(path: string, field: string, name: (item: any) => string): Promise<{ items: string[]; cursors: string[] }> {
    const items: string[] = [];
    const cursors: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`${path}&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status, `${path} after ${items.length}: ${JSON.stringify(res.body)}`).toBe(200);
      items.push(...res.body[field].map(name));
      cursor = res.body.next_cursor;
      if (cursor) cursors.push(cursor);
    } while (cursor);
    return { items, cursors };
  }

  /** The first page's next_cursor of a list, one item a page. */
  const firstCursor = async (path: string, user = alice): Promise<string> => {
    const res = await get(`${path}${path.includes('?') ? '&' : '?'}limit=1`, user);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.next_cursor).toEqual(expect.any(String));
    return res.body.next_cursor;
  };

  const refused = async (path: string, user = alice) => {
    const res = await get(path, user);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(400);
    expect(res.body.error.message, path).toBe(REFUSED);
  };

  it('takes back the cursor of a page that ends on a long name in another script, in both name orders', async () => {
    const byName = ['b.txt', 'C.txt', 'd.txt', LONG];
    for (const [sort, order] of [['-name', [...byName].reverse()], ['name', byName]] as const) {
      const { items, cursors } = await pages(`/api/v1/documents?project_id=${home}&sort=${sort}`, 'documents', (x) => x.filename);
      expect(items, sort).toEqual(order);
      // Descending, the long name ends the first page: its cursor holds that name.
      if (sort === '-name') expect(cursors[0]!.length).toBeGreaterThan(1000);
    }
  });

  it('refuses a document list cursor sent with other filters or another order, or by another person; takes it with another page size', async () => {
    for (const sort of ['uploaded', '-name']) {
      const list = `/api/v1/documents?project_id=${home}&sort=${sort}`;
      const cursor = await firstCursor(list);
      expect((await get(`${list}&limit=3&cursor=${cursor}`)).body.documents).toHaveLength(3);
      await refused(`/api/v1/documents?sort=${sort}&cursor=${cursor}`);
      await refused(`${list}&status=ready&cursor=${cursor}`);
      await refused(`${list}&type=txt&cursor=${cursor}`);
      await refused(`${list}&filename=txt&cursor=${cursor}`);
      await refused(`/api/v1/documents?sort=${sort}&cursor=${cursor}`, bob);
    }
    const res = await get(`/api/v1/documents?project_id=${home}&sort=size&cursor=${await firstCursor(`/api/v1/documents?project_id=${home}&sort=name`)}`);
    expect(res.status).toBe(400);
  });

  it("refuses, in MCP's list_documents, a cursor sent with another project", async () => {
    const first = await call(mcp, 'list_documents', { project_id: home, limit: 1 });
    expect(first.next_cursor).toEqual(expect.any(String));
    expect((await call(mcp, 'list_documents', { project_id: home, limit: 1, cursor: first.next_cursor })).documents).toHaveLength(1);
    expect(await callError(mcp, 'list_documents', { project_id: second, limit: 1, cursor: first.next_cursor })).toContain('not a cursor this server issued for this list');
  });

  it('starts the Documents page again, saying so, when its link holds a cursor of other filters', async () => {
    const web = await loggedIn(d, alice);
    const cursor = await firstCursor(`/api/v1/documents?project_id=${home}&sort=-uploaded`);
    const same = await web.get(`/documents?project_id=${home}&cursor=${cursor}`);
    expect(same.status).toBe(200);
    expect(same.text).not.toContain('That page link is out of date');
    const other = await web.get(`/documents?project_id=${second}&cursor=${cursor}`);
    expect(other.status).toBe(200);
    expect(other.text).toContain('That page link is out of date; showing the first page.');
    for (const name of ['q1.txt', 'q2.txt', 'q3.txt']) expect(other.text).toContain(name);
  });

  it("refuses a document text cursor of another document's text", async () => {
    const cursor = await firstCursor(`/api/v1/documents/${bobs[0]}/text`, bob);
    expect((await get(`/api/v1/documents/${bobs[0]}/text?cursor=${cursor}`, bob)).status).toBe(200);
    await refused(`/api/v1/documents/${bobs[1]}/text?cursor=${cursor}`, bob);
  });

  it('refuses a projects cursor sent by another person', async () => {
    const cursor = await firstCursor('/api/v1/projects');
    expect((await get(`/api/v1/projects?cursor=${cursor}`)).status).toBe(200);
    await refused(`/api/v1/projects?cursor=${cursor}`, bob);
  });

  it("refuses a trash cursor of another project's trash, of all of them, or another person's", async () => {
    const docs = (await get(`/api/v1/documents?limit=100`)).body.documents as { id: string; project_id: string }[];
    for (const doc of docs.filter((x) => x.project_id === second || x.project_id === third)) {
      expect((await api(d, `/api/v1/documents/${doc.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    }
    const { items } = await pages(`/api/v1/trash?project_id=${second}`, 'documents', (x) => x.filename);
    expect(items.sort()).toEqual(['q1.txt', 'q2.txt', 'q3.txt']);
    const cursor = await firstCursor(`/api/v1/trash?project_id=${second}`);
    await refused(`/api/v1/trash?project_id=${third}&cursor=${cursor}`);
    await refused(`/api/v1/trash?cursor=${cursor}`);
    await refused(`/api/v1/trash?cursor=${await firstCursor('/api/v1/trash')}`, bob);
  });

  it('refuses an audit log cursor of other filters: a page, the JSON Lines export before it starts, and the Admin page starting again', async () => {
    for (const name of ['one', 'two', 'three']) expect((await api(d, '/api/v1/keys', { token: alice.apiKey, body: { name } })).status).toBe(201);
    const cursor = await firstCursor('/api/v1/audit-events');
    expect((await get(`/api/v1/audit-events?cursor=${cursor}`)).status).toBe(200);
    expect((await get(`/api/v1/audit-events?format=jsonl&cursor=${cursor}`)).status).toBe(200);
    for (const format of ['json', 'jsonl']) await refused(`/api/v1/audit-events?format=${format}&type=api_key.&cursor=${cursor}`);
    const web = await loggedIn(d, alice);
    const page = await web.get(`/admin/audit?type=api_key.&cursor=${cursor}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('That page link is out of date; showing the newest events.');
    expect((await web.get(`/admin/audit?cursor=${cursor}`)).text).not.toContain('That page link is out of date');
  });
});
