/**
 * One migration from start to end: open both libraries under their locks, decide what the target is (new, a
 * resumption, already done, or something else: refused), copy, verify, and record the outcome in the target.
 * Returns the summary `--json` prints; a verification that finds differences still returns it, with `ok` false.
 */
import { operatorAudit } from '../operator-audit.js';
import { readIndexInfo } from '../../store/lancedb/chunk-index-info.js';
import { readStoredIndex } from '../../store/lancedb/table-reader.js';
import { clearLeftovers, countKept, LIBRARY_TABLES, libraryBirth, referencedOriginals } from '../../store/sql/library-copy.js';
import { copyIndex, copyOriginals, copySecretsKey, copyTables, type CopyContext, type IndexCopy, type OriginalsCount, type SourceProblems, type TableCount } from './copy.js';
import { checkDistinct, databaseLocation, type LibrarySpec, openLibrary, type OpenedLibrary, storageLocation } from './libraries.js';
import { CliError } from '../../terminal/errors.js';
import type { Progress } from './progress.js';
import { type MigrationRecord, targetState, writeRecord } from './record.js';
import { verify } from './verify.js';

export interface MigrateOptions {
  source: LibrarySpec;
  target: LibrarySpec;
  env: NodeJS.ProcessEnv;
  dryRun: boolean;
  batchRows: number;
  progress: Progress;
  now?: () => number;
}

export interface MigrationSummary {
  source: string;
  target: string;
  /** fresh: nothing was there; resumed: an unfinished run of this migration was; done: it had finished already. */
  target_state: 'fresh' | 'resumed' | 'done';
  dry_run: boolean;
  /** Sessions, codes and tokens that expired before this time stayed behind (RFC 3339). */
  cutoff: string;
  tables: { name: string; rows: number }[];
  originals: { files: number; bytes: number; copied: number; copied_bytes: number; missing_in_source: string[]; damaged_in_source: string[] } | null;
  index: { embedder_id: string | null; dimension: number | null; chunks: IndexSummary | null; chunk_windows: IndexSummary | null } | null;
  verification: { ok: boolean; differences: string[] } | null;
  /** The id of the secrets key the target has now (server/secrets-key.ts), or null: the source had none. */
  secrets_key_id?: string | null;
  seconds: number;
  /** Originals' bytes plus the index rows' bytes, moved by this run. */
  bytes_moved: number;
}

interface IndexSummary {
  rows: number;
  documents: number;
  copied: number;
  copied_bytes: number;
}

const indexSummary = (c: IndexCopy['chunks']): IndexSummary | null => (c ? { rows: c.rows, documents: c.documents, copied: c.copied, copied_bytes: c.copiedBytes } : null);

/** What a dry run reports: what the source holds that a migration would copy. */
async function inventory(source: OpenedLibrary, cutoff: number): Promise<Pick<MigrationSummary, 'tables' | 'originals' | 'index'>> {
  const db = source.database!.db;
  const tables = [];
  for (const table of LIBRARY_TABLES) tables.push({ name: table.name, rows: await countKept(db, table, cutoff) });
  const originals = await referencedOriginals(db);
  const stored = await readStoredIndex((await source.storage()).vectors);
  const count = async (reader: typeof stored.chunks): Promise<IndexSummary | null> =>
    reader ? { rows: await reader.countRows(), documents: (await reader.documentCounts()).size, copied: 0, copied_bytes: 0 } : null;
  return {
    tables,
    originals: { files: originals.length, bytes: originals.reduce((n, o) => n + o.size, 0), copied: 0, copied_bytes: 0, missing_in_source: [], damaged_in_source: [] },
    index: { embedder_id: stored.info?.embedderId ?? null, dimension: stored.info?.dimension ?? null, chunks: await count(stored.chunks), chunk_windows: await count(stored.windows) },
  };
}

