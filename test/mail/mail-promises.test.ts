/**
 * docs/mail.md, what no other mail test held: `smtp://` upgrades to TLS with STARTTLS (the relay here takes no mail
 * without it; its certificate is from a private CA given as NODE_EXTRA_CA_CERTS) and `smtps://` speaks TLS from the
 * start; `--smtp-from` is the From of every mail and every link starts with `--public-url`; a mail's text is sealed
 * while it waits and dropped once it is sent; an account's very first sign-in sends no "new sign-in" notice; and
 * without a mail server nothing is queued, an invitation gives its link instead, and "Forgot password?" says to ask an
 * admin. Mail goes through a real MTA (postfix on loopback).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { type Postfix, postfixUnavailable, startPostfix } from '../helpers/postfix.js';
import { type PrivateCa, privateCa } from '../helpers/private-ca.js';
import { WebClient } from '../server/web-client.js';

const noPostfix = postfixUnavailable();
const PUBLIC_URL = 'https://docs.example.org/search';
const FROM = 'Team Docs <docs@example.org>';

/** postfix's TLS settings with the CA's server certificate; the Received header then says the mail came over TLS. */
function relayTls(ca: PrivateCa, extra: Record<string, string>): Record<string, string> {
  const certFile = `${ca.caFile}.server.pem`;
  const keyFile = `${ca.caFile}.server.key`;
  writeFileSync(certFile, ca.cert);
  writeFileSync(keyFile, ca.key, { mode: 0o600 });
  return { smtpd_tls_cert_file: certFile, smtpd_tls_key_file: keyFile, smtpd_tls_received_header: 'yes', ...extra };
}
const CAME_OVER_TLS = /\(using TLSv1\.[23] with cipher /;

/** Every byte of the library's SQLite files (the database and its write-ahead log). */
const databaseBytes = (dataDir: string) =>
  Buffer.concat(readdirSync(dataDir).filter((f) => f.startsWith('docsearch.db')).map((f) => readFileSync(join(dataDir, f))));

describe.skipIf(noPostfix !== null)(`mail through a relay${noPostfix ? ` (skipped: ${noPostfix})` : ''}`, () => {
  let d: Daemon;
  let postfix: Postfix | undefined;
  let port: number;
  let admin: TestUser;
  let ca: PrivateCa;

  beforeAll(async () => {
    ca = privateCa();
    // The relay is down at first, so a mail waits in the outbox where the test can look at it.
    port = await freePort();
    d = await startDaemon({ args: ['--smtp-url', `smtp://127.0.0.1:${port}`, '--smtp-from', FROM, '--public-url', PUBLIC_URL], env: { NODE_EXTRA_CA_CERTS: ca.caFile } });
    admin = await addUser(d, { email: 'admin@example.com' });
  }, 120_000);

  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await postfix?.stop();
    ca?.remove();
  });

  it('names its mail server (scheme, host and port) and its From on Admin → Mail', async () => {
    const web = new WebClient(d);
    expect((await web.login(admin.email, admin.password)).status).toBe(302);
    const page = await web.get('/admin/mail');
    expect(page.status).toBe(200);
    const relay = /<p id="relay">([\s\S]*?)<\/p>/.exec(page.text)?.[1] ?? '';
    expect(relay).toContain(`<code>smtp://127.0.0.1:${port}</code>`);
    expect(relay).toContain('<code>Team Docs &lt;docs@example.org&gt;</code>');
  });

  it('keeps a waiting mail sealed, sends it From --smtp-from with links under --public-url, then drops its text', async () => {
    const made = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails: ['dora@example.com'] } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.invitations[0]).toMatchObject({ email: 'dora@example.com', mailed: true, link: null });
    await expect.poll(async () => (await api(d, '/api/v1/admin/mail?status=queued', { token: admin.apiKey })).body.mail[0]?.last_error ?? null, { timeout: 15_000 }).not.toBeNull();

    const db = new Database(join(d.dataDir, 'docsearch.db'), { readonly: true });
    try {
      const row = db.prepare("select body_sealed from mail_outbox where to_address = 'dora@example.com'").get() as { body_sealed: string | null };
      expect(row.body_sealed).toBeTruthy();
      // Its text holds a one-time link: none of it is readable at rest.
      expect(row.body_sealed).not.toMatch(/invite|token=|admin@example\.com/);
    } finally {
      db.close();
    }

    // `encrypt`: no MAIL FROM before STARTTLS.
    postfix = await startPostfix({ port, settings: relayTls(ca, { smtpd_tls_security_level: 'encrypt' }) });
    expect((await api(d, '/api/v1/admin/mail/retry', { token: admin.apiKey, method: 'POST' })).status).toBeLessThan(300);
    const mail = await postfix.waitFor('dora@example.com');
    expect(mail.from).toBe(FROM);
    expect(mail.raw).toMatch(CAME_OVER_TLS);
    const link = /https?:\/\/\S+\/invite\?token=([A-Za-z0-9_-]+)/.exec(mail.text);
    expect(link?.[0], mail.text).toMatch(new RegExp(`^${PUBLIC_URL.replaceAll('.', '\\.')}/invite\\?token=`));

    await expect.poll(async () => (await api(d, '/api/v1/admin/mail?status=sent', { token: admin.apiKey })).body.mail.length, { timeout: 15_000 }).toBe(1);
    const after = new Database(join(d.dataDir, 'docsearch.db'), { readonly: true });
    try {
      expect(after.prepare("select body_sealed from mail_outbox where to_address = 'dora@example.com'").get()).toEqual({ body_sealed: null });
    } finally {
      after.close();
    }
    // Nor is the link's token anywhere in the database's files (only its hash is kept).
    expect(databaseBytes(d.dataDir).includes(Buffer.from(link![1]!))).toBe(false);
  });

  it("sends no new-sign-in notice for an account's very first sign-in", async () => {
    const erin = await addUser(d, { email: 'erin@example.com' });
    expect((await new WebClient(d).login(erin.email, erin.password)).status).toBe(302);
    // A second browser is news (held in accounts-by-mail.test.ts); the first is not. Give the sender time to have queued it.
    const second = new WebClient(d);
    second.headers['user-agent'] = 'Mozilla/5.0 (Macintosh) Safari/605.1.15';
    expect((await second.login(erin.email, erin.password)).status).toBe(302);
    const notices = async () => (await api(d, '/api/v1/admin/mail?limit=200', { token: admin.apiKey })).body.mail.filter((m: { kind: string; to: string }) => m.kind === 'sign_in_notice' && m.to === erin.email);
    await expect.poll(async () => (await notices()).length, { timeout: 10_000 }).toBe(1);
    await postfix!.waitFor(erin.email, (m) => m.text.includes('Safari'));
  });
});

