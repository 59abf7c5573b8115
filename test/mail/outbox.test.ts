/**
 * The mail outbox through a real MTA (Debian's postfix on loopback, delivering into a Maildir this test reads):
 * two replicas on one PostgreSQL database send each mail once, and mail queued while the mail server is down is
 * kept (its failure shown to admins) and sent once it is back. Links and bodies are the features' tests' business
 * (test/mail/password-reset.test.ts, invitations); here a test mail is enough.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';
import { type Postfix, postfixUnavailable, REFUSED_RECIPIENT, startPostfix } from '../helpers/postfix.js';
import { type PgCluster, postgresUnavailable, startPostgres } from '../helpers/postgres.js';
import { loggedIn } from '../server/web-client.js';

const noPostfix = postfixUnavailable();
const noPostgres = postgresUnavailable();

describe.skipIf(noPostfix !== null || noPostgres !== null)(`two replicas share one outbox${noPostfix ?? noPostgres ? ` (skipped: ${noPostfix ?? noPostgres})` : ''}`, () => {
  let pg: PgCluster;
  let postfix: Postfix;
  const replicas: Daemon[] = [];
  let admin: { apiKey: string };

  beforeAll(async () => {
    [pg, postfix] = await Promise.all([startPostgres(), startPostfix()]);
    const databaseUrl = await pg.createDatabase();
    // Replicas of one library share its secrets key: a body sealed by one must open on the other.
    const key = randomBytes(32).toString('hex');
    for (let i = 0; i < 2; i++) replicas.push(await startDaemon({ databaseUrl, args: ['--smtp-url', postfix.url, '--secrets-key', key, '--public-url', 'http://docs.test.internal'] }));
    admin = await addUser(replicas[0]!, { email: 'admin@example.com' });
  });

  afterAll(async () => {
    for (const r of replicas) {
      await r.stop();
      removeDir(r.dataDir);
    }
    await postfix?.stop();
    await pg?.destroy();
  });

  it('sends each mail once, whichever replica queued it', async () => {
    const addresses = Array.from({ length: 12 }, (_, i) => `reader${i}@example.com`);
    await Promise.all(
      addresses.map(async (to, i) => {
        const res = await api(replicas[i % 2]!, '/api/v1/admin/mail/test', { token: admin.apiKey, body: { to } });
        expect(res.status, JSON.stringify(res.body)).toBe(202);
        expect(res.body).toMatchObject({ kind: 'test', to, status: 'queued' });
      }),
    );
    for (const to of addresses) await postfix.waitFor(to);
    const outbox = await waitFor(
      async () => {
        const res = await api(replicas[1]!, '/api/v1/admin/mail?status=sent&limit=200', { token: admin.apiKey });
        return res.body.mail.length === addresses.length ? res.body : null;
      },
      10_000,
      'every mail marked sent',
    );
    // Marked sent after a single attempt each: no row was handed to the mail server twice.
    expect(outbox.mail.map((m: { attempts: number }) => m.attempts)).toEqual(addresses.map(() => 1));
    expect(outbox.counts).toEqual({ queued: 0, sent: addresses.length, failed: 0 });
    const delivered = postfix.messages();
    for (const to of addresses) expect(delivered.filter((m) => m.to === to), to).toHaveLength(1);
    expect(delivered[0]!.from).toBe('docsearch <docsearch@docs.test.internal>');
    expect(delivered[0]!.text).toContain('sent this test mail from http://docs.test.internal');
    // Each send is in the audit log once, by the system.
    const audit = await api(replicas[0]!, '/api/v1/audit-events?type=mail.sent&limit=200', { token: admin.apiKey });
    expect(audit.body.events).toHaveLength(addresses.length);
    expect(new Set(audit.body.events.map((e: { target: { id: string } }) => e.target.id)).size).toBe(addresses.length);
    expect(audit.body.events[0]).toMatchObject({ via: 'system', actor: null });
  });

  it('gives up a mail the server refuses for good, at once, and records mail.failed with its answer', async () => {
    const queued = await api(replicas[0]!, '/api/v1/admin/mail/test', { token: admin.apiKey, body: { to: REFUSED_RECIPIENT } });
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    const [failed] = await waitFor(
      async () => {
        const res = await api(replicas[1]!, `/api/v1/audit-events?type=mail.failed&target=${queued.body.id}`, { token: admin.apiKey });
        return res.body.events.length > 0 ? res.body.events : null;
      },
      20_000,
      'the refused mail given up',
    );
    expect(failed).toMatchObject({ by: 'system', target: { type: 'mail', id: queued.body.id, label: REFUSED_RECIPIENT }, details: { kind: 'test', attempts: 1 } });
    expect(failed.details.error).toMatch(/^5\d\d .*no such mailbox here/);
    const row = await api(replicas[0]!, '/api/v1/admin/mail?status=failed', { token: admin.apiKey });
    expect(row.body.mail).toEqual([expect.objectContaining({ id: queued.body.id, status: 'failed', attempts: 1 })]);
  });
});

describe.skipIf(noPostfix !== null)(`mail server down${noPostfix ? ` (skipped: ${noPostfix})` : ''}`, () => {
  let daemon: Daemon;
  let postfix: Postfix | undefined;
  let port: number;
  let admin: TestUser;
  let reader: TestUser;

  beforeAll(async () => {
    port = await freePort();
    daemon = await startDaemon({ args: ['--smtp-url', `smtp://127.0.0.1:${port}`] });
    admin = await addUser(daemon, { email: 'root@example.com' });
    reader = await addUser(daemon, { email: 'reader@example.com' });
  });

  afterAll(async () => {
    await daemon?.stop();
    if (daemon) removeDir(daemon.dataDir);
    await postfix?.stop();
  });

  it('keeps the mail, shows admins why it waits, and sends it once the server is back', async () => {
    expect((await api(daemon, '/api/v1/admin/mail/test', { token: reader.apiKey, body: {} })).status).toBe(403);
    expect((await api(daemon, '/api/v1/admin/mail', { token: reader.apiKey })).status).toBe(403);
    const queued = await api(daemon, '/api/v1/admin/mail/test', { token: admin.apiKey, body: {} });
    expect(queued.status).toBe(202);
    const waiting = await waitFor(
      async () => {
        const res = await api(daemon, '/api/v1/admin/mail', { token: admin.apiKey });
        const mail = res.body.mail.find((m: { id: string }) => m.id === queued.body.id);
        return mail?.last_error ? mail : null;
      },
      30_000,
      'the failed attempt recorded',
    );
    expect(waiting).toMatchObject({ status: 'queued', attempts: 1, to: 'root@example.com' });
    expect(waiting.last_error).toMatch(/ECONNREFUSED|connect/i);
    expect(Date.parse(waiting.next_attempt_at)).toBeGreaterThan(Date.now());
    expect((await api(daemon, '/api/v1/health')).body.components.mail).toEqual({ status: 'up', configured: true });

    // Admin → Mail shows it waiting, with the mail server's answer; a reader gets "Admins only".
    const web = await loggedIn(daemon, admin);
    const page = (await web.get('/admin/mail')).text;
    const row = new RegExp(`<tr data-mail-id="${queued.body.id}">[\\s\\S]*?</tr>`).exec(page)?.[0] ?? '';
    expect(row).toContain('<strong>waiting</strong>');
    expect(row).toMatch(/ECONNREFUSED|connect/i);
    expect(page).toContain('1 waiting, 0 sent, 0 given up');
    expect((await (await loggedIn(daemon, reader)).get('/admin/mail')).status).toBe(403);

    postfix = await startPostfix({ port });
    // "Retry waiting mail now" on the page does what POST /api/v1/admin/mail/retry does.
    const retried = await web.submit('/admin/mail/retry', { _csrf: web.csrf });
    expect(retried.text).toContain('Trying 1 waiting mail now.');
    const mail = await postfix.waitFor('root@example.com');
    expect(mail.subject).toMatch(/^docsearch test mail/);
    const sent = await waitFor(async () => (await api(daemon, '/api/v1/admin/mail?status=sent', { token: admin.apiKey })).body.mail[0], 10_000, 'marked sent');
    expect(sent).toMatchObject({ id: queued.body.id, status: 'sent', attempts: 2, last_error: null });
    expect(postfix.messages()).toHaveLength(1);
  });
});
