import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { expireAt } from '../helpers/key-expiry.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { cliEnv } from '../cli/cli-env.js';
import { newKeyOnPage, WebClient } from './web-client.js';

const KEY_PATTERN = /^dsk_[0-9A-Za-z]{43}$/;
const DAY = 86_400_000;

const mcpCall = (d: Daemon, token: string) =>
  fetch(`${d.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

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
      expires_at: null,
      expired: false,
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

  it('a key made to expire in N days or at a moment says so on creation and in the list', async () => {
    const inDays = await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'thirty days', expires_in_days: 30 } });
    expect(inDays.status).toBe(201);
    const lifetime = Date.parse(inDays.body.expires_at) - Date.parse(inDays.body.created_at);
    expect(lifetime).toBe(30 * DAY);
    expect(inDays.body.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(inDays.body.expired).toBe(false);

    const nextYear = new Date().getUTCFullYear() + 1;
    const onDate = await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'dated', expires_at: `${nextYear}-01-31` } });
    expect(onDate.status).toBe(201);
    expect(onDate.body.expires_at).toBe(`${nextYear}-01-31T00:00:00.000Z`);
    const atMoment = await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'timed', expires_at: `${nextYear}-03-01T09:30:00+02:00` } });
    expect(atMoment.body.expires_at).toBe(`${nextYear}-03-01T07:30:00.000Z`);

    const list = await api(d, '/api/v1/keys', { token: user.apiKey });
    const listed = (id: string) => list.body.keys.find((k: { id: string }) => k.id === id);
    expect(listed(inDays.body.id)).toMatchObject({ expires_at: inDays.body.expires_at, expired: false });
    expect(listed(onDate.body.id)).toMatchObject({ expires_at: `${nextYear}-01-31T00:00:00.000Z`, expired: false });
    expect((await api(d, '/api/v1/projects', { token: inDays.body.key })).status).toBe(200);
  });

  it('an expired key gets 401 saying when it expired, on REST and MCP, and stays listed as expired until revoked', async () => {
    const created = await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'nightly ci', expires_in_days: 7 } });
    const key: string = created.body.key;
    expect((await api(d, '/api/v1/projects', { token: key })).status).toBe(200);
    expect((await mcpCall(d, key)).status).toBe(200);

    await expireAt(d, created.body.id, Date.UTC(2026, 0, 5, 14, 3));
    const refused = await api(d, '/api/v1/projects', { token: key });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ code: 'unauthorized', message: 'the API key expired on 2026-01-05 14:03 UTC' });
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="docsearch", error="invalid_token", error_description="the API key expired on 2026-01-05 14:03 UTC"');
    const mcp = await mcpCall(d, key);
    expect(mcp.status).toBe(401);
    expect(((await mcp.json()) as { error: { message: string } }).error.message).toBe('the API key expired on 2026-01-05 14:03 UTC');
    expect(mcp.headers.get('www-authenticate')).toContain('error_description="the API key expired on 2026-01-05 14:03 UTC"');

    // The CLI in a CI job says it too (exit 4, a credential problem).
    const ci = await runCli(['projects'], { env: cliEnv(null, { DOCSEARCH_URL: d.url, DOCSEARCH_TOKEN: key }) });
    expect(ci.code).toBe(4);
    expect(ci.stderr).toContain('the API key expired on 2026-01-05 14:03 UTC');

    // A key never made says nothing of expiry.
    const unknown = await api(d, '/api/v1/projects', { token: `dsk_${'A'.repeat(43)}` });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.message).toBe('the credential is not valid, has expired or was revoked');

    const list = await api(d, '/api/v1/keys', { token: user.apiKey });
    expect(list.body.keys.find((k: { id: string }) => k.id === created.body.id)).toMatchObject({ name: 'nightly ci', expires_at: '2026-01-05T14:03:00.000Z', expired: true });
    expect((await api(d, `/api/v1/keys/${created.body.id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    expect((await api(d, '/api/v1/keys', { token: user.apiKey })).body.keys.map((k: { id: string }) => k.id)).not.toContain(created.body.id);
    expect((await api(d, '/api/v1/projects', { token: key })).body.error.message).toBe('the credential is not valid, has expired or was revoked');
  });

  it('refuses a bad expiry with 400 saying what is wrong, and makes no key', async () => {
    const before = (await api(d, '/api/v1/keys', { token: user.apiKey })).body.keys.length;
    const farYear = new Date().getUTCFullYear() + 11;
    const cases: [Record<string, unknown>, string][] = [
      [{ expires_in_days: 0 }, 'body.expires_in_days: '],
      [{ expires_in_days: 3651 }, 'body.expires_in_days: '],
      [{ expires_in_days: 1.5 }, 'body.expires_in_days: '],
      [{ expires_in_days: '30' }, 'body.expires_in_days: '],
      [{ expires_at: 'next tuesday' }, 'body.expires_at: must be a date (2027-01-31: from 00:00 UTC that day) or an RFC 3339 timestamp with its offset'],
      [{ expires_at: '2027-02-30' }, 'body.expires_at: must be a date (2027-01-31: from 00:00 UTC that day) or an RFC 3339 timestamp with its offset'],
      [{ expires_at: '2027-01-31T10:00:00' }, 'body.expires_at: must be a date (2027-01-31: from 00:00 UTC that day) or an RFC 3339 timestamp with its offset'],
      [{ expires_at: '2020-01-01' }, 'the expiry 2020-01-01T00:00:00.000Z has already passed: give a moment in the future'],
      [{ expires_at: `${farYear}-01-01` }, `the expiry ${farYear}-01-01T00:00:00.000Z is more than 3650 days away`],
      [{ expires_in_days: 30, expires_at: '2030-01-01' }, 'body: give expires_in_days or expires_at, not both'],
    ];
    for (const [body, message] of cases) {
      const res = await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'bad expiry', ...body } });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.message, JSON.stringify(body)).toContain(message);
    }
    expect((await api(d, '/api/v1/keys', { token: user.apiKey })).body.keys).toHaveLength(before);
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

    const generated = await web.submit('/settings/keys', { _csrf: web.csrf, name: 'from the page', scopes: ['read:documents', 'write:documents'], expires: 'never' });
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
    const skipped = await web.post('/settings/keys', { _csrf: web.csrf, name: 'page skipped', scopes: ['read:documents'], expires: '30' });
    expect(skipped.status).toBe(303);
    expect((await web.get('/projects')).status).toBe(200);
    expect(newKeyOnPage((await web.get('/settings/keys')).text)).toBeNull();

    const noScope = await web.submit('/settings/keys', { _csrf: web.csrf, name: 'no scopes', expires: '30' });
    expect(noScope.redirectedFrom).toMatchObject({ status: 303, location: '/settings/keys' });
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

  it('Settings → API Keys: a key expires after the lifetime chosen (30 days unless changed), and the list says when or that it has', async () => {
    const owner = await addUser(d);
    const web = new WebClient(d);
    expect((await web.login(owner.email, owner.password)).status).toBe(302);
    const page = await web.get('/settings/keys');
    // The choices, 30 days preselected, "No expiration" one of them, in a labelled control.
    expect(page.text).toMatch(/<label>Expiration <select name="expires" aria-describedby="expires-help">/);
    expect([...page.text.matchAll(/<option value="([^"]+)"( selected)?>([^<]+)</g)].map((m) => `${m[1]}${m[2] ? '*' : ''}=${m[3]}`)).toEqual([
      '7=7 days',
      '30*=30 days',
      '60=60 days',
      '90=90 days',
      '365=1 year',
      'never=No expiration',
    ]);

    const generated = await web.submit('/settings/keys', { _csrf: web.csrf, name: 'quarterly', scopes: ['read:documents'], expires: '90' });
    expect(generated.status).toBe(200);
    const key = newKeyOnPage(generated.text)!;
    const made = (await api(d, '/api/v1/keys', { token: owner.apiKey })).body.keys.find((k: { name: string }) => k.name === 'quarterly');
    const lifetime = Date.parse(made.expires_at) - Date.parse(made.created_at);
    expect(lifetime).toBe(90 * DAY);
    await web.submit('/settings/keys', { _csrf: web.csrf, name: 'forever', scopes: ['read:documents'], expires: 'never' });

    const row = (text: string, name: string) => new RegExp(`<tr>\\s*<td>${name}</td>[\\s\\S]*?</tr>`).exec(text)?.[0] ?? '';
    const listed = (await web.get('/settings/keys')).text;
    expect(row(listed, 'quarterly')).toMatch(/<td data-label="Expires">in 90 days <span class="muted">\(<time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/time>\)<\/span><\/td>/);
    expect(row(listed, 'forever')).toContain('<td data-label="Expires"><span class="muted">No expiration</span></td>');

    await expireAt(d, made.id, Date.UTC(2026, 0, 5, 14, 3));
    expect((await api(d, '/api/v1/projects', { token: key })).status).toBe(401);
    expect(row((await web.get('/settings/keys')).text, 'quarterly')).toContain(
      '<td data-label="Expires"><strong class="error">Expired</strong> <span class="muted"><time datetime="2026-01-05T14:03:00.000Z">2026-01-05 14:03 UTC</time></span></td>',
    );

    for (const expires of ['45', 'forever']) {
      const bad = await web.submit('/settings/keys', { _csrf: web.csrf, name: 'bad lifetime', scopes: 'read:documents', expires });
      expect(bad.status).toBe(400);
      expect(bad.text).toContain('Choose when the key expires.');
    }
    expect((await api(d, '/api/v1/keys', { token: owner.apiKey })).body.keys.map((k: { name: string }) => k.name)).not.toContain('bad lifetime');
    // A post without the field (a page loaded before expiry existed) gets what the form preselects: 30 days.
    expect((await web.post('/settings/keys', { _csrf: web.csrf, name: 'older page', scopes: 'read:documents' })).status).toBe(303);
    const older = (await api(d, '/api/v1/keys', { token: owner.apiKey })).body.keys.find((k: { name: string }) => k.name === 'older page');
    expect(Date.parse(older.expires_at) - Date.parse(older.created_at)).toBe(30 * 24 * 3600_000);
  });

  it('docsearch users add --api-key --key-expires gives the provisioned key an expiry; a bad one makes neither account nor key', async () => {
    const add = (email: string, ...extra: string[]) => runCli(['users', 'add', email, '--data-dir', d.dataDir, '--api-key', ...extra], { input: 'correct horse battery staple\n', env: d.env });
    const made = await add('expiring-ci@example.com', '--key-expires', '90d');
    expect(made.code).toBe(0);
    const key = made.stdout.trim();
    const [row] = (await api(d, '/api/v1/keys', { token: key })).body.keys;
    expect(made.stderr).toContain(`API key (read:documents write:documents, expires ${row.expires_at}) — shown once, store it now:`);
    const lifetime = Date.parse(row.expires_at) - Date.parse(row.created_at);
    expect(lifetime).toBe(90 * DAY);

    const form = await add('bad-form@example.com', '--key-expires', 'soon');
    expect(form.code).toBe(2);
    expect(form.stderr).toContain('error: --key-expires: "soon" is not an expiry: give `30d` (days from now), a date such as 2027-01-31, an RFC 3339 timestamp, or `never`');
    const past = await add('bad-past@example.com', '--key-expires', '2020-01-01');
    expect(past.code).toBe(1);
    expect(past.stderr).toContain('error: the expiry 2020-01-01T00:00:00.000Z has already passed: give a moment in the future');
    // Neither account was made: adding them again works.
    expect((await add('bad-past@example.com')).code).toBe(0);
    expect((await add('bad-form@example.com')).code).toBe(0);
  });

  it('the settings page needs a login', async () => {
    const res = await new WebClient(d).get('/settings/keys');
    expect(res.status).toBe(302);
    expect(res.location).toBe('/login?return_to=%2Fsettings%2Fkeys');
    const post = await new WebClient(d).post('/settings/keys', { name: 'x', scopes: 'read:documents' });
    expect(post.status).toBe(302);
  });
});
