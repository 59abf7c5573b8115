/**
 * The permission matrix (issue 50): every cell of docs/permissions.md's tables, checked through the real
 * interfaces — the REST API, the web pages and forms, MCP over /mcp — against one daemon (SQLite here; the
 * `postgresql` project runs the file again on PostgreSQL). It also fails when a REST route, a web form, a web page
 * about one project or document, an MCP tool or resource exists that the tables do not name.
 *
 * Each operation that changes something runs on a project of its own (made like P), so a cell that wrongly let a
 * change through cannot spoil the cells after it.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountPages } from '../../src/server/app.js';
import { oauthRouters } from '../../src/server/oauth/index.js';
import type { Services } from '../../src/server/services.js';
import type { OAuthProvider } from '../../src/auth/oauth/provider.js';
import { addClient, getCode, pkce, post as oauthPost } from '../auth/oauth-flow.js';
import { addUser, api, type Daemon, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { httpClient } from '../mcp/mcp-client.js';
import { loggedIn, type PageResponse, type WebClient } from '../server/web-client.js';
import { type Outcome, type Principal, PRINCIPALS, readMatrix, type Row } from './matrix-table.js';
import { totpCode } from '../auth/two-factor/totp.js';

const WORD = 'zanzibarite';
const PDF = makePdf([[{ lines: [`The ${WORD} handbook explains how the quarterly audit is run.`, 'Every team files its report by the fifth day.'] }]], { title: 'Handbook' });
const TEXT = Buffer.from(`A note on ${WORD} for the team.\n`);

/** A project like P: Alice's, holding one document, shared with Bob (editor), Carol (viewer), the group "team" (editor) and Gina (viewer). */
interface Fixture {
  id: string;
  name: string;
  document: string;
  /** Bob's member id (DELETE …/members/{member_id}). */
  bob: string;
}

type Users = Record<'alice' | 'bob' | 'carol' | 'dan' | 'eve' | 'frank' | 'gina', TestUser>;

/** Which user each principal is, for the web (a browser has no key or token). */
const WEB_USER: Partial<Record<Principal, keyof Users>> = {
  owner: 'alice',
  editor: 'bob',
  viewer: 'carol',
  'group member': 'dan',
  'non-member': 'eve',
  admin: 'frank',
  disabled: 'gina',
};

const rows = readMatrix();
let d: Daemon;
let users: Users;
let q: string;
let shared: Fixture;
/** A project like P with D in its trash, for the cells that only look. */
let trashed: Fixture;
const bearer = {} as Record<Principal, string>;
const mcpBearer = {} as Record<Principal, string>;
const web = {} as Record<keyof Users, { client: WebClient; csrf: string }>;
const mcp = new Map<Principal, Client | 'refused'>();
let made = 0;

async function ok<T extends { status: number; body?: unknown }>(what: string, res: Promise<T>): Promise<T> {
  const r = await res;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

async function fixture(pdf = false): Promise<Fixture> {
  const name = `P${++made}`;
  const alice = users.alice.apiKey;
  const id = (await ok('create P', api(d, '/api/v1/projects', { token: alice, body: { name } }))).body.id as string;
  const up = await ok('upload D', uploadFiles(d, alice, [{ name: pdf ? 'handbook.pdf' : 'note.txt', bytes: pdf ? PDF : TEXT }], { projectId: id, query: '?wait=true' }));
  const document = up.body.documents[0].id as string;
  const share = (body: object) => ok('share P', api(d, `/api/v1/projects/${id}/members`, { token: alice, body }));
  const bob = (await share({ email: users.bob.email, role: 'editor' })).body.id as string;
  await share({ email: users.carol.email, role: 'viewer' });
  await share({ group: 'team', role: 'editor' });
  await share({ email: users.gina.email, role: 'viewer' });
  // D carries a label of P's: searches and lists filter by it, and facets count it.
  await ok('label D', api(d, `/api/v1/documents/${document}`, { method: 'PATCH', token: alice, body: { labels: ['matrix'] } }));
  return { id, name, document, bob };
}

/** A project like P and the id of its label "matrix" (D's). */
async function labelled(f: () => Promise<Fixture>): Promise<{ id: string; label: string }> {
  const p = await f();
  const labels = (await ok('labels', api(d, `/api/v1/projects/${p.id}/labels`, { token: users.alice.apiKey }))).body.labels as { id: string; name: string }[];
  return { id: p.id, label: labels.find((l) => l.name === 'matrix')!.id };
}

/** A project like P whose document Alice has deleted: D is in its trash. */
async function inTrash(f: () => Promise<Fixture>): Promise<Fixture> {
  const p = await f();
  await ok('delete D', api(d, `/api/v1/documents/${p.document}`, { method: 'DELETE', token: users.alice.apiKey }));
  return p;
}

async function operator(...args: string[]): Promise<void> {
  const res = await runCli(args, { env: d.env });
  if (res.code !== 0) throw new Error(`docsearch ${args.join(' ')} (${res.code}): ${res.stderr}`);
}

/** An access token of Alice's with read:documents only, for the REST API (no resource) or for /mcp. */
async function readOnlyToken(client: { clientId: string; clientSecret: string | null }, resource?: string): Promise<string> {
  const browser = await loggedIn(d, users.alice);
  const { verifier, challenge } = pkce();
  const redirect = 'http://127.0.0.1:9/callback';
  const code = await getCode(browser, { client_id: client.clientId, redirect_uri: redirect, scope: 'read:documents', state: 's', code_challenge: challenge, code_challenge_method: 'S256', resource });
  const res = await oauthPost(d, '/api/oauth/token', {
    grant_type: 'authorization_code',
    code,
    client_id: client.clientId,
    client_secret: client.clientSecret ?? undefined,
    redirect_uri: redirect,
    code_verifier: verifier,
    resource,
  });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body.scope).toBe('read:documents');
  return res.body.access_token as string;
}

