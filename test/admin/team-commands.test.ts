import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { missingFile } from '../helpers/requirement.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { ENGINES, newPostgresDatabase } from '../helpers/store-dialects.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn, WebClient } from '../server/web-client.js';
import { addClient, getCode, post } from '../auth/oauth-flow.js';

const REDIRECT = 'https://app.example.com/callback';

/**
 * The operator's `docsearch users` and `docsearch groups` on the server machine, beside a running daemon, on a data
 * directory and on PostgreSQL: each says what it did on stderr, and the daemon obeys at the next request —
 * a disabled account's key, session and password stop working; a deleted one's projects go to the account named,
 * every document kept.
 */
describe.each(ENGINES)('operator commands users … and groups … (%s)', (engine) => {
  const skip = engine === 'postgresql' ? postgresUnavailable() : null;
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;

  beforeAll(async () => {
    if (skip) return;
    d = await startDaemon(engine === 'postgresql' ? { databaseUrl: await newPostgresDatabase() } : {});
    alice = await addUser(d); // the first account: the admin
    bob = await addUser(d);
    carol = await addUser(d);
  });
  afterAll(async () => {
    if (!d) return;
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  /** An operator command on the daemon's library (its data dir, and its database on PostgreSQL). */
  const op = (...args: string[]) => runCli([...args, '--data-dir', d.dataDir], { env: d.env });
  const rows = (stdout: string) => stdout.trimEnd().split('\n').map((l) => l.split('\t'));

  it.skipIf(skip !== null)('users list, set-admin (the last admin stays), disable and enable', async () => {
    const list = await op('users', 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(rows(list.stdout).map((r) => [r[1], r[2], r[3]])).toEqual([
      [alice.email, 'yes', 'no'],
      [bob.email, 'no', 'no'],
      [carol.email, 'no', 'no'],
    ]);
    const json = JSON.parse((await op('users', 'list', '--json')).stdout);
    expect(json.users[0]).toMatchObject({ email: alice.email, admin: true, disabled: false, disabled_at: null });
    expect(json.users[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    const last = await op('users', 'set-admin', alice.email, '--off');
    expect(last.code).toBe(1);
    expect(last.stderr).toBe('error: this is the only active admin: make another account an admin first\n');
    expect((await op('users', 'disable', alice.email, '--yes')).stderr).toBe('error: this is the only active admin: make another account an admin first\n');
    // Both refused, nothing changed: Alice is still an active admin, and her key still works.
    expect(rows((await op('users', 'list')).stdout)[0]!.slice(1, 4)).toEqual([alice.email, 'yes', 'no']);
    expect((await api(d, '/api/v1/me', { token: alice.apiKey })).body).toMatchObject({ email: alice.email, admin: true });
    expect((await op('users', 'set-admin', bob.email)).stderr).toBe(`${bob.email} is now an admin\n`);
    expect(rows((await op('users', 'list')).stdout)[1]![2]).toBe('yes');
    expect((await op('users', 'set-admin', bob.email, '--off')).stderr).toBe(`${bob.email} is no longer an admin\n`);

    // Disable: the key, the connected app's tokens, the web session and the password stop working at once.
    const web = await loggedIn(d, bob);
    expect((await web.get('/documents')).status).toBe(200);
    const client = await addClient(d, { redirectUris: [REDIRECT] });
    const code = await getCode(web, { client_id: client.clientId, redirect_uri: REDIRECT, scope: 'read:documents', state: 's' });
    const tokens = (await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: client.clientId, client_secret: client.clientSecret!, redirect_uri: REDIRECT })).body;
    expect((await api(d, '/api/v1/projects', { token: tokens.access_token })).status).toBe(200);
    const disabled = await op('users', 'disable', bob.email.toUpperCase(), '--yes');
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stderr).toBe(`disabled ${bob.email}; ended 1 web session, revoked 1 API key and 1 connected app\n`);
    expect((await api(d, '/api/v1/projects', { token: bob.apiKey })).status).toBe(401);
    expect((await api(d, '/api/v1/projects', { token: tokens.access_token })).status).toBe(401);
    const refresh = await post(d, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.clientId, client_secret: client.clientSecret! });
    expect(refresh.body.error).toBe('invalid_grant');
    expect((await web.get('/documents')).location).toBe('/login?return_to=%2Fdocuments');
    expect((await new WebClient(d).login(bob.email, bob.password)).status).toBe(403);
    expect(rows((await op('users', 'list')).stdout)[1]![3]).toMatch(/^\d{4}-\d\d-\d\dT/);

    const enabled = await op('users', 'enable', bob.email);
    expect(enabled.stderr).toBe(`enabled ${bob.email}: they can sign in again\n`);
    expect((await new WebClient(d).login(bob.email, bob.password)).status).toBe(302);
    expect((await api(d, '/api/v1/projects', { token: bob.apiKey })).status).toBe(401); // what disabling ended stays ended

    const unknown = await op('users', 'disable', 'nobody@example.com');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('error: account nobody@example.com not found\n');

    // Each action is in the audit log once, by the operator (docs/operations.md, "Administration"); the refused ones
    // recorded nothing.
    const changes = async (email: string) =>
      ((await api(d, `/api/v1/audit-events?type=account.&target=${encodeURIComponent(email)}&limit=200`, { token: alice.apiKey })).body.events as { type: string }[]).filter((e) => e.type !== 'account.created');
    expect(await changes(alice.email)).toEqual([]);
    const bobs = await changes(bob.email);
    expect(bobs.map((e) => e.type).sort()).toEqual(['account.admin_changed', 'account.admin_changed', 'account.disabled', 'account.enabled']);
    for (const e of bobs) expect(e, e.type).toMatchObject({ by: 'operator', via: 'operator', actor: null });
  });

  it.skipIf(skip !== null)('users invite prints a one-time link at the public URL', async () => {
    const made = await op('users', 'invite', 'dave@example.com', '--public-url', `${d.url}/`);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toBe('invited dave@example.com: send them this link; it works once, for 7 days, and is not shown again\n');
    const link = made.stdout.trim();
    expect(link).toMatch(new RegExp(`^${d.url}/invite\\?token=[\\w-]{43}$`));
    const page = await new WebClient(d).get(link);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<strong id="invite-email">dave@example.com</strong>');
    // Without a configured public URL: the running daemon's (it listens on a port of its own, not 7411).
    expect((await op('users', 'invite', 'erin@example.com')).stdout).toMatch(new RegExp(`^${d.url}/invite\\?token=[\\w-]{43}\n$`));
    expect((await op('users', 'invite', alice.email)).stderr).toBe(`error: an account with the e-mail ${alice.email} exists already\n`);
  });

  it.skipIf(skip !== null)('groups create, list, add, members, remove, delete', async () => {
    const created = await op('groups', 'create', 'Legal', '--description', 'Contracts and counsel');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe('created group Legal\n');
    const id = created.stdout.trim();
    expect(id).toMatch(/^grp_\w+$/);
    expect((await op('groups', 'create', 'legal')).stderr).toBe('error: a group named "legal" exists already\n');
    expect((await op('groups', 'create', 'a/b')).code).toBe(1);

    expect((await op('groups', 'add', 'legal', carol.email)).stderr).toBe(`added ${carol.email} to Legal\n`);
    expect((await op('groups', 'add', 'Legal', carol.email)).stderr).toBe(`${carol.email} was in Legal already\n`);
    expect(rows((await op('groups', 'list')).stdout)).toEqual([[id, 'Legal', '1', 'local', 'Contracts and counsel']]);
    expect(JSON.parse((await op('groups', 'list', '--json')).stdout).groups[0]).toMatchObject({ id, name: 'Legal', member_count: 1, source: 'local' });
    expect(rows((await op('groups', 'members', 'Legal')).stdout).map((r) => r[1])).toEqual([carol.email]);
    expect(JSON.parse((await op('groups', 'members', 'Legal', '--json')).stdout)).toMatchObject({ group: { id, name: 'Legal' }, members: [{ email: carol.email }] });

    // A project shared with the group reaches its members at their next request, and leaves with them.
    const project = await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'contracts' } });
    expect((await api(d, `/api/v1/projects/${project.body.id}/members`, { token: alice.apiKey, body: { group: 'Legal', role: 'viewer' } })).status).toBe(201);
    const sees = async () => (await api(d, '/api/v1/projects', { token: carol.apiKey })).body.projects.map((p: { name: string }) => p.name);
    expect(await sees()).toContain('contracts');
    expect((await op('groups', 'remove', 'Legal', carol.email)).stderr).toBe(`removed ${carol.email} from Legal\n`);
    expect(await sees()).not.toContain('contracts');
    expect((await op('groups', 'remove', 'Legal', carol.email)).stderr).toBe(`${carol.email} was not in Legal\n`);
    expect((await op('groups', 'add', 'Legal', carol.email)).code).toBe(0);
    // Not on a terminal, it does not delete without --yes, and says what would go.
    const asked = await op('groups', 'delete', 'legal');
    expect(asked.code).toBe(2);
    expect(asked.stderr).toContain('add --yes to delete the group Legal');
    expect(asked.stderr).toContain('The group has 1 member and is shared with 1 project: its members lose what it was given');
    expect(await sees()).toContain('contracts');
    expect((await op('groups', 'delete', 'legal', '--yes')).stderr).toBe('deleted group Legal; its member lost what was shared with it\n');
    expect(await sees()).not.toContain('contracts');
    expect((await op('groups', 'list')).stdout).toBe('');
    expect((await op('groups', 'members', 'Legal')).stderr).toBe('error: group "Legal" not found\n');
  });

  it.skipIf(skip !== null)('users delete asks first, refuses to lose documents, and with --transfer-to keeps every one', async () => {
    const heir = await addUser(d); // Bob's key ended with the disable above
    // Carol owns a project with a document, and uploaded one into Alice's project as its editor.
    const own = await api(d, '/api/v1/projects', { token: carol.apiKey, body: { name: 'carol notes' } });
    const mine = await uploadFiles(d, carol.apiKey, [{ name: 'herons.txt', bytes: Buffer.from('Grey herons nest in the alder carr by the lake.\n') }], { projectId: own.body.id, query: '?wait=true' });
    const shared = await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'survey' } });
    expect((await api(d, `/api/v1/projects/${shared.body.id}/members`, { token: alice.apiKey, body: { email: carol.email, role: 'editor' } })).status).toBe(201);
    const theirs = await uploadFiles(d, carol.apiKey, [{ name: 'voles.txt', bytes: Buffer.from('Water voles burrow in the steep banks of the ditch.\n') }], { projectId: shared.body.id, query: '?wait=true' });
    expect([mine.body.documents[0].status, theirs.body.documents[0].status]).toEqual(['ready', 'ready']);
    expect((await op('groups', 'create', 'birders')).code).toBe(0);
    expect((await op('groups', 'add', 'birders', carol.email)).code).toBe(0);
    expect((await api(d, `/api/v1/documents/${theirs.body.documents[0].id}`, { token: alice.apiKey })).body.uploaded_by).toBe(carol.email);

    const ask = await op('users', 'delete', carol.email, '--transfer-to', heir.email);
    expect(ask.code).toBe(2);
    expect(ask.stderr).toBe(`error: not on a terminal, so not asking: add --yes to delete the account ${carol.email} and hand its 1 project to ${heir.email}\nhint: This cannot be undone.\n`);
    const holding = await op('users', 'delete', carol.email, '--yes');
    expect(holding.code).toBe(1);
    expect(holding.stderr).toBe(`error: ${carol.email} owns 1 project with documents or members (carol notes): transfer them to another account\n`);
    expect((await op('users', 'delete', carol.email, '--transfer-to', 'nobody@example.com', '--yes')).stderr).toBe('error: account nobody@example.com not found\n');
    expect((await api(d, '/api/v1/me', { token: carol.apiKey })).status).toBe(200); // nothing was done

    const deleted = await op('users', 'delete', carol.email, '--transfer-to', heir.email, '--yes');
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr).toBe(`deleted ${carol.email}; 1 project now belongs to ${heir.email}; deleted 1 empty project; ended 0 web sessions, revoked 1 API key and 0 connected apps\n`);
    expect((await api(d, '/api/v1/projects', { token: carol.apiKey })).status).toBe(401);
    expect(rows((await op('users', 'list')).stdout).map((r) => r[1])).not.toContain(carol.email);

    // Her projects are the heir's, documents and all; what she uploaded into Alice's project is still there.
    const heirs = (await api(d, '/api/v1/projects?limit=100', { token: heir.apiKey })).body.projects;
    expect(heirs.find((p: { id: string }) => p.id === own.body.id)).toMatchObject({ name: 'carol notes', owner: heir.email, role: 'owner', document_count: 1 });
    expect((await api(d, `/api/v1/documents/${mine.body.documents[0].id}`, { token: heir.apiKey })).body).toMatchObject({ filename: 'herons.txt', status: 'ready', uploaded_by: null });
    const kept = await api(d, `/api/v1/documents/${theirs.body.documents[0].id}`, { token: alice.apiKey });
    expect(kept.body).toMatchObject({ filename: 'voles.txt', project_id: shared.body.id, status: 'ready', uploaded_by: null });
    const found = async (token: string, query: string) =>
      (await api(d, '/api/v1/search', { token, body: { query } })).body.results.map((r: { document: { filename: string } }) => r.document.filename);
    expect(await found(heir.apiKey, 'where do herons nest')).toContain('herons.txt');
    expect(await found(alice.apiKey, 'where do water voles burrow')).toContain('voles.txt');
    // She left the project shared with her and her groups.
    const members = (await api(d, `/api/v1/projects/${shared.body.id}/members`, { token: alice.apiKey })).body.members;
    expect(members.map((m: { email?: string }) => m.email)).toEqual([alice.email]);
    expect((await op('groups', 'members', 'birders')).stdout).toBe('');
    // The address is free for a new account.
    expect((await op('users', 'invite', carol.email)).code).toBe(0);

    // An account with empty projects only: they go with it.
    const temp = await addUser(d);
    const gone = await op('users', 'delete', temp.email, '--yes');
    expect(gone.stderr).toBe(`deleted ${temp.email}; deleted 1 empty project; ended 0 web sessions, revoked 1 API key and 0 connected apps\n`);
  });

  it.skipIf(skip !== null)('users delete --transfer-to stops, with nothing lost, when the heir has both names a project could take', async () => {
    const [ivy, jay] = [await addUser(d), await addUser(d)];
    const log = await api(d, '/api/v1/projects', { token: ivy.apiKey, body: { name: 'log' } });
    const up = await uploadFiles(d, ivy.apiKey, [{ name: 'tides.txt', bytes: Buffer.from('Spring tides follow the new and the full moon.\n') }], { projectId: log.body.id, query: '?wait=true' });
    for (const name of ['log', `log (from ${ivy.email})`]) expect((await api(d, '/api/v1/projects', { token: jay.apiKey, body: { name } })).status).toBe(201);
    const refused = await op('users', 'delete', ivy.email, '--transfer-to', jay.email, '--yes');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`error: ${jay.email} already has projects named "log" and "log (from ${ivy.email})": rename one of them, then delete again\n`);
    // Ivy is still there, and so is her document, in a project she owns, named as it was.
    expect((await api(d, '/api/v1/me', { token: ivy.apiKey })).status).toBe(200);
    const doc = await api(d, `/api/v1/documents/${up.body.documents[0].id}`, { token: ivy.apiKey });
    expect(doc.body).toMatchObject({ filename: 'tides.txt', project_id: log.body.id, uploaded_by: ivy.email });
    expect((await api(d, `/api/v1/projects/${log.body.id}`, { token: ivy.apiKey })).body).toMatchObject({ name: 'log', owner: ivy.email, role: 'owner' });
  });

  // `script` (util-linux) gives the command a pseudo-terminal: the operator is asked, and "no" changes nothing.
  it.skipIf(skip !== null || missingFile('/usr/bin/script', 'apt-get install -y bsdutils') !== null)('users delete on a terminal asks; no keeps the account, yes deletes it', async () => {
    const kim = await addUser(d);
    const ask = async (answer: string) => {
      const cmd = `${process.execPath} ${BIN} users delete ${kim.email} --data-dir ${d.dataDir}`;
      const proc = spawn('script', ['-qefc', cmd, '/dev/null'], { env: { ...process.env, ...d.env, CI: '' }, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
      await expect.poll(() => out, { timeout: 60_000 }).toContain(`Delete the account ${kim.email}? This cannot be undone.`);
      proc.stdin.write(`${answer}\r`);
      const code = await new Promise<number | null>((r) => proc.once('close', r));
      return { code, out };
    };
    const no = await ask('n');
    expect(no.code).toBe(1);
    expect(no.out).toContain('error: cancelled');
    expect((await api(d, '/api/v1/me', { token: kim.apiKey })).status).toBe(200);
    const yes = await ask('y');
    expect(yes.code).toBe(0);
    expect(yes.out).toContain(`deleted ${kim.email}; deleted 1 empty project;`);
    expect((await api(d, '/api/v1/me', { token: kim.apiKey })).status).toBe(401);
  });
});
