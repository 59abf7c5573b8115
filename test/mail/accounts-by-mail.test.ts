/**
 * What e-mail does for accounts, through a real MTA (postfix on loopback, delivering into a Maildir the test reads):
 * "Forgot password?" mails a link that sets a new password once and ends the old sessions, and tells no one who has
 * an account; an invitation's mail has the link that makes the account (with the group it was given); a sign-in
 * from a browser an account never used is told to it by mail, once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { type Postfix, postfixUnavailable, startPostfix } from '../helpers/postfix.js';
import { loggedIn, WebClient } from '../server/web-client.js';

const noPostfix = postfixUnavailable();

/** The one link in a mail that starts with the daemon's URL and `path`. */
function linkIn(text: string, d: Daemon, path: string): string {
  const m = new RegExp(`${d.url.replace(/[.]/g, '\\.')}${path}\\?token=[A-Za-z0-9_-]+`).exec(text);
  if (!m) throw new Error(`no ${path} link in the mail:\n${text}`);
  return m[0];
}

describe.skipIf(noPostfix !== null)(`accounts by mail${noPostfix ? ` (skipped: ${noPostfix})` : ''}`, () => {
  let d: Daemon;
  let postfix: Postfix;
  let admin: TestUser;
  let alice: TestUser;

  beforeAll(async () => {
    postfix = await startPostfix();
    d = await startDaemon({ args: ['--smtp-url', postfix.url] });
    admin = await addUser(d, { email: 'admin@example.com' });
    alice = await addUser(d, { email: 'alice@example.com' });
  });

  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await postfix?.stop();
  });

  it('"Forgot password?" mails a link that sets a new password once and ends the old sessions', async () => {
    const before = await loggedIn(d, alice);
    expect((await before.get('/settings/account')).status).toBe(200);

    const stranger = new WebClient(d);
    expect((await stranger.get('/login')).text).toContain('href="/forgot-password"');
    const ask = async (email: string) => {
      await stranger.get('/forgot-password');
      const res = await stranger.post('/forgot-password', { _csrf: stranger.csrf, email });
      expect(res.status).toBe(200);
      return res.text.replaceAll(email, 'EMAIL');
    };
    // The same answer whether or not an account has the address.
    expect(await ask('nobody@example.com')).toBe(await ask('alice@example.com'));
    expect(await ask('alice@example.com')).toContain('a link to set a new password is on its way');

    const mail = await postfix.waitFor('alice@example.com', (m) => m.subject.startsWith('Set a new docsearch password'));
    const link = linkIn(mail.text, d, '/reset-password');
    expect(mail.text).toContain('works once');

    const page = await stranger.get(link.slice(d.url.length));
    expect(page.status).toBe(200);
    expect(page.text).toContain('alice@example.com');
    const token = new URL(link).searchParams.get('token')!;
    const csrf = stranger.csrf;
    const mismatch = await stranger.post('/reset-password', { _csrf: csrf, token, password: 'a new long password', password2: 'another one' });
    expect(mismatch.status).toBe(400);
    const set = await stranger.submit('/reset-password', { _csrf: csrf, token, password: 'a new long password', password2: 'a new long password' });
    expect(set.redirectedFrom?.location).toBe('/login');
    expect(set.text).toContain('Your new password is set');

    // Once: the link is used up.
    expect((await stranger.get(link.slice(d.url.length))).status).toBe(404);
    expect((await stranger.post('/reset-password', { _csrf: csrf, token, password: 'a third long password', password2: 'a third long password' })).status).toBe(404);
    // The session from before is over; the old password no longer works, the new one does.
    const after = await before.get('/settings/account');
    expect(after.status).toBe(302);
    expect(after.location).toMatch(/^\/login/);
    expect((await new WebClient(d).login('alice@example.com', alice.password)).status).toBe(401);
    expect((await new WebClient(d).login('alice@example.com', 'a new long password')).status).toBe(302);

    // Only the one mail for the address with an account, though it was asked for twice within the minute; none for the other.
    expect(postfix.messages().filter((m) => m.subject.startsWith('Set a new docsearch password'))).toHaveLength(1);
    expect(postfix.messages().filter((m) => m.to.includes('nobody@example.com'))).toHaveLength(0);
    const audit = await api(d, '/api/v1/audit-events?type=password_reset.&limit=10', { token: admin.apiKey });
    expect(audit.body.events.map((e: { type: string }) => e.type).sort()).toEqual(['password_reset.completed', 'password_reset.requested']);
    alice.password = 'a new long password';
  });

  it('tells an account by mail when it signs in from a browser it never used, once', async () => {
    // Alice has signed in before (the test above); this browser is new to her.
    const notices = () => postfix.messages().filter((m) => m.to.includes('alice@example.com') && m.subject.startsWith('New sign-in to docsearch'));
    // Queued as the sign-in answers: the outbox counts them at once (delivery takes a moment).
    const queued = async () => (await api(d, '/api/v1/admin/mail?limit=200', { token: admin.apiKey })).body.mail.filter((m: { kind: string; to: string }) => m.kind === 'sign_in_notice' && m.to === 'alice@example.com').length;
    const known = await queued();
    const browser = new WebClient(d);
    browser.headers['user-agent'] = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
    expect((await browser.login('alice@example.com', alice.password)).status).toBe(302);
    expect(await queued()).toBe(known + 1);
    const notice = await postfix.waitFor('alice@example.com', (m) => m.subject.startsWith('New sign-in to docsearch') && m.text.includes('Firefox'));
    expect(notices()).toHaveLength(known + 1);
    expect(notice.text).toContain('Firefox');
    expect(notice.text).toContain('127.0.0.1');
    // The same browser again is no news.
    await browser.get('/settings/account');
    expect((await browser.post('/logout', { _csrf: browser.csrf })).status).toBeLessThan(400);
    expect((await browser.login('alice@example.com', alice.password)).status).toBe(302);
    expect(await queued()).toBe(known + 1);
  });

  it("an invitation's mail has the link that makes the account, in the group it was given; a revoked one stops working", async () => {
    expect((await api(d, '/api/v1/admin/groups', { token: admin.apiKey, body: { name: 'team' } })).status).toBe(201);
    const made = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails: ['bob@example.com', 'carol@example.com', 'alice@example.com', 'not an address'], group: 'team' } });
    expect(made.status).toBe(207);
    expect(made.body.invitations.map((i: { email: string; mailed: boolean; link: string | null }) => [i.email, i.mailed, i.link])).toEqual([
      ['bob@example.com', true, null],
      ['carol@example.com', true, null],
    ]);
    expect(made.body.refused.map((r: { email: string }) => r.email)).toEqual(['alice@example.com', 'not an address']);

    const listed = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey });
    expect(listed.body.invitations).toHaveLength(2);
    expect(listed.body.invitations[0]).toMatchObject({ group: 'team', admin: false, created_by: { email: 'admin@example.com' } });

    const bobMail = await postfix.waitFor('bob@example.com');
    expect(bobMail.subject).toMatch(/^You are invited to docsearch/);
    expect(bobMail.text).toContain('admin@example.com invited you');
    const link = linkIn(bobMail.text, d, '/invite');
    const bob = new WebClient(d);
    const page = await bob.get(link.slice(d.url.length));
    expect(page.status).toBe(200);
    const joined = await bob.post('/invite', { _csrf: bob.csrf, token: new URL(link).searchParams.get('token')!, password: 'bob has a long password', password2: 'bob has a long password' });
    expect(joined.status).toBe(303);
    expect((await bob.get('/settings/account')).text).toContain('bob@example.com');
    const team = await api(d, '/api/v1/admin/groups/team', { token: admin.apiKey });
    expect(team.body.members.map((m: { email: string }) => m.email)).toEqual(['bob@example.com']);

    // Carol's invitation is revoked before she opens it: its link no longer works.
    const carolMail = await postfix.waitFor('carol@example.com');
    const carol = listed.body.invitations.find((i: { email: string }) => i.email === 'carol@example.com');
    expect((await api(d, `/api/v1/admin/invitations/${carol.id}`, { token: admin.apiKey, method: 'DELETE' })).status).toBe(204);
    expect((await new WebClient(d).get(linkIn(carolMail.text, d, '/invite').slice(d.url.length))).status).toBe(404);
    expect((await api(d, '/api/v1/admin/invitations', { token: admin.apiKey })).body.invitations).toEqual([]);
  });
});
