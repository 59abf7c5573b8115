/**
 * Lows 19, 20, 21, 22 and 30 of issue 61, each through the pages a browser gets (one daemon for the file):
 * setup says the first account is the admin and asks for the password twice; the last admin who tries to give up
 * admin stays on Admin → Users, told why; "editors" in the share box points at group:editors, which the box also
 * offers; a recovery-code sign-in says how many codes are left; the key form limits a key to projects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { enrolTotp } from '../auth/two-factor/totp.js';
import { loggedIn, WebClient } from '../server/web-client.js';

describe('first-run setup', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
  });

  it('Low 19: setup says the first account is the admin, and a mistyped second password makes nothing', async () => {
    const web = new WebClient(d);
    const path = new URL(d.setupUrl!).pathname + new URL(d.setupUrl!).search;
    const page = await web.get(path);
    expect(page.text).toContain("is this library's first <strong>administrator</strong>");
    expect(page.text).toContain('name="password2"');
    const token = new URL(d.setupUrl!).searchParams.get('token')!;
    const mismatch = await web.post('/setup', { _csrf: web.csrf, token, email: 'ada@example.com', password: 'correct horse battery staple', password2: 'correct horse battery stapel' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toContain('The passwords do not match.');
    // Nothing was made: the link still works, and the same form with the password twice makes the admin.
    const made = await web.post('/setup', { _csrf: web.csrf, token, email: 'ada@example.com', password: 'correct horse battery staple', password2: 'correct horse battery staple' });
    expect(made.status).toBe(302);
  });
});

describe('team Lows through the pages', () => {
  let d: Daemon;
  let admin: TestUser;
  let alice: TestUser;

  beforeAll(async () => {
    d = await startDaemon();
    admin = await addUser(d, { email: 'ada@example.com' });
    alice = await addUser(d, { email: 'alice@example.com' });
  });
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
  });

  it('Low 20: the last admin giving up admin stays on Admin → Users, told why', async () => {
    const web = await loggedIn(d, admin);
    const users = await web.get('/admin/users');
    const id = /\/admin\/users\/(usr_[0-9A-Za-z]+)\/admin/.exec(users.text)![1]!;
    const res = await web.submit(`/admin/users/${id}/admin`, { _csrf: web.csrf, admin: 'off' });
    expect(res.redirectedFrom?.location).toBe('/admin/users');
    expect(res.text).toContain('This is the only active admin');
  });

  it('Low 21: "editors" in the share box points at group:editors, which the box offers', async () => {
    expect((await runCli(['groups', 'create', 'editors', '--data-dir', d.dataDir], { env: d.env })).code).toBe(0);
    const project = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Handbook' } })).body.id as string;
    const web = await loggedIn(d, alice);
    const page = await web.get(`/projects/${project}/sharing`);
    expect(page.text).toContain('<option value="group:editors">');
    const res = await web.submit(`/projects/${project}/members`, { _csrf: web.csrf, member: 'editors', role: 'editor' });
    expect(res.text).toContain('to share with the group editors, write group:editors');
    const api400 = await api(d, `/api/v1/projects/${project}/members`, { token: alice.apiKey, body: { email: 'editors', role: 'editor' } });
    expect(api400.status).toBe(400);
    expect(api400.body.error.message).toContain('write group:editors');
  });

  it('Low 22: a recovery-code sign-in says how many codes are left', async () => {
    const bob = await addUser(d, { email: 'bob@example.com' });
    const { recoveryCodes } = await enrolTotp(await loggedIn(d, bob));
    const web = new WebClient(d);
    expect((await web.login(bob.email, bob.password)).location).toMatch(/^\/login\/verify/);
    await web.get('/login/verify');
    const res = await web.submit('/login/verify', { _csrf: web.csrf, code: recoveryCodes[0]!, return_to: '' });
    expect(res.redirectedFrom?.status).toBe(303);
    expect(res.text).toContain(`You signed in with a recovery code: ${recoveryCodes.length - 1} are left`);
  });

  it('Low 30: the key form limits a key to the projects ticked; a refused one makes no key and keeps what was chosen', async () => {
    const web = await loggedIn(d, alice);
    const project = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Only this one' } })).body.id as string;
    const page = await web.get('/settings/keys');
    expect(page.text).toContain(`name="projects" value="${project}"`);
    const made = await web.submit('/settings/keys', { _csrf: web.csrf, name: 'limited', scopes: ['read:documents'], expires: '30', projects: [project] });
    const key = /id="new-key" readonly value="(dsk_[0-9A-Za-z]+)"/.exec(made.text)![1]!;
    expect((await api(d, '/api/v1/me', { token: key })).body.project_ids).toEqual([project]);
    expect(made.text).toContain('Only this one');
    // A project the person may not read is refused, not ignored: no key is made, and the form comes back as it was
    // sent (the scope left out stays out: re-ticking every scope made the next try a broader key than chosen).
    const forged = await web.submit('/settings/keys', { _csrf: web.csrf, name: 'forged', scopes: ['read:documents'], expires: '90', projects: [project, 'prj_000000000ZZZZZZZZZZZZ'] });
    expect(forged.status).toBe(400);
    expect(forged.text).toContain('<p class="error" role="alert">A project you ticked is not one you may read: reload the page and tick again.</p>');
    expect(forged.text).toContain('name="name" maxlength="200" placeholder="e.g. CI uploads" value="forged">');
    expect(forged.text).toContain('<input type="checkbox" name="scopes" value="read:documents" checked>');
    expect(forged.text).toContain('<input type="checkbox" name="scopes" value="write:documents">');
    expect(forged.text).toContain(`<input type="checkbox" name="projects" value="${project}" checked>`);
    expect(forged.text).toContain('<option value="90" selected>');
    const keys = (await api(d, '/api/v1/keys', { token: alice.apiKey })).body.keys as { name: string | null }[];
    expect(keys.map((k) => k.name)).not.toContain('forged');
    expect(keys.map((k) => k.name)).toContain('limited');
  });
});
