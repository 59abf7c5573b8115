/**
 * The restore drill of docs/operations.md with nothing but the backup repository and the backup key (#61 item 13): a
 * library whose account has an authenticator app and whose WebDAV source (Apache mod_dav) holds a password is backed
 * up, its data directory lost; `restore` into a new one brings back its secrets key (wrapped under the backup key in
 * the manifest), so a code from that app signs in and the source syncs with the credentials it had. The same after
 * `migrate` of the restored library into PostgreSQL + S3 (Ceph RGW). A start refused for a missing key writes none.
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Apache, apacheUnavailable, startApache } from '../helpers/apache.js';
import { addUser, api, type Daemon, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { type PgCluster, postgresUnavailable, startPostgres } from '../helpers/postgres.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { WebClient } from '../server/web-client.js';
import { enrolTotp, totpCode } from '../auth/two-factor/totp.js';

const MINUTE = 60_000;
const SKIP = apacheUnavailable() ?? postgresUnavailable() ?? rgwUnavailable();

describe.skipIf(SKIP !== null)(`the restore drill keeps second factors and source credentials${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const dirs = tempDirs('docsearch-restore-drill');
  let apache: Apache;
  let pg: PgCluster;
  let rgw: Rgw;
  let user: TestUser;
  let secret: string;
  let projectId: string;
  let sourceId: string;
  /** What the operator kept: the repository and a copy of the backup key, apart from the data directory. */
  let repo: string;
  let keptKey: string;
  let restored: string;
  let databaseUrl: string;
  const storage = () => `s3://${rgw.bucket}/drill`;
  const davDocs = () => join(apache.davDir, 'drill');
  const write = (name: string, text: string) => {
    writeFileSync(join(davDocs(), name), text);
    apache.own(join(davDocs(), name));
  };

  beforeAll(async () => {
    [apache, pg, rgw] = await Promise.all([startApache(), startPostgres(), startRgw()]);
    databaseUrl = await pg.createDatabase();
    rmSync(davDocs(), { recursive: true, force: true });
    mkdirSync(davDocs());
    apache.own(davDocs());
    write('quokka.txt', 'The quokka smiles at every visitor of Rottnest Island.');

    const d = await startDaemon({ args: ['--sources-allow-private'] });
    try {
      user = await addUser(d);
      const web = new WebClient(d);
      expect((await web.login(user.email, user.password)).status).toBe(302);
      ({ secret } = await enrolTotp(web));
      const client = new SourceClient(d, user.apiKey);
      projectId = await client.project('drill');
      const source = await client.add(projectId, { kind: 'webdav', url: `${apache.davUrl}/drill/`, every: '1d', options: { username: apache.davUser.name, password: apache.davUser.password } });
      sourceId = source.id;
      const first = await client.sync(projectId, sourceId, { timeoutMs: 2 * MINUTE });
      expect(first.status, JSON.stringify(first)).toBe('active');
      // Ingested before the backup: a backup refuses a chunk index that changes under it (run50: the first chunks
      // written while it ran).
      expect([...(await client.settled(projectId, sourceId, 1)).keys()]).toEqual(['quokka.txt']);

      repo = dirs.make('repo');
      const backup = await runCli(['backup', '--data-dir', d.dataDir, '--to', repo, '--json'], { timeoutMs: 4 * MINUTE });
      expect(backup.code, backup.stderr).toBe(0);
      expect(JSON.parse(backup.stdout).secrets_key_id).toMatch(/^[A-Za-z0-9_-]{16}$/);
      keptKey = join(dirs.make('kept'), 'backup.key');
      copyFileSync(join(d.dataDir, 'backup.key'), keptKey);
    } finally {
      await d.stop();
      // The machine is lost: its data directory (secrets.key with it) is gone.
      rmSync(d.dataDir, { recursive: true, force: true });
    }

    restored = join(dirs.make('restored'), 'data');
    const back = await runCli(['restore', '--from', repo, '--to', restored, '--key-file', keptKey, '--json'], { timeoutMs: 4 * MINUTE });
    expect(back.code, back.stderr).toBe(0);
    expect(back.stderr).toContain("the library's secrets key (id");
    expect(JSON.parse(back.stdout).secrets_key_id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    // Moved on into shared mode before anyone signs in to either (a code is taken once per library).
    const moved = await runCli(['migrate', '--from', restored, '--to-database', databaseUrl, '--to-storage', storage(), '--json'], { env: rgw.env(), timeoutMs: 4 * MINUTE });
    expect(moved.code, moved.stderr).toBe(0);
    expect(JSON.parse(moved.stdout).secrets_key_id).toBe(JSON.parse(back.stdout).secrets_key_id);
  }, 10 * MINUTE);
  afterAll(async () => {
    await apache?.stop();
    await rgw?.stop();
    await pg?.destroy();
    dirs.removeAll();
  });

  /** A code from the app set up before the backup signs in; the source syncs a new file with its old password. */
  async function expectSecretsOpen(d: Daemon, note: string): Promise<void> {
    const web = new WebClient(d);
    // The password alone leads to the second step.
    expect((await web.login(user.email, user.password)).status).toBe(303);
    await web.get('/login/verify');
    const verified = await web.post('/login/verify', { _csrf: web.csrf, code: totpCode(secret, 1), return_to: '' });
    expect(verified.status, verified.text.slice(0, 400)).toBe(303);
    write(`${note}.txt`, `The ${note} numbat digs for termites.`);
    const client = new SourceClient(d, user.apiKey);
    const s = await client.sync(projectId, sourceId, { timeoutMs: 2 * MINUTE });
    expect(s.status, JSON.stringify(s)).toBe('active');
    expect(s.secrets_to_reenter).toEqual([]);
    expect([...(await client.documents(projectId, sourceId)).keys()]).toContain(`${note}.txt`);
  }

  it('restored into a new data directory: the TOTP code signs in, the WebDAV source syncs with its credentials', async () => {
    const d = await startDaemon({ dataDir: restored, args: ['--sources-allow-private'] });
    try {
      await expectSecretsOpen(d, 'restored');
    } finally {
      await d.stop();
    }
    // Without its key the library does not start, and the refused start leaves no new key in the way.
    renameSync(join(restored, 'secrets.key'), join(restored, 'secrets.key.aside'));
    const refused = await startDaemon({ dataDir: restored }).then(
      (started) => started.stop().then(() => 'started'),
      (err: Error) => err.message,
    );
    expect(refused).toContain('there is no secrets key at');
    expect(existsSync(join(restored, 'secrets.key'))).toBe(false);
  }, 6 * MINUTE);

  it('migrated on into PostgreSQL + S3: the same', async () => {
    const d = await startDaemon({ databaseUrl, args: ['--storage', storage(), '--sources-allow-private'], env: rgw.env(), timeoutMs: MINUTE });
    try {
      await expectSecretsOpen(d, 'migrated');
      // The copy's audit log says where it came from, by the operator.
      const moved = await api(d, '/api/v1/audit-events?type=migrate.completed', { token: user.apiKey });
      expect(moved.body.events.map((e: { by: string; details: { from: string } }) => [e.by, e.details.from])).toEqual([['operator', restored]]);
    } finally {
      await d.stop();
    }
    // A replica without the key object is refused, and writes none into the shared prefix.
    const key = { Bucket: rgw.bucket, Key: 'drill/secrets.key' };
    await rgw.client().send(new DeleteObjectCommand(key));
    const refused = await startDaemon({ databaseUrl, args: ['--storage', storage()], env: rgw.env(), timeoutMs: MINUTE }).then(
      (started) => started.stop().then(() => 'started'),
      (err: Error) => err.message,
    );
    expect(refused).toContain('there is no secrets key at');
    expect(await rgw.client().send(new HeadObjectCommand(key)).then(() => 'there', () => 'absent')).toBe('absent');
  }, 6 * MINUTE);
});
