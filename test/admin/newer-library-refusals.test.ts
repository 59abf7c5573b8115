/**
 * docs/operations.md#upgrading: a library a newer docsearch migrated is refused, untouched, by every operator command
 * that opens it — not only `serve` and `users add`, which test/store/upgrade-from-release.test.ts runs on each
 * release's fixture — with exit code 3 and the one line that names this build's version and says nothing changed.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/core/version.js';
import { INDEX_FORMAT } from '../../src/store/lancedb/chunk-index-info.js';
import { addUser, type Daemon, removeDir, REPO, runCli, startDaemon, TEST_MODEL_CACHE } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { tempDirs } from '../helpers/temp-dirs.js';

/** Every file of a directory by path with its sha256. */
function digestDir(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) out[relative(dir, join(entry.parentPath, entry.name))] = createHash('sha256').update(readFileSync(join(entry.parentPath, entry.name))).digest('hex');
  }
  return out;
}

describe('a library a newer docsearch migrated', () => {
  const dirs = tempDirs('docsearch-newer-library');
  let d: Daemon;
  let newest = '';
  beforeAll(async () => {
    d = await startDaemon();
    // A document, so that the library has a chunk index (and its chunks-index.json).
    const up = await uploadFiles(d, (await addUser(d)).apiKey, [{ name: 'kept.txt', bytes: Buffer.from('A library a newer release wrote.\n') }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBeLessThan(300);
    expect(await d.stop()).toBe(0);
    const raw = new BetterSqlite3(join(d.dataDir, 'docsearch.db'));
    try {
      newest = (raw.prepare('SELECT max(name) AS name FROM kysely_migration').get() as { name: string }).name;
      const next = `${String(Number(newest.slice(0, 3)) + 1).padStart(3, '0')}-from-a-newer-release`;
      raw.prepare('INSERT INTO kysely_migration (name, timestamp) VALUES (?, ?)').run(next, new Date().toISOString());
    } finally {
      raw.close();
    }
  }, 60_000);
  afterAll(() => {
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  /** Each command on the library, with its exit code and stderr, and whether the library's files stayed as they were. */
  const refusals = async (commands: string[][]) => {
    const out = [];
    for (const args of commands) {
      const before = digestDir(d.dataDir);
      const res = await runCli(args, { timeoutMs: 60_000 });
      out.push({ command: args.slice(0, 2).join(' '), code: res.code, stderr: res.stderr, untouched: JSON.stringify(digestDir(d.dataDir)) === JSON.stringify(before) });
    }
    // Nor was the copy begun.
    expect(existsSync(migrateTarget)).toBe(false);
    return out;
  };
  const dataDir = () => ['--data-dir', d.dataDir];
  let migrateTarget = '';
  const readingTheIndex = () => [
    ['reindex', ...dataDir(), '--model-cache-dir', TEST_MODEL_CACHE],
    ['migrate', '--from', d.dataDir, '--to', (migrateTarget = join(dirs.make('migrate'), 'copy'))],
    ['backup', ...dataDir(), '--to', dirs.make('backup')],
  ];

  it('is refused by each operator command that opens it: exit 3, one line naming this build, every file as it was', { timeout: 120_000 }, async () => {
    const known = Number(newest.slice(0, 3));
    const refusal = `error: this library was written by a newer docsearch (schema ${known + 1}, this build knows ${known}; unknown migrations: ${String(known + 1).padStart(3, '0')}-from-a-newer-release): upgrade docsearch (this is ${VERSION}); nothing in the library was changed\n`;
    const commands = [
      ['users', 'list', ...dataDir()],
      ['groups', 'list', ...dataDir()],
      ['clients', 'add', '--name', 'Refused', '--redirect-uri', 'https://app.example.com/cb', ...dataDir()],
      ...readingTheIndex(),
    ];
    const seen = await refusals(commands);
    expect(seen).toEqual(seen.map(({ command }) => ({ command, code: 3, stderr: refusal, untouched: true })));
  });

  it('with a newer chunk index format, is refused so by each command that reads the index', { timeout: 120_000 }, async () => {
    const raw = new BetterSqlite3(join(d.dataDir, 'docsearch.db'));
    raw.prepare('DELETE FROM kysely_migration WHERE name > ?').run(newest);
    raw.close();
    const info = join(d.dataDir, 'lancedb/chunks-index.json');
    writeFileSync(info, JSON.stringify({ ...JSON.parse(readFileSync(info, 'utf8')), format: INDEX_FORMAT + 1 }));
    const refusal = `error: this library was written by a newer docsearch (chunk index format ${INDEX_FORMAT + 1}, this build knows ${INDEX_FORMAT}): upgrade docsearch (this is ${VERSION}); nothing in the library was changed\n`;
    const seen = await refusals(readingTheIndex());
    expect(seen).toEqual(seen.map(({ command }) => ({ command, code: 3, stderr: refusal, untouched: true })));
  });
});

it('"schema" is the newest migration: 10 in the library 0.1.0 wrote, 11 in 0.2.0\'s; the index format 1 (0.1.0 wrote none) up to 0.2.0, 2 since', () => {
  const release = (name: string) => {
    const data = join(REPO, 'test/fixtures/upgrade', name, 'embedded/data');
    // A copy: opened in place, even read-only, SQLite would leave -wal and -shm files in the fixture.
    const copy = join(mkdtempSync(join(tmpdir(), 'docsearch-release-schema-')), 'docsearch.db');
    cpSync(join(data, 'docsearch.db'), copy);
    const raw = new BetterSqlite3(copy);
    try {
      const schema = Number((raw.prepare('SELECT max(name) AS name FROM kysely_migration').get() as { name: string }).name.slice(0, 3));
      return { schema, format: (JSON.parse(readFileSync(join(data, 'lancedb/chunks-index.json'), 'utf8')) as { format?: number }).format ?? null };
    } finally {
      raw.close();
      removeDir(dirname(copy));
    }
  };
  expect([release('v0.1.0'), release('v0.2.0'), INDEX_FORMAT]).toEqual([{ schema: 10, format: null }, { schema: 11, format: 1 }, 2]);
});
