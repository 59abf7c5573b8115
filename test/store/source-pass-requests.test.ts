/**
 * A request for a pass (or a confirmation of held deletions) that another replica commits while this one records
 * the end of a pass is not lost. PostgreSQL only: the race is between two connections, which SQLite's one daemon
 * per data directory does not have. The request is held in an open transaction of its own until the end's write
 * waits behind it, then committed: the end must not write over it with what it read before. Changes made earlier in
 * the pass (a new schedule, a request, a confirmation) are checked on both engines.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/sql/database.js';
import { openPostgres } from '../../src/store/sql/postgres.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { type PassResult, SourceStore } from '../../src/store/sql/sources.js';
import { UserStore } from '../../src/store/sql/users.js';
import { waitFor } from '../helpers/eventually.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { describeEachEngine, newPostgresDatabase } from '../helpers/store-dialects.js';

const SKIP = postgresUnavailable();
const HOUR = 3_600_000;
const RESULT: PassResult = { listed: 1, added: 0, changed: 0, deleted: 0, unchanged: 1, failed: 0, deferred: 0, ms: 5 };

describe.skipIf(SKIP !== null)(`a pass's end and a request committed meanwhile, on PostgreSQL${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let url: string;
  let handle: DatabaseHandle;
  let t = Date.UTC(2030, 0, 1);
  const now = () => ++t;
  let store: SourceStore;
  let projectId: string;
  let userId: string;

  beforeAll(async () => {
    url = await newPostgresDatabase();
    handle = await openPostgres(url);
    store = new SourceStore(handle.db, now);
    userId = (await new UserStore(handle.db, now).create('sources@example.com', 'h'))!.id;
    projectId = (await new ProjectStore(handle.db, now).ensureDefault(userId)).id;
  });
  afterAll(async () => {
    await handle?.close();
  });

  /** Begins a pass of a new source, then ends it while a request made on another connection waits to commit. */
  async function endWhileRequested(id: string, request: { confirm: boolean }, end: { confirmed: boolean }): Promise<{ requestedAt: number }> {
    await store.create({ id, projectId, userId, kind: 's3', url: 's3://bucket/x', everyMs: HOUR, options: {}, sealedSecrets: null });
    const started = (await store.beginPass(id, 'replica-a', true))!;
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      // Another replica's requestSync, made while the pass runs and committed only once the end's write waits on it.
      const requestedAt = now();
      await other.query('begin');
      await other.query(`update sources set next_sync_at = $1, requested_at = $1, updated_at = $1${request.confirm ? ", status = 'active', confirm_deletions = 1" : ''} where id = $2`, [requestedAt, id]);
      const ending = store.endPass(id, started.syncingSince!, { cursor: null, result: RESULT, error: null, failures: 0, held: null, nextSyncAt: now() + HOUR, confirmed: end.confirmed });
      await waitFor(
        async () => {
          const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike 'update "sources"%'`.execute(handle.db);
          return rows[0]!.n > 0 ? true : undefined;
        },
        10_000,
        "the end's write waiting for the request",
      );
      await other.query('commit');
      await ending;
      return { requestedAt };
    } finally {
      await other.end();
    }
  }

  it('keeps a sync request made as the end is written: the source is due again at once', async () => {
    const { requestedAt } = await endWhileRequested('src_request_kept', { confirm: false }, { confirmed: false });
    const after = (await store.getById('src_request_kept'))!;
    expect(after.syncingOn).toBeNull();
    expect(after.lastSyncAt).not.toBeNull();
    // Due no later than now: the scheduler runs the pass asked for (it was pushed an hour out before the fix).
    expect(after.nextSyncAt).toBeLessThanOrEqual(t);
    expect(after.requestedAt).toBe(requestedAt);
    expect((await store.due(10)).map((s) => s.id)).toContain('src_request_kept');
  });

  it('keeps a confirmation of held deletions made as the end of a pass without one is written', async () => {
    await endWhileRequested('src_confirm_kept', { confirm: true }, { confirmed: false });
    const after = (await store.getById('src_confirm_kept'))!;
    expect(after.confirmDeletions).toBe(true);
    expect(after.nextSyncAt).toBeLessThanOrEqual(t);
  });

});

describeEachEngine("a pass's end and changes made while it ran", ({ handle }) => {
  let t = Date.UTC(2031, 0, 1);
  const now = () => ++t;
  let store: SourceStore;
  let projectId: string;
  let userId: string;

  beforeAll(async () => {
    store = new SourceStore(handle().db, now);
    userId = (await new UserStore(handle().db, now).create('sources@example.com', 'h'))!.id;
    projectId = (await new ProjectStore(handle().db, now).ensureDefault(userId)).id;
  });

  const create = (id: string, everyMs: number) => store.create({ id, projectId, userId, kind: 's3', url: `s3://bucket/${id}`, everyMs, options: {}, sealedSecrets: null });

  it('spends the confirmation a pass ran with, even when a plain request came in meanwhile', async () => {
    await create('src_confirm_spent', HOUR);
    await store.requestSync('src_confirm_spent', true);
    const started = (await store.beginPass('src_confirm_spent', 'replica-a', true))!;
    expect(started.confirmDeletions).toBe(true);
    await store.requestSync('src_confirm_spent', false);
    await store.endPass('src_confirm_spent', started.syncingSince!, { cursor: null, result: RESULT, error: null, failures: 0, held: null, nextSyncAt: now() + HOUR, confirmed: true });
    const after = (await store.getById('src_confirm_spent'))!;
    expect(after.confirmDeletions).toBe(false);
    expect(after.nextSyncAt).toBeLessThanOrEqual(t);
  });

  it('counts a schedule shortened while the pass ran from its end, not the one the pass began with', async () => {
    const DAY = 24 * HOUR;
    await create('src_schedule', DAY);
    const started = (await store.beginPass('src_schedule', 'replica-a', true))!;
    expect(await store.update('src_schedule', { everyMs: HOUR })).not.toBeNull();
    // The scheduler reckons the next pass from the schedule it read at the start: a day.
    await store.endPass('src_schedule', started.syncingSince!, { cursor: null, result: RESULT, error: null, failures: 0, held: null, nextSyncAt: now() + DAY, confirmed: false });
    const ended = t;
    const after = (await store.getById('src_schedule'))!;
    expect(after.everyMs).toBe(HOUR);
    expect(after.nextSyncAt).toBeGreaterThan(ended);
    expect(after.nextSyncAt).toBeLessThanOrEqual(ended + HOUR);
  });
});
