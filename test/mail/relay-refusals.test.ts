/**
 * A relay's 5xx that is about its own setup, not the recipient, keeps the mail (docs/mail.md): a wrong password
 * (535 to AUTH), a From the relay does not let this server send as (refused at MAIL FROM, or at RCPT TO as postfix
 * delays its refusals there), a relay that does not relay for this server ("Relay access denied" at RCPT TO), a
 * relay that refuses this host outright, or the message after DATA. Each time the mail stays queued, admins see
 * the relay's answer, and once the relay is put right "retry now" sends it, once. Only the recipient's own final
 * "no" (no such mailbox, at RCPT TO) gives a mail up: test/mail/outbox.test.ts.
 * Real servers: Debian's postfix on loopback, with Dovecot checking its logins (SASL).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { type Dovecot, dovecotUnavailable, startDovecot } from '../helpers/dovecot.js';
import { waitFor } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';
import { type Postfix, postfixUnavailable, startPostfix } from '../helpers/postfix.js';

const missing = postfixUnavailable() ?? dovecotUnavailable();
/** The From of every mail (no --smtp-from): docsearch@ the public URL's host. */
const FROM = 'docsearch@docs.test.internal';
/** What the daemon logs in to the relay with: a password the relay does not know until the test says so. */
const SMTP_PASSWORD = 'the-password-docsearch-has';

interface WireMail {
  id: string;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
}

describe.skipIf(missing !== null)(`a relay that refuses for reasons of its own${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let daemon: Daemon;
  let dovecot: Dovecot;
  let relay: Postfix | undefined;
  let port: number;
  let admin: TestUser;

  beforeAll(async () => {
    dovecot = await startDovecot({ saslPort: true });
    port = await freePort();
    const url = `smtp://${dovecot.user.name}:${SMTP_PASSWORD}@127.0.0.1:${port}`;
    daemon = await startDaemon({ args: ['--smtp-url', url, '--public-url', 'http://docs.test.internal'] });
    admin = await addUser(daemon, { email: 'root@example.com' });
  });

  afterAll(async () => {
    await daemon?.stop();
    if (daemon) removeDir(daemon.dataDir);
    await relay?.stop();
    await dovecot?.stop();
  });

  const mailById = async (id: string): Promise<WireMail | undefined> =>
    ((await api(daemon, '/api/v1/admin/mail?limit=200', { token: admin.apiKey })).body.mail as WireMail[]).find((m) => m.id === id);

  /**
   * Queues a test mail to `to` while `relay` is set up wrong; expects it kept, with the relay's answer shown and
   * logged; then `fix()` puts the relay right, and "retry now" must deliver it, once.
   */
  async function keptUntilFixed(to: string, answer: RegExp, fix: () => Promise<void>): Promise<void> {
    const queued = await api(daemon, '/api/v1/admin/mail/test', { token: admin.apiKey, body: { to } });
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    const id: string = queued.body.id;
    const tried = await waitFor(
      async () => {
        const m = await mailById(id);
        return m && m.attempts >= 1 ? m : null;
      },
      30_000,
      `the mail to ${to} tried once`,
    );
    expect(tried, `the mail to ${to} is kept, not given up`).toMatchObject({ status: 'queued', attempts: 1 });
    expect(tried.last_error).toMatch(answer);
    expect(Date.parse(tried.next_attempt_at!)).toBeGreaterThan(Date.now());
    // Told as any failing send is: a warning with the relay's answer, and no mail.failed.
    const line = JSON.parse(await daemon.logLine((l) => l.includes(id) && l.includes('"event":"mail.')));
    expect(line).toMatchObject({ event: 'mail.deferred', level: 40, attempts: 1 });
    expect(line.error).toMatch(answer);

    await fix();
    const retried = await api(daemon, '/api/v1/admin/mail/retry', { method: 'POST', token: admin.apiKey });
    expect(retried.body).toEqual({ queued: 1 });
    const delivered = await relay!.waitFor(to);
    expect(delivered.from).toBe(`docsearch <${FROM}>`);
    const sent = await waitFor(
      async () => {
        const m = await mailById(id);
        return m?.status === 'sent' ? m : null;
      },
      10_000,
      'marked sent',
    );
    expect(sent).toMatchObject({ attempts: 2, last_error: null });
    expect(relay!.messages().filter((m) => m.to === to)).toHaveLength(1);
    const failed = await api(daemon, `/api/v1/audit-events?type=mail.failed&target=${id}`, { token: admin.apiKey });
    expect(failed.body.events).toEqual([]);
  }

  /** The relay started with `wrong`, and the fix: the same relay started again without it. */
  async function refusing(wrong: Record<string, string>): Promise<() => Promise<void>> {
    relay = await startPostfix({ port, settings: wrong });
    return async () => {
      await relay!.stop();
      relay = await startPostfix({ port });
    };
  }

  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
  });

  it('keeps a mail the relay refuses at AUTH (535, a wrong password) and sends it once the password is right', async () => {
    // The relay takes mail only from those who log in; Dovecot knows another password than the daemon's.
    relay = await startPostfix({
      port,
      settings: {
        smtpd_sasl_auth_enable: 'yes',
        smtpd_sasl_type: 'dovecot',
        smtpd_sasl_path: `inet:127.0.0.1:${dovecot.saslPort}`,
        mynetworks: '192.0.2.0/24',
        smtpd_relay_restrictions: 'permit_sasl_authenticated, reject',
      },
    });
    await keptUntilFixed('auth@example.com', /^535 5\.7\.8 /, async () => dovecot.setPassword(SMTP_PASSWORD));
  });

  it('keeps a mail whose sender the relay refuses at MAIL FROM', async () => {
    const fix = await refusing({ smtpd_delay_reject: 'no', smtpd_sender_restrictions: `check_sender_access inline:{ { ${FROM} = 553 5.7.1 not allowed to send as this sender } }` });
    await keptUntilFixed('sender@example.com', /^553 5\.7\.1 .*not allowed to send as this sender/, fix);
  });

  it('keeps a mail whose sender the relay refuses at RCPT TO (postfix delays its refusals there)', async () => {
    const fix = await refusing({ smtpd_sender_restrictions: `check_sender_access inline:{ { ${FROM} = 553 5.7.1 not allowed to send as this sender } }` });
    await keptUntilFixed('late-sender@example.com', /^553 5\.7\.1 .*Sender address rejected/, fix);
  });

  it('keeps a mail the relay will not relay for this server ("Relay access denied" at RCPT TO)', async () => {
    const fix = await refusing({ virtual_mailbox_domains: 'example.org', mynetworks: '192.0.2.0/24', smtpd_relay_restrictions: 'permit_mynetworks, reject_unauth_destination' });
    await keptUntilFixed('relay@example.com', /^554 5\.7\.1 .*Relay access denied/, fix);
  });

  it('keeps a mail when the relay refuses this host before any mail (554 to the connection)', async () => {
    const fix = await refusing({ smtpd_delay_reject: 'no', smtpd_client_restrictions: 'reject' });
    await keptUntilFixed('client@example.com', /^554 5\.7\.1 .*Client host rejected/, fix);
  });

  it('keeps a mail the relay refuses after DATA (552, a size limit below the message)', async () => {
    const fix = await refusing({ message_size_limit: '300' });
    await keptUntilFixed('size@example.com', /^552 5\.3\.4 /, fix);
  });
});
