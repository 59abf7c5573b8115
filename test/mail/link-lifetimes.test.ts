/**
 * How long the one-time links work, as docs/mail.md ("What is sent") and docs/operations.md ("Invitations") say: a
 * reset link someone asked for ("Forgot password?") within an hour, one an admin makes within 24 hours, an
 * invitation (the admin API's, and the operator's `docsearch users invite`) for 7 days. Each link is made the way a
 * person makes it, its stored expiry is read from the database (creation + its lifetime, creation being the moment
 * of the request), and then the expiry is moved: a second past now the link is refused (its page and its form, and
 * nothing is done), five seconds ahead the same link still works, once.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { type Postfix, postfixUnavailable, startPostfix } from '../helpers/postfix.js';
import { WebClient } from '../server/web-client.js';
import { withLibraryDb } from '../helpers/library-db.js';

const HOUR = 3600_000;
const noPostfix = postfixUnavailable();

type LinkTable = 'password_resets' | 'invites';
interface LinkRow {
  created_at: number;
  expires_at: number;
  created_by: string | null;
  used_at: number | null;
}

const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;
/** Only the SHA-256 of a link's token is stored: the row a link is. */
const hashOf = (link: string) => createHash('sha256').update(tokenOf(link)).digest('hex');
const pathOf = (link: string) => `${new URL(link).pathname}${new URL(link).search}`;
const h1 = (page: string) => /<h1>([^<]*)/.exec(page)?.[1]?.trim() ?? '';


const rowOf = (d: Daemon, table: LinkTable, link: string) =>
  withLibraryDb(d.dataDir, (db) => db.prepare(`select created_at, expires_at, created_by, used_at from ${table} where token_hash = ?`).get(hashOf(link)) as LinkRow | undefined);

/** Moves a link's expiry (as if time had passed); the link itself stays as it was made, unused. */
function expireAt(d: Daemon, table: LinkTable, link: string, at: number): void {
  expect(withLibraryDb(d.dataDir, (db) => db.prepare(`update ${table} set expires_at = ? where token_hash = ?`).run(at, hashOf(link)).changes)).toBe(1);
}

/** The stored link: made within [before, after] (the request that made it), expiring exactly `ttl` later. */
function expectLifetime(d: Daemon, table: LinkTable, link: string, before: number, after: number, ttl: number): LinkRow {
  const row = rowOf(d, table, link);
  expect(row, `no ${table} row for the link`).toBeDefined();
  expect(Number(row!.created_at)).toBeGreaterThanOrEqual(before);
  expect(Number(row!.created_at)).toBeLessThanOrEqual(after);
  expect(Number(row!.expires_at) - Number(row!.created_at)).toBe(ttl);
  expect(row!.used_at).toBeNull();
  return row!;
}

/** "until 5 Mar 2025, 14:05 UTC" in a mail, as epoch ms (the minute). */
function untilInMail(text: string): number {
  const m = /works once, until (\d{1,2} [A-Z][a-z]{2} \d{4}),? (\d{2}:\d{2}) UTC/.exec(text);
  if (!m) throw new Error(`no "works once, until …" in the mail:\n${text}`);
  return Date.parse(`${m[1]} ${m[2]} UTC`);
}

