/**
 * A refused form comes back with what was typed, saying why: sharing a project with an unknown address (the address
 * and the role chosen), transferring it to one, adding an unknown address to a group (they came back empty, the
 * role reset to viewer).
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { loggedIn } from './library-client.js';

const TYPED = 'nobody-here@example.com';

describe('refused forms keep what was typed', () => {
  let d: Daemon;
  let admin: TestUser;
  let project: string;
  daemonForSuite(async (started) => {
    d = started;
    admin = await addUser(d); // the first account: the admin
    project = (await api(d, '/api/v1/projects', { token: admin.apiKey, body: { name: 'Harbour' } })).body.id as string;
  });

  it('share and transfer: the Sharing tab again with the address, the role chosen and why', async () => {
    const web = await loggedIn(d, admin);
    await web.get(`/projects/${project}/sharing`);
    const shared = await web.submit(`/projects/${project}/members`, { _csrf: web.csrf, member: TYPED, role: 'editor' });
    expect(shared.status).toBe(404);
    const shareForm = /<form[^>]*id="share-form"[\s\S]*?<\/form>/.exec(shared.text)![0];
    expect(shareForm).toContain(`name="member" value="${TYPED}"`);
    expect(shareForm).toMatch(/<option value="editor" selected>/);
    expect(shared.text).toMatch(/<p class="error" role="alert">[^<]*nobody-here@example\.com/);

    const transferred = await web.submit(`/projects/${project}/transfer`, { _csrf: web.csrf, email: TYPED });
    expect(transferred.status).toBe(404);
    const transferForm = /<details[^>]*>\s*<summary>Transfer this project[\s\S]*?<\/details>/.exec(transferred.text)![0];
    expect(transferForm).toMatch(/^<details open>/);
    expect(transferForm).toContain(`name="email" value="${TYPED}"`);
    expect(transferred.text).toContain('<p class="error" role="alert">');
    // Nothing changed: still the admin's alone.
    const members = await api(d, `/api/v1/projects/${project}/members`, { token: admin.apiKey });
    expect(JSON.stringify(members.body)).not.toContain(TYPED);
  });

  it("a group's Add a person: the group page again with the address and why", async () => {
    const web = await loggedIn(d, admin);
    await web.get('/admin/groups');
    const made = await web.submit('/admin/groups', { _csrf: web.csrf, name: 'crew', description: '' });
    const group = /\/admin\/groups\/(grp_[0-9A-Za-z]+)/.exec(made.redirectedFrom?.location ?? made.text)![1]!;
    await web.get(`/admin/groups/${group}`);
    const added = await web.submit(`/admin/groups/${group}/members`, { _csrf: web.csrf, email: TYPED });
    expect(added.status).toBe(404);
    expect(/<form[^>]*id="add-member"[\s\S]*?<\/form>/.exec(added.text)![0]).toContain(`name="email" value="${TYPED}"`);
    expect(added.text).toMatch(/<p class="error" role="alert">[^<]*nobody-here@example\.com/);
  });
});
