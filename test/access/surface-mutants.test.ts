/**
 * What the permission matrix's cells do not reach, found by breaking the daemon's call sites of access one at a time
 * (a mutation audit; each test here fails against one such break). Documents linked across projects: an e-mail's
 * attachment moved into another project (a move takes the one document) is read by people who cannot read the
 * message, and the reverse, and the document page names to neither the other's name or id (docs/permissions.md: one
 * never learns the existence of what one may not read). A saved search naming a project its author may not read is
 * refused as one naming no project at all (docs/api.md#saved-searches); Settings → API Keys makes no key limited to
 * one; a label of one, named under a project one edits, is not found (REST and the web's label forms). The web's Move,
 * like the API's, takes editor on the target; MCP's add_document without a project keeps to a limited key's projects.
 * A disabled account's OAuth token is refused by the lookup itself, as its key is (SQLite only: it edits the file).
 */
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getCode, pkce, post as oauthPost } from '../auth/oauth-flow.js';
import { addUser, api, type Daemon, REPO, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, callError, httpClient } from '../mcp/mcp-client.js';
import { loggedIn } from '../server/web-client.js';

describe('access where the matrix does not look', () => {
  let d: Daemon;
  let alice: TestUser;
  let carol: TestUser;
  let bob: TestUser;
  let message = '';
  let mail = '';
  let other = '';
  let moved = { id: '', filename: '' };
  let stayed = { id: '', filename: '' };

  daemonForSuite(
    async (started) => {
      d = started;
      [alice, bob, carol] = [await addUser(d), await addUser(d), await addUser(d)];
      const project = async (name: string) => (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name } })).body.id as string;
      other = await project('Other');
      mail = await project('Mail');
      const up = await uploadFiles(d, alice.apiKey, [{ name: 'survey.eml', bytes: readFileSync(join(REPO, 'test/fixtures/formats/with-attachments.eml')) }], {
        projectId: mail,
        query: '?wait=true&wait_timeout=300',
      });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      message = up.body.documents[0].id;
      const attached = await waitFor(
        async () => {
          const res = await api(d, `/api/v1/documents?limit=100&project_id=${mail}`, { token: alice.apiKey });
          const found = res.body.documents.filter((x: any) => x.attached_to === message && x.status === 'ready');
          return found.length === 2 && (found as { id: string; filename: string }[]);
        },
        120_000,
        'the e-mail’s two attachments',
      );
      [moved, stayed] = [attached[0]!, attached[1]!];
      const move = await api(d, `/api/v1/documents/${moved.id}`, { token: alice.apiKey, method: 'PATCH', body: { project_id: other } });
      expect(move.status, JSON.stringify(move.body)).toBe(200);
      // Bob reads the message's project only, Carol the moved attachment's only.
      for (const [id, who] of [[mail, bob], [other, carol]] as const) {
        const shared = await api(d, `/api/v1/projects/${id}/members`, { token: alice.apiKey, body: { email: who.email, role: 'viewer' } });
        expect(shared.status, JSON.stringify(shared.body)).toBe(201);
      }
    },
    { setupTimeoutMs: 360_000 },
  );

  it('the moved attachment’s page, read by a viewer of its new project only, names no e-mail it was attached to', async () => {
    const owner = await (await loggedIn(d, alice)).get(`/documents/${moved.id}`);
    // The owner reads both: the link is there (so its absence below is the reader's, not the move's).
    expect(owner.text).toContain(`<dt>Attached to</dt><dd class="attached-to"><a href="/documents/${message}">survey.eml</a></dd>`);
    const page = await (await loggedIn(d, carol)).get(`/documents/${moved.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(moved.filename);
    expect(page.text).not.toContain('Attached to');
    expect(page.text).not.toContain(message);
    expect(page.text).not.toContain('survey.eml');
  });

  it('the e-mail’s page, read by a viewer of its project only, lists the attachment that stayed and not the moved one', async () => {
    const page = await (await loggedIn(d, bob)).get(`/documents/${message}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<li><a href="/documents/${stayed.id}">${stayed.filename}</a></li>`);
    expect(page.text).not.toContain(moved.id);
    expect(page.text).not.toContain(moved.filename);
  });

  it('a search saved naming a project its author may not read is the 404 of one that does not exist, and nothing is saved', async () => {
    const save = (project: string) => api(d, '/api/v1/saved-searches', { token: carol.apiKey, body: { name: `over ${project}`, search: { query: 'tide', project_ids: [project] } } });
    const hidden = await save(mail);
    const missing = await save('prj_000000000ZZZZZZZZZZZZZZZZZ');
    expect(hidden.status, JSON.stringify(hidden.body)).toBe(404);
    const said = (res: { body: any }, id: string) => JSON.stringify({ ...res.body.error, request_id: null }).replaceAll(id, '<id>');
    expect(said(hidden, mail)).toBe(said(missing, 'prj_000000000ZZZZZZZZZZZZZZZZZ'));
    expect((await api(d, '/api/v1/saved-searches', { token: carol.apiKey })).body.saved_searches).toEqual([]);
  });

  it('Settings → API Keys refuses a key limited to a project its maker may not read (a forged tick), and makes none', async () => {
    const web = await loggedIn(d, carol);
    await web.get('/settings/keys');
    const before = (await api(d, '/api/v1/keys', { token: carol.apiKey })).body.keys.length;
    const forged = await web.submit('/settings/keys', { _csrf: web.csrf, name: 'reaching', scopes: ['read:documents'], projects: [mail], expires: '30' });
    expect(forged.text).toContain('A project you ticked is not one you may read');
    expect(forged.text).not.toContain('Copy your new API key now.');
    expect((await api(d, '/api/v1/keys', { token: carol.apiKey })).body.keys.length).toBe(before);
  });

  it('a label of a project one may not read is not found through a project one edits: REST and the web form change nothing', async () => {
    const made = await api(d, `/api/v1/projects/${other}/labels`, { token: alice.apiKey, body: { name: 'confidential', color: 'teal' } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const label = made.body.id as string;
    // Bob owns his default project, and cannot read Other.
    const own = (await api(d, '/api/v1/projects', { token: bob.apiKey })).body.projects.find((p: { role: string; id: string }) => p.role === 'owner').id as string;
    const missing = 'lbl_000000000ZZZZZZZZZZZZZZZZZ';
    const said = (res: { body: any }, id: string) => JSON.stringify({ ...res.body.error, request_id: null }).replaceAll(id, '<id>');
    for (const method of ['PATCH', 'DELETE']) {
      const body = method === 'PATCH' ? { name: 'renamed by bob', color: 'red' } : undefined;
      const hidden = await api(d, `/api/v1/projects/${own}/labels/${label}`, { token: bob.apiKey, method, body });
      const none = await api(d, `/api/v1/projects/${own}/labels/${missing}`, { token: bob.apiKey, method, body });
      expect(hidden.status, `${method}: ${JSON.stringify(hidden.body)}`).toBe(404);
      expect(said(hidden, label)).toBe(said(none, missing));
    }
    const web = await loggedIn(d, bob);
    await web.get(`/projects/${own}/labels`);
    expect((await web.post(`/projects/${own}/labels/${label}`, { _csrf: web.csrf, name: 'renamed on the web', color: 'red' })).status).toBe(404);
    expect((await web.get(`/projects/${own}/labels/${label}/delete`)).status).toBe(404);
    await web.get(`/projects/${own}/labels`);
    expect((await web.post(`/projects/${own}/labels/${label}/delete`, { _csrf: web.csrf })).status).toBe(404);
    const labels = (await api(d, `/api/v1/projects/${other}/labels`, { token: alice.apiKey })).body.labels;
    expect(labels.map((l: { id: string; name: string; color: string }) => [l.id, l.name, l.color])).toEqual([[label, 'confidential', 'teal']]);
  });

  it('the web’s Move takes editor on the target, as the API does: into a project only viewed, or unreadable, the document stays', async () => {
    const own = (await api(d, '/api/v1/projects', { token: bob.apiKey })).body.projects.find((p: { role: string; id: string }) => p.role === 'owner').id as string;
    const up = await uploadFiles(d, bob.apiKey, [{ name: 'bob.txt', bytes: Buffer.from('Notes on the harbour wall.\n') }], { projectId: own, query: '?wait=true&wait_timeout=120' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const doc = up.body.documents[0].id as string;
    const web = await loggedIn(d, bob);
    const moveTo = async (target: string) => {
      await web.get(`/documents/${doc}`);
      return (await web.submit(`/documents/${doc}/move`, { _csrf: web.csrf, project_id: target })).text;
    };
    expect(await moveTo(mail)).toContain('Not moved: Your role on this project is viewer: this needs editor.');
    const hidden = await moveTo(other);
    expect(hidden).toContain('Not moved:');
    expect(hidden.replaceAll(other, '<id>')).toContain((await moveTo('prj_000000000ZZZZZZZZZZZZZZZZZ')).match(/Not moved:[^<]*/)![0].replaceAll('prj_000000000ZZZZZZZZZZZZZZZZZ', '<id>'));
    expect((await api(d, `/api/v1/documents/${doc}`, { token: bob.apiKey })).body.project_id).toBe(own);
    expect((await api(d, `/api/v1/documents?project_id=${mail}&limit=100`, { token: alice.apiKey })).body.documents.map((x: { id: string }) => x.id)).not.toContain(doc);
  });

  it('MCP add_document without project_id keeps to a limited key’s projects, as POST /upload does', async () => {
    const limited = async (who: TestUser) => (await api(d, '/api/v1/keys', { token: who.apiKey, body: { name: 'limited to Other', project_ids: [other] } })).body.key as string;
    const owned = async (who: TestUser) => (await api(d, '/api/v1/projects', { token: who.apiKey })).body.projects.find((p: { role: string; id: string }) => p.role === 'owner').id as string;
    const names = async (who: TestUser, project: string) =>
      ((await api(d, `/api/v1/documents?project_id=${project}&limit=100`, { token: who.apiKey })).body.documents as { filename: string }[]).map((x) => x.filename);
    // Alice edits Other: the note goes there, not to her default project outside the key's limit.
    const added = await call(await httpClient(d, await limited(alice)), 'add_document', { filename: 'limited-note.md', text: 'A note through a limited key.' });
    expect(added.document.project_id).toBe(other);
    expect(await names(alice, await owned(alice))).not.toContain('limited-note.md');
    // Carol only views Other: refused as a viewer is, and nothing lands in the project she owns.
    const refused = await callError(await httpClient(d, await limited(carol)), 'add_document', { filename: 'viewer-note.md', text: 'A note through a viewer’s limited key.' });
    expect(refused).toContain('uploading needs editor');
    expect(await names(carol, await owned(carol))).not.toContain('viewer-note.md');
  });

  it('a disabled account’s OAuth access token is refused even were its grant not revoked: the lookup itself checks the account', async () => {
    const gina = await addUser(d);
    const redirect = 'http://127.0.0.1:9/callback';
    const app = await api(d, '/api/oauth/register', {
      body: { client_name: 'Gina’s app', redirect_uris: [redirect], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] },
    });
    const { verifier, challenge } = pkce();
    const client = app.body.client_id as string;
    const code = await getCode(await loggedIn(d, gina), { client_id: client, redirect_uri: redirect, scope: 'read:documents', state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
    const token = (await oauthPost(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: client, redirect_uri: redirect, code_verifier: verifier })).body.access_token as string;
    expect((await api(d, '/api/v1/projects', { token })).status).toBe(200);
    // Alice, the library's first account, is its admin.
    const id = (await api(d, '/api/v1/admin/users', { token: alice.apiKey })).body.users.find((u: { email: string }) => u.email === gina.email).id as string;
    expect((await api(d, `/api/v1/admin/users/${id}/disable`, { token: alice.apiKey, method: 'POST' })).status).toBe(200);
    const db = new Database(join(d.dataDir, 'docsearch.db'));
    try {
      expect(db.prepare('UPDATE oauth_grants SET revoked_at = NULL WHERE user_id = ?').run(id).changes).toBe(1);
      db.prepare('UPDATE oauth_tokens SET revoked_at = NULL WHERE user_id = ?').run(id);
    } finally {
      db.close();
    }
    expect((await api(d, '/api/v1/projects', { token })).status).toBe(401);
  });
});
