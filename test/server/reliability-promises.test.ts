/**
 * docs/RELIABILITY.md ("A full disk", "History on disk"), the statements test/server/disk-full.test.ts (a real full
 * tmpfs, root only) does not hold by itself: which errors count as out of space; SQLite's own rollback on
 * SQLITE_FULL no longer hidden behind "no transaction is active" (SQLite's max_page_count makes the same SQLITE_FULL
 * and the same automatic rollback as a full disk, without one); the WAL's size limit and the memory map; the 8 MiB
 * space reserve, made at start and again by the health check; an empty pid file, as a full disk leaves it, read as
 * stale. And of "Memory under load": the LanceDB cache caps and the query-vector cache's size.
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insufficientStorage, isDiskFull } from '../../src/core/disk-full.js';
import { QueryVectorCache } from '../../src/search/query-cache.js';
import { cacheNeeded, DEFAULT_CACHE } from '../../src/store/lancedb/connection.js';
import { openSqlite } from '../../src/store/sql/sqlite.js';
import type { DatabaseHandle } from '../../src/store/sql/database.js';
import { api, type Daemon, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const MiB = 1024 * 1024;
const errno = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('a full disk, recognised however it surfaces', () => {
  it('Node ENOSPC and EDQUOT, SQLite SQLITE_FULL, LanceDB "os error 28", through cause chains; nothing else', () => {
    expect(isDiskFull(errno('ENOSPC', 'ENOSPC: no space left on device, write'))).toBe(true);
    expect(isDiskFull(errno('EDQUOT', 'EDQUOT: disk quota exceeded, write'))).toBe(true);
    expect(isDiskFull(errno('SQLITE_FULL', 'database or disk is full'))).toBe(true);
    expect(isDiskFull(new Error('lance error: LanceError(IO): Generic LocalFileSystem error: No space left on device (os error 28)'))).toBe(true);
    expect(isDiskFull(new Error('could not write the chunk rows', { cause: new Error('batch failed', { cause: errno('ENOSPC', 'write ENOSPC') }) }))).toBe(true);
    expect(isDiskFull(errno('EACCES', 'EACCES: permission denied'))).toBe(false);
    expect(isDiskFull(new Error('No such file or directory (os error 2)'))).toBe(false);
  });

  it('requests are answered with the message the doc quotes', () => {
    const err = insufficientStorage(errno('ENOSPC', 'write ENOSPC'));
    expect([err.code, err.status]).toEqual(['insufficient_storage', 507]);
    expect(err.message).toBe('the server is out of disk space, so nothing was stored; try again once space has been freed');
  });
});

describe('SQLite on a full disk, and its history', () => {
  const dirs = tempDirs('docsearch-reliability-sqlite');
  let handle: DatabaseHandle;
  const pragma = async (name: string) => Object.values((await sql.raw(`PRAGMA ${name}`).execute(handle.db)).rows[0] as object)[0];
  beforeAll(async () => {
    handle = await openSqlite(join(dirs.make('db'), 'docsearch.db'));
  });
  afterAll(async () => {
    await handle?.close();
    dirs.removeAll();
  });

  it('a transaction SQLite rolled back on SQLITE_FULL fails with that error, and the next one commits', async () => {
    const pages = Number(await pragma('page_count'));
    await sql.raw(`PRAGMA max_page_count = ${pages + 4}`).execute(handle.db);
    const failed = await handle.db
      .transaction()
      .execute((trx) => trx.insertInto('settings').values({ key: 'too-big', value: 'x'.repeat(256 * 1024) }).execute())
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(failed, 'the insert was to fail').not.toBeNull();
    expect(String(failed)).not.toMatch(/no transaction is active/);
    expect(isDiskFull(failed)).toBe(true);
    await sql.raw(`PRAGMA max_page_count = ${2 ** 30}`).execute(handle.db);
    await handle.db.transaction().execute((trx) => trx.insertInto('settings').values({ key: 'fits', value: 'x' }).execute());
    expect(await handle.db.selectFrom('settings').select('key').where('key', 'in', ['too-big', 'fits']).execute()).toEqual([{ key: 'fits' }]);
  });

  it('the WAL is truncated back to 16 MiB after a checkpoint; reads go through a memory map of 256 MiB at most', async () => {
    expect(await pragma('journal_mode')).toBe('wal');
    expect(await pragma('journal_size_limit')).toBe(16 * MiB);
    expect(await pragma('mmap_size')).toBe(256 * MiB);
  });
});

describe('the space reserve and the pid file', () => {
  const dirs = tempDirs('docsearch-reliability-daemon');
  let d: Daemon;
  beforeAll(async () => {
    const dataDir = join(dirs.make('data'), 'data');
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // What a start on a full disk leaves: the pid file made, its pid never written.
    writeFileSync(join(dataDir, 'daemon.pid'), '');
    d = await startDaemon({ dataDir });
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
    dirs.removeAll();
  });

  it('a daemon starts beside an empty pid file, keeps an 8 MiB space-reserve, and the health check makes it again when gone', async () => {
    const reserve = join(d.dataDir, 'space-reserve');
    await waitFor(() => (statSync(reserve, { throwIfNoEntry: false })?.size === 8 * MiB ? true : undefined), 10_000, 'the reserve made at start');
    rmSync(reserve);
    const health = await api(d, '/api/v1/health');
    expect(health.body.components.storage.status).toBe('up');
    await waitFor(() => (statSync(reserve, { throwIfNoEntry: false })?.size === 8 * MiB ? true : undefined), 10_000, 'the reserve made again by the health check');
  });
});

describe('memory under load', () => {
  it('LanceDB caches: 64 MiB of metadata; for indexes three times the live indexes on disk, at least 256 MiB', () => {
    expect(DEFAULT_CACHE).toEqual({ indexBytes: 256 * MiB, metadataBytes: 64 * MiB });
    expect(cacheNeeded(100 * MiB)).toBe(300 * MiB);
  });

  it('the query-vector cache holds the last 512 vectors', () => {
    const cache = new QueryVectorCache();
    const vector = new Float32Array(384);
    for (let i = 0; i < 600; i++) cache.set('builtin', 'u1', `query ${i}`, vector);
    expect(cache.size).toBe(512);
    expect(cache.get('builtin', 'u1', 'query 87')).toBeUndefined();
    expect(cache.get('builtin', 'u1', 'query 88')).toBe(vector);
  });
});
