/**
 * A library's relational state copied between databases (`docsearch migrate`), either engine to either. Each
 * table is read in key order a page at a time and written with every column as it is (ids, times, hashes), so
 * accounts, keys, sessions and tokens stay valid and nothing is renumbered. Writes are upserts and rows the source
 * lacks are removed, so a run that was interrupted, started again, ends in the same state, never in duplicates.
 */
import { DEFAULT_MIGRATION_TABLE, type Kysely, sql } from 'kysely';
import { CLI_CLIENT_ID } from './oauth-clients.js';
import { type Cell, RowDigest, rowHasher } from '../row-digest.js';
import { dialectOf } from './dialect.js';
import type { Database } from './schema.js';

type AnyDb = Kysely<any>;
type Row = Record<string, Cell>;

/** The settings row in which a target keeps its migration's record (never copied, never compared). */
export const MIGRATION_SETTING = 'migration';

export interface LibraryTable {
  name: keyof Database & string;
  /** The primary key (one column in every table). */
  key: string;
  /** The rows a moved library keeps, given the migration's cutoff time (absent: all), and why. */
  keep?: { where: (cutoff: number) => [column: string, op: '>' | '!=', value: string | number]; why: string };
}

/**
 * Every table of a library, parents before children (foreign keys). What a move drops is what could not be used
 * after it anyway: finished jobs, and sessions, codes and tokens that have expired by the time it started. Live
 * ones are kept so that nobody is logged out and no application loses its grant by the move: a web session
 * goes on, an access token works until its hour is up, a refresh token until its 30 days are, a code issued a
 * minute before can still be redeemed; a used code or a rotated refresh token stays recorded, so presenting it
 * again is still caught as reuse. Login throttling moves too (a locked-out address stays locked).
 */
export const LIBRARY_TABLES: readonly LibraryTable[] = [
  { name: 'users', key: 'id' },
  { name: 'projects', key: 'id' },
  { name: 'oauth_clients', key: 'id' },
  { name: 'oauth_grants', key: 'id' },
  { name: 'api_keys', key: 'id' },
  { name: 'documents', key: 'id' },
  { name: 'sources', key: 'id' },
  { name: 'source_items', key: 'id' },
  { name: 'jobs', key: 'id', keep: { where: () => ['state', '!=', 'done'], why: 'finished jobs are history; pending, running and failed ones (a retry reopens it) move' } },
  { name: 'job_turns', key: 'user_id' },
  { name: 'sessions', key: 'id_hash', keep: { where: (cutoff) => ['expires_at', '>', cutoff], why: 'expired web sessions stay behind' } },
  { name: 'setup_tokens', key: 'token_hash' },
  { name: 'login_attempts', key: 'key' },
  { name: 'oauth_codes', key: 'code_hash', keep: { where: (cutoff) => ['expires_at', '>', cutoff], why: 'expired authorization codes stay behind' } },
  { name: 'oauth_tokens', key: 'token_hash', keep: { where: (cutoff) => ['expires_at', '>', cutoff], why: 'expired access and refresh tokens stay behind' } },
  { name: 'settings', key: 'key' },
  { name: 'groups', key: 'id' },
  { name: 'group_members', key: 'id' },
  { name: 'project_members', key: 'id' },
  { name: 'invites', key: 'token_hash' },
  { name: 'totp_secrets', key: 'user_id' },
  { name: 'recovery_codes', key: 'code_hash' },
  { name: 'passkeys', key: 'id' },
  { name: 'audit_events', key: 'id' },
  { name: 'identities', key: 'id' },
  { name: 'notices', key: 'id' },
  { name: 'mail_outbox', key: 'id' },
  { name: 'password_resets', key: 'token_hash', keep: { where: (cutoff) => ['expires_at', '>', cutoff], why: 'expired password reset links stay behind' } },
  { name: 'known_devices', key: 'id' },
  { name: 'labels', key: 'id' },
  { name: 'document_labels', key: 'id' },
  { name: 'document_metadata', key: 'id' },
  { name: 'saved_searches', key: 'id' },
];

/** SQLite takes at most 32,766 parameters in a statement (PostgreSQL 65,535): rows per insert stay under it. */
const MAX_PARAMETERS = 30_000;

/**
 * The table's rows in key order, `size` at a time, but the migration's own record: those a move keeps (`keep`
 * given: the source), or all (null: the target, which holds only what was copied).
 */
async function* pages(db: AnyDb, table: LibraryTable, keep: { cutoff: number } | null, size: number, columns?: string[]): AsyncIterable<Row[]> {
  let last: Cell | undefined;
  for (;;) {
    let q = (columns ? db.selectFrom(table.name).select(columns) : db.selectFrom(table.name).selectAll()).orderBy(table.key).limit(size);
    if (keep && table.keep) q = q.where(...table.keep.where(keep.cutoff));
    if (table.name === 'settings') q = q.where('key', '!=', MIGRATION_SETTING);
    if (last !== undefined) q = q.where(table.key, '>', last);
    const rows = (await q.execute()) as Row[];
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < size) return;
    last = rows.at(-1)![table.key];
  }
}

/** Row count and checksum of the rows a move copies (source) or holds (target). */
export async function tableDigest(db: AnyDb, table: LibraryTable, side: 'source' | 'target', cutoff: number): Promise<RowDigest> {
  const digest = new RowDigest();
  const hash = rowHasher();
  for await (const rows of pages(db, table, side === 'source' ? { cutoff } : null, 1000)) {
    for (const row of rows) digest.addHash(hash(Object.keys(row).sort().map((c) => [c, row[c]] as const)));
  }
  return digest;
}

