/**
 * The mail outbox through a real MTA (Debian's postfix on loopback, delivering into a Maildir this test reads):
 * two replicas on one PostgreSQL database send each mail once, and mail queued while the mail server is down is
 * kept (its failure shown to admins) and sent once it is back; a mail that keeps failing is tried again as
 * docs/mail.md says (30 s doubling, at most an hour apart) and given up at its 12th failure, never to be sent; and
 * sent and given-up mail older than 30 days leaves the outbox when the daemon starts. Links and bodies are the
 * features' tests' business (test/mail/password-reset.test.ts, invitations); here a test mail is enough.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';
import { type Postfix, postfixUnavailable, REFUSED_RECIPIENT, startPostfix } from '../helpers/postfix.js';
import { type PgCluster, postgresUnavailable, startPostgres } from '../helpers/postgres.js';
import { loggedIn } from '../server/web-client.js';
import { withLibraryDb } from '../helpers/library-db.js';

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
    expect(failed.details.error).toMatch(/^550 5\.1\.1 .*no such mailbox here/);
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

/** The waits docs/mail.md promises after each failed attempt: 30 s, then 1, 2, 4 … minutes, at most an hour apart. */
const BACKOFF_S = [30, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600, 3600];
/** "12 failed attempts (about five hours), gives the mail up" (docs/mail.md). */
const GIVE_UP_AT = 12;
/** Between the request that causes an attempt and the test reading its outcome, and the sender's clock reading. */
const SLACK_MS = 3000;

interface WireMail {
  id: string;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
}

