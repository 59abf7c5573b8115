import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn, WebClient } from '../server/web-client.js';

/**
 * The Admin pages through HTTP as a browser sends their forms: who may open them (admins; a 403 page for anyone
 * else signed in, the login page when signed out), CSRF on every form, invitations (one use, expiry, password
 * rules), what an admin may not do to themselves, deleting with a confirmation that hands projects on, groups
 * (an identity provider's read-only) and the sharing policy.
 */

const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
const flashOf = (page: string) => {
  const m = /<p class="(?:notice|error) flash" role="(?:status|alert)">([^<]*)<\/p>/.exec(page);
  return m ? decode(m[1]!) : null;
};
const errorOf = (page: string) => {
  const m = /<p class="error" role="alert">([^<]*)<\/p>/.exec(page);
  return m ? decode(m[1]!) : null;
};
const h1 = (page: string) => decode(/<h1>([^<]*)/.exec(page)?.[1] ?? '');
const inviteLink = (page: string) => /id="invite-link" readonly value="([^"]+)"/.exec(page)?.[1] ?? null;
const resetLink = (page: string) => /id="reset-link" readonly value="([^"]+)"/.exec(page)?.[1] ?? null;
const rowOf = (page: string, attr: string, id: string) => new RegExp(`<tr ${attr}="${id}">[\\s\\S]*?</tr>`).exec(page)?.[0] ?? '';
const userId = (page: string, email: string) => new RegExp(`<tr data-user-id="(usr_\\w+)">\\s*<td>${email.replace(/[.]/g, '\\.')}`).exec(page)?.[1];

const ADMIN_GETS = ['/admin', '/admin/users', '/admin/groups', '/admin/sharing', '/admin/mail', '/admin/sources', '/admin/audit'];

