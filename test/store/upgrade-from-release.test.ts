/**
 * Upgrades across releases, on the libraries released docsearch versions wrote (test/fixtures/upgrade/<release>/,
 * made by scripts/make-upgrade-fixture.sh with that release's own code): today's daemon opens each one, in
 * embedded mode (a copy of its data dir) and in shared mode (its pg_dump loaded into a fresh PostgreSQL 15
 * database, its objects put into a fresh Ceph RGW bucket), migrates it, keeps every chunk and stored vector bit for
 * bit, answers what the release answered — as docs/operations.md ("Upgrading") promises: on the CPU the fixture
 * was made on (the same model kernels, `machine.json`), the same chunk ids in the same order with every number
 * within 1e-5; on another, within the drift a query's vector may have there — and takes a new upload. The backup
 * the release wrote restores (one made before backups were sealed, on --trust-repository only). A library from a
 * newer release (a migration this build does not know, a newer chunk index format) is refused by `serve` and the
 * operator commands with exit code 3, and left byte for byte as it was.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDEX_FORMAT } from '../../src/store/lancedb/chunk-index-info.js';
import { KNOWN_SCHEMA } from '../../src/store/sql/migrations/index.js';
import { decodeUnits } from '../../src/store/lancedb/unit-vectors.js';
import { chunkRows, chunkUnits, localIndex } from '../helpers/chunk-rows.js';
import { type Daemon, removeDir, runCli, startDaemon, TEST_MODEL_CACHE, untilHealth } from '../helpers/daemon.js';
import { PG_BIN, type PgCluster, postgresUnavailable, startPostgres } from '../helpers/postgres.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { expectReleaseAnswers, FIXTURES, loadSharedFixture, PREFIX, recorded, RELEASES } from '../helpers/release-fixture.js';
import { call, type FixtureUser, observe, PASSWORD, uploadReady } from '../helpers/upgrade-library.js';
import { httpClient } from '../mcp/mcp-client.js';

const SHARED_SKIP = postgresUnavailable() ?? rgwUnavailable();

/**
 * The release's keyword index served the searches above; the chunks are re-analysed in their languages in the
 * background (issue 59), and then keyword search reads the new index: the same answers as promised
 * (docs/operations.md, "Upgrading"), and each ready document has its language.
 */
async function expectReanalysed(release: string, daemon: Daemon, then: ReturnType<typeof recorded>): Promise<void> {
  await untilHealth(daemon, (c) => c.search_index?.keyword === 'keyword_text', 'keyword search on the re-analysed index', 120_000);
  expectReleaseAnswers(release, await observe(daemon.url, then.users), then);
  const { documents } = await call(daemon.url, then.users[0]!.apiKey, '/api/v1/documents?limit=100');
  const ready = (documents as { status: string; language: string | null; filename: string }[]).filter((d) => d.status === 'ready');
  expect(ready.length, 'ready documents of the release').toBeGreaterThan(0);
  for (const d of ready) expect(d.language, d.filename).toMatch(/^[a-z]{2,3}$/);
}

/** The accounts still sign in by their keys, and a new document goes in and is found. */
async function expectUsersAndUploads(daemon: Daemon, users: FixtureUser[]): Promise<void> {
  for (const user of users) expect((await call(daemon.url, user.apiKey, '/api/v1/me')).email).toBe(user.email);
  const alice = users[0]!;
  // The oldest account became the admin; everyone owns their own projects, and sees no one else's.
  expect(await Promise.all(users.map(async (u) => (await call(daemon.url, u.apiKey, '/api/v1/me')).admin))).toEqual(users.map((_, i) => i === 0));
  for (const user of users) {
    const own = (await call(daemon.url, user.apiKey, '/api/v1/projects')).projects as { role: string; owner: string }[];
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((p) => p.role === 'owner' && p.owner === user.email)).toBe(true);
  }
  const { projects } = await call(daemon.url, alice.apiKey, '/api/v1/projects');
  const handbook = (projects as { id: string; name: string }[]).find((p) => p.name === 'Handbook')!;
  const doc = await uploadReady(daemon.url, alice.apiKey, 'after-upgrade.txt', Buffer.from('Bicycles are parked in the courtyard shed, never in the corridors.\n'), handbook.id);
  const { results } = await call(daemon.url, alice.apiKey, '/api/v1/search', { body: { query: 'where to park a bicycle', limit: 3 } });
  expect(results[0].document.id).toBe(doc.id);
  // The release's chunks did not record where they lie in the text: MCP reads them joined whole and says so; a
  // new document's chunks did.
  const { documents } = await call(daemon.url, alice.apiKey, '/api/v1/documents?status=ready&limit=100');
  const old = (documents as { id: string }[]).find((d) => d.id !== doc.id)!;
  const chunks = (id: string) => call(daemon.url, alice.apiKey, `/api/v1/documents/${id}/text`).then((t) => t.pages.flatMap((p: { chunks: unknown[] }) => p.chunks));
  expect((await chunks(old.id)).every((c: { placement: unknown }) => c.placement === null)).toBe(true);
  expect((await chunks(doc.id))[0].placement).toEqual({ overlap: 0, separator: '', page_starts: [] });
  const mcp = await httpClient(`${daemon.url}/mcp`, alice.apiKey);
  try {
    const read = (await mcp.callTool({ name: 'get_document', arguments: { document_id: old.id } })).structuredContent as { text: string; note?: string };
    expect(read.text.length).toBeGreaterThan(0);
    expect(read.note).toMatch(/indexed by an older release/);
  } finally {
    await mcp.close();
  }
}

