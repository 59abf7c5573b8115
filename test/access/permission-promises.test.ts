/**
 * The prose of docs/permissions.md ("The model" and the notes under its tables) that the matrix's cells do not hold,
 * through the built daemon: roles from several grants, several owners, what stays when a person leaves, moves, the
 * sharing policy reading as "unknown" (REST, the web form and the share box's suggestions), a search naming a project
 * the caller may not read, a key limited to projects making and managing keys, an application's token and keys, an
 * admin's narrowed credentials and their docsearch login, Settings
 * acting on one's own keys and sessions, one API description for every credential. Each
 * refusal that must not tell what exists is compared with the answer about something that does not exist, and a
 * disabled account's key is refused even when its revocation is undone in the database (SQLite only: the file is
 * not among the suites the postgresql project runs again).
 */
import Database from 'better-sqlite3';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCode, pkce, post as oauthPost } from '../auth/oauth-flow.js';
import { addUser, api, type Daemon, REPO, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn, type WebClient } from '../server/web-client.js';
import { SPECS } from './matrix-rows.js';
import { readMatrix } from './matrix-table.js';

describe('the matrix specs and docs/permissions.md', () => {
  it('every spec of test/access/matrix-rows.ts is a row of the doc (a row dropped from the doc drops its spec)', () => {
    const rows = readMatrix();
    const named = (surface: string) => new Set(rows.filter((r) => r.surface === surface).map((r) => r.operation));
    const orphans = [
      ...Object.keys(SPECS.rest).filter((op) => !named('REST API').has(op)),
      ...Object.keys(SPECS.web).filter((op) => !named('Web pages and forms').has(op)),
      ...Object.keys(SPECS.mcp).filter((op) => !named('MCP').has(op)),
    ];
    expect(orphans, 'specs without a row in docs/permissions.md').toEqual([]);
  });

  it('every test file or folder the doc names (where a route without a row is tested instead) exists', () => {
    const named = [...readFileSync(join(REPO, 'docs/permissions.md'), 'utf8').matchAll(/\btest\/[\w./-]*\w\/?/g)].map((m) => m[0]);
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((p) => !existsSync(join(REPO, p)))).toEqual([]);
  });
});