describe.skipIf(noPostfix !== null)(`a mail the server never takes${noPostfix ? ` (skipped: ${noPostfix})` : ''}`, () => {
  let daemon: Daemon;
  let postfix: Postfix | undefined;
  let port: number;
  let admin: TestUser;

  beforeAll(async () => {
    port = await freePort();
    daemon = await startDaemon({ args: ['--smtp-url', `smtp://127.0.0.1:${port}`] });
    admin = await addUser(daemon, { email: 'root@example.com' });
  });

  afterAll(async () => {
    await daemon?.stop();
    if (daemon) removeDir(daemon.dataDir);
    await postfix?.stop();
  });

  const mailById = async (id: string): Promise<WireMail | undefined> =>
    ((await api(daemon, '/api/v1/admin/mail?limit=200', { token: admin.apiKey })).body.mail as WireMail[]).find((m) => m.id === id);
  const retry = async (): Promise<unknown> => {
    const res = await api(daemon, '/api/v1/admin/mail/retry', { method: 'POST', token: admin.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };

  it('backs off 30 s, 1, 2 … 32 min, then an hour, gives the mail up at its 12th failure, and never sends it after', async () => {
    // Each attempt is caused by a request (the first by queueing, the others by "retry now"), so it happens within
    // [before, after]; its next attempt must then be its documented wait later.
    let before = Date.now();
    const queued = await api(daemon, '/api/v1/admin/mail/test', { token: admin.apiKey, body: { to: 'never@example.com' } });
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    const id: string = queued.body.id;
    for (let attempt = 1; attempt <= GIVE_UP_AT; attempt++) {
      if (attempt > 1) {
        before = Date.now();
        expect(await retry(), 'retry now counts the waiting mail').toEqual({ queued: 1 });
      }
      const mail = await waitFor(
        async () => {
          const m = await mailById(id);
          return m && m.attempts >= attempt ? m : null;
        },
        10_000,
        `attempt ${attempt} recorded`,
      );
      const after = Date.now();
      expect(mail.attempts, 'one attempt for each request').toBe(attempt);
      expect(mail.last_error).toMatch(/ECONNREFUSED|connect/i);
      if (attempt < GIVE_UP_AT) {
        const waitMs = BACKOFF_S[attempt - 1]! * 1000;
        expect(mail.status, `still waiting after ${attempt} failures`).toBe('queued');
        const next = Date.parse(mail.next_attempt_at!);
        expect(next, `after failure ${attempt} the next try is ${waitMs / 1000} s later (no earlier)`).toBeGreaterThanOrEqual(before + waitMs - SLACK_MS);
        expect(next, `after failure ${attempt} the next try is ${waitMs / 1000} s later (no later)`).toBeLessThanOrEqual(after + waitMs + SLACK_MS);
      } else {
        expect(mail, 'given up at the 12th failure').toMatchObject({ status: 'failed', attempts: GIVE_UP_AT, next_attempt_at: null });
      }
    }

    // The log says each deferral with its wait, then the giving up once, as an error.
    const failedLine = JSON.parse(await daemon.logLine((l) => l.includes('"event":"mail.failed"') && l.includes(id)));
    expect(failedLine).toMatchObject({ level: 50, mail_id: id, kind: 'test', attempts: GIVE_UP_AT });
    expect(failedLine.error).toMatch(/ECONNREFUSED|connect/i);
    const lines = daemon.stdout().split('\n').filter((l) => l.includes(id) && l.includes('"event":"mail.'));
    const events = lines.map((l) => JSON.parse(l) as { event: string; attempts: number; retry_in_ms?: number });
    expect(events.filter((e) => e.event === 'mail.deferred').map((e) => [e.attempts, e.retry_in_ms])).toEqual(BACKOFF_S.map((s, i) => [i + 1, s * 1000]));
    expect(events.filter((e) => e.event !== 'mail.deferred').map((e) => e.event)).toEqual(['mail.failed']);

    // The audit log holds it, by the system, with the last answer.
    const [audited, ...more] = await waitFor(
      async () => {
        const res = await api(daemon, `/api/v1/audit-events?type=mail.failed&target=${id}`, { token: admin.apiKey });
        return res.body.events.length > 0 ? res.body.events : null;
      },
      10_000,
      'mail.failed in the audit log',
    );
    expect(more).toEqual([]);
    expect(audited).toMatchObject({ by: 'system', target: { type: 'mail', id, label: 'never@example.com' }, details: { kind: 'test', attempts: GIVE_UP_AT } });
    expect(audited.details.error).toMatch(/ECONNREFUSED|connect/i);

    // Admin → Mail shows it given up after 12 tries, with nothing left to retry.
    const page = (await (await loggedIn(daemon, admin)).get('/admin/mail')).text;
    const row = new RegExp(`<tr data-mail-id="${id}">[\\s\\S]*?</tr>`).exec(page)?.[0] ?? '';
    expect(row).toContain('given up');
    expect(row).toContain(`<td class="num" data-label="Tries">${GIVE_UP_AT}</td>`);
    expect(page).toContain('0 waiting, 0 sent, 1 given up');
    expect(page).not.toContain('Retry waiting mail now');

    // A 13th "retry now" finds nothing to retry, and leaves the mail as it was.
    expect(await retry()).toEqual({ queued: 0 });
    expect(await mailById(id)).toMatchObject({ status: 'failed', attempts: GIVE_UP_AT, next_attempt_at: null });

    // The mail server comes back: "retry now" still finds nothing, and a mail queued after it is sent while the
    // given-up one is not (the sender has drained the outbox once the later mail is marked sent).
    postfix = await startPostfix({ port });
    expect(await retry()).toEqual({ queued: 0 });
    const later = await api(daemon, '/api/v1/admin/mail/test', { token: admin.apiKey, body: { to: 'later@example.com' } });
    expect(later.status, JSON.stringify(later.body)).toBe(202);
    await postfix.waitFor('later@example.com');
    await waitFor(async () => (await mailById(later.body.id))?.status === 'sent', 10_000, 'the later mail marked sent');
    expect(await mailById(id)).toMatchObject({ status: 'failed', attempts: GIVE_UP_AT, next_attempt_at: null });
    expect(postfix.messages().map((m) => m.to)).toEqual(['later@example.com']);
  });
});

const DAY = 24 * 3600_000;


describe.skipIf(noPostfix !== null)(`the outbox keeps 30 days${noPostfix ? ` (skipped: ${noPostfix})` : ''}`, () => {
  let daemon: Daemon | undefined;
  let postfix: Postfix | undefined;
  let dataDir: string | undefined;

  afterAll(async () => {
    await daemon?.stop();
    if (dataDir) removeDir(dataDir);
    await postfix?.stop();
  });

  it('drops sent and given-up mail older than 30 days as the daemon starts, keeping younger mail and queued mail', async () => {
    postfix = await startPostfix();
    const smtpUrl = postfix.url;
    daemon = await startDaemon({ args: ['--smtp-url', smtpUrl] });
    dataDir = daemon.dataDir;
    const admin = await addUser(daemon, { email: 'root@example.com' });
    const queue = async (to: string): Promise<string> => {
      const res = await api(daemon!, '/api/v1/admin/mail/test', { token: admin.apiKey, body: { to } });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      return res.body.id as string;
    };
    const outbox = async () => (await api(daemon!, '/api/v1/admin/mail?limit=200', { token: admin.apiKey })).body as { counts: Record<string, number>; mail: WireMail[] };

    const sentOld = await queue('old@example.com');
    const sentYoung = await queue('young@example.com');
    const failedOld = await queue(REFUSED_RECIPIENT);
    const failedYoung = await queue(REFUSED_RECIPIENT);
    await waitFor(
      async () => {
        const { counts } = await outbox();
        return counts.sent === 2 && counts.failed === 2;
      },
      20_000,
      'two mails sent and two given up',
    );
    // With the mail server gone, the next mail stays queued, waiting to be tried again.
    await postfix.stop();
    postfix = undefined;
    const queuedOld = await queue('waiting@example.com');
    await waitFor(async () => (await outbox()).mail.find((m) => m.id === queuedOld && m.attempts === 1), 20_000, 'the waiting mail tried once');
    await daemon.stop();

    // A month on, as it were: one mail of each state made 31 days ago, the others 29 days ago.
    const now = Date.now();
    const ages: [string, number][] = [
      [sentOld, 31],
      [failedOld, 31],
      [queuedOld, 31],
      [sentYoung, 29],
      [failedYoung, 29],
    ];
    withLibraryDb(dataDir, (db) => {
      const age = db.prepare('update mail_outbox set created_at = @at, sent_at = case when sent_at is null then null else @at end where id = @id');
      for (const [id, days] of ages) expect(age.run({ id, at: now - days * DAY }).changes, id).toBe(1);
    });

    daemon = await startDaemon({ dataDir, args: ['--smtp-url', smtpUrl] });
    // Purged at start, not an hour later: well within this wait.
    const left = await waitFor(
      async () => {
        const { mail } = await outbox();
        return mail.some((m) => m.id === sentOld || m.id === failedOld) ? null : mail;
      },
      10_000,
      'sent and given-up mail older than 30 days purged',
    );
    expect(Object.fromEntries(left.map((m) => [m.id, m.status]))).toEqual({ [sentYoung]: 'sent', [failedYoung]: 'failed', [queuedOld]: 'queued' });
  });
});
