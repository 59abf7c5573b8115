/**
 * What a target remembers of the migration into it (a `settings` row, `migration`): which library it copies,
 * into which storage, the time that decides which sessions and tokens are still live, and whether it finished.
 * It is how a second run tells a resumption of the same migration from a target that holds something else.
 */
import { CliError } from '../../terminal/errors.js';
import { MIGRATION_SETTING, readSetting, writeSetting } from '../../store/sql/library-copy.js';
import { type OpenedLibrary, refuseHeldLibrary } from './libraries.js';

/** What the last verification found different: copied again by the next run. */
export interface Redo {
  documents: string[];
  windows: string[];
  originals: string[];
}

export interface MigrationRecord {
  /** The source as the flags named it, and when its database was made (two libraries at one path differ there). */
  source: { library: string; born: string | null };
  /** Where this migration put the index and originals. */
  storage: string;
  /** Sessions, codes and tokens that expire after this moved; fixed at the first run so every run copies the same rows. */
  cutoff: number;
  startedAt: number;
  state: 'copying' | 'verified';
  verifiedAt?: number;
  redo?: Redo;
}

export type TargetState = { kind: 'fresh' } | { kind: 'resume' | 'done'; record: MigrationRecord };

export async function readRecord(target: OpenedLibrary): Promise<MigrationRecord | null> {
  if (!target.database || !target.schema) return null;
  const text = await readSetting(target.database.db, MIGRATION_SETTING);
  return text ? (JSON.parse(text) as MigrationRecord) : null;
}

export async function writeRecord(target: OpenedLibrary, record: MigrationRecord): Promise<void> {
  await writeSetting(target.database!.db, MIGRATION_SETTING, JSON.stringify(record));
}

/** The first key under `prefix` in the store that is not a temp file, or null. */
async function firstKey(target: OpenedLibrary, prefix: string): Promise<string | null> {
  for await (const key of (await target.root()).list(prefix)) {
    if (!key.startsWith('files/tmp/')) return key;
  }
  return null;
}

/**
 * Whether the target is new (nothing in it), holds an unfinished or finished migration of this same source, or
 * holds something else: then the migration is refused, saying what is there.
 */
export async function targetState(target: OpenedLibrary, source: MigrationRecord['source'], storage: string): Promise<TargetState> {
  const record = await readRecord(target);
  if (record) {
    if (record.source.library !== source.library || record.source.born !== source.born) {
      throw new CliError(
        `the target ${target.label} holds a migration of another library (${record.source.library}${record.source.born ? `, made ${record.source.born}` : ''})`,
        1,
        'copy into an empty database and storage, or resume that migration with its own --from',
      );
    }
    if (record.storage !== storage) {
      throw new CliError(`the migration into ${target.label} put the index and originals in ${record.storage}, not ${storage}`, 1, `resume it with --to-storage (or --to) naming ${record.storage}`);
    }
    return { kind: record.state === 'verified' ? 'done' : 'resume', record };
  }
  if (target.database && target.schema) await refuseHeldLibrary(target.database.db, target.label);
  const stored = (await firstKey(target, 'lancedb/')) ?? (await firstKey(target, 'files/'));
  if (stored) throw new CliError(`the target storage ${storage} already holds an index or originals (${stored})`, 1, 'copy into empty storage; nothing was changed');
  return { kind: 'fresh' };
}