describe('how long one-time links work', () => {
  let postfix: Postfix | undefined;
  let d: Daemon;
  let admin: TestUser;
  let adminId: string;

  beforeAll(async () => {
    if (!noPostfix) postfix = await startPostfix();
    d = await startDaemon({ args: postfix ? ['--smtp-url', postfix.url] : [] });
    admin = await addUser(d, { email: 'admin@example.com' }); // the first account: the admin
    adminId = (await api(d, '/api/v1/me', { token: admin.apiKey })).body.id as string;
  });

  afterAll(async () => {
    if (d) {
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    }
    await postfix?.stop();
  });

  /**
   * A reset link past its expiry is refused, page and form, and the password stays; the same link with its expiry
   * a moment ahead sets the new password, once.
   */
  async function resetLinkEndsAtItsExpiry(link: string, user: TestUser): Promise<void> {
    const newPassword = `${user.password} renewed`;
    const token = tokenOf(link);
    expireAt(d, 'password_resets', link, Date.now() - 1000);
    const late = new WebClient(d);
    const page = await late.get(pathOf(link));
    expect(page.status).toBe(404);
    expect(h1(page.text)).toBe('Reset link not valid');
    // Not a dead end: it leads to asking for a new link.
    expect(page.text).toMatch(/<a href="\/forgot-password" class="button" id="next">Ask for a new link<\/a>/);
    await late.get('/login');
    const refused = await late.post('/reset-password', { _csrf: late.csrf, token, password: newPassword, password2: newPassword });
    expect(refused.status).toBe(404);
    expect(h1(refused.text)).toBe('Reset link not valid');
    expect(rowOf(d, 'password_resets', link)!.used_at).toBeNull();
    expect((await new WebClient(d).login(user.email, newPassword)).status).toBe(401);
    expect((await new WebClient(d).login(user.email, user.password)).status).toBe(302);

    expireAt(d, 'password_resets', link, Date.now() + 5000);
    const inTime = new WebClient(d);
    const open = await inTime.get(pathOf(link));
    expect(open.status).toBe(200);
    expect(open.text).toContain(user.email);
    const set = await inTime.post('/reset-password', { _csrf: inTime.csrf, token, password: newPassword, password2: newPassword });
    expect(set.status).toBe(303);
    expect(set.location).toBe('/login');
    expect((await new WebClient(d).login(user.email, newPassword)).status).toBe(302);
    expect((await new WebClient(d).get(pathOf(link))).status).toBe(404);
    user.password = newPassword;
  }

  /**
   * An invitation past its expiry is refused, page and form, and makes no account; the same link with its expiry
   * a moment ahead makes the account and signs it in, once.
   */
  async function invitationEndsAtItsExpiry(link: string, email: string): Promise<void> {
    const password = 'an invited long password';
    const token = tokenOf(link);
    const accounts = async () => ((await api(d, '/api/v1/admin/users', { token: admin.apiKey })).body.users as { email: string }[]).map((u) => u.email);
    expireAt(d, 'invites', link, Date.now() - 1000);
    const late = new WebClient(d);
    const page = await late.get(pathOf(link));
    expect(page.status).toBe(404);
    expect(h1(page.text)).toBe('Invitation link not valid');
    await late.get('/login');
    const refused = await late.post('/invite', { _csrf: late.csrf, token, password, password2: password });
    expect(refused.status).toBe(404);
    expect(h1(refused.text)).toBe('Invitation link not valid');
    expect(await accounts()).not.toContain(email);
    expect(rowOf(d, 'invites', link)!.used_at).toBeNull();

    expireAt(d, 'invites', link, Date.now() + 5000);
    const inTime = new WebClient(d);
    const open = await inTime.get(pathOf(link));
    expect(open.status).toBe(200);
    expect(open.text).toContain(email);
    const joined = await inTime.post('/invite', { _csrf: inTime.csrf, token, password, password2: password });
    expect(joined.status).toBe(303);
    expect(joined.location).toBe('/');
    expect((await inTime.get('/settings/account')).text).toContain(email);
    expect(await accounts()).toContain(email);
    expect((await new WebClient(d).get(pathOf(link))).status).toBe(404);
  }

  it.skipIf(noPostfix !== null)(`"Forgot password?" mails a link that works for an hour${noPostfix ? ` (skipped: ${noPostfix})` : ''}`, async () => {
    const alice = await addUser(d, { email: 'alice@example.com' });
    const stranger = new WebClient(d);
    await stranger.get('/forgot-password');
    const before = Date.now();
    expect((await stranger.post('/forgot-password', { _csrf: stranger.csrf, email: alice.email })).status).toBe(200);
    const after = Date.now();
    const mail = await postfix!.waitFor(alice.email, (m) => m.subject.startsWith('Set a new docsearch password'));
    const link = /https?:\/\/\S+\/reset-password\?token=[A-Za-z0-9_-]+/.exec(mail.text)?.[0];
    expect(link, mail.text).toBeDefined();
    const row = expectLifetime(d, 'password_resets', link!, before, after, HOUR);
    expect(row.created_by).toBeNull();
    // The mail names the stored end (to the minute): one moment, read once, for the row and the mail.
    expect(untilInMail(mail.text)).toBe(Math.floor(Number(row.expires_at) / 60_000) * 60_000);
    await resetLinkEndsAtItsExpiry(link!, alice);
  });

  it("an admin's reset link works for 24 hours", async () => {
    const bob = await addUser(d, { email: 'bob@example.com' });
    const before = Date.now();
    const made = await api(d, `/api/v1/admin/users/${bob.email}/reset-link`, { token: admin.apiKey, body: { send: false } });
    const after = Date.now();
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.mailed).toBe(false);
    const link = made.body.link as string;
    const row = expectLifetime(d, 'password_resets', link, before, after, 24 * HOUR);
    expect(row.created_by).toBe(adminId);
    expect(Date.parse(made.body.expires_at as string)).toBe(Number(row.expires_at));
    await resetLinkEndsAtItsExpiry(link, bob);
  });

  it("an admin's invitation works once, for 7 days", async () => {
    const email = 'carol@example.com';
    const before = Date.now();
    const made = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails: [email], send: false } });
    const after = Date.now();
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const link = made.body.invitations[0].link as string;
    const row = expectLifetime(d, 'invites', link, before, after, 7 * 24 * HOUR);
    expect(row.created_by).toBe(adminId);
    expect(Date.parse(made.body.invitations[0].expires_at as string)).toBe(Number(row.expires_at));
    // Admins see the same end in the list of open invitations.
    const listed = (await api(d, '/api/v1/admin/invitations', { token: admin.apiKey })).body.invitations as { email: string; expires_at: string }[];
    expect(Date.parse(listed.find((i) => i.email === email)!.expires_at)).toBe(Number(row.expires_at));
    await invitationEndsAtItsExpiry(link, email);
  });

  it("the operator's invitation (`docsearch users invite`) works once, for 7 days", async () => {
    const email = 'dave@example.com';
    const before = Date.now();
    const made = await runCli(['users', 'invite', email, '--data-dir', d.dataDir, '--public-url', d.url, '--json'], { env: d.env });
    const after = Date.now();
    expect(made.code, made.stderr).toBe(0);
    const out = JSON.parse(made.stdout) as { email: string; url: string; expires_at: string };
    const row = expectLifetime(d, 'invites', out.url, before, after, 7 * 24 * HOUR);
    expect(row.created_by).toBeNull();
    expect(Date.parse(out.expires_at)).toBe(Number(row.expires_at));
    await invitationEndsAtItsExpiry(out.url, email);
  });
});