const refusal = (status: number): Outcome | null => (status === 401 ? '401' : status === 403 ? '403' : status === 404 ? '404' : null);

/** A REST answer as a cell: refused by status, else allowed, or ∅ when `shows` says P or D is absent. */
function restOutcome(res: { status: number; body: any }, shows?: (body: any) => boolean): Outcome {
  const refused = refusal(res.status);
  if (refused) return refused;
  if (res.status >= 500) throw new Error(`answered ${res.status}: ${JSON.stringify(res.body)}`);
  return shows && !shows(res.body) ? '∅' : '✓';
}

/** The REST cells: how each operation is done to P (or D) with a credential. */
const REST: Record<string, (token: string, f: () => Promise<Fixture>) => Promise<Outcome>> = {
  'GET /api/v1/health': async (token) => restOutcome(await api(d, '/api/v1/health', { token })),
  'GET /api/v1/me': async (token) => restOutcome(await api(d, '/api/v1/me', { token })),
  'GET /api/v1/projects': async (token) => restOutcome(await api(d, '/api/v1/projects?limit=100', { token }), (b) => b.projects.some((p: { id: string }) => p.id === shared.id)),
  'POST /api/v1/projects': async (token) => restOutcome(await api(d, '/api/v1/projects', { token, body: { name: `made ${++made}` } })),
  'GET /api/v1/projects/{id}': async (token) => restOutcome(await api(d, `/api/v1/projects/${shared.id}`, { token })),
  'PATCH /api/v1/projects/{id}': async (token, f) => restOutcome(await api(d, `/api/v1/projects/${(await f()).id}`, { method: 'PATCH', token, body: { description: 'changed' } })),
  'DELETE /api/v1/projects/{id}': async (token, f) => restOutcome(await api(d, `/api/v1/projects/${(await f()).id}`, { method: 'DELETE', token })),
  'GET /api/v1/projects/{id}/members': async (token) => restOutcome(await api(d, `/api/v1/projects/${shared.id}/members`, { token })),
  'GET /api/v1/projects/{id}/labels': async (token) => restOutcome(await api(d, `/api/v1/projects/${shared.id}/labels`, { token })),
  'POST /api/v1/projects/{id}/labels': async (token, f) => restOutcome(await api(d, `/api/v1/projects/${(await f()).id}/labels`, { token, body: { name: `made ${++made}` } })),
  'PATCH /api/v1/projects/{id}/labels/{label_id}': async (token, f) => {
    const { id, label } = await labelled(f);
    return restOutcome(await api(d, `/api/v1/projects/${id}/labels/${label}`, { method: 'PATCH', token, body: { color: 'red' } }));
  },
  'DELETE /api/v1/projects/{id}/labels/{label_id}': async (token, f) => {
    const { id, label } = await labelled(f);
    return restOutcome(await api(d, `/api/v1/projects/${id}/labels/${label}`, { method: 'DELETE', token }));
  },
  'POST /api/v1/projects/{id}/members': async (token, f) => restOutcome(await api(d, `/api/v1/projects/${(await f()).id}/members`, { token, body: { email: users.eve.email, role: 'viewer' } })),
  'DELETE /api/v1/projects/{id}/members/{member_id}': async (token, f) => {
    const p = await f();
    return restOutcome(await api(d, `/api/v1/projects/${p.id}/members/${p.bob}`, { method: 'DELETE', token }));
  },
  'POST /api/v1/projects/{id}/transfer': async (token, f) => restOutcome(await api(d, `/api/v1/projects/${(await f()).id}/transfer`, { token, body: { email: users.eve.email } })),
  'GET /api/v1/projects/{id}/sources': async (token) => restOutcome(await api(d, `/api/v1/projects/${shared.id}/sources`, { token })),
  'POST /api/v1/projects/{id}/sources': async (token, f) => restOutcome(await api(d, `/api/v1/projects/${(await f()).id}/sources`, { token, body: { url: SOURCE_URL, every: '1d' } })),
  'GET /api/v1/projects/{id}/sources/{sid}': async (token) => restOutcome(await api(d, `/api/v1/projects/${shared.id}/sources/${await sharedSource()}`, { token })),
  'PATCH /api/v1/projects/{id}/sources/{sid}': async (token, f) => {
    const p = await withSource(await f());
    return restOutcome(await api(d, `/api/v1/projects/${p.id}/sources/${p.source}`, { method: 'PATCH', token, body: { every: '2d' } }));
  },
  'DELETE /api/v1/projects/{id}/sources/{sid}': async (token, f) => {
    const p = await withSource(await f());
    return restOutcome(await api(d, `/api/v1/projects/${p.id}/sources/${p.source}?keep_documents=true`, { method: 'DELETE', token }));
  },
  'POST /api/v1/projects/{id}/sources/{sid}/sync': async (token) => restOutcome(await api(d, `/api/v1/projects/${shared.id}/sources/${await sharedSource()}/sync`, { method: 'POST', token, body: {} })),
  'GET /api/v1/keys': async (token) => restOutcome(await api(d, '/api/v1/keys', { token })),
  'POST /api/v1/keys': async (token) => restOutcome(await api(d, '/api/v1/keys', { token, body: { name: 'matrix' } })),
  'DELETE /api/v1/keys/{id}': async (token) => {
    // A key of the caller's own, made with the same credential where it may make one (else any id: refused first).
    const made = await api(d, '/api/v1/keys', { token, body: { name: 'to revoke' } });
    return restOutcome(await api(d, `/api/v1/keys/${made.status === 201 ? made.body.id : 'key_none'}`, { method: 'DELETE', token }));
  },
  'POST /api/v1/upload': async (token) => restOutcome(await uploadFiles(d, token, [{ name: `up-${++made}.txt`, bytes: Buffer.from(`upload ${made}\n`) }], { projectId: shared.id })),
  'GET /api/v1/documents': async (token) => restOutcome(await api(d, '/api/v1/documents?limit=100&labels=matrix', { token }), (b) => b.documents.some((x: { id: string }) => x.id === shared.document)),
  'GET /api/v1/documents/{id}': async (token) => restOutcome(await api(d, `/api/v1/documents/${shared.document}`, { token })),
  'GET /api/v1/documents/{id}/file': async (token) => restOutcome(await api(d, `/api/v1/documents/${shared.document}/file`, { token })),
  'GET /api/v1/documents/{id}/text': async (token) => restOutcome(await api(d, `/api/v1/documents/${shared.document}/text`, { token })),
  'GET /api/v1/documents/{id}/thumbnail': async (token) => restOutcome(await api(d, `/api/v1/documents/${shared.document}/thumbnail`, { token })),
  'PATCH /api/v1/documents/{id}': async (token, f) => restOutcome(await api(d, `/api/v1/documents/${(await f()).document}`, { method: 'PATCH', token, body: { filename: 'renamed.txt' } })),
  'POST /api/v1/documents/{id}/retry': async (token) => restOutcome(await api(d, `/api/v1/documents/${shared.document}/retry`, { method: 'POST', token })),
  'DELETE /api/v1/documents/{id}': async (token, f) => restOutcome(await api(d, `/api/v1/documents/${(await f()).document}`, { method: 'DELETE', token })),
  'GET /api/v1/trash': async (token) => restOutcome(await api(d, '/api/v1/trash?limit=100', { token }), (b) => b.documents.some((x: { id: string }) => x.id === trashed.document)),
  'POST /api/v1/trash/{id}/restore': async (token, f) => restOutcome(await api(d, `/api/v1/trash/${(await inTrash(f)).document}/restore`, { method: 'POST', token })),
  'DELETE /api/v1/trash/{id}': async (token, f) => restOutcome(await api(d, `/api/v1/trash/${(await inTrash(f)).document}`, { method: 'DELETE', token })),
  'POST /api/v1/search': async (token) =>
    restOutcome(await api(d, '/api/v1/search', { token, body: { query: `${WORD} handbook`, limit: 50, filters: { labels: ['matrix'] }, facets: ['project', 'label', 'type'] } }), (b) => {
      const shows = b.results.some((r: { document: { id: string } }) => r.document.id === shared.document);
      // The facets count the same list: they name P exactly when the results show D.
      const counted = b.facets.project.some((v: { value: string }) => v.value === shared.id);
      if (counted !== shows) throw new Error(`facets ${counted ? 'count' : 'leave out'} P while the results ${shows ? 'show' : 'leave out'} D: ${JSON.stringify(b.facets)}`);
      return shows;
    }),
  'GET /api/v1/reindex': async (token) => restOutcome(await api(d, '/api/v1/reindex', { token })),
  'POST /api/v1/reindex': async (token) => restOutcome(await api(d, '/api/v1/reindex', { method: 'POST', token })),
  'GET /api/v1/audit-events': async (token) => restOutcome(await api(d, '/api/v1/audit-events?limit=5', { token })),
};