/** What a release stores beside each chunk that 0.2.0 did not: each is a deriver of the background backfill. */
const DERIVERS = ['units', 'language', 'filters'] as const;

/** The backfill as health and /metrics show it, per deriver. */
async function backfillState(daemon: Daemon): Promise<{ state: string; derivers: Record<string, { pending: number | null; gauge: number; written: number }> }> {
  const health = (await (await fetch(`${daemon.url}/api/v1/health`)).json()) as { components: { backfill: { state: string; derivers: Record<string, { pending: number | null }> } } };
  const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
  const sample = (name: string, deriver: string) => Number(new RegExp(`^${name}\\{deriver="${deriver}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  const b = health.components.backfill;
  const derivers = Object.fromEntries(
    DERIVERS.map((d) => [d, { pending: b.derivers[d]?.pending ?? null, gauge: sample('docsearch_backfill_pending_rows', d), written: sample('docsearch_backfill_rows_total', d) }]),
  );
  return { state: b.state, derivers };
}

/** The chunk rows the release stored: the chunk counts of its documents as it answered them (an oracle of its own, not today's count). */
function releaseChunks(then: ReturnType<typeof recorded>): number {
  const docs = new Map(Object.values(then.documents).flat().map((d) => [d.id as string, d.chunk_count as number]));
  return [...docs.values()].reduce((n, c) => n + c, 0);
}

/**
 * Started with the backfill off, the library searches at once, and health and /metrics show, for every deriver, as
 * pending every chunk the release stored; restarted with it on, every one is brought up to date in the background:
 * the count this daemon wrote is that many, per deriver. Returns the daemon (running).
 */
async function backfillAcrossRestart(first: Daemon, stored: number, start: () => Promise<Daemon>): Promise<{ daemon: Daemon }> {
  expect(stored).toBeGreaterThan(0);
  await untilHealth(first, (c) => DERIVERS.every((d) => typeof c.backfill?.derivers?.[d]?.pending === 'number'), 'the backfill counted');
  const off = await backfillState(first);
  expect(off.state).toBe('off');
  for (const d of DERIVERS) expect(off.derivers[d], `${d}, off`).toEqual({ pending: stored, gauge: stored, written: 0 });
  expect(await first.stop()).toBe(0);
  const daemon = await start();
  await untilHealth(daemon, (c) => c.backfill?.state === 'done', 'the backfill done', 120_000);
  const done = await backfillState(daemon);
  expect(done.state).toBe('done');
  for (const d of DERIVERS) expect(done.derivers[d], `${d}, done`).toEqual({ pending: 0, gauge: 0, written: stored });
  return { daemon };
}

/**
 * Every chunk has its answer units, each (but a rare one past the tokens the model reads) with a vector near its
 * chunk's: the backfill wrote what a search scores, not spans alone or empty vectors (which score 0 against anything).
 */
function expectUnitsMeanTheirChunks(rows: Map<string, { vector: Float32Array; units: Uint8Array | null }>): void {
  expect(rows.size).toBeGreaterThan(0);
  let units = 0;
  let near = 0;
  for (const [id, row] of rows) {
    const stored = row.units ? decodeUnits(row.units) : null;
    expect(stored?.scored, `${id} has scored units`).toBe(true);
    for (const score of stored!.scores(row.vector)) {
      units++;
      if (score > 0.3) near++;
    }
  }
  expect(near / units, `${near} of ${units} units near their chunk`).toBeGreaterThanOrEqual(0.95);
}

/** Every file of a directory by path with its sha256. */
function digestDir(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[relative(dir, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
  return out;
}

/** `serve` (to its exit, since it is refused) on the data dir; the daemon helper's flags. */
const serveOnce = (dataDir: string, env: Record<string, string> = {}, args: string[] = []) =>
  runCli(['serve', '--port', '0', '--data-dir', dataDir, '--model-cache-dir', TEST_MODEL_CACHE, ...args], { env, timeoutMs: 120_000 });

/** A migration as the next release would name it. */
const NEWER_MIGRATION = `${String(KNOWN_SCHEMA + 1).padStart(3, '0')}-from-a-newer-release`;
const NEWER_SCHEMA = new RegExp(
  `error: this library was written by a newer docsearch \\(schema ${KNOWN_SCHEMA + 1}, this build knows ${KNOWN_SCHEMA}; unknown migrations: ${NEWER_MIGRATION}\\): upgrade docsearch`,
);

/** The migrations a database holds. */
const appliedSqlite = (dataDir: string): string[] => {
  const raw = new BetterSqlite3(join(dataDir, 'docsearch.db'), { readonly: true });
  try {
    return (raw.prepare('SELECT name FROM kysely_migration ORDER BY name').all() as { name: string }[]).map((r) => r.name);
  } finally {
    raw.close();
  }
};

/** Every release's fixture: a release whose folder went missing would otherwise take its tests with it. */
const EXPECTED_RELEASES = ['v0.1.0', 'v0.2.0'];
/** Releases from 0.2.0 on had `docsearch backup`, so their fixture holds a backup the release wrote. */
const hadBackup = (release: string) => release.slice(1).split('.').map(Number).reduce((n, part) => n * 1000 + part, 0) >= 2000;

it('has the fixture of every release', () => {
  expect(RELEASES).toEqual(EXPECTED_RELEASES);
});

describe.each(EXPECTED_RELEASES)('a library written by docsearch %s', (release) => {
  describe('embedded (SQLite, LanceDB and originals in the data dir)', () => {
    const then = recorded(release, 'embedded');
    const dataDir = mkdtempSync(join(tmpdir(), `docsearch-upgrade-${release}-`));
    let daemon: Daemon | undefined;
    beforeAll(() => cpSync(join(FIXTURES, release, 'embedded/data'), dataDir, { recursive: true }));
    afterAll(async () => {
      await daemon?.stop();
      removeDir(dataDir);
    });

    it('opens with today’s daemon, migrates, and answers the same searches; its users and a new upload work; the chunks get their units in the background, across a restart', async () => {
      daemon = await startDaemon({ dataDir, databaseUrl: '', timeoutMs: 120_000, args: ['--backfill', 'off'] });
      expectReleaseAnswers(release, await observe(daemon.url, then.users), then);
      daemon = (await backfillAcrossRestart(daemon, releaseChunks(then), () => startDaemon({ dataDir, databaseUrl: '', timeoutMs: 120_000 }))).daemon;
      await expectReanalysed(release, daemon, then);
      await expectUsersAndUploads(daemon, then.users);
      expect(await daemon.stop()).toBe(0);
      expect(Number.parseInt(appliedSqlite(dataDir).at(-1)!, 10)).toBe(KNOWN_SCHEMA);
      expectUnitsMeanTheirChunks(await chunkUnits(localIndex(dataDir)));
      // Nothing was embedded again: every chunk the release stored is there with its fields and vector, bit for bit.
      const pristine = mkdtempSync(join(tmpdir(), `docsearch-upgrade-${release}-pristine-`));
      try {
        cpSync(join(FIXTURES, release, 'embedded/data/lancedb'), join(pristine, 'lancedb'), { recursive: true });
        const [stored, upgraded] = [await chunkRows(localIndex(pristine)), await chunkRows(localIndex(dataDir))];
        expect(stored.size, 'the index holds the chunks the release said it had').toBe(releaseChunks(then));
        for (const [id, row] of stored) expect(upgraded.get(id), id).toEqual(row);
      } finally {
        removeDir(pristine);
      }
    }, 360_000);

    // Only releases that had `docsearch backup` (0.2.0 on) left a backup to restore: the others have no such test.
    if (hadBackup(release)) it('its backup, written by the release, restores into a new data dir, which answers as the release did', async () => {
      expect(existsSync(join(FIXTURES, release, 'embedded/backup')), `${release}'s fixture holds its backup`).toBe(true);
      const work = mkdtempSync(join(tmpdir(), `docsearch-upgrade-${release}-backup-`));
      let restored: Daemon | undefined;
      try {
        const repo = join(work, 'repo');
        cpSync(join(FIXTURES, release, 'embedded/backup'), repo, { recursive: true });
        const target = join(work, 'data');
        const key = join(FIXTURES, release, 'embedded/backup.key');
        let trust = ['--key-file', key];
        if (!existsSync(key)) {
          // Written before backups were sealed: refused unless the repository is trusted, which is said.
          const refused = await runCli(['restore', '--from', repo, '--to', target], { timeoutMs: 120_000 });
          expect(refused.code, refused.stderr).toBe(1);
          expect(refused.stderr).toMatch(/is not sealed: it was written by docsearch \S+ before backups were sealed/);
          trust = ['--trust-repository'];
        }
        const res = await runCli(['restore', '--from', repo, '--to', target, ...trust, '--json'], { timeoutMs: 120_000 });
        expect(res.code, res.stderr).toBe(0);
        expect(JSON.parse(res.stdout)).toMatchObject({ verified: true });
        restored = await startDaemon({ dataDir: target, databaseUrl: '', timeoutMs: 120_000 });
        expectReleaseAnswers(release, await observe(restored.url, then.users), then);
        expect(await restored.stop()).toBe(0);

        // Backups go on into the same repository: the first does not trust the release's manifest for the files'
        // hashes (it reads them all again), and retention counts the release's backup as one.
        const next = await runCli(['backup', '--data-dir', target, '--to', repo, '--keep', '1', '--json'], { timeoutMs: 120_000 });
        expect(next.code, next.stderr).toBe(0);
        const s = JSON.parse(next.stdout);
        expect(s).toMatchObject({ based_on: null, files: { reused: 0 } });
        expect(s.removed_backups).toEqual(readdirSync(join(FIXTURES, release, 'embedded/backup/backups')));
        const listed = await runCli(['restore', '--from', repo, '--list', '--json', '--key-file', join(target, 'backup.key')]);
        expect(JSON.parse(listed.stdout)).toMatchObject([{ id: s.id, status: 'complete' }]);
      } finally {
        await restored?.stop();
        removeDir(work);
      }
    }, 240_000);

    it('once a newer release has migrated it, is refused by serve and users add (exit 3), every file left as it was', async () => {
      await daemon?.stop(); // already stopped, unless the test above failed
      // As a newer docsearch leaves it: one more migration applied (the daemon above left its lock and reserve).
      const raw = new BetterSqlite3(join(dataDir, 'docsearch.db'));
      raw.prepare('INSERT INTO kysely_migration (name, timestamp) VALUES (?, ?)').run(NEWER_MIGRATION, new Date().toISOString());
      raw.close();
      const before = digestDir(dataDir);
      const served = await serveOnce(dataDir);
      expect(served.code, served.stderr).toBe(3);
      expect(served.stderr).toMatch(NEWER_SCHEMA);
      const added = await runCli(['users', 'add', 'carol@example.com', '--data-dir', dataDir], { input: `${PASSWORD}\n` });
      expect(added.code, added.stderr).toBe(3);
      expect(added.stderr).toMatch(NEWER_SCHEMA);
      expect(digestDir(dataDir)).toEqual(before);
    });

    it('with a migration of this build’s number that it does not know (another line’s), is refused (exit 3), saying so', async () => {
      const other = `${String(KNOWN_SCHEMA).padStart(3, '0')}-from-another-line`;
      const raw = new BetterSqlite3(join(dataDir, 'docsearch.db'));
      raw.prepare('DELETE FROM kysely_migration WHERE name = ?').run(NEWER_MIGRATION);
      raw.prepare('INSERT INTO kysely_migration (name, timestamp) VALUES (?, ?)').run(other, new Date().toISOString());
      raw.close();
      const before = digestDir(dataDir);
      const served = await serveOnce(dataDir);
      expect(served.code, served.stderr).toBe(3);
      expect(served.stderr).toContain(`error: this library was written by another build of docsearch (schema ${KNOWN_SCHEMA}, a number this build also knows, but unknown migrations: ${other}): run the docsearch that wrote it`);
      expect(digestDir(dataDir)).toEqual(before);
      const cleanup = new BetterSqlite3(join(dataDir, 'docsearch.db'));
      cleanup.prepare('DELETE FROM kysely_migration WHERE name = ?').run(other);
      cleanup.close();
    });

    it('with a chunk index format newer than this build knows, is refused (exit 3), every file left as it was', async () => {
      const raw = new BetterSqlite3(join(dataDir, 'docsearch.db'));
      raw.prepare('DELETE FROM kysely_migration WHERE name = ?').run(NEWER_MIGRATION);
      raw.close();
      const info = join(dataDir, 'lancedb/chunks-index.json');
      writeFileSync(info, JSON.stringify({ ...JSON.parse(readFileSync(info, 'utf8')), format: INDEX_FORMAT + 1 }));
      const before = digestDir(dataDir);
      const served = await serveOnce(dataDir);
      expect(served.code, served.stderr).toBe(3);
      expect(served.stderr).toMatch(new RegExp(`error: this library was written by a newer docsearch \\(chunk index format ${INDEX_FORMAT + 1}, this build knows ${INDEX_FORMAT}\\): upgrade docsearch`));
      expect(digestDir(dataDir)).toEqual(before);
    });
  });

  describe.skipIf(SHARED_SKIP !== null)(`shared (PostgreSQL 15 and Ceph RGW)${SHARED_SKIP ? ` (skipped: ${SHARED_SKIP})` : ''}`, () => {
    const then = recorded(release, 'shared');
    let cluster: PgCluster;
    let rgw: Rgw;
    let databaseUrl: string;
    let env: Record<string, string>;
    const dataDir = mkdtempSync(join(tmpdir(), `docsearch-upgrade-${release}-shared-`));
    const storage = () => `s3://${rgw.bucket}/${PREFIX}`;
    let daemon: Daemon | undefined;

    const query = async <T>(text: string, values: unknown[] = []): Promise<T[]> => {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        return (await client.query(text, values)).rows as T[];
      } finally {
        await client.end();
      }
    };
    /** The database as pg_dump writes it, less the random key of its `\restrict` lines. */
    const dump = () => {
      const res = spawnSync(join(PG_BIN, 'pg_dump'), ['--no-owner', '--no-privileges', databaseUrl], { encoding: 'utf8' });
      if (res.status !== 0) throw new Error(`pg_dump: ${res.stderr}`);
      return res.stdout.replace(/^\\(un)?restrict .*$/gm, '');
    };
    const objects = async () =>
      ((await rgw.client().send(new ListObjectsV2Command({ Bucket: rgw.bucket, Prefix: `${PREFIX}/` }))).Contents ?? []).map((o) => [o.Key, o.ETag, o.Size]);

    beforeAll(async () => {
      [cluster, rgw] = await Promise.all([startPostgres(), startRgw()]);
      databaseUrl = await cluster.createDatabase();
      env = { DOCSEARCH_DATABASE_URL: databaseUrl, ...rgw.env() };
      await loadSharedFixture(release, databaseUrl, rgw);
    });
    afterAll(async () => {
      await daemon?.stop();
      removeDir(dataDir);
      await rgw?.stop();
      await cluster?.destroy();
    });

    it('opens with today’s daemon, migrates, and answers the same searches; its users and a new upload work; the chunks get their units in the background, across a restart', async () => {
      daemon = await startDaemon({ dataDir, databaseUrl, env, args: ['--storage', storage(), '--backfill', 'off'], timeoutMs: 120_000 });
      expectReleaseAnswers(release, await observe(daemon.url, then.users), then);
      daemon = (await backfillAcrossRestart(daemon, releaseChunks(then), () => startDaemon({ dataDir, databaseUrl, env, args: ['--storage', storage()], timeoutMs: 120_000 }))).daemon;
      await expectReanalysed(release, daemon, then);
      await expectUsersAndUploads(daemon, then.users);
      expect(await daemon.stop()).toBe(0);
      const applied = await query<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name');
      expect(Number.parseInt(applied.at(-1)!.name, 10)).toBe(KNOWN_SCHEMA);
    }, 360_000);

    it('once a newer release has migrated it, is refused by serve and users add (exit 3), the database and objects left as they were', async () => {
      await daemon?.stop(); // already stopped, unless the test above failed
      await query('INSERT INTO kysely_migration (name, timestamp) VALUES ($1, $2)', [NEWER_MIGRATION, new Date().toISOString()]);
      const [database, stored] = [dump(), await objects()];
      const served = await serveOnce(dataDir, env, ['--storage', storage()]);
      expect(served.code, served.stderr).toBe(3);
      expect(served.stderr).toMatch(NEWER_SCHEMA);
      const added = await runCli(['users', 'add', 'carol@example.com', '--data-dir', dataDir], { input: `${PASSWORD}\n`, env });
      expect(added.code, added.stderr).toBe(3);
      expect(added.stderr).toMatch(NEWER_SCHEMA);
      expect(dump()).toBe(database);
      expect(await objects()).toEqual(stored);
    });
  });
});
