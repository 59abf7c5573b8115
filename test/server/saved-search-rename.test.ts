/**
 * Renaming a saved search (PATCH /api/v1/saved-searches/{id}, docs/api.md#saved-searches) through the built daemon:
 * its author renames it (its search unchanged, the event `saved_search.renamed` recorded once), a name they have is a
 * 409 in any case, a bad name a 400; a member it is shared with is refused (403), anyone else finds none (404), as
 * DELETE answers them.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';

describe('renaming a saved search', () => {
  let d: Daemon;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let project: string;
  const as = (user: TestUser, path: string, opts: { method?: string; body?: unknown } = {}) => api(d, path, { token: user.apiKey, ...opts });
  const save = async (user: TestUser, name: string, extra: Record<string, unknown> = {}) => {
    const res = await as(user, '/api/v1/saved-searches', { body: { name, search: { query: 'harbour minutes' }, ...extra } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; name: string; search: Record<string, unknown>; updated_at: string };
  };
  const rename = (user: TestUser, id: string, name: unknown) => as(user, `/api/v1/saved-searches/${id}`, { method: 'PATCH', body: { name } });
  const renamedEvents = async (id: string) =>
    ((await as(admin, `/api/v1/audit-events?type=saved_search.renamed&limit=200`)).body.events as { target: { id: string; label: string }; details: Record<string, unknown> }[]).filter(
      (e) => e.target.id === id,
    );

  daemonForSuite(async (started) => {
    d = started;
    admin = await addUser(d); // the first account: the admin, who reads the audit log
    alice = await addUser(d);
    bob = await addUser(d);
    carol = await addUser(d);
    project = (await as(alice, '/api/v1/projects', { body: { name: 'Harbour' } })).body.id;
    expect((await as(alice, `/api/v1/projects/${project}/members`, { body: { email: bob.email, role: 'editor' } })).status).toBe(201);
  });

  it('renames its author’s saved search, keeps its search, and records it once', async () => {
    const saved = await save(alice, 'Minutes');
    await new Promise((r) => setTimeout(r, 5));
    const res = await rename(alice, saved.id, '  Meeting minutes ');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: saved.id, name: 'Meeting minutes', search: saved.search, mine: true, project_id: null });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(saved.updated_at));
    expect((await as(alice, `/api/v1/saved-searches/${saved.id}`)).body.name).toBe('Meeting minutes');
    const events = await renamedEvents(saved.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ target: { id: saved.id, label: 'Meeting minutes' }, details: { from_name: 'Minutes', project_id: null } });
    // The same name again changes nothing and records nothing; another case of its own name is a rename.
    expect((await rename(alice, saved.id, 'Meeting minutes')).status).toBe(200);
    expect(await renamedEvents(saved.id)).toHaveLength(1);
    expect((await rename(alice, saved.id, 'meeting minutes')).body.name).toBe('meeting minutes');
  });

  it('refuses a name the author has (any case) with 409, and a bad name with 400, changing nothing', async () => {
    await save(alice, 'Budget');
    const other = await save(alice, 'Tides');
    const taken = await rename(alice, other.id, 'BUDGET');
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('conflict');
    expect(taken.body.error.message).toContain('BUDGET');
    for (const bad of ['   ', 'x'.repeat(101), 42]) {
      const res = await rename(alice, other.id, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error.message).toMatch(/^body\.name/);
    }
    expect((await as(alice, `/api/v1/saved-searches/${other.id}`, { method: 'PATCH', body: { name: 'Tides', search: { query: 'x' } } })).status).toBe(400);
    // Another person's name is no conflict: names are each person's own.
    expect((await rename(carol, (await save(carol, 'Mine')).id, 'Budget')).status).toBe(200);
    expect((await as(alice, `/api/v1/saved-searches/${other.id}`)).body.name).toBe('Tides');
    expect(await renamedEvents(other.id)).toHaveLength(0);
  });

  it('refuses a member it is shared with (403) and anyone else (404), as DELETE does', async () => {
    const shared = await save(alice, 'Team tides', { search: { query: 'tides', project_ids: [project] }, project_id: project });
    const own = await save(alice, 'Private tides');
    const member = await rename(bob, shared.id, 'Taken over');
    expect(member.status).toBe(403);
    expect(member.body.error.message).toBe('only its author may rename a saved search');
    expect((await as(bob, `/api/v1/saved-searches/${shared.id}`, { method: 'DELETE' })).status).toBe(403);
    for (const [user, id] of [
      [bob, own.id],
      [carol, shared.id],
      [alice, 'srch_none'],
    ] as const) {
      const res = await rename(user, id, 'Taken over');
      expect(res.status, `${user.email} ${id}`).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await as(alice, `/api/v1/saved-searches/${shared.id}`)).body.name).toBe('Team tides');
    expect((await as(alice, `/api/v1/saved-searches/${own.id}`)).body.name).toBe('Private tides');
    // Its author renames the shared one: its members see the new name.
    expect((await rename(alice, shared.id, 'Team tides 2026')).status).toBe(200);
    expect((await as(bob, '/api/v1/saved-searches')).body.saved_searches.map((v: { name: string }) => v.name)).toContain('Team tides 2026');
  });
});
