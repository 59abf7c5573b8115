/**
 * The projects list says whom each project its viewer owns is shared with ("shared with 1 person and 1 group",
 * "not shared"), linking to its Sharing tab; a project someone shares with a viewer or editor names its owner and
 * never its members (only owners see those).
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { loggedIn } from './library-client.js';

/** The text of the projects list's row for the project `id`, tags dropped. */
const rowText = (page: string, id: string): string => {
  const row = page.match(new RegExp(`<tr data-project-id="${id}">([\\s\\S]*?)</tr>`))?.[1];
  if (row === undefined) throw new Error(`no row for ${id}`);
  return row.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();
};

describe('the projects list: sharing state', () => {
  let d: Daemon;
  daemonForSuite(async (started) => {
    d = started;
  });

  it('owners read whom each project is shared with; members read who shared it', { timeout: 60_000 }, async () => {
    const admin = await addUser(d); // the first account: the admin
    const bob = await addUser(d);
    const carol = await addUser(d);
    const dave = await addUser(d);
    const adminWeb = await loggedIn(d, admin);
    await adminWeb.get('/admin/groups');
    expect((await adminWeb.submit('/admin/groups', { _csrf: adminWeb.csrf, name: 'Rowers', description: '' })).status).toBe(200);

    const shared = (await api(d, '/api/v1/projects', { token: bob.apiKey, body: { name: 'Regatta' } })).body.id as string;
    const alone = (await api(d, '/api/v1/projects', { token: bob.apiKey, body: { name: 'Diary' } })).body.id as string;
    const share = (body: Record<string, string>) => api(d, `/api/v1/projects/${shared}/members`, { token: bob.apiKey, body });
    expect((await share({ email: carol.email, role: 'viewer' })).status).toBe(201);
    expect((await share({ group: 'Rowers', role: 'editor' })).status).toBe(201);

    const bobPage = (await (await loggedIn(d, bob)).get('/projects')).text;
    expect(rowText(bobPage, shared)).toContain('owner shared with 1 person and 1 group');
    expect(bobPage).toContain(`<a class="muted shared-with" href="/projects/${shared}/sharing">shared with 1 person and 1 group</a>`);
    expect(rowText(bobPage, alone)).toContain('owner not shared');

    // A viewer sees who shared it, not with whom.
    const carolRow = rowText((await (await loggedIn(d, carol)).get('/projects')).text, shared);
    expect(carolRow).toContain(`viewer shared by ${bob.email}`);
    expect(carolRow).not.toContain('shared with');

    // A second owner counts the owner of record and the others, never themselves.
    expect((await share({ email: dave.email, role: 'owner' })).status).toBe(201);
    const daveRow = rowText((await (await loggedIn(d, dave)).get('/projects')).text, shared);
    expect(daveRow).toContain(`owner shared by ${bob.email} shared with 2 people and 1 group`);
    expect(rowText((await (await loggedIn(d, bob)).get('/projects')).text, shared)).toContain('shared with 2 people and 1 group');
  });
});