describe.skipIf(noPostfix !== null)(`smtps://${noPostfix ? ` (skipped: ${noPostfix})` : ''}`, () => {
  let d: Daemon;
  let postfix: Postfix;
  let ca: PrivateCa;

  beforeAll(async () => {
    ca = privateCa();
    // Wrapper mode: TLS from the first byte, as on port 465.
    postfix = await startPostfix({ settings: relayTls(ca, { smtpd_tls_wrappermode: 'yes', smtpd_tls_security_level: 'encrypt' }) });
    d = await startDaemon({ args: ['--smtp-url', `smtps://127.0.0.1:${postfix.port}`], env: { NODE_EXTRA_CA_CERTS: ca.caFile } });
  }, 120_000);

  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await postfix?.stop();
    ca?.remove();
  });

  it('speaks TLS from the start', async () => {
    const admin = await addUser(d, { email: 'admin@example.com' });
    expect((await api(d, '/api/v1/admin/mail/test', { token: admin.apiKey, body: { to: 'gus@example.com' } })).status).toBe(202);
    expect((await postfix.waitFor('gus@example.com')).raw).toMatch(CAME_OVER_TLS);
  });
});

describe('without a mail server', () => {
  let d: Daemon;
  let admin: TestUser;

  beforeAll(async () => {
    d = await startDaemon();
    admin = await addUser(d, { email: 'admin@example.com' });
  }, 120_000);

  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
  });

  it('queues nothing: an invitation gives its link to the admin, and "Forgot password?" says to ask an admin', async () => {
    const made = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails: ['fay@example.com'] } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.invitations[0]).toMatchObject({ email: 'fay@example.com', mailed: false, link: expect.stringMatching(new RegExp(`^${d.url}/invite\\?token=`)) });

    const stranger = new WebClient(d);
    const page = await stranger.get('/forgot-password');
    expect(page.status).toBe(200);
    expect(page.text).toContain('This docsearch sends no e-mail. Ask one of its administrators for a one-time link');
    expect(page.text).not.toContain('action="/forgot-password"');

    const outbox = await api(d, '/api/v1/admin/mail', { token: admin.apiKey });
    expect(outbox.status).toBe(200);
    expect(outbox.body.mail).toEqual([]);
  });
});