export async function runMigration(opts: MigrateOptions): Promise<MigrationSummary> {
  const now = opts.now ?? Date.now;
  const started = now();
  checkDistinct(opts.source, opts.target, opts.env);
  const source = await openLibrary('source', opts.source, opts.env, { dryRun: opts.dryRun });
  let target: OpenedLibrary | undefined;
  try {
    // A source index of a newer format is refused before the target is made or written (docs/operations.md, Upgrading).
    await readIndexInfo((await source.storage()).vectors);
    target = await openLibrary('target', opts.target, opts.env, { dryRun: opts.dryRun });
    const storage = storageLocation(opts.target, opts.env);
    const state = await targetState(target, { library: source.label, born: await libraryBirth(source.database!.db) }, storage);
    const base = { source: source.label, target: target.label, dry_run: opts.dryRun, tables: [], originals: null, index: null, verification: null, bytes_moved: 0 };
    const seconds = () => Math.round((now() - started) / 100) / 10;
    if (state.kind === 'done') {
      opts.progress.line(`${target.label} already holds this library, copied and verified ${new Date(state.record.verifiedAt ?? state.record.startedAt).toISOString()}: nothing to do`);
      return { ...base, target_state: 'done', cutoff: new Date(state.record.cutoff).toISOString(), seconds: seconds() };
    }
    const record: MigrationRecord =
      state.kind === 'resume' ? state.record : { source: { library: source.label, born: await libraryBirth(source.database!.db) }, storage, cutoff: started, startedAt: started, state: 'copying' };
    const targetState_ = state.kind === 'resume' ? 'resumed' : 'fresh';
    if (opts.dryRun) {
      opts.progress.line(`dry run: nothing is written. ${targetState_ === 'resumed' ? `The target holds an unfinished copy of this library, started ${new Date(record.startedAt).toISOString()}: a run would resume it.` : 'The target is empty.'}`);
      return { ...base, ...(await inventory(source, record.cutoff)), target_state: targetState_, cutoff: new Date(record.cutoff).toISOString(), seconds: seconds() };
    }
    opts.progress.line(`${targetState_ === 'resumed' ? 'resuming the copy' : 'copying'} of ${source.label} into ${target.label}`);
    if (state.kind === 'fresh') {
      await clearLeftovers(target.database!.db);
      await writeRecord(target, record);
    }
    const ctx = { source, target, cutoff: record.cutoff, batchRows: opts.batchRows, progress: opts.progress, redo: record.redo };
    try {
      return await copyAndVerify(ctx, source, target, record, opts, { base, targetState_, seconds });
    } catch (err) {
      throw stoppedMidway(err, opts.source, opts.target);
    }
  } finally {
    await target?.close();
    await source.close();
  }
}

/** The copy into a target that holds its record, and the check: from here on a failure leaves a copy to go on with. */
async function copyAndVerify(
  ctx: CopyContext,
  source: OpenedLibrary,
  target: OpenedLibrary,
  record: MigrationRecord,
  opts: MigrateOptions,
  at: { base: Omit<MigrationSummary, 'target_state' | 'cutoff' | 'seconds'>; targetState_: 'fresh' | 'resumed'; seconds: () => number },
): Promise<MigrationSummary> {
  const { base, targetState_, seconds } = at;
  const now = opts.now ?? Date.now;
  const tables: TableCount[] = await copyTables(ctx);
  const problems: SourceProblems = { missing: [], damaged: [] };
  const originals: OriginalsCount = await copyOriginals(ctx, problems);
  for (const sha of problems.missing) opts.progress.line(`warning: original ${sha} is missing in the source: its documents are copied without it`);
  for (const sha of problems.damaged) opts.progress.line(`warning: original ${sha} is damaged in the source (its bytes no longer hash to their name): not copied`);
  const index = await copyIndex(ctx);
  const secretsKeyId = await copySecretsKey(ctx, opts.env);
  const checked = await verify(source, target, { cutoff: record.cutoff, problems, progress: opts.progress });
  if (checked.ok) {
    delete record.redo;
    await writeRecord(target, { ...record, state: 'verified', verifiedAt: now() });
    // In the copy, once it is verified (a later run finds it done and leaves it as it is).
    await operatorAudit(target.database!.db, 'migrate').record({ type: 'migrate.completed', details: { from: source.label, to: target.label, originals: originals.files, chunks: index.chunks?.rows ?? null } });
  } else await writeRecord(target, { ...record, redo: checked.redo });
  return {
    ...base,
    target_state: targetState_,
    cutoff: new Date(record.cutoff).toISOString(),
    tables,
    originals: { files: originals.files, bytes: originals.bytes, copied: originals.copied, copied_bytes: originals.copiedBytes, missing_in_source: problems.missing, damaged_in_source: problems.damaged },
    index: { embedder_id: index.embedderId, dimension: index.dimension, chunks: indexSummary(index.chunks), chunk_windows: indexSummary(index.windows) },
    verification: { ok: checked.ok, differences: checked.differences },
    secrets_key_id: secretsKeyId,
    seconds: seconds(),
    bytes_moved: originals.copiedBytes + (index.chunks?.copiedBytes ?? 0) + (index.windows?.copiedBytes ?? 0),
  };
}

/** A PostgreSQL server that stopped answering, or ended the session (57P01 admin shutdown…; class 08, connection exceptions). */
const CONNECTION_LOST = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH|57P0\d|08...)$/;

/**
 * A copy that failed once the target holds the record of it: said as such, with the way on (the same command goes on
 * where it stopped). A lost database connection names the database: the driver's own words name only an address.
 */
function stoppedMidway(err: unknown, source: LibrarySpec, target: LibrarySpec): unknown {
  if (err instanceof CliError) return err;
  const e = err as { code?: string; message?: string };
  const lost = (e.code && CONNECTION_LOST.test(e.code)) || /Connection terminated/i.test(e.message ?? '');
  const databases = [source, target].filter((s) => s.database);
  const which = databases.length === 1 ? `the ${databases[0] === source ? 'source' : 'target'} database ${databaseLocation(databases[0]!)}` : 'a database';
  const what = lost ? `the connection to ${which} was lost (${e.message ?? e.code})` : (e.message ?? String(err));
  return new CliError(`the copy stopped midway: ${what}`, 1, `the target keeps what was copied: run the same command again${lost ? ' once the database answers' : ''}, and it goes on where it stopped`);
}
