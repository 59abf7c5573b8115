/**
 * Strings SQLite stores and PostgreSQL refuses or cannot index: a NUL (U+0000: "invalid byte sequence for encoding
 * UTF8"), a lone surrogate (no text: UTF-8 cannot encode it) and a value past what a btree index entry holds
 * (~2,704 bytes, counted in UTF-8 bytes, so 3-byte CJK characters reach it before a character limit does). Each way
 * in answers the same on both engines: a 400 naming the field (and the limit), never a 500 on one and a 201 on the
 * other; text from a document's own bytes is cleaned instead. Runs on SQLite and PostgreSQL (vitest.config.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_NAME, registerDaemons, ssoDaemon, ssoSignIn } from '../auth/sso/sso-flow.js';
import { authorizePath, decide, pkce } from '../auth/oauth-flow.js';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { startIdp, type TestIdp } from '../helpers/oidc-provider.js';
import { selfSigned } from '../helpers/self-signed.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, callError, httpClient } from '../mcp/mcp-client.js';
import { loggedIn, WebClient } from './web-client.js';

const NUL = 'a\u0000b';
/** `n` CJK characters (3 bytes each in UTF-8) that do not repeat: PostgreSQL compresses a repetitive value into its index. */
const cjk = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(0x4e00 + ((7 + i * 7919) % 20000))).join('');
/** JSON with a lone high surrogate, as a hostile client sends it (JSON.stringify would escape it the same way). */
const loneSurrogateJson = (field: string) => `{"name":"lone-${field}","${field}":"x\\ud800y"}`;