/** A web answer as a cell: sent to sign in (401), a refusal page, or through; ∅ when `shows` says P or D is absent. */
function webOutcome(res: PageResponse, shows?: (res: PageResponse) => boolean): Outcome {
  if ((res.status === 302 || res.status === 303) && res.location?.startsWith('/login')) return '401';
  const refused = refusal(res.status);
  if (refused) return refused;
  if (res.status >= 500) throw new Error(`answered ${res.status}: ${res.text.slice(0, 300)}`);
  return shows && !shows(res) ? '∅' : '✓';
}

type WebSide = { client: WebClient; csrf: string; user: TestUser };

/** The web cells: each page or form, done to P or D by a signed-in person. */
const WEB: Record<string, (w: WebSide, f: () => Promise<Fixture>) => Promise<Outcome>> = {
  'GET /projects': async ({ client }) => webOutcome(await client.get('/projects'), (r) => r.text.includes(`/projects/${shared.id}"`)),
  'POST /projects': async ({ client, csrf }) => webOutcome(await client.post('/projects', { _csrf: csrf, name: `web ${++made}`, description: '' })),
  'GET /projects/:id': async ({ client }) => webOutcome(await client.get(`/projects/${shared.id}`)),
  'GET /projects/:id/documents.json': async ({ client }) => webOutcome(await client.request('GET', `/projects/${shared.id}/documents.json`, undefined, { accept: 'application/json' })),
  'POST /projects/:id/edit': async ({ client, csrf }, f) => {
    const p = await f();
    return webOutcome(await client.post(`/projects/${p.id}/edit`, { _csrf: csrf, name: p.name, description: 'changed' }));
  },
  'GET /projects/:id/delete': async ({ client }) => webOutcome(await client.get(`/projects/${shared.id}/delete`)),
  'POST /projects/:id/delete': async ({ client, csrf }, f) => webOutcome(await client.post(`/projects/${(await f()).id}/delete`, { _csrf: csrf })),
  'POST /projects/:id/upload': async ({ client, csrf }) => {
    const form = new FormData();
    form.append('file', new Blob([`web upload ${++made}\n`]), `web-${made}.txt`);
    return webOutcome(await client.request('POST', `/projects/${shared.id}/upload`, form, { 'x-csrf-token': csrf, accept: 'application/json' }));
  },
  'POST /projects/:id/members': async ({ client, csrf }, f) => webOutcome(await client.post(`/projects/${(await f()).id}/members`, { _csrf: csrf, member: users.eve.email, role: 'viewer' })),
  'POST /projects/:id/members/:member_id/remove': async ({ client, csrf }, f) => {
    const p = await f();
    return webOutcome(await client.post(`/projects/${p.id}/members/${p.bob}/remove`, { _csrf: csrf }));
  },
  'POST /projects/:id/transfer': async ({ client, csrf }, f) => webOutcome(await client.post(`/projects/${(await f()).id}/transfer`, { _csrf: csrf, email: users.eve.email })),
  'GET /projects/:id/sources': async ({ client }) => webOutcome(await client.get(`/projects/${shared.id}/sources`)),
  'POST /projects/:id/sources': async ({ client, csrf }, f) => webOutcome(await client.post(`/projects/${(await f()).id}/sources`, { _csrf: csrf, kind: '', url: SOURCE_URL, every: '1d' })),
  'GET /projects/:id/sources/:sid/remove': async ({ client }) => webOutcome(await client.get(`/projects/${shared.id}/sources/${await sharedSource()}/remove`)),
  'POST /projects/:id/sources/:sid/sync': async ({ client, csrf }) => webOutcome(await client.post(`/projects/${shared.id}/sources/${await sharedSource()}/sync`, { _csrf: csrf })),
  'POST /projects/:id/sources/:sid/resume': async ({ client, csrf }) => webOutcome(await client.post(`/projects/${shared.id}/sources/${await sharedSource()}/resume`, { _csrf: csrf })),
  'POST /projects/:id/sources/:sid/pause': async ({ client, csrf }, f) => {
    const p = await withSource(await f());
    return webOutcome(await client.post(`/projects/${p.id}/sources/${p.source}/pause`, { _csrf: csrf }));
  },
  'POST /projects/:id/sources/:sid/remove': async ({ client, csrf }, f) => {
    const p = await withSource(await f());
    return webOutcome(await client.post(`/projects/${p.id}/sources/${p.source}/remove`, { _csrf: csrf, keep_documents: 'true' }));
  },
  'GET /documents': async ({ client }) => webOutcome(await client.get(`/documents?project_id=${shared.id}`), (r) => r.text.includes(`/documents/${shared.document}"`)),
  'POST /documents/bulk': async ({ client, csrf }) => {
    // Retry the selection: a ready document is "not failed" for whoever may change it, not selected at all for the rest.
    const res = await client.submit('/documents/bulk', { _csrf: csrf, ids: [shared.document], action: 'retry', return_to: '/documents' });
    return webOutcome(res, (r) => !r.text.includes('Select one or more documents first'));
  },
  'POST /documents/delete': async ({ client, csrf }, f) => {
    const p = await f();
    const res = await client.post('/documents/delete', { _csrf: csrf, ids: [p.document], return_to: '/documents' });
    const gone = (await api(d, `/api/v1/documents/${p.document}`, { token: users.alice.apiKey })).status === 404;
    return webOutcome(res, () => gone);
  },
  'GET /documents/:id': async ({ client }) => webOutcome(await client.get(`/documents/${shared.document}`)),
  'GET /documents/:id/file': async ({ client }) => webOutcome(await client.get(`/documents/${shared.document}/file`)),
  'GET /documents/:id/view': async ({ client }) => webOutcome(await client.get(`/documents/${shared.document}/view`)),
  'GET /documents/:id/thumbnail.webp': async ({ client }) => webOutcome(await client.get(`/documents/${shared.document}/thumbnail.webp`)),
  'GET /documents/:id/delete': async ({ client }) => webOutcome(await client.get(`/documents/${shared.document}/delete`)),
  'POST /documents/:id/delete': async ({ client, csrf }, f) => webOutcome(await client.post(`/documents/${(await f()).document}/delete`, { _csrf: csrf })),
  'POST /documents/:id/rename': async ({ client, csrf }, f) => webOutcome(await client.post(`/documents/${(await f()).document}/rename`, { _csrf: csrf, filename: 'renamed.txt' })),
  'POST /documents/:id/move': async ({ client, csrf, user }, f) => {
    const p = await f();
    // To a project the person edits: their own default one.
    const own = (await api(d, '/api/v1/projects?limit=100', { token: user.apiKey })).body?.projects?.find((x: { is_default: boolean; owner: string }) => x.is_default && x.owner === user.email);
    return webOutcome(await client.post(`/documents/${p.document}/move`, { _csrf: csrf, project_id: own?.id ?? 'prj_none' }));
  },
  'POST /documents/:id/retry': async ({ client, csrf }) => webOutcome(await client.post(`/documents/${shared.document}/retry`, { _csrf: csrf })),
  'GET /trash': async ({ client }) => webOutcome(await client.get('/trash'), (r) => r.text.includes(`/trash/${trashed.document}/restore`)),
  'POST /trash/:id/restore': async ({ client, csrf }, f) => webOutcome(await client.post(`/trash/${(await inTrash(f)).document}/restore`, { _csrf: csrf })),
  'GET /trash/:id/purge': async ({ client }) => webOutcome(await client.get(`/trash/${trashed.document}/purge`)),
  'POST /trash/:id/purge': async ({ client, csrf }, f) => webOutcome(await client.post(`/trash/${(await inTrash(f)).document}/purge`, { _csrf: csrf })),
  'GET /search': async ({ client }) => webOutcome(await client.get(`/search?q=${WORD}+handbook&view=passages`), (r) => r.text.includes(`/documents/${shared.document}`)),
  'POST /settings/keys': async ({ client, csrf }) => webOutcome(await client.post('/settings/keys', { _csrf: csrf, name: 'web key', scopes: ['read:documents'] })),
  'POST /settings/keys/:id/revoke': async ({ client, csrf, user }) => {
    const key = await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'to revoke on the web' } });
    return webOutcome(await client.post(`/settings/keys/${key.body?.id ?? 'key_none'}/revoke`, { _csrf: csrf }));
  },
  'POST /settings/account/email': async ({ client, csrf, user }) => webOutcome(await client.post('/settings/account/email', { _csrf: csrf, password: user.password, email: user.email })),
  'POST /settings/account/password': async ({ client, csrf, user }) =>
    webOutcome(await client.post('/settings/account/password', { _csrf: csrf, current_password: user.password, new_password: user.password, new_password_again: user.password })),
  'POST /settings/applications': async ({ client, csrf }) => webOutcome(await client.post('/settings/applications', { _csrf: csrf, name: 'Matrix app', redirect_uris: 'https://app.example.com/callback' })),
  'POST /settings/applications/:id/delete': async (w) => webOutcome(await w.client.post(`/settings/applications/${await ownApp(w)}/delete`, { _csrf: w.csrf })),
  'POST /settings/applications/:id/rotate': async (w) => webOutcome(await w.client.post(`/settings/applications/${await ownApp(w)}/rotate`, { _csrf: w.csrf })),
  'POST /settings/connected/:clientId/revoke': async ({ client, csrf }) => webOutcome(await client.post('/settings/connected/cli_none/revoke', { _csrf: csrf })),
  'POST /settings/security/totp/start': async ({ client, csrf }) => webOutcome(await client.post('/settings/security/totp/start', { _csrf: csrf })),
  'POST /settings/security/totp': async ({ client, csrf }) => {
    // Set up with the code the app would show (the disable row turns it off again).
    const started = await client.post('/settings/security/totp/start', { _csrf: csrf });
    if (started.location?.startsWith('/login')) return webOutcome(started);
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec((await client.get('/settings/security')).text)?.[1];
    if (!secret) throw new Error('no authenticator key on Settings → Security');
    return webOutcome(await client.post('/settings/security/totp', { _csrf: csrf, code: totpCode(secret) }));
  },
  'POST /settings/security/totp/disable': async ({ client, csrf, user }) => webOutcome(await client.post('/settings/security/totp/disable', { _csrf: csrf, password: user.password })),
  'POST /settings/security/recovery-codes': async ({ client, csrf, user }) => webOutcome(await client.post('/settings/security/recovery-codes', { _csrf: csrf, password: user.password })),
  // The matrix's daemon has an IP address for its public URL, so passkeys are not offered (409): access let it through.
  'POST /settings/security/passkeys/options': async ({ client, csrf }) => webOutcome(await client.request('POST', '/settings/security/passkeys/options', undefined, { 'x-csrf-token': csrf, accept: 'application/json' })),
  'POST /settings/security/passkeys': async ({ client, csrf }) =>
    webOutcome(await client.request('POST', '/settings/security/passkeys', undefined, { 'x-csrf-token': csrf, accept: 'application/json' })),
  'POST /settings/security/passkeys/:id/rename': async ({ client, csrf }) => webOutcome(await client.post('/settings/security/passkeys/pk_none/rename', { _csrf: csrf, name: 'renamed' })),
  'POST /settings/security/passkeys/:id/remove': async ({ client, csrf, user }) => webOutcome(await client.post('/settings/security/passkeys/pk_none/remove', { _csrf: csrf, password: user.password })),
  'POST /settings/security/passkey-sign-in': async ({ client, csrf }) => webOutcome(await client.post('/settings/security/passkey-sign-in', { _csrf: csrf, sign_in: 'second-factor' })),
  'POST /settings/security/sessions/:handle/end': async ({ client, csrf }) => webOutcome(await client.post('/settings/security/sessions/0000000000000000/end', { _csrf: csrf })),
  'POST /settings/security/sessions/end-others': async ({ client, csrf }) => webOutcome(await client.post('/settings/security/sessions/end-others', { _csrf: csrf })),
  'GET /admin/audit': async ({ client }) => webOutcome(await client.get('/admin/audit')),
  'GET /admin/users': async ({ client }) => webOutcome(await client.get('/admin/users')),
  'POST /admin/users/invite': async ({ client, csrf }) => webOutcome(await client.post('/admin/users/invite', { _csrf: csrf, email: `invited-${++made}@example.com` })),
  'POST /admin/users/:id/disable': async (w) => webOutcome(await w.client.post(`/admin/users/${await throwaway(w)}/disable`, { _csrf: w.csrf })),
  'POST /admin/users/:id/enable': async (w) => webOutcome(await w.client.post(`/admin/users/${await throwaway(w)}/enable`, { _csrf: w.csrf })),
  'POST /admin/users/:id/admin': async (w) => webOutcome(await w.client.post(`/admin/users/${await throwaway(w)}/admin`, { _csrf: w.csrf, admin: 'off' })),
  'GET /admin/users/:id/delete': async (w) => webOutcome(await w.client.get(`/admin/users/${await throwaway(w)}/delete`)),
  'POST /admin/users/:id/delete': async (w) => webOutcome(await w.client.post(`/admin/users/${await throwaway(w)}/delete`, { _csrf: w.csrf, transfer_to: users.frank.email })),
  'GET /admin/groups': async ({ client }) => webOutcome(await client.get('/admin/groups')),
  'POST /admin/groups': async ({ client, csrf }) => webOutcome(await client.post('/admin/groups', { _csrf: csrf, name: `group ${++made}`, description: '' })),
  'GET /admin/groups/:id': async (w) => webOutcome(await w.client.get(`/admin/groups/${await teamId()}`)),
  'POST /admin/groups/:id/delete': async (w) => webOutcome(await w.client.post(`/admin/groups/${await throwawayGroup(w)}/delete`, { _csrf: w.csrf })),
  'POST /admin/groups/:id/members': async (w) => webOutcome(await w.client.post(`/admin/groups/${await throwawayGroup(w)}/members`, { _csrf: w.csrf, email: users.eve.email })),
  'POST /admin/groups/:id/members/:user_id/remove': async (w) => webOutcome(await w.client.post(`/admin/groups/${await throwawayGroup(w)}/members/${await userId(users.eve)}/remove`, { _csrf: w.csrf })),
  'GET /admin/sharing': async ({ client }) => webOutcome(await client.get('/admin/sharing')),
  'POST /admin/sharing': async ({ client, csrf }) => webOutcome(await client.post('/admin/sharing', { _csrf: csrf, policy: 'anyone' })),
};