/**
 * Makes the target's table hold exactly the source's rows (those a move keeps): upserts every one, then deletes
 * target rows the source does not have. `onRows` hears each page written.
 */
export async function copyTable(source: AnyDb, target: AnyDb, table: LibraryTable, opts: { cutoff: number; batchRows: number; onRows?: (n: number) => void }): Promise<number> {
  const keys = new Set<Cell>();
  let copied = 0;
  for await (const rows of pages(source, table, { cutoff: opts.cutoff }, opts.batchRows)) {
    const columns = Object.keys(rows[0]!);
    const perInsert = Math.max(1, Math.min(rows.length, Math.floor(MAX_PARAMETERS / columns.length)));
    await target.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += perInsert) {
        const slice = rows.slice(i, i + perInsert);
        const others = columns.filter((c) => c !== table.key);
        await trx
          .insertInto(table.name)
          .values(slice)
          .onConflict((oc) => (others.length ? oc.column(table.key).doUpdateSet((eb) => Object.fromEntries(others.map((c) => [c, eb.ref(`excluded.${c}`)]))) : oc.column(table.key).doNothing()))
          .execute();
      }
    });
    for (const row of rows) keys.add(row[table.key]);
    copied += rows.length;
    opts.onRows?.(rows.length);
  }
  const extra: Cell[] = [];
  for await (const rows of pages(target, table, null, 1000, [table.key])) {
    for (const row of rows) if (!keys.has(row[table.key])) extra.push(row[table.key]);
  }
  for (let i = 0; i < extra.length; i += 500) await target.deleteFrom(table.name).where(table.key, 'in', extra.slice(i, i + 500)).execute();
  const past = table.name === 'jobs' ? dialectOf(target).identityPast('jobs', 'id') : null;
  if (past) await past.execute(target);
  return copied;
}

/** What makes a database hold a library: its people, their content, their applications. */
export async function libraryContents(db: AnyDb): Promise<{ users: number; documents: number; clients: number }> {
  const count = async (table: keyof Database, where?: (q: any) => any) => {
    let q = db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
    if (where) q = where(q);
    return Number(((await q.executeTakeFirst()) as { n: number } | undefined)?.n ?? 0);
  };
  return {
    users: await count('users'),
    documents: await count('documents'),
    // The CLI's built-in client is made by the migrations of every database.
    clients: await count('oauth_clients', (q) => q.where('id', '!=', CLI_CLIENT_ID)),
  };
}

/**
 * Rows a database with no library may still hold (a daemon started on it once issued a setup link, a visitor got
 * a session): removed before a library is copied in, so the target ends up holding exactly the source's.
 */
export async function clearLeftovers(db: AnyDb): Promise<void> {
  for (const table of ['sessions', 'setup_tokens', 'login_attempts'] as const) await db.deleteFrom(table).execute();
}

/** When the library's database was made (its first migration ran): tells two libraries at one address apart. */
export async function libraryBirth(db: AnyDb): Promise<string | null> {
  const row = await db.selectFrom(DEFAULT_MIGRATION_TABLE).select('timestamp').orderBy('name').limit(1).executeTakeFirst();
  return row ? String((row as { timestamp: unknown }).timestamp) : null;
}

export async function readSetting(db: AnyDb, key: string): Promise<string | null> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row ? (row as { value: string }).value : null;
}

export async function writeSetting(db: AnyDb, key: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}

/** Whether the database has the library's tables at all (a new, empty database has none until it is migrated). */
export async function hasLibrarySchema(db: AnyDb): Promise<boolean> {
  try {
    await sql`select 1 from users limit 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

/** Every original the library's documents use: its hash and size, in hash order. */
export async function referencedOriginals(db: AnyDb): Promise<{ sha256: string; size: number }[]> {
  const rows = await db
    .selectFrom('documents')
    .select((eb) => ['sha256', eb.fn.max('size_bytes').as('size')])
    .groupBy('sha256')
    .orderBy('sha256')
    .execute();
  return rows.map((r) => ({ sha256: r.sha256 as string, size: Number(r.size) }));
}

/** Rows of the table a move copies (see LibraryTable.keep). */
export async function countKept(db: AnyDb, table: LibraryTable, cutoff: number): Promise<number> {
  let q = db.selectFrom(table.name).select((eb) => eb.fn.countAll<number>().as('n'));
  if (table.keep) q = q.where(...table.keep.where(cutoff));
  if (table.name === 'settings') q = q.where('key', '!=', MIGRATION_SETTING);
  return Number(((await q.executeTakeFirst()) as { n: number } | undefined)?.n ?? 0);
}

/**
 * A copy into this database that has not finished (null when none): what it copies from, and the command that
 * copies (`migrate`, or `restore` from a backup). Such a library is only partly there, so the daemon must not serve it.
 */
export async function unfinishedMigration(db: AnyDb): Promise<{ from: string; command: 'migrate' | 'restore' } | null> {
  const text = await readSetting(db, MIGRATION_SETTING);
  if (!text) return null;
  const record = JSON.parse(text) as { state?: string; command?: 'restore'; source?: { library?: string } };
  return record.state === 'verified' ? null : { from: record.source?.library ?? 'another library', command: record.command ?? 'migrate' };
}