describe('strings PostgreSQL refuses or cannot index', () => {
  let d: Daemon;
  let alice: TestUser;

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  const expect400 = (res: { status: number; body: any }, field: string, why: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain(field);
    expect(res.body.error.message).toMatch(why);
  };

  it('a lone surrogate in a JSON body is a 400 naming the field, not text stored as U+FFFD', async () => {
    expect400(await api(d, '/api/v1/projects', { token: alice.apiKey, body: loneSurrogateJson('description') }), 'body.description', /U\+D800 \(a lone surrogate\)/);
    const projects = await api(d, '/api/v1/projects', { token: alice.apiKey });
    expect((projects.body.projects as { name: string }[]).map((p) => p.name)).not.toContain('lone-description');
  });

  it('a NUL in a JSON body is a 400 naming the field (a key too), nothing stored', async () => {
    expect400(await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'nul', description: NUL } }), 'body.description', /U\+0000/);
    const saved = await api(d, '/api/v1/saved-searches', { token: alice.apiKey, body: { name: 'nul query', search: { query: `budget ${NUL}` } } });
    expect400(saved, 'body.search.query', /U\+0000/);
    const projects = await api(d, '/api/v1/projects', { token: alice.apiKey });
    expect(projects.status).toBe(200);
    expect((projects.body.projects as { name: string }[]).map((p) => p.name)).not.toContain('nul');

    const up = await uploadFiles(d, alice.apiKey, [{ name: 'meta.txt', bytes: Buffer.from('The ferry leaves the harbour at seven.') }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const id = up.body.documents[0].id as string;
    expect400(await api(d, `/api/v1/documents/${id}`, { method: 'PATCH', token: alice.apiKey, body: { metadata: { owner: NUL } } }), 'body.metadata.owner', /U\+0000/);
    expect400(await api(d, `/api/v1/documents/${id}`, { method: 'PATCH', token: alice.apiKey, body: { metadata: { [NUL]: 'x' } } }), 'body.metadata', /key.*U\+0000/);
    expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).body.metadata).toEqual({});
  });

  it('a NUL in a query parameter is a 400 naming it', async () => {
    expect400(await api(d, `/api/v1/documents?filename=${encodeURIComponent(NUL)}`, { token: alice.apiKey }), 'query.filename', /U\+0000/);
  });

  const text = (s: string) => [{ name: 'p.txt', bytes: Buffer.from(`The lighthouse keeper logs the ${s} storm.`) }];

  it("an upload's field with a NUL is a 400 naming it, escaped in JSON or not", async () => {
    expect400(await uploadFiles(d, alice.apiKey, text('first'), { metadata: JSON.stringify({ owner: NUL }) }), 'metadata.owner', /U\+0000/);
    expect400(await uploadFiles(d, alice.apiKey, text('first'), { projectId: `prj_${NUL}` }), 'project_id', /U\+0000/);
  });

  it("an upload's path is bounded in UTF-8 bytes, below what its index holds", async () => {
    // 1,003 characters (under the 1,024 a path may have), 3,001 bytes: more than an index entry holds.
    const long = `${cjk(999)}.txt`;
    expect400(await uploadFiles(d, alice.apiKey, text('second'), { fields: { paths: JSON.stringify([long]) } }), 'paths[0]', /at most 2048 bytes/);
    const fits = `${cjk(600)}.txt`;
    const ok = await uploadFiles(d, alice.apiKey, text('third'), { query: '?wait=true', fields: { paths: JSON.stringify([fits]) } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.documents[0]).toMatchObject({ status: 'ready', path: fits });
  });

  it('a web form with a NUL is a 400 naming the field', async () => {
    const web = await loggedIn(d, alice);
    await web.get('/projects');
    const res = await web.submit('/projects', { _csrf: web.csrf, name: 'web nul', description: NUL });
    expect(res.status).toBe(400);
    expect(res.text).toContain('description');
    expect(res.text).toContain('U+0000');
    const projects = await api(d, '/api/v1/projects', { token: alice.apiKey });
    expect((projects.body.projects as { name: string }[]).map((p) => p.name)).not.toContain('web nul');
  });

  it('a page asked for with a NUL in its path or query is a 400 page naming it', async () => {
    const web = await loggedIn(d, alice);
    for (const [path, why] of [
      ['/documents/doc_a%00b', 'the address must not contain U+0000'],
      ['/documents?filename=a%00b', 'filename: must not contain U+0000'],
      ['/search?q=a%00b', 'q: must not contain U+0000'],
    ] as const) {
      const res = await web.get(path);
      expect(res.status, `${path}: ${res.text.slice(0, 300)}`).toBe(400);
      expect(res.text).toContain(why);
    }
  });

  it('a sign-in with an e-mail longer than any address is a wrong e-mail or password on either engine', async () => {
    // The attempt is counted under the e-mail typed: 3,000 bytes would not fit the throttle's key on PostgreSQL.
    const res = await new WebClient(d).login(`${cjk(1000)}@example.org`, 'not the password');
    expect(res.status).toBe(401);
    expect(res.text).toContain('Wrong e-mail or password.');
  });

  it('an MCP tool argument with a NUL is a tool error naming the field', async () => {
    const client = await httpClient(d, alice.apiKey);
    try {
      expect(await callError(client, 'search', { query: `harbour ${NUL}` })).toMatch(/query.*U\+0000/);
      // A NUL would make the note a binary file that fails: refused before anything is saved.
      expect(await callError(client, 'add_document', { filename: 'nul-note', text: `The tide table ${NUL} for March.` })).toMatch(/U\+0000 \(a NUL character\) at text/);
      const notes = await call(client, 'list_documents', {});
      expect(JSON.stringify(notes)).not.toContain('nul-note');
    } finally {
      await client.close();
    }
  });

  it('an OAuth request with a NUL is refused in the OAuth error format', async () => {
    const authorize = await fetch(`${d.url}/api/oauth/authorize?response_type=code&client_id=app_a%00b&redirect_uri=${encodeURIComponent('http://127.0.0.1:8765/callback')}`, { redirect: 'manual' });
    const token = await fetch(`${d.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', code: 'x', client_id: NUL, client_secret: 's', redirect_uri: 'http://127.0.0.1:8765/callback' }),
    });
    const revoke = await fetch(`${d.url}/api/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'x', client_id: NUL }) });
    expect(authorize.status).toBe(400);
    expect(await authorize.text()).toContain('client_id: must not contain U+0000');
    for (const res of [token, revoke]) {
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_request', error_description: 'client_id: must not contain U+0000 (a NUL character)' });
    }
    // Registration names its errors invalid_client_metadata (RFC 7591).
    const registered = await fetch(`${d.url}/api/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: NUL, redirect_uris: ['http://127.0.0.1:8765/callback'], token_endpoint_auth_method: 'none' }),
    });
    expect(registered.status).toBe(400);
    expect(await registered.json()).toMatchObject({ error: 'invalid_client_metadata', error_description: expect.stringMatching(/client_name.*U\+0000/) });
  });

  it("an e-mail whose subject decodes to a NUL is ready on either engine, the NUL left out of its metadata", async () => {
    const eml = [
      'From: Ada <ada@example.org>',
      'To: Bob <bob@example.org>',
      'Subject: =?utf-8?q?Quarterly=00budget?=',
      'Date: Mon, 2 Mar 2026 10:00:00 +0000',
      'Message-ID: <nul-subject@example.org>',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'The quarterly budget review moves to Thursday afternoon.',
      '',
    ].join('\r\n');
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'budget.eml', bytes: Buffer.from(eml) }], { query: '?wait=true' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const doc = res.body.documents[0] as { id: string; status: string; error?: string };
    expect(doc.status, doc.error).toBe('ready');
    const got = await api(d, `/api/v1/documents/${doc.id}`, { token: alice.apiKey });
    expect(got.body.metadata.email.subject).toBe('Quarterlybudget');
    const found = await api(d, '/api/v1/documents?metadata.email.subject=Quarterlybudget', { token: alice.apiKey });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect((found.body.documents as { id: string }[]).map((x) => x.id)).toEqual([doc.id]);
  });
});

describe('a subject from the OpenID provider that PostgreSQL cannot store or index', () => {
  let idp: TestIdp;
  let d: Daemon;

  beforeAll(async () => {
    idp = await startIdp();
    d = await ssoDaemon(idp);
    registerDaemons(idp, [d]);
  }, 180_000);
  afterAll(async () => {
    if (d) {
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    }
    await idp?.stop();
  });

  const emails = async () => {
    const listed = await runCli(['users', 'list', '--json', '--data-dir', d.dataDir], { env: d.env });
    return (JSON.parse(listed.stdout).users as { email: string }[]).map((u) => u.email);
  };

  it('is a refused sign-in saying why, on either engine, and no account is made', async () => {
    for (const [login, why] of [
      ['nul\u0000subject', 'U+0000 (a NUL character)'],
      ['长'.repeat(1000), 'at most 1024 bytes'],
    ] as const) {
      idp.accounts.set(login, { email: `sub-${login.length}@example.org`, email_verified: true });
      const res = await ssoSignIn(new WebClient(d), idp, login);
      expect(res.status, res.text.slice(0, 400)).toBe(403);
      expect(res.text).toContain(`${PROVIDER_NAME} sent a subject (the sub claim) that must`);
      expect(res.text).toContain(why);
    }
    expect((await emails()).filter((e) => e.startsWith('sub-'))).toEqual([]);
  });
});

describe('a file a source lists at a path longer than an index entry holds', () => {
  const dirs = tempDirs('docsearch-hostile-source');
  let root: string;
  let d: Daemon;
  let client: SourceClient;

  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ args: ['--source-roots', root, '--sources-min-interval', '1'] });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  it('is passed over on either engine, and the pass goes on with the rest', async () => {
    // 12 folders of 80 characters (240 bytes each, under a file name's 255): a path of ~2,900 bytes.
    const chars = cjk(960);
    const deep = Array.from({ length: 12 }, (_, i) => chars.slice(i * 80, (i + 1) * 80));
    const dir = join(root, 'deep');
    mkdirSync(join(dir, ...deep), { recursive: true });
    writeFileSync(join(dir, ...deep, 'far.txt'), 'The far file talks about glaciers.');
    writeFileSync(join(dir, 'near.txt'), 'The near file talks about meadows.');
    const project = await client.project('deep folder');
    const source = await client.add(project, { url: `file://${dir}` });
    const done = await client.sync(project, source.id);
    expect(done.status, JSON.stringify(done)).toBe('active');
    expect([...(await client.settled(project, source.id, 1)).keys()]).toEqual(['near.txt']);
  }, 180_000);
});