/** A source no test reaches (it fails its passes): what the source routes act on. */
const SOURCE_URL = 's3://permission-matrix-bucket/docs';
let sharedSourceId: string | undefined;

async function withSource<F extends Fixture>(p: F): Promise<F & { source: string }> {
  const res = await ok('add a source', api(d, `/api/v1/projects/${p.id}/sources`, { token: users.alice.apiKey, body: { url: SOURCE_URL, every: '1d' } }));
  return { ...p, source: res.body.id as string };
}

async function sharedSource(): Promise<string> {
  return (sharedSourceId ??= (await withSource(shared)).source);
}

async function userId(u: TestUser): Promise<string> {
  return (await api(d, '/api/v1/me', { token: u.apiKey })).body.id as string;
}

/** An account to act on in an admin cell (the admin's own cells change it; anyone else's are refused first). */
async function throwaway(w: WebSide): Promise<string> {
  return w.user === users.frank ? userId(await addUser(d)) : 'usr_none';
}

async function teamId(): Promise<string> {
  const page = await web.frank.client.get('/admin/groups');
  const id = /href="\/admin\/groups\/(grp_[0-9A-Za-z]+)"[^>]*>team</.exec(page.text)?.[1];
  if (!id) throw new Error(`no link to the group "team" on /admin/groups:\n${page.text.slice(0, 1000)}`);
  return id;
}

