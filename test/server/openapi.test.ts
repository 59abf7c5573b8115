import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';

/**
 * The contract test: every operation in /api/v1/openapi.json is called against a real daemon,
 * and every real response (successes and errors) is validated with ajv against the schema the
 * document declares for that operation and status. Routes come from the document itself, so a
 * new route is picked up automatically: the generic checks below run on it, and the coverage
 * check fails until it has answered 2xx at least once — through the generic GET call, or an
 * entry in EXERCISES for routes that need fixtures or a body.
 */

interface Operation {
  operationId: string;
  security?: { bearer?: string[] }[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { description: string; content?: Record<string, { schema: object }> }>;
}
type Doc = { openapi: string; info: { title: string; version: string }; paths: Record<string, Record<string, Operation>> };

interface Recorded {
  key: string; // "METHOD /api/v1/template"
  status: number;
  contentType: string | null;
  text: string;
  body: unknown;
}

interface Ctx {
  d: Daemon;
  /** A key with both scopes, and one with read:documents only, of the same user. */
  full: TestUser;
  readOnly: string;
  writeOnly: string;
  other: TestUser;
  call: (path: string, opts?: Parameters<typeof api>[2]) => Promise<{ status: number; headers: Headers; body: any }>;
  callRaw: (path: string, init: RequestInit) => Promise<{ status: number; body: any }>;
}

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Routes that need fixtures or a body to answer 2xx, keyed "METHOD /api/v1/path". Each also exercises its own errors. */
const EXERCISES: Record<string, (c: Ctx) => Promise<void>> = {
  'GET /api/v1/projects': async ({ call, full }) => {
    expect((await call('/api/v1/projects?limit=1', { token: full.apiKey })).status).toBe(200);
    expect((await call('/api/v1/projects?cursor=nope', { token: full.apiKey })).status).toBe(400);
  },
  'POST /api/v1/projects': async ({ call, full }) => {
    expect((await call('/api/v1/projects', { token: full.apiKey, body: { name: 'contract', metadata: { a: 1 } } })).status).toBe(201);
    expect((await call('/api/v1/projects', { token: full.apiKey, body: { name: 'Contract' } })).status).toBe(409);
  },
  'GET /api/v1/projects/{id}': async ({ call, full }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'to get' } });
    expect((await call(`/api/v1/projects/${p.body.id}`, { token: full.apiKey })).status).toBe(200);
    expect((await call('/api/v1/projects/prj_missing', { token: full.apiKey })).status).toBe(404);
  },
  'PATCH /api/v1/projects/{id}': async ({ call, full }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'to patch' } });
    expect((await call(`/api/v1/projects/${p.body.id}`, { method: 'PATCH', token: full.apiKey, body: { description: 'patched' } })).status).toBe(200);
    expect((await call(`/api/v1/projects/${p.body.id}`, { method: 'PATCH', token: full.apiKey, body: { name: 'default' } })).status).toBe(409);
    expect((await call('/api/v1/projects/prj_missing', { method: 'PATCH', token: full.apiKey, body: { name: 'x' } })).status).toBe(404);
  },
  'DELETE /api/v1/projects/{id}': async ({ call, full }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'to delete' } });
    expect((await call(`/api/v1/projects/${p.body.id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(204);
    expect((await call(`/api/v1/projects/${p.body.id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(404);
    const list = await call('/api/v1/projects', { token: full.apiKey });
    const def = list.body.projects.find((x: { is_default: boolean }) => x.is_default);
    expect((await call(`/api/v1/projects/${def.id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(409);
  },
  'GET /api/v1/projects/{id}/members': async ({ call, full, other }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'to list members of' } });
    expect((await call(`/api/v1/projects/${p.body.id}/members`, { token: full.apiKey })).status).toBe(200);
    expect((await call(`/api/v1/projects/${p.body.id}/members`, { token: other.apiKey })).status).toBe(404);
  },
  'POST /api/v1/projects/{id}/members': async ({ call, full, other }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'to share' } });
    const path = `/api/v1/projects/${p.body.id}/members`;
    expect((await call(path, { token: full.apiKey, body: { email: other.email, role: 'viewer' } })).status).toBe(201);
    expect((await call(path, { token: full.apiKey, body: { email: other.email, role: 'editor' } })).status).toBe(200);
    expect((await call(path, { token: other.apiKey, body: { email: full.email, role: 'viewer' } })).status).toBe(403); // an editor, no owner
    expect((await call(path, { token: full.apiKey, body: { email: 'nobody@example.com', role: 'viewer' } })).status).toBe(404);
  },
  'DELETE /api/v1/projects/{id}/members/{member_id}': async ({ call, full, other }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'to unshare' } });
    const path = `/api/v1/projects/${p.body.id}/members`;
    const member = await call(path, { token: full.apiKey, body: { email: other.email, role: 'viewer' } });
    expect((await call(`${path}/${member.body.id}`, { method: 'DELETE', token: other.apiKey })).status).toBe(403);
    expect((await call(`${path}/${member.body.id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(204);
    expect((await call(`${path}/${member.body.id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(404);
  },
  'GET /api/v1/projects/{id}/labels': async ({ d, call, full, other }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'to list labels of' } });
    await call(`/api/v1/projects/${p.body.id}/labels`, { token: full.apiKey, body: { name: 'unpaid' } });
    const res = await call(`/api/v1/projects/${p.body.id}/labels`, { token: full.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.labels).toMatchObject([{ name: 'unpaid', document_count: 0 }]);
    await call(`/api/v1/projects/${p.body.id}/labels`, { token: full.apiKey, body: { name: 'urgent' } });
    const page = await call(`/api/v1/projects/${p.body.id}/labels?limit=1`, { token: full.apiKey });
    expect(page.body.next_cursor).toEqual(expect.any(String));
    expect((await call(`/api/v1/projects/${p.body.id}/labels?cursor=${page.body.next_cursor}`, { token: full.apiKey })).body.labels).toMatchObject([{ name: 'urgent' }]);
    expect((await call(`/api/v1/projects/${p.body.id}/labels?cursor=nope`, { token: full.apiKey })).status).toBe(400);
    expect((await call(`/api/v1/projects/${p.body.id}/labels`, { token: other.apiKey })).status).toBe(404);
    // `q` finds labels by part of their name: declared, answered, and refused past a name's length.
    const declared = (await api(d, '/api/v1/openapi.json', { token: full.apiKey })).body.paths['/api/v1/projects/{id}/labels'].get.parameters as { name: string; in: string }[];
    expect(declared).toContainEqual(expect.objectContaining({ name: 'q', in: 'query' }));
    expect((await call(`/api/v1/projects/${p.body.id}/labels?q=RGEN&limit=1`, { token: full.apiKey })).body).toMatchObject({ labels: [{ name: 'urgent' }], next_cursor: null });
    expect((await call(`/api/v1/projects/${p.body.id}/labels?q=${'x'.repeat(65)}`, { token: full.apiKey })).status).toBe(400);
  },
  'POST /api/v1/projects/{id}/labels': async ({ call, full }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'to label' } });
    const path = `/api/v1/projects/${p.body.id}/labels`;
    expect((await call(path, { token: full.apiKey, body: { name: 'Urgent', color: 'red' } })).status).toBe(201);
    expect((await call(path, { token: full.apiKey, body: { name: 'urgent' } })).status).toBe(409);
    expect((await call(path, { token: full.apiKey, body: { name: 'a,b' } })).status).toBe(400);
    expect((await call(path, { token: full.apiKey, body: { name: 'x', color: 'chartreuse' } })).status).toBe(400);
  },
  'PATCH /api/v1/projects/{id}/labels/{label_id}': async ({ call, full }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'to rename labels in' } });
    const path = `/api/v1/projects/${p.body.id}/labels`;
    const a = await call(path, { token: full.apiKey, body: { name: 'draft' } });
    await call(path, { token: full.apiKey, body: { name: 'final' } });
    const res = await call(`${path}/${a.body.id}`, { method: 'PATCH', token: full.apiKey, body: { name: 'review', color: 'blue' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'review', color: 'blue' });
    expect((await call(`${path}/${a.body.id}`, { method: 'PATCH', token: full.apiKey, body: { name: 'FINAL' } })).status).toBe(409);
    expect((await call(`${path}/lbl_missing`, { method: 'PATCH', token: full.apiKey, body: { color: 'red' } })).status).toBe(404);
  },
  'DELETE /api/v1/projects/{id}/labels/{label_id}': async ({ call, full }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'to delete labels in' } });
    const path = `/api/v1/projects/${p.body.id}/labels`;
    const a = await call(path, { token: full.apiKey, body: { name: 'gone' } });
    expect((await call(`${path}/${a.body.id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(204);
    expect((await call(`${path}/${a.body.id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(404);
  },
  'GET /api/v1/saved-searches': async ({ call, full, other }) => {
    await call('/api/v1/saved-searches', { token: full.apiKey, body: { name: 'listed', search: { query: 'leave' } } });
    const res = await call('/api/v1/saved-searches', { token: full.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.saved_searches.map((v: { name: string }) => v.name)).toContain('listed');
    expect((await call('/api/v1/saved-searches', { token: other.apiKey })).body.saved_searches.map((v: { name: string }) => v.name)).not.toContain('listed');
  },
  'POST /api/v1/saved-searches': async ({ call, full }) => {
    const body = { name: 'Unpaid', search: { query: 'invoice', filters: { labels: 'unpaid', type: ['pdf', 'docx'] }, facets: ['label'] } };
    expect((await call('/api/v1/saved-searches', { token: full.apiKey, body })).status).toBe(201);
    expect((await call('/api/v1/saved-searches', { token: full.apiKey, body: { ...body, name: 'UNPAID' } })).status).toBe(409);
    expect((await call('/api/v1/saved-searches', { token: full.apiKey, body: { name: 'x', search: { query: 'x', filters: { colour: 'red' } } } })).status).toBe(400);
    expect((await call('/api/v1/saved-searches', { token: full.apiKey, body: { ...body, name: 'y', project_id: 'prj_missing' } })).status).toBe(404);
  },
  'GET /api/v1/saved-searches/{id}': async ({ call, full, other }) => {
    const made = await call('/api/v1/saved-searches', { token: full.apiKey, body: { name: 'to get', search: { query: 'leave' } } });
    const res = await call(`/api/v1/saved-searches/${made.body.id}`, { token: full.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'to get', mine: true, project_id: null, search: { query: 'leave' } });
    expect((await call(`/api/v1/saved-searches/${made.body.id}`, { token: other.apiKey })).status).toBe(404);
  },
  'PATCH /api/v1/saved-searches/{id}': async ({ call, full, other }) => {
    const made = await call('/api/v1/saved-searches', { token: full.apiKey, body: { name: 'to rename', search: { query: 'leave' } } });
    await call('/api/v1/saved-searches', { token: full.apiKey, body: { name: 'kept name', search: { query: 'leave' } } });
    const renamed = await call(`/api/v1/saved-searches/${made.body.id}`, { method: 'PATCH', token: full.apiKey, body: { name: 'renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('renamed');
    expect((await call(`/api/v1/saved-searches/${made.body.id}`, { method: 'PATCH', token: full.apiKey, body: { name: 'KEPT NAME' } })).status).toBe(409);
    expect((await call(`/api/v1/saved-searches/${made.body.id}`, { method: 'PATCH', token: other.apiKey, body: { name: 'mine now' } })).status).toBe(404);
  },
  'DELETE /api/v1/saved-searches/{id}': async ({ call, full }) => {
    const made = await call('/api/v1/saved-searches', { token: full.apiKey, body: { name: 'to delete', search: { query: 'leave' } } });
    expect((await call(`/api/v1/saved-searches/${made.body.id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(204);
    expect((await call(`/api/v1/saved-searches/${made.body.id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(404);
  },
  'POST /api/v1/projects/{id}/transfer': async ({ call, full, other }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'to transfer' } });
    expect((await call(`/api/v1/projects/${p.body.id}/transfer`, { token: other.apiKey, body: { email: other.email } })).status).toBe(404);
    const moved = await call(`/api/v1/projects/${p.body.id}/transfer`, { token: full.apiKey, body: { email: other.email } });
    expect(moved.status).toBe(200);
    expect(moved.body.owner).toBe(other.email);
  },
  'GET /api/v1/projects/{id}/sources': async ({ call, full }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'listed sources' } });
    expect((await call(`/api/v1/projects/${p.body.id}/sources`, { token: full.apiKey })).status).toBe(200);
    expect((await call('/api/v1/projects/prj_missing/sources', { token: full.apiKey })).status).toBe(404);
  },
  'POST /api/v1/projects/{id}/sources': async ({ call, full }) => {
    const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'added sources' } });
    expect((await call(`/api/v1/projects/${p.body.id}/sources`, { token: full.apiKey, body: { url: 's3://contract-bucket/docs', every: '1d' } })).status).toBe(201);
    expect((await call(`/api/v1/projects/${p.body.id}/sources`, { token: full.apiKey, body: { url: 'gopher://example.com/' } })).status).toBe(400);
  },
  'GET /api/v1/projects/{id}/sources/{sid}': async ({ call, full }) => {
    const { project, source } = await someSource(call, full);
    expect((await call(`/api/v1/projects/${project}/sources/${source}`, { token: full.apiKey })).status).toBe(200);
    expect((await call(`/api/v1/projects/${project}/sources/src_missing`, { token: full.apiKey })).status).toBe(404);
  },
  'PATCH /api/v1/projects/{id}/sources/{sid}': async ({ call, full }) => {
    const { project, source } = await someSource(call, full);
    expect((await call(`/api/v1/projects/${project}/sources/${source}`, { method: 'PATCH', token: full.apiKey, body: { every: '2d' } })).status).toBe(200);
    expect((await call(`/api/v1/projects/${project}/sources/${source}`, { method: 'PATCH', token: full.apiKey, body: {} })).status).toBe(400);
  },
  'POST /api/v1/projects/{id}/sources/{sid}/sync': async ({ call, full }) => {
    const { project, source } = await someSource(call, full);
    expect((await call(`/api/v1/projects/${project}/sources/${source}/sync`, { method: 'POST', token: full.apiKey, body: {} })).status).toBe(202);
    expect((await call(`/api/v1/projects/${project}/sources/${source}`, { method: 'PATCH', token: full.apiKey, body: { status: 'paused' } })).status).toBe(200);
    expect((await call(`/api/v1/projects/${project}/sources/${source}/sync`, { method: 'POST', token: full.apiKey, body: {} })).status).toBe(409);
  },
  'DELETE /api/v1/projects/{id}/sources/{sid}': async ({ call, full }) => {
    const { project, source } = await someSource(call, full);
    expect((await call(`/api/v1/projects/${project}/sources/${source}?keep_documents=true`, { method: 'DELETE', token: full.apiKey })).status).toBe(204);
    expect((await call(`/api/v1/projects/${project}/sources/${source}`, { method: 'DELETE', token: full.apiKey })).status).toBe(404);
  },
  'POST /api/v1/keys': async ({ call, full, writeOnly }) => {
    expect((await call('/api/v1/keys', { token: full.apiKey, body: { name: 'contract', scopes: ['read:documents'] } })).status).toBe(201);
    expect((await call('/api/v1/keys', { token: writeOnly, body: { scopes: ['read:documents'] } })).status).toBe(403);
  },
  'DELETE /api/v1/keys/{id}': async ({ call, full }) => {
    const k = await call('/api/v1/keys', { token: full.apiKey, body: { name: 'to revoke' } });
    expect((await call(`/api/v1/keys/${k.body.id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(204);
    expect((await call(`/api/v1/keys/${k.body.id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(404);
  },
  // Routes of the ingestion and search capabilities (ARCHITECTURE §3); they run once those routes are in the document.
  'POST /api/v1/upload': async ({ callRaw, full }) => {
    const form = new FormData();
    form.append('file', new Blob(['The contract test uploads this small text file.\n'], { type: 'text/plain' }), 'contract.txt');
    const up = await callRaw('/api/v1/upload?wait=true', { method: 'POST', headers: { authorization: `Bearer ${full.apiKey}` }, body: form });
    expect(up.status).toBeLessThan(300);
    const bad = new FormData();
    bad.append('file', new Blob([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0, 0, 0, 0])]), 'program.bin');
    expect((await callRaw('/api/v1/upload', { method: 'POST', headers: { authorization: `Bearer ${full.apiKey}` }, body: bad })).status).toBe(415);
  },
  'GET /api/v1/documents/{id}': async ({ call, full }) => {
    const id = await someDocument(call, full);
    expect((await call(`/api/v1/documents/${id}`, { token: full.apiKey })).status).toBe(200);
    expect((await call('/api/v1/documents/doc_missing', { token: full.apiKey })).status).toBe(404);
  },
  'GET /api/v1/documents/{id}/file': async ({ call, full, other }) => {
    const id = await someDocument(call, full);
    const res = await call(`/api/v1/documents/${id}/file`, { token: full.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`inline; filename="contract.txt"; filename*=UTF-8''contract.txt`);
    expect(res.body).toBe('The contract test uploads this small text file.\n');
    expect((await call(`/api/v1/documents/${id}/file`, { token: other.apiKey })).status).toBe(404);
    expect((await call('/api/v1/documents/doc_missing/file', { token: full.apiKey })).status).toBe(404);
  },
  'GET /api/v1/documents/{id}/text': async ({ call, full, other }) => {
    const id = await someDocument(call, full);
    const res = await call(`/api/v1/documents/${id}/text?limit=1`, { token: full.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.pages[0].chunks[0].text).toContain('contract test');
    expect((await call(`/api/v1/documents/${id}/text`, { token: other.apiKey })).status).toBe(404);
    expect((await call(`/api/v1/documents/${id}/text?cursor=nope`, { token: full.apiKey })).status).toBe(400);
  },
  'GET /api/v1/documents/{id}/thumbnail': async ({ call, callRaw, full }) => {
    const form = new FormData();
    form.append('file', new Blob([makePdf([[{ lines: ['A one-page PDF for the thumbnail.'] }]])]), 'thumb.pdf');
    const up = await callRaw('/api/v1/upload?wait=true', { method: 'POST', headers: { authorization: `Bearer ${full.apiKey}` }, body: form });
    const res = await call(`/api/v1/documents/${up.body.documents[0].id}/thumbnail`, { token: full.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect((await call(`/api/v1/documents/${up.body.documents[0].id}/thumbnail?page=1`, { token: full.apiKey })).status).toBe(200);
    expect((await call(`/api/v1/documents/${up.body.documents[0].id}/thumbnail?page=2`, { token: full.apiKey })).status).toBe(404); // one page
    expect((await call(`/api/v1/documents/${up.body.documents[0].id}/thumbnail?page=0`, { token: full.apiKey })).status).toBe(400);
    expect((await call(`/api/v1/documents/${await someDocument(call, full)}/thumbnail`, { token: full.apiKey })).status).toBe(404);
  },
  'PATCH /api/v1/documents/{id}': async ({ call, full }) => {
    const id = await someDocument(call, full);
    const project = await call('/api/v1/projects', { token: full.apiKey, body: { name: 'moved here' } });
    const res = await call(`/api/v1/documents/${id}`, { method: 'PATCH', token: full.apiKey, body: { filename: 'contract renamed.txt', project_id: project.body.id } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ filename: 'contract renamed.txt', project_id: project.body.id });
    expect((await call(`/api/v1/documents/${id}`, { method: 'PATCH', token: full.apiKey, body: { project_id: 'prj_missing' } })).status).toBe(404);
    expect((await call(`/api/v1/documents/${id}`, { method: 'PATCH', token: full.apiKey, body: { filename: '' } })).status).toBe(400);
  },
  'POST /api/v1/documents/{id}/retry': async ({ call, callRaw, full }) => {
    const form = new FormData();
    form.append('file', new Blob(['%PDF-1.7\nnot really a PDF after all\n']), 'damaged.pdf');
    const up = await callRaw('/api/v1/upload?wait=true', { method: 'POST', headers: { authorization: `Bearer ${full.apiKey}` }, body: form });
    const damaged = up.body.documents[0];
    expect(damaged.status).toBe('failed');
    const res = await call(`/api/v1/documents/${damaged.id}/retry`, { method: 'POST', token: full.apiKey });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('queued');
    expect((await call(`/api/v1/documents/${await someDocument(call, full)}/retry`, { method: 'POST', token: full.apiKey })).status).toBe(409);
    expect((await call('/api/v1/documents/doc_missing/retry', { method: 'POST', token: full.apiKey })).status).toBe(404);
  },
  'DELETE /api/v1/documents/{id}': async ({ call, full }) => {
    const id = await someDocument(call, full);
    expect((await call(`/api/v1/documents/${id}`, { method: 'DELETE', token: full.apiKey })).status).toBeLessThan(300);
    expect((await call(`/api/v1/documents/${id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(404);
  },
  'POST /api/v1/trash/{id}/restore': async (c) => {
    const { call, full, other } = c;
    const id = await trashed(c, other, 'restore me');
    const res = await call(`/api/v1/trash/${id}/restore`, { method: 'POST', token: other.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(id);
    expect((await call(`/api/v1/trash/${id}/restore`, { method: 'POST', token: other.apiKey })).status).toBe(404);
    expect((await call(`/api/v1/trash/${await trashed(c, other, 'not yours')}/restore`, { method: 'POST', token: full.apiKey })).status).toBe(404);
  },
  'DELETE /api/v1/trash/{id}': async (c) => {
    const { call, other } = c;
    const id = await trashed(c, other, 'purge me');
    expect((await call(`/api/v1/trash/${id}`, { method: 'DELETE', token: other.apiKey })).status).toBe(204);
    expect((await call(`/api/v1/trash/${id}`, { method: 'DELETE', token: other.apiKey })).status).toBe(404);
  },
  // The admin API: `full` is the library's first account, its admin; `other` is not one.
  'GET /api/v1/admin/users/{user}': async ({ call, full, other }) => {
    expect((await call(`/api/v1/admin/users/${encodeURIComponent(other.email)}`, { token: full.apiKey })).status).toBe(200);
    expect((await call('/api/v1/admin/users/usr_missing', { token: full.apiKey })).status).toBe(404);
    expect((await call(`/api/v1/admin/users/${encodeURIComponent(full.email)}`, { token: other.apiKey })).status).toBe(403);
  },
  'PATCH /api/v1/admin/users/{user}': async ({ call, full }) => {
    expect((await call(`/api/v1/admin/users/${encodeURIComponent(full.email)}`, { method: 'PATCH', token: full.apiKey, body: { admin: true } })).status).toBe(200);
    expect((await call(`/api/v1/admin/users/${encodeURIComponent(full.email)}`, { method: 'PATCH', token: full.apiKey, body: { admin: false } })).status).toBe(409);
  },
  'PATCH /api/v1/admin/projects/{project}': async ({ call, full, other }) => {
    const p = await call('/api/v1/projects', { token: other.apiKey, body: { name: 'to cap' } });
    expect((await call(`/api/v1/admin/projects/${p.body.id}`, { method: 'PATCH', token: full.apiKey, body: { quota_bytes: 1_000_000 } })).status).toBe(200);
    expect((await call('/api/v1/admin/projects/prj_missing', { method: 'PATCH', token: full.apiKey, body: { quota_bytes: null } })).status).toBe(404);
    expect((await call(`/api/v1/admin/projects/${p.body.id}`, { method: 'PATCH', token: other.apiKey, body: { quota_bytes: null } })).status).toBe(403);
  },
  'POST /api/v1/admin/users/{user}/disable': async ({ call, d, full }) => {
    const spare = await addUser(d);
    expect((await call(`/api/v1/admin/users/${spare.email}/disable`, { method: 'POST', token: full.apiKey })).status).toBe(200);
    expect((await call(`/api/v1/admin/users/${spare.email}/enable`, { method: 'POST', token: full.apiKey })).status).toBe(200);
    expect((await call(`/api/v1/admin/users/${full.email}/disable`, { method: 'POST', token: full.apiKey })).status).toBe(400);
  },
  'POST /api/v1/admin/users/{user}/reset-link': async ({ call, full, other }) => {
    const res = await call(`/api/v1/admin/users/${other.email}/reset-link`, { token: full.apiKey, body: { send: false } });
    expect(res.status).toBe(201);
    expect(res.body.link).toMatch(/\/reset-password\?token=/);
    expect((await call(`/api/v1/admin/users/${other.email}/reset-link`, { token: full.apiKey, body: {} })).body).toMatchObject({ link: null, mailed: true });
  },
  'DELETE /api/v1/admin/users/{user}': async ({ call, d, full }) => {
    const spare = await addUser(d);
    expect((await call(`/api/v1/admin/users/${spare.email}`, { method: 'DELETE', token: full.apiKey })).status).toBe(200);
    expect((await call(`/api/v1/admin/users/${spare.email}`, { method: 'DELETE', token: full.apiKey })).status).toBe(404);
  },
  'POST /api/v1/admin/invitations': async ({ call, full }) => {
    expect((await call('/api/v1/admin/invitations', { token: full.apiKey, body: { emails: ['contract@example.com'] } })).status).toBe(201);
    expect((await call('/api/v1/admin/invitations', { token: full.apiKey, body: { emails: ['contract-2@example.com', full.email] } })).status).toBe(207);
    expect((await call('/api/v1/admin/invitations', { token: full.apiKey, body: { emails: [] } })).status).toBe(400);
  },
  'DELETE /api/v1/admin/invitations/{id}': async ({ call, full }) => {
    const made = await call('/api/v1/admin/invitations', { token: full.apiKey, body: { emails: ['revoked@example.com'] } });
    expect((await call(`/api/v1/admin/invitations/${made.body.invitations[0].id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(204);
    expect((await call(`/api/v1/admin/invitations/${made.body.invitations[0].id}`, { method: 'DELETE', token: full.apiKey })).status).toBe(404);
  },
  'POST /api/v1/admin/groups': async ({ call, full }) => {
    expect((await call('/api/v1/admin/groups', { token: full.apiKey, body: { name: 'contract' } })).status).toBe(201);
    expect((await call('/api/v1/admin/groups', { token: full.apiKey, body: { name: 'contract' } })).status).toBe(409);
  },
  'GET /api/v1/admin/groups/{group}': async ({ call, full, other }) => {
    await call('/api/v1/admin/groups', { token: full.apiKey, body: { name: 'members' } });
    expect((await call('/api/v1/admin/groups/members/members', { token: full.apiKey, body: { user: other.email } })).status).toBe(201);
    expect((await call('/api/v1/admin/groups/members/members', { token: full.apiKey, body: { user: other.email } })).status).toBe(200);
    expect((await call('/api/v1/admin/groups/members', { token: full.apiKey })).body.members).toEqual([{ id: expect.any(String), email: other.email }]);
    expect((await call(`/api/v1/admin/groups/members/members/${other.email}`, { method: 'DELETE', token: full.apiKey })).status).toBe(204);
    expect((await call(`/api/v1/admin/groups/members/members/${other.email}`, { method: 'DELETE', token: full.apiKey })).status).toBe(404);
    expect((await call('/api/v1/admin/groups/members', { method: 'DELETE', token: full.apiKey })).status).toBe(204);
    expect((await call('/api/v1/admin/groups/members', { token: full.apiKey })).status).toBe(404);
  },
  'POST /api/v1/admin/mail/test': async ({ call, full }) => {
    // The mail server this daemon names never answers: the mail waits in the outbox.
    expect((await call('/api/v1/admin/mail/test', { token: full.apiKey, body: {} })).status).toBe(202);
    expect((await call('/api/v1/admin/mail/retry', { method: 'POST', token: full.apiKey })).status).toBe(200);
  },
  'POST /api/v1/reindex': async ({ call, full }) => {
    expect((await call('/api/v1/reindex', { method: 'POST', token: full.apiKey })).status).toBeLessThan(300);
  },
  'POST /api/v1/search': async ({ call, callRaw, full, other }) => {
    // Two matching documents (of the other user, so the document routes' fixtures stay as they are): a page of one has a next page.
    const form = new FormData();
    form.append('file', new Blob(['A small text file for the contract test of search.\n'], { type: 'text/plain' }), 'contract-1.txt');
    form.append('file', new Blob(['Another small text file for the contract test of search.\n'], { type: 'text/plain' }), 'contract-2.txt');
    expect((await callRaw('/api/v1/upload?wait=true', { method: 'POST', headers: { authorization: `Bearer ${other.apiKey}` }, body: form })).status).toBe(200);
    const body = { query: 'contract test', limit: 1, mode: 'keyword' };
    const flat = await call('/api/v1/search', { token: other.apiKey, body });
    expect(flat.status).toBe(200);
    expect(flat.body.next_cursor).toEqual(expect.any(String));
    expect((await call('/api/v1/search', { token: other.apiKey, body: { ...body, cursor: flat.body.next_cursor } })).status).toBe(200);
    expect((await call('/api/v1/search', { token: other.apiKey, body: { query: 'contract test', limit: 5, group: 'document' } })).status).toBe(200);
    expect((await call('/api/v1/search', { token: full.apiKey, body: { query: 'contract test', limit: 5 } })).status).toBe(200);
    expect((await call('/api/v1/search', { token: full.apiKey, body: { query: '', limit: 5 } })).status).toBe(400);
    expect((await call('/api/v1/search', { token: full.apiKey, body: { ...body, cursor: flat.body.next_cursor } })).status).toBe(400);
  },
};

/** Uploads a small TXT and returns its document id (for document routes). */
/** A new source (an S3 bucket nobody can reach from here: adding one connects to nothing). */
async function someSource(call: Ctx['call'], full: TestUser): Promise<{ project: string; source: string }> {
  const p = await call('/api/v1/projects', { token: full.apiKey, body: { name: `sources ${Math.random().toString(36).slice(2)}` } });
  const s = await call(`/api/v1/projects/${p.body.id}/sources`, { token: full.apiKey, body: { url: 's3://contract-bucket/docs', every: '1d' } });
  expect(s.status).toBe(201);
  return { project: p.body.id, source: s.body.id };
}

async function someDocument(call: Ctx['call'], full: TestUser): Promise<string> {
  const list = await call('/api/v1/documents', { token: full.apiKey });
  const first = (list.body?.documents ?? [])[0];
  if (first) return first.id;
  throw new Error('no document to exercise: POST /api/v1/upload must run first');
}

/** A note of `user`'s, uploaded and deleted: its id, in the trash. */
async function trashed({ call, callRaw }: Pick<Ctx, 'call' | 'callRaw'>, user: TestUser, text: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([`${text}: a note for the trash routes.\n`], { type: 'text/plain' }), `${text}.txt`);
  const up = await callRaw('/api/v1/upload?wait=true', { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
  const id = up.body.documents[0].id as string;
  expect((await call(`/api/v1/documents/${id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
  return id;
}

function matcherFor(template: string): RegExp {
  return new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
}

describe('OpenAPI document and real responses', () => {
  let d: Daemon;
  let doc: Doc;
  let ctx: Ctx;
  const recorded: Recorded[] = [];
  const matchers: { template: string; re: RegExp }[] = [];

  function record(method: string, path: string, status: number, headers: Headers, text: string, body: unknown) {
    const pathname = path.split('?')[0]!;
    const m = matchers.find((x) => x.re.test(pathname));
    recorded.push({ key: `${method.toUpperCase()} ${m ? m.template : pathname}`, status, contentType: headers.get('content-type'), text, body });
  }

  beforeAll(async () => {
    // A mail server that is not there: mail routes queue what they would send.
    d = await startDaemon({ args: ['--smtp-url', 'smtp://127.0.0.1:9'] });
    const full = await addUser(d);
    const readOnly = await api(d, '/api/v1/keys', { token: full.apiKey, body: { name: 'read only', scopes: ['read:documents'] } });
    const writeOnly = await api(d, '/api/v1/keys', { token: full.apiKey, body: { name: 'write only', scopes: ['write:documents'] } });
    // The spec: every endpoint under /api/v1 requires authentication (health is the one it leaves open).
    const anon = await api(d, '/api/v1/openapi.json');
    expect(anon.status).toBe(401);
    expect(anon.body.error.code).toBe('unauthorized');
    expect(anon.headers.get('www-authenticate')).toBe('Bearer realm="docsearch"');
    const res = await api(d, '/api/v1/openapi.json', { token: full.apiKey });
    expect(res.status).toBe(200);
    doc = res.body;
    for (const template of Object.keys(doc.paths ?? {})) matchers.push({ template, re: matcherFor(template) });
    // Literal paths win over templated ones (/documents/search before /documents/{id}).
    matchers.sort((a, b) => Number(a.template.includes('{')) - Number(b.template.includes('{')));
    ctx = {
      d,
      full,
      readOnly: readOnly.body.key,
      writeOnly: writeOnly.body.key,
      other: await addUser(d),
      async call(path, opts = {}) {
        const method = opts.method ?? (opts.body !== undefined ? 'POST' : 'GET');
        const r = await api(d, path, opts);
        record(method, path, r.status, r.headers, typeof r.body === 'string' ? r.body : JSON.stringify(r.body ?? ''), r.body);
        return r;
      },
      async callRaw(path, init) {
        const r = await fetch(d.url + path, init);
        const text = await r.text();
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          /* keep text */
        }
        record(init.method ?? 'GET', path, r.status, r.headers, text, body);
        return { status: r.status, body };
      },
    };
  });
  afterAll(async () => {
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  const operations = () =>
    Object.entries(doc.paths).flatMap(([template, item]) =>
      HTTP_METHODS.filter((m) => item[m]).map((m) => ({ template, method: m.toUpperCase(), op: item[m]!, key: `${m.toUpperCase()} ${template}` })),
    );
  const concrete = (template: string) => template.replace(/\{[^}]+\}/g, 'zzz_placeholder');

  it('is an OpenAPI 3.1 document', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
    const ids = new Set<string>();
    for (const { key, op, template } of operations()) {
      expect(template, key).toMatch(/^\/api\/v1\//);
      expect(op.operationId, key).toBeTruthy();
      expect(ids.has(op.operationId), `duplicate operationId ${op.operationId}`).toBe(false);
      ids.add(op.operationId);
      expect(Object.keys(op.responses).length, key).toBeGreaterThan(0);
      for (const status of Object.keys(op.responses)) expect(status, key).toMatch(/^([1-5]\d\d|default)$/);
      for (const p of op.parameters ?? []) if (p.in === 'path') expect(template, key).toContain(`{${p.name}}`);
      for (const r of Object.values(op.responses)) for (const media of Object.values(r.content ?? {})) expect(media.schema, key).toBeTypeOf('object');
    }
    expect(ids).toContain('health');
  });

  it('generic checks on every route: credentials, scopes, body parsing', async () => {
    const { call, callRaw, full, readOnly } = ctx;
    for (const { template, method, op, key } of operations()) {
      const path = concrete(template);
      const scopes = op.security?.flatMap((s) => s.bearer ?? []) ?? [];
      const json = op.requestBody?.content['application/json'] !== undefined;
      const body = method === 'GET' || method === 'DELETE' ? undefined : {};
      if (scopes.length > 0) {
        const anon = await call(path, { method, body });
        expect(anon.status, `${key} without a credential`).toBe(401);
        expect(anon.headers.get('www-authenticate'), key).toMatch(/^Bearer /);
        const garbled = await call(path, { method, body, token: 'dsk_garbled' });
        expect(garbled.status, `${key} with a garbled credential`).toBe(401);
        if (scopes.includes('write:documents')) {
          const ro = await call(path, { method, body, token: readOnly });
          expect(ro.status, `${key} with a read-only key`).toBe(403);
          expect(ro.body.error.code).toBe('insufficient_scope');
        }
      } else {
        expect(method, `${key} is public: only reads may be`).toBe('GET');
      }
      if (json) {
        const unknown = await call(path, { method, token: full.apiKey, body: { zz_unknown_field: 1 } });
        expect(unknown.status, `${key} with an unknown field`).toBe(400);
        expect(unknown.body.error.message, key).toContain('"zz_unknown_field"');
        const garbage = await call(path, { method, token: full.apiKey, body: '{"oops":' });
        expect(garbage.status, `${key} with invalid JSON`).toBe(400);
        const form = await callRaw(path, { method, headers: { authorization: `Bearer ${full.apiKey}`, 'content-type': 'text/plain' }, body: 'x' });
        expect(form.status, `${key} with text/plain`).toBe(415);
      }
      // Parameterless reads need no fixture: they must succeed as they are.
      if (method === 'GET' && !template.includes('{') && !(op.parameters ?? []).some((p) => p.required)) {
        const ok = await call(template, { token: full.apiKey });
        expect(ok.status, `${key} with a full key`).toBeLessThan(300);
      }
    }
  });

  it('route-specific exercises (fixtures, bodies, their errors)', async () => {
    const declared = new Set(operations().map((o) => o.key));
    // Upload before the document routes, which use what it created.
    const rank = (key: string) => (key.includes('/upload') ? 1 : key.includes('/documents') ? 2 : 0);
    const order = Object.keys(EXERCISES).sort((a, b) => rank(a) - rank(b));
    for (const key of order) {
      if (!declared.has(key)) continue; // a capability not built yet
      await EXERCISES[key]!(ctx);
    }
  }, 300_000); // the first upload may build the built-in model's graph

  // Compiling schemas blocks the event loop for seconds: it runs only after every request is made,
  // so the client never reuses a keep-alive socket the daemon has meanwhile closed.
  it('every response schema in the document compiles as JSON Schema 2020-12', { timeout: 240_000 }, () => {
    for (const { key, op } of operations()) {
      for (const [status, r] of Object.entries(op.responses)) {
        for (const media of Object.values(r.content ?? {})) expect(() => new Ajv2020({ strict: false }).compile(media.schema), `${key} ${status}`).not.toThrow();
      }
    }
  });

  it('every real response matches the schema the document declares for its route and status', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const failures: string[] = [];
    const declared = new Map(operations().map((o) => [o.key, o.op]));
    for (const r of recorded) {
      const op = declared.get(r.key);
      if (!op) {
        failures.push(`${r.key} answered ${r.status} but is not in the document`);
        continue;
      }
      const spec = op.responses[String(r.status)] ?? op.responses.default;
      if (!spec) {
        failures.push(`${r.key} answered ${r.status}, which the document does not declare (declared: ${Object.keys(op.responses).join(', ')})`);
        continue;
      }
      const media = spec.content?.['application/json'];
      if (!media) {
        // A raw body (an original file) must carry one of the media types declared for it.
        const raw = Object.keys(spec.content ?? {});
        if (raw.length > 0) {
          if (!raw.some((m) => r.contentType?.startsWith(m))) failures.push(`${r.key} ${r.status}: content type ${r.contentType}, declared ${raw.join(', ')}`);
        } else if (r.text !== '' && r.text !== '""') failures.push(`${r.key} ${r.status}: declared without a body but answered ${r.text.slice(0, 100)}`);
        continue;
      }
      if (!r.contentType?.startsWith('application/json')) {
        failures.push(`${r.key} ${r.status}: content type ${r.contentType}, expected application/json`);
        continue;
      }
      const validate = ajv.compile(media.schema);
      if (!validate(r.body)) failures.push(`${r.key} ${r.status}: ${ajv.errorsText(validate.errors)}\n  body: ${r.text.slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
    expect(recorded.length).toBeGreaterThan(20);
  });

  it('every declared route was exercised and answered 2xx at least once', () => {
    const missing: string[] = [];
    for (const { key } of operations()) {
      if (!recorded.some((r) => r.key === key && r.status < 300)) {
        missing.push(`${key}: never answered 2xx — add an entry to EXERCISES in test/server/openapi.test.ts`);
      }
    }
    expect(missing).toEqual([]);
  });
});