describe('a client ID metadata document URL longer in bytes than an index entry holds', () => {
  const tls = selfSigned();
  const REDIRECT = 'http://127.0.0.1:7777/callback';
  let server: Server;
  let base: string;
  let d: Daemon;

  beforeAll(async () => {
    // Any document asked for names itself by the URL it was asked at, as a client's would.
    server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: base + decodeURIComponent(req.url!), client_name: 'Long Id Client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }));
    });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    d = await startDaemon({ args: ['--client-metadata-allow-private'], env: { NODE_EXTRA_CA_CERTS: tls.certFile } });
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    tls.remove();
  });

  it('is refused as a client_id on either engine, before anyone approves it', async () => {
    const web = await loggedIn(d, await addUser(d));
    const params = (clientId: string) => ({ client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', code_challenge: pkce().challenge, code_challenge_method: 'S256' });
    // 990 characters (under the 2,000 allowed), 2,880 bytes (a longer one would not fit in a request line).
    const long = `${base}/${cjk(950)}.json`;
    const page = await web.get(authorizePath(params(long)));
    expect(page.status).toBe(400);
    expect(page.text).toContain('is not a usable client metadata document URL: it must be at most 2000 bytes in UTF-8');
    // One that fits is approved and recorded on either engine.
    const { redirect } = await decide(web, params(`${base}/${cjk(500)}.json`), 'approve');
    expect(redirect.searchParams.get('code')).toHaveLength(64);
  });
});
