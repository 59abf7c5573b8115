/**
 * `docsearch admin …` from another machine: the client commands over the admin API with an admin's key, on a data
 * directory and on PostgreSQL. The same actions as the operator's commands on the server machine, refused to
 * anyone but an admin, each in the audit log once with the admin as its actor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { ENGINES, newPostgresDatabase } from '../helpers/store-dialects.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { WebClient } from '../server/web-client.js';
import { cliEnv } from './cli-env.js';

describe.each(ENGINES)('docsearch admin … over the admin API (%s)', (engine) => {
  const skip = engine === 'postgresql' ? postgresUnavailable() : null;
  let d: Daemon;
  let admin: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    if (skip) return;
    d = await startDaemon(engine === 'postgresql' ? { databaseUrl: await newPostgresDatabase() } : {});
    admin = await addUser(d, { email: 'root@example.com' });
    bob = await addUser(d, { email: 'bob@example.com' });
    await uploadFiles(d, bob.apiKey, [{ name: 'notes.txt', bytes: Buffer.from('Bob keeps notes about the harbour cranes.\n'.repeat(20)) }], { query: '?wait=true' });
  });
  afterAll(async () => {
    if (!d) return;
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  /** The CLI on another machine: only the server URL and a key. */
  const cli = (token: string, ...args: string[]) => runCli([...args, '--server', d.url], { env: cliEnv(null, { DOCSEARCH_TOKEN: token }) });

  it.skipIf(skip !== null)('lists accounts with their last sign-in, kind, second factors and usage; refuses anyone but an admin', async () => {
    const listed = await cli(admin.apiKey, 'admin', 'users', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const users = JSON.parse(listed.stdout).users as { email: string; kind: string; admin: boolean; usage: { documents: number; bytes: number; chunks: number }; two_factor: unknown; last_sign_in_at: string | null }[];
    const b = users.find((u) => u.email === 'bob@example.com')!;
    expect(b).toMatchObject({ kind: 'local', admin: false, two_factor: { totp: false, passkeys: 0 }, last_sign_in_at: null });
    expect(b.usage.documents).toBe(1);
    expect(b.usage.bytes).toBe(Buffer.byteLength('Bob keeps notes about the harbour cranes.\n'.repeat(20)));
    expect(b.usage.chunks).toBeGreaterThan(0);
    const table = await cli(admin.apiKey, 'admin', 'users');
    expect(table.stdout).toMatch(/bob@example\.com\tno\tlocal\tnone\t\t1\t/);

    const refused = await cli(bob.apiKey, 'admin', 'users', 'list');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('only an administrator may do this');
  });

  it.skipIf(skip !== null)('invite (bulk, into a group), list and revoke invitations; disable, enable, reset link, set-admin, delete', async () => {
    expect((await cli(admin.apiKey, 'admin', 'groups', 'create', 'editors')).code).toBe(0);
    const invited = await cli(admin.apiKey, 'admin', 'users', 'invite', 'carol@example.com, dan@example.com', '--group', 'editors');
    expect(invited.code, invited.stderr).toBe(0);
    const links = invited.stdout.trim().split('\n');
    expect(links).toHaveLength(2);
    for (const link of links) expect(link).toMatch(new RegExp(`^${d.url}/invite\\?token=`));
    const listed = await cli(admin.apiKey, 'admin', 'invitations', '--json');
    expect(JSON.parse(listed.stdout).invitations.map((i: { email: string; group: string; created_by: { email: string } }) => [i.email, i.group, i.created_by.email]).sort()).toEqual([
      ['carol@example.com', 'editors', 'root@example.com'],
      ['dan@example.com', 'editors', 'root@example.com'],
    ]);
    expect((await cli(admin.apiKey, 'admin', 'invitations', 'revoke', 'dan@example.com')).code).toBe(0);
    expect((await fetch(links[1]!)).status).toBe(404);
    expect((await fetch(links[0]!)).status).toBe(200);
    // Carol's link makes her account, in the group the invitation named.
    const carol = new WebClient(d);
    await carol.get(links[0]!);
    const joined = await carol.post('/invite', { _csrf: carol.csrf, token: new URL(links[0]!).searchParams.get('token')!, password: 'carol chose this password', password2: 'carol chose this password' });
    expect(joined.status, joined.text.slice(0, 300)).toBe(303);
    const members = JSON.parse((await cli(admin.apiKey, 'admin', 'groups', 'members', 'editors', '--json')).stdout).members as { email: string }[];
    expect(members.map((m) => m.email)).toEqual(['carol@example.com']);
    const again = await cli(admin.apiKey, 'admin', 'users', 'invite', 'bob@example.com');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not invited bob@example.com: an account with the e-mail bob@example.com exists already');
    // Exit 1 when any address was refused, after inviting the rest (docs/cli.md), with --json too.
    const invitedEmails = async () => (JSON.parse((await cli(admin.apiKey, 'admin', 'invitations', '--json')).stdout).invitations as { email: string }[]).map((i) => i.email).sort();
    const mixed = await cli(admin.apiKey, 'admin', 'users', 'invite', 'bob@example.com, erin@example.com');
    expect(mixed.code, mixed.stderr).toBe(1);
    expect(mixed.stderr).toContain('not invited bob@example.com: an account with the e-mail bob@example.com exists already');
    expect(mixed.stdout).toMatch(new RegExp(`^${d.url}/invite\\?token=[\\w-]+\n$`));
    expect(await invitedEmails()).toEqual(['erin@example.com']);
    const mixedJson = await cli(admin.apiKey, 'admin', 'users', 'invite', 'bob@example.com', 'fay@example.com', '--json');
    expect(mixedJson.code, mixedJson.stderr).toBe(1);
    const report = JSON.parse(mixedJson.stdout) as { invitations: { email: string }[]; refused: { email: string }[] };
    expect([report.invitations.map((i) => i.email), report.refused.map((r) => r.email)]).toEqual([['fay@example.com'], ['bob@example.com']]);
    expect(await invitedEmails()).toEqual(['erin@example.com', 'fay@example.com']);
    const listedUsers = async () => JSON.parse((await cli(admin.apiKey, 'admin', 'users', 'list', '--json')).stdout).users as { email: string; admin: boolean; disabled: boolean }[];
    const bobNow = async () => (await listedUsers()).find((u) => u.email === 'bob@example.com');

    // Disabling revokes the account's keys for good, so it asks as other destructive commands do: without a
    // terminal --yes is required, and the refusal says what would follow; nothing is done.
    const unasked = await cli(admin.apiKey, 'admin', 'users', 'disable', 'bob@example.com');
    expect(unasked.code, unasked.stderr).toBe(2);
    expect(unasked.stderr).toContain('not on a terminal, so not asking: add --yes to disable the account bob@example.com');
    expect(unasked.stderr).toContain('its API keys and connected apps are revoked for good (enabling it again does not bring them back)');
    expect(await bobNow()).toMatchObject({ disabled: false });
    expect((await api(d, '/api/v1/projects', { token: bob.apiKey })).status).toBe(200);
    expect((await cli(admin.apiKey, 'admin', 'users', 'disable', 'bob@example.com', '--yes')).stderr).toContain('disabled bob@example.com; ended 0 web session(s), revoked 1 API key(s)');
    expect((await api(d, '/api/v1/projects', { token: bob.apiKey })).status).toBe(401);
    expect((await new WebClient(d).login(bob.email, bob.password)).status).toBe(403);
    expect(await bobNow()).toMatchObject({ disabled: true });
    const enabled = await cli(admin.apiKey, 'admin', 'users', 'enable', 'bob@example.com');
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(enabled.stderr).toContain('the API keys and connected apps revoked when it was disabled stay revoked');
    expect((await api(d, '/api/v1/projects', { token: bob.apiKey })).status, 'his old key stays revoked').toBe(401);
    expect(await bobNow()).toMatchObject({ disabled: false });
    const bobWeb = new WebClient(d);
    expect((await bobWeb.login(bob.email, bob.password)).status).toBe(302);
    const reset = await cli(admin.apiKey, 'admin', 'users', 'reset-link', 'bob@example.com');
    expect(reset.stdout).toMatch(new RegExp(`^${d.url}/reset-password\\?token=`));
    expect((await fetch(reset.stdout.trim())).status).toBe(200);
    expect((await cli(admin.apiKey, 'admin', 'users', 'set-admin', 'bob@example.com')).stderr).toContain('bob@example.com is now an admin');
    expect(await bobNow()).toMatchObject({ admin: true });
    expect((await cli(admin.apiKey, 'admin', 'users', 'set-admin', 'bob@example.com', '--off')).code).toBe(0);
    expect(await bobNow()).toMatchObject({ admin: false });
    const refused = await cli(admin.apiKey, 'admin', 'users', 'delete', 'bob@example.com', '--yes');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('transfer them to another account');
    // Nothing was done: the account and its web session are there.
    expect(await bobNow(), 'the refused delete left the account').toMatchObject({ disabled: false });
    expect((await bobWeb.get('/documents')).status).toBe(200);
    const deleted = await cli(admin.apiKey, 'admin', 'users', 'delete', 'bob@example.com', '--transfer-to', 'root@example.com', '--yes');
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(await bobNow()).toBeUndefined();
    expect((await bobWeb.get('/documents')).location).toBe('/login?return_to=%2Fdocuments');
    // His project, with his document, is root's now.
    const rootsProjects = (await api(d, '/api/v1/projects?limit=100', { token: admin.apiKey })).body.projects as { owner: string; document_count: number }[];
    expect(rootsProjects.filter((p) => p.document_count > 0)).toEqual([expect.objectContaining({ owner: 'root@example.com', document_count: 1 })]);

    // Each action once, with the admin as its actor, through the key it used.
    const audit = (await api(d, '/api/v1/audit-events?limit=200', { token: admin.apiKey })).body.events as { type: string; actor: { email: string } | null; via: string }[];
    const mine = audit.filter((e) => e.actor?.email === 'root@example.com' && e.via === 'api_key').map((e) => e.type);
    for (const type of ['group.created', 'account.invite_revoked', 'account.disabled', 'account.enabled', 'password_reset.link_made', 'account.deleted']) expect(mine.filter((t) => t === type), type).toHaveLength(1);
    expect(mine.filter((t) => t === 'account.invited')).toHaveLength(4);
    expect(mine.filter((t) => t === 'account.admin_changed')).toHaveLength(2);
  });
});
