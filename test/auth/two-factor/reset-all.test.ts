/**
 * A library whose secrets key is lost (docs/security.md "The secrets key", docs/operations.md "Backup and restore"):
 * the daemon refuses to start, makes no key and names `docsearch users reset-2fa --all`; that command removes every
 * account's authenticator app, recovery codes and passkeys (and the record of the lost key), after which the daemon
 * starts with a new key, people sign in with their passwords alone and set an app up again, a source asks for its
 * credentials again (`secrets_to_reenter`) and works once they are entered, and mail sealed under the lost key is
 * given up. One real daemon, stopped and started on the same data directory; the source is a WebDAV folder on
 * Apache (skipped, with the reason, where Apache is not installed).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Apache, apacheUnavailable, startApache } from '../../helpers/apache.js';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../../helpers/daemon.js';
import { waitFor } from '../../helpers/eventually.js';
import { freePort } from '../../helpers/ports.js';
import { registrationResponse } from '../../helpers/soft-passkey.js';
import { SourceClient } from '../../helpers/sources.js';
import { WebClient } from '../../server/web-client.js';
import { enrolTotp } from './totp.js';
import { withLibraryDb } from '../../helpers/library-db.js';

const MINUTE = 60_000;
const noApache = apacheUnavailable();

const count = (dataDir: string, table: string) => withLibraryDb(dataDir, (db) => Number((db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n));
const recordedKeyId = (dataDir: string) => withLibraryDb(dataDir, (db) => (db.prepare("select value from settings where key = 'secrets_key_id'").get() as { value: string } | undefined)?.value ?? null);

/** Signs in with the password: 302 is signed in, 303 to /login/verify is the second step. */
async function passwordStep(d: Daemon, user: TestUser): Promise<{ web: WebClient; status: number; location: string | null }> {
  const web = new WebClient(d);
  const res = await web.login(user.email, user.password);
  return { web, status: res.status, location: res.location };
}

