/**
 * docs/migrate.md, statement by statement where no other test held it, between two data directories (the rules
 * are the same for every kind of side; test/server/migrate.test.ts moves a library into PostgreSQL + RGW and back):
 * the data directory's lock keeps a migration out while its daemon serves; the source is not changed by the copy;
 * the secrets key goes along, unless the source's daemon took it from DOCSEARCH_SECRETS_KEY; originals the source
 * lacks or has damaged are warned about and left out while their documents move; a resumed copy upserts and trims
 * the tables to the source's rows, with the cutoff of its first run; a dry run says what the target is; progress
 * off a terminal is plain lines, at most one a tenth of a step; flags and variables the doc names, and the doc's
 * own example environment, are taken.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressOn } from '../../src/admin/migrate/progress.js';
import { storageProblem } from '../../src/store/objects/location.js';
import { addUser, api, REPO, runCli, startDaemon, type Daemon, type TestUser } from '../helpers/daemon.js';
import { type PgCluster, postgresUnavailable, startPostgres } from '../helpers/postgres.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

const MINUTE = 60_000;
const SHARED_SKIP = postgresUnavailable() ?? rgwUnavailable();
const TEXTS = [
  { name: 'otters.txt', bytes: Buffer.from('Sea otters float on their backs and crack shellfish on a stone held on their chest.\n') },
  { name: 'lichens.txt', bytes: Buffer.from('Lichens are a fungus and an alga living together as one organism on bare rock.\n') },
];

/** Every file under `dir` with its sha256; but the lock file and SQLite's WAL and shared-memory files, which opening makes. */
function digestDir(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || /^(daemon\.lock|docsearch\.db-(wal|shm))$/.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    out[relative(dir, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
  return out;
}

const originalPath = (dir: string, sha: string) => join(dir, 'files', sha.slice(0, 2), sha);

describe('docsearch migrate keeps the promises of docs/migrate.md', () => {
  const dirs = tempDirs('docsearch-migrate-promises');
  let daemon: Daemon | undefined;
  let pgCluster: PgCluster | undefined;
  let rgw: Rgw | undefined;
  let source: string;
  let user: TestUser;
  let shas: string[];
  /** The id of the source's own secrets.key, as the first copy reported it. */
  let keyId: string;
  /** The verified copy the second test makes. */
  let copied: string;
  const migrate = (args: string[], env: Record<string, string> = {}) => runCli(['migrate', ...args], { env, timeoutMs: 4 * MINUTE });
  const target = (what: string) => join(dirs.make(what), 'data');
  const sql = <T>(dir: string, fn: (db: Database.Database) => T): T => {
    const db = new Database(join(dir, 'docsearch.db'));
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    daemon = await startDaemon();
    source = daemon.dataDir;
    dirs.keep(source);
    user = await addUser(daemon);
    const up = await uploadFiles(daemon, user.apiKey, TEXTS, { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body.documents.map((x: { status: string }) => x.status)).toEqual(['ready', 'ready']);
    shas = TEXTS.map((t) => createHash('sha256').update(t.bytes).digest('hex'));
  }, 2 * MINUTE);
  afterAll(async () => {
    await daemon?.stop();
    await rgw?.stop();
    await pgCluster?.destroy();
    dirs.removeAll();
  });

  it('refuses while a daemon serves the source data directory ("locked as serve locks it"), and makes no target', async () => {
    const to = target('while-served');
    const res = await migrate(['--from', source, '--to', to]);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toMatch(/: stop it first/);
    expect(res.stderr).toContain('a library must not change while it is copied');
    expect(existsSync(join(to, 'docsearch.db'))).toBe(false);
    // Still serving, untouched.
    expect((await api(daemon!, '/api/v1/search', { token: user.apiKey, body: { query: 'sea otters' } })).status).toBe(200);
    expect(await daemon!.stop()).toBe(0);
    daemon = undefined;
  }, 2 * MINUTE);

  it('a dry run writes nothing in an empty target; the copy leaves the source as it was, copies its secrets key, and reports progress off a terminal in plain lines, one a tenth at most', async () => {
    const before = digestDir(source);
    expect(Object.keys(before)).toEqual(expect.arrayContaining(['docsearch.db', 'secrets.key']));
    // A dry run into a directory made for the copy writes nothing there, not even a lock file.
    const prepared = dirs.make('prepared');
    const looked = await migrate(['--from', source, '--to', prepared, '--dry-run', '--json']);
    expect(looked.code, looked.stderr).toBe(0);
    expect(JSON.parse(looked.stdout)).toMatchObject({ dry_run: true, target_state: 'fresh' });
    expect(readdirSync(prepared)).toEqual([]);

    const to = (copied = target('copy'));
    const res = await migrate(['--from', source, '--to', to, '--json']);
    expect(res.code, res.stderr).toBe(0);
    const s = JSON.parse(res.stdout);
    expect(s).toMatchObject({ target_state: 'fresh', verification: { ok: true, differences: [] }, originals: { files: 2, copied: 2, missing_in_source: [], damaged_in_source: [] } });
    expect(s.index.chunks.documents).toBe(2);
    expect(s.bytes_moved).toBeGreaterThan(0);
    expect(s.seconds).toBeGreaterThan(0);
    expect(digestDir(source), 'the source is not changed by the migration').toEqual(before);
    expect(readFileSync(join(to, 'secrets.key')).equals(readFileSync(join(source, 'secrets.key')))).toBe(true);
    keyId = s.secrets_key_id;
    expect(keyId).toMatch(/^[A-Za-z0-9_-]{16}$/);
    // Off a terminal: no line redrawn in place, and each step's counter printed at most once a tenth and at its end.
    expect(res.stderr).not.toMatch(/\r|\x1b\[/);
    const counters = res.stderr.split('\n').map((line) => /^([a-z_ ]+): [\d,]+\/[\d,]+ /.exec(line)?.[1]).filter((x): x is string => !!x);
    expect(counters).toEqual(expect.arrayContaining(['users', 'documents', 'originals', 'chunks']));
    const perStep = new Map<string, number>();
    for (const label of counters) perStep.set(label, (perStep.get(label) ?? 0) + 1);
    expect([...perStep].filter(([, n]) => n > 10)).toEqual([]);

    // A dry run says what the target is: this one is done.
    const dry = await migrate(['--from', source, '--to', to, '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, target_state: 'done' });
    expect(dry.stderr).toMatch(/already holds this library, copied and verified .*: nothing to do/);
  }, 4 * MINUTE);

  it('a key the source took from DOCSEARCH_SECRETS_KEY is not copied: the target gets no secrets.key, and is told to use the same', async () => {
    const key = createHash('sha256').update('an operator-given secrets key').digest('hex');
    const to = target('key-from-env');
    const res = await migrate(['--from', source, '--to', to, '--json'], { DOCSEARCH_SECRETS_KEY: key });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain("comes from DOCSEARCH_SECRETS_KEY(_FILE): give the target's daemon the same");
    expect(existsSync(join(to, 'secrets.key'))).toBe(false);
    expect(JSON.parse(res.stdout).secrets_key_id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(JSON.parse(res.stdout).secrets_key_id, "the given key's id, not the source file's").not.toBe(keyId);
  }, 4 * MINUTE);

  it('a table the target changes behind the copy fails verification, named, exit 1, run after run', async () => {
    // Storage damaging writes, as a trigger does it: every row the copy writes into users is changed.
    sql(copied, (db) => {
      const record = JSON.parse((db.prepare("SELECT value FROM settings WHERE key = 'migration'").get() as { value: string }).value);
      db.prepare("UPDATE settings SET value = ? WHERE key = 'migration'").run(JSON.stringify({ ...record, state: 'copying' }));
      db.exec("CREATE TRIGGER damage AFTER UPDATE ON users BEGIN UPDATE users SET email = 'damaged@example.com' WHERE id = NEW.id; END");
    });
    for (let run = 0; run < 2; run++) {
      const res = await migrate(['--from', source, '--to', copied, '--json']);
      expect(res.code, res.stderr).toBe(1);
      expect(JSON.parse(res.stdout).verification).toEqual({ ok: false, differences: ['table users: the same 1 row(s) in number, but their contents differ'] });
      expect(res.stderr).toContain('verification failed: the target differs from the source in 1 way(s):\n  table users: the same 1 row(s) in number, but their contents differ');
    }
  }, 4 * MINUTE);

  it('originals the source lacks or has damaged: warned about and left out, their documents moved, and the copy verifies', async () => {
    const from = join(dirs.make('damaged-source'), 'data');
    cpSync(source, from, { recursive: true });
    rmSync(join(from, 'daemon.lock'), { force: true });
    const [lost, damaged] = shas as [string, string];
    rmSync(originalPath(from, lost));
    writeFileSync(originalPath(from, damaged), 'no longer the bytes this name hashes\n');
    const to = target('damaged-copy');
    const res = await migrate(['--from', from, '--to', to, '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`warning: original ${lost} is missing in the source: its documents are copied without it`);
    expect(res.stderr).toContain(`warning: original ${damaged} is damaged in the source (its bytes no longer hash to their name): not copied`);
    const s = JSON.parse(res.stdout);
    expect(s.originals).toMatchObject({ files: 2, copied: 0, missing_in_source: [lost], damaged_in_source: [damaged] });
    expect(s.verification).toEqual({ ok: true, differences: [] });
    expect(existsSync(originalPath(to, lost)) || existsSync(originalPath(to, damaged))).toBe(false);
    const moved = sql(to, (db) => db.prepare('SELECT sha256, status FROM documents ORDER BY filename DESC').all());
    expect(moved).toEqual([{ sha256: shas[0], status: 'ready' }, { sha256: shas[1], status: 'ready' }]);
  }, 4 * MINUTE);

  it('resumed, it upserts and trims the tables to the source, copying the sessions its first run found live', async () => {
    const from = join(dirs.make('changing-source'), 'data');
    cpSync(source, from, { recursive: true });
    rmSync(join(from, 'daemon.lock'), { force: true });
    // Live when the first run starts, expired by the second.
    const expires = Date.now() + 4000;
    sql(from, (db) => {
      const id = (db.prepare('SELECT id FROM users').get() as { id: string }).id;
      db.prepare('INSERT INTO sessions (id_hash, user_id, created_at, expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?)').run('session-short', id, Date.now(), expires, Date.now());
      // A job a killed daemon left running moves, as the open jobs do; the finished ones stay.
      const doc = (db.prepare('SELECT id FROM documents LIMIT 1').get() as { id: string }).id;
      db.prepare("INSERT INTO jobs (document_id, user_id, kind, state, run_after, created_at, updated_at) VALUES (?, ?, 'ingest', 'running', ?, ?, ?)").run(doc, id, Date.now(), Date.now(), Date.now());
    });
    const to = target('resumed');
    const first = await migrate(['--from', from, '--to', to]);
    expect(first.code, first.stderr).toBe(0);
    // Left unfinished, as a killed run leaves its record; meanwhile the source changes.
    sql(to, (db) => {
      const record = JSON.parse((db.prepare("SELECT value FROM settings WHERE key = 'migration'").get() as { value: string }).value);
      db.prepare("UPDATE settings SET value = ? WHERE key = 'migration'").run(JSON.stringify({ ...record, state: 'copying' }));
    });
    // A half-copied library is never served.
    const served = await startDaemon({ dataDir: to }).then(
      (started) => started.stop().then(() => 'started'),
      (err: Error) => err.message,
    );
    expect(served).toMatch(new RegExp(`this library is still being copied in from ${from}: run that \`docsearch migrate\` again to finish it`));
    const dry = await migrate(['--from', from, '--to', to, '--dry-run', '--json']);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, target_state: 'resumed' });
    expect(dry.stderr).toContain('The target holds an unfinished copy of this library, started');
    sql(from, (db) => {
      db.prepare('DELETE FROM api_keys').run();
      db.prepare("UPDATE users SET email = 'renamed@example.com'").run();
    });
    while (Date.now() <= expires) await new Promise((r) => setTimeout(r, 250));

    const second = await migrate(['--from', from, '--to', to, '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ target_state: 'resumed', verification: { ok: true } });
    sql(to, (db) => {
      expect(db.prepare('SELECT count(*) FROM api_keys').pluck().get(), 'trimmed to the source').toBe(0);
      expect(db.prepare('SELECT email FROM users').pluck().all(), 'upserted').toEqual(['renamed@example.com']);
      expect(db.prepare("SELECT id_hash FROM sessions WHERE id_hash = 'session-short'").pluck().all(), "the first run's cutoff").toEqual(['session-short']);
      expect(db.prepare('SELECT state FROM jobs').pluck().all()).toEqual(['running']);
    });
  }, 4 * MINUTE);

  it('takes the flags and variables the doc names, and refuses two sides that share a storage', async () => {
    const help = await migrate(['--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('--batch-rows <n> chunk-index rows per commit (also database rows per transaction, at most 1,000) (default: "10000")');
    const batch = await migrate(['--from', source, '--to', target('batch'), '--batch-rows', '0']);
    expect(batch.code).toBe(2);
    expect(batch.stderr).toContain('--batch-rows must be a positive integer, got "0"');
    // The database URLs from the environment (kept off the command line): the same one on both sides is refused.
    const url = 'postgres://docsearch@db.internal/docsearch';
    const env = { DOCSEARCH_FROM_DATABASE_URL: url, DOCSEARCH_TO_DATABASE_URL: url };
    const sameDb = await migrate(['--from-storage', 's3://docsearch-lib/a', '--to-storage', 's3://docsearch-lib/b'], env);
    expect(sameDb.code, sameDb.stderr).toBe(2);
    expect(sameDb.stderr).toContain('the source and the target are the same database (postgres://docsearch@db.internal/docsearch)');
    const sameStorage = await migrate(['--from-database', url, '--from-storage', 's3://docsearch-lib/prod/', '--to-database', `${url}2`, '--to-storage', 's3://docsearch-lib/prod']);
    expect(sameStorage.code, sameStorage.stderr).toBe(2);
    expect(sameStorage.stderr).toContain('the source and the target are the same storage (s3://docsearch-lib/prod)');
  });

  it.skipIf(SHARED_SKIP !== null)(`between two shared-mode libraries (PostgreSQL + S3); a dry run into a new database makes no schema there${SHARED_SKIP ? ` (skipped: ${SHARED_SKIP})` : ''}`, async () => {
    [pgCluster, rgw] = await Promise.all([startPostgres(), startRgw()]);
    const [first, second] = [await pgCluster.createDatabase(), await pgCluster.createDatabase()];
    const env = rgw.env();
    const into = await migrate(['--from', source, '--to-database', first, '--to-storage', `s3://${rgw.bucket}/first`], env);
    expect(into.code, into.stderr).toBe(0);
    const between = ['--from-database', first, '--from-storage', `s3://${rgw.bucket}/first`, '--to-database', second, '--to-storage', `s3://${rgw.bucket}/second`, '--json'];
    const dry = await migrate([...between, '--dry-run'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, target_state: 'fresh', originals: { files: 2 } });
    const client = new pg.Client({ connectionString: second });
    await client.connect();
    try {
      const tables = async () => Number((await client.query("SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'")).rows[0].n);
      expect(await tables(), "the dry run made no schema in the target's database").toBe(0);
      const moved = await migrate(between, env);
      expect(moved.code, moved.stderr).toBe(0);
      const s = JSON.parse(moved.stdout);
      expect(s).toMatchObject({ target_state: 'fresh', verification: { ok: true, differences: [] }, originals: { files: 2, copied: 2 } });
      expect(s.index.chunks.documents).toBe(2);
      expect(await tables()).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
  }, 4 * MINUTE);

  it('progress: on a terminal one line redrawn in place; otherwise plain lines at each tenth of a step', () => {
    const run = (isTTY: boolean) => {
      let text = '';
      const stderr = Object.assign(new Writable({ write: (chunk, _enc, done) => ((text += String(chunk)), done()) }), { isTTY });
      const progress = progressOn({ stdin: process.stdin, stdout: process.stdout, stderr, env: {} });
      const step = progress.step('chunks', 100);
      for (let i = 0; i < 100; i++) step.add(1);
      step.end();
      progress.line('verified');
      return text;
    };
    const tty = run(true);
    const [redrawn, ...rest] = tty.split('\n');
    expect(rest).toEqual(['verified', '']);
    // Drawn, redrawn in place at each of the 100 rows, then cleared for its last state: one line in all.
    expect(redrawn!.split('\r\x1b[K')).toEqual(['chunks: 0/100 rows', ...Array.from({ length: 100 }, (_, i) => `chunks: ${i + 1}/100 rows`), 'chunks: 100/100 rows']);
    const plain = run(false).split('\n');
    expect(plain).toEqual([...Array.from({ length: 9 }, (_, i) => `chunks: ${(i + 1) * 10}/100 rows`), 'chunks: 100/100 rows', 'verified', '']);
  });

  it("the usage section's example environment names storage the command takes; plain http to another machine is refused", async () => {
    const doc = readFileSync(join(REPO, 'docs/migrate.md'), 'utf8');
    const line = /^export (AWS_ENDPOINT_URL=.*)$/m.exec(doc)?.[1];
    expect(line).toBeDefined();
    const env = Object.fromEntries(line!.split(/\s+/).map((kv) => kv.split('=') as [string, string]));
    expect(storageProblem('s3://docsearch-lib/prod', env)).toBeNull();
    const plain = await migrate(['--from', source, '--to-database', 'postgres://docsearch@db.internal/docsearch', '--to-storage', 's3://docsearch-lib/prod'], { ...env, AWS_ENDPOINT_URL: 'http://rgw.internal:7480' });
    expect(plain.code, plain.stderr).toBe(2);
    expect(plain.stderr).toContain('--to-storage: AWS_ENDPOINT_URL http://rgw.internal:7480 is plain http to another machine');
  });
});
