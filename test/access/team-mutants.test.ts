/**
 * Team rules a mutation audit of the team operations (roles, sharing, groups, invitations, offboarding, the trash,
 * quotas, labels, the audit log) found no other test holding: each case fails when its check is taken out of the
 * product. Through the built daemon over real HTTP, as the owners, members and admins of docs/permissions.md.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { withLibraryDb } from '../helpers/library-db.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn } from '../server/web-client.js';

describe('team rules no other test held', () => {
  let d: Daemon;
  let admin: TestUser; // the first account: an admin
  let n = 0;
  daemonForSuite(async (started) => {
    d = started;
    admin = await addUser(d);
  });

  const as = (who: TestUser, path: string, opts: { method?: string; body?: unknown } = {}) => api(d, path, { token: who.apiKey, ...opts });
  const project = async (who: TestUser) => {
    const made = await as(who, '/api/v1/projects', { body: { name: `team project ${++n}` } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return made.body.id as string;
  };
  const share = async (owner: TestUser, id: string, body: Record<string, string>) => {
    const res = await as(owner, `/api/v1/projects/${id}/members`, { body });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body.id as string;
  };
  const members = async (owner: TestUser, id: string) => (await as(owner, `/api/v1/projects/${id}/members`)).body.members as { id: string; email?: string; group?: string; role: string }[];
  const note = async (who: TestUser, projectId: string, name: string) => {
    const up = await uploadFiles(d, who.apiKey, [{ name, bytes: Buffer.from(`The ${name} note, number ${++n}.\n`) }], { projectId, query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    return up.body.documents[0].id as string;
  };

  it("an owner cannot change their own role on a project: a second owner stays an owner (400, nothing changed)", async () => {
    const [alice, bob] = [await addUser(d), await addUser(d)];
    const id = await project(alice);
    await share(alice, id, { email: bob.email, role: 'owner' });
    const demoted = await as(bob, `/api/v1/projects/${id}/members`, { body: { email: bob.email, role: 'viewer' } });
    expect([demoted.status, demoted.body.error?.code]).toEqual([400, 'invalid_request']);
    expect(demoted.body.error.message).toMatch(/your own role/);
    expect((await members(alice, id)).find((m) => m.email === bob.email)?.role).toBe('owner');
  });
  it("a deleted account's saved searches go with it, those shared with a project too (docs/operations.md), and no grant or group membership of it is left", async () => {
    const [alice, bob] = [await addUser(d), await addUser(d)];
    const id = await project(alice);
    await share(alice, id, { email: bob.email, role: 'editor' });
    const group = await as(admin, '/api/v1/admin/groups', { body: { name: `riggers ${++n}` } });
    expect((await as(admin, `/api/v1/admin/groups/${group.body.id}/members`, { body: { user: bob.email } })).status).toBe(201);
    const bobId = (await as(admin, `/api/v1/admin/users/${encodeURIComponent(bob.email)}`)).body.id as string;
    const saved = await as(bob, '/api/v1/saved-searches', { body: { name: `harbour ${++n}`, search: { query: 'harbour' }, project_id: id } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect((await as(alice, `/api/v1/saved-searches/${saved.body.id}`)).status).toBe(200);
    const deleted = await as(admin, `/api/v1/admin/users/${encodeURIComponent(bob.email)}`, { method: 'DELETE' });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect((await as(alice, `/api/v1/saved-searches/${saved.body.id}`)).status).toBe(404);
    expect(((await as(alice, '/api/v1/saved-searches')).body.saved_searches as { id: string }[]).map((v) => v.id)).not.toContain(saved.body.id);
    const column = { project_members: 'member_id', group_members: 'user_id', saved_searches: 'user_id' };
    const left = withLibraryDb(d.dataDir, (db) => Object.entries(column).map(([t, c]) => (db.prepare(`select count(*) as n from ${t} where ${c} = ?`).get(bobId) as { n: number }).n));
    expect(left, 'rows of the deleted account in project_members, group_members and saved_searches').toEqual([0, 0, 0]);
    expect((await as(admin, `/api/v1/admin/groups/${group.body.id}`)).body.member_count).toBe(0);
  });
  it('a deleted group takes its grants with it: its members lose the project at the next request, and no grant of it is left', async () => {
    const [alice, bob] = [await addUser(d), await addUser(d)];
    const id = await project(alice);
    const group = await as(admin, '/api/v1/admin/groups', { body: { name: `deckhands ${++n}` } });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    expect((await as(admin, `/api/v1/admin/groups/${group.body.id}/members`, { body: { user: bob.email } })).status).toBe(201);
    await share(alice, id, { group: group.body.name, role: 'editor' });
    expect((await as(bob, `/api/v1/projects/${id}`)).status).toBe(200);
    expect((await as(admin, `/api/v1/admin/groups/${group.body.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await as(bob, `/api/v1/projects/${id}`)).status).toBe(404);
    expect(withLibraryDb(d.dataDir, (db) => db.prepare('select count(*) as n from project_members where member_id = ?').get(group.body.id) as { n: number }).n).toBe(0);
  });
  it("disabling an account is recorded against that account, by the admin who did it, with what it ended", async () => {
    const carol = await addUser(d);
    const carolId = (await as(admin, `/api/v1/admin/users/${encodeURIComponent(carol.email)}`)).body.id as string;
    expect((await as(admin, `/api/v1/admin/users/${encodeURIComponent(carol.email)}/disable`, { method: 'POST' })).status).toBe(200);
    const adminId = (await as(admin, '/api/v1/me')).body.id as string;
    const events = (await as(admin, `/api/v1/audit-events?type=account.disabled&target=${carolId}`)).body.events as Record<string, any>[];
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'account.disabled', by: 'admin', actor: { id: adminId, email: admin.email }, target: { type: 'account', id: carolId, label: carol.email }, details: { keys: 1 } });
  });

  it("a deleted account's project whose documents are all in its trash goes to the heir with its trash, restorable there (docs/operations.md: documents and all)", async () => {
    const [alice, bob] = [await addUser(d), await addUser(d)];
    const id = await project(bob);
    const doc = await note(bob, id, 'ledger.txt');
    expect((await as(bob, `/api/v1/documents/${doc}`, { method: 'DELETE' })).status).toBe(204);
    const deleted = await as(admin, `/api/v1/admin/users/${encodeURIComponent(bob.email)}?transfer_to=${encodeURIComponent(alice.email)}`, { method: 'DELETE' });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body.transferred).toBe(1);
    expect((await as(alice, `/api/v1/projects/${id}`)).body.owner).toBe(alice.email);
    const trash = (await as(alice, `/api/v1/trash?project_id=${id}`)).body.documents as { id: string }[];
    expect(trash.map((t) => t.id)).toEqual([doc]);
    expect((await as(alice, `/api/v1/trash/${doc}/restore`, { method: 'POST' })).status).toBe(200);

    // Without an heir, such a project holds documents: the delete is refused, nothing lost.
    const carol = await addUser(d);
    const kept = await project(carol);
    const trashed = await note(carol, kept, 'minutes.txt');
    expect((await as(carol, `/api/v1/documents/${trashed}`, { method: 'DELETE' })).status).toBe(204);
    const refused = await as(admin, `/api/v1/admin/users/${encodeURIComponent(carol.email)}`, { method: 'DELETE' });
    expect([refused.status, refused.body.error?.details?.projects?.map((p: { id: string }) => p.id)]).toEqual([409, [kept]]);
    expect((await as(carol, `/api/v1/trash?project_id=${kept}`)).body.documents.map((t: { id: string }) => t.id)).toEqual([trashed]);
    // The page that asks first says so too: an heir is needed, not "they are empty".
    const carolId = (await as(admin, `/api/v1/admin/users/${encodeURIComponent(carol.email)}`)).body.id as string;
    const page = await (await loggedIn(d, admin)).get(`/admin/users/${carolId}/delete`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Name the account that gets them');
    expect(page.text).toMatch(/<input type="email" name="transfer_to"[^>]* required>/);
  });
  it("a deleted account's projects are not handed to a disabled account: 409, and nothing is deleted", async () => {
    const [bob, carol] = [await addUser(d), await addUser(d)];
    const id = await project(bob);
    await note(bob, id, 'rota.txt');
    expect((await as(admin, `/api/v1/admin/users/${encodeURIComponent(carol.email)}/disable`, { method: 'POST' })).status).toBe(200);
    const refused = await as(admin, `/api/v1/admin/users/${encodeURIComponent(bob.email)}?transfer_to=${encodeURIComponent(carol.email)}`, { method: 'DELETE' });
    expect([refused.status, refused.body.error?.code]).toEqual([409, 'conflict']);
    expect(refused.body.error.message).toMatch(/is disabled/);
    expect((await as(bob, `/api/v1/projects/${id}`)).body).toMatchObject({ owner: bob.email, document_count: 1 });
  });
  it("the trash says when each entry goes for good: --trash-days after it was deleted, and who deleted it (docs/api.md)", async () => {
    const [alice, bob] = [await addUser(d), await addUser(d)];
    const id = await project(alice);
    await share(alice, id, { email: bob.email, role: 'editor' });
    const doc = await note(alice, id, 'tide tables.txt');
    expect((await as(bob, `/api/v1/documents/${doc}`, { method: 'DELETE' })).status).toBe(204);
    const trash = (await as(alice, `/api/v1/trash?project_id=${id}`)).body;
    const entry = trash.documents.find((t: { id: string }) => t.id === doc);
    expect(entry.trashed_by).toBe(bob.email);
    expect(Date.parse(entry.purge_at) - Date.parse(entry.trashed_at)).toBe(trash.retention_days * 24 * 3600_000);
    expect(trash.retention_days).toBeGreaterThan(0);
  });
});