describe('Admin pages', () => {
  let d: Daemon;
  let admin: TestUser;
  let bob: TestUser;
  let web: WebClient;
  let bobWeb: WebClient;

  daemonForSuite(async (daemon) => {
    d = daemon;
    admin = await addUser(d); // the first account: the admin
    bob = await addUser(d);
  });
  beforeAll(async () => {
    web = await loggedIn(d, admin);
    bobWeb = await loggedIn(d, bob);
  });

  /** Posts an Admin form with the CSRF token of the page the client is on. */
  const post = (client: WebClient, path: string, form: Record<string, string> = {}) => client.submit(path, { _csrf: client.csrf, ...form });

  it('admins only: signed out → the login page; signed in but not an admin → 403 on every page and form; the Admin link only for admins', async () => {
    const anon = new WebClient(d);
    for (const path of [...ADMIN_GETS, '/admin/groups/grp_x', '/admin/users/usr_x/delete']) {
      const res = await anon.get(path);
      expect(res.status, path).toBe(302);
      expect(res.location, path).toBe(`/login?return_to=${encodeURIComponent(path)}`);
    }
    expect((await anon.post('/admin/sharing', { policy: 'admins' })).location).toMatch(/^\/login\?return_to=/);

    await bobWeb.get('/settings/keys');
    expect(bobWeb.lastPage).not.toContain('href="/admin"');
    const target = userId((await web.get('/admin/users')).text, admin.email)!;
    for (const path of [...ADMIN_GETS, `/admin/users/${target}/delete`]) {
      const res = await bobWeb.get(path);
      expect(res.status, path).toBe(403);
      expect(h1(res.text), path).toBe('Admins only');
    }
    await bobWeb.get('/settings/keys');
    const posts: [string, Record<string, string>][] = [
      ['/admin/users/invite', { email: 'mallory@example.com' }],
      [`/admin/users/${target}/disable`, {}],
      [`/admin/users/${target}/admin`, { admin: 'off' }],
      [`/admin/users/${target}/delete`, {}],
      ['/admin/groups', { name: 'mallory', description: '' }],
      ['/admin/sharing', { policy: 'admins' }],
    ];
    for (const [path, form] of posts) {
      const res = await bobWeb.post(path, { _csrf: bobWeb.csrf, ...form });
      expect(res.status, path).toBe(403);
      expect(h1(res.text), path).toBe('Admins only');
    }
    // Nothing was done: the admin is still an enabled admin, no one was invited, no group made, the policy as it was.
    const me = await api(d, '/api/v1/me', { token: admin.apiKey });
    expect(me.status).toBe(200);
    expect(me.body.admin).toBe(true);
    expect((await web.get('/admin/users')).text).not.toContain('mallory@example.com');
    expect((await web.get('/admin/groups')).text).not.toContain('mallory');
    expect((await web.get('/admin/sharing')).text).toMatch(/value="anyone" checked/);

    // The admin sees the link; the Admin pages' forms check CSRF like every other.
    const page = await web.get('/admin');
    expect(page.status).toBe(302);
    expect(page.location).toBe('/admin/users');
    expect((await web.get('/admin/users')).text).toContain('href="/admin"');
    const forged = await web.post('/admin/sharing', { _csrf: 'forged', policy: 'admins' });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('the form expired or did not come from this site');
  });

  it('an invitation: its link shown once, a weak or mismatched password keeps it, it works once, an expired or unknown one gets a clear page', async () => {
    await web.get('/admin/users');
    const made = await post(web, '/admin/users/invite', { email: 'dave@example.com' });
    expect(made.redirectedFrom!.location).toBe('/admin/users#invite');
    const link = inviteLink(made.text)!;
    expect(link).toMatch(new RegExp(`^${d.url}/invite\\?token=[\\w-]{43}$`));
    expect(inviteLink((await web.get('/admin/users')).text)).toBeNull();
    expect(web.lastPage).toContain('dave@example.com');
    const token = new URL(link).searchParams.get('token')!;

    const dave = new WebClient(d);
    const form = await dave.get(link);
    expect(form.status).toBe(200);
    expect(form.text).toContain('<strong id="invite-email">dave@example.com</strong>');
    const mismatch = await dave.post('/invite', { _csrf: dave.csrf, token, password: 'correct horse battery staple', password2: 'correct horse battery stable' });
    expect(mismatch.status).toBe(400);
    expect(errorOf(mismatch.text)).toBe('The passwords do not match.');
    const weak = await dave.post('/invite', { _csrf: dave.csrf, token, password: 'short', password2: 'short' });
    expect(weak.status).toBe(400);
    expect(errorOf(weak.text)).toBe('Password must be at least 8 characters.');
    const csrf = dave.csrf;
    const noCsrf = await dave.post('/invite', { _csrf: 'x', token, password: 'correct horse battery staple', password2: 'correct horse battery staple' });
    expect(noCsrf.status).toBe(403);

    const joined = await dave.post('/invite', { _csrf: csrf, token, password: 'correct horse battery staple', password2: 'correct horse battery staple' });
    expect(joined.status).toBe(303);
    expect(joined.location).toBe('/');
    expect((await dave.get('/settings/account')).text).toContain('<strong id="account-email">dave@example.com</strong>');
    const login = await new WebClient(d).login('dave@example.com', 'correct horse battery staple');
    expect(login.status).toBe(302);

    const again = new WebClient(d);
    for (const path of [link, '/invite?token=nope', '/invite']) {
      const res = await again.get(path);
      expect(res.status, path).toBe(404);
      expect(h1(res.text), path).toBe('Invitation link not valid');
    }
    await again.get('/login');
    const reused = await again.post('/invite', { _csrf: again.csrf, token, password: 'another good password', password2: 'another good password' });
    expect(reused.status).toBe(404);

    // A newer invitation for an address replaces the older one.
    await web.get('/admin/users');
    const first = inviteLink((await post(web, '/admin/users/invite', { email: 'hank@example.com' })).text)!;
    const second = inviteLink((await post(web, '/admin/users/invite', { email: 'hank@example.com' })).text)!;
    expect((await again.get(first)).status).toBe(404);
    expect((await again.get(second)).status).toBe(200);

    // An address with an account already is refused; so is one that is not an address.
    await web.get('/admin/users');
    expect(errorOf((await post(web, '/admin/users/invite', { email: bob.email })).text)).toBe(`An account with the e-mail ${bob.email} exists already.`);
    expect(errorOf((await post(web, '/admin/users/invite', { email: 'not an address' })).text)).toBe('"not an address" is not an e-mail address.');

    // Expired: a week later (moved back in the database) the link gets the same page, and makes no account.
    const late = inviteLink((await post(web, '/admin/users/invite', { email: 'erin@example.com' })).text)!;
    const db = new Database(join(d.dataDir, 'docsearch.db'));
    try {
      db.prepare("update invites set expires_at = ? where email = 'erin@example.com'").run(Date.now() - 1000);
    } finally {
      db.close();
    }
    const erin = new WebClient(d);
    expect((await erin.get(late)).status).toBe(404);
    await erin.get('/login');
    const expired = await erin.post('/invite', { _csrf: erin.csrf, token: new URL(late).searchParams.get('token')!, password: 'correct horse battery staple', password2: 'correct horse battery staple' });
    expect(expired.status).toBe(404);
    expect(h1(expired.text)).toBe('Invitation link not valid');
    expect((await web.get('/admin/users')).text).not.toContain('erin@example.com');
  });

  it('an admin cannot disable, delete or (as the last one) unmake themselves; with another admin they may step down', async () => {
    const page = (await web.get('/admin/users')).text;
    const me = userId(page, admin.email)!;
    const bobId = userId(page, bob.email)!;
    expect(flashOf((await post(web, `/admin/users/${me}/disable`)).text)).toBe('You cannot disable your own account: another admin can.');
    await web.get(`/admin/users/${me}/delete`);
    const deleted = await post(web, `/admin/users/${me}/delete`, { transfer_to: bob.email });
    expect(deleted.status).toBe(400);
    expect(errorOf(deleted.text)).toBe('You cannot delete your own account: another admin can.');
    await web.get('/admin/users');
    const last = await post(web, `/admin/users/${me}/admin`, { admin: 'off' });
    expect(flashOf(last.text)).toBe('This is the only active admin: make another account an admin first.');
    expect((await web.get('/admin/users')).status).toBe(200);
    expect((await api(d, '/api/v1/me', { token: admin.apiKey })).status).toBe(200);
    expect(flashOf((await post(web, `/admin/users/${bobId}/admin`, { admin: 'maybe' })).text)).toBe('Admin must be on or off.');

    // Bob made an admin opens the Admin pages; the first admin steps down and lands outside them.
    expect(flashOf((await post(web, `/admin/users/${bobId}/admin`, { admin: 'on' })).text)).toBe(`${bob.email} is now an admin.`);
    expect((await bobWeb.get('/admin/users')).status).toBe(200);
    // Stepping down asks first: one's own row links to a page saying what closes; another's row posts at once.
    const list = (await web.get('/admin/users')).text;
    expect(list).toContain(`<a href="/admin/users/${me}/admin" class="button small">`);
    expect(list).toMatch(new RegExp(`<form method="post" action="/admin/users/${bobId}/admin"`));
    const ask = await web.get(`/admin/users/${me}/admin`);
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('Give up your admin rights?');
    expect(ask.text).toMatch(/<input type="hidden" name="admin" value="off">[\s\S]*id="confirm">Remove my admin rights</);
    expect((await web.get(`/admin/users/${bobId}/admin`)).location).toBe('/admin/users');
    const stepped = await post(web, `/admin/users/${me}/admin`, { admin: 'off' });
    expect(stepped.redirectedFrom!.location).toBe('/');
    expect(flashOf(stepped.text)).toBe(`${admin.email} is no longer an admin.`);
    expect((await web.get('/admin/users')).status).toBe(403);
    // Bob gives it back, and is no admin again.
    expect(flashOf((await post(bobWeb, `/admin/users/${me}/admin`, { admin: 'on' })).text)).toBe(`${admin.email} is now an admin.`);
    await web.get('/admin/users');
    expect(flashOf((await post(web, `/admin/users/${bobId}/admin`, { admin: 'off' })).text)).toBe(`${bob.email} is no longer an admin.`);
    expect((await bobWeb.get('/admin/users')).status).toBe(403);
  });

  it('disable ends the web sessions, keys and grants at once; enable lets the person sign in again', async () => {
    const frank = await addUser(d);
    const frankWeb = await loggedIn(d, frank);
    const id = userId((await web.get('/admin/users')).text, frank.email)!;
    const disabled = await post(web, `/admin/users/${id}/disable`);
    expect(flashOf(disabled.text)).toBe(`Disabled ${frank.email}: ended 1 web session, revoked 1 API key and 0 connected apps.`);
    expect(disabled.text).toMatch(new RegExp(`${frank.email.replace('.', '\\.')}[\\s\\S]*?<strong class="error">disabled</strong>`));
    expect((await frankWeb.get('/documents')).location).toBe('/login?return_to=%2Fdocuments');
    expect((await api(d, '/api/v1/projects', { token: frank.apiKey })).status).toBe(401);
    expect((await new WebClient(d).login(frank.email, frank.password)).status).toBe(403);

    expect(flashOf((await post(web, `/admin/users/${id}/enable`)).text)).toBe(`Enabled ${frank.email}: they can sign in again (their old keys and sessions stay ended).`);
    expect((await new WebClient(d).login(frank.email, frank.password)).status).toBe(302);
    expect((await api(d, '/api/v1/projects', { token: frank.apiKey })).status).toBe(401);
    expect(flashOf((await post(web, '/admin/users/usr_nobody/disable')).text)).toBe('Account not found.');
  });

  it('delete asks first, names what the account owns, refuses to lose documents, and hands the projects on', async () => {
    const gail = await addUser(d);
    const notes = await api(d, '/api/v1/projects', { token: gail.apiKey, body: { name: 'field notes' } });
    const up = await uploadFiles(d, gail.apiKey, [{ name: 'otters.txt', bytes: Buffer.from('Otters den in the riverbank roots below the mill.\n') }], { projectId: notes.body.id, query: '?wait=true' });
    expect(up.body.documents[0].status).toBe('ready');
    const id = userId((await web.get('/admin/users')).text, gail.email)!;

    const confirm = await web.get(`/admin/users/${id}/delete`);
    expect(confirm.status).toBe(200);
    expect(h1(confirm.text)).toBe(`Delete ${gail.email}?`);
    expect(confirm.text).toContain('field notes <span class="muted">(1 document)</span>');
    expect(confirm.text).toMatch(/name="transfer_to"[^>]* required/);

    const refused = await post(web, `/admin/users/${id}/delete`, { transfer_to: '' });
    expect(refused.status).toBe(409);
    expect(errorOf(refused.text)).toBe(`${gail.email} owns 1 project with documents or members (field notes): transfer them to another account.`);
    const unknown = await post(web, `/admin/users/${id}/delete`, { transfer_to: 'nobody@example.com' });
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown.text)).toBe('Account nobody@example.com not found.');
    expect(unknown.text).toContain('value="nobody@example.com"');
    expect((await api(d, '/api/v1/me', { token: gail.apiKey })).status).toBe(200);

    const done = await post(web, `/admin/users/${id}/delete`, { transfer_to: admin.email });
    expect(done.redirectedFrom!.location).toBe('/admin/users');
    expect(flashOf(done.text)).toBe(`Deleted ${gail.email}; 1 project now belongs to ${admin.email}; deleted 1 empty project; ended 0 web sessions, revoked 1 API key and 0 connected apps.`);
    expect(userId(done.text, gail.email)).toBeUndefined();
    expect((await api(d, '/api/v1/projects', { token: gail.apiKey })).status).toBe(401);
    const mine = await api(d, '/api/v1/projects?limit=100', { token: admin.apiKey });
    const moved = mine.body.projects.find((p: { name: string }) => p.name === 'field notes');
    expect(moved).toMatchObject({ owner: admin.email, role: 'owner', document_count: 1 });
    // Her default project held nothing and was shared with nobody: it went with her account.
    expect(mine.body.projects.some((p: { name: string }) => p.name.startsWith('default (from'))).toBe(false);
    const doc = await api(d, `/api/v1/documents/${up.body.documents[0].id}`, { token: admin.apiKey });
    expect(doc.body).toMatchObject({ filename: 'otters.txt', uploaded_by: null });
  });

  it('groups: make, refuse a taken or malformed name, add and remove people, delete; an identity provider’s group is read-only', async () => {
    await web.get('/admin/groups');
    const made = await post(web, '/admin/groups', { name: 'Editors', description: 'Who edits' });
    expect(made.redirectedFrom!.location).toMatch(/^\/admin\/groups\/grp_\w+$/);
    const path = made.redirectedFrom!.location!;
    await web.get('/admin/groups');
    const taken = await post(web, '/admin/groups', { name: 'editors', description: 'again' });
    expect(taken.status).toBe(409);
    expect(errorOf(taken.text)).toBe('A group named "editors" exists already.');
    expect(taken.text).toContain('value="editors"');
    const malformed = await post(web, '/admin/groups', { name: 'a:b', description: '' });
    expect(malformed.status).toBe(400);
    expect(errorOf(malformed.text)).toBe('A group name is 1–100 characters, without ":" or "/", and does not start with a space.');
    expect((await post(web, '/admin/groups', { name: 'bell\u0007', description: '' })).status).toBe(400);

    await web.get(path);
    expect(flashOf((await post(web, `${path}/members`, { email: bob.email })).text)).toBe(`Added ${bob.email} to Editors.`);
    expect(flashOf((await post(web, `${path}/members`, { email: bob.email })).text)).toBe(`${bob.email} was in Editors already.`);
    // Refused, the group page again with the address as typed.
    const unknown = await post(web, `${path}/members`, { email: 'nobody@example.com' });
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown.text)).toBe('Account nobody@example.com not found.');
    expect(unknown.text).toContain('name="email" value="nobody@example.com"');
    const bobId = new RegExp(`<tr data-user-id="(usr_\\w+)">\\s*<td>${bob.email.replace('.', '\\.')}`).exec(web.lastPage)![1]!;
    expect((await web.get('/admin/groups')).text).toMatch(/>Editors<\/a>[\s\S]*?<td class="num" data-label="Members">1<\/td>/);
    await web.get(path);
    expect(flashOf((await post(web, `${path}/members/${bobId}/remove`)).text)).toBe(`Removed ${bob.email} from Editors: they lost what was shared with it.`);
    // The group's button asks first, naming what goes; nothing is deleted until the confirmation is posted.
    const asked = await post(web, `${path}/delete`);
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('Delete the group Editors?');
    expect(asked.text).toContain('The group has 0 members and is shared with no project: its members lose what it was given');
    expect((await web.get(path)).status).toBe(200);
    expect(flashOf((await post(web, `${path}/delete`, { confirm: 'yes' })).text)).toBe('Deleted the group Editors: its members lost what was shared with it.');
    expect((await web.get(path)).status).toBe(404);

    // A group an identity provider owns (as single sign-on will make them): shown "from <provider>", and read-only.
    const db = new Database(join(d.dataDir, 'docsearch.db'));
    try {
      db.prepare("insert into groups (id, name, description, source, created_at, updated_at) values ('grp_sso', 'Staff', '', 'keycloak', 0, 0)").run();
      db.prepare('insert into group_members (group_id, user_id, created_at) values (?, ?, 0)').run('grp_sso', bobId);
    } finally {
      db.close();
    }
    expect((await web.get('/admin/groups')).text).toContain('>Staff</a> <span class="badge source">from keycloak</span>');
    const sso = await web.get('/admin/groups/grp_sso');
    expect(sso.text).toContain('This group comes from keycloak: its members are changed there, and it is read-only here.');
    expect(sso.text).toContain(bob.email);
    expect(sso.text).not.toContain('action="/admin/groups/grp_sso/members"');
    expect(sso.text).not.toContain('action="/admin/groups/grp_sso/delete"');
    const refused = 'The group "Staff" comes from keycloak: change its members there.';
    expect(errorOf((await post(web, '/admin/groups/grp_sso/members', { email: admin.email })).text)).toBe(refused);
    await web.get('/admin/groups/grp_sso');
    expect(flashOf((await post(web, `/admin/groups/grp_sso/members/${bobId}/remove`)).text)).toBe(refused);
    await web.get('/admin/groups/grp_sso');
    expect(flashOf((await post(web, '/admin/groups/grp_sso/delete')).text)).toBe(refused);
    expect((await web.get('/admin/groups/grp_sso')).text).toContain(bob.email);
  });

  it('the sharing policy: admins only stops an owner who is not one from sharing; anyone lets them again', async () => {
    const project = await api(d, '/api/v1/projects', { token: bob.apiKey, body: { name: 'bob shares' } });
    const share = () => api(d, `/api/v1/projects/${project.body.id}/members`, { token: bob.apiKey, body: { email: admin.email, role: 'viewer' } });
    await web.get('/admin/sharing');
    expect(flashOf((await post(web, '/admin/sharing', { policy: 'everyone' })).text)).toBe('Choose a sharing policy: anyone, groups or admins.');
    const saved = await post(web, '/admin/sharing', { policy: 'admins' });
    expect(flashOf(saved.text)).toBe('Saved the sharing policy.');
    expect(saved.text).toMatch(/value="admins" checked/);
    const refused = await share();
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('only administrators may share projects on this instance (sharing policy: admins)');
    await post(web, '/admin/sharing', { policy: 'anyone' });
    expect((await share()).status).toBe(201);

    // On the project page, a changed role is said with the address as written (it was "Bob…@example.com").
    const mine = await api(d, '/api/v1/projects', { token: admin.apiKey, body: { name: 'admin shares' } });
    await web.get(`/projects/${mine.body.id}`);
    expect(flashOf((await post(web, `/projects/${mine.body.id}/members`, { member: bob.email, role: 'viewer' })).text)).toBe(`Shared with ${bob.email} as viewer.`);
    expect(flashOf((await post(web, `/projects/${mine.body.id}/members`, { member: bob.email, role: 'editor' })).text)).toBe(`${bob.email} is now an editor.`);
    expect(flashOf((await post(web, `/projects/${mine.body.id}/members`, { member: 'group:Staff', role: 'viewer' })).text)).toBe('Shared with the group Staff as viewer.');
    expect(flashOf((await post(web, `/projects/${mine.body.id}/members`, { member: 'group:staff', role: 'owner' })).text)).toBe('The group Staff is now an owner.');
  });

  it('Admin → Users: each account’s sign-in kind, 2FA, last sign-in and uploads; invitations in bulk with a role and a group, listed with their maker, revocable; a reset link shown once', async () => {
    const up = await uploadFiles(d, bob.apiKey, [{ name: 'figures.txt', bytes: Buffer.from('Quarterly figures for the board, in one small file.\n') }], { query: '?wait=true' });
    expect(up.body.documents.map((doc: { status: string }) => doc.status)).toEqual(['ready']);
    const users = (await web.get('/admin/users')).text;
    const bobId = userId(users, bob.email)!;
    const bobRow = rowOf(users, 'data-user-id', bobId);
    expect(bobRow).toContain('<td data-label="Sign-in">local</td>');
    expect(bobRow).toContain('<td data-label="2FA"><span class="muted">none</span></td>');
    expect(bobRow).toMatch(/<td data-label="Last sign-in">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/td>/);
    expect(bobRow).toMatch(/<td class="num" data-label="Uploads">\d+ documents? <span class="muted">· \d+ B<\/span><\/td>/);
    const listed = await api(d, '/api/v1/admin/users', { token: admin.apiKey });
    const bobWire = listed.body.users.find((u: { email: string }) => u.email === bob.email);
    expect(bobRow).toContain(`${bobWire.usage.documents} document`);
    expect(bobWire.usage.bytes).toBeGreaterThanOrEqual(52);

    // Invitations for a list of addresses, as admins in a group; an address with an account is refused by name.
    expect((await post(web, '/admin/groups', { name: 'auditors', description: '' })).status).toBe(200);
    const page = (await web.get('/admin/users')).text;
    const groupId = /<option value="(grp_\w+)">auditors<\/option>/.exec(page)![1]!;
    const made = await post(web, '/admin/users/invite', { email: `ivy@example.com\njack@example.com, ${bob.email}`, role: 'admin', group: groupId });
    expect(errorOf(made.text)).toBe(`Not invited: ${bob.email}: an account with the e-mail ${bob.email} exists already.`);
    const ivyLink = /id="invite-link" readonly value="([^"]+)"/.exec(made.text)![1]!;
    const jackLink = /id="invite-link-2" readonly value="([^"]+)"/.exec(made.text)![1]!;
    expect(made.text).toContain('Invitation link for ivy@example.com');
    const open = (await web.get('/admin/users')).text;
    expect(open).not.toContain(new URL(ivyLink).searchParams.get('token'));
    const ivyInvite = /<tr data-invite-id="([^"]+)">\s*<td>ivy@example\.com/.exec(open)![1]!;
    const jackInvite = /<tr data-invite-id="([^"]+)">\s*<td>jack@example\.com/.exec(open)![1]!;
    const ivyRow = rowOf(open, 'data-invite-id', ivyInvite);
    expect(ivyRow).toContain('<td data-label="Gives">admin, group auditors</td>');
    expect(ivyRow).toContain(`<td data-label="Made by">${admin.email}</td>`);
    expect(ivyRow).toMatch(/<td data-label="Expires">\d{4}-/);

    // Jack's is revoked: his link stops working. Ivy's makes an admin in the group.
    const revoked = await post(web, `/admin/invitations/${jackInvite}/revoke`);
    expect(flashOf(revoked.text)).toBe('Revoked the invitation for jack@example.com: its link no longer works.');
    expect(revoked.text).not.toContain('jack@example.com</td>');
    expect((await new WebClient(d).get(jackLink.slice(d.url.length))).status).toBe(404);
    const ivy = new WebClient(d);
    await ivy.get(ivyLink.slice(d.url.length));
    const joined = await ivy.post('/invite', { _csrf: ivy.csrf, token: new URL(ivyLink).searchParams.get('token')!, password: 'ivy has a long password', password2: 'ivy has a long password' });
    expect(joined.status).toBe(303);
    expect((await api(d, '/api/v1/admin/users/ivy@example.com', { token: admin.apiKey })).body.admin).toBe(true);
    expect((await api(d, '/api/v1/admin/groups/auditors', { token: admin.apiKey })).body.members.map((m: { email: string }) => m.email)).toEqual(['ivy@example.com']);

    // Without a mail server, "Reset link" shows a link once; it sets a new password once and ends Bob's sessions.
    expect((await bobWeb.get('/settings/account')).status).toBe(200);
    await web.get('/admin/users');
    const reset = await post(web, `/admin/users/${bobId}/reset-link`);
    expect(flashOf(reset.text)).toBe(`Made a link that sets a new password for ${bob.email}: send it to them. It works once, for 24 hours, and signs them out everywhere.`);
    const link = resetLink(reset.text)!;
    expect(link).toMatch(new RegExp(`^${d.url}/reset-password\\?token=[\\w-]{43}$`));
    expect(resetLink((await web.get('/admin/users')).text)).toBeNull();
    const bobNow = new WebClient(d);
    expect((await bobNow.get(link.slice(d.url.length))).status).toBe(200);
    const token = new URL(link).searchParams.get('token')!;
    const set = await bobNow.submit('/reset-password', { _csrf: bobNow.csrf, token, password: 'bob chose a new password', password2: 'bob chose a new password' });
    expect(set.redirectedFrom?.location).toBe('/login');
    expect((await bobNow.get(link.slice(d.url.length))).status).toBe(404);
    expect((await bobWeb.get('/settings/account')).location).toMatch(/^\/login/);
    expect((await new WebClient(d).login(bob.email, 'bob chose a new password')).status).toBe(302);
    const audit = await api(d, '/api/v1/audit-events?type=password_reset.&limit=10', { token: admin.apiKey });
    expect(audit.body.events.map((e: { type: string }) => e.type).sort()).toEqual(['password_reset.completed', 'password_reset.link_made']);
  });

  it('Admin → Mail without a mail server says so, and a test mail queues nothing', async () => {
    const page = (await web.get('/admin/mail')).text;
    expect(page).toContain('This server sends no mail: start it with <code>--smtp-url</code>');
    expect(page).toContain('<a href="/admin/mail" class="active"');
    expect(flashOf((await post(web, '/admin/mail/test')).text)).toBe('This server sends no mail: nothing was queued.');
    expect((await api(d, '/api/v1/admin/mail', { token: admin.apiKey })).body.mail).toEqual([]);
  });
});
