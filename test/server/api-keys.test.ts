import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { newKeyOnPage, WebClient } from './web-client.js';

const KEY_PATTERN = /^dsk_[0-9A-Za-z]{43}$/;

describe('API keys', () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  });

  it('POST /api/v1/keys shows the key once; the list shows only prefix and last 4', async () => {
    const created = await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'ci uploads' } });
    expect(created.status).toBe(201);
    const key: string = created.body.key;
    expect(key).toMatch(KEY_PATTERN);
    expect(created.body).toMatchObject({
      name: 'ci uploads',
      prefix: key.slice(0, 8),
      last4: key.slice(-4),
      scopes: ['read:documents', 'write:documents'],
      last_used_at: null,
    });

    const list = await api(d, '/api/v1/keys', { token: user.apiKey });
    expect(list.status).toBe(200);
    const row = list.body.keys.find((k: { id: string }) => k.id === created.body.id);
    expect(row).toEqual({ ...created.body, key: undefined, created_at: created.body.created_at });
    expect(Object.keys(row)).not.toContain('key');
    expect(JSON.stringify(list.body)).not.toContain(key);
    expect(JSON.stringify(list.body)).not.toContain(key.slice(8, -4));

    // The new key works, and using it is recorded.
    expect((await api(d, '/api/v1/projects', { token: key })).status).toBe(200);
    const after = await api(d, '/api/v1/keys', { token: user.apiKey });
    expect(after.body.keys.find((k: { id: string }) => k.id === created.body.id).last_used_at).toMatch(/Z$/);
  });

  it('a revoked key is refused at once with 401 and WWW-Authenticate', async () => {
    const created = await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'short-lived' } });
    const key: string = created.body.key;
    expect((await api(d, '/api/v1/projects', { token: key })).status).toBe(200);

    const revoked = await api(d, `/api/v1/keys/${created.body.id}`, { method: 'DELETE', token: user.apiKey });
    expect(revoked.status).toBe(204);
    const refused = await api(d, '/api/v1/projects', { token: key });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
    expect(refused.body.error.message).toBe('the credential is not valid, has expired or was revoked');
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const list = await api(d, '/api/v1/keys', { token: user.apiKey });
    expect(list.body.keys.map((k: { id: string }) => k.id)).not.toContain(created.body.id);
    const again = await api(d, `/api/v1/keys/${created.body.id}`, { method: 'DELETE', token: user.apiKey });
    expect(again.status).toBe(404);
    expect(again.body.error).toMatchObject({ code: 'not_found', message: 'API key not found' });
  });

  it('a read:documents key gets 403 insufficient_scope on a write route', async () => {
    const reader = await addUser(d, { scopes: 'read:documents' });
    expect((await api(d, '/api/v1/projects', { token: reader.apiKey })).status).toBe(200);
    const res = await api(d, '/api/v1/projects', { token: reader.apiKey, body: { name: 'nope' } });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({
      code: 'insufficient_scope',
      message: 'this credential lacks the write:documents scope',
      details: { required_scope: 'write:documents', granted_scopes: ['read:documents'] },
    });
    expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="docsearch", error="insufficient_scope", scope="write:documents"');
    // Nothing was written.
    const list = await api(d, '/api/v1/projects', { token: reader.apiKey });
    expect(list.body.projects.map((p: { name: string }) => p.name)).toEqual(['default']);
  });

  it('a key cannot be created with scopes its creator lacks', async () => {
    const writer = await addUser(d, { scopes: 'write:documents' });
    const res = await api(d, '/api/v1/keys', { token: writer.apiKey, body: { scopes: ['read:documents'] } });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'insufficient_scope', message: 'cannot grant scopes the caller lacks: read:documents' });
    const narrower = await api(d, '/api/v1/keys', { token: writer.apiKey, body: {} });
    expect(narrower.status).toBe(201);
    expect(narrower.body.scopes).toEqual(['write:documents']);
  });

  it('rejects unknown scopes and fields by name', async () => {
    const res = await api(d, '/api/v1/keys', { token: user.apiKey, body: { scopes: ['admin'] } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toMatch(/^body\.scopes\.0: /);
    const extra = await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'x', expires: 3 } });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toBe('unknown field "expires" in body');
  });

  it("a user cannot see or revoke another user's keys", async () => {
    const other = await addUser(d);
    const mine = await api(d, '/api/v1/keys', { token: user.apiKey });
    const theirs = await api(d, '/api/v1/keys', { token: other.apiKey });
    const myIds = mine.body.keys.map((k: { id: string }) => k.id);
    expect(theirs.body.keys.map((k: { id: string }) => k.id).some((id: string) => myIds.includes(id))).toBe(false);
    const res = await api(d, `/api/v1/keys/${myIds[0]}`, { method: 'DELETE', token: other.apiKey });
    expect(res.status).toBe(404);
    expect((await api(d, '/api/v1/projects', { token: user.apiKey })).status).toBe(200);
  });

  it('Settings → API Keys: generate shows the key once, the list never again, revoke stops it', async () => {
    const web = new WebClient(d);
    expect((await web.login(user.email, user.password)).status).toBe(302);
    const page = await web.get('/settings/keys');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>API Keys</h1>');
    expect(newKeyOnPage(page.text)).toBeNull();

    const generated = await web.submit('/settings/keys', { _csrf: web.csrf, name: 'from the page', scopes: ['read:documents', 'write:documents'] });
    // Post/Redirect/Get: a reload of the page that shows the key re-posts nothing.
    expect(generated.redirectedFrom).toMatchObject({ status: 303, location: '/settings/keys' });
    expect(generated.redirectedFrom!.text).not.toContain('dsk_');
    expect(generated.status).toBe(200);
    expect(generated.text).toContain('Copy your new API key now.');
    expect(generated.text).toContain('data-copy-target="new-key"');
    const key = newKeyOnPage(generated.text)!;
    expect(key).toMatch(KEY_PATTERN);
    expect((await api(d, '/api/v1/projects', { token: key })).status).toBe(200);

    const reload = await web.get('/settings/keys');
    expect(reload.text).not.toContain(key);
    expect(reload.text).not.toContain(key.slice(8, -4));
    expect(reload.text).toContain(`<code>${key.slice(0, 8)}…${key.slice(-4)}</code>`);
    expect(reload.text).toContain('from the page');
    const listed = await api(d, '/api/v1/keys', { token: user.apiKey });
    expect(JSON.stringify(listed.body)).not.toContain(key);

    // Shown on the next page only: a key whose page was not the next one shown is never shown.
    const skipped = await web.post('/settings/keys', { _csrf: web.csrf, name: 'page skipped', scopes: ['read:documents'] });
    expect(skipped.status).toBe(303);
    expect((await web.get('/projects')).status).toBe(200);
    expect(newKeyOnPage((await web.get('/settings/keys')).text)).toBeNull();

    const noScope = await web.post('/settings/keys', { _csrf: web.csrf, name: 'no scopes' });
    expect(noScope.status).toBe(400);
    expect(noScope.text).toContain('Choose at least one scope.');

    const noCsrf = await web.post('/settings/keys', { name: 'forged', scopes: 'read:documents' });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.text).toContain('the form expired or did not come from this site');

    const id = listed.body.keys.find((k: { name: string }) => k.name === 'from the page').id;
    await web.get('/settings/keys');
    const revoke = await web.post(`/settings/keys/${id}/revoke`, { _csrf: web.csrf });
    expect(revoke.status).toBe(302);
    expect(revoke.location).toBe('/settings/keys');
    const refused = await api(d, '/api/v1/projects', { token: key });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('the settings page needs a login', async () => {
    const res = await new WebClient(d).get('/settings/keys');
    expect(res.status).toBe(302);
    expect(res.location).toBe('/login?return_to=%2Fsettings%2Fkeys');
    const post = await new WebClient(d).post('/settings/keys', { name: 'x', scopes: 'read:documents' });
    expect(post.status).toBe(302);
  });
});
