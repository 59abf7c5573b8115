/**
 * What `docsearch migrate` says when it cannot reach one side (docs/operations.md, "Backup and restore"; `backup` and
 * `restore` in shared mode alike, for a wrong password): a wrong database password, a
 * database host nobody answers on, a database that does not exist, storage keys the bucket refuses. Each is one line
 * naming the side and where it is (the database URL once, its password masked), exit 1, and no secret in the output:
 * neither the password nor the S3 secret key; a database that goes away midway is named, and the same command goes
 * on once it is back. PostgreSQL here checks passwords (SCRAM) for the library's role.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { type PgCluster, postgresUnavailable, startPostgres } from '../helpers/postgres.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const SKIP = postgresUnavailable() ?? rgwUnavailable();
const PASSWORD = 'Right-Secret-4242';
const WRONG = 'Wrong-Secret-1717';

/** How often `needle` occurs in `text`. */
const count = (text: string, needle: string) => text.split(needle).length - 1;

describe.skipIf(SKIP !== null)(`migrate, backup and restore say in one line which side they cannot reach, at the start or midway, no secret shown${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const dirs = tempDirs('docsearch-connection-refusals');
  let cluster: PgCluster;
  let rgw: Rgw;
  let library: string;
  let database: (password: string, name?: string) => string;
  const migrate = (args: string[], env: Record<string, string> = rgw.env()) => runCli(['migrate', '--from', library, ...args], { env, timeoutMs: 120_000 });
  /** The refusal: exit 1, one error line and its hint, no secret. */
  const refused = (res: { code: number | null; stderr: string; stdout: string }) => {
    expect(res.code, res.stderr).toBe(1);
    const out = res.stdout + res.stderr;
    for (const secret of [PASSWORD, WRONG, rgw.secretAccessKey]) expect(out).not.toContain(secret);
    expect(res.stderr.split('\n').filter((l) => l.startsWith('error: ')), res.stderr).toHaveLength(1);
    return res.stderr;
  };

  beforeAll(async () => {
    [cluster, rgw] = await Promise.all([startPostgres(), startRgw()]);
    // The library's role signs in with a password; the administrator's stays trusted (the helpers use it).
    const conf = dirs.make('hba');
    chmodSync(conf, 0o755);
    const hba = join(conf, 'pg_hba.conf');
    writeFileSync(hba, ['local all all trust', 'host all postgres 127.0.0.1/32 trust', 'host all all 127.0.0.1/32 scram-sha-256', ''].join('\n'), { mode: 0o644 });
    const admin = new pg.Client({ connectionString: cluster.adminUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE librarian LOGIN PASSWORD '${PASSWORD}'`);
      await admin.query('CREATE DATABASE shelf OWNER librarian');
      await admin.query(`ALTER SYSTEM SET hba_file = '${hba}'`);
    } finally {
      await admin.end();
    }
    await cluster.stop();
    await cluster.start();
    database = (password, name = 'shelf') => `postgres://librarian:${password}@127.0.0.1:${cluster.port}/${name}`;
    library = join(dirs.make('library'), 'data');
    const made = await runCli(['users', 'add', 'ann@example.com', '--data-dir', library, '--init'], { input: 'a long enough password\n' });
    expect(made.code, made.stderr).toBe(0);
  }, 300_000);
  afterAll(async () => {
    await rgw?.stop();
    await cluster?.destroy();
    dirs.removeAll();
  });

  it('a wrong database password', async () => {
    const url = `postgres://librarian:[redacted]@127.0.0.1:${cluster.port}/shelf`;
    const stderr = refused(await migrate(['--to-database', database(WRONG), '--to-storage', `s3://${rgw.bucket}/wrong-password`]));
    expect(stderr).toContain(`error: could not open the target database ${url}: password authentication failed for user "librarian"\nhint: check the user and password in --to-database`);
    expect(count(stderr, url), 'the URL is named once').toBe(1);
  });

  it('a database host nobody answers on', async () => {
    const port = await freePort();
    const url = `postgres://librarian:[redacted]@127.0.0.1:${port}/shelf`;
    const stderr = refused(await migrate(['--to-database', `postgres://librarian:${PASSWORD}@127.0.0.1:${port}/shelf`, '--to-storage', `s3://${rgw.bucket}/unreachable`]));
    expect(stderr).toContain(`error: could not open the target database ${url}: connect ECONNREFUSED 127.0.0.1:${port}\nhint: check that PostgreSQL runs and listens there`);
    expect(count(stderr, url), 'the URL is named once').toBe(1);
  });

  it('a database that does not exist', async () => {
    const url = `postgres://librarian:[redacted]@127.0.0.1:${cluster.port}/no_such_shelf`;
    const stderr = refused(await migrate(['--to-database', database(PASSWORD, 'no_such_shelf'), '--to-storage', `s3://${rgw.bucket}/no-database`]));
    expect(stderr).toContain(`error: could not open the target database ${url}: database "no_such_shelf" does not exist\nhint: create the database first`);
    expect(count(stderr, url), 'the URL is named once').toBe(1);
  });

  it('storage keys the bucket refuses: said so, not "UnknownError"; no schema is made in the target database', async () => {
    const stderr = refused(await migrate(['--to-database', database(PASSWORD), '--to-storage', `s3://${rgw.bucket}/wrong-keys`], { ...rgw.env(), AWS_SECRET_ACCESS_KEY: WRONG }));
    expect(stderr).toContain(`error: could not use the target storage s3://${rgw.bucket}/wrong-keys: the store refused the access keys (`);
    expect(stderr).toContain('hint: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
    const db = new pg.Client({ connectionString: database(PASSWORD) });
    await db.connect();
    try {
      expect((await db.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'")).rows[0].n).toBe(0);
    } finally {
      await db.end();
    }
  });

  it('a source database with a wrong password: named as the source, with its own option', async () => {
    const url = `postgres://librarian:[redacted]@127.0.0.1:${cluster.port}/shelf`;
    const res = await runCli(['migrate', '--from-database', database(WRONG), '--from-storage', `s3://${rgw.bucket}/from`, '--to', join(dirs.make('to'), 'data')], { env: rgw.env(), timeoutMs: 120_000 });
    const stderr = refused(res);
    expect(stderr).toContain(`error: could not open the source database ${url}: password authentication failed for user "librarian"\nhint: check the user and password in --from-database`);
    expect(count(stderr, url), 'the URL is named once').toBe(1);
  });

  it('backup and restore in shared mode: a wrong database password, the URL named once', async () => {
    const url = `postgres://librarian:[redacted]@127.0.0.1:${cluster.port}/shelf`;
    const key = join(dirs.make('key'), 'backup.key');
    const backup = await runCli(['backup', '--database', database(WRONG), '--storage', `s3://${rgw.bucket}/library`, '--to', join(dirs.make('repo'), 'repo'), '--key-file', key], { env: rgw.env(), timeoutMs: 120_000 });
    const said = refused(backup);
    expect(said).toContain(`error: could not open the database ${url}: password authentication failed for user "librarian"\nhint: check the user and password in --database`);
    expect(count(said, url), 'the URL is named once').toBe(1);

    const repo = join(dirs.make('repo'), 'repo');
    const taken = await runCli(['backup', '--data-dir', library, '--to', repo], { timeoutMs: 120_000 });
    expect(taken.code, taken.stderr).toBe(0);
    const restore = await runCli(['restore', '--from', repo, '--key-file', join(library, 'backup.key'), '--database', database(WRONG), '--storage', `s3://${rgw.bucket}/restored`], { env: rgw.env(), timeoutMs: 120_000 });
    const told = refused(restore);
    expect(told).toContain(`error: could not open the database ${url}: password authentication failed for user "librarian"\nhint: check the user and password in --database`);
    expect(count(told, url), 'the URL is named once').toBe(1);
  });

  it('restore with storage keys the bucket refuses: of the repository, and of the target prefix, said so', async () => {
    const wrongKeys = { ...rgw.env(), AWS_SECRET_ACCESS_KEY: WRONG };
    const fromS3 = refused(await runCli(['restore', '--from', `s3://${rgw.bucket}/backups`, '--list'], { env: wrongKeys, timeoutMs: 120_000 }));
    expect(fromS3).toContain(`error: could not use the repository s3://${rgw.bucket}/backups: the store refused the access keys (`);
    expect(fromS3).toContain('hint: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');

    const repo = join(dirs.make('repo'), 'repo');
    const taken = await runCli(['backup', '--data-dir', library, '--to', repo], { timeoutMs: 120_000 });
    expect(taken.code, taken.stderr).toBe(0);
    const target = await cluster.createDatabase();
    const intoS3 = refused(await runCli(['restore', '--from', repo, '--key-file', join(library, 'backup.key'), '--database', target, '--storage', `s3://${rgw.bucket}/restored-keys`], { env: wrongKeys, timeoutMs: 120_000 }));
    expect(intoS3).toContain(`error: could not use the storage s3://${rgw.bucket}/restored-keys: the store refused the access keys (`);
  });

  it('a database that goes away midway: the copy says it stopped, naming the database, and the same command goes on once it is back', async () => {
    const url = await cluster.createDatabase();
    const name = new URL(url).pathname.slice(1);
    const copied = join(dirs.make('in-postgres'), 'data');
    const first = await runCli(['migrate', '--from', library, '--to', copied, '--to-database', url], { timeoutMs: 120_000 });
    expect(first.code, first.stderr).toBe(0);
    // Another session holds the documents table: the copy out of it waits there, midway, every run.
    const holder = new pg.Client({ connectionString: url });
    holder.on('error', () => undefined); // its session ends with the server
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE documents IN ACCESS EXCLUSIVE MODE');
    const target = join(dirs.make('out-of-postgres'), 'data');
    const args = ['migrate', '--from', copied, '--from-database', url, '--to', target];
    const running = runCli(args, { timeoutMs: 120_000 });
    const admin = new pg.Client({ connectionString: cluster.adminUrl });
    await admin.connect();
    try {
      await vi.waitFor(
        async () => expect((await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [name])).rows[0].n).toBeGreaterThan(0),
        { timeout: 60_000, interval: 100 },
      );
    } finally {
      await admin.end();
    }
    await cluster.stop();
    const res = await running;
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`error: the copy stopped midway: the connection to the source database ${url} was lost (`);
    expect(res.stderr).toContain('hint: the target keeps what was copied: run the same command again once the database answers, and it goes on where it stopped');
    await cluster.start();
    const again = await runCli(args, { timeoutMs: 120_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('resuming the copy of');
    expect(again.stderr).toContain('verified: the target holds the same rows, originals and chunks as the source');
  });
});