describe(`users reset-2fa --all, for a library whose secrets key is lost${noApache ? ` (its source part skipped: ${noApache})` : ''}`, () => {
  let apache: Apache | undefined;
  beforeAll(async () => {
    if (!noApache) apache = await startApache();
  });
  afterAll(async () => {
    await apache?.stop();
  });

  it('lets the daemon start again: passwords alone sign in, a source asks for its credentials, sealed mail is given up', async () => {
    const port = await freePort();
    const publicUrl = `http://localhost:${port}`;
    // A mail server that never answers: the test mail stays queued, sealed under the key.
    const smtpPort = await freePort();
    const args = ['--port', String(port), '--public-url', publicUrl, '--smtp-url', `smtp://127.0.0.1:${smtpPort}`, '--sources-allow-private'];
    const d = await startDaemon({ args });
    const dataDir = d.dataDir;
    const keyFile = join(dataDir, 'secrets.key');
    let again: Daemon | undefined;
    try {
      const admin = await addUser(d, { email: 'admin@example.com' }); // the first account: the admin, no second factor
      const alice = await addUser(d, { email: 'alice@example.com' });
      const bob = await addUser(d, { email: 'bob@example.com' });

      // Alice: an authenticator app (with its recovery codes) and a passkey; Bob: an authenticator app.
      const aliceWeb = new WebClient(d);
      expect((await aliceWeb.login(alice.email, alice.password)).status).toBe(302);
      await enrolTotp(aliceWeb);
      await aliceWeb.get('/settings/security');
      const postJson = async (path: string, body: unknown) => {
        const cookie = [...aliceWeb.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
        const res = await fetch(d.url + path, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': aliceWeb.csrf, cookie }, body: JSON.stringify(body) });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      const options = await postJson('/settings/security/passkeys/options', {});
      expect(options.status, JSON.stringify(options.body)).toBe(200);
      const added = await postJson('/settings/security/passkeys', { response: registrationResponse(options.body as never, publicUrl), name: 'Laptop', alone: false });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      const bobWeb = new WebClient(d);
      expect((await bobWeb.login(bob.email, bob.password)).status).toBe(302);
      await enrolTotp(bobWeb);
      for (const user of [alice, bob]) expect(await passwordStep(d, user), user.email).toMatchObject({ status: 303, location: '/login/verify' });
      expect([count(dataDir, 'totp_secrets'), count(dataDir, 'recovery_codes'), count(dataDir, 'passkeys')]).toEqual([2, 20, 1]);

      // A source whose password is sealed under the key, that synced once.
      const sources = new SourceClient(d, admin.apiKey);
      let source: { project: string; id: string } | undefined;
      if (apache) {
        const folder = join(apache.davDir, 'reset-all');
        mkdirSync(folder, { recursive: true });
        writeFileSync(join(folder, 'note.txt'), 'A note behind basic authentication about lapwings.');
        const project = await sources.project('behind a password');
        const made = await sources.add(project, { kind: 'webdav', url: `${apache.davUrl}/reset-all/`, every: '1h', options: { username: apache.davUser.name, password: apache.davUser.password } });
        expect(made).toMatchObject({ secrets: ['password'], secrets_to_reenter: [] });
        expect((await sources.passAfter(project, made.id, 0)).status).toBe('active');
        await sources.settled(project, made.id, 1);
        source = { project, id: made.id };
      }

      // A mail waiting to be sent, its text sealed under the key.
      const queued = await api(d, '/api/v1/admin/mail/test', { token: admin.apiKey, body: {} });
      expect(queued.status, JSON.stringify(queued.body)).toBe(202);

      expect(await d.stop()).toBe(0);
      const lostKey = readFileSync(keyFile, 'utf8');
      const lostKeyId = recordedKeyId(dataDir);
      expect(lostKeyId).toMatch(/\S/);
      rmSync(keyFile);

      // Without its key the library does not start, makes no key, and says what to do.
      const refused = await startDaemon({ dataDir, args }).then(
        async (started) => `started (exit ${await started.stop()})`,
        (err: Error) => err.message,
      );
      expect(refused).toMatch(/^daemon exited with [1-9]\d* before listening/);
      expect(refused).toContain(`there is no secrets key at ${dataDir}/secrets.key`);
      expect(refused).toContain('`docsearch users reset-2fa --all` removes every authenticator app (recovery codes and passkeys go too)');
      expect(existsSync(keyFile)).toBe(false);
      expect(recordedKeyId(dataDir)).toBe(lostKeyId);

      const reset = await runCli(['users', 'reset-2fa', '--all', '--yes', '--data-dir', dataDir], { env: d.env });
      expect(reset.code, reset.stderr).toBe(0);
      expect(reset.stderr).toContain(`reset ${alice.email}: removed authenticator app, 10 recovery codes, 1 passkey;`);
      expect(reset.stderr).toContain(`reset ${bob.email}: removed authenticator app, 10 recovery codes;`);
      expect(reset.stderr).not.toContain(admin.email);
      expect([count(dataDir, 'totp_secrets'), count(dataDir, 'recovery_codes'), count(dataDir, 'passkeys')]).toEqual([0, 0, 0]);
      expect(recordedKeyId(dataDir)).toBeNull();

      // Now it starts, with a new key of its own.
      again = await startDaemon({ dataDir, args });
      const d2 = again;
      expect(existsSync(keyFile)).toBe(true);
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      expect(readFileSync(keyFile, 'utf8')).not.toBe(lostKey);
      expect(recordedKeyId(dataDir)).not.toBe(lostKeyId);

      // Passwords alone sign in (no second step), and an authenticator app can be set up again under the new key.
      for (const user of [alice, bob]) expect(await passwordStep(d2, user), user.email).toMatchObject({ status: 302 });
      await enrolTotp((await passwordStep(d2, alice)).web);
      expect(await passwordStep(d2, alice)).toMatchObject({ status: 303, location: '/login/verify' });
      expect(await passwordStep(d2, bob)).toMatchObject({ status: 302 });

      if (apache && source) {
        // The source asks for its password again; a pass fails saying so, until it is entered.
        const sources2 = new SourceClient(d2, admin.apiKey);
        expect((await sources2.get(source.project, source.id)).secrets_to_reenter).toEqual(['password']);
        const failed = await sources2.sync(source.project, source.id);
        expect(failed.status).toBe('error');
        expect(failed.error).toMatch(/credentials cannot be read .*enter them again \(password\)/);
        const entered = await api(d2, `/api/v1/projects/${source.project}/sources/${source.id}`, {
          method: 'PATCH',
          token: admin.apiKey,
          body: { options: { username: apache.davUser.name, password: apache.davUser.password } },
        });
        expect(entered.status, JSON.stringify(entered.body)).toBe(200);
        expect(entered.body).toMatchObject({ secrets: ['password'], secrets_to_reenter: [] });
        const synced = await sources2.sync(source.project, source.id);
        expect(synced.status).toBe('active');
        expect(synced.last_result).toMatchObject({ unchanged: 1, failed: 0 });
      }

      // The mail sealed under the lost key is given up when it is tried, not sent or kept waiting.
      expect((await api(d2, '/api/v1/admin/mail/retry', { method: 'POST', token: admin.apiKey })).status).toBe(200);
      const given = await waitFor(
        async () => ((await api(d2, '/api/v1/admin/mail?limit=200', { token: admin.apiKey })).body.mail as { id: string; status: string; last_error: string | null }[]).find((m) => m.id === queued.body.id && m.status !== 'queued'),
        30_000,
        'the sealed mail tried again',
      );
      expect(given).toMatchObject({ status: 'failed' });
      expect(given.last_error).toMatch(/sealed under another secrets key/);
    } finally {
      if (again) expect(await again.stop()).toBe(0);
      await d.stop();
      removeDir(dataDir);
    }
  }, 5 * MINUTE);
});