async function throwawayGroup(w: WebSide): Promise<string> {
  if (w.user !== users.frank) return teamId();
  const name = `scratch ${++made}`;
  await operator('groups', 'create', name, '--data-dir', d.dataDir);
  await operator('groups', 'add', name, users.eve.email, '--data-dir', d.dataDir);
  const page = await web.frank.client.get('/admin/groups');
  return new RegExp(`href="/admin/groups/(grp_[0-9A-Za-z]+)"[^>]*>${name}<`).exec(page.text)![1]!;
}

/** An application of the person's own (registered through the form), for the forms that delete or rotate one. */
async function ownApp(w: WebSide): Promise<string> {
  await w.client.post('/settings/applications', { _csrf: w.csrf, name: `App ${++made}`, redirect_uris: 'https://app.example.com/callback' });
  const page = await w.client.get('/settings/applications');
  return /href="\/settings\/applications\/([^/"]+)\/delete"/.exec(page.text)?.[1] ?? 'cli_none';
}

/** A tool error's words as a cell. */
function toolOutcome(answer: unknown, shows?: (body: any) => boolean): Outcome {
  const res = answer as { isError?: boolean; content?: unknown; structuredContent?: unknown };
  if (!res.isError) return shows && !shows(res.structuredContent) ? '∅' : '✓';
  const text = ((res.content as { text?: string }[]) ?? []).map((c) => c.text ?? '').join(' ').toLowerCase();
  if (/not.found|no such|^no (project|document) /.test(text)) return '404';
  if (/role|scope|not allowed|forbidden|may not/.test(text)) return '403';
  throw new Error(`a tool error that is no refusal: ${text}`);
}

