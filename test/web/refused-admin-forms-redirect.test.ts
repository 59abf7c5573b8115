/**
 * A refused Admin form answers its POST with a 303 to the form's page (Post/Redirect/Get): that page's next GET is the
 * answer (the error, what was typed, the refusal's status), and the GET after it (a reload) is the page afresh, so a
 * reload re-posts nothing. An invitation form that made some invitations and refused others is answered so too: a
 * reload made them again, replacing the links just shown. The kept answer is for that page alone.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import type { WebClient } from '../server/web-client.js';
import { loggedIn } from './library-client.js';

const alertOf = (page: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(page)?.[1]?.replace(/&quot;/g, '"') ?? null;

describe('refused Admin forms: Post/Redirect/Get', () => {
  let d: Daemon;
  let admin: TestUser;
  let bob: TestUser;
  let web: WebClient;
  let group: string;
  daemonForSuite(async (started) => {
    d = started;
    admin = await addUser(d); // the first account: the admin
    bob = await addUser(d);
    group = (await api(d, '/api/v1/admin/groups', { token: admin.apiKey, body: { name: 'crew' } })).body.id as string;
    web = await loggedIn(d, admin);
  });

  /** Posts from `page` as its form does; the answer must be a 303 to `page`, its GET the refusal, the next GET clean. */
  async function refusedThenReloaded(page: string, action: string, form: Record<string, string>, status: number) {
    await web.get(page);
    const posted = await web.post(action, { _csrf: web.csrf, ...form });
    expect(posted.status, posted.text.slice(0, 300)).toBe(303);
    expect(posted.location?.split('#')[0]).toBe(page);
    const shown = await web.get(page);
    expect(shown.status).toBe(status);
    const reloaded = await web.get(page);
    expect(reloaded.status).toBe(200);
    expect(alertOf(reloaded.text)).toBeNull();
    return shown;
  }

  it('Groups → New group with a name taken: the error and the name typed, then the page afresh', async () => {
    const shown = await refusedThenReloaded('/admin/groups', '/admin/groups', { name: 'Crew', description: 'typed here' }, 409);
    expect(alertOf(shown.text)).toBe('A group named "Crew" exists already.');
    expect(shown.text).toContain('name="name" required maxlength="200" value="Crew"');
    expect(shown.text).toContain('>typed here</textarea>');
  });

  it("a group's Add a person with an address without an account: the offer to invite, then the page afresh", async () => {
    const shown = await refusedThenReloaded(`/admin/groups/${group}`, `/admin/groups/${group}/members`, { email: 'nobody@example.com' }, 404);
    expect(shown.text).toContain('name="email" value="nobody@example.com"');
    expect(shown.text).toContain('id="invite-instead"');
  });

  it('Users → Invite, one made and one refused: its link and the refusal shown once; a reload invites nobody again', async () => {
    const shown = await refusedThenReloaded('/admin/users', '/admin/users/invite', { email: `dora@example.com\n${bob.email}`, role: 'member', group: '' }, 200);
    expect(alertOf(shown.text)).toBe(`Not invited: ${bob.email}: an account with the e-mail ${bob.email} exists already.`);
    const link = /id="invite-link" readonly value="([^"]+)"/.exec(shown.text)?.[1];
    expect(link).toMatch(/\/invite\?token=/);
    const open = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey });
    expect(open.body.invitations.map((i: { email: string }) => i.email)).toEqual(['dora@example.com']);
    // The link shown still works: no second invitation replaced it.
    expect((await fetch(link!.replace(/^https?:\/\/[^/]+/, d.url))).status).toBe(200);
  });

  it("Delete an account with an heir that does not exist: the confirmation again with why, then afresh", async () => {
    const me = (await api(d, '/api/v1/me', { token: bob.apiKey })).body.id as string;
    const shown = await refusedThenReloaded(`/admin/users/${me}/delete`, `/admin/users/${me}/delete`, { transfer_to: 'nobody@example.com' }, 404);
    expect(alertOf(shown.text)).toMatch(/nobody@example\.com/);
    expect(shown.text).toContain('value="nobody@example.com"');
  });

  it('the kept answer is for its page alone: another page first, and the form page is afresh', async () => {
    await web.get('/admin/groups');
    expect((await web.post('/admin/groups', { _csrf: web.csrf, name: 'crew', description: '' })).status).toBe(303);
    expect((await web.get('/admin/users')).status).toBe(200);
    const page = await web.get('/admin/groups');
    expect(page.status).toBe(200);
    expect(alertOf(page.text)).toBeNull();
  });
});
