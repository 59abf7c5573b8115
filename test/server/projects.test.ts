import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';

interface WireProject {
  id: string;
  name: string;
  description: string;
  metadata: Record<string, unknown>;
  is_default: boolean;
  document_count: number;
  chunk_count: number;
  size_bytes: number;
  created_at: string;
  updated_at: string;
}

describe('projects', () => {
  let d: Daemon;
  let a: TestUser;
  let b: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    [a, b] = [await addUser(d), await addUser(d)];
  });

  const list = async (u: TestUser): Promise<WireProject[]> => {
    const out: WireProject[] = [];
    let cursor: string | null = null;
    do {
      const res = await api(d, `/api/v1/projects?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token: u.apiKey });
      expect(res.status).toBe(200);
      out.push(...res.body.projects);
      cursor = res.body.next_cursor;
    } while (cursor);
    return out;
  };

  it('every user has a default project with zero counts', async () => {
    const res = await api(d, '/api/v1/projects', { token: a.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.projects).toHaveLength(1);
    const [p] = res.body.projects as WireProject[];
    expect(p).toMatchObject({ name: 'default', is_default: true, metadata: {}, document_count: 0, chunk_count: 0, size_bytes: 0 });
    expect(p!.id).toMatch(/^prj_/);
    expect(p!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });

  it('create, get, rename, change metadata, delete', async () => {
    const created = await api(d, '/api/v1/projects', {
      token: a.apiKey,
      body: { name: 'Handbook', description: 'company handbook', metadata: { team: 'ops', year: 2025 } },
    });
    expect(created.status).toBe(201);
    const p = created.body as WireProject;
    expect(p).toMatchObject({ name: 'Handbook', description: 'company handbook', metadata: { team: 'ops', year: 2025 }, is_default: false, document_count: 0 });

    expect((await api(d, `/api/v1/projects/${p.id}`, { token: a.apiKey })).body).toEqual(p);

    const renamed = await api(d, `/api/v1/projects/${p.id}`, { method: 'PATCH', token: a.apiKey, body: { name: 'Staff handbook' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: p.id, name: 'Staff handbook', description: 'company handbook', metadata: { team: 'ops', year: 2025 } });
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(p.updated_at));
    expect(renamed.body.created_at).toBe(p.created_at);

    const meta = await api(d, `/api/v1/projects/${p.id}`, { method: 'PATCH', token: a.apiKey, body: { metadata: { team: 'people' } } });
    expect(meta.status).toBe(200);
    expect(meta.body.metadata).toEqual({ team: 'people' }); // replaced whole, not merged
    expect(meta.body.name).toBe('Staff handbook');

    const empty = await api(d, `/api/v1/projects/${p.id}`, { method: 'PATCH', token: a.apiKey, body: {} });
    expect(empty.status).toBe(400);
    const nothing = 'body: nothing to change (name, description, metadata, language or ocr_languages)';
    expect(empty.body.error).toMatchObject({ code: 'invalid_request', message: nothing, details: [{ path: 'body', message: nothing }] });

    expect((await list(a)).map((x) => x.name)).toEqual(['default', 'Staff handbook']);

    const del = await api(d, `/api/v1/projects/${p.id}`, { method: 'DELETE', token: a.apiKey });
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    const gone = await api(d, `/api/v1/projects/${p.id}`, { token: a.apiKey });
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ code: 'not_found', message: 'project not found' });
    expect((await list(a)).map((x) => x.name)).toEqual(['default']);
  });

  it('names are unique per user, case-insensitively: 409 conflict', async () => {
    const first = await api(d, '/api/v1/projects', { token: a.apiKey, body: { name: 'Research' } });
    expect(first.status).toBe(201);
    const dup = await api(d, '/api/v1/projects', { token: a.apiKey, body: { name: 'research' } });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'conflict', message: 'a project named "research" already exists' });
    // Renaming onto a taken name is a conflict too; another user may use the same name.
    const rename = await api(d, `/api/v1/projects/${first.body.id}`, { method: 'PATCH', token: a.apiKey, body: { name: 'DEFAULT' } });
    expect(rename.status).toBe(409);
    expect(rename.body.error.code).toBe('conflict');
    expect((await api(d, '/api/v1/projects', { token: b.apiKey, body: { name: 'Research' } })).status).toBe(201);
  });

  it('the default project cannot be deleted', async () => {
    const def = (await list(a)).find((p) => p.is_default)!;
    const res = await api(d, `/api/v1/projects/${def.id}`, { method: 'DELETE', token: a.apiKey });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'conflict', message: 'the default project cannot be deleted' });
    expect((await api(d, `/api/v1/projects/${def.id}`, { token: a.apiKey })).status).toBe(200);
  });

  it('rejects invalid names and bodies by field', async () => {
    const blank = await api(d, '/api/v1/projects', { token: a.apiKey, body: { name: '   ' } });
    expect(blank.status).toBe(400);
    expect(blank.body.error.message).toMatch(/^body\.name: /);
    const ctrl = await api(d, '/api/v1/projects', { token: a.apiKey, body: { name: 'a\u0007b' } });
    expect(ctrl.status).toBe(400);
    expect(ctrl.body.error.message).toBe('body.name: must not contain U+0007 (a control character)');
    const big = await api(d, '/api/v1/projects', { token: a.apiKey, body: { name: 'big', metadata: { blob: 'x'.repeat(20_000) } } });
    expect(big.status).toBe(400);
    expect(big.body.error.message).toBe('body.metadata: must be at most 16 KiB of JSON');
    const missing = await api(d, '/api/v1/projects', { token: a.apiKey, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/^body\.name: /);
  });

  it('paginates with limit and next_cursor across pages without gaps or repeats', async () => {
    const u = await addUser(d);
    const names = Array.from({ length: 7 }, (_, i) => `page-test-${i}`);
    for (const name of names) expect((await api(d, '/api/v1/projects', { token: u.apiKey, body: { name } })).status).toBe(201);

    const seen: string[] = [];
    const pageSizes: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await api(d, `/api/v1/projects?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: u.apiKey });
      expect(res.status).toBe(200);
      pageSizes.push(res.body.projects.length);
      seen.push(...res.body.projects.map((p: WireProject) => p.name));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(pageSizes).toEqual([3, 3, 2]);
    expect(seen).toEqual(['default', ...names]);

    const exact = await api(d, '/api/v1/projects?limit=8', { token: u.apiKey });
    expect(exact.body.projects).toHaveLength(8);
    expect(exact.body.next_cursor).toBeNull();
  });

  it('rejects a bad cursor or limit with 400', async () => {
    const bad = await api(d, '/api/v1/projects?cursor=garbage', { token: a.apiKey });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', message: 'query.cursor: not a cursor this server issued for this list, or no longer valid; leave it out to start again from the first page' });
    for (const limit of ['0', '101', 'ten']) {
      const res = await api(d, `/api/v1/projects?limit=${limit}`, { token: a.apiKey });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/^query\.limit: /);
    }
    const unknown = await api(d, '/api/v1/projects?sort=name', { token: a.apiKey });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toBe('unknown field "sort" in query');
  });

  it("user A gets 404 on user B's project for GET, PATCH and DELETE", async () => {
    const bp = await api(d, '/api/v1/projects', { token: b.apiKey, body: { name: 'B private' } });
    expect(bp.status).toBe(201);
    const id = bp.body.id as string;
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'hijacked' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await api(d, `/api/v1/projects/${id}`, { method, token: a.apiKey, body });
      expect(res.status, method).toBe(404);
      expect(res.body.error, method).toMatchObject({ code: 'not_found', message: 'project not found' });
    }
    expect((await list(a)).map((p) => p.id)).not.toContain(id);
    // B's project is untouched.
    const still = await api(d, `/api/v1/projects/${id}`, { token: b.apiKey });
    expect(still.status).toBe(200);
    expect(still.body.name).toBe('B private');
  });

  it('counts documents, chunks and bytes once uploads exist', async () => {
    const p = await api(d, '/api/v1/projects', { token: a.apiKey, body: { name: 'counted' } });
    const text = 'Counting documents in a project.\n\nThe second paragraph adds a few more words to embed.\n';
    const form = new FormData();
    form.append('project_id', p.body.id);
    form.append('file', new Blob([text], { type: 'text/plain' }), 'count.txt');
    const up = await fetch(`${d.url}/api/v1/upload?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${a.apiKey}` }, body: form });
    expect(up.status).toBeLessThan(300);
    const got = await api(d, `/api/v1/projects/${p.body.id}`, { token: a.apiKey });
    expect(got.body.document_count).toBe(1);
    expect(got.body.size_bytes).toBe(Buffer.byteLength(text));
    expect(got.body.chunk_count).toBeGreaterThan(0);
  });
});