async function mcpClient(principal: Principal): Promise<Client | 'refused'> {
  if (!mcp.has(principal)) mcp.set(principal, await httpClient(d, mcpBearer[principal]).catch(() => 'refused' as const));
  return mcp.get(principal)!;
}

const MCP: Record<string, (c: Client, f: () => Promise<Fixture>) => Promise<Outcome>> = {
  'tool list_projects': async (c) => toolOutcome(await c.callTool({ name: 'list_projects', arguments: {} }), (b) => JSON.stringify(b).includes(shared.id)),
  'tool search': async (c) => toolOutcome(await c.callTool({ name: 'search', arguments: { query: `${WORD} handbook`, project_id: shared.id } })),
  'tool list_documents': async (c) => toolOutcome(await c.callTool({ name: 'list_documents', arguments: { project_id: shared.id } })),
  'tool get_document': async (c) => toolOutcome(await c.callTool({ name: 'get_document', arguments: { document_id: shared.document } })),
  'tool get_documents': async (c) => toolOutcome(await c.callTool({ name: 'get_documents', arguments: { document_ids: [shared.document] } })),
  'tool add_document': async (c) => toolOutcome(await c.callTool({ name: 'add_document', arguments: { project_id: shared.id, filename: `mcp-${++made}.txt`, text: `added ${made}` } })),
  'resource list': async (c) => {
    const { resources } = await c.listResources();
    return resources.some((r) => r.uri.includes(shared.document)) ? '✓' : '∅';
  },
  'resource read': async (c) => {
    const uri = `docsearch://documents/${shared.document}`;
    try {
      await c.readResource({ uri });
      return '✓';
    } catch (err) {
      return /not found/i.test(String(err)) ? '404' : /scope|role/i.test(String(err)) ? '403' : (() => { throw err; })();
    }
  },
};

