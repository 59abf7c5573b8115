/**
 * The two libraries a migration joins, as the flags name them, and opening each the way the daemon would (the
 * same database and storage code), with the lock that keeps everyone else out while it runs: the data-dir lock
 * where a data directory holds part of the library (no daemon runs there meanwhile), the library lock on a
 * PostgreSQL database (no replica runs on it meanwhile; see store/library-lock.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliError, UsageError } from '../../terminal/errors.js';
import type { Lease } from '../../store/coordination.js';
import { LIBRARY_LOCK } from '../../store/library-lock.js';
import { LocalObjectStore } from '../../store/objects/local.js';
import { describeS3, parseS3Location, StorageConfigError } from '../../store/objects/location.js';
import type { ObjectStore } from '../../store/objects/object-store.js';
import { type DatabaseHandle, sqlitePath } from '../../store/sql/database.js';
import { openDatabase } from '../../store/sql/open-database.js';
import { databaseUrlProblem, redactDatabaseUrl } from '../../store/sql/database-url.js';
import { hasLibrarySchema, libraryContents, MIGRATION_SETTING, readSetting } from '../../store/sql/library-copy.js';
import { migrate } from '../../store/sql/migrations/index.js';
import { advisoryLockHolders } from '../../store/sql/pg-locks.js';
import { lockDataDir } from '../../server/data-dir-lock.js';
import { within } from '../../core/path-within.js';
import { directoryToMake, existingDirectory, looksLikeUrl } from '../option-paths.js';
import { openStorage, type Storage } from '../../server/storage.js';
import { databaseUnreachable, storageUnreachable } from './unreachable.js';
import { notWritable } from '../backup/not-writable.js';

/** Where a library lives: a data directory, with its database and/or storage elsewhere (shared mode). */
export interface LibrarySpec {
  /** Holds the SQLite database unless `database` is set, and the index and originals unless `storage` is. */
  dataDir?: string | undefined;
  /** A PostgreSQL URL. */
  database?: string | undefined;
  /** s3://bucket/prefix. */
  storage?: string | undefined;
}

export type Side = 'source' | 'target';
const FLAG = { source: 'from', target: 'to' } as const;

/** Checks a side's flags; usage errors (exit 2) name the flag. */
export function checkSpec(side: Side, spec: LibrarySpec, env: NodeJS.ProcessEnv): LibrarySpec {
  const f = FLAG[side];
  if (!spec.dataDir && !spec.database) throw new UsageError(`name the ${side} library's database: --${f} <data-dir> (embedded) or --${f}-database <url> (shared mode)`, 'see `docsearch migrate --help`');
  if (!spec.dataDir && !spec.storage) throw new UsageError(`name the ${side} library's index and originals: --${f} <data-dir> (embedded) or --${f}-storage s3://bucket/prefix (shared mode)`, 'see `docsearch migrate --help`');
  const problem = spec.database ? databaseUrlProblem(spec.database) : null;
  if (problem) throw new UsageError(`--${f}-database ${problem}`);
  if (spec.storage) {
    try {
      parseS3Location(spec.storage, env);
    } catch (err) {
      if (err instanceof StorageConfigError) throw new UsageError(`--${f}-storage: ${err.message}`);
      throw err;
    }
  }
  return { ...spec, dataDir: spec.dataDir ? dataDirOption(side, spec.dataDir) : undefined };
}

