/**
 * `docsearch backup` and `restore` of a shared-mode library: two replicas on a real PostgreSQL and a real Ceph RGW
 * behind haproxy (test/helpers/topology.ts), backed up into an s3:// repository on the same RGW while 4 clients
 * upload and 2 search through the load balancer. The restore, into a new database and prefix, is the library as of
 * the backup's moment (backup-compare.ts); a second run copies only what changed; a backup killed midway is never
 * restorable, and its lock and version tags do not outlive it; a restore killed midway leaves a library no daemon
 * serves until the restore is run again; a target that holds a library is refused.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, BIN, type Daemon, REPO, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { type Topology, startTopology, topologyUnavailable } from '../helpers/topology.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { s3Index } from '../helpers/chunk-rows.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { documents, expectIncremental, expectRestoredAsOfBackup, heldSha256s, settled, snapshotStatuses, underLoad } from './backup-compare.js';

const SKIP = topologyUnavailable();
const MINUTE = 60_000;
const PDFS = ['latex-1col.pdf', 'pandoc.pdf'].map((n) => ({ name: n, bytes: readFileSync(join(REPO, 'test/fixtures/extract', n)) }));
const REPO_BUCKET = 'backups';

describe.skipIf(SKIP !== null)(`backup and restore of a shared-mode library (PostgreSQL + RGW)${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let topo: Topology;
  let user: TestUser;
  let lb: Daemon;
  const dirs = tempDirs('docsearch-backup');
  let first: any;
  const repo = `s3://${REPO_BUCKET}/docsearch`;
  /** The backup key, named in the environment for backup (which makes it) and restore alike. */
  let keyFile: string;
  const env = () => ({ ...topo.env, DOCSEARCH_BACKUP_KEY_FILE: keyFile });
  const cli = (args: string[], extra: Record<string, string> = {}, timeoutMs = 5 * MINUTE) => runCli(args, { env: { ...env(), ...extra }, timeoutMs });
  const backup = (args: string[] = []) => cli(['backup', '--storage', topo.storage, '--to', repo, '--json', ...args]);

  /** An object of the repository bucket, or null. */
  const repoObject = async (key: string): Promise<Buffer | null> => {
    try {
      const res = await topo.rgw.client().send(new GetObjectCommand({ Bucket: REPO_BUCKET, Key: `docsearch/${key}` }));
      return Buffer.from(await res.Body!.transformToByteArray());
    } catch {
      return null;
    }
  };
  const manifest = async (id: string) => JSON.parse((await repoObject(`backups/${id}/manifest.json`))!.toString('utf8')) as { files: { path: string; key: string; size: number }[] };
  /** A backup's database snapshot, as a local file. */
  const snapshotFile = async (id: string) => {
    const dir = dirs.make('snapshot');
    writeFileSync(join(dir, 'database.sqlite'), (await repoObject(`backups/${id}/database.sqlite`))!);
    return join(dir, 'database.sqlite');
  };
  /** A new empty database and prefix to restore into. */
  const emptyTarget = async (name: string) => ({ database: await topo.pg.createDatabase(), storage: `s3://${topo.rgw.bucket}/${name}` });
  const startOn = async (t: { database: string; storage: string }) => {
    const dataDir = dirs.make('restored');
    return startDaemon({ dataDir, databaseUrl: t.database, env: topo.rgw.env(), args: ['--storage', t.storage], timeoutMs: 2 * MINUTE });
  };

  beforeAll(async () => {
    topo = await startTopology({ replicas: 2 });
    keyFile = join(dirs.make('key'), 'backup.key');
    await topo.rgw.createBucket(REPO_BUCKET);
    user = await addUser(topo.replicas[0]!.daemon);
    lb = { ...topo.replicas[0]!.daemon, url: topo.lb.url };
    const up = await uploadFiles(lb, user.apiKey, PDFS, { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
  }, 10 * MINUTE);
  afterAll(async () => {
    await topo?.stop();
    dirs.removeAll();
  });

  it('backs up into s3:// while 4 clients upload and 2 search; the restore into a new database and prefix equals the source at the backup moment', async () => {
    const readyBefore = new Set<string>();
    // Shared mode has no data dir to keep the key in: it is named, or the backup is refused before it starts.
    const keyless = await cli(['backup', '--storage', topo.storage, '--to', repo], { DOCSEARCH_BACKUP_KEY_FILE: '' });
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toMatch(/a shared-mode backup is sealed with a key you keep: name its file with --key-file/);
    const res = await underLoad(lb, user.apiKey, () => backup(), readyBefore);
    expect(res.code, res.stderr).toBe(0);
    first = JSON.parse(res.stdout);
    expect(first).toMatchObject({ based_on: null, files: { reused: 0 }, originals: { missing: [] } });
    expect(first.files.copied).toBe(first.files.total);
    expect(first.library).toMatch(/^postgres.* \+ s3:\/\//);
    expect(first.library).not.toContain(new URL(topo.databaseUrl).password || '\0');

    await settled(lb, user.apiKey);
    const target = await emptyTarget('restored');
    const restored = await cli(['restore', '--from', repo, '--storage', target.storage, '--json'], { DOCSEARCH_DATABASE_URL: target.database });
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ id: first.id, verified: true });
    // The jobs running at the backup's moment were held under the source replicas' leases: none is held in the
    // restored library, where those would have kept its daemon off them for a whole lease (two minutes).
    const targetDb = new pg.Client({ connectionString: target.database });
    await targetDb.connect();
    try {
      const held = await targetDb.query('SELECT id, state, lease_owner FROM jobs WHERE state = $1 OR lease_owner IS NOT NULL', ['running']);
      expect(held.rows).toEqual([]);
    } finally {
      await targetDb.end();
    }

    const r = await startOn(target);
    try {
      await settled(r, user.apiKey);
      const source = topo.replicas[0]!.daemon;
      await expectRestoredAsOfBackup({ daemon: source, index: s3Index(topo.storage, topo.rgw.env()) }, { daemon: r, index: s3Index(target.storage, topo.rgw.env()) }, user.apiKey, await snapshotFile(first.id), PDFS.length, readyBefore);
    } finally {
      await r.stop();
    }
    // A target that holds a library is refused, and left as it was.
    const again = await cli(['restore', '--from', repo, '--storage', target.storage], { DOCSEARCH_DATABASE_URL: target.database });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds a library/);
    const prefixTaken = await cli(['restore', '--from', repo, '--storage', target.storage], { DOCSEARCH_DATABASE_URL: await topo.pg.createDatabase() });
    expect(prefixTaken.code).toBe(1);
    expect(prefixTaken.stderr).toMatch(/already holds an index or originals/);
  }, 15 * MINUTE);

  it('an incremental run copies only new files', async () => {
    const up = await uploadFiles(lb, user.apiKey, [{ name: 'new.txt', bytes: Buffer.from('Herons wait motionless in the shallows for fish.\n') }], { query: '?wait=true' });
    expect(up.body.documents[0].status).toBe('ready');
    const res = await backup();
    expect(res.code, res.stderr).toBe(0);
    const s = JSON.parse(res.stdout);
    expect(s.based_on).toBe(first.id);
    const [before, after] = [await manifest(first.id), await manifest(s.id)];
    const shas = await heldSha256s(lb, user.apiKey);
    expectIncremental(s, before, after, shas, up.body.documents[0].sha256);
    // One object per immutable file in the repository: as many under objects/ as the two manifests name.
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await topo.rgw.client().send(new ListObjectsV2Command({ Bucket: REPO_BUCKET, Prefix: 'docsearch/objects/', ContinuationToken: token }));
      keys.push(...(page.Contents ?? []).map((o) => o.Key!.slice('docsearch/'.length)));
      token = page.NextContinuationToken;
    } while (token);
    expect(keys.sort()).toEqual([...new Set([...before.files, ...after.files].map((f) => f.key).filter((k) => k.startsWith('objects/')))].sort());
  }, 10 * MINUTE);

  it('a backup killed midway leaves nothing restore accepts, nor its lock or version tags; the next run completes', async () => {
    const killedRepo = `s3://${REPO_BUCKET}/killed`;
    const proc = spawn(process.execPath, [BIN, 'backup', '--storage', topo.storage, '--to', killedRepo, '--max-rate', '16k'], { env: { ...process.env, ...env() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const killed = await new Promise<boolean>((resolve) => {
      proc.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        if (/^index: /m.test(stderr)) setTimeout(() => proc.kill('SIGKILL'), 1000);
      });
      proc.once('exit', (_code, signal) => resolve(signal === 'SIGKILL'));
    });
    expect(killed, stderr).toBe(true);
    const target = await emptyTarget('from-killed');
    const none = await cli(['restore', '--from', killedRepo, '--storage', target.storage], { DOCSEARCH_DATABASE_URL: target.database });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/holds no complete backup/);

    // The advisory lock went with the killed process's connection: the next run takes it, and removes its tags.
    const again = await cli(['backup', '--storage', topo.storage, '--to', killedRepo, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/removed the version tags a backup that did not finish left/);
    const ok = await cli(['restore', '--from', killedRepo, '--storage', target.storage, '--json'], { DOCSEARCH_DATABASE_URL: target.database });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ id: JSON.parse(again.stdout).id, verified: true });
  }, 10 * MINUTE);

  it('a restore killed midway is not served; run again, it finishes', async () => {
    const target = await emptyTarget('half-restored');
    const proc = spawn(process.execPath, [BIN, 'restore', '--from', repo, '--storage', target.storage], { env: { ...process.env, ...env(), DOCSEARCH_DATABASE_URL: target.database }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const killed = await new Promise<boolean>((resolve) => {
      proc.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        if (/files/.test(stderr)) proc.kill('SIGKILL');
      });
      proc.once('exit', (_code, signal) => resolve(signal === 'SIGKILL'));
    });
    expect(killed, stderr).toBe(true);
    const refused = await startOn(target).then(
      async (d) => {
        await d.stop();
        return null;
      },
      (err: Error) => err,
    );
    expect(String(refused)).toMatch(/still being copied in from backup .*: run that `docsearch restore` again/);
    const other = await emptyTarget('other');
    const wrongBackup = await cli(['restore', '--from', `s3://${REPO_BUCKET}/killed`, '--storage', other.storage], { DOCSEARCH_DATABASE_URL: target.database });
    expect(wrongBackup.code).toBe(1);
    expect(wrongBackup.stderr).toMatch(/holds an unfinished restore of backup/);
    const resumed = await cli(['restore', '--from', repo, '--storage', target.storage, '--json'], { DOCSEARCH_DATABASE_URL: target.database });
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = JSON.parse(resumed.stdout) as { id: string; verified: boolean };
    expect(summary.verified).toBe(true);
    const d = await startOn(target);
    try {
      // Whole: every document of the backup it restored (out of the trash), no fewer.
      const got = await documents(d, user.apiKey);
      expect(got.size).toBeGreaterThan(PDFS.length);
      expect(new Set(got.keys())).toEqual(new Set(snapshotStatuses(await snapshotFile(summary.id), { outOfTrash: true }).keys()));
    } finally {
      await d.stop();
    }
  }, 10 * MINUTE);
});
