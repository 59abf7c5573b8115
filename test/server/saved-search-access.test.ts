/**
 * Who sees, runs and changes a saved search shared with a project as the project's membership changes
 * (docs/permissions.md, docs/api.md#saved-searches), through the built daemon and the REST API: a search shared with
 * P and saved without projects searches P for every member, not each member's whole library; an author since made a
 * viewer of P, or removed from it, no longer renames it (a new name reaches P's members) but still deletes it; a group
 * member whose group loses P no longer sees it; it goes with P, and with its author's account. A key limited to
 * projects sees none of its user's own searches that name a project outside its limit. A label renamed in P is
 * renamed in the searches over P alone; an author who has left P (themselves, or their group) still sees theirs, to
 * delete it, without its label filters or the time of such a rename; its members keep it, without its author's
 * e-mail (which may have changed since).
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn } from './web-client.js';

describe('a saved search shared with a project, as its members change', () => {
  let d: Daemon;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dan: TestUser;
  let p: string;
  let q: string;
  const as = (user: TestUser, path: string, opts: { method?: string; body?: unknown } = {}) => api(d, path, { token: user.apiKey, ...opts });
  const listed = async (user: TestUser) => ((await as(user, '/api/v1/saved-searches')).body.saved_searches as { name: string }[]).map((v) => v.name);
  const memberId = async (project: string, email: string) => ((await as(alice, `/api/v1/projects/${project}/members`)).body.members as { id: string; email?: string }[]).find((m) => m.email === email)!.id;
  const share = async (project: string, body: object) => expect((await as(alice, `/api/v1/projects/${project}/members`, { body })).status).toBeLessThan(300);
  const save = async (user: TestUser, name: string, search: object, projectId: string) => {
    const res = await as(user, '/api/v1/saved-searches', { body: { name, search, project_id: projectId } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; name: string; search: Record<string, unknown>; updated_at: string };
  };

  daemonForSuite(async (started) => {
    d = started;
    admin = await addUser(d);
    [alice, bob, carol, dan] = [await addUser(d), await addUser(d), await addUser(d), await addUser(d)];
    p = (await as(alice, '/api/v1/projects', { body: { name: 'Harbour' } })).body.id;
    q = (await as(alice, '/api/v1/projects', { body: { name: 'Merger' } })).body.id;
    await share(p, { email: bob.email, role: 'editor' });
    await share(p, { email: carol.email, role: 'viewer' });
    for (const [projectId, name] of [[p, 'harbour.txt'], [q, 'merger.txt']] as const) {
      const up = await uploadFiles(d, alice.apiKey, [{ name, bytes: Buffer.from(`The ${name.slice(0, -4)} otters.`) }], { query: '?wait=true', projectId });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
    }
  });

  it('searches its project only, for every member, when saved without projects', { timeout: 120_000 }, async () => {
    const saved = await save(bob, 'Otters', { query: 'otters', mode: 'keyword' }, p);
    expect(saved.search.project_ids).toEqual([p]);
    // Alice reads P and Q: Bob's search, run as it is listed to her, finds P's document only.
    const seen = ((await as(alice, '/api/v1/saved-searches')).body.saved_searches as { id: string; search: object }[]).find((v) => v.id === saved.id)!;
    const run = await as(alice, '/api/v1/search', { body: seen.search });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect((run.body.results as { document: { filename: string } }[]).map((r) => r.document.filename)).toEqual(['harbour.txt']);
    expect((await as(bob, `/api/v1/saved-searches/${saved.id}`, { method: 'DELETE' })).status).toBe(204);
    // Saved with an empty list of projects, likewise (the web page reads an empty list as every project).
    const none = await save(bob, 'Otters again', { query: 'otters', mode: 'keyword', project_ids: [] }, p);
    expect(none.search.project_ids).toEqual([p]);
    expect((await as(bob, `/api/v1/saved-searches/${none.id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('tells an author who has left the project nothing of it: not its labels renamed since, nor when; its members keep it', { timeout: 120_000 }, async () => {
    // Bob is removed from P; Dan loses it when his group's grant goes (the same for access).
    const group = await as(admin, '/api/v1/admin/groups', { body: { name: 'deckhands', description: '' } });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const danId = ((await as(admin, '/api/v1/admin/users')).body.users as { id: string; email: string }[]).find((u) => u.email === dan.email)!.id;
    expect((await as(admin, `/api/v1/admin/groups/${group.body.id}/members`, { body: { user: danId } })).status).toBe(201);
    await share(p, { group: 'deckhands', role: 'editor' });
    const doc = ((await as(alice, `/api/v1/documents?project_id=${p}`)).body.documents as { id: string }[])[0]!;
    expect((await as(alice, `/api/v1/documents/${doc.id}`, { method: 'PATCH', body: { labels: { add: ['Arrears'] } } })).status).toBe(200);
    const filters = { labels: ['Arrears'], type: ['txt'] };
    const bobs = await save(bob, 'Overdue otters', { query: 'otters', mode: 'keyword', filters }, p);
    const dans = await save(dan, 'Overdue by Dan', { query: 'otters', mode: 'keyword', filters: { labels: 'Arrears' } }, p);
    expect((await as(alice, `/api/v1/projects/${p}/members/${await memberId(p, bob.email)}`, { method: 'DELETE' })).status).toBe(204);
    const deckhands = ((await as(alice, `/api/v1/projects/${p}/members`)).body.members as { id: string; group?: string }[]).find((m) => m.group === 'deckhands')!.id;
    expect((await as(alice, `/api/v1/projects/${p}/members/${deckhands}`, { method: 'DELETE' })).status).toBe(204);
    const label = ((await as(alice, `/api/v1/projects/${p}/labels`)).body.labels as { id: string; name: string }[]).find((l) => l.name === 'Arrears')!;
    expect((await as(alice, `/api/v1/projects/${p}/labels/${label.id}`, { method: 'PATCH', body: { name: 'Chased twice' } })).status).toBe(200);

    for (const [author, saved, kept] of [
      [bob, bobs, { query: 'otters', mode: 'keyword', project_ids: [p], filters: { type: ['txt'] } }],
      [dan, dans, { query: 'otters', mode: 'keyword', project_ids: [p] }],
    ] as const) {
      const listedTo = await as(author, '/api/v1/saved-searches');
      const one = await as(author, `/api/v1/saved-searches/${saved.id}`);
      expect(one.status).toBe(200);
      for (const seen of [(listedTo.body.saved_searches as { id: string }[]).find((v) => v.id === saved.id), one.body]) {
        expect(seen).toMatchObject({ name: saved.name, mine: true, project_id: p, search: kept, updated_at: saved.updated_at });
        expect(JSON.stringify(seen)).not.toContain('Chased');
        expect(JSON.stringify(seen)).not.toContain('Arrears');
      }
      // Running it is the refusal of a project they do not read, as for any id.
      expect((await as(author, '/api/v1/search', { body: one.body.search })).status).toBe(404);
    }
    // The members keep it, following the label; not who its author is now (Bob moves to another address).
    const web = await loggedIn(d, bob);
    await web.get('/settings/account');
    const moved = `moved-${bob.email}`;
    expect((await web.post('/settings/account/email', { _csrf: web.csrf, email: moved, password: bob.password })).status).toBe(303);
    bob = { ...bob, email: moved };
    const carols = await as(carol, `/api/v1/saved-searches/${bobs.id}`);
    expect(carols.body.search.filters).toEqual({ labels: ['Chased twice'], type: ['txt'] });
    expect(carols.body.created_by).toBe('a former member');
    const carolsList = JSON.stringify((await as(carol, '/api/v1/saved-searches')).body);
    for (const email of [moved, dan.email]) expect(carolsList).not.toContain(email);
    expect(carolsList.match(/"created_by":"a former member"/g)).toHaveLength(2);
    const run = await as(carol, '/api/v1/search', { body: carols.body.search });
    expect((run.body.results as { document: { id: string } }[]).map((r) => r.document.id)).toEqual([doc.id]);
    for (const [author, saved] of [
      [bob, bobs],
      [dan, dans],
    ] as const)
      expect((await as(author, `/api/v1/saved-searches/${saved.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await listed(carol)).toEqual([]);
    await share(p, { email: bob.email, role: 'editor' });
  });

  it('an author made a viewer or removed no longer renames it (its members would read the new name); deleting stays theirs', { timeout: 120_000 }, async () => {
    const saved = await save(bob, 'Weekly', { query: 'otters' }, p);
    await share(p, { email: bob.email, role: 'viewer' });
    const asViewer = await as(bob, `/api/v1/saved-searches/${saved.id}`, { method: 'PATCH', body: { name: 'Renamed by a viewer' } });
    expect(asViewer.status, JSON.stringify(asViewer.body)).toBe(403);
    expect(asViewer.body.error.message).toContain('only an editor or owner of the project a saved search is shared with may rename it');
    expect((await as(alice, `/api/v1/projects/${p}/members/${await memberId(p, bob.email)}`, { method: 'DELETE' })).status).toBe(204);
    const removed = await as(bob, `/api/v1/saved-searches/${saved.id}`, { method: 'PATCH', body: { name: 'Renamed from outside' } });
    expect(removed.status, JSON.stringify(removed.body)).toBe(403);
    expect(JSON.stringify(removed.body)).not.toContain(p);
    expect(await listed(carol)).toEqual(['Weekly']);
    // His own unshared one he still renames.
    const own = await as(bob, '/api/v1/saved-searches', { body: { name: 'Mine', search: { query: 'otters' } } });
    expect((await as(bob, `/api/v1/saved-searches/${own.body.id}`, { method: 'PATCH', body: { name: 'Still mine' } })).status).toBe(200);
    expect((await as(bob, `/api/v1/saved-searches/${saved.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await listed(carol)).toEqual([]);
    expect(await listed(bob)).toEqual(['Still mine']);
  });

  it('a group member whose group loses the project no longer sees it', { timeout: 120_000 }, async () => {
    const group = await as(admin, '/api/v1/admin/groups', { body: { name: 'crew', description: '' } });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const danId = ((await as(admin, '/api/v1/admin/users')).body.users as { id: string; email: string }[]).find((u) => u.email === dan.email)!.id;
    expect((await as(admin, `/api/v1/admin/groups/${group.body.id}/members`, { body: { user: danId } })).status).toBe(201);
    await share(p, { group: 'crew', role: 'viewer' });
    const saved = await save(alice, 'Crew', { query: 'otters' }, p);
    expect(await listed(dan)).toEqual(['Crew']);
    expect((await as(dan, `/api/v1/saved-searches/${saved.id}`)).status).toBe(200);
    const crew = ((await as(alice, `/api/v1/projects/${p}/members`)).body.members as { id: string; kind: string }[]).find((m) => m.kind === 'group')!.id;
    expect((await as(alice, `/api/v1/projects/${p}/members/${crew}`, { method: 'DELETE' })).status).toBe(204);
    expect(await listed(dan)).toEqual([]);
    expect((await as(dan, `/api/v1/saved-searches/${saved.id}`)).status).toBe(404);
    expect((await as(alice, `/api/v1/saved-searches/${saved.id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('a key limited to projects sees none of its user’s own that names a project outside its limit', { timeout: 120_000 }, async () => {
    const own = async (name: string, search: object) => {
      const res = await as(alice, '/api/v1/saved-searches', { body: { name, search } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id as string;
    };
    const outside = await own('Merger only', { query: 'merger', project_ids: [q] });
    const both = await own('Both', { query: 'otters', project_ids: [p, q] });
    await own('Harbour only', { query: 'otters', project_ids: [p] });
    await own('Anywhere', { query: 'otters' });
    const made = await as(alice, '/api/v1/keys', { body: { name: 'harbour only', project_ids: [p] } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const key: TestUser = { ...alice, apiKey: made.body.key };
    const seen = await as(key, '/api/v1/saved-searches');
    expect((seen.body.saved_searches as { name: string }[]).map((v) => v.name)).toEqual(['Anywhere', 'Harbour only']);
    expect(JSON.stringify(seen.body)).not.toContain(q);
    for (const id of [outside, both]) {
      expect((await as(key, `/api/v1/saved-searches/${id}`)).status).toBe(404);
      expect((await as(key, `/api/v1/saved-searches/${id}`, { method: 'PATCH', body: { name: 'Found' } })).status).toBe(404);
      expect((await as(key, `/api/v1/saved-searches/${id}`, { method: 'DELETE' })).status).toBe(404);
    }
    expect(await listed(alice)).toEqual(['Anywhere', 'Both', 'Harbour only', 'Merger only']);
    for (const v of (await as(alice, '/api/v1/saved-searches')).body.saved_searches as { id: string }[]) expect((await as(alice, `/api/v1/saved-searches/${v.id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('follows a label renamed in its project, when it searches that project alone; one over more projects keeps the name', { timeout: 120_000 }, async () => {
    const doc = ((await as(alice, `/api/v1/documents?project_id=${p}`)).body.documents as { id: string }[])[0]!;
    expect((await as(alice, `/api/v1/documents/${doc.id}`, { method: 'PATCH', body: { labels: { add: ['Unpaid'] } } })).status).toBe(200);
    const alone = await save(alice, 'Unpaid here', { query: 'otters', mode: 'keyword', filters: { labels: ['UNPAID', 'Unpaid'] } }, p);
    const mine = (await as(alice, '/api/v1/saved-searches', { body: { name: 'Unpaid there', search: { query: 'otters', mode: 'keyword', project_ids: [p, q], filters: { labels: 'unpaid' } } } })).body;
    const label = ((await as(alice, `/api/v1/projects/${p}/labels`)).body.labels as { id: string; name: string }[]).find((l) => l.name === 'Unpaid')!;
    expect((await as(alice, `/api/v1/projects/${p}/labels/${label.id}`, { method: 'PATCH', body: { name: 'To pay' } })).status).toBe(200);

    const after = async (id: string) => (await as(alice, `/api/v1/saved-searches/${id}`)).body.search as { filters: { labels: unknown } };
    expect((await after(alone.id)).filters.labels).toEqual(['To pay']);
    const run = await as(carol, '/api/v1/search', { body: (await as(carol, `/api/v1/saved-searches/${alone.id}`)).body.search });
    expect((run.body.results as { document: { id: string } }[]).map((r) => r.document.id)).toEqual([doc.id]);
    // Over P and Q, "unpaid" may be another project's label too: the name stays.
    expect((await after(mine.id)).filters.labels).toBe('unpaid');
    for (const id of [alone.id, mine.id]) expect((await as(alice, `/api/v1/saved-searches/${id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('goes with its project, and with its author’s account', { timeout: 120_000 }, async () => {
    await save(alice, 'In Merger', { query: 'otters' }, q);
    await share(q, { email: carol.email, role: 'viewer' });
    expect(await listed(carol)).toEqual(['In Merger']);
    expect((await as(alice, `/api/v1/projects/${q}`, { method: 'DELETE' })).status).toBe(204);
    expect(await listed(carol)).toEqual([]);
    expect(await listed(alice)).toEqual([]);

    await share(p, { email: dan.email, role: 'editor' });
    await save(dan, 'By Dan', { query: 'otters' }, p);
    expect(await listed(carol)).toEqual(['By Dan']);
    const danId = ((await as(admin, '/api/v1/admin/users')).body.users as { id: string; email: string }[]).find((u) => u.email === dan.email)!.id;
    // A disabled account's stays: it may be enabled again, and its members knew it.
    expect((await as(admin, `/api/v1/admin/users/${danId}/disable`, { method: 'POST' })).status).toBe(200);
    expect(await listed(carol)).toEqual(['By Dan']);
    const gone = await as(admin, `/api/v1/admin/users/${danId}`, { method: 'DELETE' });
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    expect(await listed(carol)).toEqual([]);
  });
});