/** `--from`'s directory must be there (a library is in it), `--to`'s may be made; neither is a URL. */
function dataDirOption(side: Side, value: string): string {
  const f = FLAG[side];
  if (looksLikeUrl(value)) {
    if (!/^postgres(ql)?:\/\//i.test(value)) throw new UsageError(`--${f} takes a data directory, not ${JSON.stringify(redactDatabaseUrl(value))}: storage goes in --${f}-storage s3://bucket/prefix, a database in --${f}-database`);
    const problem = databaseUrlProblem(value);
    throw new UsageError(`--${f} takes a data directory; a database URL goes in --${f}-database${problem ? `, and this one ${problem}` : ` (with --${f}-storage s3://bucket/prefix)`}`);
  }
  if (side === 'source') return existingDirectory(`--${f}`, value);
  const dir = directoryToMake(`--${f}`, value);
  const unwritable = notWritable(dir);
  if (unwritable) throw new UsageError(`--${f}: ${dir} cannot be written: ${unwritable}`, 'copy into a directory on a writable disk; nothing was changed');
  return dir;
}

/** The database's place, for messages and for telling two libraries apart (never a password). */
export function databaseLocation(spec: LibrarySpec): string {
  return spec.database ? redactDatabaseUrl(spec.database) : sqlitePath(spec.dataDir!);
}

/** Where the index and originals live. */
export function storageLocation(spec: LibrarySpec, env: NodeJS.ProcessEnv): string {
  return spec.storage ? describeS3(parseS3Location(spec.storage, env)) : spec.dataDir!;
}

export const describeLibrary = (spec: LibrarySpec, env: NodeJS.ProcessEnv): string => {
  const db = databaseLocation(spec);
  const storage = storageLocation(spec, env);
  return spec.dataDir && !spec.database && !spec.storage ? spec.dataDir : `${db} + ${storage}`;
};

/** Refuses a migration whose two sides share a database or a storage location: it would copy onto itself. */
export function checkDistinct(source: LibrarySpec, target: LibrarySpec, env: NodeJS.ProcessEnv): void {
  const same = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
  if (same(databaseLocation(source), databaseLocation(target))) throw new UsageError(`the source and the target are the same database (${databaseLocation(source)})`);
  if (same(storageLocation(source, env), storageLocation(target, env))) throw new UsageError(`the source and the target are the same storage (${storageLocation(source, env)})`);
  // One library inside the other's data directory would go with it when that one is moved or removed.
  if (source.dataDir && target.dataDir && (within(source.dataDir, target.dataDir) || within(target.dataDir, source.dataDir))) {
    throw new UsageError(`--from ${source.dataDir} and --to ${target.dataDir} are inside one another: give each library a data directory of its own`);
  }
}

/** A library opened for a migration, its lock held. */
export interface OpenedLibrary {
  spec: LibrarySpec;
  label: string;
  /** Null for a target whose database does not exist yet (a dry run does not make it). */
  database: DatabaseHandle | null;
  /** Whether the database has the library's tables (false: new and empty). */
  schema: boolean;
  /** The root of its index (`lancedb/`) and originals (`files/`), for looking without opening. */
  root: () => Promise<ObjectStore>;
  /** Opens the index and the originals (made where missing); the same object on every call. */
  storage(): Promise<Storage>;
  close(): Promise<void>;
}

/**
 * Opens one side, holding its lock. The source must be a library; the target may be anything empty, and is made
 * (directory, database schema) unless `dryRun`. The source's schema is brought up to this version's, as `serve`
 * would do (nothing else in it is written). A dry run only reads the source, so it takes no lock there: it may look
 * at a library while its daemons serve it (what it counts is the library as of then).
 */
export async function openLibrary(side: Side, spec: LibrarySpec, env: NodeJS.ProcessEnv, opts: { dryRun: boolean }): Promise<OpenedLibrary> {
  const label = describeLibrary(spec, env);
  const closers: (() => Promise<void> | void)[] = [];
  const close = async () => {
    for (const fn of closers.reverse()) await fn();
  };
  try {
    const sqlite = !spec.database;
    if (side === 'source' && sqlite && !existsSync(sqlitePath(spec.dataDir!))) {
      throw new CliError(`${spec.dataDir} holds no docsearch library (there is no docsearch.db in it)`, 1, 'pass the --data-dir the daemon ran with, or --from-database for a shared-mode library');
    }
    let root: Promise<ObjectStore> | undefined;
    const rootStore = () =>
      (root ??= (async () => {
        if (!spec.storage) return new LocalObjectStore(spec.dataDir!);
        const { S3ObjectStore } = await import('../../store/objects/s3.js');
        const store = await S3ObjectStore.connect(parseS3Location(spec.storage, env));
        closers.push(() => store.close());
        return store;
      })());
    // A target without a library whose storage holds an index or originals is refused before anything is made in it
    // (its database file or schema): "nothing was changed" must hold. targetState() checks again, under the lock.
    const refuseTakenStorage = async () => {
      const taken = await storedKey(await rootStore()).catch((err: unknown) => {
        throw storageUnreachable(`the ${side} storage`, storageLocation(spec, env), err);
      });
      if (taken) throw new CliError(`the target storage ${storageLocation(spec, env)} already holds an index or originals (${taken})`, 1, 'copy into empty storage; nothing was changed');
    };
    if (side === 'target' && !opts.dryRun && sqlite && !existsSync(sqlitePath(spec.dataDir!)) && existsSync(spec.dataDir!)) await refuseTakenStorage();
    const readOnly = side === 'source' && opts.dryRun;
    // A dry run makes nothing in a target without a database, not even the lock's file: there is nothing to read there.
    const dirInUse = spec.dataDir && (sqlite || !spec.storage) && !readOnly && !(opts.dryRun && !existsSync(sqlitePath(spec.dataDir)));
    if (dirInUse) {
      if (side === 'target' && !opts.dryRun) mkdirSync(spec.dataDir!, { recursive: true, mode: 0o700 });
      if (existsSync(spec.dataDir!)) closers.push(lockDir(side, spec.dataDir!));
    }
    const makesNothing = side === 'target' && opts.dryRun && sqlite && !existsSync(sqlitePath(spec.dataDir!));
    let database: DatabaseHandle | null = null;
    if (!makesNothing) {
      database = await openDatabase({ url: spec.database, dataDir: spec.dataDir ?? '', migrate: false }).catch((err: unknown) => {
        throw databaseUnreachable(`the ${side} database`, databaseLocation(spec), `--${FLAG[side]}-database (or DOCSEARCH_${FLAG[side].toUpperCase()}_DATABASE_URL)`, err);
      });
      const db = database;
      closers.push(() => db.close());
      if (!sqlite && !readOnly) closers.push(await holdExclusively(side, db));
    }
    let schema = database ? await hasLibrarySchema(database.db) : false;
    if (side === 'source' && !schema) throw new CliError(`${databaseLocation(spec)} holds no docsearch library (it has none of its tables)`);
    if (side === 'target' && database && !schema && !sqlite && !opts.dryRun) await refuseTakenStorage();
    // A target holding a library is refused before its schema is brought up to this version's: an older release's
    // database would no longer open in that release. One holding this command's unfinished copy (its record) is
    // resumed or refused by targetState.
    if (side === 'target' && database && schema && !opts.dryRun && (await readSetting(database.db, MIGRATION_SETTING)) === null) await refuseHeldLibrary(database.db, label);
    if (database && !opts.dryRun) {
      await migrate(database.db).catch((err: unknown) => {
        throw new CliError(`could not bring the ${side} database ${databaseLocation(spec)} to this version's schema: ${(err as Error).message}`);
      });
      schema = true;
    }
    // Shared mode keeps nothing in a data directory; uploads being moved still pass through a local folder.
    let workDir = spec.dataDir;
    const ownWorkDir = () => {
      if (workDir) return workDir;
      const dir = mkdtempSync(join(tmpdir(), `docsearch-migrate-${side}-`));
      closers.push(() => rmSync(dir, { recursive: true, force: true }));
      return (workDir = dir);
    };
    let storage: Promise<Storage> | undefined;
    return {
      spec,
      label,
      database,
      schema,
      root: rootStore,
      storage: () =>
        (storage ??= (async () => {
          if (!database) throw new Error('the target database was not opened');
          const opened = await openStorage({ dataDir: ownWorkDir(), storage: spec.storage, indexRetentionHours: 1 }, env, { locks: database.locks, events: database.events }).catch(
            (err: unknown) => {
              throw storageUnreachable(`the ${side} storage`, storageLocation(spec, env), err);
            },
          );
          // Closers run last first: the storage closes before the database its shared tables hold locks in.
          closers.push(() => opened.close());
          return opened;
        })()),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The first key of an index or an original in `root` (not a temp file), or null. */
async function storedKey(root: ObjectStore): Promise<string | null> {
  for (const prefix of ['lancedb/', 'files/']) {
    for await (const key of root.list(prefix)) if (!key.startsWith('files/tmp/')) return key;
  }
  return null;
}

function lockDir(side: Side, dir: string): () => void {
  try {
    return lockDataDir(dir);
  } catch (err) {
    throw new CliError(
      `${(err as Error).message.replace(/; stop it or pick another --data-dir$/, '')}: stop it first`,
      1,
      side === 'source' ? 'a library must not change while it is copied' : 'nothing may use the target while a library is copied into it',
    );
  }
}

/** Refuses a target database that holds a library: accounts, documents or applications. */
export async function refuseHeldLibrary(db: DatabaseHandle['db'], label: string): Promise<void> {
  const held = await libraryContents(db);
  if (held.users + held.documents + held.clients > 0) {
    throw new CliError(
      `the target database ${label} already holds a library (${held.users} account(s), ${held.documents} document(s), ${held.clients} application(s))`,
      1,
      'copy into an empty database; nothing was changed',
    );
  }
}

/** Takes the library lock of a PostgreSQL database exclusively; refuses, naming them, while replicas hold it. */
async function holdExclusively(side: Side, database: DatabaseHandle): Promise<() => Promise<void>> {
  let lease: Lease | null;
  try {
    lease = await database.locks.tryAcquire(LIBRARY_LOCK);
  } catch (err) {
    throw new CliError(`could not reach the ${side} database ${database.location}: ${(err as Error).message}`);
  }
  if (lease) return () => lease.release();
  const holders = await advisoryLockHolders(database.db, LIBRARY_LOCK).catch(() => []);
  const who = holders.map((h) => `pid ${h.pid}${h.client ? ` at ${h.client}` : ''}`).join(', ');
  throw new CliError(
    `${holders.length || 'some'} docsearch process${holders.length === 1 ? ' is' : 'es are'} using the ${side} database ${database.location}${who ? ` (${who})` : ''}: stop every replica first`,
    1,
    side === 'source' ? 'a library must not change while it is copied' : 'nothing may use the target while a library is copied into it',
  );
}
