import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import * as m001 from './001-accounts-projects.js';
import * as m002 from './002-documents-jobs.js';
import * as m003 from './003-oauth.js';
import * as m004 from './004-document-paths.js';
import * as m005 from './005-job-released.js';
import * as m006 from './006-job-turns.js';
import * as m007 from './007-job-origin.js';
import * as m008 from './008-document-list-indexes.js';
import * as m009 from './009-oauth-self-registration.js';
import * as m010 from './010-session-once.js';
import * as m011 from './011-document-attachments.js';
import * as m012 from './012-sharing.js';
import * as m013 from './013-oauth-loopback-paths.js';
import * as m014 from './014-sources.js';
import * as m015 from './015-two-factor-audit.js';
import * as m016 from './016-trash.js';
import * as m017 from './017-identities.js';
import * as m018 from './018-api-key-expiry.js';
import * as m019 from './019-team-operations.js';
import * as m020 from './020-mail.js';
import * as m021 from './021-languages.js';
import * as m022 from './022-labels-filters.js';
import * as m023 from './023-session-confirmed.js';
import * as m025 from './025-quotas.js';
import * as m028 from './028-ocr-languages.js';
import * as m029 from './029-project-counts.js';
import * as m030 from './030-identity-per-provider.js';
import { NewerLibraryError } from '../../../core/newer-library.js';

/**
 * Migrations are listed here explicitly (not read from disk) so the built package needs no
 * file-system discovery. Append only: a released migration never changes what it does (001–004 learned the
 * PostgreSQL dialect, leaving the SQLite schema they make as it was). The same list runs on both engines.
 */
const MIGRATIONS: Record<string, Migration> = {
  '001-accounts-projects': m001,
  '002-documents-jobs': m002,
  '003-oauth': m003,
  '004-document-paths': m004,
  '005-job-released': m005,
  '006-job-turns': m006,
  '007-job-origin': m007,
  '008-document-list-indexes': m008,
  '009-oauth-self-registration': m009,
  '010-session-once': m010,
  '011-document-attachments': m011,
  '012-sharing': m012,
  '013-oauth-loopback-paths': m013,
  '014-sources': m014,
  '015-two-factor-audit': m015,
  '016-trash': m016,
  '017-identities': m017,
  '018-api-key-expiry': m018,
  '019-team-operations': m019,
  '020-mail': m020,
  '021-languages': m021,
  '022-labels-filters': m022,
  '023-session-confirmed': m023,
  '025-quotas': m025,
  '028-ocr-languages': m028,
  '029-project-counts': m029,
  '030-identity-per-provider': m030,
};

/** The last migration applied to a database (null: none, or no migration table yet). */
export async function lastApplied(db: Kysely<any>): Promise<string | null> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((t) => t.name === 'kysely_migration')) return null;
  const rows = (await db.selectFrom('kysely_migration').select('name').execute()) as { name: string }[];
  return rows.map((r) => r.name).sort().at(-1) ?? null;
}

/** The number of a migration's name (`010-session-once` → 10). */
const numberOf = (name: string): number => Number.parseInt(name, 10);

/** The schema this build writes: its last migration's number. */
export const KNOWN_SCHEMA = Math.max(...Object.keys(MIGRATIONS).map(numberOf));

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};

/**
 * Refuses a database holding a migration this build does not know (written by a newer release, or by a build of
 * another line): Kysely's Migrator would fail on it only after taking its lock and making its tables, and code
 * that does not know a column must not write rows. Reads only, before anything else touches the database.
 */
export async function refuseNewerSchema(db: Kysely<any>): Promise<void> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((t) => t.name === 'kysely_migration')) return;
  const rows = await db.selectFrom('kysely_migration').select('name').execute();
  const unknown = (rows as { name: string }[]).map((r) => r.name).filter((name) => !(name in MIGRATIONS));
  if (unknown.length === 0) return;
  const found = Math.max(...unknown.map(numberOf).filter((n) => Number.isInteger(n)), KNOWN_SCHEMA);
  throw new NewerLibraryError('schema', found, KNOWN_SCHEMA, `; unknown migrations: ${unknown.sort().join(', ')}`);
}

/**
 * Runs pending migrations: one list for both engines, under Kysely's Migrator, whose lock (an advisory lock on
 * PostgreSQL) lets replicas that start together migrate once: the first runs them, the others wait and then find
 * nothing left to do.
 */
export async function migrate(db: Kysely<any>, upTo?: string): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await (upTo ? migrator.migrateTo(upTo) : migrator.migrateToLatest());
  if (!error) return;
  const failed = results?.find((r) => r.status === 'Error')?.migrationName;
  // Before any migration ran (no connection, no lock): the error as it is.
  if (!failed) throw error;
  throw new Error(`database migration ${failed} failed: ${(error as Error).message}`, { cause: error });
}
