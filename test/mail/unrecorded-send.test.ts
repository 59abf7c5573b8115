/**
 * A mail the mail server took while the library's database refused to record it as sent (an outage, a full disk):
 * docsearch keeps trying to record it and, once the database answers again, has it as sent after one attempt, never
 * due again. Before, the refusal counted as a failed attempt, and the mail, already delivered, went out again 30 s
 * later. Real postfix on loopback; the database's refusal is a trigger in the daemon's own SQLite file that aborts
 * the update marking a mail sent, as a full disk or a lost connection would, and is dropped to end the outage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { withLibraryDb } from '../helpers/library-db.js';
import { type Postfix, postfixUnavailable, startPostfix } from '../helpers/postfix.js';

const noPostfix = postfixUnavailable();

interface WireMail {
  id: string;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  last_error: string | null;
}

describe.skipIf(noPostfix !== null)(`a sent mail the database cannot record yet${noPostfix ? ` (skipped: ${noPostfix})` : ''}`, () => {
  let daemon: Daemon;
  let postfix: Postfix;
  let admin: TestUser;

  beforeAll(async () => {
    postfix = await startPostfix();
    daemon = await startDaemon({ args: ['--smtp-url', postfix.url] });
    admin = await addUser(daemon, { email: 'root@example.com' });
  });

  afterAll(async () => {
    await daemon?.stop();
    if (daemon) removeDir(daemon.dataDir);
    await postfix?.stop();
  });

  const mailById = async (id: string): Promise<WireMail | undefined> =>
    ((await api(daemon, '/api/v1/admin/mail', { token: admin.apiKey })).body as { mail: WireMail[] }).mail.find((m) => m.id === id);

  it('is recorded as sent once the database answers, and is not sent again', async () => {
    withLibraryDb(daemon.dataDir, (db) =>
      db.exec(`CREATE TRIGGER outage BEFORE UPDATE OF status ON mail_outbox WHEN NEW.status = 'sent' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`),
    );
    const queued = await api(daemon, '/api/v1/admin/mail/test', { token: admin.apiKey, body: {} });
    expect(queued.status).toBe(202);
    const id = (queued.body as { id: string }).id;
    await postfix.waitFor('root@example.com');
    // Its log tells what the daemon made of the refusal: a mail it could not record yet, or (before) a failed attempt.
    const logged = await waitFor(
      () => daemon.stdout().split('\n').find((l) => l.includes(id) && /"event":"mail\.(unrecorded|deferred)"/.test(l)),
      15_000,
      "the daemon's answer to the refusal",
    );
    expect(logged).toContain('"event":"mail.unrecorded"');
    // Not a failed attempt: no error shown to admins, nothing due in 30 s.
    expect(await mailById(id)).toMatchObject({ status: 'queued', attempts: 0, last_error: null });

    withLibraryDb(daemon.dataDir, (db) => db.exec('DROP TRIGGER outage'));
    const sent = await waitFor(async () => ((await mailById(id))?.status === 'sent' ? mailById(id) : null), 15_000, 'the mail recorded as sent');
    expect(sent).toMatchObject({ status: 'sent', attempts: 1, last_error: null });
    expect(postfix.messages()).toHaveLength(1);
  });
});
