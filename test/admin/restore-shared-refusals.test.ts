/**
 * What `docsearch restore` into shared mode refuses (docs/operations.md, "Restore"): it "takes an empty database (its
 * schema is made) and an empty prefix"; a database that holds a library, or a prefix that holds an index or
 * originals, is refused with "nothing was changed" — and so is `migrate` into such a prefix (docs/migrate.md) — read
 * back here: the database as pg_dump writes it (no schema made in an empty one), and the objects under the prefix;
 * a prefix holding another library's secrets key is refused before anything is copied into it. The backup is of a library made by `users add --init`, taken by `docsearch backup` with no daemon running.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { PG_BIN, type PgCluster, postgresUnavailable, startPostgres } from '../helpers/postgres.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const SKIP = postgresUnavailable() ?? rgwUnavailable();
const pgClient = pg.Client;

describe.skipIf(SKIP !== null)(`restore into shared mode refuses a target that is not empty, and leaves it as it was${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const dirs = tempDirs('docsearch-restore-shared-refusals');
  let pg: PgCluster;
  let rgw: Rgw;
  let repo: string;
  let keyFile: string;
  let library: string;
  let secretsKey: string;
  const putKey = (prefix: string, text: string) => rgw.client().send(new PutObjectCommand({ Bucket: rgw.bucket, Key: `${prefix}/secrets.key`, Body: text }));

  /** The database as pg_dump writes it, less the random key of its `\restrict` lines. */
  const dump = (url: string) => {
    const res = spawnSync(join(PG_BIN, 'pg_dump'), ['--no-owner', '--no-privileges', url], { encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`pg_dump: ${res.stderr}`);
    return res.stdout.replace(/^\\(un)?restrict .*$/gm, '');
  };
  const objects = async (prefix: string) =>
    ((await rgw.client().send(new ListObjectsV2Command({ Bucket: rgw.bucket, Prefix: `${prefix}/` }))).Contents ?? []).map((o) => [o.Key, o.ETag, o.Size]);
  const restore = (database: string, prefix: string) =>
    runCli(['restore', '--from', repo, '--key-file', keyFile, '--database', database, '--storage', `s3://${rgw.bucket}/${prefix}`], { env: rgw.env(), timeoutMs: 240_000 });

  beforeAll(async () => {
    [pg, rgw] = await Promise.all([startPostgres(), startRgw()]);
    library = join(dirs.make('library'), 'data');
    const made = await runCli(['users', 'add', 'ann@example.com', '--data-dir', library, '--init'], { input: 'a long enough password\n' });
    expect(made.code, made.stderr).toBe(0);
    // The key a daemon would have made: the backup carries it.
    secretsKey = `${randomBytes(32).toString('base64url')}\n`;
    writeFileSync(join(library, 'secrets.key'), secretsKey, { mode: 0o600 });
    repo = dirs.make('repo');
    const backup = await runCli(['backup', '--data-dir', library, '--to', repo], { timeoutMs: 240_000 });
    expect(backup.code, backup.stderr).toBe(0);
    keyFile = join(library, 'backup.key');
  }, 300_000);
  afterAll(async () => {
    await rgw?.stop();
    await pg?.destroy();
    dirs.removeAll();
  });

  it('an empty database with a prefix that holds an original: refused before the schema is made', async () => {
    const database = await pg.createDatabase();
    const sha = createHash('sha256').update('an original left under the prefix\n').digest('hex');
    await rgw.client().send(new PutObjectCommand({ Bucket: rgw.bucket, Key: `taken/files/${sha.slice(0, 2)}/${sha}`, Body: 'an original left under the prefix\n' }));
    const [before, stored] = [dump(database), await objects('taken')];
    const res = await restore(database, 'taken');
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`already holds an index or originals (files/${sha.slice(0, 2)}/${sha})`);
    expect(res.stderr).toContain('nothing was changed');
    expect(dump(database), 'the empty database was left empty').toBe(before);
    expect(await objects('taken')).toEqual(stored);
  });

  it('migrate (docs/migrate.md: storage that already has an index or originals is refused and left as is): the same, before the schema is made', async () => {
    const database = await pg.createDatabase();
    const [before, stored] = [dump(database), await objects('taken')];
    expect(stored.length, 'the original test 1 left under the prefix').toBe(1);
    const res = await runCli(['migrate', '--from', library, '--to-database', database, '--to-storage', `s3://${rgw.bucket}/taken`], { env: rgw.env(), timeoutMs: 240_000 });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toMatch(/error: the target storage .* already holds an index or originals \(files\//);
    expect(res.stderr).toContain('nothing was changed');
    expect(dump(database), 'the empty database was left empty').toBe(before);
    expect(await objects('taken')).toEqual(stored);
  });

  it('a database that holds a library: refused, its rows and the new prefix untouched; an interrupted restore into it is finished when run again', async () => {
    const database = await pg.createDatabase();
    const first = await restore(database, 'first');
    expect(first.code, first.stderr).toBe(0);
    const [before, stored] = [dump(database), await objects('first')];
    const res = await restore(database, 'second');
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain('already holds a library (1 account(s), 0 document(s), 0 application(s))');
    expect(dump(database)).toBe(before);
    expect(await objects('first')).toEqual(stored);
    expect(await objects('second')).toEqual([]);

    // The same restore, interrupted as a kill leaves it (its record says it is still copying): run again, it finishes.
    const id = JSON.parse((await runCli(['restore', '--from', repo, '--list', '--json', '--key-file', keyFile])).stdout)[0].id as string;
    const client = new pgClient({ connectionString: database });
    await client.connect();
    try {
      const record = { command: 'restore', source: { library: `backup ${id} of ${library}` }, state: 'copying', startedAt: Date.now() };
      await client.query("INSERT INTO settings (key, value) VALUES ('migration', $1)", [JSON.stringify(record)]);
      const resumed = await restore(database, 'first');
      expect(resumed.code, resumed.stderr).toBe(0);
      expect((await client.query("SELECT count(*)::int AS n FROM settings WHERE key = 'migration'")).rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it("a prefix holding another library's secrets key is refused before anything is copied; one holding the backup's own is restored into", async () => {
    await putKey('other', `${randomBytes(32).toString('base64url')}\n`);
    const database = await pg.createDatabase();
    const refused = await restore(database, 'other');
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`error: s3://${rgw.bucket}/other`);
    expect(refused.stderr).toContain('already holds another secrets key (secrets.key)');
    expect(refused.stderr).toContain('nothing was changed');
    expect((await objects('other')).map(([key]) => key), 'nothing was copied beside it').toEqual(['other/secrets.key']);
    const client = new pgClient({ connectionString: database });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'");
      expect(rows[0].n, 'no schema was made in the database, no record of a restore left in it').toBe(0);
    } finally {
      await client.end();
    }

    await putKey('same', secretsKey);
    const restored = await restore(await pg.createDatabase(), 'same');
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toMatch(/^restored backup \S+ .* into /m);
  }, 300_000);
});