/** Every route the web mounts, read off a recording router: what the tables must name. */
function webRoutes(): string[] {
  const seen: string[] = [];
  const recorder: Record<string, unknown> = {};
  for (const method of ['get', 'post', 'put', 'patch', 'delete', 'all']) {
    recorder[method] = (_name: string, path: string) => {
      seen.push(`${method.toUpperCase()} ${path}`);
      return recorder;
    };
  }
  mountPages(recorder as unknown as Parameters<typeof mountPages>[0], {} as Services, [oauthRouters({} as OAuthProvider)]);
  return seen;
}

/** Web routes outside the matrix: sign-in flows (test/auth/), static files, settings pages that list one's own things. */
const NOT_ABOUT_A_PROJECT = /^(POST|GET) \/(login|logout|setup|invite|oauth\/consent|api\/oauth\/|\.well-known\/|static\/|favicon)/;

describe('the permission matrix of docs/permissions.md', () => {
  beforeAll(async () => {
    d = await startDaemon({ timeoutMs: 60_000 });
    const frank = await addUser(d); // the first account: the admin
    users = { frank, alice: await addUser(d), bob: await addUser(d), carol: await addUser(d), dan: await addUser(d), eve: await addUser(d), gina: await addUser(d) };
    await operator('groups', 'create', 'team', '--data-dir', d.dataDir);
    await operator('groups', 'add', 'team', users.dan.email, '--data-dir', d.dataDir);
    q = (await ok('Q', api(d, '/api/v1/projects', { token: users.alice.apiKey, body: { name: 'Q' } }))).body.id;
    shared = await fixture(true);
    trashed = await inTrash(() => fixture());
    const limited = (await ok('limited key', api(d, '/api/v1/keys', { token: users.alice.apiKey, body: { name: 'Q only', project_ids: [q] } }))).body.key as string;
    const app = await addClient(d, { name: 'Matrix reader', redirectUris: ['http://127.0.0.1:9/callback'] });
    const people: [Principal, keyof Users][] = [
      ['owner', 'alice'],
      ['editor', 'bob'],
      ['viewer', 'carol'],
      ['group member', 'dan'],
      ['non-member', 'eve'],
      ['admin', 'frank'],
      ['disabled', 'gina'],
    ];
    for (const [principal, user] of people) bearer[principal] = mcpBearer[principal] = users[user].apiKey;
    bearer['key for another project'] = mcpBearer['key for another project'] = limited;
    bearer['read-only token'] = await readOnlyToken(app);
    mcpBearer['read-only token'] = await readOnlyToken(app, `${d.url}/mcp`);
    for (const [, user] of people) {
      const client = await loggedIn(d, users[user]);
      await client.get('/settings/keys');
      web[user] = { client, csrf: client.csrf };
    }
    await operator('users', 'disable', users.gina.email, '--data-dir', d.dataDir);
  }, 300_000);

  afterAll(async () => {
    for (const c of mcp.values()) if (c !== 'refused') await c.close();
    await d?.stop();
  });

  it('names every REST route, web form, web page about a project or document, and MCP tool', async () => {
    const named = (surface: Row['surface']) => new Set(rows.filter((r) => r.surface === surface).map((r) => r.operation));
    const openapi = (await api(d, '/api/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(openapi.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect([...named('REST API')].sort()).toEqual(routes.sort());
    const pages = webRoutes().filter((r) => !NOT_ABOUT_A_PROJECT.test(r) && (r.startsWith('POST ') || /^GET \/(projects|documents|admin)\/.*:/.test(r) || /^GET \/admin\//.test(r)));
    const webNamed = named('Web pages and forms');
    expect(pages.filter((r) => !webNamed.has(r)), 'web routes docs/permissions.md does not name').toEqual([]);
    const owner = await mcpClient('owner');
    if (owner === 'refused') throw new Error('the owner could not connect to /mcp');
    const tools = (await owner.listTools()).tools.map((t) => `tool ${t.name}`);
    expect([...named('MCP')].filter((o) => o.startsWith('tool ')).sort()).toEqual(tools.sort());
  });

  for (const row of rows) {
    it(`${row.surface}: ${row.operation}`, { timeout: 300_000 }, async () => {
      const got = {} as Record<Principal, Outcome>;
      for (const principal of PRINCIPALS) {
        const expected = row.expected[principal];
        if (expected === '—') {
          got[principal] = '—';
          continue;
        }
        if (row.surface === 'REST API') {
          const run = REST[row.operation];
          if (!run) throw new Error(`no REST cell runner for ${row.operation}`);
          got[principal] = await run(bearer[principal], () => fixture());
        } else if (row.surface === 'Web pages and forms') {
          const run = WEB[row.operation];
          if (!run) throw new Error(`no web cell runner for ${row.operation}`);
          const user = WEB_USER[principal]!;
          got[principal] = await run({ ...web[user], user: users[user] }, () => fixture());
        } else {
          const run = MCP[row.operation];
          if (!run) throw new Error(`no MCP cell runner for ${row.operation}`);
          const client = await mcpClient(principal);
          // A tool a credential's scopes do not allow is neither listed nor callable: a scope refusal.
          const tool = row.operation.startsWith('tool ') ? row.operation.slice('tool '.length) : null;
          const listed = client !== 'refused' && (tool === null || (await client.listTools()).tools.some((t) => t.name === tool));
          got[principal] = client === 'refused' ? '401' : listed ? await run(client, () => fixture()) : '403';
        }
      }
      expect(got).toEqual(row.expected);
    });
  }
});