describe('the model of docs/permissions.md, through the daemon', () => {
  let d: Daemon;
  let frank: TestUser; // the first account: an admin
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let eve: TestUser;
  let admin: WebClient;
  let n = 0;

  const as = (who: TestUser, path: string, opts: { method?: string; body?: unknown } = {}) => api(d, path, { token: who.apiKey, ...opts });
  const project = async (who: TestUser, name = `project ${++n}`) => {
    const made = await as(who, '/api/v1/projects', { body: { name } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return made.body.id as string;
  };
  const share = (owner: TestUser, id: string, body: Record<string, string>) => as(owner, `/api/v1/projects/${id}/members`, { body });
  const shared = async (owner: TestUser, id: string, body: Record<string, string>) => {
    const res = await share(owner, id, body);
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body.id as string;
  };
  const note = async (who: TestUser, projectId: string, name: string) => {
    const up = await uploadFiles(d, who.apiKey, [{ name, bytes: Buffer.from(`The ${name} note, number ${++n}.\n`) }], { projectId, query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    return up.body.documents[0].id as string;
  };
  /** A label made in the project: what an editor may do and a viewer may not. */
  const label = (who: TestUser, id: string) => as(who, `/api/v1/projects/${id}/labels`, { body: { name: `label ${++n}`, color: 'teal' } });
  /** An answer with the request id and the given words (an id, an address) replaced: what two refusals are compared by. */
  const same = (res: { status: number; body: unknown }, ...words: string[]) => {
    let text = `${res.status} ${JSON.stringify(res.body)}`;
    words.forEach((w, i) => (text = text.replaceAll(w, `{${i}}`)));
    return text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '{request_id}');
  };
  const policy = async (value: 'anyone' | 'groups' | 'admins') => {
    await admin.get('/admin/sharing');
    expect((await admin.post('/admin/sharing', { _csrf: admin.csrf, policy: value })).status).toBe(303);
  };
  const group = async (name: string, members: TestUser[]) => {
    expect((await as(frank, '/api/v1/admin/groups', { body: { name } })).status).toBe(201);
    for (const m of members) expect((await as(frank, `/api/v1/admin/groups/${name}/members`, { body: { user: m.email } })).status).toBe(201);
  };

  beforeAll(async () => {
    d = await startDaemon();
    frank = await addUser(d);
    [alice, bob, carol, eve] = [await addUser(d), await addUser(d), await addUser(d), await addUser(d)];
    admin = await loggedIn(d, frank);
    await group('team', [bob, carol]);
    await group('outsiders', [eve]);
  }, 180_000);

  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
  });

  it("a person's role is the highest of their own grant and their groups', and a group's grant goes at the next request", async () => {
    const lifted = await project(alice);
    await shared(alice, lifted, { email: carol.email, role: 'viewer' });
    const team = await shared(alice, lifted, { group: 'team', role: 'editor' });
    expect((await label(carol, lifted)).status).toBe(201);
    expect((await as(alice, `/api/v1/projects/${lifted}/members/${team}`, { method: 'DELETE' })).status).toBe(204);
    const refused = await label(carol, lifted);
    expect(refused.status).toBe(403);
    expect(refused.body.error.details).toMatchObject({ role: 'viewer', required_role: 'editor' });

    // Her own editor grant is not lowered by the group's viewer one.
    const kept = await project(alice);
    await shared(alice, kept, { email: carol.email, role: 'editor' });
    await shared(alice, kept, { group: 'team', role: 'viewer' });
    expect((await label(carol, kept)).status).toBe(201);
    expect((await label(bob, kept)).status).toBe(403);
  });

  it('a project may have several owners; none of them removes the owner of record', async () => {
    const id = await project(alice);
    await shared(alice, id, { email: bob.email, role: 'owner' });
    expect((await as(bob, `/api/v1/projects/${id}`, { method: 'PATCH', body: { description: 'kept by two' } })).status).toBe(200);
    expect((await share(bob, id, { email: carol.email, role: 'viewer' })).status).toBe(201);
    // A member who reads it but is no owner is told their role and the one needed.
    const notOwner = await as(carol, `/api/v1/projects/${id}`, { method: 'PATCH', body: { description: 'kept by three' } });
    expect([notOwner.status, notOwner.body.error.message, notOwner.body.error.details]).toEqual([403, 'your role on this project is viewer: this needs owner', { role: 'viewer', required_role: 'owner' }]);
    const members = (await as(bob, `/api/v1/projects/${id}/members`)).body.members as { id: string; email?: string; role: string }[];
    const ofRecord = members[0]!;
    expect(ofRecord).toMatchObject({ email: alice.email, role: 'owner' });
    const removed = await as(bob, `/api/v1/projects/${id}/members/${ofRecord.id}`, { method: 'DELETE' });
    expect(removed.status).toBe(409);
    expect(removed.body.error.message).toBe('the owner of record cannot be removed: transfer the project to someone else first');
    expect((await as(alice, `/api/v1/projects/${id}`)).body.owner).toBe(alice.email);
  });

  it('a document stays in its project, still naming who uploaded it, when that person leaves the project', async () => {
    const id = await project(alice);
    const bobs = await shared(alice, id, { email: bob.email, role: 'editor' });
    const doc = await note(bob, id, 'minutes.txt');
    expect((await as(alice, `/api/v1/projects/${id}/members/${bobs}`, { method: 'DELETE' })).status).toBe(204);
    expect((await as(bob, `/api/v1/documents/${doc}`)).status).toBe(404);
    const kept = await as(alice, `/api/v1/documents/${doc}`);
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ project_id: id, uploaded_by: bob.email });
  });

  it('a move needs editor on both projects: into one only viewed is 403, into an unreadable one 404 as for none; a refusal of a readable document names its project', async () => {
    const from = await project(alice, 'Ledgers');
    const viewed = await project(alice, 'Archive');
    const hidden = await project(alice, 'Private');
    await shared(alice, from, { email: bob.email, role: 'editor' });
    await shared(alice, viewed, { email: bob.email, role: 'viewer' });
    const doc = await note(alice, from, 'ledger.txt');
    const onlyViewed = await as(bob, `/api/v1/documents/${doc}`, { method: 'PATCH', body: { project_id: viewed } });
    expect(onlyViewed.status).toBe(403);
    expect(onlyViewed.body.error.details).toMatchObject({ role: 'viewer', required_role: 'editor' });
    const unreadable = await as(bob, `/api/v1/documents/${doc}`, { method: 'PATCH', body: { project_id: hidden } });
    const none = await as(bob, `/api/v1/documents/${doc}`, { method: 'PATCH', body: { project_id: 'prj_000000000ZZZZZZZZZZZZZZZZZ' } });
    expect(unreadable.status).toBe(404);
    expect(same(unreadable, hidden)).toBe(same(none, 'prj_000000000ZZZZZZZZZZZZZZZZZ'));
    expect((await as(alice, `/api/v1/documents/${doc}`)).body.project_id).toBe(from);

    const inViewed = await note(alice, viewed, 'ledger.txt');
    const refused = await as(bob, `/api/v1/documents/${inViewed}`, { method: 'DELETE' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      message: '"ledger.txt" is in the project "Archive", where your role is viewer: this needs editor',
      details: { role: 'viewer', required_role: 'editor', document_id: inViewed, project_id: viewed },
    });
  });

  it("a search naming a project the caller may not read, or one outside its key's limit, is a 404 as for one that does not exist", async () => {
    const hidden = await project(alice);
    const readable = await project(bob);
    await note(alice, hidden, 'hidden.txt');
    const search = (token: string, ids: string[]) => api(d, '/api/v1/search', { token, body: { query: 'note', mode: 'keyword', project_ids: ids } });
    const missing = 'prj_000000000ZZZZZZZZZZZZZZZZZ';
    const refused = await search(bob.apiKey, [readable, hidden]);
    expect(refused.status).toBe(404);
    expect(same(refused, hidden)).toBe(same(await search(bob.apiKey, [readable, missing]), missing));

    // Alice's own project, named through her key limited to another one: the same answer.
    const limited = (await as(alice, '/api/v1/keys', { body: { name: 'elsewhere', project_ids: [await project(alice)] } })).body.key as string;
    const outside = await search(limited, [hidden]);
    expect(outside.status).toBe(404);
    expect(same(outside, hidden)).toBe(same(await search(limited, [missing]), missing));
    expect((await search(alice.apiKey, [hidden])).body.results.length, 'her own key finds the note').toBe(1);
  });

  describe('the sharing policy', () => {
    afterAll(() => policy('anyone'));

    /** What Bob's Sharing tab offers in the share box. */
    const offered = async (web: WebClient, id: string) =>
      [...((await web.get(`/projects/${id}/sharing`)).text.split('<datalist id="share-suggestions">')[1]?.split('</datalist>')[0] ?? '').matchAll(/<option value="([^"]+)">/g)].map((m) => m[1]);
    /** The error the Sharing tab's form shows, with its status. */
    const formError = async (web: WebClient, id: string, member: string) => {
      await web.get(`/projects/${id}/sharing`);
      const res = await web.submit(`/projects/${id}/members`, { _csrf: web.csrf, member, role: 'viewer' });
      // A refusal is its page after the 303 (with the refusal's status); a share, the 303 itself.
      const error = /<p class="error" role="alert">([^<]*)<\/p>/.exec(res.text)?.[1];
      return error ? `${res.status} ${error}` : `${res.redirectedFrom?.status ?? res.status} ${res.redirectedFrom?.location ?? null}`;
    };

    it('"groups": an owner shares only with their groups and the people in them; any other address or group reads as unknown, on REST, the form and the share box', async () => {
      expect((await admin.get('/admin/sharing')).text, 'the default policy').toMatch(/value="anyone" checked/);
      await policy('groups');
      const id = await project(bob);
      const web = await loggedIn(d, bob);
      expect((await share(bob, id, { email: carol.email, role: 'viewer' })).status).toBe(201);
      expect((await share(bob, id, { group: 'team', role: 'viewer' })).status).toBe(201);

      const outside = await share(bob, id, { email: eve.email, role: 'viewer' });
      const nobody = await share(bob, id, { email: 'nobody@example.com', role: 'viewer' });
      expect(outside.status).toBe(404);
      expect(same(outside, eve.email)).toBe(same(nobody, 'nobody@example.com'));
      const otherGroup = await share(bob, id, { group: 'outsiders', role: 'viewer' });
      const noGroup = await share(bob, id, { group: 'nogroup', role: 'viewer' });
      expect(otherGroup.status).toBe(404);
      expect(same(otherGroup, 'outsiders')).toBe(same(noGroup, 'nogroup'));
      expect((await as(bob, `/api/v1/projects/${id}/transfer`, { body: { email: eve.email } })).status).toBe(404);

      expect((await formError(web, id, eve.email)).replace(eve.email, '{}')).toBe((await formError(web, id, 'nobody@example.com')).replace('nobody@example.com', '{}'));
      expect((await formError(web, id, 'group:outsiders')).replace('outsiders', '{}')).toBe((await formError(web, id, 'group:nogroup')).replace('nogroup', '{}'));
      expect(await offered(web, id)).toEqual(['group:team', carol.email]);

      // An admin shares with anyone whatever the policy.
      const franks = await project(frank);
      expect((await share(frank, franks, { email: eve.email, role: 'viewer' })).status).toBe(201);
      expect((await share(frank, franks, { group: 'outsiders', role: 'viewer' })).status).toBe(201);
    });

    it('"anyone" offers every group but only the people of the owner\'s own groups; "admins" offers nothing and refuses the owner', async () => {
      await policy('anyone');
      const id = await project(bob);
      const web = await loggedIn(d, bob);
      expect(await offered(web, id)).toEqual(['group:outsiders', 'group:team', carol.email]);
      expect((await share(bob, id, { email: eve.email, role: 'viewer' })).status).toBe(201);

      await policy('admins');
      expect(await offered(web, id)).toEqual([]);
      const refused = await share(bob, id, { email: carol.email, role: 'viewer' });
      expect(refused.status).toBe(403);
      expect((await as(bob, `/api/v1/projects/${id}/members`)).body.members.map((m: { email?: string }) => m.email)).toEqual([bob.email, eve.email]);
      // Only admins share: with anyone, and a group.
      const franks = await project(frank);
      expect((await share(frank, franks, { email: carol.email, role: 'viewer' })).status).toBe(201);
      expect((await share(frank, franks, { group: 'outsiders', role: 'viewer' })).status).toBe(201);
    });
  });

  it('a key limited to projects makes keys only within its limit (never an unlimited one), and lists and revokes only those', async () => {
    const q = await project(alice);
    const p = await project(alice);
    const unlimited = (await as(alice, '/api/v1/keys', { body: { name: 'everything' } })).body.id as string;
    const limited = (await as(alice, '/api/v1/keys', { body: { name: 'Q only', project_ids: [q] } })).body.key as string;
    const byLimited = (path: string, opts: { method?: string; body?: unknown } = {}) => api(d, path, { token: limited, ...opts });

    const made = await byLimited('/api/v1/keys', { body: { name: 'made by the limited key' } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.project_ids).toEqual([q]);
    expect((await api(d, '/api/v1/projects', { token: made.body.key })).body.projects.map((x: { id: string }) => x.id)).toEqual([q]);
    const keysBefore = (await as(alice, '/api/v1/keys')).body.keys.length;
    const outside = await byLimited('/api/v1/keys', { body: { name: 'reaching further', project_ids: [q, p] } });
    const none = await byLimited('/api/v1/keys', { body: { name: 'reaching further', project_ids: [q, 'prj_000000000ZZZZZZZZZZZZZZZZZ'] } });
    expect(outside.status).toBe(404);
    expect(same(outside, p)).toBe(same(none, 'prj_000000000ZZZZZZZZZZZZZZZZZ'));
    expect((await as(alice, '/api/v1/keys')).body.keys.length).toBe(keysBefore);

    const listed = (await byLimited('/api/v1/keys')).body.keys.map((k: { id: string }) => k.id);
    expect(listed).toContain(made.body.id);
    expect(listed).not.toContain(unlimited);
    expect((await byLimited(`/api/v1/keys/${unlimited}`, { method: 'DELETE' })).status).toBe(404);
    expect((await as(alice, '/api/v1/keys')).body.keys.map((k: { id: string }) => k.id)).toContain(unlimited);
    expect((await byLimited(`/api/v1/keys/${made.body.id}`, { method: 'DELETE' })).status).toBe(204);
  });

  /** An access token `who` gave a client for `scope`: by default a registered application's (not the CLI's) for both document scopes. */
  const oauthToken = async (who: TestUser, client: string, scope = 'read:documents write:documents'): Promise<string> => {
    const redirect = 'http://127.0.0.1:9/callback';
    const { verifier, challenge } = pkce();
    const code = await getCode(await loggedIn(d, who), { client_id: client, redirect_uri: redirect, scope, state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
    const token = await oauthPost(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: client, redirect_uri: redirect, code_verifier: verifier });
    expect(token.body.scope).toBe(scope);
    return token.body.access_token as string;
  };
  const appToken = async (who: TestUser, name: string): Promise<string> => {
    const registered = await api(d, '/api/oauth/register', {
      body: { client_name: name, redirect_uris: ['http://127.0.0.1:9/callback'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] },
    });
    return oauthToken(who, registered.body.client_id as string);
  };
  /** The access token of `docsearch login` (the CLI's own client, holding manage:keys). */
  const cliToken = (who: TestUser) => oauthToken(who, 'docsearch-cli', 'read:documents write:documents manage:keys');

  it("an admin's docsearch login reads the audit log and runs the admin API; anyone else's is refused (403) both", async () => {
    const gina = await addUser(d);
    const login = await cliToken(frank);
    expect((await api(d, '/api/v1/audit-events?limit=1', { token: login })).status).toBe(200);
    const users = await api(d, '/api/v1/admin/users', { token: login });
    expect(users.status).toBe(200);
    const ginas = (users.body.users as { id: string; email: string }[]).find((u) => u.email === gina.email)!;
    expect((await api(d, `/api/v1/admin/users/${ginas.id}/disable`, { token: login, method: 'POST' })).status).toBe(200);
    expect((await as(gina, '/api/v1/me')).status).toBe(401);

    const alices = await cliToken(alice);
    for (const path of ['/api/v1/admin/users', '/api/v1/audit-events?limit=1']) expect((await api(d, path, { token: alices })).status, path).toBe(403);
  });

  it("an application's OAuth token, even with both scopes, manages no keys", async () => {
    const bearer = await appToken(alice, 'Key curious');
    expect((await api(d, '/api/v1/projects', { token: bearer })).status).toBe(200);
    const keysBefore = (await as(alice, '/api/v1/keys')).body.keys.length;
    expect((await api(d, '/api/v1/keys', { token: bearer })).status).toBe(403);
    expect((await api(d, '/api/v1/keys', { token: bearer, body: { name: 'from an app' } })).status).toBe(403);
    expect((await as(alice, '/api/v1/keys')).body.keys.length).toBe(keysBefore);
  });

  it("an admin's application token, even with both scopes, runs nothing of the library: no admin API, no audit log", async () => {
    const bearer = await appToken(frank, 'Admin curious');
    expect((await api(d, '/api/v1/projects', { token: bearer })).status).toBe(200);
    for (const path of ['/api/v1/admin/users', '/api/v1/audit-events?limit=1']) {
      const refused = await api(d, path, { token: bearer });
      expect([refused.status, refused.body.error.message], path).toEqual([403, "an application's access token cannot use the admin API: use an API key, or the docsearch command (docsearch login)"]);
    }
    const eves = (await as(frank, '/api/v1/admin/users')).body.users.find((u: { email: string }) => u.email === eve.email).id as string;
    expect((await api(d, `/api/v1/admin/users/${eves}/disable`, { token: bearer, method: 'POST' })).status).toBe(403);
    expect((await as(eve, '/api/v1/me')).status).toBe(200);
  });

  it("an admin's key limited to projects is refused by the admin API and the audit log; a read-only one reads both and changes nothing", async () => {
    const own = await project(frank);
    const limited = (await as(frank, '/api/v1/keys', { body: { name: 'one project', project_ids: [own] } })).body.key as string;
    const refused = await api(d, '/api/v1/admin/users', { token: limited });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('a key limited to some projects cannot use the admin API: use a key without a project limit');
    expect((await api(d, '/api/v1/audit-events?limit=1', { token: limited })).status).toBe(403);

    const reader = (await as(frank, '/api/v1/keys', { body: { name: 'reader', scopes: ['read:documents'] } })).body.key as string;
    const users = await api(d, '/api/v1/admin/users', { token: reader });
    expect(users.status).toBe(200);
    const eves = (users.body.users as { id: string; email: string }[]).find((u) => u.email === eve.email)!;
    const disable = await api(d, `/api/v1/admin/users/${eves.id}/disable`, { token: reader, method: 'POST' });
    expect(disable.status).toBe(403);
    expect(disable.body.error.code).toBe('insufficient_scope');
    expect((await as(eve, '/api/v1/me')).status).toBe(200);
    expect((await api(d, '/api/v1/audit-events?limit=1', { token: reader })).status).toBe(200);
  });

  it('a disabled account is refused by its key even were the key not revoked: the lookup itself checks the account', async () => {
    const gina = await addUser(d);
    expect((await as(gina, '/api/v1/me')).status).toBe(200);
    const id = (await as(frank, '/api/v1/admin/users')).body.users.find((u: { email: string }) => u.email === gina.email).id as string;
    expect((await as(frank, `/api/v1/admin/users/${id}/disable`, { method: 'POST' })).status).toBe(200);
    const db = new Database(join(d.dataDir, 'docsearch.db'));
    try {
      expect(db.prepare('UPDATE api_keys SET revoked_at = NULL WHERE user_id = ?').run(id).changes).toBe(1);
    } finally {
      db.close();
    }
    const refused = await as(gina, '/api/v1/projects');
    expect(refused.status).toBe(401);
    const unknown = await api(d, '/api/v1/projects', { token: `${gina.apiKey.slice(0, -4)}zzzz` });
    expect(same(refused, gina.apiKey)).toBe(same(unknown, `${gina.apiKey.slice(0, -4)}zzzz`));
  });

  it("Settings acts on the person's own keys and sessions: another's id is answered as one that does not exist, and stays", async () => {
    const key = (await as(alice, '/api/v1/keys', { body: { name: 'kept' } })).body as { id: string; key: string };
    const [first, second] = [await loggedIn(d, alice), await loggedIn(d, alice)];
    const handle = /\/settings\/security\/sessions\/([^/"]+)\/end/.exec((await second.get('/settings/security')).text)?.[1];
    expect(handle, "the other session of Alice's on her Security page").toBeTruthy();
    const web = await loggedIn(d, bob);
    const answer = async (method: 'GET' | 'POST', path: string, id: string) => {
      await web.get('/settings/keys');
      const res = method === 'GET' ? await web.get(path) : await web.post(path, { _csrf: web.csrf });
      // A redirect by where it goes and what its notice says (the page after it shows times that move).
      const shown = res.location ? /<p class="(?:notice|error) flash" role="(?:status|alert)">([^<]*)<\/p>/.exec((await web.get(res.location)).text)?.[1] : res.text;
      return `${res.status} ${res.location} ${shown}`.replaceAll(id, '{id}').replace(/name="_csrf" value="[^"]*"/g, '').replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '{request_id}');
    };
    const missingKey = 'key_000000000ZZZZZZZZZZZZ';
    for (const method of ['GET', 'POST'] as const) {
      expect(await answer(method, `/settings/keys/${key.id}/revoke`, key.id)).toBe(await answer(method, `/settings/keys/${missingKey}/revoke`, missingKey));
    }
    expect(await answer('POST', `/settings/security/sessions/${handle}/end`, handle!)).toBe(await answer('POST', '/settings/security/sessions/0000000000000000/end', '0000000000000000'));
    expect((await api(d, '/api/v1/me', { token: key.key })).status).toBe(200);
    expect((await first.get('/settings/account')).status).toBe(200);
  });

  it('the API description is the same for every credential', async () => {
    const limited = (await as(alice, '/api/v1/keys', { body: { name: 'narrow', scopes: ['read:documents'], project_ids: [await project(alice)] } })).body.key as string;
    const described = await api(d, '/api/v1/openapi.json', { token: limited });
    expect(described.status).toBe(200);
    expect(described.body).toEqual((await as(frank, '/api/v1/openapi.json')).body);
  });
});
