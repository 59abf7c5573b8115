/**
 * A group's admin page lists the projects shared with it: each with the role the group holds there and its owner of
 * record, by name; the project's Sharing tab linked where the admin may open it (they own it; an admin reads no
 * other project, docs/permissions.md); and, with none, how a project is shared with the group.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { loggedIn } from './library-client.js';

describe("a group's admin page: the projects shared with it", () => {
  let d: Daemon;
  let admin: TestUser;
  let alice: TestUser;
  const ids: Record<string, string> = {};
  daemonForSuite(async (started) => {
    d = started;
    admin = await addUser(d); // the first account: the admin
    alice = await addUser(d);
    for (const name of ['crew', 'idle']) ids[name] = (await api(d, '/api/v1/admin/groups', { token: admin.apiKey, body: { name } })).body.id as string;
    const project = async (owner: TestUser, name: string, role: string) => {
      const id = (await api(d, '/api/v1/projects', { token: owner.apiKey, body: { name } })).body.id as string;
      const shared = await api(d, `/api/v1/projects/${id}/members`, { token: owner.apiKey, body: { group: 'crew', role } });
      expect(shared.status, JSON.stringify(shared.body)).toBe(201);
      ids[name] = id;
    };
    await project(alice, 'Ledger', 'editor');
    await project(admin, 'Harbour', 'viewer');
  });

  const rowsOf = (page: string) =>
    [...page.matchAll(/<tr data-project-id="([^"]+)">([\s\S]*?)<\/tr>/g)].map(([, id, row]) => ({
      id,
      link: /<a href="([^"]+)">/.exec(row!)?.[1] ?? null,
      cells: [...row!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => c[1]!.replace(/<[^>]+>/g, '')),
    }));

  it('each project with the role the group holds and its owner, by name; its Sharing tab linked where the admin owns it', async () => {
    const web = await loggedIn(d, admin);
    const page = await web.get(`/admin/groups/${ids.crew}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h2 id="shared-projects">Shared with this group</h2>');
    expect(rowsOf(page.text)).toEqual([
      { id: ids.Harbour, link: `/projects/${ids.Harbour}/sharing`, cells: ['Harbour', 'viewer', admin.email] },
      { id: ids.Ledger, link: null, cells: ['Ledger', 'editor', alice.email] },
    ]);
    expect(page.text).toContain('<p class="muted" id="project-count">2 projects:');
    // The link opens the project's Sharing tab, where the group is listed with its role.
    const sharing = await web.get(`/projects/${ids.Harbour}/sharing`);
    expect(sharing.status).toBe(200);
    expect(sharing.text).toContain('crew');
  });

  it('a group shared with nothing says how a project is shared with it', async () => {
    const web = await loggedIn(d, admin);
    const page = await web.get(`/admin/groups/${ids.idle}`);
    expect(page.status).toBe(200);
    expect(rowsOf(page.text)).toEqual([]);
    expect(page.text).toContain(`<p class="muted" id="no-projects">No project is shared with idle yet: a project's owner shares it on the project's Sharing tab, as <code>group:idle</code> with a role.</p>`);
  });
});
